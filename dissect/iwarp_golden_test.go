package dissect

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// Synthetic iWARP captures, for what siw never sends (markers, CRC32c,
// Terminate, rejection, peer-to-peer MPA v2), checked against tshark 4.0:
// testdata/tshark/gen-iwarp.sh has this test write them
// (-iwarp-synthetic DIR), runs tshark on them and commits its fields as
// testdata/tshark/iwarp-*.iwarp.tsv; TestIWARPSyntheticAgainstTshark
// compares the engine's fields with those, for the same frames built anew.

var iwSynthDir = flag.String("iwarp-synthetic", "", "write the synthetic iWARP captures into this directory (gen-iwarp.sh)")

// iwSynthetic builds the synthetic captures, by name.
func iwSynthetic(t testing.TB) map[string][]iwFrame {
	out := map[string][]iwFrame{}
	pdC := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3} // RFC 8797 v1, R=1, 4096/4096
	pdS := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 7, 7} // v1, R=0, 8192/8192

	// Markers and CRC32c both ways; markers fall inside FPDUs and lead
	// them.
	for _, split := range []bool{false, true} {
		c := newIWConn(t, 41000, 20049)
		c.send(0, mpaFrame(true, true, true, false, 1, pdC))
		c.send(1, mpaFrame(false, true, true, false, 1, pdS))
		ms := [2]uint32{c.seq[0], c.seq[1]}
		// Unsplit, one FPDU per segment; split, TCP cuts FPDUs at 700
		// octets and carries several in a segment.
		put := func(d int, ulpdus ...[]byte) {
			if split {
				c.sendSplit(d, fpdus(true, true, c.seq[d], ms[d], ulpdus...), 700)
				return
			}
			for _, u := range ulpdus {
				c.send(d, fpdus(true, true, c.seq[d], ms[d], u))
			}
		}
		for i := 0; i < 10; i++ {
			n := 90 + 37*i
			if split {
				n = 1100 + 100*i
			}
			put(0, untaggedULPDU(iwarp.OpSend, true, 0, 0, uint32(i+1), 0, iwPattern(n, i)))
		}
		put(0, readRequestULPDU(1, 0x11223344, 0x1000, 300, 0xaabbcc00, 0x7f0000001000),
			untaggedULPDU(iwarp.OpSendWithSE, true, 0, 0, 11, 0, iwPattern(50, 11)))
		put(1, taggedULPDU(iwarp.OpRDMAReadResponse, true, 0x11223344, 0x1000, iwPattern(300, 12)))
		put(1, taggedULPDU(iwarp.OpRDMAWrite, false, 0x55667788, 0x2000, iwPattern(200, 13)),
			taggedULPDU(iwarp.OpRDMAWrite, true, 0x55667788, 0x2000+200, iwPattern(64, 14)))
		put(1, untaggedULPDU(iwarp.OpSendWithInvalidate, true, 0x55667788, 0, 1, 0, iwPattern(120, 15)))
		put(1, untaggedULPDU(iwarp.OpSendWithSEAndInvalidate, true, 0x01020304, 0, 2, 0, iwPattern(33, 16)))
		name := "iwarp-markers-crc"
		if split {
			name = "iwarp-markers-crc-split"
		}
		out[name] = c.out
	}

	// CRC32c without markers; the second FPDU damaged.
	c := newIWConn(t, 41001, 7174)
	c.send(0, mpaFrame(true, false, true, false, 1, nil))
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	for i := 0; i < 3; i++ {
		b := fpdus(false, true, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, true, 0, 0, uint32(i+1), 0, iwPattern(100+i, i)))
		if i == 1 {
			b[30] ^= 1
		}
		c.send(0, b)
	}
	out["iwarp-bad-crc"] = c.out

	// Terminates of every layer (RFC 5040 section 4.8): RDMAP remote
	// protection / invalid STag with the RDMA header (R), DDP tagged
	// buffer / base or bounds with the DDP header (M, D), DDP untagged
	// buffer / invalid MSN, MPA (LLP) / CRC error.
	c = newIWConn(t, 41002, 20049)
	c.send(0, mpaFrame(true, false, false, false, 1, nil))
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	rr := readRequestULPDU(3, 0x1, 0x2, 64, 0x3, 0x4)
	for _, term := range [][]byte{
		append([]byte{0x01, 0x00, 0x20, 0x00}, rr[18:]...),
		append([]byte{0x11, 0x01, 0xc0, 0x00, 0x00, 0x20}, taggedULPDU(iwarp.OpRDMAWrite, true, 0xdead, 0xbeef, nil)...),
		append([]byte{0x12, 0x02, 0x40, 0x00, 0x00, 0x22}, untaggedULPDU(iwarp.OpSend, true, 0, 0, 9, 0, nil)...),
		{0x20, 0x02, 0x00, 0x00},
	} {
		c.send(1, fpdus(false, false, c.seq[1], c.seq[1], untaggedULPDU(iwarp.OpTerminate, true, 0, iwarp.QNTerminate, 1, 0, term)))
	}
	out["iwarp-terminate"] = c.out

	// MPA revision 2 (RFC 6581): IRD/ORD and the peer-to-peer flags, a
	// zero-length Send as the initiator's ready-to-receive message; then
	// a rejected attempt.
	c = newIWConn(t, 41003, 20049)
	c.send(0, mpaFrameRes(true, false, false, false, 0x10, 2, append([]byte{0xc0, 0x10, 0x00, 0x08}, pdC...)))
	c.send(1, mpaFrameRes(false, false, false, false, 0x10, 2, append([]byte{0x80, 0x08, 0x00, 0x10}, pdS...)))
	c.send(0, fpdus(false, false, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, true, 0, 0, 1, 0, nil)))
	r := newIWConn(t, 41004, 20049)
	r.n = c.n
	r.send(0, mpaFrameRes(true, false, false, false, 0x10, 2, append([]byte{0x00, 0x10, 0x00, 0x10}, pdC...)))
	r.send(1, mpaFrameRes(false, false, false, true, 0x10, 2, []byte{0x00, 0x00, 0x00, 0x00}))
	out["iwarp-mpa-v2"] = append(c.out, r.out...)
	return out
}

// iwPattern is n octets that differ between messages.
func iwPattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*17)
	}
	return b
}

// TestIWARPWriteSynthetic writes the synthetic captures for gen-iwarp.sh.
func TestIWARPWriteSynthetic(t *testing.T) {
	if *iwSynthDir == "" {
		t.Skip("only with -iwarp-synthetic DIR (testdata/tshark/gen-iwarp.sh)")
	}
	for name, frames := range iwSynthetic(t) {
		var fs []synth.Frame
		for _, f := range frames {
			fs = append(fs, synth.Frame{LinkType: layers.LinkTypeEthernet, Data: f.data, Length: len(f.data), Time: f.ci.Timestamp})
		}
		w, err := os.Create(filepath.Join(*iwSynthDir, name+".pcap"))
		if err != nil {
			t.Fatal(err)
		}
		if err := synth.WritePcap(w, layers.LinkTypeEthernet, fs, synth.PcapOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// iwSynthKnown are the documented differences (testdata/KNOWN-DIFFERENCES.md)
// these captures show; each must occur.
var iwSynthKnown = []struct {
	id, field string
	applies   func(ts, ours string, row map[string]string) bool
}{
	{"KD-MPA-RES-ENHANCED", "iwarp_mpa.res", func(ts, ours string, row map[string]string) bool {
		return row["iwarp_mpa.rev"] == "2" && ts == "0x10" && ours == "0x00"
	}},
	{"KD-MPA-MARKERS-SPLIT", "*", func(ts, ours string, row map[string]string) bool {
		// tshark 4.0 loses (and later repeats) FPDUs when markers are on
		// and TCP splits FPDUs or carries several in one segment; only
		// the capture made for it.
		return row["_name"] == "iwarp-markers-crc-split"
	}},
}

// TestIWARPSyntheticAgainstTshark compares every field of fields-iwarp.txt
// on every packet of the synthetic captures with tshark 4.0's.
func TestIWARPSyntheticAgainstTshark(t *testing.T) {
	fl, err := os.ReadFile(filepath.Join("..", "testdata", "tshark", "fields-iwarp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(fl), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if _, ok := Present.Values(l, new(Packet), nil); !ok {
			t.Fatalf("no field %s", l)
		}
		names = append(names, l)
	}
	hits := map[string]int{}
	compared := 0
	for name, frames := range iwSynthetic(t) {
		var ours [][]string
		iwRun(frames, Options{}, func(p *Packet) {
			row := make([]string, len(names))
			for i, n := range names {
				v, _ := Present.Values(n, p, nil)
				row[i] = strings.Join(v, ",")
			}
			ours = append(ours, row)
		})
		tf, err := os.Open(filepath.Join("..", "testdata", "tshark", name+".iwarp.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(tf)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		i := 0
		for ; sc.Scan(); i++ {
			cols := strings.Split(sc.Text(), "\t")
			if i >= len(ours) || len(cols) != len(names)+2 {
				t.Fatalf("%s line %d: %d columns, %d packets of ours", name, i+1, len(cols), len(ours))
			}
			row := map[string]string{"_name": name}
			for k, n := range names {
				row[n] = cols[k]
			}
			for k, n := range names {
				ts, us := cols[k], ours[i][k]
				if ts == us {
					if strings.HasPrefix(n, "iwarp_") && ts != "" {
						compared++
					}
					continue
				}
				id := ""
				for _, kd := range iwSynthKnown {
					if (kd.field == n || kd.field == "*" && strings.HasPrefix(n, "iwarp_")) && kd.applies(ts, us, row) {
						id = kd.id
						break
					}
				}
				if id == "" {
					t.Errorf("%s packet %d %s: tshark %q, rdmashark %q", name, i+1, n, ts, us)
					continue
				}
				hits[id]++
			}
		}
		tf.Close()
		if i != len(ours) {
			t.Errorf("%s: tshark has %d packets, we %d", name, i, len(ours))
		}
	}
	if compared < 300 {
		t.Errorf("only %d iWARP values equal to tshark's", compared)
	}
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "KNOWN-DIFFERENCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kd := range iwSynthKnown {
		if hits[kd.id] == 0 {
			t.Errorf("known difference %s never occurred", kd.id)
		}
		if !regexp.MustCompile(`(?m)^#+ .*\b` + regexp.QuoteMeta(kd.id) + `\b`).Match(doc) {
			t.Errorf("known difference %s is not documented", kd.id)
		}
	}
	t.Logf("%d iWARP values equal to tshark's; differences: %v", compared, hits)
}
