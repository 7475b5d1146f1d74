package rpcordma

import (
	"fmt"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// RPC-over-RDMA version 2 Transport Properties
// (draft-ietf-nfsv4-rpcrdma-version-two-07, "Transport Properties",
// "Inline Threshold"): what each peer's RDMA2_CONNPROP_MIDDLE/FINAL
// messages published, and the inline thresholds that follow from them.

// V2DefaultInline is the inline threshold of both directions of a version
// 2 connection whose peers exchanged no Transport Properties (draft-07
// "Inline Threshold": "connection peers MUST assume both inline thresholds
// are 4096 octets"); it is also the default of RDMA2_PROPID_SBSIZ and
// RDMA2_PROPID_RBSIZ.
const V2DefaultInline = 4096

// V2Props is a version 2 connection's Transport Properties exchange,
// Sides indexed by Direction.Index() of the sender (0: the client's).
type V2Props struct {
	Sides [2]V2PropSide
}

// V2PropSide is what one peer published. The values start at the draft's
// defaults and change with each CONNPROP message the peer sends whose
// every known property value decoded (a receiver discards a message with
// a bad one "without applying any of its property settings": draft-07
// "RDMA2_ERR_BAD_PROPVAL").
type V2PropSide struct {
	// Messages counts the CONNPROP-type messages the peer sent; Applied
	// those whose settings took effect.
	Messages, Applied int
	// FirstPacket is the packet of its first CONNPROP message, FinalPacket
	// of its RDMA2_CONNPROP_FINAL (0: none).
	FirstPacket, FinalPacket int
	// Given has bit N set when the peer published property N (1..6).
	Given uint8
	// SBSIZ, RBSIZ, RSSIZ, RCSIZ and BRS are the values of
	// RDMA2_PROPID_SBSIZ..BRS in force.
	SBSIZ, RBSIZ, RSSIZ, RCSIZ uint32
	BRS                        rpcrdma.ReverseDirection
	// HostAuth is the length of the RDMA2_PROPID_HOSTAUTH material last
	// published (-1: none).
	HostAuth int
	// Unknown counts properties with an rdma_which draft-07 does not
	// define (receivers skip them).
	Unknown int
	// BadValues counts the property values that did not hold their XDR
	// type; FirstBad describes the first.
	BadValues int
	FirstBad  string
}

// newV2Props returns the properties a peer has before it publishes any.
func newV2Props() *V2Props {
	p := &V2Props{}
	for i := range p.Sides {
		s := &p.Sides[i]
		s.SBSIZ, s.RBSIZ = V2DefaultInline, V2DefaultInline
		s.RSSIZ, _ = rpcrdma.PropMaxSegmentSize.Default()
		s.RCSIZ, _ = rpcrdma.PropMaxSegments.Default()
		s.HostAuth = -1
	}
	return p
}

// Has tells whether side d published property id.
func (s *V2PropSide) Has(id rpcrdma.PropID) bool {
	return id >= 1 && id <= 7 && s.Given&(1<<id) != 0
}

// Exchanged tells whether either peer sent a CONNPROP message.
func (p *V2Props) Exchanged() bool {
	return p != nil && (p.Sides[0].Messages > 0 || p.Sides[1].Messages > 0)
}

// Threshold returns the inline threshold of messages the side of index
// from sends: the smaller of that sender's Maximum Send Size and the
// receiver's Receive Buffer Size, each its default (4096) when not
// published (draft-07 "Inline Threshold", "Maximum Send Size", "Receive
// Buffer Size"). A nil V2Props (no version 2 message yet) gives 4096.
func (p *V2Props) Threshold(from int) int {
	if p == nil {
		return V2DefaultInline
	}
	return int(min(p.Sides[from].SBSIZ, p.Sides[1-from].RBSIZ))
}

// BadPropVal describes why property v of a CONNPROP message does not hold
// its XDR type, "" when it does or when draft-07 does not define
// rdma_which (a receiver skips it: "Transport Properties Model").
func BadPropVal(v rpcrdma.Property) string {
	if !v.Which.Known() {
		return ""
	}
	var err error
	switch v.Which {
	case rpcrdma.PropHostAuth:
		if len(v.Data) == 0 {
			return "" // the default: no material
		}
		_, err = v.HostAuth()
		if err != nil {
			return fmt.Sprintf("%s rdma_data is %d octets, not an XDR opaque<> (length word, data, padding to 4 octets)", v.Which, len(v.Data))
		}
	default:
		if _, err = v.Uint32(); err != nil {
			return fmt.Sprintf("%s rdma_data is %d octets: its XDR type uint32 takes 4 (0 for the default)", v.Which, len(v.Data))
		}
	}
	return ""
}

// noteV2 records a version 2 message's Transport Properties (CONNPROP
// types only) on the connection's statistics.
func (rs *RPCStats) noteV2(d int, h *rpcrdma.Header2, pkt int) {
	if h.HType != rpcrdma.HTypeConnPropMid && h.HType != rpcrdma.HTypeConnPropFinal {
		return
	}
	if rs.V2Props == nil {
		rs.V2Props = newV2Props()
	}
	s := &rs.V2Props.Sides[d]
	s.Messages++
	if s.FirstPacket == 0 {
		s.FirstPacket = pkt
	}
	if h.HType == rpcrdma.HTypeConnPropFinal && s.FinalPacket == 0 {
		s.FinalPacket = pkt
	}
	bad := false
	for _, v := range h.Props {
		if why := BadPropVal(v); why != "" {
			bad = true
			s.BadValues++
			if s.FirstBad == "" {
				s.FirstBad = fmt.Sprintf("packet %d: %s", pkt, why)
			}
		}
	}
	if bad {
		return
	}
	s.Applied++
	for _, v := range h.Props {
		if !v.Which.Known() {
			s.Unknown++
			continue
		}
		s.Given |= 1 << v.Which
		if v.Which == rpcrdma.PropHostAuth {
			a, _ := v.HostAuth()
			s.HostAuth = len(a)
			continue
		}
		x, _ := v.Uint32()
		switch v.Which {
		case rpcrdma.PropMaxSendSize:
			s.SBSIZ = x
		case rpcrdma.PropRecvBufSize:
			s.RBSIZ = x
		case rpcrdma.PropMaxSegmentSize:
			s.RSSIZ = x
		case rpcrdma.PropMaxSegments:
			s.RCSIZ = x
		case rpcrdma.PropReverseDir:
			s.BRS = rpcrdma.ReverseDirection(x)
		}
	}
}
