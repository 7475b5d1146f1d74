package srp_test

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
	"github.com/rdmashark/rdmashark/srp"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

func init() { check.Register(srpulp.Rules()...) }

// run analyses a capture (under testdata/pcaps, or absolute) with
// RPC-over-RDMA and SRP registered, as the command does, and returns the
// engine, the exchanges and the checks (internal/ulptest).
func run(t testing.TB, name string) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	return ulptest.Run(t, name, rpcordma.New(nfs.NewBinding(), nfs.RDMAPort), srpulp.New())
}

// tsv reads a tshark reference file of testdata/tshark/srp (gen.sh
// there): its rows as header -> value.
func tsv(t testing.TB, name string) []map[string]string {
	t.Helper()
	f, err := os.Open("../../testdata/tshark/srp/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan()
	header := strings.Split(sc.Text(), "\t")
	var out []map[string]string
	for sc.Scan() {
		row := map[string]string{}
		for i, v := range strings.Split(sc.Text(), "\t") {
			if i < len(header) {
				row[header[i]] = v
			}
		}
		out = append(out, row)
	}
	return out
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

// realCaptures are the lab's captures (testdata/pcaps/ulp/README.md): the
// same workload over Soft-RoCE (RDMA/CM over RoCEv2, IPv4) and
// soft-iWARP (MPA, IPv6).
var realCaptures = []string{"ulp/rxe-srp.pcap", "ulp/siw-srp.pcap"}

// TestRealCaptures: on the real captures every SRP_CMD is paired with its
// SRP_RSP, every RDMA operation with data is attached to a descriptor of
// an outstanding command, every rule is evaluated and finds nothing, and
// the login is what ib_srp asked and ib_srpt granted (checked against
// the octets tshark shows in TestLoginAgreesWithTshark). RoCE and iWARP
// carry the same exchanges.
func TestRealCaptures(t *testing.T) {
	var names [2][]string
	for ci, name := range realCaptures {
		if _, err := os.Stat("../../testdata/pcaps/" + name); err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		e, xs, res := run(t, name)
		conns := e.Conns.Connections()
		if len(conns) != 1 || conns[0].ULP != srpulp.Name {
			t.Fatalf("%s: connections %d, ULP %q", name, len(conns), conns[0].ULP)
		}
		cn := conns[0].ULPData.(*srpulp.Connection)
		if cn.Layout != "rdma-cm" || cn.Login == nil || cn.Accepted == nil || !cn.LoginKnown() ||
			cn.Login.RequestedMaxITIULength != 8260 || !cn.Login.ImmediateRequested || cn.Login.ImmediateDataOffset != 68 ||
			cn.Accepted.RequestLimitDelta != 128 || cn.Accepted.MaxITIULength != 8260 || cn.Accepted.MaxTIIULength != 8260 ||
			!cn.Accepted.ImmediateSupported || cn.Accepted.SupportedBufferFormats != "direct, indirect" {
			t.Errorf("%s: login %+v %+v", name, cn.Login, cn.Accepted)
		}
		// The scenario: the scan, 8 x 4 KiB writes with immediate data,
		// 4 x 64 KiB writes (each split 48 + 16 KiB), 256 KiB and 32 KiB
		// read back.
		if cn.Commands != 51 || cn.Responses != 51 || cn.ImmediateBytes != 8*4096 || cn.ReadBytes != 4*65536 ||
			cn.Descriptors["data-out immediate"] != 8 || cn.Descriptors["data-out direct"] != 8 ||
			cn.UnattachedRDMAOps != 0 || cn.BadIUs != 0 || cn.OverLimit != 0 || cn.CommandsWithoutResponse+cn.ResponsesWithoutCommand != 0 ||
			*cn.RequestLimit != 128 || *cn.MinRequestLimit < 126 || cn.TagReused != 0 {
			t.Errorf("%s: %+v", name, cn)
		}
		// Every command answered, GOOD but for the scan's REPORT
		// SUPPORTED OPERATION CODES, which LIO answers CHECK CONDITION
		// with sense data (as it does over iSER: rxe-iser.pcap).
		for _, x := range xs {
			wantOK := x.Name != "Report Supported Operation Codes"
			if x.ULP != srpulp.Name || x.Outcome != dissect.Responded || x.OK != wantOK || x.Latency <= 0 ||
				!wantOK && x.Status != "Check Condition" {
				t.Errorf("%s: exchange %+v", name, x)
			}
			names[ci] = append(names[ci], x.Name)
		}
		if cn.Errors["Check Condition"] != 1 || len(cn.Errors) != 1 {
			t.Errorf("%s: errors %v", name, cn.Errors)
		}
		for _, f := range res.Findings {
			if f.Severity >= check.Warning {
				t.Errorf("%s: %s %s: %s", name, f.Severity, f.Rule, f.Message)
			}
		}
		for _, cr := range res.Connections {
			for _, ch := range cr.Checks {
				if strings.HasPrefix(ch.Rule, "SRP-") && ch.Status != check.StatusPassed {
					t.Errorf("%s: %s %s", name, ch.Rule, ch.Status)
				}
			}
		}
	}
	if names[1] != nil && strings.Join(names[0], ",") != strings.Join(names[1], ",") {
		t.Errorf("RoCE and iWARP differ:\n%v\n%v", names[0], names[1])
	}
}

// TestZeroLengthWriteIsNoCommands: ib_srpt's zero-length RDMA Write
// (rxe-srp.pcap frame 18, R_Key 0) may come after the first SRP_CMD (it
// did in a run of the lab's scenario with ib_srp register_always=0): it
// is no unattached operation and no finding.
func TestZeroLengthWriteIsNoCommands(t *testing.T) {
	var cmd []byte
	for _, r := range tsv(t, "rxe-srp.sends.tsv") {
		if r["frame.number"] == "20" {
			cmd = unhex(t, r["data.data"])
		}
	}
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, State: dissect.StateEstablished}
	c.ULP = srpulp.Name
	s := srpulp.New().Start(c, &dissect.Env{})
	ck := check.NewRunner(check.Config{})
	m := &dissect.Message{Conn: c, Dir: dissect.DirClientToServer, Packets: []int{16}, Data: cmd, Length: len(cmd)}
	s.Message(nil, m)
	ck.Message(m)
	op := &dissect.RDMAOp{Kind: dissect.RDMAWrite, Conn: c, Dir: dissect.DirServerToClient, Packets: []int{18}, Complete: true}
	s.RDMAOp(nil, op)
	ck.RDMAOp(op)
	s.Close()
	res := ck.Finish([]*dissect.Connection{c})
	if cn := c.ULPData.(*srpulp.Connection); cn.UnattachedRDMAOps != 0 {
		t.Errorf("%d unattached", cn.UnattachedRDMAOps)
	}
	for _, f := range res.Findings {
		if f.Rule == "SRP-RDMA-BOUNDS" || f.Rule == "SRP-RDMA-AFTER-RESPONSE" {
			t.Errorf("%s: %s", f.Rule, f.Message)
		}
	}
}

// TestLoginAgreesWithTshark: the connection's login is the CM REQ's
// consumer private data and the CM REP's private data as tshark shows
// them, decoded by package srp.
func TestLoginAgreesWithTshark(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-srp.pcap")
	cn := e.Conns.Connections()[0].ULPData.(*srpulp.Connection)
	rows := tsv(t, "rxe-srp.cm.tsv")
	var req, rep []byte
	for _, r := range rows {
		if v := r["infiniband.cm.req.ip_cm.private"]; v != "" {
			req = unhex(t, v)
			if num(t, r["infiniband.cm.req.serviceid"]) != 0x10615b3 {
				t.Error("service ID")
			}
		}
		if v := r["infiniband.cm.rep.private"]; v != "" {
			rep = unhex(t, v)
		}
	}
	var l srp.LoginRequest
	var a srp.LoginResponse
	if l.DecodeRDMACM(req) != nil || a.DecodeFromBytes(rep) != nil {
		t.Fatal("tshark's private data do not decode")
	}
	lq, la := cn.LoginParams()
	if *lq != l || *la != a {
		t.Errorf("login %+v %+v, tshark's octets %+v %+v", *lq, *la, l, a)
	}
}

func unhex(t testing.TB, s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			t.Fatal(err)
		}
		b[i] = byte(v)
	}
	return b
}

// TestRDMAAttachedAsTshark: the bytes the target's RDMA Writes and Reads
// moved, per R_Key as tshark reads the RETHs, are the bytes attached to
// the commands whose descriptors named those R_Keys (ib_srp registers a
// fresh R_Key per command, so the two agree key for key). The
// zero-length RDMA Write ib_srpt sends first (R_Key 0) is no command's.
func TestRDMAAttachedAsTshark(t *testing.T) {
	theirs := map[uint32]uint64{}
	for _, r := range tsv(t, "rxe-srp.rdma.tsv") {
		if r["ip.src"] != "192.0.2.1" {
			t.Errorf("frame %s: an RDMA operation of the initiator", r["frame.number"])
		}
		if n := num(t, r["infiniband.reth.dmalen"]); n > 0 {
			theirs[uint32(num(t, r["infiniband.reth.r_key"]))] += n
		}
	}
	ours := map[uint32]uint64{}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-srp.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{srpulp.New()},
		Exchange: func(x *dissect.Exchange) {
			c := x.Detail.(*srpulp.Command)
			if x.ReadBytes+x.WriteBytes > 0 {
				rg := c.Regions()
				if len(rg) != 1 {
					t.Fatalf("%s: %d regions", x.Name, len(rg))
				}
				ours[rg[0].STag] += x.ReadBytes + x.WriteBytes
			}
		}})
	if err := e.Run(r, func(*dissect.Packet) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(theirs) == 0 || len(ours) != len(theirs) {
		t.Fatalf("%d R_Keys of ours, %d of tshark's", len(ours), len(theirs))
	}
	for k, v := range theirs {
		if ours[k] != v {
			t.Errorf("R_Key 0x%08x: %d bytes attached, tshark's RETHs %d", k, ours[k], v)
		}
	}
}

// TestTaskManagement: rxe-srp-tmf.pcap (the lab's srp-tmf scenario: a
// device reset through the sd device after two 4 KiB writes) holds ib_srp's
// SRP_TSK_MGMT LOGICAL UNIT RESET (frame 158, TAG OF TASK TO BE MANAGED
// 0xffffffff00000000 as ib_srp fills it) and ib_srpt's SRP_RSP with
// RSPVALID and four octets of response data, RESPONSE CODE 0 (frame 160);
// the next READ(10) is answered CHECK CONDITION with 96 octets of sense
// data (the unit attention of the reset: the guest's kernel logged "Power-on
// or device reset occurred"), the SCSI layer retries it and the rest are
// GOOD. No warning or error: the one PSN-GAP information is the target's
// retransmission of frame 160's Send.
func TestTaskManagement(t *testing.T) {
	e, xs, res := run(t, "ulp/rxe-srp-tmf.pcap")
	var tmf, cc *dissect.Exchange
	for i := range xs {
		switch x := &xs[i]; {
		case strings.HasPrefix(x.Name, "Task Management"):
			tmf = x
		case !x.OK:
			cc = x
		}
	}
	if tmf == nil || tmf.Name != "Task Management LOGICAL UNIT RESET" || tmf.Status != "Task management function complete" || !tmf.OK ||
		tmf.RequestPacket != 158 || tmf.ResponsePacket != 160 || tmf.Key != 0x0100008000000000 {
		t.Errorf("task management exchange %+v", tmf)
	}
	if cc == nil || cc.Name != "Read(10)" || cc.Status != "Check Condition" || cc.RequestPacket != 164 || cc.ResponsePacket != 166 {
		t.Errorf("the read after the reset: %+v", cc)
	}
	cn := e.Conns.Connections()[0].ULPData.(*srpulp.Connection)
	if cn.TaskManagement != 1 || cn.Commands != len32(xs)-1 || cn.Responses != len32(xs) || cn.OverLimit != 0 || cn.UnattachedRDMAOps != 0 {
		t.Errorf("%+v", cn)
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("%s %s: %s", f.Severity, f.Rule, f.Message)
		}
	}
}

func len32(xs []dissect.Exchange) uint64 { return uint64(len(xs)) }
