package dissect

// How the engine hands messages and operations up — the contract both
// transports follow. The IB/RoCE reassembly (reassembly.go) and the iWARP
// one (iwarp*.go) call
//
//	e.deliverMessage(p, m)  once per whole (or given-up) RDMA Send
//	e.deliverRDMAOp(p, op)  once per RDMA Read or Write, completed or given up
//
// with p the packet that completed the message or operation (nil at the
// end of the capture, from Finish), and m/op filled as model.go documents:
// Conn and Dir (for an operation the direction of its request: the Read
// Request's, the Write's), Packets, Data (valid during the call only),
// Length/Truncated/Complete, and Invalidate/InvalidatedSTag for Send With
// Invalidate. RDMAOp.STag and Offset name the remote memory in the
// Requester's advertised segment (IB: RETH R_Key/VA; iWARP: the Read
// Request's Data Source STag/TO, a tagged Write's STag/TO). The session of
// the connection's ULP consumes them first, then Options.Observer sees
// them. An RDMA Read must be
// handed up before the Send of the Reply that follows it, as it is on the
// wire.

// deliverMessage hands a reassembled Send to the session of its
// connection's ULP (ulp.go), then to the Observer.
func (e *Engine) deliverMessage(p *Packet, m *Message) {
	e.Ops.Sends++
	m.ULP = nil
	if c := m.Conn; c != nil {
		// What the session and the Observer receive carries a
		// direction: the roles are settled now (orient.go).
		c.settleGuess()
		s := c.ulp.session // session's answer once the ULP is decided, without its call
		if !c.ulp.decided {
			s = e.session(c, m)
		}
		if s != nil {
			s.Message(p, m)
		} else {
			e.Ops.Unclaimed++
		}
	}
	if o := e.opts.Observer; o != nil {
		o.Message(m)
	}
}

// deliverDuplicate hands a retransmitted SEND_ONLY (a PSN already
// consumed) to its connection's session for display only: the packet
// shows what it carries, nothing counts it again, and the Observer does
// not see it. A connection whose ULP is not decided yet is not probed with
// it.
func (e *Engine) deliverDuplicate(p *Packet) {
	c := p.Conn
	if c == nil || c.ulp.session == nil {
		return
	}
	h := &p.BTH
	m := &e.dupMsg
	pk := m.Packets[:0]
	*m = Message{Conn: c, Dir: p.Dir, Packets: append(pk, p.Number), Data: h.Payload, Length: wireLen(h),
		Time: p.Timestamp, Duplicate: true}
	if h.OpCode.HasInvalidate() {
		m.Invalidate, m.InvalidatedSTag = true, h.IETH.RKey
	}
	if h.OpCode.HasImmediate() {
		m.HasImmediate, m.Immediate = true, h.ImmDt.Data
	}
	c.ulp.session.Message(p, m)
}

// deliverRDMAOp hands an RDMA operation to the session of its
// connection's ULP, which attaches it to the memory it served, then to the
// Observer.
func (e *Engine) deliverRDMAOp(p *Packet, op *RDMAOp) {
	if op.Kind == RDMARead {
		e.Ops.RDMAReads++
	} else {
		e.Ops.RDMAWrites++
	}
	if !op.Complete {
		e.Ops.RDMAOpsIncomplete++
	}
	op.Attach = OpAttachment{Reason: UnattachedNoULP}
	if op.Conn != nil {
		op.Conn.settleGuess() // as deliverMessage
	}
	// An operation never decides a connection's ULP: only its set-up and
	// its Sends do.
	if c := op.Conn; c != nil && c.ulp.decided && c.ulp.session != nil {
		c.ulp.session.RDMAOp(p, op)
	}
	if o := e.opts.Observer; o != nil {
		o.RDMAOp(op)
	}
}

// Limits of the ULP sessions (Options override them; Env lends them).
const (
	// DefaultMaxTransactions bounds the exchanges awaiting their response
	// per connection (RPC Calls awaiting a Reply: a client's credit limit,
	// RFC 8166 section 3.3.1, is far below it).
	DefaultMaxTransactions = 4096
	// DefaultMaxRebuildBytes bounds the data a ULP holds, all connections
	// together, to rebuild messages from RDMA data (RPC's chunk data).
	DefaultMaxRebuildBytes = 64 << 20
)

// RDMAData is one packet's part of an RDMA Write, handed as the packet
// arrives (DataObserver): the Write's remote memory (IB/RoCE: the FIRST or
// ONLY packet's RETH R_Key, VA and DMA Length; iWARP: the tagged segments'
// Data Sink STag and the TO of the Write's first segment, Length 0: DDP
// names no length), where this packet's payload lies in it and the
// payload itself (valid during the call only).
type RDMAData struct {
	Kind   RDMAOpKind
	Conn   *Connection
	Dir    Direction
	STag   uint32
	Offset uint64
	Length uint32
	// At is the octets of the Write before this packet's payload: the
	// payload is remote memory Offset+At on.
	At   uint64
	Data []byte
}

// DataObserver is a Session that also wants the packets of the RDMA
// Writes of its connection one by one, as they arrive, besides the whole
// operation at its last packet (Session.RDMAOp): what a packet carries
// can then be filed in that packet's ULP records, for fields that show
// each packet's part of the data (tshark decodes the data an NVMe
// Identify or Get Log Page returned in each RDMA Write packet, at the
// packet's offset). Packets whose place in their Write is unknown (a
// MIDDLE or LAST before its FIRST) are not handed; a retransmitted
// packet is, as on the wire (Packet.Analysis says so).
type DataObserver interface {
	RDMAData(p *Packet, d *RDMAData)
}

// dataObserver is c's session when it is a DataObserver (nil otherwise):
// the engine builds an RDMAData of a Write packet only for one.
func (c *Connection) dataObserver() DataObserver {
	if c == nil || !c.ulp.decided {
		return nil
	}
	return c.ulp.data
}
