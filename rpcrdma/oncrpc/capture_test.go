package oncrpc_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/internal/capture"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

var nfsCaptures = []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small", "siw-nfs3", "siw-nfs41", "siw-nfs42-small"}

// rpc.tsv columns after frame.number, in ../testdata/gen-tshark.sh order.
const (
	cXID = iota
	cMsgTyp
	cVersion
	cProgram
	cProgVers
	cProcedure
	cFlavor
	cAuthLen
	cStamp
	cMachine
	cUID
	cGID
	cReplyStat
	cAccept
	cFHLen
	cNFSStatus
	cNFSStat4
	cTag
	cMinorVers
	nCols
)

type row struct {
	frame int
	cols  [nCols][]string
}

func readRows(t testing.TB, name string) []row {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name+".rpc.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		var r row
		r.frame, err = strconv.Atoi(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < nCols && i+1 < len(parts); i++ {
			if parts[i+1] != "" {
				r.cols[i] = strings.Split(parts[i+1], ",")
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// rendered is a decoded header in tshark's -T fields formats.
func rendered(h *oncrpc.Header) [nCols][]string {
	var c [nCols][]string
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	c[cXID] = []string{fmt.Sprintf("0x%08x", h.XID)}
	c[cMsgTyp] = []string{u(uint32(h.MsgType))}
	if h.MsgType == oncrpc.Call {
		c[cVersion] = []string{u(h.RPCVers)}
		c[cProgram] = []string{u(uint32(h.Prog))}
		c[cProgVers] = []string{u(h.Vers)}
		c[cProcedure] = []string{u(h.Proc)}
		c[cFlavor] = []string{u(uint32(h.Cred.Flavor)), u(uint32(h.Verf.Flavor))}
		c[cAuthLen] = []string{strconv.Itoa(len(h.Cred.Body)), strconv.Itoa(len(h.Verf.Body))}
		if h.Cred.Flavor == oncrpc.AuthSysFlav {
			a := h.AuthSys
			c[cStamp] = []string{fmt.Sprintf("0x%08x", a.Stamp)}
			c[cMachine] = []string{string(a.MachineName)}
			c[cUID] = []string{u(a.UID)}
			c[cGID] = []string{u(a.GID)}
			for _, g := range a.GIDs {
				c[cGID] = append(c[cGID], u(g))
			}
		}
		return c
	}
	c[cReplyStat] = []string{u(uint32(h.ReplyStat))}
	if h.ReplyStat == oncrpc.MsgAccepted {
		c[cFlavor] = []string{u(uint32(h.Verf.Flavor))}
		c[cAuthLen] = []string{strconv.Itoa(len(h.Verf.Body))}
		c[cAccept] = []string{u(uint32(h.AcceptStat))}
	}
	return c
}

// compare checks our columns against tshark's. tshark repeats fields it
// shows more than once (the NFS layer re-adds rpc.programversion; a READ
// reply with a Write chunk is dissected twice in one pass), so ours must be
// a prefix of tshark's list.
func compare(t *testing.T, where string, got, want [nCols][]string) {
	t.Helper()
	names := [...]string{"rpc.xid", "rpc.msgtyp", "rpc.version", "rpc.program", "rpc.programversion", "rpc.procedure",
		"rpc.auth.flavor", "rpc.auth.length", "rpc.auth.stamp", "rpc.auth.machinename", "rpc.auth.uid", "rpc.auth.gid",
		"rpc.replystat", "rpc.state_accept"}
	for i, n := range names {
		g, w := got[i], want[i]
		ok := len(g) <= len(w)
		for j := 0; ok && j < len(g); j++ {
			ok = g[j] == w[j]
		}
		if !ok {
			t.Errorf("%s %s: got %q, tshark %q", where, n, g, w)
		}
	}
}

// checkBody verifies HeaderLen against the first field of the NFS arguments
// or results as tshark decodes it.
func checkBody(t *testing.T, where string, h *oncrpc.Header, callProc uint32, callVers uint32, w [nCols][]string) bool {
	t.Helper()
	p := h.Payload()
	if len(p) < 4 || !h.HasBody() {
		return false
	}
	first := strconv.FormatUint(uint64(binary.BigEndian.Uint32(p)), 10)
	var want []string
	switch {
	case h.MsgType == oncrpc.Call && h.Prog == oncrpc.ProgNFS && h.Vers == 3 && h.Proc != 0:
		want = w[cFHLen] // every NFSv3 argument starts with a file handle
	case h.MsgType == oncrpc.Call && h.Prog == oncrpc.ProgNFS && h.Vers == 4 && h.Proc == 1:
		// COMPOUND4args: tag (utf8str_cs), minorversion.
		tl := 0
		if len(w[cTag]) > 0 {
			tl = len(w[cTag][0])
		}
		want = []string{strconv.Itoa(tl)}
		if len(w[cMinorVers]) > 0 && len(p) >= 8+((tl+3)&^3) {
			mv := strconv.FormatUint(uint64(binary.BigEndian.Uint32(p[4+((tl+3)&^3):])), 10)
			if mv != w[cMinorVers][0] {
				t.Errorf("%s: minorversion after HeaderLen %s, tshark %s", where, mv, w[cMinorVers][0])
			}
		}
	case h.MsgType == oncrpc.Reply && callVers == 3 && callProc != 0:
		want = w[cNFSStatus] // every NFSv3 result starts with nfsstat3
	case h.MsgType == oncrpc.Reply && callVers == 4 && callProc == 1:
		want = w[cNFSStat4] // COMPOUND4res starts with nfsstat4
	default:
		return false
	}
	if len(want) == 0 || want[0] != first {
		t.Errorf("%s: word at HeaderLen %d is %s, tshark's first NFS field %q", where, h.HeaderLen, first, want)
		return false
	}
	return true
}

// TestRealRPCAgainstTshark decodes the RPC message of every RDMA_MSG of the
// NFS captures, and every RPC record on TCP (MOUNT, portmap), and compares the
// header fields with tshark's, and HeaderLen with where tshark's NFS fields start.
func TestRealRPCAgainstTshark(t *testing.T) {
	for _, name := range nfsCaptures {
		t.Run(name, func(t *testing.T) {
			pkts, err := capture.ReadPcap(filepath.Join("..", "..", "testdata", "pcaps", name+".pcap"))
			if err != nil {
				t.Fatal(err)
			}
			rows := readRows(t, name)
			byFrame := map[int][nCols][]string{}
			byXID := map[string][nCols][]string{} // first frame showing xid+msgtype
			for _, r := range rows {
				byFrame[r.frame] = r.cols
				if len(r.cols[cXID]) == 0 || len(r.cols[cMsgTyp]) == 0 {
					continue
				}
				k := r.cols[cXID][0] + "/" + r.cols[cMsgTyp][0]
				if _, ok := byXID[k]; !ok {
					byXID[k] = r.cols
				}
			}
			type call struct{ proc, vers uint32 }
			calls := map[uint32]call{}
			var rh rpcrdma.Header
			var h oncrpc.Header
			compared, bodies, stats := 0, 0, map[string]int{}
			for _, s := range capture.Sends(pkts) {
				if rh.DecodeFromBytes(s.Payload) != nil || rh.Proc != rpcrdma.RDMAMsg {
					continue
				}
				where := fmt.Sprintf("frame %d", s.Frame)
				if err := h.DecodeFromBytes(rh.Payload()); err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if h.MsgType == oncrpc.Call {
					calls[h.XID] = call{h.Proc, h.Vers}
					stats[h.Prog.String()]++
				}
				w, ok := byXID[fmt.Sprintf("0x%08x/%d", h.XID, h.MsgType)]
				if !ok {
					t.Errorf("%s: tshark never shows RPC xid %#x type %s", where, h.XID, h.MsgType)
					continue
				}
				compare(t, where, rendered(&h), w)
				compared++
				c := calls[h.XID]
				if checkBody(t, where, &h, c.proc, c.vers, w) {
					bodies++
				}
			}
			// RPC on TCP: one record-marked record per segment in these captures.
			tcp := 0
			for _, seg := range capture.TCPPayloads(pkts) {
				w, ok := byFrame[seg.Frame]
				if !ok || seg.SrcPort == 20049 || seg.DstPort == 20049 || len(seg.Payload) < 8 {
					continue
				}
				rm := binary.BigEndian.Uint32(seg.Payload)
				if rm&0x80000000 == 0 || int(rm&0x7fffffff) != len(seg.Payload)-4 {
					continue
				}
				if err := h.DecodeFromBytes(seg.Payload[4:]); err != nil {
					t.Errorf("frame %d: %v", seg.Frame, err)
					continue
				}
				compare(t, fmt.Sprintf("frame %d (TCP)", seg.Frame), rendered(&h), w)
				if h.MsgType == oncrpc.Call {
					stats["TCP "+h.Prog.String()]++
				}
				tcp++
			}
			if compared == 0 || bodies == 0 {
				t.Fatal("nothing compared")
			}
			t.Logf("%d RPC headers over RDMA and %d over TCP compared with tshark; HeaderLen checked against NFS fields in %d; calls by program %v", compared, tcp, bodies, stats)
		})
	}
}
