package dissect

import (
	"time"

	"github.com/gopacket/gopacket/layers"
)

// iWARP connection attempts refused by TCP. A SYN to a port nothing
// listens on is answered by a RST whose ACK is the SYN's sequence number
// plus one (RFC 9293 section 3.10.7.1). Such an attempt never reaches the
// MPA Request that makes a TCP connection iWARP, so it is shown as an
// iWARP connection (State rejected, IWARPInfo.Refused) only when it was
// meant for iWARP: its port is a well-known iWARP service port or a
// registered ULP's, or the two addresses already carry an iWARP
// connection. A client probing ports (SMB Direct clients try 5445, then
// 445) leaves one of these before the connection that works.

// iwarpServicePorts are TCP ports whose SYNs are iWARP attempts: NFS/RDMA
// (20049, IANA "nfsrdma", RFC 8267 section 4) and SMB Direct over iWARP
// (5445, [MS-SMBD] section 2.1).
var iwarpServicePorts = [...]uint16{20049, 5445}

// maxPendingSYNs bounds the SYNs awaiting an answer; past it the oldest
// is forgotten (synTable.Cut counts them).
const maxPendingSYNs = 64

// synAttempt is a SYN waiting for its answer.
type synAttempt struct {
	key    tcpKey // client to server
	seq    uint32
	number int
	length int
	ts     time.Time
}

// synTable holds the last SYNs not answered yet, in a fixed ring: SYNs are
// rare, the scans short, and nothing is allocated per packet.
type synTable struct {
	a   [maxPendingSYNs]synAttempt
	n   int // entries in use, a[0:n], oldest first
	Cut uint64
}

// note records a SYN, or forgets the SYN a SYN-ACK answers.
func (st *synTable) note(p *Packet, k tcpKey, t *layers.TCP) {
	if t.ACK {
		st.remove(k.reverse(), t.Ack)
		return
	}
	st.remove(k, t.Seq+1) // a retransmitted SYN replaces its original
	if st.n == maxPendingSYNs {
		copy(st.a[:], st.a[1:])
		st.n--
		st.Cut++
	}
	st.a[st.n] = synAttempt{key: k, seq: t.Seq, number: p.Number, length: p.Length, ts: p.Timestamp}
	st.n++
}

// remove forgets the SYN on k (client to server) that ack acknowledges.
func (st *synTable) remove(k tcpKey, ack uint32) (synAttempt, bool) {
	for i := 0; i < st.n; i++ {
		if st.a[i].key == k && st.a[i].seq+1 == ack {
			a := st.a[i]
			copy(st.a[i:st.n], st.a[i+1:st.n])
			st.n--
			return a, true
		}
	}
	return synAttempt{}, false
}

// refused returns the SYN a RST+ACK on k (server to client) with
// acknowledgement ack refuses, and forgets it.
func (st *synTable) refused(k tcpKey, ack uint32) (synAttempt, bool) {
	return st.remove(k.reverse(), ack)
}

// wantsIWARP reports whether a refused SYN on k was an iWARP attempt.
func (ie *iwarpEngine) wantsIWARP(k tcpKey) bool {
	for _, p := range iwarpServicePorts {
		if k.dport == p {
			return true
		}
	}
	if ie.hintPort(k.dport) {
		return true
	}
	for _, s := range ie.order {
		if s.key.src == k.src && s.key.dst == k.dst || s.key.src == k.dst && s.key.dst == k.src {
			return true
		}
	}
	return false
}

// refused shows a SYN refused by the RST p as a rejected iWARP
// connection, when it was meant for iWARP.
func (ie *iwarpEngine) refused(p *Packet, a synAttempt) {
	k := a.key
	if !ie.wantsIWARP(k) {
		return
	}
	t := ie.e.Conns
	c := t.newConn(TransportIWARP, &Packet{Number: a.number, Timestamp: a.ts})
	if c == nil {
		return
	}
	c.Client = Endpoint{Address: k.src.Unmap().String(), Port: k.sport}
	c.Server = Endpoint{Address: k.dst.Unmap().String(), Port: k.dport}
	c.ServicePort = k.dport
	c.State = StateRejected
	c.RejectReason = "TCP RST answered the SYN: nothing listens on port " + itoa(uint64(k.dport)) + " (RFC 9293 section 3.10.7.1)"
	c.IWARP = &IWARPInfo{Refused: true, SYNPacket: a.number, RSTPacket: p.Number}
	c.Dir[0].Packets++
	c.Dir[0].Bytes += uint64(a.length)
	t.place(p, c, DirServerToClient)
	t.noteRejected(c)
	t.close(c)
}
