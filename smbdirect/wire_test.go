package smbdirect

import (
	"encoding/hex"
	"errors"
	"testing"
)

// Sends of testdata/pcaps/ulp/rxe-smbdirect.pcap (the RDMA Send payloads,
// after the BTH and the IETH of a Send With Invalidate), by frame number.
// The expected values are tshark 4.0's decode of those frames
// (testdata/tshark/smbdirect/rxe-smbdirect.sends.tsv).
var realSends = map[int]string{
	18:  "000100010000ff00540500005405000056a70200",
	20:  "0001000100010000ff00fe000000000000008000540500005405000056a70200",
	22:  "ff00ff0000000000000000000000000000000000",
	30:  "ff000000000000000000000018000000c800000000000000fe534d4240000000160000c00100820001000000000000000100000000000000de0000000000000001000000000000000000000000000000000000000000000009000000480080004e544c4d53535000020000000c000c0030000000358282e076acb1130e02eb210000000000000000440044003c00000053004500520056004500520001000c0053004500520056004500520002000c0053004500520056004500520003000c0053004500520056004500520004000c0053004500520056004500520000000000",
	92:  "ff00010000000000c0000000180000009800000000000000fe534d42400001000000000005000a0000000000980000001100000000000000de0000000200000001000000000000000000000000000000000000000000000039000000020000000000000000000000000000000000000080000000000000000700000001000000000000007800000080000000180000000000000000000000000000001000040000000000000000005146696400000000",
	93:  "ff0000000000000058000000180000006800000000000000fe534d42400001000000000010000a0004000000680000001200000000000000de00000002000000010000000000000000000000000000000000000000000000290001126520000000000000000000000000000000000000ffffffffffffffffffffffffffffffff",
	94:  "ff0000000000000000000000180000005800000000000000fe534d42400001000000000006000a0004000000000000001300000000000000de000000020000000100000000000000000000000000000000000000000000001800000000000000ffffffffffffffffffffffffffffffff",
	142: "ff0001000000000000000000180000008000000000000000fe534d4240001000000000000900180000000000000000001e000000000000000f010000020000000100000000000000000000000000000000000000000000003100000000000000000000000000000005000000000000000500000000000000020000000000100070001000000000000060008c547433ff8304000000001000",
	// 1176 is a Send With Invalidate: its IETH (R_Key 0x483) stripped.
	1176: "ff0000000000000000000000180000005000000000000000fe534d4240001000000000000900180001000000000000001e000000000000000f0100000200000001000000000000000000000000000000000000000000000011000000000010000000000000000000",
	1526: "ff0001000000000000000000180000008000000000000000fe534d424000010000000000080009000000000000000000410000000000000012010000020000000100000000000000000000000000000000000000000000003100000000100000000000000000000009000000000000000900000000000000000000000200000000000000700010000060348c547433ff8504000000100000",
}

func send(t testing.TB, frame int) []byte {
	b, err := hex.DecodeString(realSends[frame])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNegotiate(t *testing.T) {
	var q NegotiateRequest
	if err := q.DecodeFromBytes(send(t, 18)); err != nil {
		t.Fatal(err)
	}
	if q != (NegotiateRequest{MinVersion: 0x0100, MaxVersion: 0x0100, CreditsRequested: 255, PreferredSendSize: 1364,
		MaxReceiveSize: 1364, MaxFragmentedSize: 173910}) {
		t.Errorf("request %+v", q)
	}
	if !LooksLikeNegotiateRequest(send(t, 18)) || LooksLikeNegotiateRequest(send(t, 22)) || LooksLikeNegotiateRequest(send(t, 20)) {
		t.Error("LooksLikeNegotiateRequest")
	}
	var r NegotiateResponse
	if err := r.DecodeFromBytes(send(t, 20)); err != nil {
		t.Fatal(err)
	}
	if r != (NegotiateResponse{MinVersion: 0x0100, MaxVersion: 0x0100, NegotiatedVersion: 0x0100, CreditsRequested: 255,
		CreditsGranted: 254, Status: StatusSuccess, MaxReadWriteSize: 8388608, PreferredSendSize: 1364, MaxReceiveSize: 1364,
		MaxFragmentedSize: 173910}) {
		t.Errorf("response %+v", r)
	}
	if r.NegotiatedVersion.String() != "1.0" || Version(0x0200).String() != "0x0200" {
		t.Error(r.NegotiatedVersion.String())
	}
	if err := r.DecodeFromBytes(send(t, 20)[:31]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short response: %v", err)
	}
}

// TestFragments: frames 92, 93 and 94 carry one compound request of 344
// octets in three fragments (tshark: RemainingLength 192, 88, 0;
// DataLength 152, 104, 88; CREATE, QUERY_INFO, CLOSE with MessageIds 17,
// 18, 19).
func TestFragments(t *testing.T) {
	var all []byte
	want := [][3]uint32{{192, 24, 152}, {88, 24, 104}, {0, 24, 88}}
	for i, f := range []int{92, 93, 94} {
		var d DataTransfer
		if err := d.DecodeFromBytes(send(t, f)); err != nil {
			t.Fatal(err)
		}
		if got := [3]uint32{d.RemainingDataLength, d.DataOffset, d.DataLength}; got != want[i] || len(d.Data) != int(d.DataLength) {
			t.Errorf("frame %d: %v, want %v", f, got, want[i])
		}
		all = append(all, d.Data...)
	}
	if len(all) != 344 {
		t.Fatalf("%d octets", len(all))
	}
	var h Header
	var cmds []Command
	var ids []uint64
	ch := NewChain(all)
	for ch.Next(&h) {
		cmds, ids = append(cmds, h.Command), append(ids, h.MessageID)
		if h.Response() {
			t.Error("a response")
		}
	}
	if ch.Err() != nil || len(cmds) != 3 || cmds[0] != Create || cmds[1] != QueryInfo || cmds[2] != Close ||
		ids[0] != 17 || ids[1] != 18 || ids[2] != 19 {
		t.Errorf("chain %v %v %v", cmds, ids, ch.Err())
	}
	if cmds[1].String() != "QUERY_INFO" || Command(0x13).String() != "UNKNOWN_0x0013" {
		t.Error(cmds[1].String())
	}
}

// TestReadWriteChannel: the 1 MiB WRITE of frame 142 and the 4 KiB READ of
// frame 1526, both SMB2_CHANNEL_RDMA_V1_INVALIDATE with one buffer
// descriptor (tshark: smb2.channel 0x00000002; offset
// 18389169609958776832, token 0x00000483, length 1048576; offset
// 18389169609962184704, token 0x00000485, length 4096).
func TestReadWriteChannel(t *testing.T) {
	var d DataTransfer
	var h Header
	var rw ReadWrite
	if err := d.DecodeFromBytes(send(t, 142)); err != nil {
		t.Fatal(err)
	}
	if d.CreditsRequested != 255 || d.CreditsGranted != 1 {
		t.Errorf("credits %d %d", d.CreditsRequested, d.CreditsGranted)
	}
	if err := h.DecodeFromBytes(d.Data); err != nil || h.Command != Write || h.MessageID != 30 || h.CreditCharge != 16 || h.Response() {
		t.Fatalf("%+v %v", h, err)
	}
	if err := rw.DecodeWrite(&h); err != nil {
		t.Fatal(err)
	}
	if rw.Channel != ChannelRDMAV1Invalidate || rw.ChannelInfo.Len() != 1 || rw.Length != 0 || rw.RemainingBytes != 1048576 {
		t.Fatalf("%+v", rw)
	}
	if b := rw.ChannelInfo.At(0); b != (BufferDescriptor{Offset: 18389169609958776832, Token: 0x483, Length: 1048576}) {
		t.Errorf("descriptor %+v", b)
	}
	if err := d.DecodeFromBytes(send(t, 1526)); err != nil {
		t.Fatal(err)
	}
	if err := h.DecodeFromBytes(d.Data); err != nil || h.Command != Read || h.MessageID != 65 {
		t.Fatalf("%+v %v", h, err)
	}
	if err := rw.DecodeRead(&h); err != nil {
		t.Fatal(err)
	}
	if rw.Channel.String() != "SMB2_CHANNEL_RDMA_V1_INVALIDATE" || rw.Length != 4096 || rw.ChannelInfo.Total() != 4096 {
		t.Fatalf("%+v", rw)
	}
	if b := rw.ChannelInfo.At(0); b != (BufferDescriptor{Offset: 18389169609962184704, Token: 0x485, Length: 4096}) {
		t.Errorf("descriptor %+v", b)
	}
	// The WRITE's response (frame 1176, Send With Invalidate of 0x483).
	if err := d.DecodeFromBytes(send(t, 1176)); err != nil {
		t.Fatal(err)
	}
	if err := h.DecodeFromBytes(d.Data); err != nil || h.Command != Write || h.MessageID != 30 || !h.Response() || h.Status != StatusSuccess {
		t.Fatalf("%+v %v", h, err)
	}
}

func TestStatus(t *testing.T) {
	var d DataTransfer
	var h Header
	if err := d.DecodeFromBytes(send(t, 30)); err != nil {
		t.Fatal(err)
	}
	if err := h.DecodeFromBytes(d.Data); err != nil {
		t.Fatal(err)
	}
	// tshark: smb2.nt_status 0xc0000016, Session Setup Response.
	if h.Status != 0xc0000016 || h.Status.String() != "STATUS_MORE_PROCESSING_REQUIRED" || !h.Status.OK() || h.Command != SessionSetup {
		t.Errorf("%v %v", h.Status, h.Command)
	}
	if StatusAccessDenied.OK() || !StatusBufferOverflow.OK() || Status(0xc0000999).String() != "0xc0000999" {
		t.Error("status")
	}
}

// TestLyingLengths: lengths that point beyond the message are errors, not
// panics.
func TestLyingLengths(t *testing.T) {
	var d DataTransfer
	b := send(t, 94)
	b[16] = 0xff // DataLength
	if err := d.DecodeFromBytes(b); err != ErrDataOutside {
		t.Errorf("%v", err)
	}
	b = send(t, 94)
	b[12] = 20 // DataOffset
	if err := d.DecodeFromBytes(b); err != ErrDataOffset {
		t.Errorf("%v", err)
	}
	b = send(t, 142)
	_ = d.DecodeFromBytes(b)
	var h Header
	_ = h.DecodeFromBytes(d.Data)
	h.Message[64+40] = 0xf0 // WriteChannelInfoOffset
	var rw ReadWrite
	if err := rw.DecodeWrite(&h); err != nil || !rw.ChannelInfoOutside || rw.ChannelInfo.Len() != 0 {
		t.Errorf("%+v %v", rw, err)
	}
	h.Message[20] = 8 // NextCommand inside the header
	if err := h.DecodeFromBytes(h.Message); err != ErrNextCommand {
		t.Errorf("%v", err)
	}
}

func TestDecodeAllocatesNothing(t *testing.T) {
	b := send(t, 142)
	var d DataTransfer
	var h Header
	var rw ReadWrite
	n := testing.AllocsPerRun(100, func() {
		_ = d.DecodeFromBytes(b)
		ch := NewChain(d.Data)
		for ch.Next(&h) {
			_ = rw.DecodeWrite(&h)
			_ = rw.ChannelInfo.At(0)
		}
		_ = d.DecodeFromBytes(b[:3])
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}
