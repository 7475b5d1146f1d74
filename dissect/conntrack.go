package dissect

import (
	"net"
	"net/netip"
	"slices"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// Node is an InfiniBand-transport end node as packets name it: an IP address
// (RoCEv2), a GID (RoCEv1, routed IB) or, without either, a LID (local IB).
type Node struct {
	Addr netip.Addr
	LID  uint16
}

func (n Node) String() string {
	if n.Addr.IsValid() {
		return n.Addr.Unmap().String()
	}
	return "LID " + itoa(uint64(n.LID))
}

// qpKey names a queue pair: the node it lives on and its number. A BTH
// carries only the destination QPN, so packets are mapped to connections by
// (destination node, destination QPN).
type qpKey struct {
	node Node
	qpn  uint32
}

type qpRef struct {
	conn *Connection
	dir  Direction // the direction of packets sent to this QP
}

// commKey names one side's CM communication ID (IBA 12.6.2: a Comm ID is
// unique per node).
type commKey struct {
	node   Node
	commID uint32
}

// pairKey is an ordered pair of nodes, used to pair up the two directions of
// traffic whose connection set-up is not in the capture.
type pairKey struct{ a, b Node }

// ConnTable tracks connections through the CM exchange and maps every data
// packet to its connection and direction.
type ConnTable struct {
	// Max bounds the connections in the table: live ones and the summaries
	// of released ones (release.go). When the table is full the oldest
	// released summary is forgotten to make room (Forgotten counts them);
	// when every connection in it is live, a new connection is not tracked
	// (Dropped counts them, each connection once however many packets it
	// sent, DroppedPackets their packets; DroppedSaturated says Dropped is
	// a lower bound: dropped.go).
	Max              int
	Dropped          uint64
	DroppedPackets   uint64
	DroppedSaturated bool
	Forgotten        uint64

	drops dropped

	conns []*Connection
	byQP  map[qpKey]qpRef
	// lastQP caches the last two byQP hits (lookupQP), the later first: a
	// Send's or a Write's packets come one after the other to the same QP,
	// and its acknowledgements to the QP of the other way. Any change to
	// byQP clears it (forgetQPs).
	lastQP   [2]qpKey
	lastRef  [2]qpRef
	lastQPOK [2]bool
	byComm   map[commKey]*Connection
	// rejected are the last connections refused (CM REJ, MPA reject,
	// TCP RST), at most maxRecentRejects, awaiting a later connection
	// between the same addresses to name in RetriedBy.
	rejected []*Connection
	pending  map[pairKey]*Connection // no-setup connections awaiting their reverse QPN
	// awaitREP are connections whose REQ went from the client to the
	// server and whose REP the capture has not shown (yet).
	awaitREP map[pairKey]*Connection
	nextID   int
	// closing lists the connections the packet being processed closed,
	// for the engine to release; grace the last graceConns released,
	// oldest first, whose Comm IDs and 4-tuples still lead to them; done
	// the retired ones, whose summaries may be forgotten, oldest first.
	// retired and forgotten tell the engine (release.go).
	closing   []*Connection
	grace     []*Connection
	done      []*Connection
	retired   func(*Connection)
	forgotten func(*Connection)
	// forgetReleased: Options.ForgetReleased.
	forgetReleased bool
	// orient says which side sent a packet of a connection whose set-up
	// the capture lacks, asked until one tells (engine.go's orienter over
	// the ULPs' Orienters; nil: none can; orient.go).
	orient func(op roce.OpCode, payload []byte) Side
	// swapped tells the engine a connection's roles were swapped
	// (orient.go).
	swapped func(*Connection)
}

// DefaultMaxConnections bounds the connection table: live connections plus
// the summaries of closed ones, about 11 KB each with their check results
// (docs/streaming.md), so some 45 MB at most. A full table forgets the
// oldest closed summary first (ConnTable.Forgotten) and turns new
// connections away only when all are live (Dropped).
const DefaultMaxConnections = 4096

// NewConnTable returns an empty table.
func NewConnTable() *ConnTable {
	return &ConnTable{
		Max:      DefaultMaxConnections,
		byQP:     map[qpKey]qpRef{},
		byComm:   map[commKey]*Connection{},
		pending:  map[pairKey]*Connection{},
		awaitREP: map[pairKey]*Connection{},
	}
}

// Seen reports whether the table ever numbered a connection id (its
// summary may have been forgotten since).
func (t *ConnTable) Seen(id int) bool { return id >= 1 && id <= t.nextID }

// Connections returns the connections in the order they were first seen.
func (t *ConnTable) Connections() []*Connection { return t.conns }

func (t *ConnTable) newConn(tr Transport, p *Packet) *Connection {
	if t.Max > 0 && len(t.conns) >= t.Max && !t.forgetOldest() {
		t.DroppedPackets++
		return nil
	}
	t.nextID++
	c := &Connection{ID: t.nextID, Transport: tr, FirstPacket: p.Number}
	c.rel.last = p.Timestamp
	t.conns = append(t.conns, c)
	return c
}

// ibNodes returns the source and destination nodes of an IB-transport packet.
func ibNodes(p *Packet) (src, dst Node) {
	return ibNode(p, false), ibNode(p, true)
}

// ibNode returns the destination node of an IB-transport packet, or its
// source when !dst: Track needs the destination alone for most packets.
func ibNode(p *Packet, dst bool) (n Node) {
	switch {
	case p.Encap == EncapRoCEv2 && p.Has(layers.LayerTypeIPv4):
		ip := p.IPv4.SrcIP
		if dst {
			ip = p.IPv4.DstIP
		}
		if len(ip) == net.IPv4len { // as decoded: AddrFromSlice's switch, inlined
			n.Addr = netip.AddrFrom4([4]byte(ip))
		} else {
			n.Addr, _ = netip.AddrFromSlice(ip.To4())
		}
	case p.Encap == EncapRoCEv2:
		ip := p.IPv6.SrcIP
		if dst {
			ip = p.IPv6.DstIP
		}
		n.Addr, _ = netip.AddrFromSlice(ip)
	case p.Has(roce.LayerTypeGRH):
		gid := p.GRH.SGID
		if dst {
			gid = p.GRH.DGID
		}
		n.Addr = netip.AddrFrom16(gid).Unmap()
	case p.Has(roce.LayerTypeLRH):
		n.LID = p.LRH.SLID
		if dst {
			n.LID = p.LRH.DLID
		}
	}
	return n
}

// Track places an IB-transport packet in its connection, creating and
// advancing connections on CM messages.
func (t *ConnTable) Track(p *Packet) {
	if !p.Has(roce.LayerTypeBTH) {
		return
	}
	dst := ibNode(p, true)
	if p.CRCDiscarded {
		// Discarded by its receiver, perhaps its addresses or QP number
		// corrupted: it opens, completes and advances nothing, and joins
		// a connection only when one already owns its destination QP.
		if p.CM.Attr == 0 && p.BTH.OpCode.Transport() != roce.TransportUD {
			if ref, ok := t.lookupQP(qpKey{dst, p.BTH.DestQP}); ok {
				t.place(p, ref.conn, ref.dir)
			}
		}
		return
	}
	if p.CM.Attr != 0 {
		t.cm(p, ibNode(p, false), dst)
		return
	}
	op := p.BTH.OpCode
	switch op.Transport() {
	case roce.TransportRC, roce.TransportUC, roce.TransportXRC:
	case roce.TransportCNP:
		// A CNP is sent to the QP whose traffic met congestion: count it on
		// that connection if there is one, never create one for it.
		if ref, ok := t.lookupQP(qpKey{dst, p.BTH.DestQP}); ok {
			t.place(p, ref.conn, ref.dir)
		}
		return
	default:
		return // UD and RD have no connection to track
	}
	if ref, ok := t.lookupQP(qpKey{dst, p.BTH.DestQP}); ok {
		if c := ref.conn; c.State == StateIncomplete && c.Server.QPN != 0 && op.IsRequest() {
			// Requests flow: the client had the REP, and the RTU is lost
			// or still on its way (IBA Vol 1 12.6.8).
			c.State = StateEstablished
			t.noteEstablished(c)
		}
		d := ref.dir
		if ref.conn.rel.unoriented {
			d = t.orientPacket(p, ref.conn, d)
		}
		t.place(p, ref.conn, d)
		return
	}
	src := ibNode(p, false)
	// A connection whose REQ the capture holds and whose REP it lost:
	// the client's first request names the server's QPN the REP carried
	// (its destination QP), so the connection is not split in two, its
	// requests on one and its responses on another.
	if c, ok := t.awaitREP[pairKey{src, dst}]; ok && c.rel.state == relLive && c.Server.QPN == 0 && op.IsRequest() {
		delete(t.awaitREP, pairKey{src, dst})
		c.rel.awaitREP = false
		c.Server.QPN = p.BTH.DestQP
		c.REPLost = true
		if c.State == StateIncomplete {
			c.State = StateEstablished
			t.noteEstablished(c)
		}
		t.mapQP(qpKey{dst, p.BTH.DestQP}, c, DirClientToServer)
		t.place(p, c, DirClientToServer)
		return
	}
	// Traffic whose set-up is not in the capture. The reverse direction of
	// a connection we already know by one QPN completes it.
	if c, ok := t.pending[pairKey{dst, src}]; ok {
		delete(t.pending, pairKey{dst, src})
		c.rel.hasPending = false
		d := DirServerToClient
		if c.rel.firstByServer {
			d = DirClientToServer
			c.Server.QPN = p.BTH.DestQP
		} else {
			c.Client.QPN = p.BTH.DestQP
		}
		t.mapQP(qpKey{dst, p.BTH.DestQP}, c, d)
		if c.rel.unoriented {
			d = t.orientPacket(p, c, d)
		}
		t.place(p, c, d)
		return
	}
	c := t.newConn(TransportRoCE, p)
	if c == nil {
		t.dropQPTraffic(src, dst, p.BTH.DestQP)
		return
	}
	c.State = StateNoSetup
	// Which side sent the first packet: the client's unless a ULP can tell
	// it is the server's (an RDMA Write of RPC-over-RDMA's server, a Reply).
	// When no ULP can tell, the first packet's sender is taken for the
	// client until a later packet tells (orient.go).
	d := DirClientToServer
	side := SideUnknown
	if t.orient != nil {
		side = t.orient(op, p.BTH.Payload)
	}
	switch {
	case t.orient == nil:
		c.RolesGuessed = true // no ULP can ever tell
	case side == SideUnknown:
		c.rel.unoriented, c.rel.unorientedPkts = true, 1
	default:
		c.RolesToldBy = p.Number
		if side == SideServer {
			d = DirServerToClient
			c.rel.firstByServer = true
		}
	}
	if d == DirClientToServer {
		c.Client.Address, c.Server.Address = src.String(), dst.String()
		c.Server.QPN = p.BTH.DestQP
	} else {
		c.Client.Address, c.Server.Address = dst.String(), src.String()
		c.Client.QPN = p.BTH.DestQP
	}
	// A working connection whose set-up the capture lacks: a client
	// refused a moment ago got through after all.
	t.noteEstablished(c)
	t.mapQP(qpKey{dst, p.BTH.DestQP}, c, d)
	if _, taken := t.pending[pairKey{src, dst}]; !taken {
		t.pending[pairKey{src, dst}] = c
		c.rel.pending, c.rel.hasPending = pairKey{src, dst}, true
	}
	t.place(p, c, d)
}

func (t *ConnTable) place(p *Packet, c *Connection, d Direction) {
	p.Conn, p.Dir = c, d
	c.LastPacket = p.Number
	c.rel.last = p.Timestamp
	if c.FirstPacket == 0 {
		c.FirstPacket = p.Number
	}
	ctr := &c.Dir[d.Index()]
	ctr.Packets++
	ctr.Bytes += uint64(p.Length)
}

// cm follows the Communication Manager's state machine (IBA 12.6, 12.9):
// REQ opens, REP answers with the server's QPN, RTU establishes, REJ
// refuses, DREQ/DREP close. Messages are matched by communication IDs.
func (t *ConnTable) cm(p *Packet, src, dst Node) {
	cm := &p.CM
	switch cm.Attr {
	case roce.LayerTypeCMREQ:
		r := &cm.REQ
		key := commKey{src, r.LocalCommID}
		c := t.byComm[key]
		if c != nil && c.rel.state != relLive {
			// The Comm ID of a connection closed a moment ago: a new
			// connection (release.go).
			delete(t.byComm, key)
			c = nil
		}
		if c == nil { // a retransmitted REQ keeps its Comm ID
			if c = t.newConn(TransportRoCE, p); c == nil {
				t.dropREQ(src, dst, r.LocalCommID, r.LocalQPN)
				return
			}
			t.mapComm(key, c)
			c.Client = Endpoint{Address: src.String(), QPN: r.LocalQPN, CommID: r.LocalCommID}
			// The REQ's Starting PSN is where the server will send from
			// (see Endpoint.StartPSN).
			c.Server = Endpoint{Address: dst.String(), StartPSN: r.StartingPSN, HasStartPSN: true}
			c.ServiceID = r.ServiceID
			sid := pvtdata.ServiceID(r.ServiceID)
			if sid.IsIP() {
				c.ServicePort = sid.Port()
			}
			prefix := pvtdata.PrefixNone
			if sid.IsIP() {
				prefix = pvtdata.PrefixCMA
			}
			c.setPrivateData(DirClientToServer, p, r.PrivateData, prefix)
			t.mapQP(qpKey{src, r.LocalQPN}, c, DirServerToClient)
			t.awaitREP[pairKey{src, dst}] = c
			c.rel.awaitREP, c.rel.awaitKey = true, pairKey{src, dst}
		}
		t.place(p, c, DirClientToServer)
	case roce.LayerTypeCMMRA:
		if c, d := t.commOf(src, dst, cm.MRA.LocalCommID, cm.MRA.RemoteCommID); c != nil {
			t.place(p, c, d)
		}
	case roce.LayerTypeCMLAP, roce.LayerTypeCMAPR:
		// Alternate path load and response (IBA 12.6.12-13): the
		// connection's messages, which do not change its state.
		local, remote := cm.LAP.CommIDs()
		if cm.Attr == roce.LayerTypeCMAPR {
			local, remote = cm.APR.CommIDs()
		}
		if c, d := t.commOf(src, dst, local, remote); c != nil {
			t.place(p, c, d)
		}
	case roce.LayerTypeCMREP:
		r := &cm.REP
		c := t.byComm[commKey{dst, r.RemoteCommID}]
		if c == nil {
			return // a REP whose REQ is not in the capture
		}
		if c.rel.awaitREP && t.awaitREP[pairKey{dst, src}] == c {
			delete(t.awaitREP, pairKey{dst, src})
			c.rel.awaitREP = false
		}
		if c.Server.CommID == 0 && c.rel.state == relLive {
			c.Server.CommID = r.LocalCommID
			c.Server.QPN = r.LocalQPN
			c.Client.StartPSN, c.Client.HasStartPSN = r.StartingPSN, true
			t.mapComm(commKey{src, r.LocalCommID}, c)
			t.mapQP(qpKey{src, r.LocalQPN}, c, DirClientToServer)
			c.setPrivateData(DirServerToClient, p, r.PrivateData, pvtdata.PrefixNone)
		}
		t.place(p, c, DirServerToClient)
	case roce.LayerTypeCMRTU:
		if c, d := t.commOf(src, dst, cm.RTU.LocalCommID, cm.RTU.RemoteCommID); c != nil {
			if c.State == StateIncomplete {
				c.State = StateEstablished
				t.noteEstablished(c)
			}
			t.place(p, c, d)
		}
	case roce.LayerTypeCMREJ:
		if c, d := t.commOf(src, dst, cm.REJ.LocalCommID, cm.REJ.RemoteCommID); c != nil {
			c.State = StateRejected
			c.RejectReason = cm.REJ.Reason.String()
			c.Reject.set(p, cm.REJ.PrivateData, pvtdata.PrefixNone)
			c.RejectedBy = d
			t.noteRejected(c)
			t.place(p, c, d)
			t.close(c) // nothing follows a REJ (IBA 12.6.7)
		}
	case roce.LayerTypeCMDREQ:
		if c, d := t.commOf(src, dst, cm.DREQ.LocalCommID, cm.DREQ.RemoteCommID); c != nil {
			c.State = StateClosed
			t.place(p, c, d)
		}
	case roce.LayerTypeCMDREP:
		if c, d := t.commOf(src, dst, cm.DREP.LocalCommID, cm.DREP.RemoteCommID); c != nil {
			c.State = StateClosed
			t.place(p, c, d)
			// The DREP answers a DREQ sent after the QP stopped sending
			// (IBA 12.9.2-12.9.3): the connection is over. (A crossing
			// DREQ's DREP still counts on it, see release.go.)
			t.close(c)
		}
	}
}

// lookupQP is t.byQP[k], the last two hits cached.
func (t *ConnTable) lookupQP(k qpKey) (qpRef, bool) {
	if t.lastQPOK[0] && t.lastQP[0] == k {
		return t.lastRef[0], true
	}
	if t.lastQPOK[1] && t.lastQP[1] == k {
		return t.lastRef[1], true
	}
	ref, ok := t.byQP[k]
	if ok {
		t.lastQP[1], t.lastRef[1], t.lastQPOK[1] = t.lastQP[0], t.lastRef[0], t.lastQPOK[0]
		t.lastQP[0], t.lastRef[0], t.lastQPOK[0] = k, ref, true
	}
	return ref, ok
}

// forgetQPs clears lookupQP's cache: byQP changed.
func (t *ConnTable) forgetQPs() { t.lastQPOK = [2]bool{} }

// mapQP and mapComm index c by a QP or a Comm ID, remembering the key so
// that releasing c can remove it.
func (t *ConnTable) mapQP(k qpKey, c *Connection, d Direction) {
	t.byQP[k] = qpRef{c, d}
	t.forgetQPs()
	if c.rel.nqp < uint8(len(c.rel.qp)) {
		c.rel.qp[c.rel.nqp] = k
		c.rel.nqp++
	}
}

func (t *ConnTable) mapComm(k commKey, c *Connection) {
	t.byComm[k] = c
	if c.rel.ncm < uint8(len(c.rel.cm)) {
		c.rel.cm[c.rel.ncm] = k
		c.rel.ncm++
	}
}

// close marks c closed by the packet being processed: its QP numbers stop
// leading to it at once (a new connection may reuse them); the engine
// releases the rest of its state after the packet (release.go).
func (t *ConnTable) close(c *Connection) {
	if c.rel.state != relLive {
		return
	}
	c.rel.state = relClosing
	for _, k := range c.rel.qp[:c.rel.nqp] {
		if t.byQP[k].conn == c {
			delete(t.byQP, k)
			t.forgetQPs()
		}
	}
	if c.rel.hasPending && t.pending[c.rel.pending] == c {
		delete(t.pending, c.rel.pending)
	}
	c.rel.hasPending = false
	if c.rel.awaitREP && t.awaitREP[c.rel.awaitKey] == c {
		delete(t.awaitREP, c.rel.awaitKey)
	}
	c.rel.awaitREP = false
	t.closing = append(t.closing, c)
}

// released puts a connection whose state the engine released in the grace
// window, retiring the oldest one there when it is full.
func (t *ConnTable) released(c *Connection) {
	if len(t.grace) >= graceConns {
		t.retireOldest()
	}
	t.grace = append(t.grace, c)
}

// retireOldest ends the grace of the oldest connection in the window: its
// last keys go, no packet reaches it any more, and its summary may be
// forgotten when the table is full.
func (t *ConnTable) retireOldest() bool {
	if len(t.grace) == 0 {
		return false
	}
	c := t.grace[0]
	copy(t.grace, t.grace[1:])
	t.grace[len(t.grace)-1] = nil
	t.grace = t.grace[:len(t.grace)-1]
	for _, k := range c.rel.cm[:c.rel.ncm] {
		if t.byComm[k] == c {
			delete(t.byComm, k)
		}
	}
	c.rel.state = relDone
	t.done = append(t.done, c)
	if t.retired != nil {
		t.retired(c)
	}
	if t.forgetReleased {
		t.forgetOldest() // c: the only one in done
	}
	return true
}

// forgetOldest drops the oldest summary of a released connection from the
// table (retiring one from the grace window if need be), to make room for
// a new connection; false when every connection in the table is live.
func (t *ConnTable) forgetOldest() bool {
	if len(t.done) == 0 {
		if !t.retireOldest() {
			return false
		}
		if len(t.done) == 0 {
			// forgetReleased: retireOldest forgot the connection it
			// retired already; there is room.
			return true
		}
	}
	c := t.done[0]
	t.done[0] = nil
	t.done = t.done[1:]
	if i := slices.Index(t.conns, c); i >= 0 {
		t.conns = slices.Delete(t.conns, i, i+1)
	}
	t.Forgotten++
	if t.forgotten != nil {
		t.forgotten(c)
	}
	return true
}

// Live counts the connections whose state the engine still holds: not yet
// released, or released a moment ago and still reachable by their CM
// Comm IDs or TCP 4-tuple (release.go).
func (t *ConnTable) Live() int { return len(t.conns) - len(t.done) }

// commOf finds the connection of a CM message sent from src with its own
// and its peer's communication IDs, and the message's direction.
func (t *ConnTable) commOf(src, dst Node, local, remote uint32) (*Connection, Direction) {
	c := t.byComm[commKey{src, local}]
	if c == nil {
		c = t.byComm[commKey{dst, remote}]
	}
	if c == nil {
		return nil, DirUnknown
	}
	if c.Client.CommID == local && c.Client.Address == src.String() {
		return c, DirClientToServer
	}
	return c, DirServerToClient
}

// setPrivateData records one side's private data and its generic framing
// (the RDMA-CM IP header, the MPA v2 IRD/ORD field), and whether both
// sides have spoken. What the consumer's data means is the ULP's.
func (c *Connection) setPrivateData(d Direction, p *Packet, pd []byte, prefix pvtdata.Prefix) {
	c.PrivateData[d.Index()].set(p, pd, prefix)
	if c.PrivateData[0].Seen && c.PrivateData[1].Seen {
		c.Negotiated = true
	}
}

// set records private data a side sent (a REQ's, REP's or REJ's:
// Connection.Reject) and its generic framing.
func (side *PrivateData) set(p *Packet, pd []byte, prefix pvtdata.Prefix) {
	side.Seen = true
	side.Packet = p.Number
	side.Bytes = append(side.Bytes[:0], pd...)
	side.Framing = pvtdata.Frame(side.Bytes, prefix)
}

func itoa(u uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			return string(b[i:])
		}
	}
}

// maxRecentRejects bounds ConnTable.rejected.
const maxRecentRejects = 16

// noteRejected remembers a connection just refused, for noteEstablished.
func (t *ConnTable) noteRejected(c *Connection) {
	if len(t.rejected) >= maxRecentRejects {
		copy(t.rejected, t.rejected[1:])
		t.rejected = t.rejected[:len(t.rejected)-1]
	}
	t.rejected = append(t.rejected, c)
}

// noteEstablished names c in the RetriedBy of the refused connections
// between the same two addresses on the same transport: the client got
// through after all (another port, or the same once the server listened).
func (t *ConnTable) noteEstablished(c *Connection) {
	kept := t.rejected[:0]
	for _, r := range t.rejected {
		if r != c && r.Transport == c.Transport && r.Client.Address == c.Client.Address && r.Server.Address == c.Server.Address {
			r.RetriedBy = c.ID
			continue
		}
		kept = append(kept, r)
	}
	clear(t.rejected[len(kept):])
	t.rejected = kept
}
