package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstancesIWARP: on the segments of the soft-iWARP NFS captures that
// complete several FPDUs, `dissect -T jsonl` puts each FPDU's MPA, DDP and
// RDMAP fields in its own instance, and for every field that each FPDU
// has, instance k holds the kth value tshark prints (testdata/tshark/
// *.iwarp.tsv); -V shows the same under numbered headings.
func TestInstancesIWARP(t *testing.T) {
	fields := iwarpGoldenFields(t)
	compared, frames := 0, 0
	for _, base := range []string{"siw-nfs3", "siw-nfs42-small"} {
		capture := filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
		want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".iwarp.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		rows := readLines(t, want)
		var out, errOut bytes.Buffer
		if code := run([]string{"dissect", "-T", "jsonl", capture}, nil, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		for i, line := range readLines(t, out.Bytes()) {
			var pkt struct {
				Number int                        `json:"number"`
				Layers map[string]json.RawMessage `json:"layers"`
			}
			if err := json.Unmarshal([]byte(line), &pkt); err != nil {
				t.Fatalf("packet %d: %v", i+1, err)
			}
			var ddp struct {
				Instances []map[string]any `json:"instances"`
			}
			if raw, ok := pkt.Layers["iwarp_ddp"]; !ok || json.Unmarshal(raw, &ddp) != nil || len(ddp.Instances) < 2 {
				continue
			}
			frames++
			n := len(ddp.Instances)
			ts := strings.Split(rows[i], "\t")
			for k, f := range fields {
				vals := strings.Split(ts[k], ",")
				group := f[:strings.IndexByte(f, '.')]
				if ts[k] == "" || len(vals) != n || (group != "iwarp_ddp" && group != "iwarp_rdma" && group != "iwarp_mpa") {
					continue
				}
				var g struct {
					Instances []map[string]any `json:"instances"`
				}
				if err := json.Unmarshal(pkt.Layers[group], &g); err != nil || len(g.Instances) != n {
					t.Errorf("%s frame %d: %s has %d instances (%v), tshark %d values", base, pkt.Number, group, len(g.Instances), err, n)
					continue
				}
				for j, v := range vals {
					if got, _ := g.Instances[j][f].(string); got != v {
						t.Errorf("%s frame %d FPDU #%d %s: %q, tshark's value %d is %q", base, pkt.Number, j+1, f, got, j+1, v)
					}
					compared++
				}
			}
		}
	}
	t.Logf("%d segments with several FPDUs, %d values compared", frames, compared)
	if frames < 20 || compared < 20*15 {
		t.Errorf("only %d frames with several FPDUs, %d values compared", frames, compared)
	}

	// -V of siw-nfs3 frame 3751: an RDMA Write's last segment (tagged,
	// STag 0xfee04b03) and then a Send (untagged, MSN 29), as tshark
	// prints them (iwarp_ddp.stag, iwarp_ddp.msn, iwarp_rdma.opcode
	// 0x00,0x03).
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-V", "-c", "3751", filepath.Join("..", "..", "testdata", "pcaps", "siw-nfs3.pcap")}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	v := out.String()
	v = v[strings.Index(v, "Packet 3751:"):]
	sections := map[string]string{}
	var name string
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "      ") && !strings.HasPrefix(l, "    ") {
			name = strings.TrimSpace(l)
			continue
		}
		sections[name] += l + "\n"
	}
	for sec, want := range map[string][]string{
		"iWARP Direct Data Placement #1":                     {"Tagged flag: 1", "(Data Sink) Steering Tag: 0xfee04b03"},
		"iWARP Direct Data Placement #2":                     {"Tagged flag: 0", "Message sequence number: 29"},
		"iWARP Remote Direct Memory Access Protocol #1":      {"OpCode: 0x00"},
		"iWARP Remote Direct Memory Access Protocol #2":      {"OpCode: 0x03"},
		"iWARP Marker Protocol data unit Aligned framing #1": {"ULPDU length: 22"},
		"iWARP Marker Protocol data unit Aligned framing #2": {"ULPDU length: 98"},
	} {
		for _, w := range want {
			if !strings.Contains(sections[sec], w) {
				t.Errorf("-V %q lacks %q:\n%s", sec, w, v)
			}
		}
	}
	if strings.Contains(sections["iWARP Direct Data Placement #1"], "Message sequence number") {
		t.Errorf("the RDMA Write's DDP header shows an MSN:\n%s", v)
	}
	// The FPDUs' protocols come FPDU by FPDU.
	if a, b := strings.Index(v, "iWARP Remote Direct Memory Access Protocol #1"), strings.Index(v, "iWARP Marker Protocol data unit Aligned framing #2"); a < 0 || b < a {
		t.Errorf("FPDU #1's RDMAP header does not come before FPDU #2's MPA:\n%s", v)
	}
}
