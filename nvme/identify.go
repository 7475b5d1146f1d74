package nvme

import (
	"bytes"
	"encoding/binary"
)

// IdentifyDataLen is the size of every Identify data structure.
const IdentifyDataLen = 4096

// IdentifyController is the part of the Identify Controller data structure
// (CNS 01h; Base 2.0 "Identify Controller Data Structure") a capture
// analysis uses. Octet offsets:
//
//	0-1 VID, 2-3 SSVID, 4-23 SN, 24-63 MN, 64-71 FR, 72 RAB, 73-75 IEEE,
//	76 CMIC, 77 MDTS, 78-79 CNTLID, 80-83 VER, 96-99 CTRATT, 111 CNTRLTYPE,
//	320-321 KAS, 512 SQES, 513 CQES, 514-515 MAXCMD, 516-519 NN,
//	536-539 SGLS, 768-1023 SUBNQN,
//	NVMe over Fabrics attributes: 1792-1795 IOCCSZ, 1796-1799 IORCSZ,
//	1800-1801 ICDOFF, 1802 FCATT, 1803 MSDBD, 1804-1805 OFCS.
type IdentifyController struct {
	VID       uint16
	SSVID     uint16
	SN        []byte // 20 ASCII octets, space padded; into the decoded data
	MN        []byte // 40 ASCII octets, space padded
	FR        []byte // 8 ASCII octets
	RAB       uint8
	IEEE      uint32 // 24 bits
	CMIC      uint8
	MDTS      uint8 // maximum data transfer size, 2^MDTS minimum pages; 0 no limit
	CNTLID    uint16
	VER       VS
	CTRATT    uint32 // controller attributes; bit 6: Traffic Based Keep Alive Support (CTRATTTBKAS)
	CNTRLTYPE uint8  // 1 I/O, 2 discovery, 3 administrative controller
	KAS       uint16 // keep alive support, granularity in 100 ms units
	SQES      uint8  // bits 3:0 required, 7:4 maximum SQ entry size, log2
	CQES      uint8
	MAXCMD    uint16 // maximum outstanding commands (fabrics)
	NN        uint32
	SGLS      uint32
	SUBNQN    []byte // up to the first NUL

	// NVMe over Fabrics attributes (NVMe over Fabrics 1.1, Identify Controller
	// "Identify Controller fields"; Base 2.0 octets 1792-2047).
	IOCCSZ uint32 // I/O queue command capsule supported size, 16-octet units
	IORCSZ uint32 // I/O queue response capsule supported size, 16-octet units
	ICDOFF uint16 // in-capsule data offset, 16-octet units
	FCATT  uint8  // bit 0: dynamic (0) or static (1) controller model
	MSDBD  uint8  // maximum SGL data block descriptors per command
	OFCS   uint16 // optional fabric commands supported (bit 0 Disconnect)
}

// CTRATTTBKAS is CTRATT's Traffic Based Keep Alive Support bit (NVMe Base
// 2.0 "Identify Controller Data Structure"; Linux NVME_CTRL_ATTR_TBKAS):
// the controller restarts its Keep Alive Timer on any command it
// processes, not only on Keep Alive commands ("Keep Alive Timer").
const CTRATTTBKAS = 1 << 6

// DecodeFromBytes decodes the Identify Controller data at the start of data
// (all 4096 octets; a transfer cut short is an error).
func (c *IdentifyController) DecodeFromBytes(data []byte) error {
	if len(data) < IdentifyDataLen {
		*c = IdentifyController{}
		return errShortIdentCtrl
	}
	le := binary.LittleEndian
	c.VID = le.Uint16(data[0:])
	c.SSVID = le.Uint16(data[2:])
	c.SN = data[4:24]
	c.MN = data[24:64]
	c.FR = data[64:72]
	c.RAB = data[72]
	c.IEEE = uint32(data[73]) | uint32(data[74])<<8 | uint32(data[75])<<16
	c.CMIC = data[76]
	c.MDTS = data[77]
	c.CNTLID = le.Uint16(data[78:])
	c.VER = VS(le.Uint32(data[80:]))
	c.CTRATT = le.Uint32(data[96:])
	c.CNTRLTYPE = data[111]
	c.KAS = le.Uint16(data[320:])
	c.SQES = data[512]
	c.CQES = data[513]
	c.MAXCMD = le.Uint16(data[514:])
	c.NN = le.Uint32(data[516:])
	c.SGLS = le.Uint32(data[536:])
	c.SUBNQN = cstring(data[768:1024])
	c.IOCCSZ = le.Uint32(data[1792:])
	c.IORCSZ = le.Uint32(data[1796:])
	c.ICDOFF = le.Uint16(data[1800:])
	c.FCATT = data[1802]
	c.MSDBD = data[1803]
	c.OFCS = le.Uint16(data[1804:])
	return nil
}

// InCapsuleDataSize returns how many octets of in-capsule data an I/O
// queue command capsule may carry: IOCCSZ*16 minus the 64-octet SQE (NVMe
// over Fabrics 1.1, Identify Controller: IOCCSZ includes the SQE; 0 when IOCCSZ is
// below the minimum of 4).
func (c *IdentifyController) InCapsuleDataSize() int {
	if c.IOCCSZ < 4 {
		return 0
	}
	return int(c.IOCCSZ)*16 - SQELen
}

// TrimPadding returns an ASCII field of an NVMe data structure (SN, MN,
// FR, TRSVCID, TRADDR: space padded, Base 2.0 "ASCII string" fields)
// without its trailing spaces and NULs.
func TrimPadding(b []byte) []byte { return bytes.TrimRight(b, " \x00") }

// LBAFormat is one LBA Format Data Structure of Identify Namespace (NVM
// Command Set 1.0 "LBA Format Data Structure"): MS (15:0) metadata size,
// LBADS (23:16) LBA data size as a power of two, RP (25:24) relative
// performance.
type LBAFormat uint32

// MS returns the metadata size per logical block in octets.
func (f LBAFormat) MS() uint16 { return uint16(f) }

// LBADS returns the LBA data size exponent (9: 512 octets, 12: 4096).
func (f LBAFormat) LBADS() uint8 { return uint8(f >> 16) }

// BlockSize returns the logical block size in octets (0 if LBADS is below
// 9, i.e. the format is not supported).
func (f LBAFormat) BlockSize() uint32 {
	if f.LBADS() < 9 || f.LBADS() > 31 {
		return 0
	}
	return 1 << f.LBADS()
}

// RP returns the relative performance.
func (f LBAFormat) RP() uint8 { return uint8(f>>24) & 0x3 }

// identifyNSMinLen is what the namespace data must hold: octets up to and
// including the 16 LBA formats of NVMe 1.4 (the 48 more of 2.0 are read
// when present).
const identifyNSMinLen = 192

// IdentifyNamespace is the part of the Identify Namespace data structure
// (CNS 00h; NVM Command Set 1.0 "Identify Namespace Data Structure, NVM
// Command Set Specific") a capture analysis uses:
//
//	0-7 NSZE, 8-15 NCAP, 16-23 NUSE, 24 NSFEAT, 25 NLBAF (0's based),
//	26 FLBAS, 27 MC, 28 DPC, 29 DPS, 30 NMIC, 104-119 NGUID, 120-127 EUI64,
//	128-383 LBAF0-LBAF63 (4 octets each)
type IdentifyNamespace struct {
	NSZE   uint64
	NCAP   uint64
	NUSE   uint64
	NSFEAT uint8
	NLBAF  uint8
	FLBAS  uint8
	MC     uint8
	DPC    uint8
	DPS    uint8
	NMIC   uint8
	NGUID  [16]byte
	EUI64  [8]byte
	LBAF   [64]LBAFormat // as many as the data holds (16 from 192 octets, 64 from 384)
}

// DecodeFromBytes decodes Identify Namespace data at the start of data.
func (n *IdentifyNamespace) DecodeFromBytes(data []byte) error {
	if len(data) < identifyNSMinLen {
		*n = IdentifyNamespace{}
		return errShortIdentNS
	}
	le := binary.LittleEndian
	n.NSZE = le.Uint64(data[0:])
	n.NCAP = le.Uint64(data[8:])
	n.NUSE = le.Uint64(data[16:])
	n.NSFEAT = data[24]
	n.NLBAF = data[25]
	n.FLBAS = data[26]
	n.MC = data[27]
	n.DPC = data[28]
	n.DPS = data[29]
	n.NMIC = data[30]
	copy(n.NGUID[:], data[104:120])
	copy(n.EUI64[:], data[120:128])
	for i := range n.LBAF {
		o := 128 + 4*i
		if o+4 > len(data) {
			n.LBAF[i] = 0
			continue
		}
		n.LBAF[i] = LBAFormat(le.Uint32(data[o:]))
	}
	return nil
}

// FormatIndex returns the index of the LBA format in use: FLBAS bits 3:0,
// with bits 6:5 as the upper two bits when more than 16 formats exist (NVM
// Command Set 1.0 "FLBAS").
func (n *IdentifyNamespace) FormatIndex() int {
	i := int(n.FLBAS & 0xf)
	if n.NLBAF >= 16 {
		i |= int(n.FLBAS>>5&0x3) << 4
	}
	return i
}

// Format returns the LBA format in use.
func (n *IdentifyNamespace) Format() LBAFormat { return n.LBAF[n.FormatIndex()] }

// ForEachNSID calls fn for each namespace ID of an Active Namespace ID list
// (CNS 02h; Base 2.0 "Namespace List"): up to 1024 little-endian 32-bit
// IDs, the list ending at the first 0. It stops early when fn returns
// false.
func ForEachNSID(list []byte, fn func(nsid uint32) bool) {
	for i := 0; i+4 <= len(list) && i < IdentifyDataLen; i += 4 {
		id := binary.LittleEndian.Uint32(list[i:])
		if id == 0 || !fn(id) {
			return
		}
	}
}
