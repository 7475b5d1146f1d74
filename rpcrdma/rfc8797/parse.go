package rfc8797

import "github.com/rdmashark/rdmashark/pvtdata"

// Result is what Parse found in one message's private data: the generic
// framing in front of the consumer's data (pvtdata.Framing: the RDMA-CM IP
// header, the MPA v2 IRD/ORD field), then the RFC 8797 search in the rest.
type Result struct {
	pvtdata.Framing
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
}

// Parse finds the RPC-over-RDMA CM private data message in pd, the private
// data of a CM REQ or REP or an MPA Request or Reply, after the prefix the
// caller expects. It does not allocate, keeps no reference to pd, and never
// fails: what is missing or wrong is in the Result.
func Parse(pd []byte, prefix pvtdata.Prefix) Result {
	return ParseFramed(pd, pvtdata.Frame(pd, prefix))
}

// ParseFramed is Parse of private data whose generic framing is decoded
// already (f is pvtdata.Frame of pd, as the engine keeps it per side): the
// search starts at f.Start.
func ParseFramed(pd []byte, f pvtdata.Framing) Result {
	r := Result{Framing: f, Offset: -1}
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
