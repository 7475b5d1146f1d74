package nvmeof_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/nvme"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// FuzzSession: any sequence of Sends and RDMA operations, whatever their
// bytes, goes through the session and the rules without a panic, and the
// queue's counts stay consistent.
func FuzzSession(f *testing.F) {
	cmd := make([]byte, 64)
	cmd[0], cmd[39] = 0x02, 0x4f
	binary.LittleEndian.PutUint32(cmd[32:], 4096)
	cpl := make([]byte, 16)
	f.Add(cmReq(1, 32, 31), []byte{0, 64, 1, 16, 2, 8, 0, 70}, cmd, cpl)
	f.Add([]byte{1, 2}, []byte{3, 0, 1, 1}, cpl, cmd)
	f.Fuzz(func(t *testing.T, req, script, a, b []byte) {
		r := newRig(t, append(cmReq(1, 32, 31)[:0:0], req...))
		for i := 0; i+1 < len(script) && i < 64; i += 2 {
			n := int(script[i+1])
			src := a
			if script[i]&4 != 0 {
				src = b
			}
			data := src[:min(n, len(src))]
			switch script[i] & 3 {
			case 0:
				r.send(dissect.DirClientToServer, data, false, 0)
			case 1:
				r.send(dissect.DirServerToClient, data, script[i]&8 != 0, uint32(n))
			case 2:
				r.op(dissect.RDMARead, dissect.DirServerToClient, uint32(n), uint64(n), uint32(len(data)))
			case 3:
				r.op(dissect.RDMAWrite, dissect.Direction(1+script[i]>>7), uint32(n), 0, uint32(len(data)))
			}
		}
		r.findings()
	})
}

// FuzzDataFields: the data fields read any packet's part of any admin
// command's data, at any place, without a panic and only from the octets
// the record holds. Seeded from the DataRecords of rxe-nvmeof-mix-small.pcap
// (Identify Controller and Namespace, the namespace list, SMART, Commands
// Supported and Effects, ANA, Discovery).
func FuzzDataFields(f *testing.F) {
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof-mix-small.pcap")
	if err != nil {
		f.Fatal(err)
	}
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}})
	seeds := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		for _, x := range p.ULP {
			if d, ok := x.(*nvmeof.DataRecord); ok && seeds < 64 {
				seeds++
				f.Add(uint8(d.OPC), uint8(d.CNS), uint8(d.LID), d.At, uint16(len(d.Joined)-len(d.Data)), append([]byte(nil), d.Joined...))
			}
		}
		return nil
	})
	r.Close()
	if err != nil || seeds < 20 {
		f.Fatalf("%d seeds: %v", seeds, err)
	}
	set := fields.NewFieldSet(nvmeof.FieldTable)
	var fds []*fields.Field
	for _, fd := range set.All() {
		if strings.HasPrefix(fd.Name, "nvme.cmd.identify.") || strings.HasPrefix(fd.Name, "nvme.cmd.get_logpage.") || fd.Name == "nvme.data" {
			fds = append(fds, fd)
		}
	}
	f.Fuzz(func(t *testing.T, opc, cns, lid uint8, at uint64, carry uint16, joined []byte) {
		c := min(int(carry), len(joined))
		d := &nvmeof.DataRecord{OPC: nvme.AdminOpcode(opc), CNS: nvme.CNS(cns), LID: nvme.LogPageID(lid), At: at,
			Data: joined[c:], Joined: joined, JoinedAt: at - uint64(c), NUMREC: at % 7, NUMRECKnown: at%2 == 0}
		if at < uint64(c) {
			d.JoinedAt = 0
		}
		p := &dissect.Packet{Number: 1, ULP: []any{d}}
		for _, fd := range fds {
			fd.Get(p, func(v fields.Value) {
				if len(v.B) > len(joined) || len(v.S) > len(joined) {
					t.Fatalf("%s: %d octets from %d", fd.Name, len(v.B)+len(v.S), len(joined))
				}
				_ = fd.Format(v)
			})
		}
	})
}
