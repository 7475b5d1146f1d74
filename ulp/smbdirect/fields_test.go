package smbdirect_test

import (
	"os"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

// tsharkMisreassembled are the frames completing the three messages the
// server sent in fragments that tshark 4.0 does not reassemble right
// (KD-SMBD-FRAGMENTED-RESPONSE): it shows a CREATE response and "Invalid
// header", or only DataMessage, where the reassembled message is a
// compound CREATE + QUERY_DIRECTORY response, or a QUERY_DIRECTORY
// response.
var tsharkMisreassembled = map[int]bool{4474: true, 4514: true, 4537: true}

// TestFieldsEqualTshark: every smb_direct.* and smb2.* field of FieldTable
// holds, on every frame of rxe-smbdirect.pcap, what tshark 4.0 printed for
// it (testdata/tshark/smbdirect/rxe-smbdirect.sends.tsv, made by gen.sh
// there): the same values in the same form, and nothing where tshark has
// nothing — but the smb2.* fields of the frames tshark misreassembles.
func TestFieldsEqualTshark(t *testing.T) {
	set := fields.NewFieldSet(smbdirect.FieldTable)
	rows := tsv(t, "rxe-smbdirect.sends.tsv")
	want := map[int]map[string]string{}
	for _, r := range rows {
		want[atoi(t, r["frame.number"])] = r
	}
	var cols []string
	for name := range rows[0] {
		if _, ok := set.Lookup(name); ok {
			cols = append(cols, name)
		}
	}
	if len(cols) != 25 {
		t.Fatalf("%d of our fields are in tshark's file: %v", len(cols), cols)
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-smbdirect.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{smbdirect.New()}})
	// Our values by the first packet of the Send they belong to: tshark
	// 4.0 does not reassemble multi-packet RoCE Sends and decodes the SMB
	// Direct header in their first packet (KD-SMBD-MULTIPACKET); we
	// record a Send on the packet that completed it.
	ours := map[int]map[string]string{}
	err = e.Run(r, func(p *dissect.Packet) error {
		for i := 0; i < len(p.ULP); i++ {
			s, ok := p.ULP[i].(*smbdirect.Send)
			if !ok {
				continue
			}
			if i > 0 {
				t.Fatalf("frame %d: several Sends", p.Number)
			}
			vals := map[string]string{}
			for _, name := range cols {
				fd, _ := set.Lookup(name)
				var vs []string
				fd.Get(p, func(v fields.Value) { vs = append(vs, fd.Format(v)) })
				vals[name] = strings.Join(vs, ",")
			}
			ours[s.FirstPacket] = vals
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	compared, frames := 0, 0
	for frame, vals := range ours {
		row, ok := want[frame]
		if !ok {
			t.Errorf("frame %d: a Send tshark does not decode", frame)
			continue
		}
		frames++
		for _, name := range cols {
			if tsharkMisreassembled[frame] && strings.HasPrefix(name, "smb2.") {
				continue
			}
			if vals[name] != row[name] {
				t.Errorf("frame %d %s: %q, tshark %q", frame, name, vals[name], row[name])
			}
			if row[name] != "" {
				compared++
			}
		}
	}
	if frames != 276 || compared < 3000 {
		t.Errorf("%d frames, %d values compared", frames, compared)
	}
	t.Logf("%d values compared on %d frames", compared, frames)
}

// TestInfoAgreesWithTshark: our Info text of every SMB Direct Send is how
// tshark's begins, message by message of a compound chain (tshark goes on
// with file names and info levels).
func TestInfoAgreesWithTshark(t *testing.T) {
	rows := tsvNoHeader(t, "rxe-smbdirect.info.tsv")
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-smbdirect.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{smbdirect.New()}})
	ours := map[int]string{} // by the Send's first packet, as in TestFieldsEqualTshark
	err = e.Run(r, func(p *dissect.Packet) error {
		if len(p.ULP) > 0 {
			ours[p.ULP[0].(*smbdirect.Send).FirstPacket] = string(smbdirect.AppendInfo(p, nil))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for frame, got := range ours {
		ws, ok := rows[frame]
		if !ok {
			t.Errorf("frame %d: %q, tshark none", frame, got)
			continue
		}
		if tsharkMisreassembled[frame] {
			continue
		}
		n++
		a, b := strings.Split(got, ";"), strings.Split(ws, ";")
		if len(a) != len(b) {
			t.Errorf("frame %d: %q, tshark %q", frame, got, ws)
			continue
		}
		for i := range a {
			if !strings.HasPrefix(b[i], a[i]) {
				t.Errorf("frame %d: %q, tshark %q", frame, got, ws)
			}
		}
	}
	if n != 273 {
		t.Errorf("%d frames compared", n)
	}
}

func tsvNoHeader(t *testing.T, name string) map[int]string {
	out := map[int]string{}
	b, err := os.ReadFile("../../testdata/tshark/smbdirect/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		c := strings.SplitN(line, "\t", 2)
		out[atoi(t, c[0])] = c[1]
	}
	return out
}

// TestKnownDifferencesDocumented: every difference with tshark these tests
// allow has its section in testdata/KNOWN-DIFFERENCES.md.
func TestKnownDifferencesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../testdata/KNOWN-DIFFERENCES.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"KD-SMBD-MULTIPACKET", "KD-SMBD-FRAGMENTED-RESPONSE", "KD-SMBD-IWARP", "KD-SMBD-INFO"} {
		if !strings.Contains(string(doc), "### "+id+" ") {
			t.Errorf("%s is not documented in testdata/KNOWN-DIFFERENCES.md", id)
		}
	}
}
