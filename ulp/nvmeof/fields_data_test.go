package nvmeof_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TestAdminDataEqualsTshark: every field of the data admin commands
// return by RDMA Write — nvme.cmd.identify.ctrl.*, .ns.*, .nslist.*,
// nvme.cmd.get_logpage.* and nvme.data — holds, on every frame of the
// three RoCE captures, what tshark 4.0 -2 printed for it
// (testdata/tshark/nvme/*.admindata.tsv, gen.sh): tshark decodes each
// RDMA Write packet at its offset in the data, and so does rdmashark. But
// the Commands Supported and Effects log page's packets after the first
// (KD-NVME-DATA): tshark decodes its I/O Command Supported entries from
// octet 1028 instead of 1024 (NVMe Base 2.0 5.16.1.6: IOCS0 is octets
// 1024-1027), runs past the packet (its "Malformed Packet") and shows
// octets 2048-4095, which are reserved, as more IOCS entries; rdmashark
// shows IOCS0-IOCS255 at 1024-2047 and nothing in the reserved octets.
// There the test holds rdmashark to the specification instead: the
// entries tshark shows are rdmashark's shifted by one.
func TestAdminDataEqualsTshark(t *testing.T) {
	for _, tc := range []struct {
		file            string
		minFrames, minV int
	}{
		{"ulp/rxe-nvmeof", 36, 400},
		{"ulp/rxe-nvmeof-mix-small", 57, 1300},
		{"linux612/rxe-nvmeof", 36, 400},
	} {
		t.Run(tc.file, func(t *testing.T) { adminDataEqualsTshark(t, tc.file, tc.minFrames, tc.minV) })
	}
}

func adminDataEqualsTshark(t *testing.T, file string, minFrames, minValues int) {
	set := fields.NewFieldSet(nvmeof.FieldTable)
	header, want := readTSV(t, "../../testdata/tshark/nvme/"+strings.ReplaceAll(file, "/", "-")+".admindata.tsv")
	var cols []int
	for i, name := range header {
		if i == 0 {
			continue
		}
		if _, ok := set.Lookup(name); !ok {
			t.Errorf("no field %s", name)
			continue
		}
		cols = append(cols, i)
	}
	r, err := source.Open("../../testdata/pcaps/" + file + ".pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	compared, values, frames, effects := 0, 0, 0, 0
	seen := map[int]bool{}
	err = e.Run(r, func(p *dissect.Packet) error {
		row, inTshark := want[p.Number]
		effectsLater := false
		for _, x := range p.ULP {
			if d, ok := x.(*nvmeof.DataRecord); ok && d.LID == 0x05 && d.Transfer > 0 {
				effectsLater = true
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
			if effectsLater && strings.HasPrefix(header[ci], "nvme.cmd.get_logpage.cmd_and_eff.") {
				effects += checkEffectsShift(t, p.Number, header[ci], vals, exp)
				continue
			}
			if got != exp {
				t.Errorf("frame %d %s: %.80q, tshark %.80q", p.Number, header[ci], got, exp)
			}
			if exp != "" {
				compared++
				values += len(vals)
			}
		}
		if inTshark {
			frames++
			seen[p.Number] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("frame %d of tshark's file not seen", n)
		}
	}
	if frames < minFrames || compared < minValues {
		t.Errorf("compared %d columns on %d frames", compared, frames)
	}
	t.Logf("%d columns (%d values) equal on %d frames, %d fields; %d Commands Supported and Effects values held to the specification", compared, values, frames, len(cols), effects)
}

// checkEffectsShift: on a packet of the Commands Supported and Effects
// log page after the first, tshark's entries (from packet octet 4 on) are
// rdmashark's (from packet octet 0) less the first, and more of them —
// those of the reserved octets — when the packet reaches past octet 2048.
// It returns the values checked.
func checkEffectsShift(t *testing.T, frame int, name string, got []string, tshark string) int {
	t.Helper()
	var exp []string
	if tshark != "" {
		exp = strings.Split(tshark, ",")
	}
	if len(got) == 0 {
		return 0 // a packet of the reserved octets: rdmashark shows no entry
	}
	if len(exp) < len(got)-1 {
		t.Errorf("frame %d %s: tshark shows %d entries, rdmashark %d", frame, name, len(exp), len(got))
		return 0
	}
	// tshark's entry i, 4 octets from packet octet 4+4i, is rdmashark's
	// entry i+1.
	for i := 1; i < len(got); i++ {
		if exp[i-1] != got[i] {
			t.Errorf("frame %d %s[%d]: %s, tshark's [%d] %s", frame, name, i, got[i], i-1, exp[i-1])
			return 0
		}
	}
	return len(got) - 1
}

// adminDataValues returns, per data field (nvme.cmd.identify.ctrl.*,
// .ns.*, .nslist.*, the log pages' data, nvme.data), its values in the
// capture in order.
func adminDataValues(t *testing.T, file string) map[string][]string {
	t.Helper()
	set := fields.NewFieldSet(nvmeof.FieldTable)
	var fds []*fields.Field
	for _, fd := range set.All() {
		n := fd.Name
		if strings.HasPrefix(n, "nvme.cmd.identify.ctrl.") || strings.HasPrefix(n, "nvme.cmd.identify.ns.") || strings.HasPrefix(n, "nvme.cmd.identify.nslist.") ||
			n == "nvme.data" || strings.HasPrefix(n, "nvme.cmd.get_logpage.") && !strings.Contains(n, "dword") && n != "nvme.cmd.get_logpage.lpo" && n != "nvme.cmd.get_logpage.numd" {
			fds = append(fds, fd)
		}
	}
	r, err := source.Open("../../testdata/pcaps/" + file + ".pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][]string{}
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	err = e.Run(r, func(p *dissect.Packet) error {
		for _, fd := range fds {
			fd.Get(p, func(v fields.Value) { out[fd.Name] = append(out[fd.Name], fd.Format(v)) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAdminDataIWARPEqualsRoCE: the soft-iWARP captures, which tshark 4.0
// does not decode as NVMe, show the same admin data as the Soft-RoCE
// capture of the same workload — every field, value for value in the same
// order (IOCCSZ, MDTS, MN, SUBNQN, MAXCMD, the namespaces, the log pages,
// the discovery entries) although siw cuts the data every 1428 octets and
// rxe every 1024 — but for
//   - nvme.cmd.identify.ctrl.sn: Linux nvmet draws a subsystem's serial
//     number at random when the lab creates it, so each run has its own
//     (20 hex digits on both);
//   - what is each packet's part of the data as it is cut: nvme.data,
//     nvme.cmd.identify.ns.vs (vendor specific octets: compared joined),
//     nvme.cmd.get_logpage.identify.rcrd (an entry's octets from its
//     start in the packet it starts in).
func TestAdminDataIWARPEqualsRoCE(t *testing.T) {
	for _, pr := range [][2]string{{"ulp/rxe-nvmeof", "ulp/siw-nvmeof"}, {"linux612/rxe-nvmeof", "linux612/siw-nvmeof"},
		{"ulp/rxe-nvmeof-mix-small", "ulp/siw-nvmeof-mix-small"}} {
		roce, iw := adminDataValues(t, pr[0]), adminDataValues(t, pr[1])
		for _, k := range []string{"nvme.cmd.identify.ctrl.nvmeof.ioccsz", "nvme.cmd.identify.ctrl.mdts", "nvme.cmd.identify.ctrl.mn",
			"nvme.cmd.identify.ctrl.subnqn", "nvme.cmd.identify.ctrl.maxcmd", "nvme.cmd.identify.ctrl.psds.psd.mp", "nvme.cmd.identify.ns.nsze",
			"nvme.cmd.identify.nslist.nsid", "nvme.cmd.get_logpage.smart.cw", "nvme.cmd.get_logpage.cmd_and_eff.cseds", "nvme.cmd.get_logpage.ana.grp.nsid"} {
			if len(roce[k]) == 0 {
				t.Errorf("%s: no %s", pr[0], k)
			}
		}
		compared := 0
		for _, fd := range fields.NewFieldSet(nvmeof.FieldTable).All() {
			k := fd.Name
			a, b := roce[k], iw[k]
			switch k {
			case "nvme.data", "nvme.cmd.get_logpage.identify.rcrd":
				continue
			case "nvme.cmd.identify.ctrl.sn":
				for _, v := range append(a, b...) {
					if len(v) != 20 {
						t.Errorf("%s: SN %q", pr, v)
					}
				}
				if len(a) != len(b) {
					t.Errorf("%s: %d SNs on RoCE, %d on iWARP", pr, len(a), len(b))
				}
				continue
			case "nvme.cmd.identify.ns.vs":
				a, b = []string{strings.Join(a, "")}, []string{strings.Join(b, "")}
			}
			if strings.Join(a, ",") != strings.Join(b, ",") {
				t.Errorf("%s: %s %.100q on RoCE, %.100q on iWARP", pr, k, a, b)
			}
			compared += len(a)
		}
		if pr[0] == "ulp/rxe-nvmeof-mix-small" && len(roce["nvme.cmd.get_logpage.identify.rcrd.subnqn"]) != 2 {
			t.Errorf("discovery entries: %q", roce["nvme.cmd.get_logpage.identify.rcrd.subnqn"])
		}
		t.Logf("%s and %s: %d values equal", pr[0], pr[1], compared)
	}
}

// TestAdminDataFilters: display filters on the data fields select the
// frames tshark 4.0 -2 -Y selects on rxe-nvmeof-mix-small.pcap (the frame
// lists below are tshark's): comparisons of integers, masked bits,
// booleans, strings and items of repeated structures.
func TestAdminDataFilters(t *testing.T) {
	reg := fields.FilterRegistry(fields.NewFieldSet(nvmeof.FieldTable))
	cases := []struct {
		src    string
		frames string
	}{
		{"nvme.cmd.identify.ctrl.nvmeof.ioccsz == 260", "149 7988"},
		{`nvme.cmd.identify.ctrl.mn contains "Linux"`, "63 78 148 7987"},
		{`nvme.cmd.get_logpage.identify.rcrd.subnqn == "nqn.2026-11.lab:nvme"`, "95"},
		{"nvme.cmd.identify.ctrl.psds.psd.enlat == 16", "150 7989"},
		{"nvme.cmd.get_logpage.ana.grp.anas.state == 1", "166 272"},
		{"nvme.cmd.identify.ctrl.ctratt.tbkas", "63 78 148 7987"},
		{"nvme.cmd.identify.ns.lbaf == 0x000c0000", "247 256 310"},
		{"nvme.cmd.identify.ctrl.cntrltype == 2", "63 78"},
	}
	var flts []*dfilter.Filter[*dissect.Packet]
	for _, c := range cases {
		f, err := dfilter.Compile(c.src, reg)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		flts = append(flts, f)
	}
	got := make([][]string, len(cases))
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof-mix-small.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	err = e.Run(r, func(p *dissect.Packet) error {
		for i, f := range flts {
			if f.Match(p) {
				got[i] = append(got[i], strconv.Itoa(p.Number))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if g := strings.Join(got[i], " "); g != c.frames {
			t.Errorf("%s: frames %s, tshark %s", c.src, g, c.frames)
		}
	}
}
