package nvme

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// An NVMe data structure that a controller returns by RDMA Write (the
// Identify data structures, log pages) reaches a capture in packets: a
// packet holds the octets from some offset of the structure on. Item
// describes one field of such a structure by place, so that the fields a
// packet holds whole can be read from that packet alone (FieldsIn),
// without keeping the structure: the layouts below are the NVMe Base
// Specification 2.0's (the section each table's comment names), the field
// names its mnemonics in lower case, as Wireshark's NVMe dissector names
// its fields after them (the prefix aside).

// ItemKind is how an Item's octets read.
type ItemKind uint8

// Item kinds.
const (
	ItemUint   ItemKind = iota + 1 // a little-endian unsigned integer (1 to 8 octets), or the bits Mask selects of it
	ItemBytes                      // octets as they are
	ItemString                     // ASCII, up to the first NUL (Base 2.0 section 1.5 "ASCII string")
)

// String names the kind.
func (k ItemKind) String() string {
	switch k {
	case ItemUint:
		return "uint"
	case ItemBytes:
		return "bytes"
	case ItemString:
		return "string"
	}
	return "unknown"
}

// Item is one field of a data structure: Len octets at Off (from the start
// of the structure or of the entry it repeats in), and for a bit field
// the Mask of its bits within them.
type Item struct {
	Name string
	Off  int
	Len  int
	Kind ItemKind
	Mask uint64
}

// Uint reads the item from b, which holds the structure's octets from
// octet at on: its value (masked and shifted down), and whether b holds
// all of its octets.
func (it *Item) Uint(b []byte, at int) (uint64, bool) {
	o := it.Off - at
	if o < 0 || it.Len < 1 || it.Len > 8 || o+it.Len > len(b) {
		return 0, false
	}
	var v uint64
	for i := it.Len - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[o+i])
	}
	if it.Mask != 0 {
		v = (v & it.Mask) >> bits.TrailingZeros64(it.Mask)
	}
	return v, true
}

// Bytes returns the item's octets in b (which holds the structure from
// octet at on), or false when b does not hold all of them. A string item
// ends at its first NUL.
func (it *Item) Bytes(b []byte, at int) ([]byte, bool) {
	o := it.Off - at
	if o < 0 || it.Len < 0 || o+it.Len > len(b) {
		return nil, false
	}
	v := b[o : o+it.Len]
	if it.Kind == ItemString {
		v = cstring(v)
	}
	return v, true
}

// In reports whether b, the structure's octets from at on, holds the
// item whole.
func (it *Item) In(b []byte, at int) bool {
	o := it.Off - at
	return o >= 0 && o+it.Len <= len(b)
}

// Sizes of the data structures and entries the layouts describe.
const (
	PowerStateDescriptorLen  = 32 // Identify Controller octets 2048-3071 hold 32 of them
	PowerStateDescriptorsOff = 2048
	IdentifyNamespaceLBAFOff = 128 // LBA Format 0 Support (LBAF0) in Identify Namespace
	IdentifyNamespaceVSOff   = 384 // vendor specific, to 4095
	SMARTLogLen              = 512
	ErrorInformationEntryLen = 64
	ANAHeaderLen             = 16
	ANAGroupDescriptorLen    = 32 // without its NSID list
	CommandEffectsLen        = 4096
	// Commands Supported and Effects: ACS0-ACS255 at 0-1023, IOCS0-IOCS255
	// at 1024-2047, 4 octets each; 2048-4095 reserved.
	CommandEffectsIOCSOff = 1024
)

// NSIDs returns the namespace identifiers of an Active Namespace ID list
// (CNS 02h; Base 2.0 Figure 274 "Namespace List") that b holds, b being
// the list from octet at on: the whole 4-octet entries, up to the first 0.
// index is the first one's index in the list.
func NSIDs(b []byte, at int, fn func(index int, nsid uint32) bool) {
	if at < 0 {
		return
	}
	o := 0
	if r := at % 4; r != 0 {
		o = 4 - r
	}
	for ; o+4 <= len(b) && at+o < IdentifyDataLen; o += 4 {
		id := binary.LittleEndian.Uint32(b[o:])
		if id == 0 || !fn((at+o)/4, id) {
			return
		}
	}
}

// IsZero reports whether every octet of b is 0.
func IsZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

// The layouts. Each item whose octets a bit field shares comes first,
// then its bits (Mask).
var (
	// IdentifyControllerItems: Identify Controller data structure (CNS 01h;
	// Base 2.0 5.17.2.1 "Identify Controller Data Structure"), octets 0-2047
	// (the NVMe over Fabrics attributes at 1792-2047: NVMe over Fabrics 1.1
	// "Identify Controller Fields").
	IdentifyControllerItems = []Item{
		{Name: "ctrl.vid", Off: 0, Len: 2, Kind: ItemUint},
		{Name: "ctrl.ssvid", Off: 2, Len: 2, Kind: ItemUint},
		{Name: "ctrl.sn", Off: 4, Len: 20, Kind: ItemString},
		{Name: "ctrl.mn", Off: 24, Len: 40, Kind: ItemString},
		{Name: "ctrl.fr", Off: 64, Len: 8, Kind: ItemBytes},
		{Name: "ctrl.rab", Off: 72, Len: 1, Kind: ItemUint},
		{Name: "ctrl.ieee", Off: 73, Len: 3, Kind: ItemUint},
		{Name: "ctrl.cmic", Off: 76, Len: 1, Kind: ItemUint},
		{Name: "ctrl.cmic.mp", Off: 76, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.cmic.mc", Off: 76, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.cmic.sriov", Off: 76, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.cmic.ana", Off: 76, Len: 1, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.cmic.rsvd", Off: 76, Len: 1, Kind: ItemUint, Mask: 0xf0},
		{Name: "ctrl.mdts", Off: 77, Len: 1, Kind: ItemUint},
		{Name: "ctrl.cntlid", Off: 78, Len: 2, Kind: ItemUint},
		{Name: "ctrl.ver", Off: 80, Len: 4, Kind: ItemUint},
		{Name: "ctrl.ver.ter", Off: 80, Len: 1, Kind: ItemUint},
		{Name: "ctrl.ver.min", Off: 81, Len: 1, Kind: ItemUint},
		{Name: "ctrl.ver.mjr", Off: 82, Len: 2, Kind: ItemUint},
		{Name: "ctrl.rtd3r", Off: 84, Len: 4, Kind: ItemUint},
		{Name: "ctrl.rtd3e", Off: 88, Len: 4, Kind: ItemUint},
		{Name: "ctrl.oaes", Off: 92, Len: 4, Kind: ItemUint},
		{Name: "ctrl.oaes.rsvd0", Off: 92, Len: 4, Kind: ItemUint, Mask: 0xff},
		{Name: "ctrl.oaes.nan", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x100},
		{Name: "ctrl.oaes.fan", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x200},
		{Name: "ctrl.oaes.rsvd1", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x400},
		{Name: "ctrl.oaes.ana", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x800},
		{Name: "ctrl.oaes.ple", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x1000},
		{Name: "ctrl.oaes.lba", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x2000},
		{Name: "ctrl.oaes.ege", Off: 92, Len: 4, Kind: ItemUint, Mask: 0x4000},
		{Name: "ctrl.oaes.rsvd2", Off: 92, Len: 4, Kind: ItemUint, Mask: 0xffff8000},
		{Name: "ctrl.ctratt", Off: 96, Len: 4, Kind: ItemUint},
		{Name: "ctrl.ctratt.hi_128", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.ctratt.nopspm", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.ctratt.nvmset", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.ctratt.rrl", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.ctratt.eg", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.ctratt.plm", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x20},
		{Name: "ctrl.ctratt.tbkas", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x40},
		{Name: "ctrl.ctratt.ng", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.ctratt.sqa", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x100},
		{Name: "ctrl.ctratt.uuidl", Off: 96, Len: 4, Kind: ItemUint, Mask: 0x200},
		{Name: "ctrl.ctratt.rsvd", Off: 96, Len: 4, Kind: ItemUint, Mask: 0xfffffc00},
		{Name: "ctrl.rrls", Off: 100, Len: 2, Kind: ItemUint},
		{Name: "ctrl.rrls.rrls0", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.rrls.rrls1", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.rrls.rrls2", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.rrls.rrls3", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.rrls.rrls4", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.rrls.rrls5", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x20},
		{Name: "ctrl.rrls.rrls6", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x40},
		{Name: "ctrl.rrls.rrls7", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.rrls.rrls8", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x100},
		{Name: "ctrl.rrls.rrls9", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x200},
		{Name: "ctrl.rrls.rrls10", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x400},
		{Name: "ctrl.rrls.rrls11", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x800},
		{Name: "ctrl.rrls.rrls12", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x1000},
		{Name: "ctrl.rrls.rrls13", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x2000},
		{Name: "ctrl.rrls.rrls14", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x4000},
		{Name: "ctrl.rrls.rrls15", Off: 100, Len: 2, Kind: ItemUint, Mask: 0x8000},
		{Name: "ctrl.rsvd0", Off: 102, Len: 9, Kind: ItemBytes},
		{Name: "ctrl.cntrltype", Off: 111, Len: 1, Kind: ItemUint},
		{Name: "ctrl.fguid", Off: 112, Len: 16, Kind: ItemBytes},
		{Name: "ctrl.fguid.vse", Off: 112, Len: 8, Kind: ItemUint},
		{Name: "ctrl.fguid.oui", Off: 120, Len: 3, Kind: ItemUint},
		{Name: "ctrl.fguid.ei", Off: 123, Len: 5, Kind: ItemUint},
		{Name: "ctrl.crdt1", Off: 128, Len: 2, Kind: ItemUint},
		{Name: "ctrl.crdt2", Off: 130, Len: 2, Kind: ItemUint},
		{Name: "ctrl.crdt3", Off: 132, Len: 2, Kind: ItemUint},
		{Name: "ctrl.rsvd1", Off: 134, Len: 106, Kind: ItemBytes},
		{Name: "ctrl.mi", Off: 240, Len: 16, Kind: ItemBytes},
		{Name: "ctrl.mi.rsvd", Off: 240, Len: 13, Kind: ItemBytes},
		{Name: "ctrl.mi.nvmsr", Off: 253, Len: 1, Kind: ItemUint},
		{Name: "ctrl.mi.nvmsr.nvmesd", Off: 253, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.mi.nvmsr.nvmee", Off: 253, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.mi.nvmsr.rsvd", Off: 253, Len: 1, Kind: ItemUint, Mask: 0xfc},
		{Name: "ctrl.mi.vwci", Off: 254, Len: 1, Kind: ItemUint},
		{Name: "ctrl.mi.vwci.vwcr", Off: 254, Len: 1, Kind: ItemUint, Mask: 0x7f},
		{Name: "ctrl.mi.vwci.vwcrv", Off: 254, Len: 1, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.mi.mec", Off: 255, Len: 1, Kind: ItemUint},
		{Name: "ctrl.mi.mec.smbusme", Off: 255, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.mi.mec.pcieme", Off: 255, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.mi.mec.rsvd", Off: 255, Len: 1, Kind: ItemUint, Mask: 0xfc},
		{Name: "ctrl.oacs", Off: 256, Len: 2, Kind: ItemUint},
		{Name: "ctrl.oacs.sec", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.oacs.fmt", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.oacs.fw", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.oacs.nsmgmt", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.oacs.stst", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.oacs.dtv", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x20},
		{Name: "ctrl.oacs.mi", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x40},
		{Name: "ctrl.oacs.vm", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.oacs.db", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x100},
		{Name: "ctrl.oacs.sec.lba", Off: 256, Len: 2, Kind: ItemUint, Mask: 0x200},
		{Name: "ctrl.oacs.sec.rsvd", Off: 256, Len: 2, Kind: ItemUint, Mask: 0xfc00},
		{Name: "ctrl.acl", Off: 258, Len: 1, Kind: ItemUint},
		{Name: "ctrl.aerl", Off: 259, Len: 1, Kind: ItemUint},
		{Name: "ctrl.frmw", Off: 260, Len: 1, Kind: ItemUint},
		{Name: "ctrl.frmw.fro", Off: 260, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.frmw.fsn", Off: 260, Len: 1, Kind: ItemUint, Mask: 0xe},
		{Name: "ctrl.frmw.anr", Off: 260, Len: 1, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.frmw.rsvd", Off: 260, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.lpa", Off: 261, Len: 1, Kind: ItemUint},
		{Name: "ctrl.lpa.smrt", Off: 261, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.lpa.cmds", Off: 261, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.lpa.elp", Off: 261, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.lpa.tel", Off: 261, Len: 1, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.lpa.ple", Off: 261, Len: 1, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.lpa.rsvd", Off: 261, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.elpe", Off: 262, Len: 1, Kind: ItemUint},
		{Name: "ctrl.npss", Off: 263, Len: 1, Kind: ItemUint},
		{Name: "ctrl.avscc", Off: 264, Len: 1, Kind: ItemUint},
		{Name: "ctrl.avscc.std", Off: 264, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.avscc.rsvd", Off: 264, Len: 1, Kind: ItemUint, Mask: 0xfe},
		{Name: "ctrl.apsta", Off: 265, Len: 1, Kind: ItemUint},
		{Name: "ctrl.apsta.aut", Off: 265, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.apsta.rsvd", Off: 265, Len: 1, Kind: ItemUint, Mask: 0xfe},
		{Name: "ctrl.wctemp", Off: 266, Len: 2, Kind: ItemUint},
		{Name: "ctrl.cctemp", Off: 268, Len: 2, Kind: ItemUint},
		{Name: "ctrl.mtfa", Off: 270, Len: 2, Kind: ItemUint},
		{Name: "ctrl.hmpre", Off: 272, Len: 4, Kind: ItemUint},
		{Name: "ctrl.hmmin", Off: 276, Len: 4, Kind: ItemUint},
		{Name: "ctrl.tnvmcap", Off: 280, Len: 16, Kind: ItemBytes},
		{Name: "ctrl.unvmcap", Off: 296, Len: 16, Kind: ItemBytes},
		{Name: "ctrl.rpmbs", Off: 312, Len: 4, Kind: ItemUint},
		{Name: "ctrl.rpmbs.nu", Off: 312, Len: 4, Kind: ItemUint, Mask: 0x7},
		{Name: "ctrl.rpmbs.au", Off: 312, Len: 4, Kind: ItemUint, Mask: 0x38},
		{Name: "ctrl.rpmbs.rsvd", Off: 312, Len: 4, Kind: ItemUint, Mask: 0xffc0},
		{Name: "ctrl.rpmbs.ts", Off: 312, Len: 4, Kind: ItemUint, Mask: 0xff0000},
		{Name: "ctrl.rpmbs.as", Off: 312, Len: 4, Kind: ItemUint, Mask: 0xff000000},
		{Name: "ctrl.edstt", Off: 316, Len: 2, Kind: ItemUint},
		{Name: "ctrl.dsto", Off: 318, Len: 1, Kind: ItemUint},
		{Name: "ctrl.dsto.mds", Off: 318, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.dsto.rsvd", Off: 318, Len: 1, Kind: ItemUint, Mask: 0xfe},
		{Name: "ctrl.fwug", Off: 319, Len: 1, Kind: ItemUint},
		{Name: "ctrl.kas", Off: 320, Len: 2, Kind: ItemUint},
		{Name: "ctrl.hctma", Off: 322, Len: 2, Kind: ItemUint},
		{Name: "ctrl.hctma.sup", Off: 322, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.hctma.rsvd", Off: 322, Len: 2, Kind: ItemUint, Mask: 0xfffe},
		{Name: "ctrl.mntmt", Off: 324, Len: 2, Kind: ItemUint},
		{Name: "ctrl.mxtmt", Off: 326, Len: 2, Kind: ItemUint},
		{Name: "ctrl.sanicap", Off: 328, Len: 4, Kind: ItemUint},
		{Name: "ctrl.sanicap.ces", Off: 328, Len: 4, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.sanicap.bes", Off: 328, Len: 4, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.sanicap.ows", Off: 328, Len: 4, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.sanicap.rsvd", Off: 328, Len: 4, Kind: ItemUint, Mask: 0x1ffffff8},
		{Name: "ctrl.sanicap.ndi", Off: 328, Len: 4, Kind: ItemUint, Mask: 0x20000000},
		{Name: "ctrl.sanicap.nodmmas", Off: 328, Len: 4, Kind: ItemUint, Mask: 0xc0000000},
		{Name: "ctrl.hmmminds", Off: 332, Len: 4, Kind: ItemUint},
		{Name: "ctrl.hmmaxd", Off: 336, Len: 2, Kind: ItemUint},
		{Name: "ctrl.nsetidmax", Off: 338, Len: 2, Kind: ItemUint},
		{Name: "ctrl.endgidmax", Off: 340, Len: 2, Kind: ItemUint},
		{Name: "ctrl.anatt", Off: 342, Len: 1, Kind: ItemUint},
		{Name: "ctrl.anacap", Off: 343, Len: 1, Kind: ItemUint},
		{Name: "ctrl.anacap.osr", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.anacap.nosr", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.anacap.isr", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.anacap.plsr", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.anacap.csr", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.anacap.rsvd", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x20},
		{Name: "ctrl.anacap.panagrpid", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x40},
		{Name: "ctrl.anacap.nzpanagrpid", Off: 343, Len: 1, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.anagrpmax", Off: 344, Len: 4, Kind: ItemUint},
		{Name: "ctrl.nanagrpid", Off: 348, Len: 4, Kind: ItemUint},
		{Name: "ctrl.pels", Off: 352, Len: 4, Kind: ItemUint},
		{Name: "ctrl.rsvd2", Off: 356, Len: 156, Kind: ItemBytes},
		{Name: "ctrl.sqes", Off: 512, Len: 1, Kind: ItemUint},
		{Name: "ctrl.sqes.mins", Off: 512, Len: 1, Kind: ItemUint, Mask: 0xf},
		{Name: "ctrl.sqes.maxs", Off: 512, Len: 1, Kind: ItemUint, Mask: 0xf0},
		{Name: "ctrl.cqes", Off: 513, Len: 1, Kind: ItemUint},
		{Name: "ctrl.cqes.mins", Off: 513, Len: 1, Kind: ItemUint, Mask: 0xf},
		{Name: "ctrl.cqes.maxs", Off: 513, Len: 1, Kind: ItemUint, Mask: 0xf0},
		{Name: "ctrl.maxcmd", Off: 514, Len: 2, Kind: ItemUint},
		{Name: "ctrl.nn", Off: 516, Len: 4, Kind: ItemUint},
		{Name: "ctrl.oncs", Off: 520, Len: 2, Kind: ItemUint},
		{Name: "ctrl.oncs.ccs", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.oncs.wus", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.oncs.dsms", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.oncs.wzs", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x8},
		{Name: "ctrl.oncs.nzfs", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x10},
		{Name: "ctrl.oncs.ress", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x20},
		{Name: "ctrl.oncs.tstmps", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x40},
		{Name: "ctrl.oncs.vers", Off: 520, Len: 2, Kind: ItemUint, Mask: 0x80},
		{Name: "ctrl.oncs.rsvd", Off: 520, Len: 2, Kind: ItemUint, Mask: 0xff00},
		{Name: "ctrl.fuses", Off: 522, Len: 2, Kind: ItemUint},
		{Name: "ctrl.fuses.cws", Off: 522, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.fuses.rsvd", Off: 522, Len: 2, Kind: ItemUint, Mask: 0xfffe},
		{Name: "ctrl.fna", Off: 524, Len: 1, Kind: ItemUint},
		{Name: "ctrl.fna.fall", Off: 524, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.fna.seall", Off: 524, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.fna.ces", Off: 524, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.fna.rsvd", Off: 524, Len: 1, Kind: ItemUint, Mask: 0xf8},
		{Name: "ctrl.vwc", Off: 525, Len: 1, Kind: ItemUint},
		{Name: "ctrl.vwc.cp", Off: 525, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.vwc.cfb", Off: 525, Len: 1, Kind: ItemUint, Mask: 0x6},
		{Name: "ctrl.vwc.rsvd", Off: 525, Len: 1, Kind: ItemUint, Mask: 0xf8},
		{Name: "ctrl.awun", Off: 526, Len: 2, Kind: ItemUint},
		{Name: "ctrl.awupf", Off: 528, Len: 2, Kind: ItemUint},
		{Name: "ctrl.nvscc", Off: 530, Len: 1, Kind: ItemUint},
		{Name: "ctrl.nvscc.std", Off: 530, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.nvscc.rsvd", Off: 530, Len: 1, Kind: ItemUint, Mask: 0xfe},
		{Name: "ctrl.nwpc", Off: 531, Len: 1, Kind: ItemUint},
		{Name: "ctrl.nwpc.wpss", Off: 531, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.nwpc.wppcs", Off: 531, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.nwpc.pwpss", Off: 531, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.nwpc.rsvd", Off: 531, Len: 1, Kind: ItemUint, Mask: 0xf8},
		{Name: "ctrl.acwu", Off: 532, Len: 2, Kind: ItemUint},
		{Name: "ctrl.rsvd3", Off: 534, Len: 2, Kind: ItemBytes},
		{Name: "ctrl.sgls", Off: 536, Len: 4, Kind: ItemUint},
		{Name: "ctrl.sgls.sgls", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x3},
		{Name: "ctrl.sgls.kdbs", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x4},
		{Name: "ctrl.sgls.rsvd0", Off: 536, Len: 4, Kind: ItemUint, Mask: 0xfff8},
		{Name: "ctrl.sgls.bbd", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x10000},
		{Name: "ctrl.sgls.bufmptr", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x20000},
		{Name: "ctrl.sgls.lsgl", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x40000},
		{Name: "ctrl.sgls.kmptr", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x80000},
		{Name: "ctrl.sgls.offs", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x100000},
		{Name: "ctrl.sgls.tdbd", Off: 536, Len: 4, Kind: ItemUint, Mask: 0x200000},
		{Name: "ctrl.sgls.rsvd1", Off: 536, Len: 4, Kind: ItemUint, Mask: 0xffc00000},
		{Name: "ctrl.mnan", Off: 540, Len: 4, Kind: ItemUint},
		{Name: "ctrl.rsvd4", Off: 544, Len: 224, Kind: ItemBytes},
		{Name: "ctrl.subnqn", Off: 768, Len: 256, Kind: ItemString},
		{Name: "ctrl.rsvd5", Off: 1024, Len: 768, Kind: ItemBytes},
		{Name: "ctrl.nvmeof", Off: 1792, Len: 256, Kind: ItemBytes},
		{Name: "ctrl.nvmeof.ioccsz", Off: 1792, Len: 4, Kind: ItemUint},
		{Name: "ctrl.nvmeof.iorcsz", Off: 1796, Len: 4, Kind: ItemUint},
		{Name: "ctrl.nvmeof.icdoff", Off: 1800, Len: 2, Kind: ItemUint},
		{Name: "ctrl.nvmeof.fcatt", Off: 1802, Len: 1, Kind: ItemUint},
		{Name: "ctrl.nvmeof.fcatt.dcm", Off: 1802, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.nvmeof.fcatt.rsvd", Off: 1802, Len: 1, Kind: ItemUint, Mask: 0xfe},
		{Name: "ctrl.nvmeof.msdbd", Off: 1803, Len: 1, Kind: ItemUint},
		{Name: "ctrl.nvmeof.ofcs", Off: 1804, Len: 2, Kind: ItemUint},
		{Name: "ctrl.nvmeof.ofcs.dcs", Off: 1804, Len: 2, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.nvmeof.ofcs.rsvd", Off: 1804, Len: 2, Kind: ItemUint, Mask: 0xfffe},
		{Name: "ctrl.nvmeof.rsvd", Off: 1806, Len: 242, Kind: ItemBytes},
		{Name: "ctrl.psds", Off: 2048, Len: 1024, Kind: ItemBytes},
	}
	// PowerStateDescriptorItems: one Power State Descriptor (Base 2.0
	// "Power State Descriptor Data Structure"), 32 of them from octet 2048 of
	// Identify Controller (PSD0-PSD31).
	PowerStateDescriptorItems = []Item{
		{Name: "ctrl.psds.psd", Off: 0, Len: 32, Kind: ItemBytes},
		{Name: "ctrl.psds.psd.mp", Off: 0, Len: 2, Kind: ItemUint},
		{Name: "ctrl.psds.psd.rsvd0", Off: 2, Len: 1, Kind: ItemUint},
		{Name: "ctrl.psds.psd.mxps", Off: 3, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "ctrl.psds.psd.nops", Off: 3, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "ctrl.psds.psd.rsvd1", Off: 3, Len: 1, Kind: ItemUint, Mask: 0xfc},
		{Name: "ctrl.psds.psd.enlat", Off: 4, Len: 4, Kind: ItemUint},
		{Name: "ctrl.psds.psd.exlat", Off: 8, Len: 4, Kind: ItemUint},
		{Name: "ctrl.psds.psd.rrt", Off: 12, Len: 1, Kind: ItemUint, Mask: 0x1f},
		{Name: "ctrl.psds.psd.rsvd2", Off: 12, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.psds.psd.rrl", Off: 13, Len: 1, Kind: ItemUint, Mask: 0x1f},
		{Name: "ctrl.psds.psd.rsvd3", Off: 13, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.psds.psd.rwt", Off: 14, Len: 1, Kind: ItemUint, Mask: 0x1f},
		{Name: "ctrl.psds.psd.rsvd4", Off: 14, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.psds.psd.rwl", Off: 15, Len: 1, Kind: ItemUint, Mask: 0x1f},
		{Name: "ctrl.psds.psd.rsvd5", Off: 15, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "ctrl.psds.psd.idlp", Off: 16, Len: 2, Kind: ItemUint},
		{Name: "ctrl.psds.psd.rsvd6", Off: 18, Len: 1, Kind: ItemUint, Mask: 0x3f},
		{Name: "ctrl.psds.psd.ips", Off: 18, Len: 1, Kind: ItemUint, Mask: 0xc0},
		{Name: "ctrl.psds.psd.rsvd7", Off: 19, Len: 1, Kind: ItemUint},
		{Name: "ctrl.psds.psd.actp", Off: 20, Len: 2, Kind: ItemUint},
		{Name: "ctrl.psds.psd.apw", Off: 22, Len: 1, Kind: ItemUint, Mask: 0x7},
		{Name: "ctrl.psds.psd.rsvd8", Off: 22, Len: 1, Kind: ItemUint, Mask: 0x38},
		{Name: "ctrl.psds.psd.aps", Off: 22, Len: 1, Kind: ItemUint, Mask: 0xc0},
		{Name: "ctrl.psds.psd.rsvd9", Off: 23, Len: 9, Kind: ItemBytes},
	}
	// IdentifyControllerVSItems: Identify Controller's vendor specific
	// octets 3072-4095.
	IdentifyControllerVSItems = []Item{
		{Name: "ctrl.vs", Off: 3072, Len: 1024, Kind: ItemBytes},
	}
	// IdentifyNamespaceItems: Identify Namespace data structure (CNS 00h;
	// NVM Command Set 1.0 4.1.5.1 "NVM Command Set Identify Namespace Data
	// Structure"), octets 0-383 but the LBA formats (IdentifyNamespaceLBAFOff).
	IdentifyNamespaceItems = []Item{
		{Name: "ns.nsze", Off: 0, Len: 8, Kind: ItemUint},
		{Name: "ns.ncap", Off: 8, Len: 8, Kind: ItemUint},
		{Name: "ns.nuse", Off: 16, Len: 8, Kind: ItemUint},
		{Name: "ns.nsfeat", Off: 24, Len: 1, Kind: ItemUint},
		{Name: "ns.nlbaf", Off: 25, Len: 1, Kind: ItemUint},
		{Name: "ns.flbas", Off: 26, Len: 1, Kind: ItemUint},
		{Name: "ns.mc", Off: 27, Len: 1, Kind: ItemUint},
		{Name: "ns.dpc", Off: 28, Len: 1, Kind: ItemUint},
		{Name: "ns.dps", Off: 29, Len: 1, Kind: ItemUint},
		{Name: "ns.nmic", Off: 30, Len: 1, Kind: ItemUint},
		{Name: "ns.nguid", Off: 104, Len: 16, Kind: ItemBytes},
		{Name: "ns.eui64", Off: 120, Len: 8, Kind: ItemBytes},
		{Name: "ns.rsvd", Off: 192, Len: 192, Kind: ItemBytes},
	}
	// SMARTLogItems: SMART / Health Information log page (LID 02h; Base 2.0
	// 5.16.1.3).
	SMARTLogItems = []Item{
		{Name: "smart.cw", Off: 0, Len: 1, Kind: ItemUint},
		{Name: "smart.cw.sc", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "smart.cw.temp", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "smart.cw.sme", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "smart.cw.ro", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x8},
		{Name: "smart.cw.bdf", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x10},
		{Name: "smart.cw.mrro", Off: 0, Len: 1, Kind: ItemUint, Mask: 0x20},
		{Name: "smart.cw.rsvd", Off: 0, Len: 1, Kind: ItemUint, Mask: 0xe0},
		{Name: "smart.ct", Off: 1, Len: 2, Kind: ItemUint},
		{Name: "smart.asc", Off: 3, Len: 1, Kind: ItemUint},
		{Name: "smart.ast", Off: 4, Len: 1, Kind: ItemUint},
		{Name: "smart.lae", Off: 5, Len: 1, Kind: ItemUint},
		{Name: "smart.egcws", Off: 6, Len: 1, Kind: ItemUint},
		{Name: "smart.egcws.sc", Off: 6, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "smart.egcws.rsvd0", Off: 6, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "smart.egcws.me", Off: 6, Len: 1, Kind: ItemUint, Mask: 0x4},
		{Name: "smart.egcws.ro", Off: 6, Len: 1, Kind: ItemUint, Mask: 0x8},
		{Name: "smart.egcws.rsvd1", Off: 6, Len: 1, Kind: ItemUint, Mask: 0xf0},
		{Name: "smart.rsvd0", Off: 7, Len: 25, Kind: ItemBytes},
		{Name: "smart.dur", Off: 32, Len: 16, Kind: ItemBytes},
		{Name: "smart.duw", Off: 48, Len: 16, Kind: ItemBytes},
		{Name: "smart.hrc", Off: 64, Len: 16, Kind: ItemBytes},
		{Name: "smart.hwc", Off: 80, Len: 16, Kind: ItemBytes},
		{Name: "smart.cbt", Off: 96, Len: 16, Kind: ItemBytes},
		{Name: "smart.pc", Off: 112, Len: 16, Kind: ItemBytes},
		{Name: "smart.poh", Off: 128, Len: 16, Kind: ItemBytes},
		{Name: "smart.us", Off: 144, Len: 16, Kind: ItemBytes},
		{Name: "smart.mie", Off: 160, Len: 16, Kind: ItemBytes},
		{Name: "smart.ele", Off: 176, Len: 16, Kind: ItemBytes},
		{Name: "smart.wctt", Off: 192, Len: 4, Kind: ItemUint},
		{Name: "smart.cctt", Off: 196, Len: 4, Kind: ItemUint},
		{Name: "smart.ts", Off: 200, Len: 16, Kind: ItemBytes},
		{Name: "smart.ts.s1", Off: 200, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s2", Off: 202, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s3", Off: 204, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s4", Off: 206, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s5", Off: 208, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s6", Off: 210, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s7", Off: 212, Len: 2, Kind: ItemUint},
		{Name: "smart.ts.s8", Off: 214, Len: 2, Kind: ItemUint},
		{Name: "smart.tmt1c", Off: 216, Len: 4, Kind: ItemUint},
		{Name: "smart.tmt2c", Off: 220, Len: 4, Kind: ItemUint},
		{Name: "smart.tmt1t", Off: 224, Len: 4, Kind: ItemUint},
		{Name: "smart.tmt2t", Off: 228, Len: 4, Kind: ItemUint},
		{Name: "smart.rsvd1", Off: 232, Len: 280, Kind: ItemBytes},
	}
	// ErrorInformationLogItems: one Error Information log entry (LID 01h;
	// Base 2.0 5.16.1.2), 64 octets.
	ErrorInformationLogItems = []Item{
		{Name: "errinf.errcnt", Off: 0, Len: 8, Kind: ItemUint},
		{Name: "errinf.sqid", Off: 8, Len: 2, Kind: ItemUint},
		{Name: "errinf.cid", Off: 10, Len: 2, Kind: ItemUint},
		{Name: "errinf.sf", Off: 12, Len: 2, Kind: ItemUint},
		{Name: "errinf.sf.val", Off: 12, Len: 2, Kind: ItemUint, Mask: 0x7fff},
		{Name: "errinf.sf.ptag", Off: 12, Len: 2, Kind: ItemUint, Mask: 0x8000},
		{Name: "errinf.pel", Off: 14, Len: 2, Kind: ItemUint},
		{Name: "errinf.pel.bytee", Off: 14, Len: 2, Kind: ItemUint, Mask: 0xff},
		{Name: "errinf.pel.bite", Off: 14, Len: 2, Kind: ItemUint, Mask: 0x7ff},
		{Name: "errinf.pel.rsvd", Off: 14, Len: 2, Kind: ItemUint, Mask: 0xf8ff},
		{Name: "errinf.lba", Off: 16, Len: 8, Kind: ItemUint},
		{Name: "errinf.nsid", Off: 24, Len: 4, Kind: ItemUint},
		{Name: "errinf.vsi", Off: 28, Len: 1, Kind: ItemUint},
		{Name: "errinf.trype", Off: 29, Len: 1, Kind: ItemUint},
		{Name: "errinf.rsvd0", Off: 30, Len: 2, Kind: ItemUint},
		{Name: "errinf.csi", Off: 32, Len: 8, Kind: ItemUint},
		{Name: "errinf.tsi", Off: 40, Len: 2, Kind: ItemUint},
		{Name: "errinf.rsvd1", Off: 42, Len: 22, Kind: ItemBytes},
	}
	// DiscoveryLogItems: the Discovery log page header (LID 70h; Base 2.0
	// 5.16.1.23 "Discovery Log Page"), octets 0-1023.
	DiscoveryLogItems = []Item{
		{Name: "identify.genctr", Off: 0, Len: 8, Kind: ItemUint},
		{Name: "identify.numrec", Off: 8, Len: 8, Kind: ItemUint},
		{Name: "identify.recfmt", Off: 16, Len: 2, Kind: ItemUint},
		{Name: "identify.rsvd", Off: 18, Len: 1006, Kind: ItemBytes},
	}
	// DiscoveryLogEntryItems: one Discovery Log Page Entry, 1024 octets
	// from octet 1024 on.
	DiscoveryLogEntryItems = []Item{
		{Name: "identify.rcrd.trtype", Off: 0, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.adrfam", Off: 1, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.subtype", Off: 2, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.treq", Off: 3, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.treq.secch", Off: 3, Len: 1, Kind: ItemUint, Mask: 0x1},
		{Name: "identify.rcrd.treq.sqfc", Off: 3, Len: 1, Kind: ItemUint, Mask: 0x2},
		{Name: "identify.rcrd.treq.rsvd", Off: 3, Len: 1, Kind: ItemUint, Mask: 0xf8},
		{Name: "identify.rcrd.portid", Off: 4, Len: 2, Kind: ItemUint},
		{Name: "identify.rcrd.cntlid", Off: 6, Len: 2, Kind: ItemUint},
		{Name: "identify.rcrd.asqsz", Off: 8, Len: 2, Kind: ItemUint},
		{Name: "identify.rcrd.rsvd0", Off: 10, Len: 22, Kind: ItemBytes},
		{Name: "identify.rcrd.trsvcid", Off: 32, Len: 32, Kind: ItemString},
		{Name: "identify.rcrd.rsvd1", Off: 64, Len: 192, Kind: ItemBytes},
		{Name: "identify.rcrd.subnqn", Off: 256, Len: 256, Kind: ItemString},
		{Name: "identify.rcrd.traddr", Off: 512, Len: 256, Kind: ItemString},
		{Name: "identify.rcrd.tsas", Off: 768, Len: 256, Kind: ItemBytes},
	}
	// DiscoveryLogEntryRDMAItems: the entry's TSAS for TRTYPE 1, RDMA (NVMe
	// RDMA Transport 1.0 "Transport Specific Address Subtype").
	DiscoveryLogEntryRDMAItems = []Item{
		{Name: "identify.rcrd.tsas.rdma_qptype", Off: 768, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.tsas.rdma_prtype", Off: 769, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.tsas.rdma_cms", Off: 770, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.tsas.rdma_rsvd0", Off: 771, Len: 5, Kind: ItemBytes},
		{Name: "identify.rcrd.tsas.rdma_pkey", Off: 776, Len: 2, Kind: ItemUint},
		{Name: "identify.rcrd.tsas.rdma_rsvd1", Off: 778, Len: 246, Kind: ItemBytes},
	}
	// DiscoveryLogEntryTCPItems: the entry's TSAS for TRTYPE 3, TCP (NVMe TCP
	// Transport 1.0).
	DiscoveryLogEntryTCPItems = []Item{
		{Name: "identify.rcrd.tsas.tcp_sectype", Off: 768, Len: 1, Kind: ItemUint},
		{Name: "identify.rcrd.tsas.tcp_rsvd", Off: 769, Len: 255, Kind: ItemBytes},
	}
	// ANALogItems: the Asymmetric Namespace Access log page header (LID 0Ch;
	// Base 2.0 5.16.1.13), octets 0-15.
	ANALogItems = []Item{
		{Name: "ana.chcnt", Off: 0, Len: 8, Kind: ItemUint},
		{Name: "ana.ngd", Off: 8, Len: 2, Kind: ItemUint},
		{Name: "ana.rsvd", Off: 10, Len: 6, Kind: ItemUint},
	}
	// ANAGroupDescriptorItems: one ANA Group Descriptor, 32 octets and then
	// NNS namespace IDs of 4 octets.
	ANAGroupDescriptorItems = []Item{
		{Name: "ana.grp.id", Off: 0, Len: 4, Kind: ItemUint},
		{Name: "ana.grp.nns", Off: 4, Len: 4, Kind: ItemUint},
		{Name: "ana.grp.chcnt", Off: 8, Len: 8, Kind: ItemUint},
		{Name: "ana.grp.anas", Off: 16, Len: 1, Kind: ItemUint, Mask: 0xf},
		{Name: "ana.grp.anas.state", Off: 16, Len: 1, Kind: ItemUint, Mask: 0xf},
		{Name: "ana.grp.anas.rsvd", Off: 16, Len: 1, Kind: ItemUint, Mask: 0xf0},
		{Name: "ana.grp.rsvd", Off: 17, Len: 15, Kind: ItemBytes},
	}
	// CommandEffectsItems: one Commands Supported and Effects data structure
	// (LID 05h; Base 2.0 5.16.1.6), 4 octets: ACS0-255, then IOCS0-255.
	CommandEffectsItems = []Item{
		{Name: "cmd_and_eff.cseds", Off: 0, Len: 4, Kind: ItemUint},
		{Name: "cmd_and_eff.cseds.csupp", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x1},
		{Name: "cmd_and_eff.cseds.lbcc", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x2},
		{Name: "cmd_and_eff.cseds.ncc", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x4},
		{Name: "cmd_and_eff.cseds.nic", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x8},
		{Name: "cmd_and_eff.cseds.ccc", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x10},
		{Name: "cmd_and_eff.cseds.rsvd0", Off: 0, Len: 4, Kind: ItemUint, Mask: 0xffe0},
		{Name: "cmd_and_eff.cseds.cse", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x70000},
		{Name: "cmd_and_eff.cseds.uss", Off: 0, Len: 4, Kind: ItemUint, Mask: 0x80000},
		{Name: "cmd_and_eff.cseds.rsvd1", Off: 0, Len: 4, Kind: ItemUint, Mask: 0xfff00000},
	}
)

// AllLayouts are the layouts above, for tests and tools that walk them.
var AllLayouts = [][]Item{
	IdentifyControllerItems, PowerStateDescriptorItems, IdentifyControllerVSItems, IdentifyNamespaceItems,
	SMARTLogItems, ErrorInformationLogItems, DiscoveryLogItems, DiscoveryLogEntryItems,
	DiscoveryLogEntryRDMAItems, DiscoveryLogEntryTCPItems, ANALogItems, ANAGroupDescriptorItems, CommandEffectsItems,
}
