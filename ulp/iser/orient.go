package iser

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Sender says which side sent a Send starting a message on a connection
// whose set-up the capture lacks (dissect.Orienter, dissect/orient.go).
// The engine orients an RDMA Read or Write itself, by the rule the first
// item shows holds here; the others are this ULP's own:
//
//   - the target alone initiates RDMA: it writes Data-In into the buffer
//     the initiator's Read STag names with RDMA Write, and pulls Data-Out
//     from the Write STag's with RDMA Read (RFC 7145 sections 7.3.5 and
//     7.3.6; the initiator issues no RDMA Read or Write), so a Write or
//     Read Request is the target's — the server's — and a Read Response
//     the initiator's;
//   - a Send starting an iSER control-type PDU carries an iSCSI PDU whose
//     opcode says its sender: 0x00-0x1f are initiator opcodes, 0x20-0x3f
//     target opcodes (RFC 7143 section 11.2.1.2); an iSER Hello is the
//     initiator's, a HelloReply the target's (RFC 7145 section 9.3).
func (u *ulp) Sender(op roce.OpCode, payload []byte) dissect.Side {
	var h iscsi.ISERHeader
	if h.DecodeFromBytes(payload) != nil {
		return dissect.SideUnknown
	}
	switch h.Opcode {
	case iscsi.ISERHello:
		return dissect.SideClient
	case iscsi.ISERHelloReply:
		return dissect.SideServer
	}
	// An iSER control-type header: its reserved octets 1-3 zero (RFC 7145
	// section 4.2), then the BHS's opcode octet (bit 7 reserved, bit 6
	// the initiator's Immediate flag: RFC 7143 section 11.2.1.1).
	if payload[1]|payload[2]|payload[3] != 0 || len(payload) < iscsi.ISERHeaderLen+iscsi.BHSLen {
		return dissect.SideUnknown
	}
	bhs := payload[iscsi.ISERHeaderLen]
	if bhs&0x80 != 0 {
		return dissect.SideUnknown
	}
	switch code := bhs & 0x3f; {
	case code < 0x20:
		return dissect.SideClient
	case bhs&0x40 != 0:
		return dissect.SideUnknown // the I bit is the initiator's only
	default:
		return dissect.SideServer
	}
}
