package iser_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/iser"
)

// TestFieldsEqualTshark: every field of FieldTable that tshark's
// reference has (testdata/tshark/iser/rxe-iser.pdus.tsv, gen.sh) holds,
// for every PDU of rxe-iser.pcap, what tshark 4.0 printed for it: the
// same values in the same form, and nothing where tshark has nothing. We
// show a PDU on the packet that completes its Send, tshark on the first
// (KD-ISER-MULTIPACKET); the comparison goes by the Send's first packet.
// tshark shows a WRITE's opcode twice, for the command and for its
// immediate data (KD-ISER-IMMEDIATE-DATA); and tshark's heuristic takes
// some RDMA data packets for iSER headers (KD-ISER-HEURISTIC): those rows,
// with no iSCSI opcode, are left out.
func TestFieldsEqualTshark(t *testing.T) {
	set := fields.NewFieldSet(iser.FieldTable)
	rows, _ := tsharkPDUs(t)
	f, err := os.ReadFile("../../testdata/tshark/iser/rxe-iser.pdus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Split(strings.SplitN(string(f), "\n", 2)[0], "\t")
	var names []string
	for _, name := range header {
		if _, ok := set.Lookup(name); ok {
			names = append(names, name)
		}
	}
	if len(names) < 40 {
		t.Fatalf("only %d of our fields are in tshark's file", len(names))
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-iser.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{iser.New()}})
	compared, pdus := 0, 0
	seen := map[int]bool{}
	err = e.Run(r, func(p *dissect.Packet) error {
		n := 0
		for _, rr := range p.ULP {
			if _, ok := rr.(*iser.PDU); ok {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		if n != 1 {
			t.Fatalf("packet %d: %d PDUs", p.Number, n)
		}
		var first int
		for _, rr := range p.ULP {
			first = rr.(*iser.PDU).FirstPacket
		}
		row := rows[first]
		if row == nil {
			t.Errorf("packet %d (Send from %d): tshark has no PDU", p.Number, first)
			return nil
		}
		seen[first] = true
		pdus++
		for _, name := range names {
			fd, _ := set.Lookup(name)
			var vals []string
			fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
			got, exp := strings.Join(vals, ","), row[name]
			if name == "scsi_sbc.opcode" {
				exp, _, _ = strings.Cut(exp, ",") // KD-ISER-IMMEDIATE-DATA
			}
			if got != exp {
				t.Errorf("packet %d (Send from %d) %s: %q, tshark %q", p.Number, first, name, got, exp)
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
	if len(seen) != len(rows) || pdus != 302 || compared < 5000 {
		t.Errorf("compared %d values on %d PDUs; tshark has %d", compared, pdus, len(rows))
	}
	t.Logf("%d values on %d PDUs, %d fields", compared, pdus, len(names))
}

// TestInfoEqualsTshark: the summary line names each PDU as tshark's Info
// column does (rxe-iser.info.tsv, gen.sh), but that tshark appends what
// some commands ask ("Supported Vital Product Data Pages" of an INQUIRY
// with EVPD, the service action of SERVICE ACTION IN and MAINTENANCE IN)
// and, for a WRITE with immediate data, the "SCSI: Data Out" of that data
// (KD-ISER-INFO); and that it shows the PDU on the Send's first packet
// (KD-ISER-MULTIPACKET).
func TestInfoEqualsTshark(t *testing.T) {
	b, err := os.ReadFile("../../testdata/tshark/iser/rxe-iser.info.tsv")
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tsharkPDUs(t)
	want := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		num, info, _ := strings.Cut(line, "\t")
		n, _ := strconv.Atoi(num)
		if rows[n] == nil {
			continue // KD-ISER-HEURISTIC
		}
		info, _, _ = strings.Cut(info, "SCSI: Data Out")
		for _, extra := range []string{"Supported Vital Product Data Pages", "READCAPACITY16", "Report Supported Opcodes"} {
			info = strings.Replace(info, extra, "", 1)
		}
		want[n] = strings.TrimSpace(info)
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-iser.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{iser.New()}})
	seen := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		got := string(iser.AppendInfo(p, nil))
		if got == "" {
			return nil
		}
		first := p.ULP[0].(*iser.PDU).FirstPacket
		w, ok := want[first]
		if !ok {
			t.Errorf("packet %d: %q where tshark has no PDU", p.Number, got)
			return nil
		}
		seen++
		if strings.TrimSpace(got) != w {
			t.Errorf("packet %d (Send from %d): %q, tshark %q", p.Number, first, got, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) || seen != 302 {
		t.Errorf("%d of tshark's %d PDUs seen", seen, len(want))
	}
}

// TestCMFieldsEqualTsharkBytes: the rdmashark.iser.cm_* fields decode the
// CM REQ's and REP's private data as tshark's raw bytes have them
// (rxe-iser.cm.tsv: infiniband.cm.req.ip_cm.private and
// infiniband.cm.rep.private, whose first octet is the iSER flags: 0x80,
// ZBVA not supported, Send With Invalidate allowed), on those frames only.
func TestCMFieldsEqualTsharkBytes(t *testing.T) {
	b, err := os.ReadFile("../../testdata/tshark/iser/rxe-iser.cm.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][4]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		c := strings.Split(line, "\t")
		n, _ := strconv.Atoi(c[0])
		if c[1] != "" {
			flags := num(t, "0x"+c[1][:2])
			want[n] = [4]string{"0x" + c[1][:2], strconv.Itoa(int(flags >> 7 & 1)), strconv.Itoa(int(1 - flags>>6&1)), ""}
		} else {
			want[n] = [4]string{"", "", "", "0x" + c[2][:2]}
		}
	}
	if len(want) != 4 {
		t.Fatalf("tshark: %v", want)
	}
	set := fields.NewFieldSet(iser.FieldTable)
	names := []string{"rdmashark.iser.cm_req.flags", "rdmashark.iser.cm_req.zbva_not_supported", "rdmashark.iser.cm_req.send_with_invalidate", "rdmashark.iser.cm_rep.flags"}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-iser.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{iser.New()}})
	seen := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		w := want[p.Number]
		for i, name := range names {
			fd, ok := set.Lookup(name)
			if !ok {
				t.Fatalf("%s not registered", name)
			}
			var vals []string
			fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
			if got := strings.Join(vals, ","); got != w[i] {
				t.Errorf("frame %d %s: %q, want %q", p.Number, name, got, w[i])
			}
		}
		if _, ok := want[p.Number]; ok {
			seen++
		}
		return nil
	})
	if err != nil || seen != 4 {
		t.Errorf("%v, %d frames", err, seen)
	}
}
