package nvme

import "encoding/binary"

// SQELen is the size of a submission queue entry, the first part of every
// command capsule (Base 2.0 "Common Command Format"; NVMe over Fabrics
// capsules carry the 64-octet SQE, NVMe over Fabrics 1.1 "Capsules").
const SQELen = 64

// CQELen is the size of a completion queue entry, the whole of a response
// capsule on NVMe/RDMA (IORCSZ 1: 16 octets, no data; NVMe RDMA Transport
// 1.0 "Capsule Size").
const CQELen = 16

// FusedOp is FUSE, bits 9:8 of CDW0 (Base 2.0 "Command Dword 0").
type FusedOp uint8

// Fused operation values.
const (
	FuseNormal FusedOp = 0 // normal operation
	FuseFirst  FusedOp = 1 // first command of a fused operation
	FuseSecond FusedOp = 2 // second command of a fused operation
)

// String names the fused operation.
func (f FusedOp) String() string {
	switch f {
	case FuseNormal:
		return "Normal"
	case FuseFirst:
		return "Fused first"
	case FuseSecond:
		return "Fused second"
	}
	return "Reserved"
}

// PSDT is "PRP or SGL for Data Transfer", bits 15:14 of CDW0 (Base 2.0
// "Command Dword 0"). NVMe over Fabrics moves data with SGLs only, never
// PRPs (NVMe over Fabrics 1.1 "Capsules"); Linux sends 01b (octet 1 =
// 0x40) in every command, Fabrics commands included.
type PSDT uint8

// PSDT values.
const (
	PSDTPRP      PSDT = 0 // PRPs
	PSDTSGL      PSDT = 1 // SGLs, MPTR an address
	PSDTSGLMPTR  PSDT = 2 // SGLs, MPTR the address of an SGL segment
	PSDTReserved PSDT = 3
)

// String names the value.
func (p PSDT) String() string {
	switch p {
	case PSDTPRP:
		return "PRP"
	case PSDTSGL:
		return "SGL, MPTR address"
	case PSDTSGLMPTR:
		return "SGL, MPTR SGL segment"
	}
	return "Reserved"
}

// Command is a command capsule: the 64-octet submission queue entry and
// the in-capsule data that follows it (NVMe over Fabrics 1.1 "Capsules").
//
//	octet 0      OPC    opcode
//	octet 1      FUSE (bits 1:0), reserved (5:2), PSDT (7:6)
//	octets 2-3   CID    command identifier
//	octets 4-7   NSID   namespace ID; in a Fabrics command octet 4 is
//	                    FCTYPE and 5-23 are reserved
//	octets 8-15  CDW2, CDW3
//	octets 16-23 MPTR   metadata pointer
//	octets 24-39 DPTR   data pointer: on NVMe over Fabrics always one SGL
//	                    descriptor, SGL1
//	octets 40-63 CDW10 .. CDW15, command specific
//
// Use it as the gopacket layer types are used: one Command, reused, with
// DecodeFromBytes for each capsule. Data and the Contents/Payload slices
// point into the decoded buffer.
type Command struct {
	OPC    uint8
	FUSE   FusedOp
	PSDT   PSDT
	CID    uint16
	NSID   uint32
	FCTYPE FabricsType // octet 4, meaningful for a Fabrics command (OPC 0x7f) only
	CDW2   uint32
	CDW3   uint32
	MPTR   uint64
	SGL1   SGLDescriptor // DPTR
	CDW10  uint32
	CDW11  uint32
	CDW12  uint32
	CDW13  uint32
	CDW14  uint32
	CDW15  uint32

	// Data is the whole in-capsule data area: every octet after the SQE.
	// InCapsule is the part SGL1 names when it is a data block with
	// subtype Offset (nil otherwise).
	Data      []byte
	InCapsule []byte

	contents []byte
}

// DecodeFromBytes decodes a command capsule: data is an RDMA Send payload
// from host to controller (at least 64 octets). When SGL1 is a data block
// (or segment) with subtype Offset whose offset and length do not fit in
// the capsule, the SQE is still decoded, InCapsule is nil and the error is
// ErrInCapsuleData.
//
// InCapsule assumes the controller's ICDOFF is 0 (Linux nvmet's; the
// offset counts from the end of the SQE). For a controller that reports
// another ICDOFF use InCapsuleAt.
func (c *Command) DecodeFromBytes(data []byte) error {
	if len(data) < SQELen {
		*c = Command{}
		return errShortSQE
	}
	c.OPC = data[0]
	c.FUSE = FusedOp(data[1] & 0x3)
	c.PSDT = PSDT(data[1] >> 6)
	c.CID = binary.LittleEndian.Uint16(data[2:])
	c.NSID = binary.LittleEndian.Uint32(data[4:])
	c.FCTYPE = FabricsType(data[4])
	c.CDW2 = binary.LittleEndian.Uint32(data[8:])
	c.CDW3 = binary.LittleEndian.Uint32(data[12:])
	c.MPTR = binary.LittleEndian.Uint64(data[16:])
	c.SGL1.decode(data[24:40])
	c.CDW10 = binary.LittleEndian.Uint32(data[40:])
	c.CDW11 = binary.LittleEndian.Uint32(data[44:])
	c.CDW12 = binary.LittleEndian.Uint32(data[48:])
	c.CDW13 = binary.LittleEndian.Uint32(data[52:])
	c.CDW14 = binary.LittleEndian.Uint32(data[56:])
	c.CDW15 = binary.LittleEndian.Uint32(data[60:])
	c.contents = data[:SQELen]
	c.Data = data[SQELen:]
	c.InCapsule = nil
	if c.hasInCapsule() {
		b, err := c.InCapsuleAt(0)
		if err != nil {
			return err
		}
		c.InCapsule = b
	}
	return nil
}

// hasInCapsule reports whether SGL1 points into the capsule.
func (c *Command) hasInCapsule() bool {
	return c.SGL1.IsInCapsule() || (c.SGL1.IsSegment() && c.SGL1.Subtype == SGLSubtypeOffset)
}

// InCapsuleAt returns the in-capsule data SGL1 names when the controller's
// In Capsule Data Offset is icdoff (Identify Controller ICDOFF, 16-octet
// units): SGL1's Address counts from icdoff*16 octets after the SQE (NVMe
// over Fabrics 1.1, Identify Controller ICDOFF; Base 2.0 "SGL Data Block
// descriptor", subtype Offset). It returns nil and no error when SGL1 does
// not point into the capsule, ErrInCapsuleData when the range does not lie
// inside it.
func (c *Command) InCapsuleAt(icdoff uint16) ([]byte, error) {
	if !c.hasInCapsule() {
		return nil, nil
	}
	off := uint64(icdoff)*16 + c.SGL1.Address
	n := uint64(c.SGL1.Length)
	if c.SGL1.Address > 1<<62 || off > uint64(len(c.Data)) || n > uint64(len(c.Data))-off {
		return nil, ErrInCapsuleData
	}
	return c.Data[off : off+n], nil
}

// LayerContents returns the 64-octet SQE.
func (c *Command) LayerContents() []byte { return c.contents }

// LayerPayload returns the in-capsule data area (Data).
func (c *Command) LayerPayload() []byte { return c.Data }

// IsFabrics reports whether the command is a Fabrics command (OPC 0x7f).
func (c *Command) IsFabrics() bool { return c.OPC == OpcodeFabrics }

// Name names the command; admin says whether it was submitted to the
// admin queue (QID 0), which decides how OPC reads.
func (c *Command) Name(admin bool) string { return CommandName(c.OPC, admin, c.FCTYPE) }

// Transfer returns the direction of the command's data from its opcode
// (for a Fabrics command, from FCTYPE).
func (c *Command) Transfer() DataTransfer {
	if c.IsFabrics() {
		return TransferOf(uint8(c.FCTYPE))
	}
	return TransferOf(c.OPC)
}

// CommandKind is what an RDMA Send payload of an NVMe/RDMA queue is, judged
// by its length alone.
type CommandKind uint8

// Capsule kinds.
const (
	KindUnknown    CommandKind = iota // neither shape
	KindCommand                       // 64 octets or more: a command capsule
	KindCompletion                    // exactly 16 octets: a response capsule
)

// String names the kind.
func (k CommandKind) String() string {
	switch k {
	case KindCommand:
		return "command capsule"
	case KindCompletion:
		return "response capsule"
	}
	return "unknown"
}

// Classify tells a command capsule (at least 64 octets: the SQE and any
// in-capsule data) from a response capsule (exactly 16 octets: the CQE;
// NVMe/RDMA sends no data in responses, IORCSZ 1) by length. The direction
// decides which one a Send must be: commands go from host to controller,
// responses back; the caller knows it and should check that the two agree.
func Classify(payload []byte) CommandKind {
	switch {
	case len(payload) == CQELen:
		return KindCompletion
	case len(payload) >= SQELen:
		return KindCommand
	}
	return KindUnknown
}
