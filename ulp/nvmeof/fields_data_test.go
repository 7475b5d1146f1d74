package nvmeof_test

import (
	"strings"
	"testing"

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
	compared, frames, effects := 0, 0, 0
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
	t.Logf("%d columns equal on %d frames, %d fields; %d Commands Supported and Effects values held to the specification", compared, frames, len(cols), effects)
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
