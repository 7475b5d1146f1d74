package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// FuzzSession: any login and any sequence of Sends and RDMA operations,
// whatever their bytes, goes through the session and the rules without a
// panic. Seeded with the real capture's login, first SRP_CMD and SRP_RSP.
func FuzzSession(f *testing.F) {
	var req, rep, cmd, rsp []byte
	for _, r := range tsv(f, "rxe-srp.cm.tsv") {
		if v := r["infiniband.cm.req.ip_cm.private"]; v != "" {
			req = unhex(f, v)
		}
		if v := r["infiniband.cm.rep.private"]; v != "" {
			rep = unhex(f, v)
		}
	}
	for _, r := range tsv(f, "rxe-srp.sends.tsv") {
		switch r["frame.number"] {
		case "20":
			cmd = unhex(f, r["data.data"])
		case "23":
			rsp = unhex(f, r["data.data"])
		}
	}
	login := append(append([]byte(nil), req...), rep...)
	f.Add(login, []byte{0, 255, 3, 36, 1, 255}, cmd, rsp)
	f.Add(login, []byte{0, 255, 0, 255, 5, 255, 2, 16}, cmd, rsp)
	f.Fuzz(func(t *testing.T, login, script, a, b []byte) {
		c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServiceID: 0x10615b3, State: dissect.StateEstablished}
		c.ULP = srpulp.Name
		cut := min(len(login), 56)
		c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 1, Bytes: login[:cut]}
		c.PrivateData[1] = dissect.PrivateData{Seen: true, Packet: 2, Bytes: login[cut:]}
		s := srpulp.New().Start(c, &dissect.Env{MaxExchanges: 8})
		ck := check.NewRunner(check.Config{})
		pkt := 2
		for i := 0; i+1 < len(script) && i < 64; i += 2 {
			pkt++
			n := int(script[i+1])
			src := a
			if script[i]&4 != 0 {
				src = b
			}
			data := src[:min(n, len(src))]
			p := &dissect.Packet{Number: pkt}
			switch script[i] & 3 {
			case 0, 1:
				m := &dissect.Message{Conn: c, Dir: dissect.Direction(1 + script[i]&1), Packets: []int{pkt}, Data: data, Length: len(data),
					Truncated: script[i]&8 != 0}
				s.Message(p, m)
				ck.Message(m)
			case 2, 3:
				kind := dissect.RDMARead
				if script[i]&1 != 0 {
					kind = dissect.RDMAWrite
				}
				op := &dissect.RDMAOp{Kind: kind, Conn: c, Dir: dissect.Direction(1 + script[i]>>7), STag: uint32(n) | 0x300,
					Offset: uint64(n) << 8, Length: uint32(len(data)), Packets: []int{pkt}, Complete: true}
				s.RDMAOp(p, op)
				ck.RDMAOp(op)
			}
		}
		s.Close()
		ck.Finish([]*dissect.Connection{c})
		if cn, ok := c.ULPData.(*srpulp.Connection); ok {
			_ = cn.ULPTableRow()
		}
	})
}
