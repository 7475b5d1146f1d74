package main

import (
	"encoding/json"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writePcap writes frames as an Ethernet pcap file.
func writeEthPcap(t *testing.T, path string, frames [][]byte, cis []gopacket.CaptureInfo) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, fr := range frames {
		if err := w.WritePacket(cis[i], fr); err != nil {
			t.Fatal(err)
		}
	}
}

// gateCaptures makes the captures that give the gate nothing to judge:
// an empty capture, one of plain UDP and TCP (no RDMA), and a real NFS/RDMA
// connection cut after its CM exchange (its first three frames: the CM
// REQ, REP and RTU as tshark shows them).
func gateCaptures(t *testing.T) (empty, noRDMA, noCM string) {
	dir := t.TempDir()
	empty = filepath.Join(dir, "empty.pcap")
	writeEthPcap(t, empty, nil, nil)

	var frames [][]byte
	var cis []gopacket.CaptureInfo
	for i := 0; i < 6; i++ {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, SrcIP: net.IP{192, 0, 2, 2}, DstIP: net.IP{192, 0, 2, 1}}
		var l4 gopacket.SerializableLayer
		if i%2 == 0 {
			ip.Protocol = layers.IPProtocolUDP
			u := &layers.UDP{SrcPort: 40000, DstPort: 53}
			u.SetNetworkLayerForChecksum(ip)
			l4 = u
		} else {
			ip.Protocol = layers.IPProtocolTCP
			tc := &layers.TCP{SrcPort: 40001, DstPort: 2049, Seq: uint32(i), ACK: true, Window: 1000}
			tc.SetNetworkLayerForChecksum(ip)
			l4 = tc
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, l4, gopacket.Payload("not rdma")); err != nil {
			t.Fatal(err)
		}
		b := append([]byte(nil), buf.Bytes()...)
		frames = append(frames, b)
		cis = append(cis, gopacket.CaptureInfo{CaptureLength: len(b), Length: len(b)})
	}
	noRDMA = filepath.Join(dir, "no-rdma.pcap")
	writeEthPcap(t, noRDMA, frames, cis)

	f, err := os.Open(mutated + "rxe-nfs3-conn2.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	frames, cis = nil, nil
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if n > 3 {
			frames = append(frames, data)
			cis = append(cis, ci)
		}
	}
	if len(frames) != 54 {
		t.Fatalf("cut capture: %d frames, want 57-3", len(frames))
	}
	noCM = filepath.Join(dir, "no-cm.pcap")
	writeEthPcap(t, noCM, frames, cis)
	return
}

// TestGateNothingToJudge: every capture that gives the gate nothing to judge
// fails it by default with exit 3 and the reason, in every output format,
// and passes with --allow-empty.
func TestGateNothingToJudge(t *testing.T) {
	empty, noRDMA, noCM := gateCaptures(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"empty capture", []string{empty}, "nothing to judge: 0 RDMA connections"},
		{"no RDMA", []string{noRDMA}, "nothing to judge: 0 RDMA connections"},
		{"RDMA without RPC (rping)", []string{rpingPcap}, "no RPC-over-RDMA traffic"},
		{"CM exchange missing", []string{noCM}, "no connection set-up in the capture"},
		// With only the rules that need the CM exchange, none can be evaluated.
		{"every rule not evaluated", []string{"--enable", "PD-*,THRESH-*,CM-*", noCM}, "every rule not evaluated: "},
		{"several files, none with evidence", []string{empty, rpingPcap}, "no RPC-over-RDMA traffic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, append([]string{"check"}, tc.args...)...)
			if code != 3 || !strings.Contains(out, "gate FAILED  GATE-EVIDENCE") || !strings.Contains(out, tc.want) ||
				!strings.Contains(out, "fail-on error: FAILED (GATE-EVIDENCE: "+tc.want) {
				t.Errorf("text: exit %d, want 3 and %q\n%s%s", code, tc.want, out, errs)
			}

			code, out, _ = runCmd(t, append([]string{"check", "--format", "json"}, tc.args...)...)
			var doc struct {
				Failed  bool
				Verdict string
				Gate    []struct{ ID, Status, Message string }
				Summary struct {
					NothingToJudge bool `json:"nothing_to_judge"`
					GateFailures   int  `json:"gate_failures"`
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if code != 3 || !doc.Failed || !doc.Summary.NothingToJudge || doc.Summary.GateFailures != 1 || len(doc.Gate) != 1 ||
				doc.Gate[0].ID != "GATE-EVIDENCE" || doc.Gate[0].Status != "failed" || !strings.Contains(doc.Gate[0].Message, tc.want) ||
				!strings.HasPrefix(doc.Verdict, "FAILED") {
				t.Errorf("json: exit %d, %+v", code, doc)
			}

			code, out, _ = runCmd(t, append([]string{"check", "--format", "junit"}, tc.args...)...)
			var ju struct {
				Failures int `xml:"failures,attr"`
				Suites   []struct {
					Name  string `xml:"name,attr"`
					Cases []struct {
						Name    string `xml:"name,attr"`
						Failure *struct {
							Message string `xml:"message,attr"`
						} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal([]byte(out), &ju); err != nil {
				t.Fatal(err)
			}
			gateFailed := false
			for _, s := range ju.Suites {
				for _, c := range s.Cases {
					if s.Name == "rdmashark gate" && c.Name == "GATE-EVIDENCE" && c.Failure != nil && strings.Contains(c.Failure.Message, tc.want) {
						gateFailed = true
					}
				}
			}
			if code != 3 || !gateFailed || ju.Failures < 1 {
				t.Errorf("junit: exit %d, failures %d, gate test case failed: %v\n%s", code, ju.Failures, gateFailed, out)
			}

			code, out, _ = runCmd(t, append([]string{"check", "--format", "sarif"}, tc.args...)...)
			var sl struct {
				Runs []struct {
					Invocations []struct {
						ExecutionSuccessful bool `json:"executionSuccessful"`
						Notifications       []struct {
							Descriptor *struct{ ID string }
							Level      string
							Message    struct{ Text string }
						} `json:"toolExecutionNotifications"`
					}
					Results []struct {
						RuleID string
						Level  string
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &sl); err != nil {
				t.Fatal(err)
			}
			inv := sl.Runs[0].Invocations[0]
			note, result := false, false
			for _, n := range inv.Notifications {
				if n.Level == "error" && n.Descriptor != nil && n.Descriptor.ID == "GATE-EVIDENCE" && strings.Contains(n.Message.Text, tc.want) {
					note = true
				}
			}
			for _, r := range sl.Runs[0].Results {
				if r.RuleID == "GATE-EVIDENCE" && r.Level == "error" {
					result = true
				}
			}
			if code != 3 || !note || !result || !inv.ExecutionSuccessful {
				t.Errorf("sarif: exit %d, error notification %v, result %v, executionSuccessful %v", code, note, result, inv.ExecutionSuccessful)
			}

			code, out, errs = runCmd(t, append([]string{"check", "--allow-empty"}, tc.args...)...)
			if code != 0 || !strings.Contains(out, "gate allowed GATE-EVIDENCE") || !strings.Contains(out, "fail-on error: passed") {
				t.Errorf("--allow-empty: exit %d\n%s%s", code, out, errs)
			}
		})
	}
}

// TestGateAssertions: each assertion passes and fails on the bundled
// captures. rxe-nfs3.pcap has 2 connections (tshark: 2 CM REQs) and 618
// RPC transactions (tshark: 618 distinct RPC-over-RDMA XIDs each way); both
// connections' private data are client R=1 send/recv 4096, server R=0
// send/recv 4096 (testdata/pcaps/README.md), so remote invalidation was not
// negotiated and both inline thresholds are 4096 (RFC 8797 sections 4.1,
// 4.2). The mutated rep-r-bit-set capture sets the server's R: negotiated.
// INV-NOT-NEGOTIATED is disabled so that only the gate decides.
func TestGateAssertions(t *testing.T) {
	rbit := mutated + "rxe-nfs3-conn2--rep-r-bit-set.pcap"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--min-connections", "2", nfs3Pcap}, 0, "gate ok      GATE-MIN-CONNECTIONS      2 RDMA connections"},
		{[]string{"--min-connections", "3", nfs3Pcap}, 3, "gate FAILED  GATE-MIN-CONNECTIONS      2 RDMA connections"},
		{[]string{"--min-connections", "3", nfs3Pcap, rbit}, 0, "3 RDMA connections"},
		{[]string{"--min-transactions", "618", nfs3Pcap}, 0, "gate ok      GATE-MIN-TRANSACTIONS     618 RPC transactions"},
		{[]string{"--min-transactions", "619", nfs3Pcap}, 3, "gate FAILED  GATE-MIN-TRANSACTIONS     618 RPC transactions"},
		{[]string{"--expect-remote-invalidation", "no", nfs3Pcap}, 0, "gate ok      GATE-REMOTE-INVALIDATION  all 2 RPC-over-RDMA connections do"},
		{[]string{"--expect-remote-invalidation", "yes", nfs3Pcap}, 1, "2 of 2 RPC-over-RDMA connections do not"},
		{[]string{"--expect-remote-invalidation", "yes", rbit}, 0, "all 1 RPC-over-RDMA connections do"},
		{[]string{"--expect-remote-invalidation", "no", rbit}, 1, "connection 1: remote invalidation yes"},
		{[]string{"--min-inline-threshold", "4096", nfs3Pcap}, 0, "gate ok      GATE-MIN-INLINE-THRESHOLD all 2"},
		{[]string{"--min-inline-threshold", "4097", nfs3Pcap}, 1, "inline thresholds 4096/4096"},
		// An expectation on a connection whose set-up is missing cannot pass.
		{[]string{"--allow-empty", "--expect-remote-invalidation", "no", rpingPcap}, 1, "no RPC-over-RDMA connection to judge"},
		{[]string{"--expect-remote-invalidation", "maybe", nfs3Pcap}, 2, "must be yes or no"},
		{[]string{"--min-connections", "-1", nfs3Pcap}, 2, "≥ 0"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			code, out, errs := runCmd(t, append([]string{"check", "--wide", "--disable", "INV-NOT-*"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Errorf("exit %d, want %d and %q\n%s%s", code, tc.code, tc.want, out, errs)
			}
		})
	}
	// Findings (exit 1) come before too little evidence (exit 3).
	if code, out, _ := runCmd(t, "check", "--min-connections", "3", nfs3Pcap); code != 1 {
		t.Errorf("findings and a failed --min-connections: exit %d\n%s", code, out)
	}
}
