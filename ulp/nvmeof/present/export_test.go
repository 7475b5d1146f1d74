package present_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/nvme"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
	"github.com/rdmashark/rdmashark/ulp/nvmeof/present"
)

// NVMe/RDMA's presentation and key format, registered as the command
// registers them (cmd/rdmashark/ulps.go).
func init() {
	present.Register()
	fields.RegisterExchangeKey(nvmeof.Name, nvmeof.AppendKey)
}

// exportNVMe exports a capture under testdata/pcaps with the NVMe/RDMA
// plug-in, as the export command does, into a new directory, and returns
// the path of its nvme_commands part file.
func exportNVMe(t *testing.T, name string, f export.Format) string {
	t.Helper()
	cfg := export.Config{Dir: t.TempDir(), Format: f, Label: "t"}
	if _, err := export.Reserve(cfg, 1); err != nil {
		t.Fatal(err)
	}
	xc, err := export.NewCapture(cfg, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := source.Open(ulptest.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eng := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}, Exchange: xc.Exchange, Observer: xc.Observer(nil)})
	if err := eng.Run(r, xc.Packet); err != nil {
		t.Fatal(err)
	}
	if err := xc.Finish(eng, nil); err != nil {
		t.Fatal(err)
	}
	if n, x := xc.Rows()[present.TableCommands], xc.Rows()[export.TableExchanges]; n == 0 || n != x {
		t.Fatalf("%s: %d nvme_commands rows, %d exchanges", name, n, x)
	}
	return filepath.Join(export.PartitionDir(cfg.Dir, present.TableCommands, cfg.Label), "part-0."+map[export.Format]string{export.Parquet: "parquet", export.NDJSON: "ndjson"}[f])
}

func readNDJSON(t *testing.T, path string) []present.Command {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []present.Command
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var row present.Command
		if err := dec.Decode(&row); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows
}

// tsharkCommands reads testdata/tshark/nvme/rxe-nvmeof.commands.tsv (made
// by gen.sh there with tshark 4.0.17): one map of field to value per
// command or completion capsule.
func tsharkCommands(t *testing.T) []map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/tshark/nvme/rxe-nvmeof.commands.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	head := strings.Split(lines[0], "\t")
	var out []map[string]string
	for _, l := range lines[1:] {
		m := map[string]string{}
		for i, v := range strings.Split(l, "\t") {
			if v != "" && i < len(head) {
				m[head[i]] = v
			}
		}
		out = append(out, m)
	}
	return out
}

// num parses a tshark value: 0x-prefixed hex, else decimal (base 10), or
// hex without prefix (base 16: nvme.fabrics.cmd.opc, infiniband.ieth).
func num(t *testing.T, s string, base int) int64 {
	t.Helper()
	if strings.HasPrefix(s, "0x") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		t.Fatalf("tshark value %q: %v", s, err)
	}
	return int64(v)
}

func eq(p *int64, v int64) bool { return p != nil && *p == v }

// TestCommandsAgreeWithTshark: every command and completion capsule tshark
// 4.0 decodes in rxe-nvmeof.pcap is a row of nvme_commands with tshark's
// queue, opcode (FCTYPE for a Fabrics command), CID, NSID, SLBA, number of
// blocks (tshark's nvme.cmd.nlb is NLB+1: "Absolute Number of Logical
// Blocks"; ours is the SQE's 0's based NLB, and blocks NLB+1), SGL
// descriptor, completion status (SCT, SC, M, DNR), pairing (tshark's
// cmd_pkt and cqe_pkt), latency (tshark's, in ms to the µs) and
// invalidated R_Key. Ours besides tshark's: the I/O queue's Connect, a
// two-packet Send (frames 93-94) tshark does not reassemble, and its
// completion (96): KD-NVME-MULTIPACKET.
func TestCommandsAgreeWithTshark(t *testing.T) {
	rows := readNDJSON(t, exportNVMe(t, "ulp/rxe-nvmeof.pcap", export.NDJSON))
	byReq, byResp := map[int64]*present.Command{}, map[int64]*present.Command{}
	for i := range rows {
		r := &rows[i]
		if r.Capture != "ulp/rxe-nvmeof.pcap" || r.Label != "t" {
			t.Fatalf("common columns %q %q", r.Capture, r.Label)
		}
		if r.RequestPacket != nil {
			byReq[*r.RequestPacket] = r
		}
		if r.ResponsePacket != nil {
			byResp[*r.ResponsePacket] = r
		}
	}
	ts := tsharkCommands(t)
	if len(ts) < 300 {
		t.Fatalf("%d tshark rows", len(ts))
	}
	matched := map[*present.Command]bool{}
	var cmds, cpls, rw, lat, inv int
	for _, m := range ts {
		frame := num(t, m["frame.number"], 10)
		qid := num(t, m["nvme-rdma.cmd.qid"], 10)
		if _, cpl := m["nvme.cqe.cid"]; cpl {
			cpls++
			r := byResp[frame]
			if r == nil {
				t.Errorf("completion frame %d: no row", frame)
				continue
			}
			matched[r] = true
			if !eq(r.QID, qid) || r.CID != num(t, m["nvme.cqe.cid"], 10) || r.KeyNum != qid<<16|r.CID ||
				!eq(r.StatusSCT, num(t, m["nvme.cqe.status.sct"], 10)) || !eq(r.StatusSC, num(t, m["nvme.cqe.status.sc"], 10)) ||
				r.StatusM == nil || *r.StatusM != (m["nvme.cqe.status.m"] == "1") || r.StatusDNR == nil || *r.StatusDNR != (m["nvme.cqe.status.dnr"] == "1") {
				t.Errorf("completion frame %d: row QID %v CID %d SCT %v SC %v M %v DNR %v; tshark %v", frame, r.QID, r.CID, r.StatusSCT, r.StatusSC, r.StatusM, r.StatusDNR, m)
			}
			for _, f := range []string{"nvme.cmd_pkt", "nvme.fabrics.cmd_pkt"} {
				if v, ok := m[f]; ok && !eq(r.RequestPacket, num(t, v, 10)) {
					t.Errorf("completion frame %d: request packet %v, tshark %s", frame, r.RequestPacket, v)
				}
			}
			for _, f := range []string{"nvme.cmd_latency", "nvme.fabrics.cmd_latency"} {
				if v, ok := m[f]; ok {
					ms, err := strconv.ParseFloat(v, 64)
					if err != nil {
						t.Fatal(err)
					}
					if r.LatencyNS == nil || math.Abs(float64(*r.LatencyNS)-ms*1e6) > 500 {
						t.Errorf("completion frame %d: latency %v ns, tshark %s ms", frame, deref(r.LatencyNS), v)
					}
					lat++
				}
			}
			if v, ok := m["infiniband.ieth"]; ok {
				inv++
				if !r.Invalidated || !eq(r.InvalidatedKey, num(t, v, 16)) {
					t.Errorf("completion frame %d: invalidated %v %v, tshark R_Key %s", frame, r.Invalidated, r.InvalidatedKey, v)
				}
			} else if r.Invalidated {
				t.Errorf("completion frame %d: invalidated, tshark no IETH", frame)
			}
			continue
		}
		cmds++
		r := byReq[frame]
		if r == nil {
			t.Errorf("command frame %d: no row", frame)
			continue
		}
		matched[r] = true
		if !eq(r.QID, qid) {
			t.Errorf("command frame %d: QID %v, tshark %d", frame, r.QID, qid)
		}
		if v, ok := m["nvme.fabrics.cmd.opc"]; ok {
			if !eq(r.Opcode, num(t, v, 16)) || *r.Opcode != nvme.OpcodeFabrics || !eq(r.FCTYPE, num(t, m["nvme.fabrics.cmd.fctype"], 10)) ||
				r.CID != num(t, m["nvme.fabrics.cmd.cid"], 10) || r.NSID != nil || r.CommandType == nil || *r.CommandType != "fabrics" {
				t.Errorf("command frame %d: opcode %v FCTYPE %v CID %d NSID %v type %v; tshark %v", frame, r.Opcode, r.FCTYPE, r.CID, r.NSID, r.CommandType, m)
			}
		} else {
			want := "io"
			if qid == 0 {
				want = "admin"
			}
			if !eq(r.Opcode, num(t, m["nvme.cmd.opc"], 10)) || r.FCTYPE != nil || r.CID != num(t, m["nvme.cmd.cid"], 10) ||
				r.CommandType == nil || *r.CommandType != want {
				t.Errorf("command frame %d: opcode %v CID %d type %v; tshark %v", frame, r.Opcode, r.CID, r.CommandType, m)
			}
			if v, ok := m["nvme.cmd.nsid"]; ok && !eq(r.NSID, num(t, v, 10)) {
				t.Errorf("command frame %d: NSID %v, tshark %s", frame, r.NSID, v)
			}
		}
		if v, ok := m["nvme.cmd.slba"]; ok {
			rw++
			n := num(t, m["nvme.cmd.nlb"], 10)
			if !eq(r.SLBA, num(t, v, 10)) || !eq(r.Blocks, n) || !eq(r.NLB, n-1) {
				t.Errorf("command frame %d: SLBA %v NLB %v blocks %v; tshark SLBA %s NLB %d", frame, r.SLBA, r.NLB, r.Blocks, v, n)
			}
		} else if r.SLBA != nil || r.NLB != nil {
			t.Errorf("command frame %d (%v): SLBA %v NLB %v, tshark none", frame, r.Name, r.SLBA, r.NLB)
		}
		if v, ok := m["nvme.cmd.sgl.type"]; ok {
			typ, sub := nvme.SGLType(num(t, v, 10)), nvme.SGLSubtype(num(t, m["nvme.cmd.sgl.subtype"], 10))
			if r.SGLType == nil || *r.SGLType != typ.String() || r.SGLSubtype == nil || *r.SGLSubtype != sub.String() ||
				!eq(r.DataLength, num(t, m["nvme.cmd.sgl1.len"], 10)) || r.SGLAddress == nil || *r.SGLAddress != m["nvme.cmd.sgl1.addr"] ||
				(typ == nvme.SGLKeyedDataBlock && !eq(r.SGLKey, num(t, m["nvme.cmd.sgl1.key"], 10))) ||
				r.InvalidateRequested == nil || *r.InvalidateRequested != (typ == nvme.SGLKeyedDataBlock && sub == nvme.SGLSubtypeInvalidateKey) {
				t.Errorf("command frame %d: SGL %v %v %v %v key %v inv %v; tshark %v", frame, r.SGLType, r.SGLSubtype, r.SGLAddress, r.DataLength, r.SGLKey, r.InvalidateRequested, m)
			}
		}
		for _, f := range []string{"nvme.cqe_pkt", "nvme.fabrics.cqe_pkt"} {
			if v, ok := m[f]; ok && !eq(r.ResponsePacket, num(t, v, 10)) {
				t.Errorf("command frame %d: response packet %v, tshark %s", frame, r.ResponsePacket, v)
			}
		}
	}
	if cmds < 150 || cpls < 150 || rw < 80 || lat < 150 || inv < 50 {
		t.Errorf("tshark rows compared: %d commands (%d with an LBA range), %d completions (%d latencies, %d invalidations)", cmds, rw, cpls, lat, inv)
	}
	for i := range rows {
		r := &rows[i]
		if matched[r] {
			continue
		}
		// Ours alone: the I/O queue's Connect.
		if !eq(r.RequestPacket, 94) || !eq(r.ResponsePacket, 96) || r.Name == nil || *r.Name != "Connect" || !eq(r.QID, 1) || r.OK == nil || !*r.OK {
			t.Errorf("row not in tshark's capsules: %+v", *r)
		}
	}
}

// opStats are one opcode's figures in nvme_commands.
type opStats struct {
	n, read, write, inCapsule, data, blocks, invAsked, invUsed int64
	outcomes, statuses                                         string
}

func perOpcode(rows []present.Command) map[string]*opStats {
	m := map[string]*opStats{}
	for _, r := range rows {
		name := "(no command)"
		if r.Name != nil {
			name = *r.Name
		}
		s := m[name]
		if s == nil {
			s = &opStats{}
			m[name] = s
		}
		s.n++
		s.read += r.ReadBytes
		s.write += r.WriteBytes
		add := func(p *int64) int64 {
			if p == nil {
				return 0
			}
			return *p
		}
		s.inCapsule += add(r.InCapsuleBytes)
		s.data += add(r.DataLength)
		s.blocks += add(r.Blocks)
		if r.InvalidateRequested != nil && *r.InvalidateRequested {
			s.invAsked++
		}
		if r.Invalidated {
			s.invUsed++
		}
		s.outcomes += r.Outcome + ","
		if r.Status != nil {
			s.statuses += *r.Status + ","
		}
	}
	return m
}

// TestIWARPCommandsEqualRoCE: the same workload over soft-iWARP
// (siw-nvmeof.pcap, which tshark 4.0 does not decode; Linux 6.1, and 6.12
// under testdata/pcaps/linux612) gives the same
// per-opcode figures in nvme_commands as over Soft-RoCE (rxe-nvmeof.pcap,
// checked against tshark above): commands, bytes by RDMA Read and Write
// and in capsules, data lengths, blocks, remote invalidations asked and
// used, outcomes and statuses. Read from the Parquet files.
func TestIWARPCommandsEqualRoCE(t *testing.T) {
	read := func(name string) []present.Command {
		rows, err := parquet.ReadFile[present.Command](exportNVMe(t, name, export.Parquet))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	for _, dir := range []string{"ulp", "linux612"} {
		r, w := perOpcode(read(dir+"/rxe-nvmeof.pcap")), perOpcode(read(dir+"/siw-nvmeof.pcap"))
		if len(r) < 8 || r["Read"] == nil || r["Write"] == nil || r["Read"].write == 0 || r["Write"].read == 0 {
			t.Fatalf("%s: RoCE per opcode: %v", dir, r)
		}
		for name, rs := range r {
			if ws := w[name]; ws == nil || *ws != *rs {
				t.Errorf("%s %s: RoCE %+v, iWARP %+v", dir, name, *rs, ws)
			}
		}
		if len(w) != len(r) {
			t.Errorf("%s: %d opcodes on RoCE, %d on iWARP", dir, len(r), len(w))
		}
	}
}

// deref is *p, or "NULL".
func deref(p *int64) any {
	if p == nil {
		return "NULL"
	}
	return *p
}

// TestCompletionWithoutCommand: a capture that lost the Send of a Write
// command (frame 196 of rxe-nvmeof.pcap, QID 1 CID 0x44; tshark pairs it
// with the completion in frame 263) still has that completion's row, with
// the completion's CID, status and invalidated R_Key (tshark: IETH
// 0x00002312) and the command's columns NULL.
func TestCompletionWithoutCommand(t *testing.T) {
	lt, frames := pcaptest.Read(t, ulptest.Path("ulp/rxe-nvmeof.pcap"))
	kept := frames[:0:0]
	for _, f := range frames {
		if f.Num != 196 {
			kept = append(kept, f)
		}
	}
	rows := readNDJSON(t, exportNVMe(t, pcaptest.Write(t, lt, kept), export.NDJSON))
	var r *present.Command
	for i := range rows {
		if eq(rows[i].ResponsePacket, 263-1) { // one frame fewer before it
			r = &rows[i]
		}
	}
	if r == nil {
		t.Fatal("no row of the completion")
	}
	if r.Outcome != "response-without-request" || r.CID != 0x44 || !eq(r.QID, 1) || r.KeyNum != 1<<16|0x44 ||
		!eq(r.StatusSCT, 0) || !eq(r.StatusSC, 0) || r.StatusDNR == nil || *r.StatusDNR || r.OK == nil || !*r.OK ||
		r.Opcode != nil || r.Name != nil || r.CommandType != nil || r.RequestPacket != nil || r.LatencyNS != nil ||
		r.SGLType != nil || r.InvalidateRequested != nil || r.InCapsuleBytes != nil || r.ReadBytes != 0 ||
		!r.Invalidated || !eq(r.InvalidatedKey, 0x2312) {
		t.Errorf("row %+v", *r)
	}
}
