package dissect

import (
	"encoding/binary"
	"hash/maphash"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// The RC requester model: the one place that decides what each IB/RoCE
// request packet and each RDMA Read Response is (IBA Vol 1 9.7, 9.9).
// Reassembly (reassembly.go), the RPC layer and the checks consume its
// verdict, Packet.Analysis, and never decide it again. docs/loss.md
// explains it at length.
//
// Each side of a connection is a requester with its own PSN space (9.7.1):
// its requests carry consecutive PSNs, a Read Request taking one PSN per
// response packet it asks for (9.7.1.1); the responder answers under the
// requester's PSNs. Per connection and requester direction the model keeps
// the frontier (one past the highest request PSN seen) and a window of the
// PSNs the capture saw (WindowPSNs), and classifies a request packet as
//
//   - new: at or ahead of the frontier. Ahead of it is a PSN gap
//     (LostSegment: PSNs the capture has not seen before this packet);
//   - a retransmission: its PSN was already seen (consumed by an earlier
//     request packet of that direction, a Read Request consuming its whole
//     span). Go-back-N (9.7.5.1.1, 9.9.2.1): after a NAK PSN sequence
//     error, an RNR NAK or a timeout the requester resends from the NAKed
//     or oldest unacknowledged PSN, so Sends, Writes and Read Requests it
//     already sent come again. A Read Request re-issued for the part still
//     missing (Linux rxe: PSN of the first missing response, RETH VA and
//     length advanced past what arrived; rxe_req.c req_retry) is a
//     retransmission too, with Reissue set. A retransmission never becomes
//     new data and never opens a second message or operation;
//   - out of order: behind the frontier, but its PSN was never seen: it
//     fills a gap (a resend of a packet lost before the capture point, or
//     a reordered one). It is new data.
//
// A Read Response whose PSN was already seen in its direction is a
// retransmission and a duplicate (the responder re-executed a repeated or
// re-issued Read Request, 9.7.5.1.3).
//
// A retransmission episode is a run of resent packets in one direction: it
// opens at the first retransmitted or gap-filling packet, with the trigger
// the capture shows (the last NAK PSN sequence error or RNR NAK seen since
// the requester last sent new data; a re-issued Read; otherwise a timeout:
// no NAK in the capture before the resend), and ends when the requester
// sends new data again (or the capture ends). Its duration runs from the
// original transmission of its first lost PSN (when the capture holds it;
// else from the gap or trigger) to its last resent packet.
//
// A gap the capture missed but the responder acknowledged (an ACK at or past
// it, never NAKed, never resent) is capture loss; a gap NAKed or resent is
// wire loss (Health: CaptureLostPSNs, WireLostPSNs).

// Limits of the requester model.
const (
	// WindowPSNs is how far behind the frontier the model remembers which
	// PSNs it saw; an older PSN counts as a retransmission (WindowCut).
	WindowPSNs = 4096
	// historySlots is the number of request packets per direction whose
	// header+payload hash is kept to compare a retransmission with its
	// original (indexed by PSN modulo historySlots; CompareCut counts the
	// retransmissions whose original had left it).
	historySlots    = 256
	maxTrackedHoles = 8
	maxPendingAcks  = 64
	maxReadStarts   = 16
)

// Analysis is the requester model's verdict on one packet
// (rdmashark.analysis.* fields).
type Analysis struct {
	// Valid: the packet went through the model (an RC/UC/XRC packet of a
	// known connection, or a UD flow's).
	Valid bool
	// Retransmission: a request packet whose PSN was already seen in its
	// direction, or a Read Response whose PSN was.
	Retransmission bool
	// Reissue: a Read Request re-issued for the part of a Read still
	// missing (a PSN inside the original's span, the RETH advanced).
	Reissue bool
	// Duplicate: a repeated Read Response, or a resent request the
	// responder had already acknowledged.
	Duplicate bool
	// NetworkDuplicate: a retransmission that is a copy of its original
	// frame, the IPv4 Identification included: the network duplicated it,
	// the requester did not resend it (a resend is a new IP datagram).
	// It is Retransmission and Duplicate too, and opens no episode.
	NetworkDuplicate bool
	// OutOfOrder: a request behind the frontier whose PSN was never seen:
	// it fills a gap.
	OutOfOrder bool
	// LostSegment is the number of PSNs skipped just before this packet.
	LostSegment uint32
	// NAK is set on an ACKNOWLEDGE carrying a NAK or RNR NAK.
	NAK      bool
	RNR      bool
	NAKCode  roce.NAKCode
	RNRTimer roce.RNRTimer
	// AckRTT is the time from the request this ACK (or first Read
	// Response) answers to it; HasAckRTT tells whether it is known.
	AckRTT    time.Duration
	HasAckRTT bool
	// ECNCE: the IP header's ECN field says Congestion Experienced.
	ECNCE bool
	// CNP: a Congestion Notification Packet (opcode 0x81).
	CNP bool
	// Episode numbers the retransmission episode of its direction the
	// packet belongs to (1-based per connection and direction); 0 none.
	Episode int
	// PayloadDiffers: a retransmission whose opcode, extension headers or
	// payload differ from its original (OriginalPacket).
	PayloadDiffers bool
	OriginalPacket int
	// Compared: a retransmission whose original was still in the
	// comparison window (OriginalPacket) and was compared with it.
	Compared bool
}

// psnRing remembers which PSNs of the last WindowPSNs were seen.
type psnRing struct {
	init bool
	high uint32 // one past the highest PSN marked
	bits [WindowPSNs / 64]uint64
}

func (r *psnRing) bit(psn uint32) (int, uint64) {
	i := int(psn % WindowPSNs)
	return i / 64, 1 << (i % 64)
}

// test tells whether psn was marked; inWindow is false when psn is too far
// behind to know (or ahead of everything marked).
func (r *psnRing) test(psn uint32) (seen, inWindow bool) {
	if !r.init {
		return false, true
	}
	back := psnDiff(r.high, psn) // high - psn
	if back == 0 || back >= psnHalf {
		return false, true // at or ahead of high: never seen
	}
	if back > WindowPSNs {
		return true, false
	}
	w, m := r.bit(psn)
	return r.bits[w]&m != 0, true
}

// set marks [psn, psn+n), moving high forward when needed.
func (r *psnRing) set(psn, n uint32) {
	if !r.init {
		r.init = true
		r.high = psn
		r.bits = [WindowPSNs / 64]uint64{}
	}
	end := (psn + n) & psnMask
	if d := psnDiff(end, r.high); d > 0 && d < psnHalf {
		// Clear what the window's new PSNs held before.
		if d >= WindowPSNs {
			r.bits = [WindowPSNs / 64]uint64{}
		} else {
			for q := r.high; q != end; q = (q + 1) & psnMask {
				w, m := r.bit(q)
				r.bits[w] &^= m
			}
		}
		r.high = end
	}
	for i := uint32(0); i < n && i < WindowPSNs; i++ {
		w, m := r.bit((psn + i) & psnMask)
		r.bits[w] |= m
	}
}

// histEntry is one request packet kept for comparison: 24 bytes, so that
// a direction's window takes 6 KiB.
type histEntry struct {
	psn  uint32
	pkt  uint32 // packet number, 0 for an empty slot
	t    int64  // Unix nanoseconds
	hash uint64 // packetHash's upper 48 bits, the IPv4 Identification in the lower 16 (0 without IPv4)
}

// histHash packs what a histEntry keeps of p: the upper 48 bits of its
// packetHash and its IPv4 Identification.
func histHash(p *Packet) uint64 {
	return requestHash(p)&^0xffff | uint64(ipv4ID(p))
}

// ipv4ID is the IPv4 header's Identification, 0 when the packet has none.
func ipv4ID(p *Packet) uint16 {
	for _, t := range p.Decoded {
		switch t {
		case layers.LayerTypeIPv4:
			return p.IPv4.Id
		case layers.LayerTypeIPv6:
			return 0
		}
	}
	return 0
}

type hole struct {
	start, n uint32
	t        time.Time
	pkt      int
	wire     bool // NAKed or (partly) resent
}

type pendingAck struct {
	psn  uint32 // the request's last PSN
	t    time.Time
	read bool
	span uint32
}

// reqModel follows one requester direction of a connection.
type reqModel struct {
	init    bool
	next    uint32 // one past the highest request PSN seen
	loose   bool   // the last Read's span is unknown (no PMTU yet)
	seen    psnRing
	rsp     psnRing // Read Response PSNs seen (responses travel the other way)
	hist    *[historySlots]histEntry
	holes   []hole
	pending []pendingAck
	reads   [maxReadStarts]uint32 // PSNs of recent Read Requests
	nreads  int
	trigger EpisodeTrigger // from the last NAK since new data, 0 none
	trigT   time.Time
	episode int // open episode number, 0 none
	epIdx   int // index in the health's Episodes list, -1 when not kept
	epStart time.Time
	epLast  time.Time
	ceFirst time.Time // first CE-marked packet not yet answered by a CNP
	ceOpen  bool
	acked   uint32 // highest PSN acknowledged (valid when ackInit)
	ackInit bool
}

var hashSeed = maphash.MakeSeed()

// packetHash hashes what a retransmission must repeat: opcode, extension
// headers and payload. The headers and the payload are hashed by one
// maphash.Bytes call each (a maphash.Hash fed with Write went through its
// 128-byte buffer, one short hash per 128 bytes of payload: 9% of
// analyze's CPU) and the two combined; only equality within one run
// matters (the seed is random per process).
func packetHash(h *roce.BTH) uint64 {
	var b [32]byte
	b[0] = byte(h.OpCode)
	n := 1
	if h.Has(roce.ExtRETH) {
		binary.BigEndian.PutUint64(b[n:], h.RETH.VA)
		binary.BigEndian.PutUint32(b[n+8:], h.RETH.RKey)
		binary.BigEndian.PutUint32(b[n+12:], h.RETH.DMALen)
		n += 16
	}
	if h.Has(roce.ExtIETH) {
		binary.BigEndian.PutUint32(b[n:], h.IETH.RKey)
		n += 4
	}
	if h.Has(roce.ExtImmDt) {
		binary.BigEndian.PutUint32(b[n:], h.ImmDt.Data)
		n += 4
	}
	// The headers' length follows from the opcode (b[0]), so the split
	// between them and the payload is unambiguous; the multiplication by
	// an odd constant (a bijection) spreads the headers' hash over the
	// upper bits histHash keeps before the payload's is mixed in.
	hdr := maphash.Bytes(hashSeed, b[:n]) * 0x9e3779b97f4a7c15
	return hdr ^ maphash.Bytes(hashSeed, h.Payload)
}

// readSpan is the number of PSNs a Read Request consumes, 0 when the PMTU is
// unknown and the Read longer than the smallest PMTU.
func readSpan(h *roce.BTH, pmtu int) uint32 {
	l := h.RETH.DMALen
	if pmtu > 0 {
		if k := (l + uint32(pmtu) - 1) / uint32(pmtu); k > 1 {
			return k
		}
		return 1
	}
	if l > 256 {
		return 0
	}
	return 1
}

// classify sets p.Analysis for an RC/UC/XRC packet of c (rc's state) and
// counts it in c's health.
func (e *Engine) classify(p *Packet, c *Connection, rc *roceConn) {
	a := &p.Analysis
	a.Valid = true
	h := &p.BTH
	op := h.OpCode
	d := p.Dir.Index()
	hl := e.health(c)
	dh := &hl.Dir[d]
	e.countPacket(p, dh)
	switch {
	case op.IsRequest():
		e.classifyRequest(p, c, rc, &rc.model[d], dh)
	case op.IsReadResponse():
		m := &rc.model[1-d]
		e.classifyReadResponse(p, m, dh, &hl.Dir[1-d])
		if h.Has(roce.ExtAETH) {
			e.classifyAck(p, m, &hl.Dir[1-d])
		}
	case op.IsAck() || op.IsAtomicAck():
		e.classifyAck(p, &rc.model[1-d], &hl.Dir[1-d])
	case op.IsCNP():
		p.Analysis.CNP = true
		dh.CNPs++
		// The CNP answers CE marks on the packets the other way.
		if m := &rc.model[1-d]; m.ceOpen {
			hl.Dir[1-d].CEToCNP.add(timeSub(p.Timestamp, m.ceFirst))
			m.ceOpen = false
		}
	}
	if p.Analysis.ECNCE {
		if m := &rc.model[d]; !m.ceOpen {
			m.ceOpen, m.ceFirst = true, p.Timestamp
		}
	}
	if a.Retransmission {
		dh.RetransmittedPackets++
		dh.RetransmittedBytes += uint64(p.Length)
	}
	dh.interval(p, a.Retransmission, e.opts.HealthInterval, &e.healthIntervals)
}

// countDiscarded counts a packet of c its receiver discarded for a bad CRC
// (Packet.CRCDiscarded): in its direction's packets, bytes and throughput, never
// in the requester model.
func (e *Engine) countDiscarded(p *Packet, c *Connection) {
	dh := &e.health(c).Dir[p.Dir.Index()]
	e.countPacket(p, dh)
	dh.interval(p, false, e.opts.HealthInterval, &e.healthIntervals)
}

// countPacket counts what every packet of a flow adds: packets, bytes, ECN.
func (e *Engine) countPacket(p *Packet, dh *DirHealth) {
	dh.Packets++
	dh.Bytes += uint64(p.Length)
	if ecnCE(p) {
		p.Analysis.ECNCE = true
		dh.ECNCE++
	}
}

func ecnCE(p *Packet) bool {
	for _, t := range p.Decoded {
		switch t {
		case layers.LayerTypeIPv4:
			return p.IPv4.TOS&3 == 3
		case layers.LayerTypeIPv6:
			return p.IPv6.TrafficClass&3 == 3
		}
	}
	return false
}

func (e *Engine) classifyRequest(p *Packet, c *Connection, rc *roceConn, m *reqModel, dh *DirHealth) {
	a := &p.Analysis
	h := &p.BTH
	op := h.OpCode
	psn := h.PSN & psnMask
	n := uint32(1)
	unknown := false
	if op.IsReadRequest() {
		if n = readSpan(h, rc.pmtu); n == 0 {
			n, unknown = 1, true
		}
	}
	if !m.init {
		m.init = true
		m.next = psn
		// The first request seen need not be the first sent: on a
		// reordering link the capture may see later PSNs of the first
		// message before its FIRST (lossy/rxe-ib_write_bw-reorder.pcap:
		// packet 53, RDMA_WRITE_MIDDLE PSN 16480474, comes before packet
		// 54, the RDMA_WRITE_FIRST at PSN 16480457, the REP's Starting
		// PSN). The connection's Starting PSN (IBA 9.7.1: the requester
		// sends from it; 12.6.5, 12.6.8) is where the stream begins, and
		// the PSNs before this packet are a gap it will fill, not the
		// start of the capture.
		ep := &c.Client
		if p.Dir == DirServerToClient {
			ep = &c.Server
		}
		if ep.HasStartPSN {
			if back := psnDiff(psn, ep.StartPSN&psnMask); back > 0 && back < WindowPSNs {
				m.next = ep.StartPSN & psnMask
			}
		}
	}
	fwd := psnDiff(psn, m.next)
	if fwd < psnHalf {
		// New: at or ahead of the frontier.
		if fwd > 0 && !m.loose {
			a.LostSegment = fwd
			dh.LostSegments++
			dh.MissingPSNs += uint64(fwd)
			c.MissingPSNs += uint64(fwd)
			e.Reassembly.Gaps++
			e.Reassembly.MissingPSNs += uint64(fwd)
			if len(m.holes) == maxTrackedHoles {
				m.settleHole(0, dh)
			}
			m.holes = append(m.holes, hole{start: m.next, n: fwd, t: p.Timestamp, pkt: p.Number})
		}
		m.loose = unknown
		m.seen.set(psn, n)
		m.next = (psn + n) & psnMask
		m.remember(p, psn)
		m.closeEpisode(dh)
		if op.IsReadRequest() {
			m.reads[m.nreads%maxReadStarts] = psn
			m.nreads++
		}
		if op.IsReadRequest() || op.IsLast() || op.IsOnly() {
			m.pushPending(pendingAck{psn: (psn + n - 1) & psnMask, t: p.Timestamp, read: op.IsReadRequest(), span: n}, dh)
		}
		return
	}
	seen, inWin := m.seen.test(psn)
	if !inWin {
		dh.WindowCut++
	}
	var orig time.Time
	if seen {
		a.Retransmission = true
		if op.IsReadRequest() && !m.isReadStart(psn) {
			a.Reissue = true
		}
		if m.ackInit && psnDiff(m.acked, psn) < psnHalf {
			// The responder had acknowledged it already (9.7.5.1.1: a
			// duplicate request).
			a.Duplicate = true
			dh.DuplicatePackets++
		}
		if m.hist != nil {
			he := &m.hist[psn%historySlots]
			if he.pkt != 0 && he.psn == psn {
				orig = time.Unix(0, he.t)
				if !a.Reissue {
					a.Compared, a.OriginalPacket = true, int(he.pkt)
					hh := histHash(p)
					switch {
					case hh>>16 != he.hash>>16:
						a.PayloadDiffers = true
						dh.PayloadMismatches++
					case uint16(hh) != 0 && uint16(hh) == uint16(he.hash):
						// The same datagram again (netem duplicate 2%:
						// lossy/rxe-ib_read_bw-dup.pcap, packets 27/28,
						// 1128/1129, 1480/1481, IP ID equal, 25-140 µs
						// apart). A requester's resend is built anew
						// (9.7.5.1.1), under a new IP ID; this one the
						// responder sees as a duplicate request
						// (9.7.5.1.1, 9.7.5.1.3) and no timeout or NAK
						// was behind it: no episode.
						a.NetworkDuplicate = true
						if !a.Duplicate {
							a.Duplicate = true
							dh.DuplicatePackets++
						}
						dh.NetworkDuplicates++
						return
					}
				}
			} else {
				dh.CompareCut++
			}
		}
	} else {
		// Fills a gap: new data, sent again after a loss before the capture
		// point or reordered.
		a.OutOfOrder = true
		dh.OutOfOrderPackets++
		for i := uint32(0); i < n && i < WindowPSNs; i++ {
			if was, in := m.seen.test((psn + i) & psnMask); in && !was {
				dh.FilledPSNs++
			}
		}
		m.seen.set(psn, n)
		m.remember(p, psn)
		for i := range m.holes {
			hh := &m.holes[i]
			if psnDiff(psn, hh.start) < hh.n {
				hh.wire = true
				if orig.IsZero() {
					orig = hh.t
				}
			}
		}
	}
	// A resend: part of a retransmission episode.
	if m.episode == 0 {
		trig := m.trigger
		switch {
		case trig != 0:
		case a.Reissue:
			trig = TriggerReissuedRead
		default:
			trig = TriggerTimeout
		}
		// From the original of the first lost PSN; without it, from the
		// NAK that triggered the resend, or the resend itself.
		start := orig
		if start.IsZero() && trig != TriggerTimeout {
			start = m.trigT
		}
		if start.IsZero() {
			start = p.Timestamp
		}
		m.trigger, m.trigT = 0, time.Time{}
		dh.episodeCount++
		m.episode = dh.episodeCount
		m.epStart = start
		m.epIdx = -1
		dh.EpisodesByTrigger[trig]++
		if rc.ackTimeout > 0 {
			dh.AckTimeout = rc.ackTimeout
			if trig == TriggerTimeout && !orig.IsZero() && timeSub(p.Timestamp, orig) < rc.ackTimeout {
				// No NAK in the capture, yet the resend came before the
				// ACK timeout could have expired: a NAK or a completer's
				// sequence check the capture does not show.
				dh.EarlyTimeouts++
			}
		}
		if len(dh.Episodes) < MaxEpisodes {
			m.epIdx = len(dh.Episodes)
			dh.Episodes = append(dh.Episodes, Episode{Number: m.episode, Trigger: trig, FirstPacket: p.Number,
				FirstPSN: psn, Start: start})
		} else {
			dh.EpisodesCut++
		}
	}
	a.Episode = m.episode
	m.epLast = p.Timestamp
	if m.epIdx >= 0 {
		ep := &dh.Episodes[m.epIdx]
		ep.Packets++
		ep.LastPacket = p.Number
		ep.Duration = timeSub(p.Timestamp, ep.Start)
	}
}

func (m *reqModel) isReadStart(psn uint32) bool {
	k := m.nreads
	if k > maxReadStarts {
		k = maxReadStarts
	}
	for i := 0; i < k; i++ {
		if m.reads[i] == psn {
			return true
		}
	}
	return false
}

// readStart returns the PSN of the latest recent Read Request at or before
// psn.
func (m *reqModel) readStart(psn uint32) (uint32, bool) {
	k := min(m.nreads, maxReadStarts)
	best, ok := uint32(0), false
	for i := 0; i < k; i++ {
		r := m.reads[i]
		if d := psnDiff(psn, r); d < psnHalf && (!ok || d < psnDiff(psn, best)) {
			best, ok = r, true
		}
	}
	return best, ok
}

func (m *reqModel) remember(p *Packet, psn uint32) {
	if m.hist == nil {
		m.hist = new([historySlots]histEntry)
	}
	m.hist[psn%historySlots] = histEntry{psn: psn, pkt: uint32(p.Number), t: p.Timestamp.UnixNano(), hash: histHash(p)}
}

func (m *reqModel) closeEpisode(dh *DirHealth) {
	if m.episode == 0 {
		return
	}
	if m.epIdx >= 0 {
		ep := &dh.Episodes[m.epIdx]
		ep.Duration = m.epLast.Sub(ep.Start)
		dh.EpisodeDuration.add(ep.Duration)
	} else {
		dh.EpisodeDuration.add(m.epLast.Sub(m.epStart))
	}
	m.episode = 0
}

func (m *reqModel) pushPending(pa pendingAck, dh *DirHealth) {
	if len(m.pending) == maxPendingAcks {
		copy(m.pending, m.pending[1:])
		m.pending = m.pending[:maxPendingAcks-1]
		dh.LatencyCut++
	}
	m.pending = append(m.pending, pa)
}

// settleHole decides a tracked gap's fate when it leaves the list.
func (m *reqModel) settleHole(i int, dh *DirHealth) {
	hh := m.holes[i]
	if hh.wire {
		dh.WireLostPSNs += uint64(hh.n)
	}
	m.holes = append(m.holes[:i], m.holes[i+1:]...)
}

// classifyReadResponse: dh is the health of the direction the response
// travels, rq the requester's.
func (e *Engine) classifyReadResponse(p *Packet, m *reqModel, dh, rq *DirHealth) {
	a := &p.Analysis
	psn := p.BTH.PSN & psnMask
	op := p.BTH.OpCode
	seen, inWin := m.rsp.test(psn)
	if !inWin {
		dh.WindowCut++
	}
	if seen {
		a.Retransmission, a.Duplicate = true, true
		dh.DuplicatePackets++
		return
	}
	if m.rsp.init && (op.IsMiddle() || op.IsLast()) {
		fwd := psnDiff(psn, m.rsp.high)
		if fwd >= psnHalf {
			fwd = 0 // behind the highest response
		}
		if start, ok := m.readStart(psn); ok && psnDiff(psn, start) < fwd {
			// Only the responses of this Read: the PSNs before it may be
			// Sends and Writes, which get no response.
			fwd = psnDiff(psn, start)
		}
		if fwd > 0 && fwd < psnHalf {
			a.LostSegment = fwd
			dh.LostSegments++
			dh.MissingPSNs += uint64(fwd)
		}
	}
	if m.rsp.init && psnDiff(m.rsp.high, psn) < psnHalf && psnDiff(m.rsp.high, psn) > 0 {
		// Behind the highest response, never seen: it fills a gap.
		dh.FilledPSNs++
	}
	m.rsp.set(psn, 1)
	if op.IsFirst() || op.IsOnly() {
		// Read latency: from the Read Request to its first response.
		for i, pa := range m.pending {
			if pa.read && psnDiff(psn, (pa.psn-pa.span+1)&psnMask) == 0 {
				a.AckRTT, a.HasAckRTT = timeSub(p.Timestamp, pa.t), true
				rq.ReadLatency.add(a.AckRTT)
				m.pending = append(m.pending[:i], m.pending[i+1:]...)
				break
			}
		}
	}
}

// classifyAck handles an AETH seen on a response for requester m; dh is the
// requester's health (NAKs and latencies count there).
func (e *Engine) classifyAck(p *Packet, m *reqModel, dh *DirHealth) {
	a := &p.Analysis
	h := &p.BTH
	if !h.Has(roce.ExtAETH) {
		return
	}
	psn := h.PSN & psnMask
	s := h.AETH.Syndrome
	switch {
	case s.IsNAK():
		a.NAK, a.NAKCode = true, s.NAKCode()
		if code := s.NAKCode(); int(code) < len(dh.NAKs) {
			dh.NAKs[code]++
		} else {
			dh.NAKsOther++
		}
		if s.NAKCode() == roce.NAKPSNSequenceError {
			m.trigger, m.trigT = TriggerNAKSequence, p.Timestamp
			for i := range m.holes {
				if psnDiff(psn, m.holes[i].start) < m.holes[i].n {
					m.holes[i].wire = true
				}
			}
			m.ack((psn-1)&psnMask, p, dh, false)
		}
		return
	case s.IsRNRNAK():
		a.NAK, a.RNR, a.RNRTimer = true, true, s.RNRTimer()
		dh.RNRNAKs++
		if t := s.RNRTimer(); !dh.rnrSeen || t < dh.RNRTimerMin {
			dh.RNRTimerMin = t
		}
		if t := s.RNRTimer(); !dh.rnrSeen || t > dh.RNRTimerMax {
			dh.RNRTimerMax = t
		}
		dh.rnrSeen = true
		m.trigger, m.trigT = TriggerRNRNAK, p.Timestamp
		return
	}
	if !h.OpCode.IsAck() && !h.OpCode.IsAtomicAck() && !h.OpCode.IsReadResponse() {
		return
	}
	m.ack(psn, p, dh, h.OpCode.IsAck() || h.OpCode.IsAtomicAck())
}

// ack: the responder received every request up to psn.
func (m *reqModel) ack(psn uint32, p *Packet, dh *DirHealth, latency bool) {
	if !m.ackInit || psnDiff(psn, m.acked) < psnHalf {
		m.acked, m.ackInit = psn, true
	}
	// Latency: the newest request this ACK covers.
	k := -1
	for i, pa := range m.pending {
		if psnDiff(psn, pa.psn) < psnHalf {
			k = i
		}
	}
	if k >= 0 {
		if latency && !m.pending[k].read {
			a := &p.Analysis
			a.AckRTT, a.HasAckRTT = timeSub(p.Timestamp, m.pending[k].t), true
			dh.AckLatency.add(a.AckRTT)
		}
		if k+1 == len(m.pending) {
			m.pending = m.pending[:0] // all acknowledged, most often: no copy to make
		} else {
			m.pending = append(m.pending[:0], m.pending[k+1:]...)
		}
	}
	// Gaps acknowledged without a NAK or a resend: the capture lost them.
	for i := 0; i < len(m.holes); i++ {
		hh := m.holes[i]
		end := (hh.start + hh.n - 1) & psnMask
		if psnDiff(psn, end) < psnHalf {
			if !hh.wire {
				dh.CaptureLostPSNs += uint64(hh.n)
			}
			m.settleHole(i, dh)
			i--
		}
	}
}

// finishModel closes what is open at the end of the capture or when the
// connection is released.
func (rc *roceConn) finishModel(c *Connection) {
	if c.Health == nil {
		return
	}
	for d := range rc.model {
		m := &rc.model[d]
		dh := &c.Health.Dir[d]
		m.closeEpisode(dh)
		for len(m.holes) > 0 {
			m.settleHole(0, dh)
		}
		m.hist = nil
	}
}
