package dissect

import (
	"bytes"
	"slices"
	"testing"
)

// dataULP claims every connection; its sessions hear the parts of every
// RDMA Write (DataObserver) and check them against the whole operation.
type dataULP struct {
	t          testing.TB
	parts, ops int
	whole      int // operations rebuilt from their parts, byte for byte
}

func (u *dataULP) Name() string                            { return "data" }
func (u *dataULP) Ports() []uint16                         { return nil }
func (u *dataULP) Claim(c *Connection) Verdict             { return Yes }
func (u *dataULP) Probe(c *Connection, m *Message) Verdict { return Yes }
func (u *dataULP) Start(c *Connection, env *Env) Session {
	return &dataSession{u: u, got: map[[2]uint64]*dataParts{}}
}

type dataParts struct {
	buf     []byte
	packets []int
}

type dataSession struct {
	u   *dataULP
	got map[[2]uint64]*dataParts
}

func (s *dataSession) Message(p *Packet, m *Message) {}
func (s *dataSession) Close()                        {}

func (s *dataSession) RDMAData(p *Packet, d *RDMAData) {
	s.u.parts++
	if p == nil || d.Kind != RDMAWrite || d.Conn == nil || d.Conn != p.Conn {
		s.u.t.Errorf("packet %v: part %+v", p, d)
		return
	}
	k := [2]uint64{uint64(d.STag), d.Offset}
	w := s.got[k]
	if w == nil || d.At == 0 {
		w = &dataParts{}
		s.got[k] = w
	}
	if end := int(d.At) + len(d.Data); end > len(w.buf) {
		w.buf = append(w.buf, make([]byte, end-len(w.buf))...)
	}
	copy(w.buf[d.At:], d.Data)
	w.packets = append(w.packets, p.Number)
}

func (s *dataSession) RDMAOp(p *Packet, op *RDMAOp) {
	if op.Kind != RDMAWrite {
		return
	}
	s.u.ops++
	k := [2]uint64{uint64(op.STag), op.Offset}
	w := s.got[k]
	delete(s.got, k)
	if !op.Complete {
		return
	}
	if w == nil || !bytes.Equal(w.buf, op.Data) || !slices.Equal(w.packets, op.Packets) {
		s.u.t.Errorf("Write %#x@%#x in packets %v: parts %v", op.STag, op.Offset, op.Packets, w)
		return
	}
	s.u.whole++
}

// TestDataObserverPartsMakeTheWrite: on real RoCE and iWARP captures
// (NVMe/RDMA, NFS over RDMA), the parts the engine hands a DataObserver
// as each RDMA Write packet arrives — their place in the Write and their
// octets — put together give every complete Write it hands at the end,
// packet for packet.
func TestDataObserverPartsMakeTheWrite(t *testing.T) {
	for _, name := range []string{"ulp/rxe-nvmeof.pcap", "ulp/siw-nvmeof.pcap", "rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		u := &dataULP{t: t}
		if _, err := runCapture(t, name, Options{ULPs: []ULP{u}}, nil); err != nil {
			t.Fatal(err)
		}
		if u.whole < 10 || u.whole < u.ops*9/10 {
			t.Errorf("%s: %d of %d Writes rebuilt from %d parts", name, u.whole, u.ops, u.parts)
		}
		t.Logf("%s: %d of %d Writes rebuilt from %d parts", name, u.whole, u.ops, u.parts)
	}
}
