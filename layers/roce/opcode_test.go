package roce

import "testing"

// Expected values written out from IBA Vol 1 §9.2 Table 38 (RC/UC/RD/UD,
// CNP), Annex A14 (XRC) and IBTA 1.5 (FLUSH 0x1C, ATOMIC_WRITE 0x1D; the
// numbers also appear in Wireshark's packet-infiniband.h and the Linux
// rxe driver), independently of the table in opcode.go.
func TestOpCodeTable(t *testing.T) {
	for _, tc := range []struct {
		op     OpCode
		str    string
		ext    string
		hdrLen int
	}{
		{0x00, "RC SEND_FIRST", "none", 12},
		{0x01, "RC SEND_MIDDLE", "none", 12},
		{0x02, "RC SEND_LAST", "none", 12},
		{0x03, "RC SEND_LAST_WITH_IMMEDIATE", "ImmDt", 16},
		{0x04, "RC SEND_ONLY", "none", 12},
		{0x05, "RC SEND_ONLY_WITH_IMMEDIATE", "ImmDt", 16},
		{0x06, "RC RDMA_WRITE_FIRST", "RETH", 28},
		{0x07, "RC RDMA_WRITE_MIDDLE", "none", 12},
		{0x08, "RC RDMA_WRITE_LAST", "none", 12},
		{0x09, "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", "ImmDt", 16},
		{0x0A, "RC RDMA_WRITE_ONLY", "RETH", 28},
		{0x0B, "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RETH|ImmDt", 32},
		{0x0C, "RC RDMA_READ_REQUEST", "RETH", 28},
		{0x0D, "RC RDMA_READ_RESPONSE_FIRST", "AETH", 16},
		{0x0E, "RC RDMA_READ_RESPONSE_MIDDLE", "none", 12},
		{0x0F, "RC RDMA_READ_RESPONSE_LAST", "AETH", 16},
		{0x10, "RC RDMA_READ_RESPONSE_ONLY", "AETH", 16},
		{0x11, "RC ACKNOWLEDGE", "AETH", 16},
		{0x12, "RC ATOMIC_ACKNOWLEDGE", "AETH|AtomicAckETH", 24},
		{0x13, "RC COMPARE_SWAP", "AtomicETH", 40},
		{0x14, "RC FETCH_ADD", "AtomicETH", 40},
		{0x15, "0x15", "none", 12}, // RESYNC exists only in RD
		{0x16, "RC SEND_LAST_WITH_INVALIDATE", "IETH", 16},
		{0x17, "RC SEND_ONLY_WITH_INVALIDATE", "IETH", 16},
		{0x18, "0x18", "none", 12},
		{0x1C, "RC FLUSH", "FETH|RETH", 32},
		{0x1D, "RC ATOMIC_WRITE", "RETH", 28},
		{0x1E, "0x1e", "none", 12},
		{0x20, "UC SEND_FIRST", "none", 12},
		{0x25, "UC SEND_ONLY_WITH_IMMEDIATE", "ImmDt", 16},
		{0x2A, "UC RDMA_WRITE_ONLY", "RETH", 28},
		{0x2B, "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RETH|ImmDt", 32},
		{0x2C, "0x2c", "none", 12}, // no RDMA READ on UC
		{0x31, "0x31", "none", 12}, // no ACK on UC
		{0x40, "RD SEND_FIRST", "RDETH|DETH", 24},
		{0x41, "RD SEND_MIDDLE", "RDETH|DETH", 24},
		{0x45, "RD SEND_ONLY_WITH_IMMEDIATE", "RDETH|DETH|ImmDt", 28},
		{0x46, "RD RDMA_WRITE_FIRST", "RDETH|DETH|RETH", 40},
		{0x4B, "RD RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RDETH|DETH|RETH|ImmDt", 44},
		{0x4C, "RD RDMA_READ_REQUEST", "RDETH|DETH|RETH", 40},
		{0x4D, "RD RDMA_READ_RESPONSE_FIRST", "RDETH|AETH", 20},
		{0x4E, "RD RDMA_READ_RESPONSE_MIDDLE", "RDETH", 16},
		{0x51, "RD ACKNOWLEDGE", "RDETH|AETH", 20},
		{0x52, "RD ATOMIC_ACKNOWLEDGE", "RDETH|AETH|AtomicAckETH", 28},
		{0x53, "RD COMPARE_SWAP", "RDETH|DETH|AtomicETH", 52},
		{0x54, "RD FETCH_ADD", "RDETH|DETH|AtomicETH", 52},
		{0x55, "RD RESYNC", "RDETH|DETH", 24},
		{0x56, "0x56", "none", 12}, // no invalidate on RD
		{0x5C, "RD FLUSH", "RDETH|DETH|FETH|RETH", 44},
		{0x5D, "RD ATOMIC_WRITE", "RDETH|DETH|RETH", 40},
		{0x60, "0x60", "none", 12},
		{0x64, "UD SEND_ONLY", "DETH", 20},
		{0x65, "UD SEND_ONLY_WITH_IMMEDIATE", "DETH|ImmDt", 24},
		{0x80, "IB CNP", "none", 12},
		{0x81, "CNP", "CNP", 28},
		{0x82, "0x82", "none", 12},
		{0xA0, "XRC SEND_FIRST", "XRCETH", 16},
		{0xA5, "XRC SEND_ONLY_WITH_IMMEDIATE", "XRCETH|ImmDt", 20},
		{0xA6, "XRC RDMA_WRITE_FIRST", "XRCETH|RETH", 32},
		{0xAB, "XRC RDMA_WRITE_ONLY_WITH_IMMEDIATE", "XRCETH|RETH|ImmDt", 36},
		{0xAC, "XRC RDMA_READ_REQUEST", "XRCETH|RETH", 32},
		{0xAD, "XRC RDMA_READ_RESPONSE_FIRST", "AETH", 16}, // responses carry no XRCETH
		{0xAE, "XRC RDMA_READ_RESPONSE_MIDDLE", "none", 12},
		{0xB1, "XRC ACKNOWLEDGE", "AETH", 16},
		{0xB2, "XRC ATOMIC_ACKNOWLEDGE", "AETH|AtomicAckETH", 24},
		{0xB3, "XRC COMPARE_SWAP", "XRCETH|AtomicETH", 44},
		{0xB7, "XRC SEND_ONLY_WITH_INVALIDATE", "XRCETH|IETH", 20},
		{0xBC, "XRC FLUSH", "XRCETH|FETH|RETH", 36},
		{0xBD, "XRC ATOMIC_WRITE", "XRCETH|RETH", 32},
		{0xC0, "0xc0", "none", 12},
		{0xE0, "0xe0", "none", 12},
		{0xFF, "0xff", "none", 12},
	} {
		if s := tc.op.String(); s != tc.str {
			t.Errorf("0x%02x: String = %q, want %q", uint8(tc.op), s, tc.str)
		}
		if e := tc.op.ExtHeaders().String(); e != tc.ext {
			t.Errorf("%v: ExtHeaders = %s, want %s", tc.op, e, tc.ext)
		}
		if n := tc.op.HeaderLen(); n != tc.hdrLen {
			t.Errorf("%v: HeaderLen = %d, want %d", tc.op, n, tc.hdrLen)
		}
		if valid := tc.str[0] != '0'; tc.op.Valid() != valid {
			t.Errorf("%v: Valid = %v", tc.op, tc.op.Valid())
		}
	}
}

func TestOpCodeCountsPerTransport(t *testing.T) {
	// RC: 0x00-0x14, 0x16, 0x17, 0x1C, 0x1D = 25; UC 12; RD 0x00-0x15 +
	// FLUSH + ATOMIC_WRITE = 24; UD 2; CNP 2; XRC as RC = 25.
	want := map[Transport]int{TransportRC: 25, TransportUC: 12, TransportRD: 24, TransportUD: 2, TransportCNP: 2, TransportXRC: 25}
	got := map[Transport]int{}
	for i := 0; i < 256; i++ {
		if op := OpCode(i); op.Valid() {
			got[op.Transport()]++
		}
	}
	for tr, n := range want {
		if got[tr] != n {
			t.Errorf("%v: %d valid opcodes, want %d", tr, got[tr], n)
		}
	}
	if got[TransportReserved]+got[TransportManufacturer] != 0 {
		t.Error("reserved/manufacturer opcodes marked valid")
	}
}

func TestTransport(t *testing.T) {
	for op, want := range map[OpCode]string{0x04: "RC", 0x24: "UC", 0x44: "RD", 0x64: "UD", 0x81: "CNP", 0xA4: "XRC", 0xC4: "reserved", 0xE4: "manufacturer"} {
		if s := op.Transport().String(); s != want {
			t.Errorf("0x%02x: Transport %s, want %s", uint8(op), s, want)
		}
	}
}

func TestOpCodePredicates(t *testing.T) {
	type p struct{ send, write, rreq, rresp, ack, atomic, first, middle, last, only, imm, inval, resp bool }
	for op, want := range map[OpCode]p{
		OpRCSendFirst:                  {send: true, first: true},
		OpRCSendMiddle:                 {send: true, middle: true},
		OpRCSendLastWithImmediate:      {send: true, last: true, imm: true},
		OpRCSendOnlyWithInvalidate:     {send: true, only: true, inval: true},
		OpUDSendOnlyWithImmediate:      {send: true, only: true, imm: true},
		OpRCRDMAWriteFirst:             {write: true, first: true},
		OpUCRDMAWriteOnlyWithImmediate: {write: true, only: true, imm: true},
		OpRCRDMAReadRequest:            {rreq: true, only: true},
		OpRCRDMAReadResponseMiddle:     {rresp: true, middle: true, resp: true},
		OpXRCRDMAReadResponseLast:      {rresp: true, last: true, resp: true},
		OpRCAcknowledge:                {ack: true, only: true, resp: true},
		OpRCFetchAdd:                   {atomic: true, only: true},
		OpCode(0xC0):                   {},
	} {
		got := p{op.IsSend(), op.IsWrite(), op.IsReadRequest(), op.IsReadResponse(), op.IsAck(), op.IsAtomic(),
			op.IsFirst(), op.IsMiddle(), op.IsLast(), op.IsOnly(), op.HasImmediate(), op.HasInvalidate(), op.IsResponse()}
		if got != want {
			t.Errorf("%v: %+v, want %+v", op, got, want)
		}
	}
	if !OpRCAtomicAcknowledge.IsAtomicAck() || OpRCAtomicAcknowledge.IsAck() || !OpRCAtomicAcknowledge.IsResponse() {
		t.Error("ATOMIC_ACKNOWLEDGE predicates")
	}
	if !OpRCFlush.IsFlush() || !OpRCAtomicWrite.IsAtomicWrite() || !OpRDResync.IsResync() || !OpCNP.IsCNP() || !OpIBCNP.IsCNP() {
		t.Error("FLUSH/ATOMIC_WRITE/RESYNC/CNP predicates")
	}
	if !OpRCSendOnly.IsRequest() || OpRCAcknowledge.IsRequest() || OpCNP.IsRequest() || OpCode(0xFF).IsRequest() {
		t.Error("IsRequest")
	}
}

func TestExtHeaders(t *testing.T) {
	e := ExtRETH | ExtImmDt
	if !e.Has(ExtRETH) || !e.Has(ExtRETH|ExtImmDt) || e.Has(ExtAETH) || e.Has(0) {
		t.Error("Has")
	}
	if e.Len() != 20 {
		t.Errorf("Len = %d", e.Len())
	}
	if s := ExtHeaders(0x8000 | uint16(ExtDETH)).String(); s != "DETH|0x8000" {
		t.Errorf("String = %q", s)
	}
}
