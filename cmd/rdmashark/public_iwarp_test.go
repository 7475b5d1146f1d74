package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Wireshark wiki's public iWARP captures (testdata/pcaps/public/README.md).
const wikiDir = "../../testdata/pcaps/public/"

// wikiOdd are the three wiki captures where rdmashark differs from tshark
// 4.0 by design; TestWikiIWARPOdd checks each.
var wikiOdd = []string{
	"wireshark-wiki-iwarp_connect-C00_M00_reject.pcap",
	"wireshark-wiki-iwarp_rdma-read_write_long_run_mrkr.pcap",
	"wireshark-wiki-smb-direct-man-in-the-middle-02-reassemble-frames9.pcap",
}

// TestTsharkFieldsIWARPWiki: every field of fields-iwarp.txt on every
// packet of the wiki's 2008 captures (MPA set-up with CRC32c and markers
// each way, Sends of every kind, RDMA Writes and Reads) equals tshark
// 4.0's (testdata/tshark/wireshark-wiki-*.iwarp.tsv, gen-iwarp.sh).
func TestTsharkFieldsIWARPWiki(t *testing.T) {
	all, err := filepath.Glob(wikiDir + "wireshark-wiki-*.pcap")
	if err != nil || len(all) != 18 {
		t.Fatalf("wiki captures: %v (%d)", err, len(all))
	}
	var caps []string
	for _, c := range all {
		if !slices.Contains(wikiOdd, filepath.Base(c)) {
			caps = append(caps, c)
		}
	}
	fpdus, reqreps, markers := 0, 0, 0
	goldenSuite{
		fields:   "fields-iwarp.txt",
		suffix:   "iwarp.tsv",
		captures: caps,
		context:  []string{"_ws.malformed", "_ws.expert.message"},
		known:    iwarpKnownDifferences[:0],
		visit: func(f, ts string) {
			if ts == "" {
				return
			}
			switch f {
			case "iwarp_mpa.ulpdulength":
				fpdus += strings.Count(ts, ",") + 1
			case "iwarp_mpa.rev":
				reqreps++
			case "iwarp_mpa.marker_fpduptr":
				markers += strings.Count(ts, ",") + 1
			}
		},
	}.run(t)
	if fpdus < 90 || reqreps != 30 || markers < 4 {
		t.Errorf("compared %d FPDUs, %d MPA Requests/Replies, %d markers", fpdus, reqreps, markers)
	}
	t.Logf("%d FPDUs, %d MPA Requests/Replies, %d markers equal to tshark's", fpdus, reqreps, markers)
}

// TestWikiIWARPOdd: what rdmashark makes of the three wiki captures where
// it differs from tshark 4.0, each against the capture's bytes.
func TestWikiIWARPOdd(t *testing.T) {
	findings := func(name string) map[string][]string {
		_, out, _ := runCmd(t, "check", "--format", "json", wikiDir+name)
		var res struct {
			Files []struct {
				Findings []struct {
					Rule, Severity string
					Packets        []int
				} `json:"findings"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Files) != 1 {
			t.Fatalf("%s: %v", name, err)
		}
		m := map[string][]string{}
		for _, f := range res.Files[0].Findings {
			m[f.Rule] = append(m[f.Rule], f.Severity)
		}
		return m
	}

	// The rejection: the Reply's R flag was set by hand and the TCP
	// checksum left as it was (tshark -o tcp.check_checksum:TRUE: frame 6
	// bad). Its receiver acknowledged the segment (packet 8, Ack 29): the
	// capture's copy is damaged, named at information level; the
	// client's Request is not called unanswered, since the server's
	// stream holds 28 octets the capture cannot use (its FIN, packet 7,
	// comes after them).
	f := findings(wikiOdd[0])
	if !slices.Equal(f["TCP-CHECKSUM-BAD"], []string{"info"}) || f["MPA-NO-REPLY"] != nil {
		t.Errorf("reject: %v", f)
	}

	// Markers 4 octets late, holding 02 02 02 02 (tshark -x, packet 13
	// at TCP offset 472): the first bad marker of each side is an error,
	// and the Read Requests whose Responses lie in FPDUs that could not be
	// framed are not called unanswered.
	f = findings(wikiOdd[1])
	if !slices.Equal(f["MPA-MARKER-BAD"], []string{"error", "error"}) || f["RDMA-READ-UNPAIRED"] != nil {
		t.Errorf("markers: %v", f)
	}

	// SMB Direct over iWARP: the legacy IRD/ORD header of [MS-SMBD] 6.1
	// (tshark -x: packet 4's private data 00 00 00 10 00 00 00 00,
	// packet 6's 00 00 00 00 00 00 00 10) in the summary, -T fields and
	// analyze; the client's first FPDU, a zero-length RDMA Read Request
	// (RDMARDSZ 0, packet 10), is the ready-to-receive message, not an RDMA
	// transfer SMB Direct forbids the client.
	name := wikiDir + wikiOdd[2]
	_, out, _ := runCmd(t, "dissect", "-T", "fields", "-e", "frame.number", "-e", "iwarp_mpa.legacy.ird", "-e", "iwarp_mpa.legacy.ord",
		"-Y", "iwarp_mpa.rev", name)
	if want := "4\t16\t0\n6\t0\t16\n"; out != want {
		t.Errorf("legacy fields:\n%s\nwant\n%s", out, want)
	}
	_, out, _ = runCmd(t, "dissect", "-V", "-Y", "frame.number == 4", name)
	if !strings.Contains(out, "Legacy Inbound RDMA Read Queue Depth: 16") || !strings.Contains(out, "Legacy Outbound RDMA Read Queue Depth: 0") {
		t.Errorf("-V of packet 4:\n%s", out)
	}
	_, out, _ = runCmd(t, "analyze", "--format", "json", name)
	var an struct {
		Connections []struct {
			IWARP struct {
				IRDORD struct {
					Client, Server *struct {
						IRD, ORD int
						Legacy   bool
					}
				} `json:"ird_ord"`
			} `json:"iwarp"`
		} `json:"connections"`
	}
	if err := json.Unmarshal([]byte(out), &an); err != nil || len(an.Connections) != 1 {
		t.Fatalf("analyze: %v", err)
	}
	io := an.Connections[0].IWARP.IRDORD
	if io.Client == nil || io.Server == nil || *io.Client != (struct {
		IRD, ORD int
		Legacy   bool
	}{16, 0, true}) || io.Server.IRD != 0 || io.Server.ORD != 16 {
		t.Errorf("analyze ird_ord: %+v %+v", io.Client, io.Server)
	}
	if f := findings(wikiOdd[2]); f["SMBD-RDMA-DESCRIPTOR"] != nil {
		t.Errorf("smb direct: %v", f)
	}
}
