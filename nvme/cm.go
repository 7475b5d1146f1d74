package nvme

import (
	"encoding/binary"
	"strconv"
)

// The NVMe/RDMA private data of the RDMA-CM messages that set up one queue
// pair per NVMe queue (NVMe over Fabrics 1.0/1.1, RDMA Transport
// Binding, "RDMA Connection Establishment"; NVMe RDMA Transport Specification 1.0,
// "RDMA_CM_REQUEST Private Data Format", "RDMA_CM_REJECT Private Data
// Format", "RDMA_CM_REPLY Private Data Format"). All fields little-endian.
//
// On InfiniBand and RoCE the data follows the 36-octet RDMA-CM IP header in
// a CM REQ and starts the private data of a CM REP/REJ; on iWARP it follows
// the 4-octet MPA v2 IRD/ORD field of the MPA Request/Reply. The caller
// strips those.

// Sizes of the private data.
const (
	// CMRequestLen is the size of the RDMA_CM_REQUEST private data.
	CMRequestLen = 32
	// CMReplyLen is the size of the RDMA_CM_REPLY private data the spec
	// defines (RECFMT, CRQSIZE, 28 reserved octets).
	CMReplyLen = 32
	// CMReplyMinLen is what a reply must hold to be decoded: RECFMT and
	// CRQSIZE. Linux's nvmet-rdma sends all 32 octets (struct
	// nvme_rdma_cm_rep, rsvd[28]; siw-nvmeof.pcap's MPA Reply carries
	// 4 + 32 octets), but on iWARP the private data is only as long as
	// the target makes it, and the reserved octets say nothing.
	CMReplyMinLen = 4
	// CMRejectLen is the size of the RDMA_CM_REJECT private data.
	CMRejectLen = 4
)

// RecordFormat is RECFMT, the format of the private data (and of the
// Connect command, Base 2.0 "Connect Command"). 0 is the only one defined.
type RecordFormat uint16

// RecordFormat10 is format 0, NVMe over Fabrics 1.0 (Linux
// NVME_RDMA_CM_FMT_1_0).
const RecordFormat10 RecordFormat = 0

// String names the record format.
func (f RecordFormat) String() string {
	if f == RecordFormat10 {
		return "0 (NVMe-oF 1.0)"
	}
	return strconv.Itoa(int(f)) + " (unknown)"
}

// CMRequest is the RDMA_CM_REQUEST private data the host sends.
//
//	octets 0-1   RECFMT   record format, 0
//	octets 2-3   QID      0 for the admin queue, 1.. for I/O queues
//	octets 4-5   HRQSIZE  host receive queue size: RDMA receive buffers
//	                      the host posts (1's based; at least HSQSIZE+1)
//	octets 6-7   HSQSIZE  host send queue size, 0's based (the Connect's
//	                      SQSIZE)
//	octets 8-9   CNTLID   controller ID (NVMe RDMA Transport 1.0; reserved
//	                      in NVMe-oF 1.0; Linux 6.1 sends 0 on every queue,
//	                      rxe-nvmeof.pcap frames 11 and 90)
//	octets 10-31 reserved
type CMRequest struct {
	RECFMT   RecordFormat
	QID      uint16
	HRQSIZE  uint16
	HSQSIZE  uint16
	CNTLID   uint16
	Reserved []byte // octets 10-31, into the decoded data
}

// DecodeFromBytes decodes the request private data at the start of data
// (extra octets, e.g. the zero padding of a 92-octet IB CM REQ private
// data area, are ignored).
func (r *CMRequest) DecodeFromBytes(data []byte) error {
	if len(data) < CMRequestLen {
		*r = CMRequest{}
		return errShortCMReq
	}
	r.RECFMT = RecordFormat(binary.LittleEndian.Uint16(data[0:]))
	r.QID = binary.LittleEndian.Uint16(data[2:])
	r.HRQSIZE = binary.LittleEndian.Uint16(data[4:])
	r.HSQSIZE = binary.LittleEndian.Uint16(data[6:])
	r.CNTLID = binary.LittleEndian.Uint16(data[8:])
	r.Reserved = data[10:CMRequestLen]
	return nil
}

// IsAdmin reports whether the request is for the admin queue (QID 0).
func (r *CMRequest) IsAdmin() bool { return r.QID == 0 }

// CMReply is the RDMA_CM_REPLY private data the controller sends back.
//
//	octets 0-1   RECFMT   record format, 0
//	octets 2-3   CRQSIZE  controller receive queue size (1's based)
//	octets 4-31  reserved
type CMReply struct {
	RECFMT   RecordFormat
	CRQSIZE  uint16
	Reserved []byte // octets from 4 on, as many as were given (at most 28)
}

// DecodeFromBytes decodes the reply private data at the start of data; it
// needs the first 4 octets (see CMReplyMinLen).
func (r *CMReply) DecodeFromBytes(data []byte) error {
	if len(data) < CMReplyMinLen {
		*r = CMReply{}
		return errShortCMRep
	}
	r.RECFMT = RecordFormat(binary.LittleEndian.Uint16(data[0:]))
	r.CRQSIZE = binary.LittleEndian.Uint16(data[2:])
	end := min(len(data), CMReplyLen)
	r.Reserved = data[4:end]
	return nil
}

// CMRejectStatus is STS, why the controller rejected the connection
// (NVMe RDMA Transport 1.0 "RDMA_CM_REJECT Status Values"; Linux enum
// nvme_rdma_cm_status).
type CMRejectStatus uint16

// RDMA_CM_REJECT status values.
const (
	CMRejectInvalidLength  CMRejectStatus = 0x01 // Invalid Private Data Length
	CMRejectInvalidRECFMT  CMRejectStatus = 0x02 // Invalid RECFMT
	CMRejectInvalidQID     CMRejectStatus = 0x03 // Invalid QID
	CMRejectInvalidHSQSIZE CMRejectStatus = 0x04 // Invalid HSQSIZE
	CMRejectInvalidHRQSIZE CMRejectStatus = 0x05 // Invalid HRQSIZE
	CMRejectNoResources    CMRejectStatus = 0x06 // No Resources
	CMRejectInvalidIRD     CMRejectStatus = 0x07 // Invalid IRD
	CMRejectInvalidORD     CMRejectStatus = 0x08 // Invalid ORD
	CMRejectInvalidCNTLID  CMRejectStatus = 0x09 // Invalid CNTLID
)

var cmRejectNames = [...]string{
	CMRejectInvalidLength:  "Invalid Private Data Length",
	CMRejectInvalidRECFMT:  "Invalid RECFMT",
	CMRejectInvalidQID:     "Invalid QID",
	CMRejectInvalidHSQSIZE: "Invalid HSQSIZE",
	CMRejectInvalidHRQSIZE: "Invalid HRQSIZE",
	CMRejectNoResources:    "No Resources",
	CMRejectInvalidIRD:     "Invalid IRD",
	CMRejectInvalidORD:     "Invalid ORD",
	CMRejectInvalidCNTLID:  "Invalid CNTLID",
}

// String names the status as the specification does.
func (s CMRejectStatus) String() string {
	if int(s) < len(cmRejectNames) && cmRejectNames[s] != "" {
		return cmRejectNames[s]
	}
	return "Reserved (0x" + strconv.FormatUint(uint64(s), 16) + ")"
}

// CMReject is the RDMA_CM_REJECT private data.
//
//	octets 0-1   RECFMT  record format, 0
//	octets 2-3   STS     status
type CMReject struct {
	RECFMT RecordFormat
	STS    CMRejectStatus
}

// DecodeFromBytes decodes the reject private data at the start of data.
func (r *CMReject) DecodeFromBytes(data []byte) error {
	if len(data) < CMRejectLen {
		*r = CMReject{}
		return errShortCMRej
	}
	r.RECFMT = RecordFormat(binary.LittleEndian.Uint16(data[0:]))
	r.STS = CMRejectStatus(binary.LittleEndian.Uint16(data[2:]))
	return nil
}

// LooksLikeCMRequest reports whether b (the consumer private data of a CM
// REQ or MPA Request, after the RDMA-CM IP header or IRD/ORD field) is
// plausibly NVMe/RDMA request private data, for probing connections on
// ports other than 4420 and 8009: at least 32 octets, RECFMT 0, a queue
// size pair the spec allows (HSQSIZE 0's based, at least 1 — a queue of 2
// entries, Base 2.0 "Queue Size" — and HRQSIZE at least HSQSIZE+1,
// NVMe RDMA Transport 1.0), and all 22 reserved octets zero.
//
// It is a heuristic: RPC-over-RDMA's RFC 8797 private data begins with
// 0xf6ab0e18 and fails it; a consumer that sends 32 zero octets passes the
// RECFMT test but fails the size test.
func LooksLikeCMRequest(b []byte) bool {
	if len(b) < CMRequestLen {
		return false
	}
	var r CMRequest
	_ = r.DecodeFromBytes(b)
	if r.RECFMT != RecordFormat10 || r.HSQSIZE == 0 || r.HRQSIZE < r.HSQSIZE+1 || r.HSQSIZE == 0xffff {
		return false
	}
	for _, c := range r.Reserved {
		if c != 0 {
			return false
		}
	}
	return true
}

// LooksLikeCMReply reports whether b is plausibly NVMe/RDMA reply private
// data: at least 4 octets, RECFMT 0, CRQSIZE at least 2 (a queue of 2
// entries needs 2 receive buffers), and any reserved octets present zero.
func LooksLikeCMReply(b []byte) bool {
	if len(b) < CMReplyMinLen {
		return false
	}
	var r CMReply
	_ = r.DecodeFromBytes(b)
	if r.RECFMT != RecordFormat10 || r.CRQSIZE < 2 {
		return false
	}
	for _, c := range r.Reserved {
		if c != 0 {
			return false
		}
	}
	return true
}
