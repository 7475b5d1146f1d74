package srp_test

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// TestFieldsEqualTheOctets: tshark 4.0 has no SRP dissector, so the
// rdmashark.srp.* fields are checked against the octets tshark shows for
// each Send's first packet (rxe-srp.sends.tsv) and for the CM private
// data (rxe-srp.cm.tsv), read here at the offsets of the standard's
// layouts (SRP_CMD: type 0, formats 5, tag 8, CDB 32, the first
// descriptor 48; SRP_RSP: REQUEST LIMIT DELTA 4, flags 18, STATUS 19,
// the residual counts 20 and 24, the lengths 28 and 32; the login in Linux's RDMA/CM layout and the
// SRP_LOGIN_RSP), independently of package srp.
func TestFieldsEqualTheOctets(t *testing.T) {
	set := fields.NewFieldSet(srpulp.FieldTable)
	payload := map[int][]byte{}
	for _, r := range tsv(t, "rxe-srp.sends.tsv") {
		n, _ := strconv.Atoi(r["frame.number"])
		payload[n] = unhex(t, r["data.data"])
	}
	var req, rep []byte
	for _, r := range tsv(t, "rxe-srp.cm.tsv") {
		if v := r["infiniband.cm.req.ip_cm.private"]; v != "" {
			req = unhex(t, v)
		}
		if v := r["infiniband.cm.rep.private"]; v != "" {
			rep = unhex(t, v)
		}
	}
	be := binary.BigEndian
	h := func(v uint64, digits int) string { return fmt.Sprintf("0x%0*x", digits, v) }
	d := func(v uint64) string { return strconv.FormatUint(v, 10) }
	expect := func(b []byte) map[string]string {
		w := map[string]string{"rdmashark.srp.opcode": h(uint64(b[0]), 2), "rdmashark.srp.tag": h(be.Uint64(b[8:]), 16)}
		switch b[0] {
		case 0x02: // SRP_CMD
			out, in := b[5]>>4, b[5]&0xf
			w["rdmashark.srp.data_out_fmt"], w["rdmashark.srp.data_in_fmt"] = d(uint64(out)), d(uint64(in))
			w["rdmashark.srp.data_out_desc_cnt"], w["rdmashark.srp.data_in_desc_cnt"] = d(uint64(b[6])), d(uint64(b[7]))
			w["rdmashark.srp.cdb_opcode"] = h(uint64(b[32]), 2)
			w["rdmashark.srp.cdb"] = fmt.Sprintf("%x", b[32:48])
			switch {
			case out == 3:
				w["rdmashark.srp.imm_len"] = d(uint64(be.Uint32(b[48:])))
			case out == 1 || in == 1:
				w["rdmashark.srp.va"] = h(be.Uint64(b[48:]), 16)
				w["rdmashark.srp.handle"] = h(uint64(be.Uint32(b[56:])), 8)
				w["rdmashark.srp.len"] = d(uint64(be.Uint32(b[60:])))
			}
		case 0xc1: // SRP_RSP
			w["rdmashark.srp.req_lim_delta"] = d(uint64(be.Uint32(b[4:])))
			w["rdmashark.srp.rsp_flags"] = h(uint64(b[18]), 2)
			w["rdmashark.srp.status"] = h(uint64(b[19]), 2)
			w["rdmashark.srp.data_out_res_cnt"] = d(uint64(be.Uint32(b[20:])))
			w["rdmashark.srp.data_in_res_cnt"] = d(uint64(be.Uint32(b[24:])))
			w["rdmashark.srp.sense_data_len"] = d(uint64(be.Uint32(b[28:])))
			w["rdmashark.srp.resp_data_len"] = d(uint64(be.Uint32(b[32:])))
		}
		return w
	}
	loginWant := map[int]map[string]string{
		frameREQ: {"rdmashark.srp.login.req_it_iu_len": d(uint64(be.Uint32(req[12:]))), "rdmashark.srp.login.req_buf_fmt": h(uint64(be.Uint16(req[8:])), 4),
			"rdmashark.srp.login.req_flags": h(uint64(req[10]), 2), "rdmashark.srp.login.imm_data_offset": d(uint64(be.Uint16(req[48:]))),
			"rdmashark.srp.login.initiator_port_id": fmt.Sprintf("%x", req[16:32]), "rdmashark.srp.login.target_port_id": fmt.Sprintf("%x", req[32:48])},
		frameREP: {"rdmashark.srp.login.req_lim_delta": d(uint64(be.Uint32(rep[4:]))), "rdmashark.srp.login.max_it_iu_len": d(uint64(be.Uint32(rep[16:]))),
			"rdmashark.srp.login.max_ti_iu_len": d(uint64(be.Uint32(rep[20:]))), "rdmashark.srp.login.sup_buf_fmt": h(uint64(be.Uint16(rep[24:])), 4),
			"rdmashark.srp.login.rsp_flags": h(uint64(rep[26]), 2)},
	}
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-srp.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{srpulp.New()}})
	ius, logins := 0, 0
	get := func(p *dissect.Packet, name string) string {
		fd, ok := set.Lookup(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		var vals []string
		fd.Get(p, func(v fields.Value) { vals = append(vals, fd.Format(v)) })
		return strings.Join(vals, ",")
	}
	err = e.Run(r, func(p *dissect.Packet) error {
		if w := loginWant[p.Number]; w != nil {
			logins++
			for name, exp := range w {
				if got := get(p, name); got != exp {
					t.Errorf("packet %d %s: %q, the octets say %q", p.Number, name, got, exp)
				}
			}
		}
		for _, rr := range p.ULP {
			iu, ok := rr.(*srpulp.IU)
			if !ok {
				continue
			}
			b := payload[iu.FirstPacket]
			if b == nil {
				t.Fatalf("packet %d: no Send of tshark's begins at %d", p.Number, iu.FirstPacket)
			}
			ius++
			for name, exp := range expect(b) {
				if name == "rdmashark.srp.cdb_opcode" && b[0] != 0x02 {
					continue
				}
				if got := get(p, name); got != exp {
					t.Errorf("packet %d %s: %q, the octets say %q", p.Number, name, got, exp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ius != 102 || logins != 2 {
		t.Errorf("%d IUs (want 51 commands + 51 responses), %d login packets", ius, logins)
	}
}
