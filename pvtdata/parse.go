package pvtdata

import "fmt"

// Prefix says what comes before the consumer's private data in a
// connection-setup message's private data.
type Prefix uint8

const (
	// PrefixNone: the consumer's data starts at octet 0. IB/RoCE CM REP
	// and REJ, a CM REQ outside the IP CM service IDs, MPA revision 1, or
	// MPA revision 2 private data whose IRD/ORD field the caller removed.
	PrefixNone Prefix = iota
	// PrefixCMA: a CM REQ whose service ID is in the RDMA IP CM range
	// (ServiceID.IsIP): the 36-octet RDMA-CM IP header comes first.
	PrefixCMA
	// PrefixMPAv2: MPA revision 2 Request/Reply private data with the
	// enhanced-connection flag set (0x10 in the octet after the key;
	// Linux siw MPA_RR_FLAG_ENHANCED, which tshark 4.0 shows as "Reserved:
	// 0x10"): the 4-octet IRD/ORD field of RFC 6581 comes first. siw
	// sends it on every connection (testdata/pcaps/siw-*).
	PrefixMPAv2
)

// MPAv2PrefixLen is the size of the RFC 6581 IRD/ORD field.
const MPAv2PrefixLen = 4

// String names the prefix.
func (p Prefix) String() string {
	switch p {
	case PrefixNone:
		return "none"
	case PrefixCMA:
		return "RDMA-CM IP header"
	case PrefixMPAv2:
		return "MPA v2 IRD/ORD"
	}
	return fmt.Sprintf("Prefix(%d)", uint8(p))
}

// Result is what Parse found in one message's private data.
type Result struct {
	Prefix Prefix // as given to Parse
	// CMA is the RDMA-CM IP header (PrefixCMA only), decoded as far as the
	// octets allow; CMAErr is nil when it is valid, else ErrCMATruncated,
	// ErrCMAVersion or ErrCMAIPVersion.
	CMA    CMAHeader
	CMAErr error
	// Start is the offset in the private data where the consumer's data
	// begins: 36 after a valid CMA header, 4 after an MPA v2 IRD/ORD
	// field (or the length, when shorter), else 0. When the CMA header
	// is invalid, the header may be missing altogether (AF_IB
	// addressing), so the search starts at 0.
	Start int
	// Offset is where the Format Identifier starts, counted from octet 0
	// of the private data; -1 when absent. Offset-Start is its place in
	// the consumer's data: Linux's client and server look only at 0 there.
	Offset int
	// Message is the message at Offset: valid when Err is nil; with
	// ErrUnknownVersion or ErrTruncated it holds the octets found.
	Message Message
	// Err is nil for a valid version 1 message, else ErrAbsent,
	// ErrTruncated or ErrUnknownVersion (RFC 8797 section 5.2). Problem
	// gives the same with context.
	Err error
	// Len is the length of the private data given.
	Len int
}

// Parse finds the RPC-over-RDMA CM private data message in pd, the private
// data of a CM REQ or REP or an MPA Request or Reply, after the prefix the
// caller expects. It does not allocate, keeps no reference to pd, and never
// fails: what is missing or wrong is in the Result.
func Parse(pd []byte, prefix Prefix) Result {
	r := Result{Prefix: prefix, Offset: -1, Len: len(pd)}
	switch prefix {
	case PrefixCMA:
		r.CMA, r.CMAErr = decodeCMA(pd)
		if r.CMAErr == nil {
			r.Start = CMAHeaderLen
		}
	case PrefixMPAv2:
		r.Start = min(MPAv2PrefixLen, len(pd))
	}
	r.Message, r.Offset, r.Err = find(pd, r.Start)
	return r
}

// Valid reports whether a valid version 1 message was found.
func (r *Result) Valid() bool { return r.Err == nil }

// Peer returns the message to hand to Negotiate for this side: nil unless
// a valid version 1 message was found (RFC 8797 section 5.1 defaults then
// apply).
func (r *Result) Peer() *Message {
	if r.Err != nil {
		return nil
	}
	return &r.Message
}

// Problem returns nil when a valid message was found, else a *FormatError
// saying what was found where, e.g. "...unrecognized version: version 2 at
// offset 36". It allocates; call it when reporting.
func (r *Result) Problem() error {
	if r.Err == nil {
		return nil
	}
	return &FormatError{Offset: r.Offset, From: r.Start, Len: r.Len, Version: r.Message.Version, Err: r.Err}
}

// Reason is Problem as text, "" when the message is valid.
func (r *Result) Reason() string {
	if err := r.Problem(); err != nil {
		return err.Error()
	}
	return ""
}

// CMAProblem returns nil when no CMA header was expected or it is valid,
// else a *CMAError with what was found.
func (r *Result) CMAProblem() error {
	if r.CMAErr == nil {
		return nil
	}
	return &CMAError{Len: r.Len, Version: r.CMA.Version, IPVersion: r.CMA.IPVersion, Err: r.CMAErr}
}
