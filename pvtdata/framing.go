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

// Framing is the generic framing Frame found in front of the consumer's
// private data of one connection-setup message: what every upper-layer
// protocol's set-up message (RFC 8797's, NVMe/RDMA's, iSER's, SRP's, SMB
// Direct's none) stands behind.
type Framing struct {
	Prefix Prefix // as given to Frame
	// CMA is the RDMA-CM IP header (PrefixCMA only), decoded as far as the
	// octets allow; CMAErr is nil when it is valid, else ErrCMATruncated,
	// ErrCMAVersion or ErrCMAIPVersion.
	CMA    CMAHeader
	CMAErr error
	// Start is the offset in the private data where the consumer's data
	// begins: 36 after a valid CMA header, 4 after an MPA v2 IRD/ORD
	// field (or the length, when shorter), else 0. When the CMA header
	// is invalid, the header may be missing altogether (AF_IB
	// addressing), so the consumer's data is taken to start at 0.
	Start int
	// Len is the length of the private data given.
	Len int
}

// Frame decodes the generic framing of pd, the private data of a CM REQ or
// REP or an MPA Request or Reply, with the prefix the caller expects. It
// does not allocate, keeps no reference to pd, and never fails: what is
// wrong is in the Framing.
func Frame(pd []byte, prefix Prefix) Framing {
	f := Framing{Prefix: prefix, Len: len(pd)}
	switch prefix {
	case PrefixCMA:
		f.CMA, f.CMAErr = decodeCMA(pd)
		if f.CMAErr == nil {
			f.Start = CMAHeaderLen
		}
	case PrefixMPAv2:
		f.Start = min(MPAv2PrefixLen, len(pd))
	}
	return f
}

// Consumer returns the consumer's private data of pd, the private data f
// was framed from: pd[f.Start:], nil when pd is shorter.
func (f *Framing) Consumer(pd []byte) []byte {
	if f.Start > len(pd) {
		return nil
	}
	return pd[f.Start:]
}

// CMAProblem returns nil when no CMA header was expected or it is valid,
// else a *CMAError with what was found.
func (f *Framing) CMAProblem() error {
	if f.CMAErr == nil {
		return nil
	}
	return &CMAError{Len: f.Len, Version: f.CMA.Version, IPVersion: f.CMA.IPVersion, Err: f.CMAErr}
}
