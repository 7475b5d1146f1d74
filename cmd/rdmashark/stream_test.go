package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// Streaming (issue 6): every command that reads a capture takes it on
// standard input (-r - or "-") and processes it as it arrives.

// pcapRecordEnds returns where each record of a pcap file ends (the
// 24-octet file header, then a 16-octet header and the captured octets per
// record: pcap draft, sections 4 and 5).
func pcapRecordEnds(t *testing.T, data []byte) []int {
	t.Helper()
	if len(data) < 24 || binary.LittleEndian.Uint32(data) != 0xa1b2c3d4 {
		t.Fatal("not a little-endian microsecond pcap file")
	}
	var ends []int
	for off := 24; off < len(data); {
		if off+16 > len(data) {
			t.Fatal("cut record header")
		}
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
		ends = append(ends, off)
	}
	return ends
}

// watchWriter is an output several goroutines may look at: reached is
// closed once it holds at least n octets.
type watchWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	n       int
	reached chan struct{} // never changes: readers may select on it any time
	closed  bool
}

func newWatchWriter(n int) *watchWriter { return &watchWriter{n: n, reached: make(chan struct{})} }

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.buf.Len() >= w.n && !w.closed {
		close(w.reached)
		w.closed = true
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestDissectStdinStreams feeds a real capture to `dissect -r -` through a
// pipe: the file header and the first 20 packets, then nothing until the
// output holds those 20 packets' lines (exactly what `dissect -c 20` prints
// of the file), then the rest. What dissect printed while its input waited
// must be those lines — printed before the rest of the input existed — and
// the whole output must equal the file's. In every output format, and for
// both transports. (The wait for the first lines has a generous bound only
// so that a failure does not hang the test: the assertion is about what
// comes before what, not about speed.)
func TestDissectStdinStreams(t *testing.T) {
	const k = 20
	for _, file := range []string{rpingPcap, "../../testdata/pcaps/siw-rping.pcap"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		ends := pcapRecordEnds(t, data)
		if len(ends) <= k {
			t.Fatalf("%s: %d records", file, len(ends))
		}
		for _, format := range [][]string{nil, {"-V"}, {"-T", "jsonl"}, {"-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "frame.len", "-e", "infiniband.bth.psn"}} {
			name := file[strings.LastIndex(file, "/")+1:] + "/" + strings.Join(format, " ")
			t.Run(name, func(t *testing.T) {
				args := append([]string{"dissect"}, format...)
				first := cli(t, nil, append(append([]string{}, args...), "-c", strconv.Itoa(k), file)...)
				whole := cli(t, nil, append(append([]string{}, args...), file)...)
				if first.code != 0 || whole.code != 0 || first.stdout == "" || !strings.HasPrefix(whole.stdout, first.stdout) || len(whole.stdout) == len(first.stdout) {
					t.Fatalf("from the file: exit %d/%d; the first %d packets' output is not a proper prefix of the whole", first.code, whole.code, k)
				}
				code, out, stderr := runHeld(t, append(args, "-r", "-"), data[:ends[k-1]], data[ends[k-1]:], first.stdout)
				if code != 0 || out != whole.stdout {
					t.Errorf("exit %d (%s); output from the pipe differs from the file's", code, stderr)
				}
			})
		}
	}
}

// runHeld runs the command line args with standard input a pipe that gets
// head, then nothing until the output is as long as want — which it must
// then equal: what the command wrote while its input waited — then tail.
// It returns the exit status, the whole output and standard error. The
// command ending before its input did fails the test, and so does want not
// appearing (the bound on that wait, a minute, only keeps a failure from
// hanging the test: the assertion is about what comes before what).
func runHeld(t *testing.T, args []string, head, tail []byte, want string) (int, string, string) {
	t.Helper()
	pr, pw := io.Pipe()
	out := newWatchWriter(len(want))
	reached := out.reached // Write clears the field under its lock
	var errb bytes.Buffer
	done := make(chan int)
	go func() { done <- run(args, pr, out, &errb) }()
	if _, err := pw.Write(head); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case code := <-done:
		t.Fatalf("%s ended (exit %d) before its input did: %s", args[0], code, errb.String())
	case <-time.After(time.Minute):
		pw.CloseWithError(io.ErrUnexpectedEOF)
		t.Fatalf("%s: what it should write while its input waits did not appear; got %d of %d octets: %q", args[0], len(out.String()), len(want), out.String())
	}
	if got := out.String(); got != want {
		t.Fatalf("while the input waited %s wrote\n%s\nwant\n%s", args[0], got, want)
	}
	if _, err := pw.Write(tail); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	code := <-done
	return code, out.String(), errb.String()
}

// TestEveryCommandReadsStdin: analyze, transactions, check and dissect
// read a capture from standard input that arrives a few octets at a time
// (reads of at most 7 octets, halved again by iotest.HalfReader: every
// record header and packet split), and print exactly what they print
// reading the file (named "<stdin>").
func TestEveryCommandReadsStdin(t *testing.T) {
	data, err := os.ReadFile(nfs3Pcap)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		stdin string // how the command names standard input
	}{
		{[]string{"analyze", "--format", "json"}, "-r"},
		{[]string{"transactions", "--format", "json"}, "-r"},
		{[]string{"exchanges", "--format", "json"}, "-r"},
		{[]string{"check", "--format", "json"}, ""}, // check takes its files as arguments
		{[]string{"dissect", "-T", "fields", "-e", "frame.number", "-e", "rpcordma.xid", "-e", "rpc.xid"}, "-r"},
	} {
		fromFile := cli(t, nil, append(append([]string{}, tc.args...), nfs3Pcap)...)
		args := append([]string{}, tc.args...)
		if tc.stdin != "" {
			args = append(args, tc.stdin)
		}
		var out, errb bytes.Buffer
		code := run(append(args, "-"), iotest.HalfReader(&chunkReader{data, 7}), &out, &errb)
		want := strings.ReplaceAll(fromFile.stdout, nfs3Pcap, "<stdin>")
		if code != fromFile.code || out.String() != want || len(want) < 1000 {
			t.Errorf("%s: exit %d (file: %d), stderr %q; output from standard input differs from the file's", tc.args[0], code, fromFile.code, errb.String())
		}
	}
}

// chunkReader hands out at most n octets per Read, as a pipe from a slow
// writer does.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}
