package check

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// siwTerminateCapture makes a capture from the real siw-rping one: its
// frames 1-29 (RDMA-CM over TCP, the MPA exchange without markers or CRC,
// the first Sends, a Read, a Write), then the server's frame 30 — a Send,
// MSN 2 — with its FPDU replaced by the Terminate Linux siw sends when a
// Send finds no receive buffer (siw_send_terminate,
// drivers/infiniband/sw/siw/siw_qp.c): DDP layer, untagged buffer error,
// invalid MSN - no buffer available, M and D, with the client's Send of
// frame 28 as the offending segment, its MPA length reduced to the DDP
// payload length as siw does. siw's struct iwarp_terminate bit fields on
// a little-endian host write that Terminate Control as 21 02 03 00
// (RFC 5040 order: 12 02 c0 00). IPv4 length and checksums are rewritten.
func siwTerminateCapture(t *testing.T) string {
	t.Helper()
	lt, frames := pcaptest.Read(t, "../testdata/pcaps/siw-rping.pcap")
	frames = frames[:30]
	// The checksum code rebuilds a real frame's own checksums.
	if got := pcaptest.SetTCPPayload(t, frames[29].Data, mustPayload(t, frames[29].Data)); string(got) != string(frames[29].Data) {
		t.Fatal("SetTCPPayload does not reproduce the real frame 30")
	}
	send := mustPayload(t, frames[27].Data) // frame 28: client Send, QN 0, MSN 2
	if len(send) != 40 || send[2] != 0x41 || send[3] != 0x43 || binary.BigEndian.Uint32(send[12:]) != 2 {
		t.Fatalf("frame 28 is not the client's Send MSN 2: % x", send)
	}
	offending := append([]byte(nil), send[:20]...)
	binary.BigEndian.PutUint16(offending, binary.BigEndian.Uint16(send)-(20-2)) // siw: mpa_len - (hdr_len - MPA_HDR_SIZE)
	fpdu := []byte{0x00, 0x2a,                                                  // ULPDU_Length 42
		0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, // untagged, L, Terminate, QN 2, MSN 1, MO 0
		0x21, 0x02, 0x03, 0x00} // siw's Terminate Control
	fpdu = append(fpdu, offending...)
	fpdu = append(fpdu, 0, 0, 0, 0) // no CRC negotiated
	frames[29].Data = pcaptest.SetTCPPayload(t, frames[29].Data, fpdu)
	frames[29].CI.CaptureLength = len(frames[29].Data)
	frames[29].CI.Length = len(frames[29].Data)
	return pcaptest.Write(t, lt, frames)
}

func mustPayload(t *testing.T, frame []byte) []byte {
	t.Helper()
	p, _, ok := pcaptest.TCPPayload(frame)
	if !ok {
		t.Fatal("not a TCP frame")
	}
	return p
}

// TestSiwTerminateOrder: check's NAK finding for the siw Terminate says
// what it means (DDP, untagged buffer, no buffer), that RFC 5040's order
// reads it as something impossible (layer LLP, error type 1, reserved
// bits set — tshark 4.0.17 shows iwarp_rdma.term_layer 0x02,
// term_etype_llp 0x01, hdrct_d 0 on this frame, with good IPv4 and TCP
// checksums), and who writes it that way.
func TestSiwTerminateOrder(t *testing.T) {
	res := runFile(t, siwTerminateCapture(t), Config{})
	var msgs []string
	for _, f := range res.Findings {
		if f.Rule == "NAK" {
			if len(f.Packets) != 1 || f.Packets[0] != 30 {
				t.Errorf("NAK on packets %v, want [30]", f.Packets)
			}
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) != 1 {
		t.Fatalf("NAK findings %q, want one", msgs)
	}
	for _, w := range []string{"Terminate from the server: layer DDP, error type Untagged Buffer Error, error code 0x02 (Invalid MSN - no buffer available), flags MD",
		"(21 02 03 00)", "layer LLP, error type Reserved error type 0x1", "Linux siw", "little-endian"} {
		if !strings.Contains(msgs[0], w) {
			t.Errorf("message %q lacks %q", msgs[0], w)
		}
	}
	if strings.Contains(msgs[0], "MPA CRC Error") && !strings.Contains(msgs[0], "would read") {
		t.Errorf("message %q", msgs[0])
	}
}
