package dissect

// CaptureLoss is what the capture lacks of the request stream one side of
// a connection sent: stretches of it no packet of the capture carries and
// no resend filled, so the peer received them and the capture did not
// (IB/RoCE: PSNs acknowledged without a NAK and never resent, IBA Vol 1
// 9.7.5.1.2; iWARP: TCP octets the peer acknowledged that no segment of
// the capture holds, or a segment the capture damaged). Whatever the
// upper-layer protocol sent there — a request, the tail of one, the
// advertisement of memory an RDMA operation later uses — is evidence the
// capture does not hold, and the rules above judge nothing that rests on
// it: they say "not evaluated" (docs/loss.md, "Capture damage is not a
// protocol error").
type CaptureLoss struct {
	// Gaps counts the stretches.
	Gaps int
	// First and Last are the packets of the stream the capture shows
	// right before the first and the latest stretch (0: the stretch is
	// before the stream's first packet in the capture).
	First, Last int
	// recent are the positions of the latest stretches (a ring).
	recent [lossRing]int
}

const lossRing = 16

// add records a stretch that follows packet n.
func (l *CaptureLoss) add(n int) {
	if l.Gaps == 0 || n < l.First {
		l.First = n
	}
	l.Last = max(l.Last, n)
	l.recent[l.Gaps%lossRing] = n
	l.Gaps++
}

// Before reports whether the capture lost part of the stream before
// packet n: a stretch that follows a packet before n. A stretch is known
// only once a later packet reveals it, so a rule asks at the end of the
// connection (check.Conn.Hold).
func (l *CaptureLoss) Before(n int) bool { return l.Gaps > 0 && l.First < n }

// Between reports whether the capture lost part of the stream between
// packets from and to: a stretch that follows a packet in [from, to).
// Past the positions it remembers it answers yes when a forgotten one may
// lie there.
func (l *CaptureLoss) Between(from, to int) bool {
	if l.Gaps == 0 || l.First >= to || l.Last < from {
		return false
	}
	oldest := l.Last
	for i := 0; i < min(l.Gaps, lossRing); i++ {
		n := l.recent[i]
		if n >= from && n < to {
			return true
		}
		oldest = min(oldest, n)
	}
	// Forgotten stretches lie in [First, oldest].
	return l.Gaps > lossRing && from <= oldest
}

// captureLost records a stretch of direction d's request stream that the
// capture lacks, after packet n (the stream's last packet before it).
func (c *Connection) captureLost(d Direction, n int) {
	if c != nil {
		c.Lost[d.Index()].add(n)
	}
}

// EvidenceLost reports whether the capture lacks what it takes to say
// which request an RDMA operation served, or when it ended, and the packet
// that revealed the loss:
//
//   - the requests sent the other way (those that advertise the memory
//     the operation moves) lost a stretch before the operation began: the
//     request that advertised it may be there;
//   - the operation is incomplete on a connection whose capture lost part
//     of a stream: its missing packets were lost by the capture, so when
//     it ended is unknown, and the packets given to it may be another
//     operation's (on iWARP, after framing was lost).
//
// A ULP that finds no request for an operation asks this before calling
// it a protocol error (OpAttachment reason UnattachedCaptureGap).
func (op *RDMAOp) EvidenceLost() (packet int, lost bool) {
	c := op.Conn
	if c == nil {
		return 0, false
	}
	if adv := &c.Lost[opposite(op.Dir).Index()]; adv.Before(FirstPacket(op.Packets)) {
		return adv.First, true
	}
	if !op.Complete {
		for i := range c.Lost {
			if c.Lost[i].Gaps > 0 {
				return c.Lost[i].First, true
			}
		}
	}
	return 0, false
}

// spanLost reports whether the capture lost part of either stream of the
// operation's connection while the operation went on (between its first
// and its last packet), and where.
func (op *RDMAOp) spanLost() (int, bool) {
	c := op.Conn
	if c == nil || len(op.Packets) == 0 {
		return 0, false
	}
	from, to := packetSpan(op.Packets)
	for i := range c.Lost {
		if c.Lost[i].Between(from, to+1) {
			return c.Lost[i].First, true
		}
	}
	return 0, false
}

// EvidenceLost reports whether the capture lost part of the message: it
// was handed up Truncated and the capture lost part of its direction's
// stream while it went on. Its Length is then a guess (the packets seen
// may even be of more than one message), and a rule that judges the
// message's size or contents says "not evaluated".
func (m *Message) EvidenceLost() bool {
	c := m.Conn
	if !m.Truncated || c == nil || len(m.Packets) == 0 {
		return false
	}
	from, to := packetSpan(m.Packets)
	return c.Lost[m.Dir.Index()].Between(from, to+1)
}

// packetSpan is the lowest and highest of a non-empty list of packet
// numbers (a Read's responses, placed by PSN, need not come in order).
func packetSpan(pk []int) (from, to int) {
	from, to = pk[0], pk[0]
	for _, n := range pk {
		from, to = min(from, n), max(to, n)
	}
	return from, to
}

// captureDropped: the capture says it lost n frames before the next
// record (kernel drops). Which connections they were of is not known, so
// every live connection's streams, both ways, lack a stretch after the
// last packet the engine saw.
func (e *Engine) captureDropped(n uint64) {
	e.Stats.Dropped += n
	at := e.pkt.Number
	for _, c := range e.Conns.Connections() {
		if c.rel.state == relLive {
			c.captureLost(DirClientToServer, at)
			c.captureLost(DirServerToClient, at)
		}
	}
}

// FirstPacket is the first of a list of packet numbers (a message's or an
// RDMA operation's Packets: for a Read, its request), 0 when empty.
func FirstPacket(pk []int) int {
	if len(pk) == 0 {
		return 0
	}
	return pk[0]
}

// LastPacket is the last of a list of packet numbers, 0 when empty.
func LastPacket(pk []int) int {
	if len(pk) == 0 {
		return 0
	}
	return pk[len(pk)-1]
}
