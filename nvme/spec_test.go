package nvme

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// Tests of what the captures do not hold, on octets laid out by hand from
// the specifications' figures (offsets in the comments); the expected values
// are the ones written into those octets.

func TestCMReject(t *testing.T) {
	// RDMA_CM_REJECT private data: RECFMT (0-1), STS (2-3), little-endian.
	var r CMReject
	if err := r.DecodeFromBytes([]byte{0x00, 0x00, 0x06, 0x00}); err != nil {
		t.Fatal(err)
	}
	if r.RECFMT != 0 || r.STS != CMRejectNoResources || r.STS.String() != "No Resources" {
		t.Errorf("%+v %s", r, r.STS)
	}
	// Linux nvme_rdma_cm_status values 1..9 all have names; 0 and 10 are reserved.
	for v := CMRejectStatus(1); v <= 9; v++ {
		if strings.HasPrefix(v.String(), "Reserved") {
			t.Errorf("status %d unnamed", v)
		}
	}
	if CMRejectStatus(10).String() != "Reserved (0xa)" || CMRejectStatus(0).String() != "Reserved (0x0)" {
		t.Errorf("%s %s", CMRejectStatus(10), CMRejectStatus(0))
	}
	if err := r.DecodeFromBytes([]byte{0, 0, 6}); !errors.Is(err, ErrTruncated) {
		t.Errorf("3 octets: %v", err)
	}
}

func TestCMRequestShort(t *testing.T) {
	var r CMRequest
	if err := r.DecodeFromBytes(make([]byte, 31)); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "fewer than 32 octets") {
		t.Errorf("%v", err)
	}
	var rep CMReply
	// A short reply (RECFMT 0, CRQSIZE 128, 4 reserved octets) decodes;
	// the reserved octets are what was given.
	if err := rep.DecodeFromBytes([]byte{0, 0, 0x80, 0, 0, 0, 0, 0}); err != nil || rep.CRQSIZE != 128 || len(rep.Reserved) != 4 {
		t.Errorf("%+v %v", rep, err)
	}
}

// TestProbeRejectsRPCOverRDMA: the NVMe/RDMA probe must not take the RFC
// 8797 private data of a real NFS/RDMA connection (rxe-nfs3.pcap), nor the
// REP's, for NVMe/RDMA.
func TestProbeRejectsRPCOverRDMA(t *testing.T) {
	_, frames := pcaptest.Read(t, filepath.Join("..", "testdata", "pcaps", "rxe-nfs3.pcap"))
	n := 0
	for _, f := range frames {
		b := f.Data
		// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8 = MAD at 62.
		if len(b) < 62+madLen || b[42] != opUDSendOnly || b[62+1] != cmMgmtClass {
			continue
		}
		mad := b[62 : 62+madLen]
		switch binary.BigEndian.Uint16(mad[16:18]) {
		case cmAttrREQ:
			pd := mad[madHeaderLen+140 : madHeaderLen+232][rdmaCMHeaderLen:]
			n++
			if LooksLikeCMRequest(pd) {
				t.Errorf("frame %d: RPC-over-RDMA REQ private data % x taken for NVMe/RDMA", f.Num, pd[:16])
			}
		case cmAttrREP:
			pd := mad[madHeaderLen+36 : madHeaderLen+232]
			n++
			if LooksLikeCMReply(pd) {
				t.Errorf("frame %d: RPC-over-RDMA REP private data % x taken for NVMe/RDMA", f.Num, pd[:16])
			}
		}
	}
	if n < 2 {
		t.Fatalf("%d CM REQ/REP in rxe-nfs3.pcap", n)
	}
	// And zeros are no NVMe/RDMA request: HSQSIZE 0 is no queue.
	if LooksLikeCMRequest(make([]byte, 32)) {
		t.Error("32 zero octets pass")
	}
}

// sqe builds a 64-octet SQE: OPC, CID and CDW10-15 at their offsets
// (Base 2.0 "Common Command Format": CDW10 at octet 40).
func sqe(opc uint8, cid uint16, cdw ...uint32) []byte {
	b := make([]byte, SQELen)
	b[0] = opc
	b[1] = 0x40 // PSDT 01b
	binary.LittleEndian.PutUint16(b[2:], cid)
	for i, v := range cdw {
		binary.LittleEndian.PutUint32(b[40+4*i:], v)
	}
	return b
}

func TestAdminCommandFields(t *testing.T) {
	var c Command
	// Abort: CDW10 SQID 15:0 = 1, CID 31:16 = 0x1234.
	if err := c.DecodeFromBytes(sqe(byte(AdminAbort), 7, 0x1234_0001)); err != nil {
		t.Fatal(err)
	}
	if a := c.Abort(); a.SQID != 1 || a.CID != 0x1234 || c.Name(true) != "Abort" || c.PSDT != PSDTSGL {
		t.Errorf("%+v %s %s", a, c.Name(true), c.PSDT)
	}
	// Set Features Keep Alive Timer (FID 0Fh), SV set, KATO 5000 ms.
	_ = c.DecodeFromBytes(sqe(byte(AdminSetFeatures), 1, 1<<31|0x0f, 5000))
	if f := c.Features(); f.FID != FeatureKeepAliveTimer || !f.SV || f.KATO() != 5000 || f.FID.String() != "Keep Alive Timer" {
		t.Errorf("%+v %s", f, f.FID)
	}
	// Get Features Number of Queues, SEL 3 (supported capabilities).
	_ = c.DecodeFromBytes(sqe(byte(AdminGetFeatures), 1, 3<<8|0x07))
	if f := c.Features(); f.FID != FeatureNumberOfQueues || f.SEL != 3 || f.SV {
		t.Errorf("%+v", f)
	}
	// Get Log Page Discovery: LID 70h, RAE, NUMDL 0x0ff, NUMDU 1 -> NUMD
	// 0x100ff; LPO 0x1_00000400 in CDW12/13; CSI 0 in CDW14.
	_ = c.DecodeFromBytes(sqe(byte(AdminGetLogPage), 1, 0x00ff_8070, 0x0000_0001, 0x400, 1))
	g := c.GetLogPage()
	if g.LID != LogDiscovery || !g.RAE || g.NUMD != 0x100ff || g.Length() != (0x100ff+1)*4 || g.LPO != 0x1_00000400 || g.LID.String() != "Discovery" {
		t.Errorf("%+v %s", g, g.LID)
	}
	// Identify CNS 01h with CNTID 0x0005.
	_ = c.DecodeFromBytes(sqe(byte(AdminIdentify), 1, 0x0005_0001))
	if id := c.Identify(); id.CNS != CNSController || id.CNTID != 5 || id.CNS.String() != "Identify Controller" {
		t.Errorf("%+v", id)
	}
	// Asynchronous Event Request completion DW0: AET 2 (Notice), AEI 0,
	// LID 04h (Changed Namespace List).
	var r Completion
	cq := make([]byte, CQELen)
	binary.LittleEndian.PutUint32(cq, 0x0004_0002)
	_ = r.DecodeFromBytes(cq)
	if ev := r.AsyncEvent(); ev.AET != AsyncEventNotice || ev.LID != LogChangedNamespaceList {
		t.Errorf("%+v", ev)
	}
}

func TestIOCommandFields(t *testing.T) {
	var c Command
	// Write Zeroes: SLBA 0x1_0000_0010, NLB 7 (8 blocks), DEAC (25), FUA (30).
	_ = c.DecodeFromBytes(sqe(byte(IOWriteZeroes), 3, 0x10, 1, 1<<30|1<<25|7))
	rw := c.RW()
	if rw.SLBA != 0x1_0000_0010 || rw.NLB != 7 || rw.Blocks() != 8 || !rw.DEAC || !rw.FUA || rw.LR || c.Name(false) != "Write Zeroes" {
		t.Errorf("%+v %s", rw, c.Name(false))
	}
	// Dataset Management: NR 1 (2 ranges), AD; the ranges in the data.
	_ = c.DecodeFromBytes(sqe(byte(IODatasetManagement), 4, 1, 4))
	if d := c.DSM(); d.Ranges() != 2 || !d.AD || d.IDR || d.IDW {
		t.Errorf("%+v", d)
	}
	rng := make([]byte, DSMRangeLen)
	binary.LittleEndian.PutUint32(rng[4:], 256)
	binary.LittleEndian.PutUint64(rng[8:], 4096)
	var r DSMRange
	if err := r.DecodeFromBytes(rng); err != nil || r.LengthLBAs != 256 || r.SLBA != 4096 {
		t.Errorf("%+v %v", r, err)
	}
	for op, name := range map[IOOpcode]string{IOFlush: "Flush", IOCompare: "Compare", IORead: "Read", 0x7f: "Fabrics Command", 0x81: "Vendor Specific (0x81)", 0x03: "Unknown I/O opcode (0x03)"} {
		if op.String() != name {
			t.Errorf("%#x: %s, want %s", uint8(op), op, name)
		}
	}
	if TransferOf(byte(IOWrite)) != TransferHostToCtrl || TransferOf(byte(IORead)) != TransferCtrlToHost || TransferOf(byte(IOFlush)) != TransferNone {
		t.Error("data transfer bits")
	}
}

func TestFabricsCommandFields(t *testing.T) {
	var c Command
	// Property Set CC (offset 14h), 4 octets, value 0x00460001: ATTRIB at
	// 40, OFST at 44, VALUE at 48 (Base 2.0 "Property Set Command").
	b := sqe(OpcodeFabrics, 9)
	b[4] = byte(FabricsPropertySet)
	b[40] = 0
	binary.LittleEndian.PutUint32(b[44:], 0x14)
	binary.LittleEndian.PutUint64(b[48:], 0xdead_0000_0046_0001)
	_ = c.DecodeFromBytes(b)
	p := c.Property()
	if p.OFST != PropertyCC || p.Size() != 4 || p.VALUE != 0x0046_0001 || p.OFST.String() != "CC" || c.Name(true) != "Property Set" {
		t.Errorf("%+v %s %s", p, p.OFST, c.Name(true))
	}
	if CC(p.VALUE).EN() != true || CC(p.VALUE).IOSQES() != 6 || CC(p.VALUE).IOCQES() != 4 {
		t.Errorf("CC %#x", p.VALUE)
	}
	// Authentication Send: SPSP0 41, SPSP1 42, SECP 43 (E9h), TL 44-47.
	b = sqe(OpcodeFabrics, 10)
	b[4] = byte(FabricsAuthSend)
	b[41], b[42], b[43] = 0x01, 0x02, 0xe9
	binary.LittleEndian.PutUint32(b[44:], 1024)
	_ = c.DecodeFromBytes(b)
	if a := c.Auth(); a.SPSP0 != 1 || a.SPSP1 != 2 || a.SECP != 0xe9 || a.Length != 1024 || c.FCTYPE.String() != "Authentication Send" {
		t.Errorf("%+v %s", a, c.FCTYPE)
	}
	if FabricsType(0x06).String() != "Authentication Receive" || FabricsType(0x08).String() != "Disconnect" || FabricsType(0x02).String() != "Reserved (0x02)" {
		t.Error("FCTYPE names")
	}
	// CAP: MQES 127 (0-15), TO 15 (24-31), CSS bit 37 (NVM command set).
	cap := CAP(0x0000_0020_0f00_007f)
	if cap.MQES() != 127 || cap.TO() != 15 || cap.CSS() != 1 {
		t.Errorf("CAP %+v", cap)
	}
	if VS(0x0001_0300).String() != "1.3.0" {
		t.Error(VS(0x0001_0300).String())
	}
}

func TestStatusNames(t *testing.T) {
	// Status field: P bit 0, SC 8:1, SCT 11:9, CRD 13:12, M 14, DNR 15.
	s := Status(1<<15 | 1<<9 | 0x82<<1) // DNR, SCT 1, SC 82h
	if s.SCT() != SCTCommandSpecific || s.SC() != 0x82 || !s.DNR() || s.M() || s.P() || s.Success() || s.Code() != 0x182 {
		t.Errorf("%#x: %v %#x", uint16(s), s.SCT(), s.SC())
	}
	if got := s.Describe(OpcodeFabrics, true, FabricsConnect); got != "Connect Invalid Parameters" {
		t.Error(got)
	}
	if got := s.Describe(byte(IOWrite), false, 0); got != "Attempted Write to Read Only Range" {
		t.Error(got)
	}
	if got := Status(1<<9|0x90<<1).Describe(byte(AdminGetLogPage), true, 0); got != "Discovery Restart" {
		t.Error(got)
	}
	if got := Status(1<<9|0x02<<1).Describe(byte(AdminCreateIOSQ), true, 0); got != "Invalid Queue Size" {
		t.Error(got)
	}
	if got := Status(0x19 << 1).String(); got != "Keep Alive Timer Expired" {
		t.Error(got)
	}
	if got := Status(2<<9 | 0x81<<1).String(); got != "Unrecovered Read Error" {
		t.Error(got)
	}
	if got := Status(3<<9 | 0x02<<1 | 1<<12 | 1<<14).String(); got != "Asymmetric Access Inaccessible" || Status(3<<9|1<<12|1<<14).CRD() != 1 || !Status(1<<14).M() {
		t.Error(got)
	}
	if got := Status(1<<9 | 0x05<<1).String(); got != "Command Specific Status 0x05" {
		t.Error(got)
	}
	if got := Status(5<<9 | 1<<1).String(); got != "Reserved SCT 5 0x01" {
		t.Error(got)
	}
}

func TestSGLDescriptors(t *testing.T) {
	// Keyed SGL Data Block: Address 0-7, Length 8-10 (24 bits), Key 11-14,
	// type/subtype 15 (4h / Fh Invalidate Key).
	b := []byte{0, 0x10, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x01, 0x78, 0x56, 0x34, 0x12, 0x4f}
	var d SGLDescriptor
	if err := d.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if !d.IsKeyed() || !d.InvalidateKey() || d.Address != 0x1000 || d.Length != 0x10000 || d.Key != 0x12345678 || d.Subtype.String() != "Invalidate Key" {
		t.Errorf("%+v", d)
	}
	// A command whose SGL1 is a Last Segment, subtype Offset, pointing at
	// two descriptors in the capsule (32 octets at offset 0): a keyed
	// block and a data block with subtype Offset after them.
	cmd := sqe(byte(IOWrite), 1)
	cmd[24+8] = 32                             // length 32
	cmd[24+15] = byte(SGLLastSegment)<<4 | 0x1 // Last Segment, Offset
	seg := make([]byte, 32+8)                  // two descriptors, then 8 data octets
	copy(seg, b)                               // keyed
	seg[16] = 32                               // data block at offset 32
	seg[16+8] = 8                              // 8 octets
	seg[16+15] = byte(SGLDataBlock)<<4 | 0x1   // Data Block, Offset
	var c Command
	if err := c.DecodeFromBytes(append(cmd, seg...)); err != nil {
		t.Fatal(err)
	}
	if !c.SGL1.IsSegment() || len(c.InCapsule) != 32 || c.SGL1.Type.String() != "Last Segment" {
		t.Fatalf("%+v", c.SGL1)
	}
	var types []string
	if !ForEachSGLDescriptor(c.InCapsule, func(i int, d *SGLDescriptor) bool { types = append(types, d.Type.String()); return true }) {
		t.Error("partial descriptor reported")
	}
	if strings.Join(types, ",") != "Keyed Data Block,Data Block" {
		t.Error(types)
	}
	// In-capsule data that does not fit: offset 0, length 9 with 8 octets.
	cmd = sqe(byte(IOWrite), 1)
	cmd[24+8] = 9
	cmd[24+15] = byte(SGLDataBlock)<<4 | 0x1
	if err := c.DecodeFromBytes(append(cmd, make([]byte, 8)...)); err != ErrInCapsuleData || c.InCapsule != nil || c.CID != 1 {
		t.Errorf("%v %d", err, len(c.InCapsule))
	}
	// With ICDOFF 1 (16 octets), offset 0 length 8 lies at 16..23.
	cmd[24+8] = 8
	_ = c.DecodeFromBytes(append(cmd, make([]byte, 24)...))
	if d, err := c.InCapsuleAt(1); err != nil || len(d) != 8 || &d[0] != &c.Data[16] {
		t.Errorf("ICDOFF 1: %v", err)
	}
	if SGLType(0x6).String() != "Reserved (0x6)" || SGLSubtype(0xa).String() != "Transport Specific (0xa)" {
		t.Error(SGLType(6), SGLSubtype(0xa))
	}
}

func TestDiscoveryLogPage(t *testing.T) {
	// Header: GENCTR 0-7, NUMREC 8-15, RECFMT 16-17; entry 0 at 1024:
	// TRTYPE 0 (1 RDMA), ADRFAM 1 (1 IPv4), SUBTYPE 2 (2 NVM), TREQ 3,
	// PORTID 4-5, CNTLID 6-7, ASQSZ 8-9, TRSVCID 32-63, SUBNQN 256-511,
	// TRADDR 512-767, TSAS 768-1023 (RDMA: QPTYPE 0, PRTYPE 1, CMS 2, PKEY 8-9).
	page := make([]byte, 2048)
	binary.LittleEndian.PutUint64(page[0:], 7)
	binary.LittleEndian.PutUint64(page[8:], 1)
	e := page[1024:]
	e[0], e[1], e[2], e[3] = 1, 1, 2, 0
	binary.LittleEndian.PutUint16(e[4:], 1)
	binary.LittleEndian.PutUint16(e[6:], 0xffff)
	binary.LittleEndian.PutUint16(e[8:], 32)
	copy(e[32:], "4420                            ")
	copy(e[256:], "nqn.2026-11.lab:nvme")
	copy(e[512:], "192.0.2.1")
	for i := 521; i < 768; i++ {
		e[i] = ' '
	}
	e[768], e[769], e[770] = 1, 4, 1
	binary.LittleEndian.PutUint16(e[776:], 0xffff)
	var h DiscoveryLogHeader
	if err := h.DecodeFromBytes(page); err != nil || h.GENCTR != 7 || h.NUMREC != 1 || h.RECFMT != 0 {
		t.Errorf("%+v %v", h, err)
	}
	var d DiscoveryLogEntry
	if err := DiscoveryEntry(page, 0, &d); err != nil {
		t.Fatal(err)
	}
	if d.TRTYPE != TransportRDMA || d.ADRFAM != AddressIPv4 || d.SUBTYPE != SubsystemNVM || d.PORTID != 1 || d.CNTLID != 0xffff || d.ASQSZ != 32 ||
		string(d.TRSVCID) != "4420" || string(d.SUBNQN) != "nqn.2026-11.lab:nvme" || string(d.TRADDR) != "192.0.2.1" ||
		d.RDMAQPTYPE != 1 || d.RDMAPRTYPE != 4 || d.RDMACMS != 1 || d.RDMAPKEY != 0xffff {
		t.Errorf("%+v", d)
	}
	if d.TRTYPE.String() != "RDMA" || d.ADRFAM.String() != "IPv4" || d.SUBTYPE.String() != "NVM subsystem" {
		t.Error(d.TRTYPE, d.ADRFAM, d.SUBTYPE)
	}
	if err := DiscoveryEntry(page, 1, &d); !errors.Is(err, ErrTruncated) {
		t.Errorf("entry 1 of a 1-entry page: %v", err)
	}
}

func TestIdentifyNamespaceFormats(t *testing.T) {
	// NLBAF 16 (17 formats, 0's based), FLBAS: bits 3:0 = 1, bits 6:5 = 1
	// -> format 17; LBAF17 at 128+4*17: LBADS 12, MS 8.
	b := make([]byte, 4096)
	binary.LittleEndian.PutUint64(b[0:], 1<<20)
	b[25] = 16
	b[26] = 1<<5 | 1
	binary.LittleEndian.PutUint32(b[128+4*17:], 12<<16|8)
	var ns IdentifyNamespace
	if err := ns.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if ns.FormatIndex() != 17 || ns.Format().BlockSize() != 4096 || ns.Format().MS() != 8 || ns.NSZE != 1<<20 {
		t.Errorf("index %d, %+v", ns.FormatIndex(), ns.Format())
	}
	// With at most 16 formats bits 6:5 do not count.
	b[25] = 15
	_ = ns.DecodeFromBytes(b)
	if ns.FormatIndex() != 1 {
		t.Errorf("index %d", ns.FormatIndex())
	}
	if err := ns.DecodeFromBytes(b[:191]); !errors.Is(err, ErrTruncated) {
		t.Error(err)
	}
}

func TestClassify(t *testing.T) {
	for n, want := range map[int]CommandKind{0: KindUnknown, 15: KindUnknown, 16: KindCompletion, 17: KindUnknown, 63: KindUnknown, 64: KindCommand, 1088: KindCommand} {
		if got := Classify(make([]byte, n)); got != want {
			t.Errorf("%d octets: %s, want %s", n, got, want)
		}
	}
}

func TestOpcodeNames(t *testing.T) {
	for op, name := range map[AdminOpcode]string{AdminKeepAlive: "Keep Alive", AdminAsyncEventRequest: "Asynchronous Event Request",
		AdminGetLogPage: "Get Log Page", AdminFabrics: "Fabrics Command", 0xc1: "Vendor Specific (0xc1)", 0x03: "Unknown admin opcode (0x03)"} {
		if op.String() != name {
			t.Errorf("%#x: %s", uint8(op), op)
		}
	}
	if CommandName(OpcodeFabrics, false, FabricsConnect) != "Connect" || CommandName(2, true, 0) != "Get Log Page" || CommandName(2, false, 0) != "Read" {
		t.Error("CommandName")
	}
}
