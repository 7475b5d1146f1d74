package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFieldOptionsTshark requires -T fields with tshark's -E options to print
// exactly what tshark printed with them (testdata/tshark/options.tsv,
// gen-options.sh).
func TestFieldOptionsTshark(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "options.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	fields := []string{"-e", "frame.number", "-e", "ip.src", "-e", "ip.addr", "-e", "eth.addr", "-e", "infiniband.bth.opcode", "-e", "infiniband.reth.va"}
	blocks := strings.Split(string(data), "## ")[1:]
	if len(blocks) < 6 {
		t.Fatalf("%d option sets", len(blocks))
	}
	for _, b := range blocks {
		opts, want, _ := strings.Cut(b, "\n")
		args := append([]string{"dissect", "-T", "fields"}, strings.Fields(opts)...)
		args = append(append(args, fields...), filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap"))
		var out, errOut bytes.Buffer
		if code := run(args, nil, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", opts, code, errOut.String())
		}
		if out.String() != want {
			t.Errorf("%s: differs from tshark:\n%s", opts, firstDiff(want, out.String()))
		}
	}
	for _, bad := range []string{"occurrence=2", "quote=x", "header=yes", "nonsense", "foo=1"} {
		var out, errOut bytes.Buffer
		code := run([]string{"dissect", "-T", "fields", "-e", "ip.src", "-E", bad, filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut)
		if code != exitUsage || out.Len() != 0 {
			t.Errorf("-E %s: exit %d, output %q", bad, code, out.String())
		}
	}
}

// TestCountRejected: -c 0 and negative counts are refused, as tshark does.
func TestCountRejected(t *testing.T) {
	for _, c := range []string{"0", "-1"} {
		var out, errOut bytes.Buffer
		code := run([]string{"dissect", "-c", c, filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut)
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), "packet count") {
			t.Errorf("-c %s: exit %d, %q %q", c, code, out.String(), errOut.String())
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n tshark    " + al[i] + "\n rdmashark " + bl[i]
		}
	}
	return "lengths differ: " + itoa(len(al)) + " and " + itoa(len(bl)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }
