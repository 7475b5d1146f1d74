package nvmeof

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/nvme"
)

// DataRecord is one RDMA Write packet's part of the data an admin command
// on the queue returned to the host: an Identify data structure or a log
// page (dissect.Packet.ULP; valid until the next packet). The fields of
// the data (fields_data.go) are read from the packet's own octets at
// their place in the structure, as tshark shows them: nothing of the
// data is kept past its packet, so a log page of any length costs
// nothing but the packet it is in.
type DataRecord struct {
	// Command: the admin command, its Identify CNS or Get Log Page LID.
	OPC nvme.AdminOpcode
	CNS nvme.CNS
	LID nvme.LogPageID
	// Transfer is the octets of the command's data before this packet's
	// (the offset in the keyed SGL data block); At the structure's octet
	// the packet starts at (a log page's: LPO + Transfer).
	Transfer uint64
	At       uint64
	// Data is the packet's payload.
	Data []byte
	// Joined is Data with, before it, up to MaxItemCarry octets of the
	// command's data that the packets before it carried (when they came
	// just before, in order), from structure octet JoinedAt on: an item
	// that begins in an earlier packet and ends in this one is read from
	// it, and shown on this packet (the packets of iWARP cut the data at
	// 1428 octets, across fields).
	Joined   []byte
	JoinedAt uint64
	buf      []byte
	// NUMREC is a Discovery log page's record count, when the data showed
	// it (NUMRECKnown): in this packet or an earlier one of the command.
	NUMREC      uint64
	NUMRECKnown bool
}

// MaxItemCarry bounds the octets of a command's data kept from one packet
// for the next: the largest item of the layouts (Identify Controller's
// power state descriptors and vendor specific octets, 1024), so that no
// item is lost at a packet boundary.
const MaxItemCarry = 1024

// dataRecords are a session's DataRecords, one per Write packet part; a
// packet (an iWARP segment) can complete several.
type dataRecords struct {
	recs   []*DataRecord
	n, pkt int
	// carry is the end of the data the last packet of the command at
	// packet carryCmd carried: carryEnd octets into the transfer.
	carry    []byte
	carryCmd int
	carryEnd uint64
}

// join sets r.Joined: the carry of the command x (its capsule's packet
// cmd), when r's packet continues it, before r.Data; then keeps the last
// MaxItemCarry octets for the next packet.
func (rs *dataRecords) join(r *DataRecord, cmd int) {
	r.Joined, r.JoinedAt = r.Data, r.At
	if rs.carryCmd == cmd && rs.carryEnd == r.Transfer && len(rs.carry) > 0 {
		r.buf = append(append(r.buf[:0], rs.carry...), r.Data...)
		r.Joined, r.JoinedAt = r.buf, r.At-uint64(len(rs.carry))
	}
	keep := r.Joined[max(0, len(r.Joined)-MaxItemCarry):]
	rs.carry = append(rs.carry[:0], keep...)
	rs.carryCmd, rs.carryEnd = cmd, r.Transfer+uint64(len(r.Data))
}

func (rs *dataRecords) next(p *dissect.Packet) *DataRecord {
	if p.Number != rs.pkt {
		rs.pkt, rs.n = p.Number, 0
	}
	if rs.n == len(rs.recs) {
		rs.recs = append(rs.recs, new(DataRecord))
	}
	r := rs.recs[rs.n]
	rs.n++
	return r
}

// RDMAData files, on the packet, its part of the data of the admin
// command whose keyed SGL data block the controller writes into
// (dissect.DataObserver): an Identify's or a Get Log Page's. The
// Discovery log page's NUMREC is noted on the command for the packets
// after its header.
func (s *session) RDMAData(p *dissect.Packet, d *dissect.RDMAData) {
	if p == nil || d.Kind != dissect.RDMAWrite || d.Dir != dissect.DirServerToClient || !s.q.Admin() {
		return
	}
	x, ok := s.mem.Owner(d.STag, dissect.DirClientToServer, nil)
	if !ok || x == nil || x.OPC == nvme.OpcodeFabrics || !x.SGL.IsKeyed() {
		return
	}
	pos := d.Offset + d.At
	if pos < x.SGL.Address || pos-x.SGL.Address >= uint64(x.SGL.Length) {
		return
	}
	op := nvme.AdminOpcode(x.OPC)
	if op != nvme.AdminIdentify && op != nvme.AdminGetLogPage {
		return
	}
	r := s.data.next(p)
	*r = DataRecord{OPC: op, Transfer: pos - x.SGL.Address, Data: d.Data, buf: r.buf}
	r.At = r.Transfer
	if op == nvme.AdminIdentify {
		r.CNS = nvme.CNS(x.CDW10)
	} else {
		r.LID = nvme.LogPageID(x.CDW10)
		r.At += x.LPO
		if r.LID == nvme.LogDiscovery {
			var h nvme.DiscoveryLogHeader
			if !x.numrecKnown && r.At == 0 && h.DecodeFromBytes(d.Data) == nil {
				x.numrec, x.numrecKnown = h.NUMREC, true
			}
			r.NUMREC, r.NUMRECKnown = x.numrec, x.numrecKnown
		}
	}
	s.data.join(r, x.Packet)
	p.ULP = append(p.ULP, r)
}
