package nvmeof

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/nvme"
)

// Sender says which side sent a Send starting a message on a connection
// whose set-up the capture lacks (dissect.Orienter, dissect/orient.go).
// The engine orients an RDMA Read or Write itself, by the rule the first
// item shows holds here; the others are this ULP's own:
//
//   - the controller alone initiates RDMA: it reads a command's data from
//     the host's keyed SGL data block with RDMA Read and writes to it with
//     RDMA Write (NVMe RDMA Transport 1.0, "RDMA Transport Protocol
//     Operations" and "Keyed SGL Data Block Descriptor"; the host issues
//     none), so a Write or Read Request is the controller's — the server's
//     — and a Read Response the host's;
//   - a Send starting a command capsule — a 64-octet SQE (NVMe over
//     Fabrics 1.1 "Capsules"), its PSDT SGLs (Fabrics commands "shall" use
//     SGLs: NVMe over Fabrics 1.1 "Submission Queue Entry") and its SGL1 a
//     keyed data block or an in-capsule (Offset) data block or last
//     segment — is the host's;
//   - a 16-octet SEND_ONLY, a response capsule that is its CQE alone (NVMe
//     RDMA Transport 1.0 "Capsule Size": IORCSZ 1), is the controller's.
//     Another ULP's IU of 16 octets (SRP's credit IUs) says its own side,
//     and the engine takes no answer when the ULPs disagree.
func (u *ulp) Sender(op roce.OpCode, payload []byte) dissect.Side {
	if op.IsOnly() && len(payload) == nvme.CQELen {
		// CQE DW1 is reserved (NVMe Base 2.0 "Common Completion Queue
		// Entry Layout"); the phase tag means nothing on a fabric.
		if payload[4]|payload[5]|payload[6]|payload[7] == 0 {
			return dissect.SideServer
		}
		return dissect.SideUnknown
	}
	if looksLikeSQE(payload) {
		return dissect.SideClient
	}
	return dissect.SideUnknown
}

// looksLikeSQE reports whether b starts with a plausible command capsule
// of NVMe/RDMA: 64 octets or more, CDW0's reserved bits 13:10 zero, PSDT
// SGLs, and SGL1 a descriptor a host sends over RDMA.
func looksLikeSQE(b []byte) bool {
	if len(b) < nvme.SQELen || b[1]&0x3c != 0 {
		return false
	}
	var c nvme.Command
	c.DecodeFromBytes(b) // (an in-capsule SGL past the packet is no matter)
	if c.PSDT != nvme.PSDTSGL && c.PSDT != nvme.PSDTSGLMPTR {
		return false
	}
	switch d := c.SGL1; {
	case d.Type == nvme.SGLKeyedDataBlock:
		return true
	case d.Type == nvme.SGLDataBlock || d.Type == nvme.SGLLastSegment:
		return d.Subtype == nvme.SGLSubtypeOffset
	}
	return false
}
