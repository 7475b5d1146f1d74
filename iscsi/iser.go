package iscsi

import (
	"encoding/binary"
	"strconv"
)

// ISERHeaderLen is the size of the iSER header in front of every iSER
// message (RFC 7145 section 4.2; Linux struct iser_ctrl).
const ISERHeaderLen = 28

// ISEROpcode is the iSER header's opcode, the high nibble of its first
// octet (RFC 7145 section 4.2).
type ISEROpcode uint8

// The iSER opcodes.
const (
	ISERControl    ISEROpcode = 0x1 // an iSCSI control-type PDU follows
	ISERHello      ISEROpcode = 0x2 // iSER Hello (iWARP, initiator)
	ISERHelloReply ISEROpcode = 0x3 // iSER HelloReply (iWARP, target)
)

// String names the opcode as tshark's iser.flags.opcode does.
func (o ISEROpcode) String() string {
	switch o {
	case ISERControl:
		return "iSCSI Control-Type PDU"
	case ISERHello:
		return "Hello Message"
	case ISERHelloReply:
		return "HelloReply Message"
	}
	return "Unknown (0x" + strconv.FormatUint(uint64(o), 16) + ")"
}

// The flag bits of the iSER header's first octet.
const (
	FlagWSV = 0x08 // Write STag Valid
	FlagRSV = 0x04 // Read STag Valid
	FlagREJ = 0x01 // HelloReply: the target rejects the connection
)

// ISERHeader is the iSER header of an iSCSI control-type PDU (RFC 7145
// section 4.2):
//
//	octet  0      Opcode (4 bits) | reserved | W | R | reserved
//	octets 1-3    reserved
//	octets 4-7    Write STag        valid when W (WSV)
//	octets 8-15   Write Base Offset
//	octets 16-19  Read STag         valid when R (RSV)
//	octets 20-27  Read Base Offset
//
// The initiator advertises with it the buffers of a SCSI command: the
// Write STag names the memory the target pulls Data-Out from by RDMA Read,
// the Read STag the memory it fills with Data-In by RDMA Write (RFC 7145
// section 9.2).
type ISERHeader struct {
	Flags           uint8 // the whole first octet
	Opcode          ISEROpcode
	WriteSTag       uint32
	WriteBaseOffset uint64
	ReadSTag        uint32
	ReadBaseOffset  uint64
}

// WSV reports the Write STag Valid flag.
func (h *ISERHeader) WSV() bool { return h.Flags&FlagWSV != 0 }

// RSV reports the Read STag Valid flag.
func (h *ISERHeader) RSV() bool { return h.Flags&FlagRSV != 0 }

// DecodeFromBytes decodes the iSER header at the start of b (any opcode:
// for Hello and HelloReply the STag fields are what the octets hold).
func (h *ISERHeader) DecodeFromBytes(b []byte) error {
	if len(b) < ISERHeaderLen {
		*h = ISERHeader{}
		return errShortISER
	}
	h.Flags = b[0]
	h.Opcode = ISEROpcode(b[0] >> 4)
	h.WriteSTag = binary.BigEndian.Uint32(b[4:])
	h.WriteBaseOffset = binary.BigEndian.Uint64(b[8:])
	h.ReadSTag = binary.BigEndian.Uint32(b[16:])
	h.ReadBaseOffset = binary.BigEndian.Uint64(b[20:])
	switch h.Opcode {
	case ISERControl:
		if h.Flags&0x03 != 0 {
			return errReservedISERBit
		}
	case ISERHello, ISERHelloReply:
	default:
		return errUnknownISEROp
	}
	return nil
}

// HelloLen is what a Hello or HelloReply must hold to be decoded: the
// opcode octet, the versions and the IRD/ORD (RFC 7145 section 9.3.1 and
// 9.3.2; the message is sent in a 28-octet iSER header's room).
const HelloLen = 4

// ISERVersion is the iSER version RFC 7145 defines, 10 (tshark requires
// it in both nibbles).
const ISERVersion = 10

// Hello is an iSER Hello (opcode 0x2) or HelloReply (0x3), exchanged on
// iWARP only, right after the connection enters full-feature phase:
//
//	octet  0     Opcode | reserved | REJ (HelloReply)
//	octet  1     MaxVer (4 bits) | MinVer (Hello) or CurVer (HelloReply)
//	octets 2-3   iSER-IRD (Hello) or iSER-ORD (HelloReply)
type Hello struct {
	Opcode ISEROpcode
	Reject bool // HelloReply: REJ
	MaxVer uint8
	// MinVer of a Hello, CurVer of a HelloReply.
	MinVer uint8
	// IRD of a Hello, ORD of a HelloReply.
	IRDORD uint16
}

// DecodeFromBytes decodes a Hello or HelloReply.
func (h *Hello) DecodeFromBytes(b []byte) error {
	if len(b) < HelloLen {
		*h = Hello{}
		return errShortHello
	}
	h.Opcode = ISEROpcode(b[0] >> 4)
	h.Reject = h.Opcode == ISERHelloReply && b[0]&FlagREJ != 0
	h.MaxVer, h.MinVer = b[1]>>4, b[1]&0xf
	h.IRDORD = binary.BigEndian.Uint16(b[2:])
	if h.Opcode != ISERHello && h.Opcode != ISERHelloReply {
		return errISERNotHello
	}
	return nil
}

// CMPrivateDataLen is the size of the iSER CM REQ message (RFC 7145
// section 5.1.3; Linux struct iser_cm_hdr).
const CMPrivateDataLen = 4

// The flag bits of the iSER CM private data, as Linux names them
// (include/scsi/iser.h): in the initiator's CM REQ, ZBVA and Send With
// Invalidate not supported; in the target's CM REP (Linux isert), not
// used.
const (
	CMZBVANotSupported = 0x80
	CMSIENotSupported  = 0x40
)

// CMPrivateData is the iSER private data of the RDMA-CM REQ (the iSER CM
// REQ message, RFC 7145 section 5.1.3) and, as Linux's isert answers, of
// the REP:
//
//	octet  0     flags: 0x80 ZBVA not supported, 0x40 Send With
//	             Invalidate not supported (SIE clear)
//	octets 1-3   reserved
//
// On InfiniBand and RoCE it follows the 36-octet RDMA-CM IP header; the
// rest of the CM message's private data is zero.
type CMPrivateData struct {
	Flags uint8
}

// ZBVANotSupported: the initiator (REQ) cannot use zero-based virtual
// addresses: the offsets it advertises are virtual addresses.
func (p *CMPrivateData) ZBVANotSupported() bool { return p.Flags&CMZBVANotSupported != 0 }

// SendWithInvalidate reports whether Send With Invalidate is allowed (the
// SIE "not supported" bit is clear): the target may then invalidate a
// task's STag with the Send that carries its SCSI Response (RFC 7145
// section 5.1.3 and 9.5).
func (p *CMPrivateData) SendWithInvalidate() bool { return p.Flags&CMSIENotSupported == 0 }

// DecodeFromBytes decodes the consumer private data of a CM REQ or REP.
func (p *CMPrivateData) DecodeFromBytes(b []byte) error {
	if len(b) < CMPrivateDataLen {
		*p = CMPrivateData{}
		return errShortCM
	}
	p.Flags = b[0]
	return nil
}

// LooksLikeCMRequest reports whether b, the consumer private data of a CM
// REQ (after the RDMA-CM IP header), is plausibly iSER's: at least 4
// octets, no flag bit but ZBVA and SIE, at least one of those set, and
// every other octet zero. Private data of all zeros (which iSER allows)
// says nothing and fails it: NVMe/RDMA's admin-queue REQ begins with four
// zero octets too, RPC-over-RDMA's RFC 8797 data with 0xf6.
func LooksLikeCMRequest(b []byte) bool {
	if len(b) < CMPrivateDataLen || b[0]&^(CMZBVANotSupported|CMSIENotSupported) != 0 || b[0] == 0 {
		return false
	}
	for _, c := range b[1:] {
		if c != 0 {
			return false
		}
	}
	return true
}
