package smbdirect_test

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
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

func init() { check.Register(smbdirect.Rules()...) }

// run analyses a capture with RPC-over-RDMA, NVMe/RDMA and SMB Direct
// registered, as the command does, and returns the engine, the exchanges
// and the checks.
func run(t testing.TB, name string) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	return ulptest.Run(t, name, rpcordma.New(nfs.NewBinding(), nfs.RDMAPort), nvmeof.New(), smbdirect.New())
}

// tsv reads a file of testdata/tshark/smbdirect (made by gen.sh there):
// its rows as columns by header name.
func tsv(t testing.TB, name string) []map[string]string {
	f, err := os.Open("../../testdata/tshark/smbdirect/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	head := strings.Split(sc.Text(), "\t")
	var rows []map[string]string
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		row := map[string]string{}
		for i, h := range head {
			if i < len(c) {
				row[h] = c[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func atoi(t testing.TB, s string) int {
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(s, "0x")], 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return int(v)
}

// tsharkSMB2 is one SMB2 message as tshark 4.0 decoded it.
type tsharkSMB2 struct {
	frame    int
	msgID    uint64
	response bool
	status   string // a response's
	cmd      int
	ieth     string // the Send With Invalidate's R_Key
}

func tsharkMessages(t testing.TB) []tsharkSMB2 {
	var out []tsharkSMB2
	for _, r := range tsv(t, "rxe-smbdirect.sends.tsv") {
		if r["smb2.msg_id"] == "" {
			continue
		}
		ids, resp, cmds := strings.Split(r["smb2.msg_id"], ","), strings.Split(r["smb2.flags.response"], ","), strings.Split(r["smb2.cmd"], ",")
		st := strings.Split(r["smb2.nt_status"], ",")
		k := 0
		for i := range ids {
			m := tsharkSMB2{frame: atoi(t, r["frame.number"]), msgID: uint64(atoi(t, ids[i])), response: resp[i] == "1", cmd: atoi(t, cmds[i]),
				ieth: strings.Split(r["infiniband.ieth"], ",")[0]}
			if m.response {
				m.status = st[k]
				k++
			}
			out = append(out, m)
		}
	}
	return out
}

// TestPairingAgreesWithTshark: every SMB2 request and response tshark
// decodes on the RoCE capture is the request or the response of one of
// our exchanges, with its MessageId, command and status, and every Send
// With Invalidate names the same R_Key. tshark 4.0 counts 135 requests
// and 132 responses: it does not reassemble the three responses the
// server sent in fragments (KD-SMBD-FRAGMENTED-RESPONSE), which we pair.
func TestPairingAgreesWithTshark(t *testing.T) {
	e, xs, res := run(t, "ulp/rxe-smbdirect.pcap")
	req, resp := map[int][]*dissect.Exchange{}, map[int][]*dissect.Exchange{}
	for i := range xs {
		x := &xs[i]
		if x.ULP != smbdirect.Name {
			t.Fatalf("exchange of %q", x.ULP)
		}
		req[x.RequestPacket] = append(req[x.RequestPacket], x)
		resp[x.ResponsePacket] = append(resp[x.ResponsePacket], x)
	}
	ms := tsharkMessages(t)
	nreq, nresp := 0, 0
	seen := map[*dissect.Exchange]bool{}
	for _, m := range ms {
		byPkt := req
		if m.response {
			byPkt = resp
			nresp++
		} else {
			nreq++
		}
		var x *dissect.Exchange
		for _, c := range byPkt[m.frame] {
			if c.Key == m.msgID {
				x = c
			}
		}
		if x == nil {
			t.Errorf("frame %d: MessageId %d (response %v) in no exchange", m.frame, m.msgID, m.response)
			continue
		}
		if m.response {
			seen[x] = true
			want := m.status
			if x.StatusCode != uint32(atoi(t, want)) {
				t.Errorf("frame %d MID %d: status %s (%#x), tshark %s", m.frame, m.msgID, x.Status, x.StatusCode, want)
			}
			if inv := m.ieth != ""; x.Invalidated != inv || inv && x.InvalidatedSTag != uint32(atoi(t, "0x"+m.ieth)) {
				t.Errorf("frame %d MID %d: invalidated %v %#x, tshark %q", m.frame, m.msgID, x.Invalidated, x.InvalidatedSTag, m.ieth)
			}
		}
		if x.Name != cmdName[m.cmd] {
			t.Errorf("frame %d MID %d: %s, tshark command %d", m.frame, m.msgID, x.Name, m.cmd)
		}
	}
	if nreq != 135 || nresp != 132 {
		t.Errorf("tshark: %d requests, %d responses", nreq, nresp)
	}
	if len(xs) != 135 {
		t.Errorf("%d exchanges, want tshark's 135 requests", len(xs))
	}
	// The three responses tshark does not reassemble: fragmented Sends of
	// the server (QUERY_DIRECTORY and READ responses of the second mount).
	var extra []string
	for i := range xs {
		x := &xs[i]
		if x.Outcome != dissect.Responded {
			t.Errorf("MID %d %s: %s", x.Key, x.Name, x.Outcome)
		}
		if !seen[x] {
			extra = append(extra, x.Name+"@"+strconv.Itoa(x.ResponsePacket))
		}
	}
	if len(extra) != 3 {
		t.Errorf("responses tshark lacks: %v", extra)
	}
	t.Logf("responses tshark lacks: %v", extra)
	checkHealthy(t, e, res)
}

var cmdName = map[int]string{0: "NEGOTIATE", 1: "SESSION_SETUP", 2: "LOGOFF", 3: "TREE_CONNECT", 4: "TREE_DISCONNECT", 5: "CREATE",
	6: "CLOSE", 7: "FLUSH", 8: "READ", 9: "WRITE", 10: "LOCK", 11: "IOCTL", 12: "CANCEL", 13: "ECHO", 14: "QUERY_DIRECTORY",
	15: "CHANGE_NOTIFY", 16: "QUERY_INFO", 17: "SET_INFO", 18: "OPLOCK_BREAK"}

// TestRDMAAgreesWithTshark: every RDMA Write and RDMA Read Request tshark
// shows on the RoCE capture is attached to a READ or WRITE whose buffer
// descriptor holds it.
func TestRDMAAgreesWithTshark(t *testing.T) {
	e, xs, _ := run(t, "ulp/rxe-smbdirect.pcap")
	rows := tsv(t, "rxe-smbdirect.rdma.tsv")
	if got := e.Ops.RDMAReads + e.Ops.RDMAWrites; got != uint64(len(rows)) || len(rows) != 35 {
		t.Errorf("%d RDMA operations, tshark %d", got, len(rows))
	}
	var reads, writes, bytes uint64
	for _, r := range rows {
		n := uint64(atoi(t, r["infiniband.reth.dmalen"]))
		bytes += n
		if r["infiniband.bth.opcode"] == "12" {
			reads += n
		} else {
			writes += n
		}
	}
	var rb, wb uint64
	for _, x := range xs {
		rb += x.ReadBytes
		wb += x.WriteBytes
	}
	// Server RDMA Reads move WRITE data, RDMA Writes READ data.
	if rb != reads || wb != writes {
		t.Errorf("attached: %d read %d written; tshark RETH lengths %d %d", rb, wb, reads, writes)
	}
	for _, c := range e.Conns.Connections() {
		if q, ok := c.ULPData.(*smbdirect.Conn); ok && q.UnattachedRDMAOps != 0 {
			t.Errorf("connection %d: %d RDMA operations unattached", c.ID, q.UnattachedRDMAOps)
		}
	}
}

// checkHealthy: every connection with Sends is SMB Direct's, negotiated,
// every RDMA operation is attached, every READ/WRITE with RDMA was
// answered With Invalidate of its token, and no rule finds anything
// at error or warning level on healthy traffic.
func checkHealthy(t *testing.T, e *dissect.Engine, res *check.Result) {
	t.Helper()
	n := 0
	for _, c := range e.Conns.Connections() {
		if c.State == dissect.StateRejected {
			continue // RoCE: the client's probe of port 5445
		}
		n++
		q, _ := c.ULPData.(*smbdirect.Conn)
		if c.ULP != smbdirect.Name || q == nil {
			t.Fatalf("connection %d: ULP %q", c.ID, c.ULP)
		}
		if q.UnattachedRDMAOps != 0 || q.BadMessages != 0 || q.ResponsesWithoutRequest != 0 || q.MessageIDReused != 0 ||
			q.Client.NoCredit+q.Server.NoCredit+q.Client.LastCredit+q.Server.LastCredit != 0 {
			t.Errorf("connection %d: %+v", c.ID, q)
		}
		if q.Request == nil || q.Response == nil || q.Response.MaxReadWriteSize != 8388608 || q.Request.MaxReceiveSize != 1364 {
			t.Errorf("connection %d: negotiation %+v %+v", c.ID, q.Request, q.Response)
		}
		if q.RemoteInvalidations != q.InvalidateRequested || q.RDMAChannel == 0 {
			t.Errorf("connection %d: %d invalidations for %d requested, %d RDMA channels", c.ID, q.RemoteInvalidations, q.InvalidateRequested, q.RDMAChannel)
		}
	}
	if n != 2 {
		t.Errorf("%d SMB Direct connections", n)
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("finding %s: %s", f.Rule, f.Message)
		}
	}
	for _, cr := range res.Connections {
		passed := 0
		for _, ch := range cr.Checks {
			if strings.HasPrefix(ch.Rule, "SMBD-") && ch.Status == check.StatusPassed {
				passed++
			}
		}
		if c := e.Conns.Connections()[cr.ID-1]; c.ULP == smbdirect.Name && passed < 7 {
			t.Errorf("connection %d: %d SMB Direct rules passed", cr.ID, passed)
		}
	}
}

// TestIWARPEqualsRoCE: the same workload over soft-iWARP (another run of
// the lab: the cifs client's metadata traffic differs a little from run
// to run) negotiates the same, moves the same file data by the same READs
// and WRITEs, and is as healthy.
func TestIWARPEqualsRoCE(t *testing.T) {
	re, rx, _ := run(t, "ulp/rxe-smbdirect.pcap")
	we, wx, wres := run(t, "ulp/siw-smbdirect.pcap")
	checkHealthy(t, we, wres)
	// The file data: the same WRITEs, and READs of the same total (the
	// client's read-ahead split the reads of each run its own way: RoCE
	// 128+512+384+128 KiB, iWARP 128+256+512+128+128 KiB, per mount).
	data := func(xs []dissect.Exchange) (writes []uint64, read uint64, n int) {
		for _, x := range xs {
			if x.Outcome == dissect.Responded {
				n++
			}
			switch x.Name {
			case "WRITE":
				writes = append(writes, x.ReadBytes)
			case "READ":
				read += x.WriteBytes
			}
		}
		return writes, read, n
	}
	r, rread, rn := data(rx)
	w, wread, wn := data(wx)
	if len(r) != len(w) || len(r) != 3 || rread != wread || rread != 2*1348675 {
		t.Fatalf("WRITE: %v on RoCE, %v on iWARP; READ: %d and %d bytes", r, w, rread, wread)
	}
	for i := range r {
		if r[i] != w[i] {
			t.Errorf("WRITE %d: RoCE %d bytes, iWARP %d", i, r[i], w[i])
		}
	}
	// Every request answered on both; the counts differ by the client's
	// metadata requests (QUERY_INFO, CREATE, CLOSE) of each run.
	if rn != len(rx) || wn != len(wx) || len(rx) != 135 || len(wx) != 134 {
		t.Errorf("exchanges: RoCE %d of %d responded, iWARP %d of %d", rn, len(rx), wn, len(wx))
	}
	rc, wc := sdConns(re), sdConns(we)
	for i := range rc {
		a, b := rc[i], wc[i]
		ar, br := *a.Request, *b.Request
		ar.Packet, br.Packet = 0, 0
		if ar != br || a.Response.MaxReadWriteSize != b.Response.MaxReadWriteSize ||
			a.Response.CreditsGranted != b.Response.CreditsGranted || a.ReadBytes != b.ReadBytes || a.WriteBytes != b.WriteBytes {
			t.Errorf("connection %d differs: %+v %+v / %+v %+v", i, a.Request, a.Response, b.Request, b.Response)
		}
	}
}

func sdConns(e *dissect.Engine) []*smbdirect.Conn {
	var out []*smbdirect.Conn
	for _, c := range e.Conns.Connections() {
		if q, ok := c.ULPData.(*smbdirect.Conn); ok {
			out = append(out, q)
		}
	}
	return out
}

// TestOtherCapturesUntouched: on NFS and NVMe/RDMA captures SMB Direct
// claims nothing.
func TestOtherCapturesUntouched(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "ulp/rxe-nvmeof.pcap"} {
		e, _, _ := run(t, name)
		for _, c := range e.Conns.Connections() {
			if c.ULP == smbdirect.Name {
				t.Errorf("%s connection %d: SMB Direct", name, c.ID)
			}
		}
	}
}

// TestIWARPCountsAgreeWithScan: tshark 4.0 dissects no SMB Direct on
// iWARP, so the iWARP capture's exchanges are checked against an
// independent count of the SMB2 headers in its TCP byte streams
// (testdata/tshark/smbdirect/siw-smbdirect.smb2-scan.tsv, made by
// scan-iwarp.sh there): per command, as many requests and as many final
// responses as our exchanges have, each exchange responded.
func TestIWARPCountsAgreeWithScan(t *testing.T) {
	_, xs, _ := run(t, "ulp/siw-smbdirect.pcap")
	ours := map[[2]string]int{}
	for _, x := range xs {
		if x.RequestPacket != 0 {
			ours[[2]string{x.Name, "0"}]++
		}
		if x.ResponsePacket != 0 {
			ours[[2]string{x.Name, "1"}]++
		}
	}
	scan := map[[2]string]int{}
	total := 0
	for _, r := range tsv(t, "siw-smbdirect.smb2-scan.tsv") {
		k := [2]string{cmdName[atoi(t, r["smb2.cmd"])], r["smb2.flags.response"]}
		scan[k] = atoi(t, r["count"])
		total += scan[k]
	}
	if total != 2*134 {
		t.Errorf("the scan counts %d SMB2 messages", total)
	}
	for k, n := range scan {
		if ours[k] != n {
			t.Errorf("%s response=%s: %d, the scan %d", k[0], k[1], ours[k], n)
		}
	}
	for k, n := range ours {
		if scan[k] != n {
			t.Errorf("%s response=%s: %d, the scan %d", k[0], k[1], n, scan[k])
		}
	}
}
