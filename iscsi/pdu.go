package iscsi

import "encoding/binary"

// BHSLen is the size of the iSCSI Basic Header Segment (RFC 7143 section
// 11.2.1).
const BHSLen = 48

// ReservedTag is the all-ones task tag: an ITT or TTT that names no task
// (RFC 7143 sections 11.18, 11.19: a NOP-In or NOP-Out not answering
// anything; a Data-Out that is not solicited).
const ReservedTag = 0xffffffff

// PDU is one iSCSI PDU: its BHS (copied, so it outlives the buffer) and
// the AHS and data segment (slices of the buffer given to
// DecodeFromBytes, valid as long as it is). The accessors read the BHS
// fields of the PDU's opcode; on another opcode they return what those
// octets hold.
//
//	octet  0      I (immediate delivery, 0x40) | Opcode (6 bits)
//	octet  1      F (final, 0x80) and opcode-specific flags
//	octets 2-3    opcode-specific
//	octet  4      TotalAHSLength (in 4-octet words)
//	octets 5-7    DataSegmentLength (octets, without padding)
//	octets 8-15   LUN, or opcode-specific (Login: ISID and TSIH)
//	octets 16-19  Initiator Task Tag
//	octets 20-47  opcode-specific
type PDU struct {
	BHS    [BHSLen]byte
	Opcode Opcode
	// Immediate: the I bit (initiator PDUs).
	Immediate         bool
	TotalAHSLength    uint8 // in 4-octet words
	DataSegmentLength uint32
	ITT               uint32
	// AHS is the additional header segments, Data the data segment: as
	// much of them as the buffer held.
	AHS  []byte
	Data []byte
}

// DecodeFromBytes decodes the PDU at the start of b (after the iSER
// header). A PDU whose AHS or data segment runs past b is decoded as far
// as b goes and reported with ErrAHS or ErrDataSegment.
func (p *PDU) DecodeFromBytes(b []byte) error {
	if len(b) < BHSLen {
		*p = PDU{}
		return errShortBHS
	}
	copy(p.BHS[:], b)
	p.Opcode = Opcode(b[0] & 0x3f)
	p.Immediate = b[0]&0x40 != 0
	p.TotalAHSLength = b[4]
	p.DataSegmentLength = uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
	p.ITT = binary.BigEndian.Uint32(b[16:])
	rest := b[BHSLen:]
	ahs := int(p.TotalAHSLength) * 4
	if ahs > len(rest) {
		p.AHS, p.Data = rest, nil
		return errShortAHS
	}
	p.AHS, rest = rest[:ahs], rest[ahs:]
	if int(p.DataSegmentLength) > len(rest) {
		p.Data = rest
		return errShortDataSeg
	}
	p.Data = rest[:p.DataSegmentLength]
	return nil
}

func (p *PDU) u32(off int) uint32 { return binary.BigEndian.Uint32(p.BHS[off:]) }

// Flags is octet 1.
func (p *PDU) Flags() uint8 { return p.BHS[1] }

// Final is the F bit (0x80 of octet 1).
func (p *PDU) Final() bool { return p.BHS[1]&0x80 != 0 }

// LUN is octets 8-15.
func (p *PDU) LUN() uint64 { return binary.BigEndian.Uint64(p.BHS[8:]) }

// TTT is the Target Transfer Tag (octets 20-23) of NOP-Out/In, Text,
// Data-Out/In and R2T.
func (p *PDU) TTT() uint32 { return p.u32(20) }

// CmdSN is octets 24-27 of initiator PDUs.
func (p *PDU) CmdSN() uint32 { return p.u32(24) }

// ExpStatSN is octets 28-31 of initiator PDUs.
func (p *PDU) ExpStatSN() uint32 { return p.u32(28) }

// StatSN is octets 24-27 of target PDUs.
func (p *PDU) StatSN() uint32 { return p.u32(24) }

// ExpCmdSN and MaxCmdSN are octets 28-31 and 32-35 of target PDUs.
func (p *PDU) ExpCmdSN() uint32 { return p.u32(28) }

// MaxCmdSN: see ExpCmdSN.
func (p *PDU) MaxCmdSN() uint32 { return p.u32(32) }

// SCSI Command (RFC 7143 section 11.3): flags F, R (0x40: the command
// reads, Data-In), W (0x20: it writes, Data-Out), ATTR; Expected Data
// Transfer Length (octets 20-23); the CDB (octets 32-47).

// Read is the SCSI Command's R bit.
func (p *PDU) Read() bool { return p.BHS[1]&0x40 != 0 }

// Write is the SCSI Command's W bit.
func (p *PDU) Write() bool { return p.BHS[1]&0x20 != 0 }

// Attr is the SCSI Command's task attribute (3 bits).
func (p *PDU) Attr() uint8 { return p.BHS[1] & 0x07 }

// ExpectedDataTransferLength is the SCSI Command's octets 20-23: for a
// bidirectional command the write (Data-Out) length.
func (p *PDU) ExpectedDataTransferLength() uint32 { return p.u32(20) }

// CDB returns the SCSI Command's CDB (its first 16 octets).
func (p *PDU) CDB() *CDB { return (*CDB)(p.BHS[32:48]) }

// AHS types (RFC 7143 section 11.2.2).
const (
	AHSExtendedCDB     = 1
	AHSBidiReadLength  = 2
	ahsBidiReadLenSize = 8 // AHSLength 5: type, reserved, 4-octet length, padded
)

// BidiReadDataLength returns the Expected Bidirectional Read Data Length
// of a SCSI Command's AHS (type 2), ok false without one.
func (p *PDU) BidiReadDataLength() (uint32, bool) {
	b := p.AHS
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint16(b))
		typ := b[2]
		if typ == AHSBidiReadLength && n >= 5 && len(b) >= 8 {
			return binary.BigEndian.Uint32(b[4:]), true
		}
		step := (3 + n + 3) &^ 3 // length, type, then n octets, padded
		if step <= 0 || step > len(b) {
			break
		}
		b = b[step:]
	}
	return 0, false
}

// SCSI Response (RFC 7143 section 11.4): flags o, u (bidi read residual
// overflow/underflow), O, U (residual overflow/underflow); Response
// (octet 2), Status (octet 3); ExpDataSN (36), Bidirectional Read
// Residual Count (40), Residual Count (44).

// Response is octet 2 of a SCSI Response, Task Management Function
// Response or Logout Response.
func (p *PDU) Response() uint8 { return p.BHS[2] }

// Status is octet 3 of a SCSI Response (and of a Data-In with S).
func (p *PDU) Status() SCSIStatus { return SCSIStatus(p.BHS[3]) }

// ResidualCount is octets 44-47 of a SCSI Response or Data-In.
func (p *PDU) ResidualCount() uint32 { return p.u32(44) }

// BidiReadResidualCount is octets 40-43 of a SCSI Response.
func (p *PDU) BidiReadResidualCount() uint32 { return p.u32(40) }

// ExpDataSN is octets 36-39 of a SCSI Response (and of a Task Management
// Function Request's).
func (p *PDU) ExpDataSN() uint32 { return p.u32(36) }

// SenseLength returns the SenseLength that begins a SCSI Response's data
// segment (RFC 7143 section 11.4.7.2), ok false without one.
func (p *PDU) SenseLength() (uint16, bool) {
	if len(p.Data) < 2 {
		return 0, false
	}
	return binary.BigEndian.Uint16(p.Data), true
}

// Data-In and Data-Out (RFC 7143 sections 11.7, 11.8): DataSN (36),
// Buffer Offset (40); Data-In's flags A (0x40), O, U, S (0x01: status
// follows in octet 3).

// DataSN is octets 36-39 of a Data-In, Data-Out (and R2TSN of an R2T).
func (p *PDU) DataSN() uint32 { return p.u32(36) }

// BufferOffset is octets 40-43 of a Data-In, Data-Out or R2T.
func (p *PDU) BufferOffset() uint32 { return p.u32(40) }

// HasStatus is a Data-In's S bit.
func (p *PDU) HasStatus() bool { return p.BHS[1]&0x01 != 0 }

// DesiredDataTransferLength is octets 44-47 of an R2T (RFC 7143 section
// 11.8).
func (p *PDU) DesiredDataTransferLength() uint32 { return p.u32(44) }

// Login Request and Response (RFC 7143 sections 11.12, 11.13): flags T
// (transit, 0x80), C (continue, 0x40), CSG (0x0c), NSG (0x03); Version-max
// and -min (request) or -max and -active (response) in octets 2-3; ISID
// (8-13), TSIH (14-15); CID (request, 20-21); Status-Class and -Detail
// (response, 36-37).

// Transit is a Login's T bit.
func (p *PDU) Transit() bool { return p.BHS[1]&0x80 != 0 }

// Continue is a Login's or Text's C bit.
func (p *PDU) Continue() bool { return p.BHS[1]&0x40 != 0 }

// CSG is a Login's current stage.
func (p *PDU) CSG() LoginStage { return LoginStage(p.BHS[1] >> 2 & 3) }

// NSG is a Login's next stage.
func (p *PDU) NSG() LoginStage { return LoginStage(p.BHS[1] & 3) }

// VersionMax is octet 2 of a Login.
func (p *PDU) VersionMax() uint8 { return p.BHS[2] }

// VersionMin is octet 3 of a Login Request (Version-active of a Login
// Response).
func (p *PDU) VersionMin() uint8 { return p.BHS[3] }

// ISID is octets 8-13 of a Login.
func (p *PDU) ISID() [6]byte { return [6]byte(p.BHS[8:14]) }

// TSIH is octets 14-15 of a Login.
func (p *PDU) TSIH() uint16 { return binary.BigEndian.Uint16(p.BHS[14:]) }

// CID is octets 20-21 of a Login Request or Logout Request.
func (p *PDU) CID() uint16 { return binary.BigEndian.Uint16(p.BHS[20:]) }

// LoginStatus is a Login Response's octets 36-37.
func (p *PDU) LoginStatus() LoginStatus { return LoginStatus(binary.BigEndian.Uint16(p.BHS[36:])) }

// KeyValues returns the key=value text of a Login or Text PDU's data
// segment.
func (p *PDU) KeyValues() KeyValues { return KeyValues(p.Data) }

// Logout (RFC 7143 sections 11.14, 11.15): the request's reason code
// (octet 1, low 7 bits); the response's Time2Wait and Time2Retain
// (40-41, 42-43).

// ReasonCode is a Logout Request's reason.
func (p *PDU) ReasonCode() uint8 { return p.BHS[1] & 0x7f }

// Time2Wait is octets 40-41 of a Logout Response.
func (p *PDU) Time2Wait() uint16 { return binary.BigEndian.Uint16(p.BHS[40:]) }

// Time2Retain is octets 42-43 of a Logout Response.
func (p *PDU) Time2Retain() uint16 { return binary.BigEndian.Uint16(p.BHS[42:]) }

// Task Management (RFC 7143 sections 11.5, 11.6): the request's
// function (octet 1, low 7 bits), Referenced Task Tag (20-23), RefCmdSN
// (32-35).

// Function is a Task Management Function Request's function.
func (p *PDU) Function() TaskMgmtFunction { return TaskMgmtFunction(p.BHS[1] & 0x7f) }

// ReferencedTaskTag is octets 20-23 of a Task Management Function
// Request.
func (p *PDU) ReferencedTaskTag() uint32 { return p.u32(20) }

// Reject (RFC 7143 section 11.17): the reason (octet 2); the data
// segment holds the rejected PDU's BHS.

// RejectedITT returns the ITT of the PDU a Reject rejected (from the BHS
// in its data segment), ok false when the data segment holds none.
func (p *PDU) RejectedITT() (uint32, bool) {
	if len(p.Data) < BHSLen {
		return 0, false
	}
	return binary.BigEndian.Uint32(p.Data[16:]), true
}

// Asynchronous Message (RFC 7143 section 11.9): AsyncEvent (36),
// AsyncVCode (37), Parameter1-3 (38-43).

// AsyncEvent is octet 36 of an Asynchronous Message.
func (p *PDU) AsyncEvent() uint8 { return p.BHS[36] }

// Message is one iSER message: the iSER header and, for an iSCSI
// control-type PDU, the iSCSI PDU after it.
type Message struct {
	ISER ISERHeader
	// PDU is decoded when ISER.Opcode is ISERControl.
	PDU PDU
	// Hello is decoded for a Hello or HelloReply.
	Hello Hello
}

// DecodeFromBytes decodes one iSER message, the payload of one RDMA Send.
func (m *Message) DecodeFromBytes(b []byte) error {
	if len(b) >= HelloLen {
		if op := ISEROpcode(b[0] >> 4); op == ISERHello || op == ISERHelloReply {
			m.ISER = ISERHeader{Flags: b[0], Opcode: op}
			m.PDU = PDU{}
			return m.Hello.DecodeFromBytes(b)
		}
	}
	m.Hello = Hello{}
	if err := m.ISER.DecodeFromBytes(b); err != nil {
		m.PDU = PDU{}
		return err
	}
	return m.PDU.DecodeFromBytes(b[ISERHeaderLen:])
}
