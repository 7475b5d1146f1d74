package rfc8797

import (
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"github.com/rdmashark/rdmashark/pvtdata"
)

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

// ipv6Header: the hand-built IPv6 RDMA-CM header (internal/pdtest).
var ipv6Header = pdtest.IPv6CMAHeader
