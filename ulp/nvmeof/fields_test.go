package nvmeof_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TestFieldsEqualTshark: every nvme-rdma.* and nvme.* field of FieldTable
// holds, on every frame of rxe-nvmeof.pcap and rxe-nvmeof-mix-small.pcap,
// what tshark 4.0 -2 printed for it (testdata/tshark/nvme/*.capsules.tsv,
// made by gen.sh there): the same values in the same form, and nothing
// where tshark has nothing — but on the frames of the Sends tshark does not
// reassemble (KD-NVME-MULTIPACKET: rxe-nvmeof's I/O queue Connect and its
// completion, frames 93-96; the mix capture's multi-packet Sends, listed
// in its sends.tsv) and the completions of their commands, where tshark
// shows no capsule.
func TestFieldsEqualTshark(t *testing.T) {
	for _, tc := range []struct {
		name              string
		minFrames, minVal int
	}{{"rxe-nvmeof", 300, 2000}, {"rxe-nvmeof-mix-small", 500, 5000}} {
		t.Run(tc.name, func(t *testing.T) { fieldsEqualTshark(t, tc.name, tc.minFrames, tc.minVal) })
	}
}

func fieldsEqualTshark(t *testing.T, name string, minFrames, minValues int) {
	set := fields.NewFieldSet(nvmeof.FieldTable)
	header, want := readTSV(t, "../../testdata/tshark/nvme/"+name+".capsules.tsv")
	multi := map[int]bool{}
	if name == "rxe-nvmeof" {
		for n := 93; n <= 96; n++ {
			multi[n] = true
		}
	} else {
		// SEND_FIRST/_MIDDLE/_LAST (BTH opcodes 0-2) from the sends file.
		h, rows := readTSV(t, "../../testdata/tshark/nvme/"+name+".sends.tsv")
		op := -1
		for i, c := range h {
			if c == "infiniband.bth.opcode" {
				op = i
			}
		}
		for n, row := range rows {
			if op >= 0 && op < len(row) && row[op] != "" && row[op] <= "2" {
				multi[n] = true
			}
		}
		if len(multi) == 0 {
			t.Fatal("no multi-packet Sends read")
		}
	}
	var cols []int
	for i, name := range header {
		if _, ok := set.Lookup(name); ok {
			cols = append(cols, i)
		}
	}
	if len(cols) < 80 {
		t.Fatalf("only %d of our fields are in tshark's file", len(cols))
	}
	r, err := source.Open("../../testdata/pcaps/ulp/" + name + ".pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	compared, frames := 0, 0
	err = e.Run(r, func(p *dissect.Packet) error {
		row, inTshark := want[p.Number]
		if multi[p.Number] {
			return nil // tshark does not decode them (KD-NVME-MULTIPACKET)
		}
		for _, x := range p.ULP {
			// Nor the completion of a command it did not see.
			if c, ok := x.(*nvmeof.Capsule); ok && !c.Command && c.Request != nil && multi[c.Request.Packet] {
				return nil
			}
		}
		for _, ci := range cols {
			fd, _ := set.Lookup(header[ci])
			var vals []string
			fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
			got, exp := strings.Join(vals, ","), ""
			if inTshark && ci < len(row) {
				exp = row[ci]
			}
			if got != exp {
				t.Errorf("frame %d %s: %q, tshark %q", p.Number, header[ci], got, exp)
			}
			if exp != "" {
				compared++
			}
		}
		if inTshark {
			frames++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if frames < minFrames || compared < minValues {
		t.Errorf("compared %d values on %d frames", compared, frames)
	}
	t.Logf("%d values on %d frames, %d fields", compared, frames, len(cols))
}

// readTSV reads a tshark -T fields -E header=y file: its header, and its
// rows by frame number (the first column).
func readTSV(t *testing.T, path string) ([]string, map[int][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan()
	header := strings.Split(sc.Text(), "\t")
	rows := map[int][]string{}
	for sc.Scan() {
		row := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(row[0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows[n] = row
	}
	return header, rows
}

// TestInfoEqualsTshark: the summary line names each capsule as tshark's
// Info column does (rxe-nvmeof.info.tsv, gen.sh), but that tshark adds what
// a Property Get/Set, an Identify or a Get Log Page reads ("Controller
// Capabilities", "Namespace", "SMART/Health Information": ours are in the
// fields), and shortens Asynchronous Event Request, NVMe Base 2.0's name,
// to "Async Event Request" (KD-NVME-INFO).
func TestInfoEqualsTshark(t *testing.T) {
	b, err := os.ReadFile("../../testdata/tshark/nvme/rxe-nvmeof.info.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		num, info, _ := strings.Cut(line, "\t")
		n, _ := strconv.Atoi(num)
		if i := strings.LastIndex(info, "| "); i >= 0 {
			info = info[i+2:]
		}
		for _, cmd := range []string{"Property Get", "Property Set", "Identify", "Get Log Page"} {
			if j := strings.Index(info, cmd+" "); j >= 0 {
				info = info[:j+len(cmd)]
			}
		}
		info = strings.Replace(info, "Async Event Request", "Asynchronous Event Request", 1)
		want[n] = info
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	seen := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		got := string(nvmeof.AppendInfo(p, nil))
		w, ok := want[p.Number]
		switch {
		case ok:
			seen++
			if got != w {
				t.Errorf("frame %d: %q, tshark %q", p.Number, got, w)
			}
		case got != "" && (p.Number < 93 || p.Number > 96):
			t.Errorf("frame %d: %q where tshark has no capsule", p.Number, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) || seen < 300 {
		t.Errorf("%d of tshark's %d capsule frames seen", seen, len(want))
	}
}

// TestOwnFieldsAgreeWithTshark: rdmashark.nvme.* on rxe-nvmeof.pcap, the
// expectations from tshark's pairing (rxe-nvmeof.pairing.tsv: each
// capsule's frame, nvme-rdma.cmd.qid and CID) and the capture's own
// timestamps: every capsule's rdmashark.nvme.qid is tshark's queue; a
// completion's rdmashark.nvme.cmd_frame is the latest command of its
// queue and CID before it, and rdmashark.nvme.latency the time between
// the two frames; every capsule after the admin Connect's completion
// (frame 18, tshark's nvme.fabrics.cqe.connect.cntrlid 0x0001) is of
// controller 1, CNTLID 0x0001.
func TestOwnFieldsAgreeWithTshark(t *testing.T) {
	set := fields.NewFieldSet(nvmeof.FieldTable)
	get := func(p *dissect.Packet, name string) string {
		fd, ok := set.Lookup(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		var vals []string
		fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
		return strings.Join(vals, ",")
	}
	rows := map[int]tsharkRow{}
	for _, r := range tsharkPairing(t) {
		rows[r.frame] = r
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	type cmdAt struct {
		frame int
		at    time.Time
	}
	last := map[[2]int]cmdAt{}
	checked := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		row, ok := rows[p.Number]
		if !ok {
			return nil
		}
		if got := get(p, "rdmashark.nvme.qid"); got != strconv.Itoa(row.qid) {
			t.Errorf("frame %d: rdmashark.nvme.qid %q, tshark %d", p.Number, got, row.qid)
		}
		ctrl, cntlid := "", ""
		if p.Number >= 18 {
			ctrl, cntlid = "1", "0x0001"
		}
		if c, id := get(p, "rdmashark.nvme.controller"), get(p, "rdmashark.nvme.cntlid"); c != ctrl || id != cntlid {
			t.Errorf("frame %d: controller %q CNTLID %q, want %q %q", p.Number, c, id, ctrl, cntlid)
		}
		k := [2]int{row.qid, row.cid}
		if row.command {
			last[k] = cmdAt{p.Number, p.Timestamp}
			if get(p, "rdmashark.nvme.latency") != "" || get(p, "rdmashark.nvme.cmd_frame") != "" {
				t.Errorf("frame %d: a command with a latency", p.Number)
			}
			return nil
		}
		c, ok := last[k]
		if !ok {
			return nil // its command is in frames tshark does not decode
		}
		lat := p.Timestamp.Sub(c.at)
		want := fmt.Sprintf("%d.%09d", lat/time.Second, lat%time.Second)
		if got := get(p, "rdmashark.nvme.latency"); got != want {
			t.Errorf("frame %d: rdmashark.nvme.latency %q, want %q (frame %d to %d)", p.Number, got, want, c.frame, p.Number)
		}
		if got := get(p, "rdmashark.nvme.cmd_frame"); got != strconv.Itoa(c.frame) {
			t.Errorf("frame %d: rdmashark.nvme.cmd_frame %q, want %d", p.Number, got, c.frame)
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 150 {
		t.Errorf("%d completions checked", checked)
	}
}

// TestCMFieldsOnPortsGivenToNew: the CM private data fields decode the set-up
// of a connection to a port given to New, as to 4420 and 8009; not to
// another port.
func TestCMFieldsOnPortsGivenToNew(t *testing.T) {
	nvmeof.New(4427)
	set := fields.NewFieldSet(nvmeof.FieldTable)
	fd, _ := set.Lookup("nvme-rdma.cm.req.hsqsize")
	for _, tc := range []struct {
		port uint16
		want string
	}{{4420, "31"}, {4427, "31"}, {4428, ""}} {
		c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServicePort: tc.port}
		c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 5, Bytes: cmReq(1, 32, 31)}
		var got []string
		fd.Get(&dissect.Packet{Number: 5, Conn: c}, func(v fields.Value) { got = append(got, fd.Format(v)) })
		if strings.Join(got, ",") != tc.want {
			t.Errorf("port %d: nvme-rdma.cm.req.hsqsize %q, want %q", tc.port, got, tc.want)
		}
	}
}

// TestCMControllerIDOnLinux612: nvme-rdma.cm.req.cntlid and the reserved
// octets on the Linux 6.12 captures, whose I/O queue's CM REQ carries the
// CNTLID the admin Connect returned. tshark 4.0 does not decode the REQ's
// private data (its IP CM Consumer PrivateData bytes, RoCE frames 11 and
// 88: 0000 0000 2000 1f00 0000… and 0000 0100 8000 7f00 0100…; siw's MPA
// Requests, frames 14 and 97, carry the same after IRD/ORD 8000 0000);
// it decodes the REP's: nvme-rdma.cm.rsp.reserved is 28 zero octets in
// frames 14 and 89.
func TestCMControllerIDOnLinux612(t *testing.T) {
	zeros := func(n int) string { return strings.Repeat("00", n) }
	for _, tc := range []struct {
		file string
		want map[int][2]string // frame → cntlid, reserved
		rsp  map[int]string
	}{
		{"rxe-nvmeof.pcap", map[int][2]string{11: {"0x0000", zeros(22)}, 88: {"0x0001", zeros(22)}}, map[int]string{14: zeros(28), 89: zeros(28)}},
		{"siw-nvmeof.pcap", map[int][2]string{14: {"0x0000", zeros(22)}, 97: {"0x0001", zeros(22)}}, nil},
	} {
		set := fields.NewFieldSet(nvmeof.FieldTable)
		get := func(p *dissect.Packet, name string) string {
			fd, ok := set.Lookup(name)
			if !ok {
				t.Fatalf("no field %s", name)
			}
			var vals []string
			fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
			return strings.Join(vals, ",")
		}
		r, err := source.Open("../../testdata/pcaps/linux612/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
		seen := 0
		err = e.Run(r, func(p *dissect.Packet) error {
			id, res := get(p, "nvme-rdma.cm.req.cntlid"), get(p, "nvme-rdma.cm.req.reserved")
			if w, ok := tc.want[p.Number]; ok {
				seen++
				if id != w[0] || res != w[1] {
					t.Errorf("%s frame %d: cntlid %q reserved %q, want %q %q", tc.file, p.Number, id, res, w[0], w[1])
				}
			} else if id != "" {
				t.Errorf("%s frame %d: cntlid %q on a frame that is no CM REQ", tc.file, p.Number, id)
			}
			if w, ok := tc.rsp[p.Number]; ok {
				seen++
				if got := get(p, "nvme-rdma.cm.rsp.reserved"); got != w {
					t.Errorf("%s frame %d: rsp.reserved %q, tshark %q", tc.file, p.Number, got, w)
				}
			}
			return nil
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if seen != len(tc.want)+len(tc.rsp) {
			t.Errorf("%s: %d of %d frames seen", tc.file, seen, len(tc.want)+len(tc.rsp))
		}
	}
}

// TestConnectDataEqualsTshark: nvme.fabrics.cmd.connect.data.* on every
// frame of rxe-nvmeof.pcap hold what tshark 4.0 -2 printed
// (rxe-nvmeof.data.tsv, gen.sh): the admin queue's Connect data in the
// RDMA Read Response that carried it (frame 17), nothing elsewhere — but
// the I/O queue's in-capsule Connect data in its two-packet Send (frame
// 94), which tshark does not reassemble (KD-NVME-MULTIPACKET): there
// rdmashark shows the same host and subsystem with the CNTLID the admin
// Connect returned (0x0001, tshark's nvme.fabrics.cqe.connect.cntrlid in
// frame 18).
func TestConnectDataEqualsTshark(t *testing.T) {
	set := fields.NewFieldSet(nvmeof.FieldTable)
	header, want := readTSV(t, "../../testdata/tshark/nvme/rxe-nvmeof.data.tsv")
	var cols []int
	for i, name := range header {
		if _, ok := set.Lookup(name); ok && strings.HasPrefix(name, "nvme.fabrics.cmd.connect.data.") {
			cols = append(cols, i)
		}
	}
	if len(cols) != 4 {
		t.Fatalf("%d Connect data columns in tshark's file", len(cols))
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	compared := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		row := want[p.Number]
		for _, ci := range cols {
			fd, _ := set.Lookup(header[ci])
			var vals []string
			fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
			got, exp := strings.Join(vals, ","), ""
			if ci < len(row) {
				exp = row[ci]
			}
			if p.Number == 94 {
				exp = map[string]string{"nvme.fabrics.cmd.connect.data.cntrlid": "0x0001"}[header[ci]]
				if exp == "" {
					exp = want[17][ci]
				}
			}
			if got != exp {
				t.Errorf("frame %d %s: %q, tshark %q", p.Number, header[ci], got, exp)
			}
			if exp != "" {
				compared++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if compared != 8 {
		t.Errorf("%d values compared, want 8 (frames 17 and 94)", compared)
	}
}
