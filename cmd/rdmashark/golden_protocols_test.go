package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// protocolsDifference is one documented way rdmashark's frame.protocols
// differs from tshark 4.0's: a frame whose two lists match tshark and
// rdmashark (the regular expressions), with rdmashark's list equal to the
// expansion of same on tshark's match. Each has an entry with the same ID
// in testdata/KNOWN-DIFFERENCES.md.
type protocolsDifference struct {
	id               string
	tshark, rdmashrk *regexp.Regexp
	same             string         // rdmashark's list, from tshark's submatches
	captures         *regexp.Regexp // the captures it occurs in; nil: any
}

var protocolsDifferences = []protocolsDifference{
	// RPC over plain TCP (portmap, MOUNT before the RDMA mount).
	{"KD-RPC-OVER-TCP", regexp.MustCompile(`^(.*:tcp):rpc(:portmap|:mount|:nfs|:nfsacl)?$`), regexp.MustCompile(`:tcp$`), "$1", nil},
	// A protocol on a TCP port rdmashark has no dissector for.
	{"KD-PROTOCOLS-PORT", regexp.MustCompile(`^(.*:tcp):ssh$`), regexp.MustCompile(`:tcp$`), "$1", nil},
	// tshark's heuristic payload dissectors on perftest Sends: a 4-byte
	// payload claimed by RPC-over-RDMA's (malformed), the all-zero sync
	// messages claimed without a protocol name.
	{"KD-PROTOCOLS-HEURISTIC", regexp.MustCompile(`^(.*:(infiniband|iwarp_ddp_rdmap)):rpcordma$`), regexp.MustCompile(`:data$`), "$1:data", perftest},
	{"KD-PROTOCOLS-HEURISTIC", regexp.MustCompile(`^(.*:(infiniband|iwarp_ddp_rdmap))$`), regexp.MustCompile(`:data$`), "$1:data", perftest},
	// The bytes of a Reply chunk after a rebuilt NFS reply, as "data".
	{"KD-PROTOCOLS-TRAILING-DATA", regexp.MustCompile(`^(.*:rpcordma:rpc:nfs):data$`), regexp.MustCompile(`:nfs$`), "$1", nil},
}

// perftest are the captures of perftest's ib_send_bw, ib_write_bw and
// ib_read_bw.
var perftest = regexp.MustCompile(`ib_(send|write|read)_bw`)

// TestTsharkFrameProtocols requires frame.protocols of every frame of the
// real captures to be tshark's (testdata/tshark/frame-protocols.tsv, made by
// gen-protocols.sh with `tshark -2`), but for the documented differences,
// each of which must still occur.
func TestTsharkFrameProtocols(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "frame-protocols.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]string{} // capture, frame: tshark's list
	var captures []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("frame-protocols.tsv: bad line %q", line)
		}
		if want[cols[0]] == nil {
			want[cols[0]] = map[int]string{}
			captures = append(captures, cols[0])
		}
		for _, r := range strings.Split(cols[2], ",") {
			lo, hi, _ := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if hi != "" {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || b < a {
				t.Fatalf("frame-protocols.tsv: bad range %q", r)
			}
			for n := a; n <= b; n++ {
				want[cols[0]][n] = cols[1]
			}
		}
	}
	if len(captures) < 15 {
		t.Fatalf("only %d captures", len(captures))
	}
	hits, frames, distinct := map[string]int{}, 0, map[string]bool{}
	for _, capture := range captures {
		var out, errOut bytes.Buffer
		args := []string{"dissect", "-T", "fields", "-e", "frame.number", "-e", "frame.protocols",
			filepath.Join("..", "..", "testdata", "pcaps", capture)}
		if code := run(args, nil, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", capture, code, errOut.String())
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if len(lines) != len(want[capture]) {
			t.Errorf("%s: %d frames, tshark %d", capture, len(lines), len(want[capture]))
		}
		bad := 0
		for _, l := range lines {
			num, got, _ := strings.Cut(l, "\t")
			n, _ := strconv.Atoi(num)
			w, ok := want[capture][n]
			if !ok {
				t.Errorf("%s: frame %d not in tshark's", capture, n)
				continue
			}
			frames++
			distinct[w] = true
			if got == w {
				continue
			}
			known := ""
			for _, d := range protocolsDifferences {
				if d.captures != nil && !d.captures.MatchString(capture) {
					continue
				}
				if m := d.tshark.FindStringSubmatchIndex(w); m != nil && d.rdmashrk.MatchString(got) &&
					string(d.tshark.ExpandString(nil, d.same, w, m)) == got {
					known = d.id
					break
				}
			}
			if known != "" {
				hits[known]++
				continue
			}
			if bad++; bad <= 5 {
				t.Errorf("%s: frame %d: frame.protocols %q, tshark %q", capture, n, got, w)
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d frames differ", capture, bad)
		}
	}
	t.Logf("%d frames of %d captures, %d different lists", frames, len(captures), len(distinct))
	var kds []knownDifference
	for _, d := range protocolsDifferences {
		if len(kds) == 0 || kds[len(kds)-1].id != d.id {
			kds = append(kds, knownDifference{id: d.id, field: "frame.protocols"})
		}
	}
	checkKnownDocumented(t, kds, hits)
}
