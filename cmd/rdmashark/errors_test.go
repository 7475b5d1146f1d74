package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Bad input through the command line (DEVELOPERS.md "How work gets done":
// a clear error naming the file and packet, everything before it reported,
// exit status 2), and the input variants that must give the same answer:
// standard input, gzip, pcapng with several link types.

const errPcaps = "../../testdata/pcaps"

// cliResult is what one run of the command printed.
type cliResult struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, stdin []byte, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errb)
	return cliResult{code, out.String(), errb.String()}
}

// cliAnalysis decodes analyze's JSON document.
func cliAnalysis(t *testing.T, r cliResult) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("analyze JSON: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return doc
}

// pcapRecords returns the byte offsets of the records of a little-endian
// microsecond pcap file (24-octet file header, 16-octet record headers
// whose third word is the captured length), read without the code under
// test.
func pcapRecords(t *testing.T, data []byte) []int {
	t.Helper()
	if binary.LittleEndian.Uint32(data) != 0xa1b2c3d4 {
		t.Fatalf("not a little-endian µs pcap: % x", data[:4])
	}
	var offs []int
	for off := 24; off < len(data); {
		offs = append(offs, off)
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	}
	return offs
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTruncatedLastRecord cuts a real capture in the middle of its last
// record: the error names the file and that record's number, exit status
// 2, and analyze still reports every record before it.
func TestTruncatedLastRecord(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(errPcaps, "rxe-rping.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	offs := pcapRecords(t, data)
	last := offs[len(offs)-1]
	capLen := int(binary.LittleEndian.Uint32(data[last+8:]))
	for _, cut := range []struct {
		name string
		at   int
	}{
		{"mid-data", last + 16 + capLen/2},
		{"mid-header", last + 7},
	} {
		t.Run(cut.name, func(t *testing.T) {
			path := writeTemp(t, "cut.pcap", data[:cut.at])
			r := cli(t, nil, "analyze", "--format", "json", path)
			if r.code != 2 {
				t.Errorf("exit status %d, want 2", r.code)
			}
			want := path + ": packet " + strconv.Itoa(len(offs)) + ": truncated"
			if !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, want)
			}
			doc := cliAnalysis(t, r)
			if got := doc["packets"].(float64); int(got) != len(offs)-1 {
				t.Errorf("packets %v, want the %d records before the cut", got, len(offs)-1)
			}
			// The rping connection is still reported, up to the record
			// before the cut: the DREQ (76 of 77; tshark shows the DREP,
			// the one cut here, as 77).
			if cs := doc["connections"].([]any); len(cs) != 1 || cs[0].(map[string]any)["state"] != "closed" ||
				int(cs[0].(map[string]any)["last_packet"].(float64)) != len(offs)-1 {
				t.Errorf("connections %v", cs)
			}
			if errs, _ := doc["errors"].([]any); len(errs) != 1 || !strings.Contains(errs[0].(string), "truncated") {
				t.Errorf("errors %v", doc["errors"])
			}
			// dissect prints the records before the cut, then fails.
			d := cli(t, nil, "dissect", path)
			if d.code != 2 || strings.Count(d.stdout, "\n") != len(offs)-1 || !strings.Contains(d.stderr, want) {
				t.Errorf("dissect: exit %d, %d lines, stderr %q", d.code, strings.Count(d.stdout, "\n"), d.stderr)
			}
		})
	}
}

// TestGarbageInput: bytes that are no capture are refused with the file's
// name, exit 2, for every command that reads a capture.
func TestGarbageInput(t *testing.T) {
	garbage := bytes.Repeat([]byte("this is not a capture file\n"), 40)
	path := writeTemp(t, "garbage.pcap", garbage)
	for _, args := range [][]string{{"analyze", path}, {"analyze", "--format", "json", path}, {"dissect", path}, {"dissect", "-V", path}} {
		r := cli(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, path+": not a pcap or pcapng file") || r.stdout != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// Too short even for a magic number, and empty.
	for _, b := range [][]byte{{0xd4, 0xc3}, {}} {
		p := writeTemp(t, "short.pcap", b)
		if r := cli(t, nil, "analyze", p); r.code != 2 || !strings.Contains(r.stderr, p) {
			t.Errorf("%d bytes: exit %d stderr %q", len(b), r.code, r.stderr)
		}
	}
	// On standard input.
	if r := cli(t, garbage, "analyze", "-r", "-"); r.code != 2 || !strings.Contains(r.stderr, "not a pcap or pcapng file") {
		t.Errorf("stdin: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestUnsupportedLinkType: a capture of a link type rdmashark does not
// read (PPP, 9) is a one-line error naming it, exit 2.
func TestUnsupportedLinkType(t *testing.T) {
	var b bytes.Buffer
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], 9) // LINKTYPE_PPP
	b.Write(h)
	rec := make([]byte, 16)
	binary.LittleEndian.PutUint32(rec[8:], 4)
	binary.LittleEndian.PutUint32(rec[12:], 4)
	b.Write(rec)
	b.Write([]byte{0xff, 0x03, 0x00, 0x21})
	path := writeTemp(t, "ppp.pcap", b.Bytes())
	for _, cmd := range []string{"analyze", "dissect"} {
		r := cli(t, nil, cmd, path)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "link type 9 (PPP) is not supported") ||
			!strings.Contains(lines[0], path) {
			t.Errorf("%s: exit %d stderr %q", cmd, r.code, r.stderr)
		}
	}
}

// normalized drops the "file" key, which names the input.
func normalized(t *testing.T, r cliResult) string {
	t.Helper()
	doc := cliAnalysis(t, r)
	delete(doc, "file")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStdinAndGzip: the same capture read from a file, from standard input
// (-r -), gzip-compressed from a file and gzip-compressed from standard
// input gives the same analysis. rxe-nfs3.pcap also shows the analyze JSON
// contract on real data: two closed NFS connections on port 20049 with
// the private data of their REQ/REP (the bytes are quoted and checked in
// dissect's TestRealNFSPrivateData).
func TestStdinAndGzip(t *testing.T) {
	for _, name := range []string{"rxe-rping.pcap", "rxe-nfs3.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(errPcaps, name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var gz bytes.Buffer
			w := gzip.NewWriter(&gz)
			w.Write(data)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			gzPath := writeTemp(t, name+".gz", gz.Bytes())

			file := cli(t, nil, "analyze", "--format", "json", path)
			if file.code != 0 {
				t.Fatalf("file: exit %d: %s", file.code, file.stderr)
			}
			want := normalized(t, file)
			for _, c := range []struct {
				what  string
				stdin []byte
				args  []string
			}{
				{"stdin", data, []string{"analyze", "--format", "json", "-r", "-"}},
				{"stdin positional", data, []string{"analyze", "--format", "json", "-"}},
				{"gzip file", nil, []string{"analyze", "--format", "json", gzPath}},
				{"gzip stdin", gz.Bytes(), []string{"analyze", "--format", "json", "-r", "-"}},
			} {
				r := cli(t, c.stdin, c.args...)
				if r.code != 0 {
					t.Errorf("%s: exit %d: %s", c.what, r.code, r.stderr)
					continue
				}
				if got := normalized(t, r); got != want {
					t.Errorf("%s: analysis differs from the file's", c.what)
				}
			}
			// Standard input has one name, in reports as in errors (issue 13).
			if cliAnalysis(t, cli(t, data, "analyze", "--format", "json", "-r", "-"))["file"] != "<stdin>" {
				t.Error(`"file" of standard input is not "<stdin>"`)
			}
			if name != "rxe-nfs3.pcap" {
				return
			}
			doc := cliAnalysis(t, file)
			if doc["packets"].(float64) != 7245 {
				t.Errorf("packets %v", doc["packets"])
			}
			cs := doc["connections"].([]any)
			if len(cs) != 2 {
				t.Fatalf("%d connections", len(cs))
			}
			for _, ci := range cs {
				c := ci.(map[string]any)
				pd := c["private_data"].(map[string]any)
				cl, sv := pd["client"].(map[string]any), pd["server"].(map[string]any)
				th := c["inline_threshold"].(map[string]any)
				if c["service_port"].(float64) != 20049 || c["state"] != "closed" || c["transport"] != "roce" ||
					cl["present"] != true || cl["offset"].(float64) != 36 || cl["version"].(float64) != 1 ||
					cl["remote_invalidate"] != true || cl["send_size"].(float64) != 4096 || cl["receive_size"].(float64) != 4096 ||
					sv["present"] != true || sv["offset"].(float64) != 0 || sv["remote_invalidate"] != false ||
					sv["send_size"].(float64) != 4096 || sv["receive_size"].(float64) != 4096 ||
					th["client_to_server"].(float64) != 4096 || th["server_to_client"].(float64) != 4096 ||
					c["remote_invalidation_negotiated"] != false {
					t.Errorf("connection %v: %v", c["id"], c)
				}
			}
		})
	}
}

// TestPcapngTwoLinkTypes: a pcapng file whose interfaces are Ethernet and
// Linux SLL2 (testdata/pcaps/synthetic/eth-sll2.pcapng) decodes on both;
// the SEND on Ethernet and its ACK on SLL2 make one connection.
func TestPcapngTwoLinkTypes(t *testing.T) {
	path := filepath.Join(errPcaps, "synthetic", "eth-sll2.pcapng")
	r := cli(t, nil, "dissect", "-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.destqp",
		"-e", "infiniband.invariant.crc", path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	wantQP := []string{"0x000022", "0x000033", "0x000044", "0x000055"}
	if len(lines) != 4 {
		t.Fatalf("%d lines: %q", len(lines), r.stdout)
	}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != strconv.Itoa(i+1) || f[1] != wantQP[i] || f[2] == "" {
			t.Errorf("line %d: %q", i+1, l)
		}
	}
	doc := cliAnalysis(t, cli(t, nil, "analyze", "--format", "json", path))
	cs := doc["connections"].([]any)
	if len(cs) != 2 {
		t.Fatalf("%d connections", len(cs))
	}
	c := cs[0].(map[string]any)
	cl, sv := c["client"].(map[string]any), c["server"].(map[string]any)
	if cl["qpn"].(float64) != 0x33 || sv["qpn"].(float64) != 0x22 || c["state"] != "no-setup" {
		t.Errorf("connection across the two interfaces: %v", c)
	}
	icrc := doc["icrc"].(map[string]any)
	if icrc["good"].(float64) != 4 {
		t.Errorf("ICRC %v", icrc)
	}
}
