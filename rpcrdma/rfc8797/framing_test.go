package rfc8797

import "github.com/rdmashark/rdmashark/pvtdata"

// The generic framing the tests build on is package pvtdata's; these
// names keep the tests, moved with the code from there, readable.
type (
	Prefix    = pvtdata.Prefix
	ServiceID = pvtdata.ServiceID
	CMAHeader = pvtdata.CMAHeader
)

const (
	PrefixNone   = pvtdata.PrefixNone
	PrefixCMA    = pvtdata.PrefixCMA
	PrefixMPAv2  = pvtdata.PrefixMPAv2
	CMAHeaderLen = pvtdata.CMAHeaderLen
)

var (
	ErrCMATruncated = pvtdata.ErrCMATruncated
	ErrCMAVersion   = pvtdata.ErrCMAVersion
	ErrCMAIPVersion = pvtdata.ErrCMAIPVersion
)

// ipv6Header: the hand-built header of pvtdata's tests, offsets of struct
// cma_hdr, as a fuzz seed.
var ipv6Header = []byte{
	0x00, 0x60, 0xc0, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
}
