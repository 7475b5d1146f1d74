package html

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
)

// manyConnections writes a capture of many connections that close, as
// report/analyze_spill_test.go does: rxe-nfs3 (two NFS connections with
// findings) then 20 copies of rxe-rping, three times over: 66
// connections, more than the page draws by default, each copy's
// connections new ones and released during the read.
func manyConnections(t *testing.T) string {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
			t.Fatalf("%s: not a little-endian pcap file", name)
		}
		return b
	}
	nfs, rping := read("rxe-nfs3.pcap"), read("rxe-rping.pcap")
	c := append([]byte(nil), nfs[:24]...)
	for range 3 {
		c = append(c, nfs[24:]...)
		c = append(c, bytes.Repeat(rping[24:], 20)...)
	}
	path := filepath.Join(t.TempDir(), "many.pcap")
	if err := os.WriteFile(path, c, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStreamMatchesWhole: the page written as it is drawn — the diagrams
// one at a time, the findings from the document's walk, the connections
// released during the read taken out of memory by report.ConnSpill and
// read back — is byte for byte the page built whole and then written
// (refBuild and the template as they were, on the document kept whole), on
// every bundled capture and on one of many connections, with the bounds at
// their defaults and cut low. It fails when the spill took no connection,
// no finding was pinned or no connection went without a diagram (the
// comparison would prove little).
func TestStreamMatchesWhole(t *testing.T) {
	var files []string
	filepath.WalkDir(filepath.Join("..", "..", "testdata", "pcaps"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 20 {
		t.Fatalf("only %d captures found", len(files))
	}
	many := manyConnections(t)
	files = append(files, many)
	// From the first released connection on (every diagram's connection
	// spilled), and from the second.
	after := report.SpillConnsAfter(0)
	defer report.SpillConnsAfter(after)
	variants := []Options{{}, {MaxDetail: 3, MaxConnections: 2}}
	spilled, pinned, undrawn := 0, 0, 0
	for _, name := range files {
		for vi, opts := range variants {
			if vi > 0 && testing.Short() && name != many {
				continue
			}
			a, col, _, _ := analysis(t, name, opts, false)
			var want bytes.Buffer
			wp := refBuild(a, col)
			if err := wholeTemplate().Execute(&want, wp); err != nil {
				t.Fatal(err)
			}
			for _, f := range wp.Findings {
				if f.Pinned {
					pinned++
				}
			}
			if len(wp.Connections) < a.NumConnections() {
				undrawn++
			}
			for _, spillAfter := range []int{-1, 0, 1} {
				spill := spillAfter >= 0
				if spill {
					report.SpillConnsAfter(spillAfter)
				}
				a, col, _, n := analysis(t, name, opts, spill)
				spilled += n
				p, err := Build(a, col)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := p.Write(&got); err != nil {
					t.Fatal(err)
				}
				if g, w := got.Bytes(), want.Bytes(); !bytes.Equal(g, w) {
					i := 0
					for i < len(g) && i < len(w) && g[i] == w[i] {
						i++
					}
					t.Errorf("%s %+v spill after %d: pages differ at byte %d of %d/%d:\n got %q\nwant %q", name, opts, spillAfter, i, len(g), len(w),
						g[max(0, i-200):min(len(g), i+200)], w[max(0, i-200):min(len(w), i+200)])
				}
			}
		}
	}
	if spilled < 100 || pinned < 10 || undrawn < 2 {
		t.Fatalf("%d connections spilled, %d findings pinned, %d pages with connections not drawn: the comparison proves little", spilled, pinned, undrawn)
	}
	t.Logf("%d connections spilled, %d findings pinned, %d pages with connections not drawn", spilled, pinned, undrawn)
}

// TestStreamReadBackError: a connection the spill cannot read back (its
// file gone) fails the page with the error, when the page is built and
// when it is written, rather than leaving the connection out.
func TestStreamReadBackError(t *testing.T) {
	after := report.SpillConnsAfter(0)
	defer report.SpillConnsAfter(after)
	a, col, _, n := analysis(t, manyConnections(t), Options{}, true)
	if n == 0 {
		t.Fatal("the spill took no connection")
	}
	p, err := Build(a, col)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	var out bytes.Buffer
	if err := p.Write(&out); err == nil || !strings.Contains(err.Error(), "reading connection") {
		t.Errorf("Write after the spill closed: %v", err)
	}
	if _, err := Build(a, col); err == nil || !strings.Contains(err.Error(), "reading connection") {
		t.Errorf("Build after the spill closed: %v", err)
	}
}
