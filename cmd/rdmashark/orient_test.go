package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/internal/ulptest"
)

// TestNoSetupConnectionOrientedByItsULP (issue 28): a capture that lost a
// connection's CM exchange — here rxe-nfs3.pcap without frames 3000-3399,
// counted as 400 kernel drops before frame 3400, as a live capture's
// pcapng does — starts that connection with an RDMA Write of the server
// (frame 3400: RDMA WRITE MIDDLE from 192.0.2.1 to QP 0x12). It is the
// server's: only RPC-over-RDMA's responder initiates RDMA (RFC 8166
// section 3.4.3), and tshark shows the connection's CM REQ (frame 3036)
// sent by 192.0.2.2. Taking the first packet's sender for the client, as
// the engine did, reversed the roles, and the RPC rules read the Replies
// as Calls: CHUNK-LONG-CALL, CREDIT-OVERRUN and RDMA-BY-REQUESTER errors
// the whole capture lacks. Now the client is 192.0.2.2 and check raises at
// error or warning only what the whole capture does (INV-NOT-NEGOTIATED).
func TestNoSetupConnectionOrientedByItsULP(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	lt, frames := pcaptest.Read(t, src)
	path := filepath.Join(t.TempDir(), "cut.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapgo.NewNgWriter(f, lt)
	if err != nil {
		t.Fatal(err)
	}
	for i, fr := range frames {
		n := i + 1
		if n >= 3000 && n < 3400 {
			continue
		}
		var opts pcapgo.NgPacketOptions
		if n == 3400 {
			d := uint64(400)
			opts.DropCount = &d
		}
		if err := w.WritePacketWithOptions(fr.CI, fr.Data, opts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	code, out, errs := runArgs(t, "analyze", "--format", "json", path)
	var a struct {
		Connections []struct {
			ID     int    `json:"id"`
			State  string `json:"state"`
			Client struct {
				Address string `json:"address"`
			} `json:"client"`
		} `json:"connections"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || len(a.Connections) != 2 {
		t.Fatalf("analyze: exit %d, %v\n%s%s", code, err, out, errs)
	}
	if c := a.Connections[1]; c.State != "no-setup" || c.Client.Address != "192.0.2.2" {
		t.Errorf("connection %d: %s, client %s; want no-setup, client 192.0.2.2 (tshark: the CM REQ of frame 3036)", c.ID, c.State, c.Client.Address)
	}

	whole, _ := checkRules(t, src)
	cutRules, _ := checkRules(t, path)
	for rule := range cutRules {
		if !whole[rule] {
			t.Errorf("%s at error or warning on the cut capture; the whole capture has none", rule)
		}
	}
}

// TestNoSetupConnectionFirstPacketAnACK (issue 28): rxe-nfs3.pcap without
// its CM MADs and without frame 3039, the V3 NULL Call that opened the
// second connection (tshark: CM REQ 3036 from 192.0.2.2, NULL Call 3039
// from 192.0.2.2, RC Acknowledge 3040 from 192.0.2.1, NULL Reply 3041 from
// 192.0.2.1): that connection's first packet is the server's
// acknowledgement, which tells neither side's role. Taking its sender for
// the client reversed the roles and made every Reply a Call; the engine
// now keeps the roles open until the NULL Reply tells (a Send starting an
// RPC Reply is the server's) and swaps them. Check then raises at error or
// warning only what the whole capture does. The first connection loses
// its set-up too (its first packet, 3 in the original, is a Call).
func TestNoSetupConnectionFirstPacketAnACK(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	path, _ := pcaptest.WithoutSetUp(t, src, 0, func(fr pcaptest.Frame) bool { return fr.Num == 3039 })
	code, out, errs := runArgs(t, "analyze", "--format", "json", path)
	var a struct {
		Connections []struct {
			ID     int    `json:"id"`
			State  string `json:"state"`
			Client struct {
				Address string `json:"address"`
			} `json:"client"`
			FirstPacket int `json:"first_packet"`
			RolesToldBy int `json:"roles_told_by"`
		} `json:"connections"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || len(a.Connections) != 2 {
		t.Fatalf("analyze: exit %d, %v\n%s%s", code, err, out, errs)
	}
	for _, c := range a.Connections {
		if c.State != "no-setup" || c.Client.Address != "192.0.2.2" {
			t.Errorf("connection %d: %s, client %s; want no-setup, client 192.0.2.2 (tshark: the CM REQs' sender)", c.ID, c.State, c.Client.Address)
		}
	}
	// In the cut file, frame 3036 of the original (the ACK) is 3033: 3
	// CM MADs of the first connection and 3 of the second, and 3039 went.
	if c := a.Connections[1]; c.RolesToldBy != c.FirstPacket+1 {
		t.Errorf("connection %d: roles told by packet %d, first packet %d; want the one after it (the NULL Reply)", c.ID, c.RolesToldBy, c.FirstPacket)
	}
	whole, _ := checkRules(t, src)
	cut, doc := checkRules(t, path)
	for rule := range cut {
		if !whole[rule] {
			t.Errorf("%s at error or warning on the cut capture; the whole capture has none\n%s", rule, doc)
		}
	}
}

// checkRules runs check --format json on a capture and returns the rules
// of its findings at error or warning, and the document.
func checkRules(t *testing.T, name string) (map[string]bool, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{"check", "--format", "json", name}, nil, &out, &errb)
	var doc struct {
		Files []struct {
			Findings []struct {
				Rule     string `json:"rule"`
				Severity string `json:"severity"`
			} `json:"findings"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Files) != 1 {
		t.Fatalf("check %s: exit %d, %v\n%s%s", name, code, err, out.String(), errb.String())
	}
	rules := map[string]bool{}
	for _, f := range doc.Files[0].Findings {
		if f.Severity == "error" || f.Severity == "warning" {
			rules[f.Rule] = true
		}
	}
	return rules, out.String()
}

// TestOrientedWithoutSetUpAllULPs: the ULP captures without their set-up
// (ulptest.Oriented) with every registered ULP asked, as the tool does: the
// Orienters that answer must agree (a packet one ULP reads as its own must
// not be read the other way by another), and the roles come out as the
// CM REQs name them.
func TestOrientedWithoutSetUpAllULPs(t *testing.T) {
	for _, name := range []string{"ulp/rxe-nvmeof.pcap", "ulp/rxe-iser.pcap", "ulp/rxe-smbdirect.pcap", "ulp/rxe-srp.pcap", "rxe-nfs3.pcap", "rxe-nfs41.pcap"} {
		t.Run(name, func(t *testing.T) { ulptest.Oriented(t, name, newULPs) })
	}
}

// TestNoSetupConnectionNAKsFirst: lossy/rxe-ib_write_bw-reorder.pcap from
// frame 182 on (tshark: 182 and 183 are NAK PSN sequence errors from
// 192.0.2.1, 184 on RDMA Writes from 192.0.2.2), so that the connection's
// first two packets are NAKs that come before anything tells its roles and
// are handed on with no direction (dissect/orient.go). Check must still
// find each of them recovered (info), as it finds every NAK of the whole
// capture, and raise nothing at error or warning the whole capture lacks.
func TestNoSetupConnectionNAKsFirst(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "pcaps", "lossy", "rxe-ib_write_bw-reorder.pcap")
	path, _ := pcaptest.WithoutSetUp(t, src, 181, nil)
	whole, _ := checkRules(t, src)
	cut, doc := checkRules(t, path)
	for rule := range cut {
		if !whole[rule] {
			t.Errorf("%s at error or warning on the cut capture; the whole capture has none", rule)
		}
	}
	var d struct {
		Files []struct {
			Findings []struct {
				Rule     string `json:"rule"`
				Severity string `json:"severity"`
				Packets  []int  `json:"packets"`
			} `json:"findings"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	naks := map[int]string{}
	for _, f := range d.Files[0].Findings {
		if f.Rule == "NAK" && len(f.Packets) > 0 {
			naks[f.Packets[0]] = f.Severity
		}
	}
	for _, n := range []int{1, 2} {
		if naks[n] != "info" {
			t.Errorf("NAK of packet %d (frame %d of the capture): %q; want info (recovered)", n, n+181, naks[n])
		}
	}
}
