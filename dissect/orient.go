package dissect

// Which side is the client of an IB/RoCE connection whose set-up the
// capture lacks (issue 28).
//
// The CM exchange says who asked for a connection. When the capture lacks
// it (started late, or the kernel dropped it), nothing in the transport
// does: both sides of a Reliable Connection send requests, responses and
// acknowledgements alike. The ULPs know better — RPC-over-RDMA's server
// alone initiates RDMA Reads and Writes, NVMe/RDMA's host alone sends
// 64-byte command capsules — so the engine asks them (Orienter) about the
// connection's packets until one tells, and until then the roles are not
// settled.
//
// The design is "settle late, publish nothing before": a new no-setup
// connection takes its first packet's sender for the client (the guess)
// and is unoriented until one of these, whichever comes first:
//
//   - a packet an Orienter reads tells which side sent it: the roles are
//     settled by it (Connection.RolesToldBy), and when it says the guess
//     was wrong, the connection's endpoints and every piece of the
//     engine's per-direction state of it — its packet counters, capture
//     loss marks, transport health, QP map entries, Send reassembly and
//     requester model (swapRoles, Engine.swapRoCE) — change places;
//   - a message or RDMA operation of it is about to be handed to a ULP
//     session or the Observer (deliverMessage, deliverRDMAOp): what they
//     receive carries a direction, so the guess is kept from then on
//     (RolesGuessed). A Send no Orienter recognises, or a connection of no
//     ULP (perftest), settles so at its first message;
//   - MaxUnorientedPackets of its packets told nothing (acknowledgements,
//     the middles and ends of messages whose start the capture lacks):
//     the guess is kept (RolesGuessed).
//
// While a connection is unoriented its packets leave the engine with
// Packet.Dir DirUnknown: the per-packet consumers (check's transport
// rules, stats, the HTML report, export's rows) hold per-direction state
// of their own, which a later swap could not reach, so they are given no
// direction to keep. Those rules treat such a packet as they treat one of
// no known direction: not evaluated. Everything that does carry a
// direction out of the engine therefore agrees with the settled roles, and
// a swap needs nothing from outside the engine. The packet that settles
// the roles, and every later one, carries its direction as usual.
//
// The alternative — holding the connection's packets back until one tells
// — would reorder the packets the callback sees (Run hands each packet on
// as it is processed, and reuses it) or hold copies of them: neither
// streams, and neither is allocation-free. Settling late costs at most
// MaxUnorientedPackets packets without a direction; swapping is a few
// array swaps, once per connection, and allocates nothing.

// MaxUnorientedPackets bounds the packets of a connection whose set-up the
// capture lacks that may tell nothing of its roles before the engine keeps
// its guess (the first packet's sender is the client; RolesGuessed).
const MaxUnorientedPackets = 32

// orientPacket hears what the Orienters say of p, a packet of c, an
// unoriented connection, placed in direction d by the guess so far; it
// returns p's direction once the roles are what p says.
func (t *ConnTable) orientPacket(p *Packet, c *Connection, d Direction) Direction {
	side := SideUnknown
	if t.orient != nil {
		side = t.orient(p.BTH.OpCode, p.BTH.Payload)
	}
	if side == SideClient || side == SideServer {
		want := DirClientToServer
		if side == SideServer {
			want = DirServerToClient
		}
		if want != d {
			t.swapRoles(c)
			d = want
		}
		c.rel.unoriented = false
		c.RolesToldBy = p.Number
		return d
	}
	if c.rel.unorientedPkts++; c.rel.unorientedPkts >= MaxUnorientedPackets {
		c.settleGuess()
	}
	return d
}

// settleGuess keeps c's guessed roles: nothing told before they had to be
// settled.
func (c *Connection) settleGuess() {
	if c.rel.unoriented {
		c.rel.unoriented = false
		c.RolesGuessed = true
	}
}

// swapRoles makes c's client its server and the other way round, with
// every piece of per-direction state the engine holds of it. Only an
// unoriented connection is swapped: nothing of it left the engine with a
// direction.
func (t *ConnTable) swapRoles(c *Connection) {
	c.Client, c.Server = c.Server, c.Client
	c.Dir[0], c.Dir[1] = c.Dir[1], c.Dir[0]
	c.Lost[0], c.Lost[1] = c.Lost[1], c.Lost[0]
	if h := c.Health; h != nil {
		h.Dir[0], h.Dir[1] = h.Dir[1], h.Dir[0]
	}
	for _, k := range c.rel.qp[:c.rel.nqp] {
		if ref, ok := t.byQP[k]; ok && ref.conn == c {
			ref.dir = opposite(ref.dir)
			t.byQP[k] = ref
		}
	}
	t.forgetQPs()
	c.rel.firstByServer = !c.rel.firstByServer
	if t.swapped != nil {
		t.swapped(c)
	}
}

// swapRoCE swaps the reassembly state and requester model the engine
// holds of c per direction (ConnTable.swapRoles).
func (e *Engine) swapRoCE(c *Connection) {
	rc := e.rxs.conns[c]
	if rc == nil {
		return
	}
	rc.dir[0], rc.dir[1] = rc.dir[1], rc.dir[0]
	rc.dir[0].d, rc.dir[1].d = DirClientToServer, DirServerToClient
	rc.model[0], rc.model[1] = rc.model[1], rc.model[0]
}

// Unoriented reports whether c is a connection whose set-up the capture
// lacks and whose roles are not settled yet (orient.go): its packets so
// far were handed on with no direction.
func (c *Connection) Unoriented() bool { return c.rel.unoriented }
