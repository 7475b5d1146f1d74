package check

import (
	"encoding/binary"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestReadUnpaired: the real siw-ib_read_bw capture, in which tshark 4.0
// shows 40 RDMA Read Requests and 40 last Read Response segments, the
// request of packet 47 (Data Sink STag 0xa73b2000, TO 0x56094c1f6040)
// answered by packet 54 (STag 0xa73b2000, TO 0x56094c1f6040, L). Written
// with every field of that request's header byte-swapped (TCP checksum
// recomputed; no CRC negotiated), the request answers nothing: packet 47
// is a Read Request no response answered (packet 56 answers the next one),
// packet 54 a Read Response nothing asked for. Without the edit there is
// no finding; with packet 54 dropped instead (capture loss: the client's
// ACKs cover it) the request is not evaluated.
func TestReadUnpaired(t *testing.T) {
	src := "../testdata/pcaps/siw-ib_read_bw.pcap"
	findings := func(path string) (req, resp []int, chs []CheckResult) {
		res := runFile(t, path, Config{})
		for _, f := range res.Findings {
			if f.Rule != "RDMA-READ-UNPAIRED" {
				continue
			}
			if f.Severity != Warning {
				t.Errorf("%s: severity %v", f.Message, f.Severity)
			}
			if f.Key == "request" {
				req = append(req, f.Packets...)
			} else {
				resp = append(resp, f.Packets...)
			}
		}
		for _, cr := range res.Connections {
			for _, c := range cr.Checks {
				if c.Rule == "RDMA-READ-UNPAIRED" {
					chs = append(chs, c)
				}
			}
		}
		return req, resp, chs
	}
	req, resp, chs := findings(src)
	if len(req)+len(resp) != 0 || len(chs) == 0 {
		t.Fatalf("unedited: requests %v, responses %v, %+v", req, resp, chs)
	}
	for _, ch := range chs {
		if ch.Status != StatusPassed || ch.Checked == 0 {
			t.Errorf("unedited: %+v", ch)
		}
	}

	lt, frames := pcaptest.Read(t, src)
	pay, _, ok := pcaptest.TCPPayload(frames[46].Data)
	if !ok || len(pay) != 52 || pay[3]&0x0f != 1 || binary.BigEndian.Uint32(pay[20:]) != 0xa73b2000 || binary.BigEndian.Uint64(pay[24:]) != 0x56094c1f6040 {
		t.Fatalf("packet 47 is not the Read Request: % x", pay)
	}
	edited := append([]pcaptest.Frame(nil), frames...)
	edited[46].Data = append([]byte(nil), frames[46].Data...)
	pay, _, _ = pcaptest.TCPPayload(edited[46].Data)
	reth := pay[20:48]
	for _, f := range [][2]int{{0, 4}, {4, 12}, {12, 16}, {16, 20}, {20, 28}} {
		b := reth[f[0]:f[1]]
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	pcaptest.FixTCPChecksum(t, edited[46].Data)
	req, resp, _ = findings(pcaptest.Write(t, lt, edited))
	if len(req) != 1 || req[0] != 47 || len(resp) != 1 || resp[0] != 54 {
		t.Errorf("byte-swapped request header: unanswered requests %v, unmatched responses %v; want [47], [54]", req, resp)
	}

	// Packet 54 lost by the capture: not evaluated, no finding.
	thinned := append(append([]pcaptest.Frame(nil), frames[:53]...), frames[54:]...)
	req, resp, chs = findings(pcaptest.Write(t, lt, thinned))
	skipped := 0
	for _, ch := range chs {
		skipped += ch.NotEvaluated
	}
	if len(req)+len(resp) != 0 || skipped == 0 {
		t.Errorf("packet 54 not captured: requests %v, responses %v, %+v", req, resp, chs)
	}
}
