package iser_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/iser"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func init() { check.Register(iser.Rules()...) }

// run analyses a capture with RPC-over-RDMA and iSER registered, as the
// command does (NVMe/RDMA's plug-in may not be imported here: a plug-in
// imports no other), and returns the engine, the exchanges and the checks.
func run(t testing.TB, name string) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	return ulptest.Run(t, name, rpcordma.New(nfs.NewBinding(), nfs.RDMAPort), iser.New())
}

// tsharkPDUs reads testdata/tshark/iser/rxe-iser.pdus.tsv (gen.sh there):
// frame -> field -> value, the frames where tshark decoded an iSCSI PDU.
func tsharkPDUs(t testing.TB) (map[int]map[string]string, []int) {
	t.Helper()
	f, err := os.Open("../../testdata/tshark/iser/rxe-iser.pdus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan()
	header := strings.Split(sc.Text(), "\t")
	out := map[int]map[string]string{}
	var frames []int
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		row := map[string]string{}
		for i, v := range cols {
			if v != "" && i < len(header) {
				row[header[i]] = v
			}
		}
		if row["iscsi.opcode"] == "" {
			continue // KD-ISER-HEURISTIC: RDMA data taken for iSER
		}
		n, _ := strconv.Atoi(cols[0])
		out[n] = row
		frames = append(frames, n)
	}
	return out, frames
}

func num(t testing.TB, s string) uint64 {
	base := 10
	if strings.HasPrefix(s, "0x") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestPairingAgreesWithTshark: every request tshark decodes begins one of
// our exchanges and every response ends one, with the ITT tshark shows;
// tshark's own pairing (iscsi.response_frame) names the same response as
// ours (on the response's first packet: tshark shows a PDU on the Send's
// first packet, we on its last — all responses here are one packet); every
// SCSI Response's Send With Invalidate names the R_Key tshark shows.
func TestPairingAgreesWithTshark(t *testing.T) {
	e, xs, res := run(t, "ulp/rxe-iser.pcap")
	rows, frames := tsharkPDUs(t)
	// Our exchanges by the first packet of the request's Send (tshark's
	// frame) and by the response's packet.
	req, resp := map[int]*dissect.Exchange{}, map[int]*dissect.Exchange{}
	for i := range xs {
		x := &xs[i]
		if x.ULP != iser.Name {
			t.Fatalf("exchange of %q", x.ULP)
		}
		if x.RequestPacket != 0 {
			req[x.RequestPacket] = x
		}
		if x.ResponsePacket != 0 {
			resp[x.ResponsePacket] = x
		}
	}
	// Multi-packet requests: our RequestPacket is the last packet of the
	// Send. Map tshark's first packets to them through the capture's
	// Sends of the same connection (the Write(10)s with immediate data).
	firstToLast := sendSpans(t)
	scsi, answered := 0, 0
	for _, n := range frames {
		row := rows[n]
		op := num(t, row["iscsi.opcode"])
		itt := num(t, row["iscsi.initiatortasktag"])
		if op < 0x20 {
			x := req[firstToLast[n]]
			if x == nil {
				t.Errorf("frame %d (opcode %#x): begins no exchange", n, op)
				continue
			}
			if x.Key != itt {
				t.Errorf("frame %d: key %#x, tshark ITT %#x", n, x.Key, itt)
			}
			if op == 1 {
				scsi++
				if rf := row["iscsi.response_frame"]; rf != "" && int(num(t, rf)) != x.ResponsePacket {
					t.Errorf("frame %d: response %d, tshark %s", n, x.ResponsePacket, rf)
				}
			}
			continue
		}
		x := resp[n]
		if x == nil {
			t.Errorf("frame %d (opcode %#x): ends no exchange", n, op)
			continue
		}
		answered++
		if x.Key != itt || x.Outcome != dissect.Responded {
			t.Errorf("frame %d: key %#x %s, tshark ITT %#x", n, x.Key, x.Outcome, itt)
		}
		if ieth := row["infiniband.ieth"]; ieth != "" {
			k, _ := strconv.ParseUint(strings.Split(ieth, ",")[0], 16, 32)
			if !x.Invalidated || x.InvalidatedSTag != uint32(k) {
				t.Errorf("frame %d: invalidated %v %#x, tshark %s", n, x.Invalidated, x.InvalidatedSTag, ieth)
			}
		} else if x.Invalidated {
			t.Errorf("frame %d: invalidated, tshark no IETH", n)
		}
	}
	// tshark's counts: 148 SCSI commands, 2 Logins and a Text; each
	// answered (148 + 3 responses).
	if scsi != 148 || answered != 151 || len(xs) != 151 {
		t.Errorf("%d SCSI commands, %d responses, %d exchanges", scsi, answered, len(xs))
	}
	var failed []string
	for _, x := range xs {
		if !x.OK {
			failed = append(failed, x.Name+" "+x.Status)
		}
	}
	// The one failure tshark shows: REPORT SUPPORTED OPERATION CODES
	// answered CHECK CONDITION (frame 90).
	if len(failed) != 1 || failed[0] != "Report Supported Operation Codes Check Condition" {
		t.Errorf("failed: %v", failed)
	}
	checkHealthy(t, e, res)
}

// sendSpans maps the first packet of every Send of the capture to its
// last, from tshark's reading of the packets (rxe-iser.pdus.tsv's BTH
// opcodes: a SEND FIRST's Send ends at the next SEND LAST of the
// connection; this capture interleaves no two Sends of one direction).
func sendSpans(t testing.TB) map[int]int {
	f, err := os.Open("../../testdata/tshark/iser/rxe-iser.sends.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]int{}
	sc := bufio.NewScanner(f)
	sc.Scan()
	open := map[string]int{}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		n, _ := strconv.Atoi(c[0])
		k := c[1] + c[2] // source and destination QP
		switch c[3] {
		case "0":
			open[k] = n
		case "2", "22":
			out[open[k]] = n
		case "4", "23":
			out[n] = n
		}
	}
	return out
}

// checkHealthy: every connection is iSER's, every RDMA operation is
// attached to a task, and no rule finds anything on healthy traffic.
func checkHealthy(t *testing.T, e *dissect.Engine, res *check.Result) {
	t.Helper()
	for _, c := range e.Conns.Connections() {
		cn, _ := c.ULPData.(*iser.Connection)
		if c.ULP != iser.Name || cn == nil {
			t.Fatalf("connection %d: ULP %q", c.ID, c.ULP)
		}
		if cn.UnattachedRDMAOps != 0 || cn.BadPDUs != 0 || cn.ResponsesWithoutTask != 0 || cn.ITTReused != 0 || cn.TasksWithoutResponse != 0 {
			t.Errorf("connection %d: %+v", c.ID, cn)
		}
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("finding %s: %s", f.Rule, f.Message)
		}
	}
}

// TestRDMAAttachedAsTshark: every RDMA Write and RDMA Read Request tshark
// lists (rxe-iser.rdma.tsv: RETH R_Key and DMA length) is attached to the
// task that advertised its STag — the Read STag for the target's RDMA
// Writes, the Write STag for its RDMA Reads — for the same bytes per
// STag; and on the normal session every iSER rule was evaluated and
// passed.
func TestRDMAAttachedAsTshark(t *testing.T) {
	type key struct {
		stag  uint32
		write bool // RDMA Write (Data-In)
	}
	ours := map[key]uint64{}
	ops := 0
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-iser.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ck := check.NewRunner(check.Config{})
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{iser.New()}, Observer: ck,
		Exchange: func(x *dissect.Exchange) {
			tk := x.Detail.(*iser.Task)
			ops += tk.Ops
			// (The REPORT SUPPORTED OPERATION CODES answered CHECK
			// CONDITION advertised a Read STag the target never wrote.)
			if tk.RSV && x.WriteBytes > 0 {
				ours[key{tk.ReadSTag, true}] += x.WriteBytes
			}
			if tk.WSV && x.ReadBytes > 0 {
				ours[key{tk.WriteSTag, false}] += x.ReadBytes
			}
			if x.ReadBytes+x.WriteBytes != uint64(0) && !tk.RSV && !tk.WSV {
				t.Errorf("ITT %#x moved bytes without an STag", x.Key)
			}
		}})
	if err := e.Run(r, func(p *dissect.Packet) error { ck.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	res := ck.Finish(e.Conns.Connections())
	b, err := os.ReadFile("../../testdata/tshark/iser/rxe-iser.rdma.tsv")
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[key]uint64{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		c := strings.Split(line, "\t")
		if c[1] != "192.0.2.1" {
			t.Errorf("frame %s: RDMA by %s, not the target", c[0], c[1])
		}
		theirs[key{uint32(num(t, c[4])), c[2] != "12"}] += num(t, c[5])
		n++
	}
	if n != 148 || ops != n {
		t.Errorf("tshark %d RDMA operations, %d attached", n, ops)
	}
	for k, v := range theirs {
		if ours[k] != v {
			t.Errorf("STag %#x write %v: %d bytes attached, tshark %d", k.stag, k.write, ours[k], v)
		}
	}
	if len(ours) != len(theirs) {
		t.Errorf("%d STags, tshark %d", len(ours), len(theirs))
	}
	for _, cr := range res.Connections {
		passed := 0
		for _, ch := range cr.Checks {
			if strings.HasPrefix(ch.Rule, "ISER-") && ch.Status == check.StatusPassed {
				passed++
			}
		}
		// The discovery session (connection 1) has Login and Text only:
		// only ISER-RESPONSE-UNMATCHED has anything to judge.
		if want := map[int]int{1: 1, 2: 7}[cr.ID]; passed != want {
			t.Errorf("connection %d: %d iSER rules passed, want %d", cr.ID, passed, want)
		}
	}
}
