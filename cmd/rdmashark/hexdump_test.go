package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHexDumpTshark: dissect -x prints rxe-rping.pcap's bytes exactly as
// tshark -x does (testdata/tshark/rxe-rping.hex.txt, gen-hex-time.sh).
func TestHexDumpTshark(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "rxe-rping.hex.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-x", filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if out.String() != string(want) {
		t.Errorf("differs from tshark -x:\n%s", firstDiff(string(want), out.String()))
	}
}

// TestTimeFormatsTshark: the summary lines' time column in every -t format
// is tshark's _ws.col.Time for that format (rxe-rping.time.tsv, made in UTC).
func TestTimeFormatsTshark(t *testing.T) {
	saved := time.Local
	time.Local = time.UTC
	defer func() { time.Local = saved }()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "rxe-rping.time.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f, v, _ := strings.Cut(l, "\t")
		want[f] = append(want[f], strings.TrimSpace(v))
	}
	if len(want) != 10 {
		t.Fatalf("%d formats", len(want))
	}
	for f, times := range want {
		var out, errOut bytes.Buffer
		if code := run([]string{"dissect", "-t", f, filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut); code != 0 {
			t.Fatalf("-t %s: exit %d: %s", f, code, errOut.String())
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if len(lines) != len(times) {
			t.Fatalf("-t %s: %d lines, tshark %d", f, len(lines), len(times))
		}
		for i, l := range lines {
			_, rest, _ := strings.Cut(strings.TrimLeft(l, " "), " ")
			if !strings.HasPrefix(strings.TrimLeft(rest, " "), times[i]+" ") {
				t.Errorf("-t %s: frame %d: %q, tshark's time %q", f, i+1, l[:min(len(l), 50)], times[i])
				break
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-t", "x", filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut); code != exitUsage {
		t.Errorf("-t x: exit %d", code)
	}
}

// TestQuiet: -q prints no packets; with -w it still writes them.
func TestQuiet(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-q", capture}, nil, &out, &errOut); code != 0 || out.Len() != 0 {
		t.Errorf("-q: exit %d, %d bytes out", code, out.Len())
	}
	w := filepath.Join(t.TempDir(), "q.pcapng")
	if code := run([]string{"dissect", "-q", "-Y", "udp", "-w", w, capture}, nil, &out, &errOut); code != 0 || out.Len() != 0 {
		t.Errorf("-q -w: exit %d, %d bytes out", code, out.Len())
	}
	if st, err := os.Stat(w); err != nil || st.Size() < 1000 {
		t.Errorf("-q -w wrote %v %v", st, err)
	}
}
