package srp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// The real capture (testdata/pcaps/ulp/rxe-srp.pcap: Linux 6.1 ib_srp and
// ib_srpt over Soft-RoCE, RDMA/CM) read by hand — RoCEv2 packets through
// pcaptest, RC Sends put together from their packets — without the
// engine. tshark 4.0 has no SRP dissector: the expected values below were
// read off the octets against the layouts of Linux's include/scsi/srp.h
// (the transcription of SRP r16a and SRP-2 the kernel is built on), and
// against what the scenario did (the scan's INQUIRY of 36 octets, 4 KiB
// writes with immediate data, a 64 KiB write split in 48 and 16 KiB).

const capturePath = "../testdata/pcaps/ulp/rxe-srp.pcap"

var client = netip.MustParseAddr("192.0.2.2")

type send struct {
	frames     []int
	fromClient bool
	data       []byte
}

// capture returns the RC Sends by their last frame, and the private data
// of the CM REQ (its consumer part, after the 36-octet RDMA/CM header)
// and of the CM REP.
func capture(t testing.TB) (map[int]send, []byte, []byte) {
	t.Helper()
	_, frames := pcaptest.Read(t, capturePath)
	open := map[bool]*send{}
	out := map[int]send{}
	var req, rep []byte
	for _, f := range frames {
		r, ok := pcaptest.ParseRoCEv2(f.Data)
		if !ok {
			continue
		}
		p := r.AfterBTH()
		if r.DestQP == 1 && len(p) >= 8+256 {
			// A CM MAD after the DETH: REQ (0x0010) private data is its
			// last 92 octets, REP's (0x0013) its last 196.
			mad := p[8 : 8+256]
			switch uint16(mad[16])<<8 | uint16(mad[17]) {
			case 0x0010:
				req = append([]byte(nil), mad[256-92+36:]...)
			case 0x0013:
				rep = append([]byte(nil), mad[256-196:]...)
			}
			continue
		}
		if !r.RC() {
			continue
		}
		k := r.Src == client
		switch r.OpCode {
		case 0x00: // SEND FIRST
			open[k] = &send{frames: []int{f.Num}, fromClient: k, data: append([]byte(nil), p...)}
		case 0x01, 0x02: // SEND MIDDLE, LAST
			s := open[k]
			if s == nil {
				t.Fatalf("frame %d: a Send continues none", f.Num)
			}
			s.frames = append(s.frames, f.Num)
			s.data = append(s.data, p...)
			if r.OpCode == 0x02 {
				out[f.Num] = *s
				delete(open, k)
			}
		case 0x04: // SEND ONLY
			out[f.Num] = send{frames: []int{f.Num}, fromClient: k, data: append([]byte(nil), p...)}
		}
	}
	if req == nil || rep == nil {
		t.Fatal("no CM REQ or REP")
	}
	return out, req, rep
}

func TestLogin(t *testing.T) {
	_, req, rep := capture(t)
	var l LoginRequest
	if err := l.DecodeRDMACM(req); err != nil {
		t.Fatal(err)
	}
	// ib_srp: tag 0, direct and indirect, IMMEDIATE DATA REQUESTED,
	// REQUESTED MAXIMUM IU 8260 (ib_srpt's srp_max_req_size in the
	// scenario), the initiator port ID initiator_ext (the GID's prefix
	// here) + the port's interface ID, the target's id_ext + ioc_guid,
	// immediate data at 68 (48 + 16 additional CDB + 4).
	ipi, _ := hex.DecodeString("fe80000000000000505400fffe000202")
	tpi, _ := hex.DecodeString("505400fffe000201505400fffe000201")
	if l.Opcode != OpLoginReq || l.Tag != 0 || l.RequiredBufferFormats != BufferDirect|BufferIndirect || l.Flags != ImmediateRequested ||
		l.RequestedMaxITIULength != 8260 || l.ImmediateDataOffset != 68 || !bytes.Equal(l.InitiatorPortID[:], ipi) ||
		!bytes.Equal(l.TargetPortID[:], tpi) || !l.Plausible() {
		t.Errorf("login request %+v", l)
	}
	if l.RequiredBufferFormats.String() != "direct, indirect" || l.Flags.String() != "single channel, immediate data requested" {
		t.Errorf("%s; %s", l.RequiredBufferFormats, l.Flags)
	}
	var r LoginResponse
	if err := r.DecodeFromBytes(rep); err != nil {
		t.Fatal(err)
	}
	// ib_srpt grants 128 credits, 8260-octet IUs both ways, direct and
	// indirect, IMMEDIATE DATA SUPPORTED.
	if r != (LoginResponse{Opcode: OpLoginRsp, RequestLimitDelta: 128, MaxITIULength: 8260, MaxTIIULength: 8260,
		SupportedBufferFormats: BufferDirect | BufferIndirect, Flags: ImmediateSupported}) {
		t.Errorf("login response %+v", r)
	}
	// The IU layout of the same values (the InfiniBand CM's): moved
	// octet by octet as SRP places them.
	iu := make([]byte, LoginRequestLen)
	copy(iu[8:16], req[0:8])
	copy(iu[16:20], req[12:16])
	copy(iu[24:26], req[8:10])
	iu[26] = req[10]
	copy(iu[28:30], req[48:50])
	copy(iu[32:64], req[16:48])
	var l2 LoginRequest
	if err := l2.DecodeFromBytes(iu); err != nil || l2 != l {
		t.Errorf("IU layout: %+v, %v", l2, err)
	}
	if err := l2.DecodeFromBytes(iu[:63]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short: %v", err)
	}
	// An SRP_LOGIN_RSP is no login request.
	var l3 LoginRequest
	if l3.DecodeRDMACM(rep[:56]) == nil && l3.Plausible() {
		t.Error("the login response is a plausible login request")
	}
}

func TestCommandsAndResponses(t *testing.T) {
	sends, _, _ := capture(t)
	var m Message
	// Frame 20: the first SRP_CMD, an INQUIRY of 36 octets into one
	// direct data-in descriptor (ib_srp's fast registration).
	if err := m.DecodeFromBytes(sends[20].data); err != nil {
		t.Fatal(err)
	}
	c := &m.Command
	if m.Opcode != OpCmd || m.Tag != 0 || c.DataOut.Format != FormatNone || c.DataIn.Format != FormatDirect || c.CDB[0] != 0x12 ||
		c.DataIn.Direct != (Descriptor{VirtualAddress: 0xff1dd256c2d0a600, MemoryHandle: 0x357, DataLength: 36}) || c.Len != 64 ||
		len(sends[20].data) != 64 || c.DataIn.Length() != 36 {
		t.Errorf("frame 20: %+v", c)
	}
	// Frame 23: its SRP_RSP, GOOD, one credit back.
	if err := m.DecodeFromBytes(sends[23].data); err != nil {
		t.Fatal(err)
	}
	if m.Opcode != OpRsp || m.Tag != 0 || !m.HasDelta || m.RequestLimitDelta != 1 || m.Response.Status != StatusGood ||
		m.Response.Flags != 0 || len(sends[23].data) != ResponseLen {
		t.Errorf("frame 23: %+v", m.Response)
	}
	// Frame 77: the SRP_RSP to the scan's REPORT SUPPORTED OPERATION
	// CODES: SNSVALID, CHECK CONDITION, 96 octets of fixed-format sense
	// data (0x70, ILLEGAL REQUEST) after the 36-octet header.
	if err := m.DecodeFromBytes(sends[77].data); err != nil {
		t.Fatal(err)
	}
	if r := &m.Response; r.Flags != SnsValid || r.Status != StatusCheckCondition || r.SenseDataListLength != 96 || len(r.SenseData) != 96 ||
		r.SenseData[0] != 0x70 || r.SenseData[2]&0x0f != 0x05 || len(sends[77].data) != ResponseLen+96 {
		t.Errorf("frame 77: %+v", r)
	}
	// Frame 148: a 4 KiB WRITE(10) with SRP-2 immediate data: the
	// descriptor is the length, the data at the login's offset 68, the
	// Send 68 + 4096 octets in five packets.
	s := sends[148]
	if err := m.DecodeFromBytes(s.data); err != nil {
		t.Fatal(err)
	}
	if c.DataOut.Format != FormatImmediate || c.DataOut.ImmediateLength != 4096 || c.CDB[0] != 0x2a || c.Len != 52 ||
		len(s.data) != 68+4096 || len(s.frames) != 5 {
		t.Errorf("frame 148: %+v (%d octets, frames %v)", c, len(s.data), s.frames)
	}
	if d, ok := c.ImmediateData(s.data, 68); !ok || len(d) != 4096 || &d[0] != &s.data[68] {
		t.Errorf("immediate data: %d, %v", len(d), ok)
	}
	if _, ok := c.ImmediateData(s.data, 40); ok {
		t.Error("immediate data inside the descriptors")
	}
	// Frame 208: a 64 KiB write's first 48 KiB by a data-out direct
	// descriptor (the target pulls it by RDMA Read).
	if err := m.DecodeFromBytes(sends[208].data); err != nil {
		t.Fatal(err)
	}
	if c.DataOut.Format != FormatDirect || c.DataOut.Direct != (Descriptor{0xff1dd256cbfe4000, 0x368, 49152}) || m.Tag != 0x0300000000000000 {
		t.Errorf("frame 208: %+v", c)
	}
	if m.Opcode.String() != "SRP_CMD" || OpRsp.String() != "SRP_RSP" || Opcode(0x77).String() != "Unknown (0x77)" {
		t.Error("opcode names")
	}
}

// TestIndirect: an indirect descriptor laid out from the standard (the
// SRP_CMD of frame 208 with its direct data-out descriptor replaced by an
// indirect table of three entries, two in the IU's partial list).
func TestIndirect(t *testing.T) {
	sends, _, _ := capture(t)
	b := append([]byte(nil), sends[208].data[:48]...)
	b[5], b[6] = byte(FormatIndirect)<<4, 2
	put := func(va uint64, key, n uint32) {
		b = be.AppendUint64(b, va)
		b = be.AppendUint32(b, key)
		b = be.AppendUint32(b, n)
	}
	put(0x1000, 0x77, 3*DescriptorLen) // the table: three descriptors
	b = be.AppendUint32(b, 49152)      // TOTAL LENGTH
	put(0xff1dd256cbfe4000, 0x368, 16384)
	put(0xff1dd256cbfe8000, 0x369, 16384)
	var c Command
	if err := c.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	o := &c.DataOut
	if o.Format != FormatIndirect || o.Count != 2 || o.List.Len() != 2 || o.TotalLength != 49152 || o.Length() != 49152 ||
		o.Table != (Descriptor{0x1000, 0x77, 48}) || o.List.At(1) != (Descriptor{0xff1dd256cbfe8000, 0x369, 16384}) || c.Len != len(b) {
		t.Errorf("%+v", c)
	}
	if err := c.DecodeFromBytes(b[:len(b)-1]); err != ErrDescriptors {
		t.Errorf("cut list: %v", err)
	}
}

// TestOtherIUs: the IUs the capture lacks (ib_srp sends no
// SRP_I_LOGOUT, ib_srpt no SRP_CRED_REQ here), laid out from the
// standard.
func TestOtherIUs(t *testing.T) {
	iu := func(op Opcode, n int, set func(b []byte)) []byte {
		b := make([]byte, n)
		b[0] = byte(op)
		be.PutUint64(b[8:], 0x42)
		set(b)
		return b
	}
	var m Message
	cases := []struct {
		b     []byte
		check func() bool
	}{
		{iu(OpCredReq, 16, func(b []byte) { be.PutUint32(b[4:], 5) }), func() bool { return m.HasDelta && m.RequestLimitDelta == 5 }},
		{iu(OpCredRsp, 16, func([]byte) {}), func() bool { return !m.HasDelta && m.Tag == 0x42 }},
		{iu(OpAERReq, 36+18, func(b []byte) { be.PutUint32(b[4:], 1); b[21] = 3; be.PutUint32(b[28:], 18) }),
			func() bool {
				return m.AERRequest.LUN[1] == 3 && len(m.AERRequest.SenseData) == 18 && m.RequestLimitDelta == 1
			}},
		{iu(OpTLogout, 16, func(b []byte) { be.PutUint32(b[4:], 1) }), func() bool { return m.Reason == LogoutInactive }},
		{iu(OpILogout, 16, func([]byte) {}), func() bool { return m.Opcode == OpILogout }},
		{iu(OpTskMgmt, 48, func(b []byte) { b[30] = byte(TMFAbortTask); be.PutUint64(b[32:], 0x1800000000000000) }),
			func() bool {
				return m.TaskManagement.Function == TMFAbortTask && m.TaskManagement.TaskTag == 0x1800000000000000
			}},
		{iu(OpLoginRej, 32, func(b []byte) { be.PutUint32(b[4:], uint32(RejectIUTooLarge)); be.PutUint16(b[24:], 6) }),
			func() bool {
				return m.LoginReject.Reason == RejectIUTooLarge && m.LoginReject.SupportedBufferFormats == 6
			}},
		{iu(OpRsp, 36+4+18, func(b []byte) {
			b[18] = byte(RspValid | SnsValid)
			b[19] = byte(StatusCheckCondition)
			be.PutUint32(b[28:], 18)
			be.PutUint32(b[32:], 4)
			b[36+3] = 0x08
		}), func() bool {
			code, ok := m.Response.TaskManagementResponseCode()
			return ok && code == 0x08 && len(m.Response.SenseData) == 18 && m.Response.Status == StatusCheckCondition
		}},
	}
	for i, tc := range cases {
		if err := m.DecodeFromBytes(tc.b); err != nil || !tc.check() {
			t.Errorf("case %d (%s): %v %+v", i, Opcode(tc.b[0]), err, m)
		}
		if err := m.DecodeFromBytes(tc.b[:15]); err == nil {
			t.Errorf("case %d: short IU decoded", i)
		}
	}
	// A response whose sense length lies.
	b := iu(OpRsp, 36, func(b []byte) { b[18] = byte(SnsValid); be.PutUint32(b[28:], 1000) })
	if err := m.DecodeFromBytes(b); err != ErrDataLengths || !FixedOK(err) {
		t.Errorf("lying sense length: %v", err)
	}
	if err := m.DecodeFromBytes([]byte{0x55, 0}); err != ErrOpcode {
		t.Errorf("unknown opcode: %v", err)
	}
	if RejectReason(0x10002).String() != "Requested maximum initiator to target IU length value too large" || (DIUnder|SnsValid).String() != "SNSVALID, DIUNDER" {
		t.Error("names")
	}
}

// TestDecodeAllocatesNothing: decoding a real IU of each kind allocates
// nothing.
func TestDecodeAllocatesNothing(t *testing.T) {
	sends, req, rep := capture(t)
	var m Message
	var l LoginRequest
	var r LoginResponse
	n := testing.AllocsPerRun(100, func() {
		for _, f := range []int{20, 23, 148, 208} {
			_ = m.DecodeFromBytes(sends[f].data)
		}
		_ = l.DecodeRDMACM(req)
		_ = r.DecodeFromBytes(rep)
		_, _ = m.Command.ImmediateData(sends[148].data, 68)
		_ = m.DecodeFromBytes(nil)
	})
	if n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}
