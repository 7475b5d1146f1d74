package dissect_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestTCPStreamLikeTshark: tcp.stream starts a new stream where tshark 4.0
// does — a SYN without ACK whose sequence number is not its direction's
// base (the 4-tuple reused) — and not at a SYN retransmitted with the same
// ISN, even after a RST or FIN (issue 28). The expected numbers are
// tshark's (testdata/tcpstream/README.md).
func TestTCPStreamLikeTshark(t *testing.T) {
	files, err := filepath.Glob("testdata/tcpstream/*.pcap")
	if err != nil || len(files) < 4 {
		t.Fatalf("cases: %v %v", files, err)
	}
	for _, f := range files {
		want := tsharkStreams(t, strings.TrimSuffix(f, ".pcap")+".tshark.tsv")
		e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
		for i, c := range loadCapture(t, f) {
			p := &dissect.Packet{Number: c.num, Timestamp: c.ts, LinkType: c.lt, CaptureLength: len(c.data), Length: c.length}
			e.Process(p, c.data)
			if i >= len(want) {
				t.Fatalf("%s: more packets than tshark shows", f)
			}
			if p.TCPStream != want[i] {
				t.Errorf("%s packet %d: tcp.stream %d, tshark %d", f, c.num, p.TCPStream, want[i])
			}
		}
	}
}

// tsharkStreams reads the last column (tcp.stream) of a tshark -T fields file.
func tsharkStreams(t *testing.T, path string) []int {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []int
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(cols[len(cols)-1])
		if err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, n)
	}
	return out
}
