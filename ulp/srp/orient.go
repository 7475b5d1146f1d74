package srp

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/srp"
)

// Sender says which side sent a Send starting a message on a connection
// whose set-up the capture lacks (dissect.Orienter, dissect/orient.go).
// The engine orients an RDMA Read or Write itself, by the rule the first
// item shows holds here; the others are this ULP's own:
//
//   - the target alone initiates RDMA: it moves a command's data to and
//     from the initiator's memory that the SRP_CMD's descriptors name,
//     with RDMA Write and RDMA Read (SRP, T10 r16a, 5.2 "Data transfer"
//     and the InfiniBand binding: "the target port performs all data
//     transfers"), so a Write or Read Request is the target's — the
//     server's — and a Read Response the initiator's;
//   - a Send starting an IU says its sender in its type code: 0x00-0x7f
//     the initiator's (its requests, and its responses to the target's),
//     0x80 and above the target's (srp.Opcode.FromInitiator). Only IUs
//     whose layout checks are taken: an SRP_CMD or SRP_TSK_MGMT
//     (LooksLikeCommand), an SRP_RSP whose lengths end where the IU does,
//     an SRP_CRED_REQ or SRP_CRED_RSP of 16 octets with its reserved
//     octets zero.
func (u *ulp) Sender(op roce.OpCode, payload []byte) dissect.Side {
	if len(payload) == 0 {
		return dissect.SideUnknown
	}
	switch srp.Opcode(payload[0]) {
	case srp.OpCmd, srp.OpTskMgmt:
		if LooksLikeCommand(payload) {
			return dissect.SideClient
		}
	case srp.OpRsp:
		var r srp.Response
		if op.IsOnly() && r.DecodeFromBytes(payload) == nil && payload[2]|payload[3]|payload[16]|payload[17] == 0 &&
			srp.ResponseLen+len(r.ResponseData)+len(r.SenseData) == len(payload) {
			return dissect.SideServer
		}
	case srp.OpCredRsp:
		// SRP_CRED_RSP: type, 7 reserved octets, the tag.
		if op.IsOnly() && len(payload) == 16 && payload[1]|payload[2]|payload[3]|payload[4]|payload[5]|payload[6]|payload[7] == 0 {
			return dissect.SideClient
		}
	case srp.OpCredReq:
		// SRP_CRED_REQ: type, SOLNT, 2 reserved, REQUEST LIMIT DELTA, the
		// tag.
		if op.IsOnly() && len(payload) == 16 && payload[2]|payload[3] == 0 {
			return dissect.SideServer
		}
	}
	return dissect.SideUnknown
}
