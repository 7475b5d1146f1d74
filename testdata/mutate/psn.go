package main

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// renumber makes the packet sequence of the cut capture what a sender would
// have produced had the cut-away packets never existed: IBA Vol 1 9.7.1
// requests carry consecutive PSNs from the Starting PSN the CM exchange set
// (the REQ's for the passive side's requests, the REP's for the active
// side's), an RDMA Read Request takes one PSN per response packet (9.7.1.1,
// by the path MTU of the REQ), responses carry the PSN of the request they
// answer, and the AETH's MSN counts the messages the responder completed
// (9.7.5.1.2), from 0 at the start of the connection. Retransmitted requests
// keep the PSN of their first copy. Frames a mutation numbered itself
// (psnFixed) are left alone. Without the CM exchange in the cut, nothing
// is renumbered; with it, the cut must start at the connection's start.
func (c *capture) renumber() error {
	type space struct {
		next uint32
		psn  map[uint32]uint32 // original request PSN -> new
		// done lists the new PSN of the last packet of every message
		// completed so far, in order: the MSN of a response is how many
		// of them its PSN covers.
		done []uint32
	}
	// A PSN space is one side's requests on one connection: the
	// requester's address and the responder's QPN (which its requests
	// carry); responses carry the requester's QPN, peer maps it across.
	type key struct {
		ip  string
		qpn uint32
	}
	spaces := map[key]*space{}
	peer := map[uint32]uint32{}
	pmtu := 0
	var req *roce.CMREQ
	var reqFrame *rv
	for _, f := range c.frames {
		p := gopacket.NewPacket(f.data, layers.LayerTypeEthernet, gopacket.Default)
		if l, ok := p.Layer(roce.LayerTypeCMREQ).(*roce.CMREQ); ok {
			req, reqFrame = l, mustRoCE(f)
			pmtu = l.PathPacketPayloadMTU.Bytes()
		}
		if l, ok := p.Layer(roce.LayerTypeCMREP).(*roce.CMREP); ok && req != nil {
			// The REQ's Starting PSN is where the passive side's requests
			// start, the REP's where the active side's do.
			client, server := reqFrame.srcIP(), reqFrame.dstIP()
			spaces[key{client, l.LocalQPN}] = &space{next: l.StartingPSN, psn: map[uint32]uint32{}}
			spaces[key{server, req.LocalQPN}] = &space{next: req.StartingPSN, psn: map[uint32]uint32{}}
			peer[l.LocalQPN], peer[req.LocalQPN] = req.LocalQPN, l.LocalQPN
		}
	}
	if len(spaces) < 2 || pmtu == 0 {
		return nil
	}
	reqKey := func(r *rv) key { return key{r.srcIP(), r.destQP()} }
	respKey := func(r *rv) key { return key{r.dstIP(), peer[r.destQP()]} }
	const mask = 1<<24 - 1
	for _, f := range c.frames {
		r, ok := roceOf(f)
		if !ok || r.op.Transport() != roce.TransportRC || f.psnFixed {
			continue
		}
		switch {
		case r.op.IsRequest():
			s := spaces[reqKey(r)]
			if s == nil {
				return fmt.Errorf("packet %d: requests from %s to QP 0x%x without their CM exchange in the cut", f.orig, r.srcIP(), r.destQP())
			}
			orig := r.psn()
			if f.piece > 1 { // the next packet of a split Send
				s.psn[orig] = s.next // its ACK now names the last piece
				r.setPSN(s.next)
				if completesMessage(r.op) {
					s.done = append(s.done, s.next)
				}
				s.next = (s.next + 1) & mask
				continue
			}
			if n, ok := s.psn[orig]; ok { // a retransmission
				r.setPSN(n)
				continue
			}
			n := uint32(1)
			if r.op.IsReadRequest() {
				l := binary.BigEndian.Uint32(f.data[r.ext(roce.ExtRETH)+12:])
				n = max(1, (l+uint32(pmtu)-1)/uint32(pmtu))
			}
			for i := uint32(0); i < n; i++ {
				s.psn[(orig+i)&mask] = (s.next + i) & mask
			}
			r.setPSN(s.next)
			if completesMessage(r.op) {
				// An RDMA Read counts from its first response on (rxe's
				// responses carry the MSN including it, and so do the
				// captures).
				s.done = append(s.done, s.next)
			}
			s.next = (s.next + n) & mask
		case r.op.IsResponse():
			s := spaces[respKey(r)]
			if s == nil {
				return fmt.Errorf("packet %d: responses to %s QP 0x%x without their CM exchange in the cut", f.orig, r.dstIP(), r.destQP())
			}
			n, ok := s.psn[r.psn()]
			if !ok {
				return fmt.Errorf("packet %d: %s answers PSN %d, whose request is not in the cut", f.orig, r.op.Name(), r.psn())
			}
			r.setPSN(n)
			if r.hasAETH() {
				// A NAK does not complete the request it names (IBA Vol 1
				// 9.7.5.1.2): count the messages before it.
				syn := roce.Syndrome(f.data[r.ext(roce.ExtAETH)])
				nak := syn.IsNAK() || syn.IsRNRNAK()
				m := uint32(0)
				for _, last := range s.done {
					d := (n - last) & mask
					if d < 1<<23 && !(nak && d == 0) {
						m++
					}
				}
				r.setMSN(m)
			}
		}
	}
	return nil
}

// completesMessage tells whether a request packet ends a message: the
// last or only packet of a Send or RDMA Write, an RDMA Read Request, an
// atomic.
func completesMessage(op roce.OpCode) bool {
	switch {
	case op.IsReadRequest(), op.IsAtomic():
		return true
	case op.IsSend(), op.IsWrite():
		return op.IsOnly() || op.IsLast()
	}
	return false
}
