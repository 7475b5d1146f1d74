package smbdirect

import (
	"encoding/binary"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	smbd "github.com/rdmashark/rdmashark/smbdirect"
)

// Sender says which side sent a Send starting a message on a connection
// whose set-up the capture lacks (dissect.Orienter, dissect/orient.go).
// The engine orients an RDMA Read or Write itself, by the rule the first
// item shows holds here; the others are this ULP's own:
//
//   - the server alone initiates RDMA: it writes a READ's data into the
//     client's buffers with RDMA Write and pulls a WRITE's with RDMA Read
//     ([MS-SMB2] 3.3.5.12 and 3.3.5.13, Channel SMB2_CHANNEL_RDMA_V1;
//     [MS-SMBD] 3.1.4.6-3.1.4.7: the client only registers and
//     advertises the buffers), so a Write or Read Request is the server's
//     and a Read Response the client's;
//   - a Send starting a Negotiate Request is the client's, a Negotiate
//     Response (32 octets, NegotiatedVersion 1.0) the server's ([MS-SMBD]
//     2.2.1-2.2.2);
//   - a Send starting a Data Transfer Message whose data begins with an
//     SMB2 header is the server's when that header has
//     SMB2_FLAGS_SERVER_TO_REDIR, the client's when not ([MS-SMB2]
//     2.2.1: set on responses, which only the server sends, and on its
//     oplock and lease breaks).
func (u *ulp) Sender(op roce.OpCode, payload []byte) dissect.Side {
	if op.IsOnly() && smbd.LooksLikeNegotiateRequest(payload) {
		return dissect.SideClient
	}
	if op.IsOnly() && len(payload) == smbd.NegotiateResponseLen {
		var n smbd.NegotiateResponse
		if n.DecodeFromBytes(payload) == nil && n.NegotiatedVersion == smbd.Version1 && n.MinVersion <= smbd.Version1 && n.MaxVersion >= smbd.Version1 {
			return dissect.SideServer
		}
	}
	// A Data Transfer Message's first packet: its data may run past the
	// packet, the SMB2 header need not.
	if len(payload) < smbd.DataTransferHeaderLen {
		return dissect.SideUnknown
	}
	le := binary.LittleEndian
	off, n := le.Uint32(payload[12:]), le.Uint32(payload[16:])
	if n < smbd.SMB2HeaderLen || off < 24 || off%8 != 0 || uint64(off)+smbd.SMB2HeaderLen > uint64(len(payload)) {
		return dissect.SideUnknown
	}
	var h smbd.Header
	if err := h.DecodeFromBytes(payload[off : off+smbd.SMB2HeaderLen]); err != nil && err != smbd.ErrNextCommand {
		return dissect.SideUnknown
	}
	if h.Response() {
		return dissect.SideServer
	}
	return dissect.SideClient
}
