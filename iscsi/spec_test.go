package iscsi

import (
	"errors"
	"testing"
)

// Layouts from the specifications (RFC 7145 section 4.2 and 9.3, RFC 7143
// section 11), built octet by octet.

func TestISERHeaderLayout(t *testing.T) {
	b := []byte{0x1c, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8,
		0xaa, 0xbb, 0xcc, 0xdd, 9, 10, 11, 12, 13, 14, 15, 16}
	var h ISERHeader
	if err := h.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if h.Opcode != ISERControl || !h.WSV() || !h.RSV() || h.WriteSTag != 0x11223344 || h.WriteBaseOffset != 0x0102030405060708 ||
		h.ReadSTag != 0xaabbccdd || h.ReadBaseOffset != 0x090a0b0c0d0e0f10 {
		t.Errorf("%+v", h)
	}
	b[0] = 0x11 // a reserved flag bit
	if err := h.DecodeFromBytes(b); err == nil {
		t.Error("reserved bit accepted")
	}
	b[0] = 0x50
	if err := h.DecodeFromBytes(b); err == nil {
		t.Error("opcode 5 accepted")
	}
	if err := h.DecodeFromBytes(b[:27]); !errors.Is(err, ErrTruncated) {
		t.Errorf("27 octets: %v", err)
	}
}

func TestHello(t *testing.T) {
	var m Message
	if err := m.DecodeFromBytes([]byte{0x20, 0xaa, 0x00, 0x10}); err != nil || m.Hello.Opcode != ISERHello ||
		m.Hello.MaxVer != 10 || m.Hello.MinVer != 10 || m.Hello.IRDORD != 16 || m.Hello.Reject {
		t.Errorf("Hello: %v %+v", err, m.Hello)
	}
	if err := m.DecodeFromBytes([]byte{0x31, 0xaa, 0x00, 0x08, 0, 0, 0, 0}); err != nil || m.Hello.Opcode != ISERHelloReply ||
		!m.Hello.Reject || m.Hello.IRDORD != 8 {
		t.Errorf("HelloReply: %v %+v", err, m.Hello)
	}
	if m.ISER.Opcode.String() != "HelloReply Message" {
		t.Error(m.ISER.Opcode)
	}
}

func TestCMPrivateData(t *testing.T) {
	pd := make([]byte, 56)
	pd[0] = 0x80 // the capture's REQ: ZBVA not supported, SIE allowed
	var p CMPrivateData
	if err := p.DecodeFromBytes(pd); err != nil || !p.ZBVANotSupported() || !p.SendWithInvalidate() {
		t.Errorf("%v %+v", err, p)
	}
	pd[0] = 0xc0
	if p.DecodeFromBytes(pd); p.SendWithInvalidate() || !LooksLikeCMRequest(pd) {
		t.Error("0xc0")
	}
	pd[0] = 0
	if LooksLikeCMRequest(pd) {
		t.Error("all zeros taken for iSER")
	}
	pd[0], pd[5] = 0x80, 1
	if LooksLikeCMRequest(pd) {
		t.Error("non-zero octet after the flags taken for iSER")
	}
	// NVMe/RDMA's admin queue REQ: RECFMT 0, QID 0, HRQSIZE 32, HSQSIZE 31.
	if LooksLikeCMRequest([]byte{0, 0, 0, 0, 32, 0, 31, 0}) || LooksLikeCMRequest([]byte{0xf6, 0xab, 0x0e, 0x18}) {
		t.Error("NVMe/RDMA or RPC-over-RDMA private data taken for iSER")
	}
	if p.DecodeFromBytes(pd[:3]) == nil {
		t.Error("3 octets")
	}
}

// bhs builds a BHS: opcode, flags, DataSegmentLength, ITT; set sets more.
func bhs(op Opcode, flags uint8, dsl int, itt uint32) []byte {
	b := make([]byte, BHSLen)
	b[0], b[1] = byte(op), flags
	b[5], b[6], b[7] = byte(dsl>>16), byte(dsl>>8), byte(dsl)
	b[16], b[17], b[18], b[19] = byte(itt>>24), byte(itt>>16), byte(itt>>8), byte(itt)
	return b
}

func TestSCSICommand(t *testing.T) {
	b := bhs(OpSCSICommand, 0xa1, 8, 0x12345678)
	b[0] |= 0x40
	b[20], b[21], b[22], b[23] = 0, 1, 0, 0                                    // EDTL 65536
	copy(b[32:], []byte{0x8a, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0x80, 0, 0}) // WRITE(16) LBA 2^32+2, 128 blocks
	b = append(b, "12345678tail"...)
	var p PDU
	if err := p.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if p.Opcode != OpSCSICommand || !p.Immediate || !p.Final() || p.Read() || !p.Write() || p.Attr() != 1 ||
		p.ITT != 0x12345678 || p.ExpectedDataTransferLength() != 65536 || string(p.Data) != "12345678" {
		t.Errorf("%+v", p)
	}
	lba, n, ok := p.CDB().LBA()
	if !ok || lba != 1<<32+2 || n != 128 || p.CDB().Name() != "Write(16)" {
		t.Errorf("LBA %d %d %v %s", lba, n, ok, p.CDB().Name())
	}
	// DataSegmentLength past the PDU: the BHS decodes, the error says so.
	b[7] = 200
	if err := p.DecodeFromBytes(b); err != ErrDataSegment || p.ITT != 0x12345678 {
		t.Errorf("%v", err)
	}
	b[4] = 100
	if err := p.DecodeFromBytes(b); err != ErrAHS {
		t.Errorf("%v", err)
	}
	if err := p.DecodeFromBytes(b[:47]); !errors.Is(err, ErrTruncated) {
		t.Errorf("%v", err)
	}
}

func TestBidiAHS(t *testing.T) {
	b := bhs(OpSCSICommand, 0xe0, 0, 1)
	b[4] = 2                                                 // 8 octets of AHS
	b = append(b, 0, 5, AHSBidiReadLength, 0, 0, 0, 0x10, 0) // length 5, type 2, 4096
	var p PDU
	if err := p.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if n, ok := p.BidiReadDataLength(); !ok || n != 4096 {
		t.Errorf("%d %v", n, ok)
	}
}

func TestKeyValues(t *testing.T) {
	kv := KeyValues("HeaderDigest=None\x00MaxRecvDataSegmentLength=0x2000\x00\x00Odd\x00ImmediateData=Yes")
	var got []string
	for k, v, rest, ok := kv.Next(); ok; k, v, rest, ok = rest.Next() {
		got = append(got, string(k)+"|"+string(v))
	}
	want := []string{"HeaderDigest|None", "MaxRecvDataSegmentLength|0x2000", "Odd|", "ImmediateData|Yes"}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
	if v, ok := kv.Lookup(KeyMaxRecvDataSegmentLength); !ok || string(v) != "0x2000" {
		t.Error("Lookup")
	}
	if n, ok := ParseNumber([]byte("0x2000")); !ok || n != 8192 {
		t.Error("hex")
	}
	if n, ok := ParseNumber([]byte("262144")); !ok || n != 262144 {
		t.Error("dec")
	}
	for _, bad := range []string{"", "12a", "0x", "4294967296", "-1"} {
		if _, ok := ParseNumber([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if y, ok := ParseBool([]byte("Yes")); !y || !ok {
		t.Error("Yes")
	}
	if _, ok := ParseBool([]byte("yes")); ok {
		t.Error("yes is not a boolean value (RFC 7143 section 6.1)")
	}
	if kv.Pairs() != 4 {
		t.Error(kv.Pairs())
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, _, rest, ok := kv.Next(); ok; _, _, rest, ok = rest.Next() {
		}
	}); n != 0 {
		t.Errorf("%v allocations walking the text", n)
	}
}

func TestLoginLayout(t *testing.T) {
	b := bhs(OpLoginResp, 0x87, 0, 0)
	b[2], b[3] = 0, 0
	copy(b[8:], []byte{0, 2, 0x3d, 0, 0, 1, 0, 5}) // ISID, TSIH 5
	b[36], b[37] = 2, 1
	var p PDU
	if err := p.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	if !p.Transit() || p.Continue() || p.CSG() != StageOperational || p.NSG() != StageFullFeature || p.TSIH() != 5 ||
		p.ISID() != [6]byte{0, 2, 0x3d, 0, 0, 1} || p.LoginStatus().String() != "Authentication failed" || p.LoginStatus().Class() != 2 {
		t.Errorf("%+v %s", p, p.LoginStatus())
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OpSCSIResponse.String(), "SCSI Response"},
		{Opcode(0x3e).String(), "Unknown (0x3e)"},
		{CDBOpcode(0x28).String(), "Read(10)"},
		{CDBOpcode(0xff).String(), "Unknown (0xff)"},
		{StatusCheckCondition.String(), "Check Condition"},
		{ISEROpcode(1).String(), "iSCSI Control-Type PDU"},
		{LogoutReason(0), "Close session"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestDecodeAllocatesNothing: a PDU decodes into a reused value with no
// allocation, and a failed decode allocates nothing either.
func TestDecodeAllocatesNothing(t *testing.T) {
	ok := append(make([]byte, ISERHeaderLen), bhs(OpSCSICommand, 0x80, 0, 1)...)
	ok[0] = 0x10
	short := ok[:30]
	var m Message
	if n := testing.AllocsPerRun(100, func() {
		_ = m.DecodeFromBytes(ok)
		_ = m.DecodeFromBytes(short)
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
