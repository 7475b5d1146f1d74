package nvme

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// ConnectCommand is the command specific part of a Connect command (Base
// 2.0 "Connect Command"; NVMe over Fabrics 1.1, "Connect
// Command - Submission Queue Entry"), SQE octets 40-63:
//
//	octets 40-41 RECFMT  record format, 0
//	octets 42-43 QID     queue to create: 0 admin, 1.. I/O
//	octets 44-45 SQSIZE  submission queue size, 0's based
//	octet  46    CATTR   connect attributes: bits 1:0 priority class,
//	                     bit 2 disable SQ flow control, bit 3 I/O queue
//	                     deletion support (Base 2.0)
//	octet  47    reserved
//	octets 48-51 KATO    keep alive timeout in milliseconds (admin queue)
//	octets 52-63 reserved
//
// The Connect data (1024 octets, ConnectData) is in the capsule or at the
// address SGL1 names.
type ConnectCommand struct {
	RECFMT RecordFormat
	QID    uint16
	SQSIZE uint16
	CATTR  uint8
	KATO   uint32
}

// CATTRDisableSQFlow is the Connect's CATTR bit 2: the host asks that
// SQ flow control be disabled, SQHD then being reserved (NVMe over Fabrics
// 1.1 "Connect Command"; Linux NVME_CONNECT_DISABLE_SQFLOW, set by the
// host's disable_sqflow option, answered by nvmet with SQHD FFFFh).
const CATTRDisableSQFlow = 1 << 2

// Connect reads the SQE as a Connect command (meaningful when IsFabrics
// and FCTYPE is FabricsConnect).
func (c *Command) Connect() ConnectCommand {
	return ConnectCommand{
		RECFMT: RecordFormat(uint16(c.CDW10)),
		QID:    uint16(c.CDW10 >> 16),
		SQSIZE: uint16(c.CDW11),
		CATTR:  uint8(c.CDW11 >> 16),
		KATO:   c.CDW12,
	}
}

// DisconnectRECFMT reads the record format of a Disconnect command (SQE
// octets 40-41; Base 2.0 "Disconnect Command").
func (c *Command) DisconnectRECFMT() RecordFormat { return RecordFormat(uint16(c.CDW10)) }

// PriorityClass returns CATTR bits 1:0.
func (cc ConnectCommand) PriorityClass() uint8 { return cc.CATTR & 0x3 }

// DisableSQFlowControl returns CATTR bit 2.
func (cc ConnectCommand) DisableSQFlowControl() bool { return cc.CATTR&0x4 != 0 }

// ConnectDataLen is the size of the Connect data.
const ConnectDataLen = 1024

// CNTLIDDynamic is the CNTLID a host puts in the Connect data of an admin
// queue Connect to ask for any controller of the dynamic controller model
// (Base 2.0 "Connect Command Data": FFFFh).
const CNTLIDDynamic = 0xffff

// ConnectData is the 1024-octet data of a Connect command (Base 2.0
// "Connect Command Data"; NVMe over Fabrics 1.1 "Connect Command"):
//
//	octets 0-15    HOSTID   host identifier (a UUID on Linux)
//	octets 16-17   CNTLID   controller ID; FFFFh for the dynamic model
//	octets 18-255  reserved
//	octets 256-511 SUBNQN   NVM subsystem NQN, NUL terminated UTF-8
//	octets 512-767 HOSTNQN  host NQN, NUL terminated UTF-8
//	octets 768-1023 reserved
type ConnectData struct {
	HOSTID  [16]byte
	CNTLID  uint16
	SUBNQN  []byte // up to the first NUL, into the decoded data
	HOSTNQN []byte // up to the first NUL, into the decoded data
}

// DecodeFromBytes decodes the Connect data at the start of data.
func (d *ConnectData) DecodeFromBytes(data []byte) error {
	if len(data) < ConnectDataLen {
		*d = ConnectData{}
		return errShortConnect
	}
	copy(d.HOSTID[:], data[0:16])
	d.CNTLID = binary.LittleEndian.Uint16(data[16:])
	d.SUBNQN = cstring(data[256:512])
	d.HOSTNQN = cstring(data[512:768])
	return nil
}

// cstring returns b up to its first NUL octet.
func cstring(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// PropertyOffset is OFST, the offset of a property in the controller's
// property map (NVMe over Fabrics 1.1 "Property Definitions";
// Base 2.0 "Offset in the property map" — on PCIe the controller
// registers).
type PropertyOffset uint32

// Properties.
const (
	PropertyCAP    PropertyOffset = 0x00 // Controller Capabilities, 8 octets
	PropertyVS     PropertyOffset = 0x08 // Version
	PropertyINTMS  PropertyOffset = 0x0c // Interrupt Mask Set (reserved on fabrics)
	PropertyINTMC  PropertyOffset = 0x10 // Interrupt Mask Clear (reserved on fabrics)
	PropertyCC     PropertyOffset = 0x14 // Controller Configuration
	PropertyCSTS   PropertyOffset = 0x1c // Controller Status
	PropertyNSSR   PropertyOffset = 0x20 // NVM Subsystem Reset
	PropertyAQA    PropertyOffset = 0x24 // Admin Queue Attributes (PCIe only)
	PropertyASQ    PropertyOffset = 0x28 // Admin Submission Queue Base Address (PCIe only)
	PropertyACQ    PropertyOffset = 0x30 // Admin Completion Queue Base Address (PCIe only)
	PropertyCMBLOC PropertyOffset = 0x38 // Controller Memory Buffer Location
	PropertyCMBSZ  PropertyOffset = 0x3c // Controller Memory Buffer Size
	PropertyBPINFO PropertyOffset = 0x40 // Boot Partition Information
	PropertyBPRSEL PropertyOffset = 0x44 // Boot Partition Read Select
	PropertyBPMBL  PropertyOffset = 0x48 // Boot Partition Memory Buffer Location
	PropertyCMBMSC PropertyOffset = 0x50 // Controller Memory Buffer Memory Space Control
	PropertyCMBSTS PropertyOffset = 0x58 // Controller Memory Buffer Status
	PropertyNSSD   PropertyOffset = 0x64 // NVM Subsystem Shutdown
	PropertyCRTO   PropertyOffset = 0x68 // Controller Ready Timeouts
	PropertyPMRCAP PropertyOffset = 0xe00
)

var propertyNames = map[PropertyOffset]string{
	PropertyCAP:    "CAP",
	PropertyVS:     "VS",
	PropertyINTMS:  "INTMS",
	PropertyINTMC:  "INTMC",
	PropertyCC:     "CC",
	PropertyCSTS:   "CSTS",
	PropertyNSSR:   "NSSR",
	PropertyAQA:    "AQA",
	PropertyASQ:    "ASQ",
	PropertyACQ:    "ACQ",
	PropertyCMBLOC: "CMBLOC",
	PropertyCMBSZ:  "CMBSZ",
	PropertyBPINFO: "BPINFO",
	PropertyBPRSEL: "BPRSEL",
	PropertyBPMBL:  "BPMBL",
	PropertyCMBMSC: "CMBMSC",
	PropertyCMBSTS: "CMBSTS",
	PropertyNSSD:   "NSSD",
	PropertyCRTO:   "CRTO",
	PropertyPMRCAP: "PMRCAP",
}

// String returns the property's abbreviation as the specification gives
// it (CAP, VS, CC, CSTS, NSSR, ...), or its offset in hex.
func (o PropertyOffset) String() string {
	if s, ok := propertyNames[o]; ok {
		return s
	}
	return "0x" + strconv.FormatUint(uint64(o), 16)
}

// PropertyCommand is the command specific part of a Property Get or
// Property Set command (Base 2.0 "Property Get Command", "Property Set
// Command"; NVMe over Fabrics 1.1 sections 3.5-3.6):
//
//	octet  40    ATTRIB  bits 2:0 property size: 0 4 octets, 1 8 octets
//	octets 41-43 reserved
//	octets 44-47 OFST    property offset
//	octets 48-55 VALUE   (Set only) the value to write
//	octets 56-63 reserved
//
// (Linux struct nvmf_property_get_command / _set_command lay them out
// the same way.)
type PropertyCommand struct {
	ATTRIB uint8
	OFST   PropertyOffset
	VALUE  uint64 // Property Set only
}

// Size returns the property size ATTRIB names, 4 or 8 octets (0 for a
// reserved encoding).
func (p PropertyCommand) Size() int {
	switch p.ATTRIB & 0x7 {
	case 0:
		return 4
	case 1:
		return 8
	}
	return 0
}

// Property reads the SQE as a Property Get or Property Set command.
func (c *Command) Property() PropertyCommand {
	p := PropertyCommand{ATTRIB: uint8(c.CDW10), OFST: PropertyOffset(c.CDW11)}
	if c.FCTYPE == FabricsPropertySet {
		p.VALUE = uint64(c.CDW13)<<32 | uint64(c.CDW12)
		if p.Size() == 4 {
			p.VALUE &= 0xffffffff
		}
	}
	return p
}

// AuthCommand is the command specific part of Authentication Send and
// Authentication Receive (Base 2.0 "Authentication Send Command",
// "Authentication Receive Command"; Linux struct nvmf_auth_send_command):
//
//	octet  40    reserved
//	octet  41    SPSP0   security protocol specific, low octet
//	octet  42    SPSP1   security protocol specific, high octet
//	octet  43    SECP    security protocol (E9h: NVMe in-band authentication)
//	octets 44-47 TL (Send: transfer length) / AL (Receive: allocation length)
type AuthCommand struct {
	SPSP0  uint8
	SPSP1  uint8
	SECP   uint8
	Length uint32 // TL or AL
}

// Auth reads the SQE as an Authentication Send or Receive command.
func (c *Command) Auth() AuthCommand {
	return AuthCommand{
		SPSP0:  uint8(c.CDW10 >> 8),
		SPSP1:  uint8(c.CDW10 >> 16),
		SECP:   uint8(c.CDW10 >> 24),
		Length: c.CDW11,
	}
}

// CAP fields (Base 2.0 "Offset 0h: CAP - Controller Capabilities") of a
// Property Get CAP response.
type CAP uint64

// MQES returns Maximum Queue Entries Supported (0's based).
func (c CAP) MQES() uint16 { return uint16(c) }

// TO returns the timeout to ready, in 500 ms units.
func (c CAP) TO() uint8 { return uint8(c >> 24) }

// CSS returns the Command Sets Supported bits.
func (c CAP) CSS() uint8 { return uint8(c >> 37) }

// MPSMIN returns the minimum memory page size exponent (2^(12+MPSMIN)).
func (c CAP) MPSMIN() uint8 { return uint8(c>>48) & 0xf }

// VS is the Version property (Base 2.0 "Offset 8h: VS - Version").
type VS uint32

// String formats the version as MJR.MNR.TER.
func (v VS) String() string {
	return strconv.Itoa(int(v>>16)) + "." + strconv.Itoa(int(v>>8&0xff)) + "." + strconv.Itoa(int(v&0xff))
}

// CC is the Controller Configuration property (Base 2.0 "Offset 14h: CC").
type CC uint32

// EN returns the Enable bit.
func (c CC) EN() bool { return c&1 != 0 }

// SHN returns the Shutdown Notification field (bits 15:14).
func (c CC) SHN() uint8 { return uint8(c>>14) & 0x3 }

// IOSQES returns the I/O submission queue entry size exponent (bits 19:16).
func (c CC) IOSQES() uint8 { return uint8(c>>16) & 0xf }

// IOCQES returns the I/O completion queue entry size exponent (bits 23:20).
func (c CC) IOCQES() uint8 { return uint8(c>>20) & 0xf }

// CSTS is the Controller Status property (Base 2.0 "Offset 1Ch: CSTS").
type CSTS uint32

// RDY returns the Ready bit.
func (c CSTS) RDY() bool { return c&1 != 0 }

// CFS returns the Controller Fatal Status bit.
func (c CSTS) CFS() bool { return c&2 != 0 }

// SHST returns the Shutdown Status field (bits 3:2).
func (c CSTS) SHST() uint8 { return uint8(c>>2) & 0x3 }
