package longstream_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

var captures = []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"}

func load(t testing.TB, name string) *longstream.Capture {
	t.Helper()
	c, err := longstream.Load(filepath.Join("..", "..", "testdata", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type rec struct {
	data   []byte
	ts     int64
	length int
}

func readAll(t testing.TB, r io.Reader, name string) []rec {
	t.Helper()
	sr, err := source.NewReader(r, name)
	if err != nil {
		t.Fatal(err)
	}
	var out []rec
	for {
		x, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec{slices.Clone(x.Data), x.CI.Timestamp.UnixNano(), x.CI.Length})
	}
}

// TestRepetitionZeroIsTheCapture: one repetition is the capture record for
// record, bytes, lengths and timestamps.
func TestRepetitionZeroIsTheCapture(t *testing.T) {
	for _, name := range captures {
		f, err := os.Open(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		want := readAll(t, f, name)
		f.Close()
		got := readAll(t, load(t, name).Reader(1), name)
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].data, want[i].data) || got[i].ts != want[i].ts || got[i].length != want[i].length {
				t.Fatalf("%s: record %d differs", name, i+1)
			}
		}
	}
}

// tcpChecksumOK verifies a TCP checksum the way a receiver does (RFC 1071:
// the one's complement sum over pseudo header and segment, checksum
// included, is all ones).
func tcpChecksumOK(ip []byte) bool {
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	seg := ip[ihl:total]
	var sum uint32
	for i := 12; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	sum += 6 + uint32(len(seg))
	for i := 0; i+1 < len(seg); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(seg[i:]))
	}
	if len(seg)%2 == 1 {
		sum += uint32(seg[len(seg)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// TestChecksums: in a later repetition every RoCEv2 packet's ICRC (IBA
// Annex A17.3.3, computed by roce.ICRCv2) and every TCP checksum are valid,
// as they are in the capture; the records are as long as the capture's,
// and only the shifted fields (and the CRCs) differ.
func TestChecksums(t *testing.T) {
	for _, name := range captures {
		c := load(t, name)
		var roceN, tcpN int
		for i := 0; i < c.Records(); i++ {
			_, _, orig := c.Record(0, i, nil)
			_, _, b := c.Record(5, i, nil)
			if len(b) != len(orig) {
				t.Fatalf("%s record %d: length %d, want %d", name, i+1, len(b), len(orig))
			}
			if len(b) < 34 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
				continue
			}
			ip := b[14:]
			switch ip[9] {
			case 17:
				crc, err := roce.ICRCv2(ip)
				total := int(binary.BigEndian.Uint16(ip[2:]))
				if err != nil || crc != binary.BigEndian.Uint32(ip[total-4:]) {
					t.Errorf("%s record %d: ICRC 0x%08x, computed 0x%08x (%v)", name, i+1, binary.BigEndian.Uint32(ip[total-4:]), crc, err)
				}
				roceN++
			case 6:
				if !tcpChecksumOK(ip) {
					t.Errorf("%s record %d: bad TCP checksum", name, i+1)
				}
				tcpN++
			}
			if bytes.Equal(b, orig) && ip[9] == 17 {
				t.Errorf("%s record %d: RoCE packet unchanged", name, i+1)
			}
		}
		if roceN+tcpN < c.Records()/2 {
			t.Errorf("%s: only %d RoCE and %d TCP packets checked", name, roceN, tcpN)
		}
	}
}

// connFacts is what a repetition must keep of a connection.
type connFacts struct {
	Transport                  dissect.Transport
	State                      dissect.ConnState
	Negotiated                 bool
	Thresholds                 string
	Dir                        [2]dissect.Counters
	ServicePort                uint16
	Calls, Replies, Rebuilt    uint64
	Outstanding, BadHeaders    int
	CallsNoReply, Unattached   uint64
	Findings                   string
	ClientQPN, ServerQPN, Comm uint32
	ClientPort                 uint16
}

type txnFacts struct {
	xid                  uint32
	outcome              rpcordma.TxnOutcome
	rpcBytes, replyBytes int
	rebuilt, hasProgram  bool
	proc                 uint32
}

// run analyses n repetitions of a capture with the engine and the checks.
func run(t *testing.T, c *longstream.Capture, n int) (*dissect.Engine, []connFacts, [][]txnFacts) {
	t.Helper()
	var txns [][]txnFacts
	var opts dissect.Options
	txn := func(x *rpcordma.Transaction) {
		for len(txns) < x.Conn.ID {
			txns = append(txns, nil)
		}
		f := txnFacts{xid: x.XID, outcome: x.Outcome, hasProgram: x.HasProgram, proc: x.Procedure}
		if x.Call != nil {
			f.rpcBytes, f.rebuilt = x.Call.RPCBytes, x.Call.Rebuilt
		}
		if x.Reply != nil {
			f.replyBytes = x.Reply.RPCBytes
		}
		txns[x.Conn.ID-1] = append(txns[x.Conn.ID-1], f)
	}
	runner := check.NewRunner(check.Config{})
	opts.Observer = runner
	r, err := source.NewReader(c.Reader(n), "longstream")
	if err != nil {
		t.Fatal(err)
	}
	e := dissect.NewEngine(rpcordma.With(opts, nfs.NewBinding(), txn))
	if err := e.Run(r, func(p *dissect.Packet) error { runner.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	res := runner.Finish(e.Conns.Connections())
	findings := map[int][]string{}
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			findings[cr.ID] = append(findings[cr.ID], fmt.Sprintf("%s:%v:%d:%d", ch.Rule, ch.Status, ch.Findings, ch.Checked))
		}
	}
	var facts []connFacts
	for _, cn := range e.Conns.Connections() {
		f := connFacts{Transport: cn.Transport, State: cn.State, Negotiated: cn.Negotiated, Thresholds: fmt.Sprint(rpcordma.Thresholds(cn)),
			Dir: cn.Dir, ServicePort: cn.ServicePort, Findings: strings.Join(findings[cn.ID], " "),
			ClientQPN: cn.Client.QPN, ServerQPN: cn.Server.QPN, Comm: cn.Client.CommID, ClientPort: cn.Client.Port}
		if s := rpcordma.Stats(cn); s != nil {
			f.Calls, f.Replies, f.Rebuilt = s.Calls[0]+s.Calls[1], s.Replies[0]+s.Replies[1], s.Rebuilt
			f.Outstanding, f.BadHeaders = s.Outstanding, int(s.BadHeaders[0]+s.BadHeaders[1])
			f.CallsNoReply, f.Unattached = s.CallsWithoutReply, s.UnattachedOps
		}
		facts = append(facts, f)
	}
	return e, facts, txns
}

// TestRepetitionsAreNewConnections: four repetitions of each capture make
// four times its connections; each repetition's connections are the
// capture's — same state, thresholds, traffic, RPC statistics, check
// results, transactions — with QPNs, Comm IDs, client ports and XIDs moved
// by the steps, and every RoCE ICRC valid.
func TestRepetitionsAreNewConnections(t *testing.T) {
	const n = 4
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			c := load(t, name)
			e1, one, txn1 := run(t, c, 1)
			en, all, txnN := run(t, c, n)
			if len(all) != n*len(one) || len(one) < 2 {
				t.Fatalf("%d connections for %d repetitions, %d for one", len(all), n, len(one))
			}
			if en.Stats.ICRC[dissect.CRCBad] != 0 || en.Stats.ICRC[dissect.CRCGood] != n*e1.Stats.ICRC[dissect.CRCGood] {
				t.Errorf("ICRC verdicts %v, one repetition %v", en.Stats.ICRC, e1.Stats.ICRC)
			}
			for k := 0; k < n; k++ {
				for i, want := range one {
					got := all[k*len(one)+i]
					d := uint32(k)
					if want.Transport == dissect.TransportRoCE {
						want.ClientQPN += d * longstream.QPNStep
						want.ServerQPN += d * longstream.QPNStep
						want.Comm += d * longstream.CommIDStep
					} else {
						want.ClientPort += uint16(k * longstream.PortStep)
					}
					if got != want {
						t.Errorf("repetition %d connection %d:\n got %+v\nwant %+v", k, i+1, got, want)
					}
					gt, wt := txnN[k*len(one)+i], txn1[i]
					if len(gt) != len(wt) {
						t.Errorf("repetition %d connection %d: %d transactions, want %d", k, i+1, len(gt), len(wt))
						continue
					}
					for j := range wt {
						w := wt[j]
						w.xid += d * longstream.XIDStep
						if gt[j] != w {
							t.Errorf("repetition %d connection %d transaction %d: %+v, want %+v", k, i+1, j, gt[j], w)
							break
						}
					}
				}
			}
		})
	}
}

// TestXIDsAsTsharkSeesThem: tshark reads a two-repetition stream; in every
// frame that carries RPC-over-RDMA, every rpcordma.xid and rpc.xid of the
// second repetition is the first's moved by XIDStep, packet for packet
// (XIDs inside Long Calls and Replies included: tshark decodes them from
// the reassembled chunks). Plain RPC over TCP (portmap, MOUNT) is not
// RPC-over-RDMA and keeps its XIDs.
func TestXIDsAsTsharkSeesThem(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	for _, name := range captures {
		c := load(t, name)
		path := filepath.Join(t.TempDir(), "two.pcap")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, c.Reader(2)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.protocols", "-e", "rpcordma.xid", "-e", "rpc.xid").Output()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if len(lines) != 2*c.Records() {
			t.Fatalf("%s: tshark printed %d lines for %d records", name, len(lines), 2*c.Records())
		}
		seen := 0
		for i := 0; i < c.Records(); i++ {
			pa, la, _ := strings.Cut(lines[i], "\t")
			pb, lb, _ := strings.Cut(lines[c.Records()+i], "\t")
			if pa != pb {
				t.Fatalf("%s record %d: protocols %s then %s", name, i+1, pa, pb)
			}
			if !strings.Contains(pa, "rpcordma") {
				continue
			}
			a, b := xids(t, la), xids(t, lb)
			if len(a) != len(b) {
				t.Fatalf("%s record %d: XIDs %v then %v", name, i+1, a, b)
			}
			for j := range a {
				if b[j] != a[j]+longstream.XIDStep {
					t.Errorf("%s record %d: XID 0x%08x in the second repetition, 0x%08x in the first", name, i+1, b[j], a[j])
				}
				seen++
			}
		}
		if seen < 1000 {
			t.Errorf("%s: only %d XIDs compared", name, seen)
		}
	}
}

func xids(t *testing.T, line string) []uint32 {
	var out []uint32
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == '\t' || r == ',' }) {
		v, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), 16, 32)
		if err != nil {
			t.Fatalf("XID %q: %v", f, err)
		}
		out = append(out, uint32(v))
	}
	return out
}
