package dissect

import "net/netip"

// Connections the full table turned away (ConnTable.Dropped) are counted
// once each, not once per packet (issue 13: "connections not tracked"
// printed 286,900 for 1,900 connections). Every packet of a connection that
// was not tracked asks for a new connection again; dropped remembers which
// connections were already counted, by the identity the table would have
// given them:
//
//   - a CM REQ: the client's node and Local Communication ID (IBA 12.6.2),
//     which also stands for the data of that connection: the client's QP
//     (the REQ's Local QPN) and the other direction, paired as below;
//   - RoCE traffic without its set-up: the destination node and QPN, the
//     reverse direction paired with it by node pair as ConnTable.pending
//     pairs tracked ones;
//   - iWARP: the TCP 4-tuple, either way round.
//
// It holds at most maxDroppedKeys identities (about 100 bytes each, some
// 1.6 MB at most, outside --max-buffered); past that, connections are
// counted only while the set has room and DroppedSaturated says the count
// is a lower bound.
type dropped struct {
	keys    map[dropKey]struct{}
	pending map[pairKey]struct{} // dropped no-setup traffic awaiting its reverse direction
	full    bool
}

const maxDroppedKeys = 1 << 14

type dropKind uint8

const (
	dropQP dropKind = iota + 1
	dropComm
	dropTCP
)

type dropKey struct {
	kind      dropKind
	a, b      netip.Addr
	lidA      uint16
	pa, pb    uint16
	qpnOrComm uint32
}

// add records k; it reports whether k is new, and counts it when count.
func (t *ConnTable) dropAdd(k dropKey, count bool) bool {
	d := &t.drops
	if _, ok := d.keys[k]; ok {
		return false
	}
	if len(d.keys) >= maxDroppedKeys {
		d.full = true
		t.DroppedSaturated = true
		return false
	}
	if d.keys == nil {
		d.keys = map[dropKey]struct{}{}
		d.pending = map[pairKey]struct{}{}
	}
	d.keys[k] = struct{}{}
	if count {
		t.Dropped++
	}
	return true
}

// dropQPTraffic counts RoCE traffic without set-up from src to dst's QP qpn
// that the full table did not take.
func (t *ConnTable) dropQPTraffic(src, dst Node, qpn uint32) {
	k := dropKey{kind: dropQP, a: dst.Addr, lidA: dst.LID, qpnOrComm: qpn}
	if _, ok := t.drops.keys[k]; ok {
		return
	}
	if _, ok := t.drops.pending[pairKey{dst, src}]; ok {
		// The reverse direction of a connection already counted.
		delete(t.drops.pending, pairKey{dst, src})
		t.dropAdd(k, false)
		return
	}
	if t.dropAdd(k, true) && len(t.drops.pending) < maxDroppedKeys {
		t.drops.pending[pairKey{src, dst}] = struct{}{}
	}
}

// dropREQ counts a CM REQ from src to dst that the full table did not take.
func (t *ConnTable) dropREQ(src, dst Node, commID, clientQPN uint32) {
	if !t.dropAdd(dropKey{kind: dropComm, a: src.Addr, lidA: src.LID, qpnOrComm: commID}, true) {
		return
	}
	// Its data: to the client's QP, and (paired) to the server's.
	t.dropAdd(dropKey{kind: dropQP, a: src.Addr, lidA: src.LID, qpnOrComm: clientQPN}, false)
	if len(t.drops.pending) < maxDroppedKeys {
		t.drops.pending[pairKey{dst, src}] = struct{}{}
	}
}

// dropTCPConn counts an iWARP connection the full table did not take.
func (t *ConnTable) dropTCPConn(k tcpKey) {
	if k.dst.Less(k.src) || (k.dst == k.src && k.dport < k.sport) {
		k = k.reverse()
	}
	t.dropAdd(dropKey{kind: dropTCP, a: k.src, b: k.dst, pa: k.sport, pb: k.dport}, true)
}
