package iscsi

import (
	"bufio"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// The real capture (testdata/pcaps/ulp/rxe-iser.pcap) read by hand —
// RoCEv2 packets through pcaptest, RC Sends put together from their
// packets — without the engine, and tshark 4.0's reading of it
// (testdata/tshark/iser/, made by gen.sh there).

const capturePath = "../testdata/pcaps/ulp/rxe-iser.pcap"

// send is one RC Send of the capture.
type send struct {
	frames     []int
	fromClient bool
	invalidate bool
	data       []byte
}

var client = netip.MustParseAddr("192.0.2.2")

func captureSends(t testing.TB) []send {
	t.Helper()
	_, frames := pcaptest.Read(t, capturePath)
	type key struct {
		qp     uint32
		client bool
	}
	open := map[key]*send{}
	var out []send
	for _, f := range frames {
		r, ok := pcaptest.ParseRoCEv2(f.Data)
		if !ok || !r.RC() {
			continue
		}
		k := key{r.DestQP, r.Src == client}
		p := r.AfterBTH()
		switch r.OpCode {
		case 0x00: // SEND FIRST
			open[k] = &send{frames: []int{f.Num}, fromClient: k.client, data: append([]byte(nil), p...)}
		case 0x01, 0x02, 0x16: // SEND MIDDLE, LAST, LAST WITH INVALIDATE
			s := open[k]
			if s == nil {
				t.Fatalf("frame %d: a Send continues none", f.Num)
			}
			if r.OpCode == 0x16 {
				s.invalidate, p = true, p[4:]
			}
			s.frames = append(s.frames, f.Num)
			s.data = append(s.data, p...)
			if r.OpCode != 0x01 {
				out = append(out, *s)
				delete(open, k)
			}
		case 0x04: // SEND ONLY
			out = append(out, send{frames: []int{f.Num}, fromClient: k.client, data: append([]byte(nil), p...)})
		case 0x17: // SEND ONLY WITH INVALIDATE
			out = append(out, send{frames: []int{f.Num}, fromClient: k.client, invalidate: true, data: append([]byte(nil), p[4:]...)})
		}
	}
	if len(out) < 300 {
		t.Fatalf("%d Sends", len(out))
	}
	return out
}

// tsharkRows reads rxe-iser.pdus.tsv: frame -> field -> value, for the
// frames where tshark decoded an iSCSI PDU (its heuristic also takes some
// RDMA data packets for iSER: KD-ISER-HEURISTIC).
func tsharkRows(t testing.TB) map[int]map[string]string {
	t.Helper()
	f, err := os.Open("../testdata/tshark/iser/rxe-iser.pdus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan()
	header := strings.Split(sc.Text(), "\t")
	out := map[int]map[string]string{}
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		row := map[string]string{}
		for i, v := range cols {
			if v != "" && i < len(header) {
				row[header[i]] = v
			}
		}
		if row["iscsi.opcode"] == "" {
			continue
		}
		n, _ := strconv.Atoi(cols[0])
		out[n] = row
	}
	return out
}

func hex(v uint64, digits int) string {
	s := strconv.FormatUint(v, 16)
	return "0x" + strings.Repeat("0", max(0, digits-len(s))) + s
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// TestCaptureEqualsTshark: every Send of the capture decodes, and every
// field tshark shows for its PDU (on the Send's first packet) is what the
// decoder says, in tshark's form.
func TestCaptureEqualsTshark(t *testing.T) {
	rows := tsharkRows(t)
	sends := captureSends(t)
	counts := map[Opcode]int{}
	compared := 0
	for _, s := range sends {
		var m Message
		if err := m.DecodeFromBytes(s.data); err != nil {
			t.Errorf("frames %v: %v", s.frames, err)
			continue
		}
		p := &m.PDU
		counts[p.Opcode]++
		if p.Opcode.FromInitiator() != s.fromClient {
			t.Errorf("frames %v: %s from the client %v", s.frames, p.Opcode, s.fromClient)
		}
		row := rows[s.frames[0]]
		if row == nil {
			t.Errorf("frames %v: tshark has no PDU", s.frames)
			continue
		}
		delete(rows, s.frames[0])
		want := map[string]string{
			"iser.flags":              hex(uint64(m.ISER.Flags), 2),
			"iser.flags.opcode":       hex(uint64(m.ISER.Opcode), 2),
			"iser.flags.wsv":          boolStr(m.ISER.WSV()),
			"iser.flags.rsv":          boolStr(m.ISER.RSV()),
			"iser.write_stag":         hex(uint64(m.ISER.WriteSTag), 8),
			"iser.write_base_offset":  hex(m.ISER.WriteBaseOffset, 16),
			"iser.read_stag":          hex(uint64(m.ISER.ReadSTag), 8),
			"iser.read_base_offset":   hex(m.ISER.ReadBaseOffset, 16),
			"iscsi.opcode":            hex(uint64(p.Opcode), 2),
			"iscsi.datasegmentlength": strconv.Itoa(int(p.DataSegmentLength)),
			"iscsi.totalahslength":    strconv.Itoa(int(p.TotalAHSLength)),
			"iscsi.initiatortasktag":  hex(uint64(p.ITT), 8),
		}
		switch p.Opcode {
		case OpSCSICommand:
			want["iscsi.scsicommand.R"] = boolStr(p.Read())
			want["iscsi.scsicommand.W"] = boolStr(p.Write())
			want["iscsi.scsicommand.F"] = boolStr(p.Final())
			want["iscsi.scsicommand.attr"] = hex(uint64(p.Attr()), 2)
			want["iscsi.scsicommand.expecteddatatransferlength"] = strconv.Itoa(int(p.ExpectedDataTransferLength()))
			want["iscsi.cmdsn"] = strconv.Itoa(int(p.CmdSN()))
			want["iscsi.expstatsn"] = strconv.Itoa(int(p.ExpStatSN()))
			want["scsi_sbc.opcode"] = hex(uint64(p.CDB().Opcode()), 2)
		case OpSCSIResponse:
			want["iscsi.scsiresponse.response"] = hex(uint64(p.Response()), 2)
			want["iscsi.scsiresponse.status"] = hex(uint64(p.Status()), 2)
			want["iscsi.scsiresponse.residualcount"] = strconv.Itoa(int(p.ResidualCount()))
			want["iscsi.statsn"] = strconv.Itoa(int(p.StatSN()))
			want["iscsi.expcmdsn"] = strconv.Itoa(int(p.ExpCmdSN()))
			want["iscsi.maxcmdsn"] = strconv.Itoa(int(p.MaxCmdSN()))
		case OpLogin, OpLoginResp:
			want["iscsi.login.T"] = boolStr(p.Transit())
			want["iscsi.login.C"] = boolStr(p.Continue())
			want["iscsi.login.csg"] = hex(uint64(p.CSG()), 2)
			want["iscsi.login.nsg"] = hex(uint64(p.NSG()), 2)
			want["iscsi.versionmax"] = hex(uint64(p.VersionMax()), 2)
			want["iscsi.tsih"] = hex(uint64(p.TSIH()), 4)
			if p.Opcode == OpLoginResp {
				want["iscsi.versionactive"] = hex(uint64(p.VersionMin()), 2)
				want["iscsi.login.status"] = hex(uint64(p.LoginStatus()), 4)
			} else {
				want["iscsi.versionmin"] = hex(uint64(p.VersionMin()), 2)
				want["iscsi.cid"] = hex(uint64(p.CID()), 4)
			}
		case OpText, OpTextResp:
			want["iscsi.text.F"] = boolStr(p.Final())
			want["iscsi.text.C"] = boolStr(p.Continue())
			want["iscsi.targettransfertag"] = hex(uint64(p.TTT()), 8)
		}
		if p.Opcode == OpLogin || p.Opcode == OpLoginResp || p.Opcode == OpText || p.Opcode == OpTextResp {
			var kv []string
			for k, v, rest, ok := p.KeyValues().Next(); ok; k, v, rest, ok = rest.Next() {
				kv = append(kv, string(k)+"="+string(v))
			}
			want["iscsi.keyvalue"] = strings.Join(kv, ",")
		}
		for name, w := range want {
			got := row[name]
			if name == "iscsi.totalahslength" && got == "" {
				got = "0" // tshark omits it on some opcodes
			}
			if name == "scsi_sbc.opcode" {
				// tshark shows a WRITE's opcode twice: for the command and
				// again for its immediate data (KD-ISER-IMMEDIATE-DATA).
				got, _, _ = strings.Cut(got, ",")
			}
			if got != w {
				t.Errorf("frames %v (%s): %s = %q, tshark %q", s.frames, p.Opcode, name, w, got)
			}
			compared++
		}
	}
	for n, row := range rows {
		t.Errorf("frame %d: tshark has a PDU (%s) no Send begins", n, row["iscsi.opcode"])
	}
	// tshark's counts on the capture: 148 SCSI commands and responses, 2
	// Logins, 1 Text, each answered.
	if counts[OpSCSICommand] != 148 || counts[OpSCSIResponse] != 148 || counts[OpLogin] != 2 ||
		counts[OpLoginResp] != 2 || counts[OpText] != 1 || counts[OpTextResp] != 1 {
		t.Errorf("PDUs by opcode: %v", counts)
	}
	if compared < 3000 {
		t.Errorf("%d values compared", compared)
	}
	t.Logf("%d values compared", compared)
}

// TestCaptureCDBs: the CDBs and SCSI statuses of the capture, as tshark's
// Info column names them (rxe-iser.info.tsv).
func TestCaptureCDBs(t *testing.T) {
	b, err := os.ReadFile("../testdata/tshark/iser/rxe-iser.info.tsv")
	if err != nil {
		t.Fatal(err)
	}
	info := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n, s, _ := strings.Cut(line, "\t")
		k, _ := strconv.Atoi(n)
		info[k] = s
	}
	names := map[string]int{}
	for _, s := range captureSends(t) {
		var m Message
		if m.DecodeFromBytes(s.data) != nil {
			continue
		}
		p := &m.PDU
		switch p.Opcode {
		case OpSCSICommand:
			names[p.CDB().Name()]++
			if w := "SCSI: " + p.CDB().Opcode().String() + " "; !strings.HasPrefix(info[s.frames[0]], w) {
				t.Errorf("frame %d: %q, tshark %q", s.frames[0], w, info[s.frames[0]])
			}
			if lba, n, ok := p.CDB().LBA(); ok {
				if w := "(LBA: " + hex(lba, 8) + ", Len: " + strconv.Itoa(int(n)) + ")"; !strings.Contains(info[s.frames[0]], w) {
					t.Errorf("frame %d: %q, tshark %q", s.frames[0], w, info[s.frames[0]])
				}
			}
		case OpSCSIResponse:
			if w := "(" + p.Status().String() + ")"; !strings.Contains(info[s.frames[0]], w) {
				t.Errorf("frame %d: %q, tshark %q", s.frames[0], w, info[s.frames[0]])
			}
		}
	}
	// tshark's Info column counts on the capture.
	want := map[string]int{"Read(10)": 67, "Write(10)": 65, "Mode Sense(6)": 6, "Inquiry": 4, "Test Unit Ready": 2,
		"Read Capacity(16)": 2, "Report LUNs": 1, "Report Supported Operation Codes": 1}
	for k, v := range want {
		if names[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, names[k], v, names)
		}
	}
}
