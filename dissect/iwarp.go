package dissect

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sort"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// iWARP runs MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and RDMAP (RFC 5040,
// RFC 7306) over TCP. The engine follows it in four steps:
//
//  1. Detection. MPA has no port of its own: a TCP connection is iWARP when
//     a segment starts with the MPA Request or Reply key (RFC 5044 section
//     7.1), on any port. A capture that starts after the MPA exchange is
//     picked up at a segment that starts with a plausible FPDU (see
//     plausibleFPDU); on TCP port 20049 (NFS/RDMA, RFC 8267) one plausible
//     FPDU header is enough, on other ports the segment must be a chain of
//     complete, well-formed FPDUs. Only detected connections are reassembled.
//  2. TCP reassembly with gopacket's reassembly package: out-of-order
//     segments are held (bounded by iwarpMaxPagesPerConn and
//     iwarpMaxPagesTotal), retransmitted and overlapping octets are dropped,
//     and what a gap or a limit cut is counted (IWARPCounters.GapOctets).
//     The engine's loop is synchronous: the FPDUs whose last octet a packet
//     delivers are that packet's (Packet.IWARP); octets held until a later
//     segment fills the hole are that segment's. A segment that starts at
//     the next sequence number while the assembler holds nothing of its
//     direction skips it (inOrder): that is most of them, and gopacket
//     would only advance its next sequence number, which catchUp does
//     before it sees anything else of the direction.
//  3. MPA framing with layers/iwarp's Framer, markers and CRC32c as the
//     Request and Reply negotiated (iwarp.Negotiate), CRCs verified. When
//     framing loses sync (a gap, a malformed FPDU) the direction hunts for a
//     segment that starts with a plausible FPDU and starts again there.
//  4. DDP and RDMAP decoding: untagged Sends are reassembled by QN/MSN/MO
//     (iwarp.Reassembler) and handed up as Messages; RDMA Writes and Reads
//     become RDMAOps (iwarp_ops.go). A Read is reported by the memory it
//     reads — the Read Request's Data Source STag and TO, and its RDMA Read
//     Message Size — because that is what the requester's peer advertised
//     (an RPC-over-RDMA Read chunk); its responses are matched by the Data
//     Sink STag and TO, in request order (RFC 5040 section 5.5, ordering).
//
// What the capture lacks. Octets the peer acknowledged but the capture
// never had are skipped as soon as the acknowledgement is seen (fill);
// without acknowledgements (a one-way capture) out-of-order octets wait for
// the reassembly limits or Finish. FPDUs that such a skip or Finish
// releases, or that a packet of the other direction releases (octets held
// until the MPA Reply fixed the framing), are decoded and handed up but
// shown with no packet. Detection needs the 16-octet key in one segment,
// as Wireshark's heuristic does. After a loss of sync with markers in use,
// framing starts again only at a segment that starts an FPDU on the marker
// grid (the markers' FPDUPTR is checked but not used to jump ahead).

// Bounds of the iWARP engine's state. Each has a counter of what it cut.
const (
	// iwarpMaxPagesPerConn bounds the out-of-order octets TCP reassembly
	// holds for one connection (pages of 1900 octets: about 1.9 MB);
	// past it the assembler skips the hole (GapOctets).
	iwarpMaxPagesPerConn = 1024
	// iwarpMaxPagesTotal bounds them for all connections (about 31 MB).
	iwarpMaxPagesTotal = 16384
	// iwarpMaxPending bounds the FPDU octets a direction holds while it
	// waits for the peer's Request or Reply to fix the framing.
	iwarpMaxPending = 64 << 10
	// tcpPageCost is the memory of one of gopacket's reassembly pages:
	// 1900 octets of data and the page's own fields.
	tcpPageCost = 2048
	// iwarpMaxFreeFramers bounds the framers kept for reuse.
	iwarpMaxFreeFramers = 64
)

// On the ports of the registered ULPs (ULP.Ports, e.g. nfsrdma's 20049)
// a single plausible FPDU header is enough to pick up a connection whose
// MPA exchange is not in the capture.

// iwarpMaxSendsInProgress bounds the untagged messages (Sends, RFC 5041
// section 5) one direction builds at once; a message longer than
// Options.MaxMessageBytes is dropped. Both are counted
// (IWARPCounters.Reassembly).
const iwarpMaxSendsInProgress = 8

// MPAInfo is what one side's MPA Request or Reply said (RFC 5044 section
// 7.1, RFC 6581 section 5).
type MPAInfo struct {
	// Seen: the side's Request (client) or Reply (server) is in the
	// capture; Packet is the packet that completed it.
	Seen   bool
	Packet int
	// Revision is the Rev field: 1 (RFC 5044) or 2 (RFC 6581).
	Revision uint8
	// Markers, CRC and Rejected are the M, C and R flags: markers wanted
	// on the FPDUs this side receives, CRC32c wanted, connection refused.
	Markers, CRC, Rejected bool
	// Enhanced is the flag that says an RFC 6581 IRD/ORD field leads the
	// private data (Linux MPA_RR_FLAG_ENHANCED, Wireshark 4.6's
	// iwarp_mpa.enhanced_flag).
	Enhanced bool
	// HasIRDORD: the RFC 6581 field is there; IRD/ORD and the
	// peer-to-peer flags are then valid.
	HasIRDORD bool
	IRD, ORD  uint16
	// PeerToPeer is the A flag; RTR names the ready-to-receive messages the
	// B, C and D flags allow ("send", "write", "read"), empty when none.
	PeerToPeer bool
	RTRSend    bool
	RTRWrite   bool
	RTRRead    bool
	// Legacy is the legacy IRD/ORD header ([MS-SMBD] 6.1) a revision 1
	// Request or Reply to port 5445 led its private data with; nil
	// without. HasIRDORD stays false: the depths are not RFC 6581's.
	Legacy *iwarp.LegacyIRDORD
}

// IWARPCounters counts one direction of an iWARP connection: what was
// framed and decoded, and what was lost or cut.
type IWARPCounters struct {
	FPDUs uint64
	// CRCErrors counts FPDUs whose CRC32c did not match (CRC negotiated).
	CRCErrors uint64
	// Malformed counts FPDUs whose DDP or RDMAP header did not decode.
	Malformed uint64
	// LostSync counts the times framing lost sync: a gap in the TCP stream
	// or octets that are not an FPDU (RFC 5044 section 6). Resyncs counts
	// the times it was picked up again (and the first pick-up of a
	// connection whose MPA exchange is not in the capture).
	LostSync uint64
	Resyncs  uint64
	// GapOctets are stream octets TCP reassembly never had: not captured,
	// or given up at the buffering limits. Discarded are octets that
	// arrived but could not be framed (out of sync, rejected connection,
	// the pending limit).
	GapOctets uint64
	Discarded uint64
	// Messages counts the Sends reassembled; Terminates the Terminate
	// messages (RFC 5040 section 4.8).
	Messages   uint64
	Terminates uint64
	// Reassembly is the untagged message reassembler's record (what its
	// limits cut: TooLong, Evicted; what was missing: Gaps).
	Reassembly iwarp.ReassemblyStats
	// Writes and Reads count the RDMA Writes sent and the RDMA Read
	// Requests sent in this direction; OpsIncomplete those given up before
	// all their octets were seen; UnmatchedResponses the Read Response
	// messages that answer no Read Request we saw.
	Writes, Reads      uint64
	OpsIncomplete      uint64
	UnmatchedResponses uint64
	// UnansweredReads counts the RDMA Read Requests sent in this
	// direction that no Read Response answered: a later request's
	// responses came first (responses come in request order, RFC 5040
	// section 5.5), or the responder sent on and the connection ended
	// without one. UnansweredPackets and UnmatchedPackets are the packets
	// of the first iwarpMaxReadFaults of them and of the unmatched Read
	// Responses (their last segments).
	UnansweredReads   uint64
	UnansweredPackets []int
	UnmatchedPackets  []int
}

// iwarpMaxReadFaults bounds the packets IWARPCounters keeps of unanswered
// Read Requests and unmatched Read Responses.
const iwarpMaxReadFaults = 16

// IWARPInfo is what an iWARP connection's MPA exchange negotiated and what
// its FPDUs looked like.
type IWARPInfo struct {
	// MPA is indexed by Direction.Index(): [0] the client's Request, [1]
	// the server's Reply.
	MPA [2]MPAInfo
	// Negotiated: both frames were seen, and Framing holds the markers and
	// CRC each direction's FPDUs use (iwarp.Negotiate), indexed by the
	// Direction.Index() of the FPDUs' sender.
	Negotiated bool
	Framing    [2]iwarp.Framing
	// MidStream: the connection was picked up without (all of) its MPA
	// exchange; framing was then guessed (no markers; CRC32c when the
	// first FPDU's CRC matched).
	MidStream bool
	// Dir counts each direction, indexed by Direction.Index().
	Dir [2]IWARPCounters
	// Refused: the connection is a TCP SYN the server answered with a RST
	// (RFC 9293 section 3.10.7.1: nothing listens on the port); SYNPacket
	// and RSTPacket are their numbers. No MPA exchange follows.
	Refused              bool
	SYNPacket, RSTPacket int
	// BadMarker is, per direction, the first MPA marker found not where
	// or not how RFC 5044 sections 4-5 put it while framing was in sync
	// (not after a gap: the marker grid is then still right, but the FPDU
	// boundary guessed may not be).
	BadMarker [2]*BadMarker
}

// BadMarker is an MPA marker a sender got wrong, and the packet that
// carried it.
type BadMarker struct {
	Packet int
	iwarp.MarkerFault
}

// tcpKey is a TCP connection's 4-tuple, oriented from one side.
type tcpKey struct {
	src, dst     netip.Addr
	sport, dport uint16
}

func (k tcpKey) reverse() tcpKey { return tcpKey{k.dst, k.src, k.dport, k.sport} }

// iwMode is where one direction of a connection is.
type iwMode uint8

const (
	iwReqRep iwMode = iota // the MPA Request or Reply is expected
	iwWait                 // frame seen; FPDU octets held until the peer's frame fixes the framing
	iwFPDU                 // framing FPDUs
	iwHunt                 // looking for a segment that starts with an FPDU
	iwDead                 // nothing more to frame (rejected, or the connection is gone)
)

// iwHalf is one direction of an iWARP connection.
type iwHalf struct {
	mode iwMode
	// rtr: the initiator's first FPDU was a zero-length RDMA Read Request,
	// the ready-to-receive message (RTR) of RFC 6581 section 4 (and of the
	// providers that send the legacy IRD/ORD header of [MS-SMBD] 6.1): not
	// an RDMA operation of the upper layer; the responder's zero-length
	// Read Response answers it.
	rtr     bool
	lastNum int // the packet whose octets came last (CaptureLoss)
	// maxEnd is one past the highest sequence number the capture showed
	// (noteCaptured).
	maxEnd  uint32
	hasEnd  bool
	seq     uint32 // sequence number of the next octet TCP reassembly delivers
	started bool
	// peerAck is the highest acknowledgement the other direction sent for
	// this one; ahead the segments given to the assembler beyond seq.
	peerAck    uint32
	hasPeerAck bool
	ahead      []iwRange
	startSeq   uint32 // where the direction's stream starts (its MPA frame, or the pick-up)
	hdr        []byte // a Request/Reply frame TCP split
	rr         iwarp.MPAReqRep
	rrBuf      []byte
	hasRR      bool
	fpduSeq    uint32 // first octet after the Request/Reply: where markers count from
	pend       []byte
	pendSeq    uint32
	framer     *iwarp.Framer
	framerHeld int  // framer.Held() as the buffer budget last counted it
	probing    bool // framing just (re)started; the first FPDU confirms it
	fresh      bool // picked up mid-stream: the next tagged message may lack its start
	reasm      *iwarp.Reassembler
	writes     []*iwOp // RDMA Writes in progress, sent in this direction
	reads      []*iwOp // RDMA Read Requests sent in this direction, awaiting responses
	// asmEnd: TCP reassembly ended the direction (a FIN or RST in order).
	asmEnd bool
	// sumsReal: a segment of the direction had right checksums. Until one
	// does, a wrong one is taken for checksum offload (a capture on the
	// sending host sees the segment before the NIC fills the checksum in,
	// why Wireshark checks none by default), not for corruption.
	sumsReal bool
	// lag: octets delivered in order past the assembler (inOrder) that
	// its own next sequence number has not caught up with (catchUp).
	// queued: segments given to the assembler may wait in it, none beyond
	// qEnd.
	lag    uint32
	queued bool
	qEnd   uint32
}

// iwStream is one TCP connection carrying iWARP. Its halves are indexed by
// Direction.Index(): key is oriented client to server.
type iwStream struct {
	ie      *iwarpEngine
	id      uint32
	key     tcpKey
	conn    *Connection
	info    *IWARPInfo
	half    [2]iwHalf
	asmC2S  int  // our half that gopacket's assembler calls client-to-server
	hint    bool // TCP port 20049
	ended   bool
	lastNum int
	// complete: TCP reassembly ended both directions and let go of the
	// stream; closed: the connection is over and released (release.go).
	complete bool
	closed   bool
}

// iwarpContext is the AssemblerContext of the packet being assembled.
type iwarpContext struct{ ci gopacket.CaptureInfo }

func (c *iwarpContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// iwarpEngine is the engine's iWARP state.
type iwarpEngine struct {
	e        *Engine
	maxMsg   int // Options.MaxMessageBytes
	maxReads int // Options.MaxOutstandingReads
	// hintPorts are the registered ULPs' ports (ULPPorts).
	hintPorts []uint16
	streams   map[tcpKey]*iwStream
	last      *iwStream // the stream lookup found last (while in streams)
	order     []*iwStream
	pool      *reassembly.StreamPool
	asm       *reassembly.Assembler
	ctx       iwarpContext
	nextID    uint32

	// The packet being processed: the FPDUs of its stream and direction
	// (pktStream, pktHalf) are recorded in it. nil while Finish flushes.
	cur       *Packet
	pktStream *iwStream
	pktHalf   int
	curNum    int
	now       time.Time
	// The stream and direction given to the assembler (for New).
	curStream *iwStream
	curHalf   int
	// A filler being assembled (see fill).
	fillTCP    layers.TCP
	fillBuf    []byte
	filler     int
	fillHalf   int
	fillStream *iwStream
	// aborting: a RST of our own is being assembled (abort); catching:
	// octets inOrder delivered already (catchUp).
	aborting bool
	catching bool
	// flushing: FlushAll runs (finish); flushed what it delivered.
	flushing bool
	flushed  []iwFlushed
	// inOrderSegs and catchUps count the segments inOrder took and the
	// catchUps that had octets to give (tests).
	inOrderSegs, catchUps int

	// syns are the SYNs not answered yet (iwarp_refused.go).
	syns synTable

	ddp   iwarp.DDP
	rdmap iwarp.RDMAP
	rr    iwarp.MPAReqRep
	loose IWARPPacket // FPDUs no packet shows (see fpdu)
	// fpduHook, when set (tests), sees every FPDU decoded.
	fpduHook func(c *Connection, d Direction, f *IWARPFPDU)

	freeFramers []*iwarp.Framer
	freeReasm   []*iwarp.Reassembler
	freeOps     []*iwOp
	msg         Message
	op          RDMAOp
	data        RDMAData // one tagged Write segment's part (DataObserver)
	pkts        []int
}

// hintPort reports whether p is a port of a registered ULP.
func (ie *iwarpEngine) hintPort(p uint16) bool {
	for _, h := range ie.hintPorts {
		if p == h {
			return true
		}
	}
	return false
}

func newIWARPEngine(e *Engine) *iwarpEngine {
	// NewEngine filled the defaults.
	return &iwarpEngine{e: e, streams: map[tcpKey]*iwStream{},
		maxMsg: e.opts.MaxMessageBytes, maxReads: e.opts.MaxOutstandingReads, hintPorts: ULPPorts(e.opts.ULPs)}
}

// trackIWARP follows iWARP over TCP: stream reassembly, MPA Request/Reply
// and FPDU framing, DDP and RDMAP.
func (e *Engine) trackIWARP(p *Packet) {
	if !p.Has(layers.LayerTypeTCP) {
		return
	}
	if e.iw == nil {
		e.iw = newIWARPEngine(e)
	}
	e.iw.packet(p)
}

// finishIWARP flushes every stream at the end of the input.
func (e *Engine) finishIWARP() {
	if e.iw != nil {
		e.iw.finish()
	}
}

func tcpKeyOf(p *Packet) (tcpKey, bool) {
	var k tcpKey
	switch {
	case p.Has(layers.LayerTypeIPv4):
		k.src, _ = netip.AddrFromSlice(p.IPv4.SrcIP.To4())
		k.dst, _ = netip.AddrFromSlice(p.IPv4.DstIP.To4())
	case p.Has(layers.LayerTypeIPv6):
		k.src, _ = netip.AddrFromSlice(p.IPv6.SrcIP)
		k.dst, _ = netip.AddrFromSlice(p.IPv6.DstIP)
	default:
		return k, false
	}
	k.sport, k.dport = uint16(p.TCP.SrcPort), uint16(p.TCP.DstPort)
	return k, k.src.IsValid() && k.dst.IsValid()
}

func (ie *iwarpEngine) lookup(k tcpKey) (*iwStream, int) {
	s := ie.last
	if s == nil || k != s.key && k != s.key.reverse() {
		if s = ie.streams[k]; s == nil {
			return nil, 0
		}
		ie.last = s
	}
	if s.key == k {
		return s, 0
	}
	return s, 1
}

func (ie *iwarpEngine) packet(p *Packet) {
	k, ok := tcpKeyOf(p)
	if !ok {
		return
	}
	t := &p.TCP
	payload := t.Payload
	s, h := ie.lookup(k)
	if s != nil && s.closed {
		// A connection closed a moment ago (release.go): the segments that
		// trail its close (the last ACK, a RST answering a RST) count on
		// it; anything else is not its any more.
		if len(payload) == 0 && !t.SYN {
			ie.e.Conns.place(p, s.conn, dirOfHalf(h))
			return
		}
		ie.drop(s)
		s = nil
	}
	if t.SYN {
		// A new TCP connection on the 4-tuple: what we followed there is
		// over. SYNs never start a stream; the MPA Request does.
		if s != nil && !t.ACK {
			ie.forget(s)
		}
		ie.syns.note(p, k, t)
		return
	}
	if s == nil && t.RST && t.ACK && len(payload) == 0 {
		if a, ok := ie.syns.refused(k, t.Ack); ok {
			ie.refused(p, a)
			return
		}
	}
	if s != nil && len(payload) >= 16 && string(payload[:16]) == iwarp.MPAKeyReq &&
		s.half[h].started && t.Seq != s.half[h].startSeq {
		// An MPA Request on a 4-tuple whose previous connection we did
		// not see end, at another place than the one we had (which would
		// be a retransmission): a new connection.
		ie.forget(s)
		s = nil
	}
	if s == nil {
		if len(payload) == 0 {
			return
		}
		if s, h = ie.detect(p, k, payload); s == nil {
			return
		}
	}
	ie.e.Conns.place(p, s.conn, dirOfHalf(h))
	switch tcpChecksum(p) {
	case CRCGood:
		s.half[h].sumsReal = true
	case CRCBad:
		if s.half[h].sumsReal {
			// Corrupted on the way: its receiver drops it, and its resend
			// fills the hole it leaves (lossy/siw-nfs3-corrupt.pcap, netem
			// "corrupt 1%": packet 2051's flipped bit is in the XID of an
			// RPC-over-RDMA header; its resend in 2053 is intact).
			p.TCPDiscarded = true
			return
		}
	}
	s.noteCaptured(h, t, len(payload))
	if len(payload) == 0 && !t.FIN && !t.RST {
		return
	}
	ie.cur, ie.curNum, ie.now = p, p.Number, p.Timestamp
	ie.pktStream, ie.pktHalf = s, h
	s.lastNum = p.Number
	ie.ctx.ci = gopacket.CaptureInfo{Timestamp: p.Timestamp, CaptureLength: p.CaptureLength, Length: p.Length}
	hf, r := &s.half[h], &s.half[1-h]
	if t.ACK && (!r.hasPeerAck || int32(t.Ack-r.peerAck) > 0) {
		r.peerAck, r.hasPeerAck = t.Ack, true
	}
	if len(payload) > 0 && hf.started {
		// Octets the peer acknowledged before this segment, which starts
		// beyond them, were received but not captured: skip them now, so
		// that this segment is framed as it arrives.
		for i := 0; i < 4 && int32(t.Seq-hf.seq) > 0 && hf.hasPeerAck && int32(hf.peerAck-t.Seq) >= 0; i++ {
			hf.pruneAhead()
			end := t.Seq
			if len(hf.ahead) > 0 && int32(hf.ahead[0].start-end) < 0 {
				end = hf.ahead[0].start
			}
			if !ie.fill(s, h, int(int32(end-hf.seq))) {
				break
			}
		}
		if int32(t.Seq-hf.seq) > 0 {
			hf.noteAhead(t.Seq, t.Seq+uint32(len(payload)))
		}
	}
	ie.curStream, ie.curHalf = s, h
	if !ie.inOrder(s, h, t) {
		ie.catchUp(s, h)
		hf.noteQueued(t)
		ie.assembler().AssembleWithContext(s.flow(h), t, &ie.ctx)
		hf.unqueue()
	}
	hf.pruneAhead()
	// The acknowledgement this segment carries may say the same of a hole
	// in the other direction: what waited behind it goes on now (shown
	// with no packet: theirs were shown already).
	if t.ACK && r.started && len(r.ahead) > 0 && int32(r.ahead[0].start-r.seq) > 0 && int32(t.Ack-r.ahead[0].start) >= 0 {
		ie.fill(s, 1-h, int(int32(r.ahead[0].start-r.seq)))
		r.pruneAhead()
	}
	ie.cur, ie.curStream, ie.pktStream = nil, nil, nil
	if (t.FIN || t.RST) && s.conn.State == StateEstablished {
		s.conn.State = StateClosed
	}
	if s.complete || t.RST && hf.asmEnd {
		// Both directions ended in order, or a RST the reassembly took
		// (RFC 793 3.4: it aborts both): the connection is over.
		ie.close(s)
	}
}

// iwarpMaxLag bounds the octets inOrder delivers before the assembler
// catches up, well inside the half of the sequence space that its
// comparisons (and RFC 793 section 3.3's) take as ahead.
const iwarpMaxLag = 1 << 30

// iwarpFastPath: inOrder may bypass the assembler (tests turn it off to
// compare).
var iwarpFastPath = true

// inOrder hands a segment that starts exactly at direction h's next
// sequence number straight to the framing, as ReassembledSG would have it,
// when the assembler holds nothing for the direction: gopacket's in-order
// path would only advance its next sequence number (no overlap to trim, no
// page to append), which catchUp does later. A SYN, FIN or RST, a
// direction not started or ended, and anything while segments may wait in
// the assembler go through it.
func (ie *iwarpEngine) inOrder(s *iwStream, h int, t *layers.TCP) bool {
	hf := &s.half[h]
	n := len(t.Payload)
	if !iwarpFastPath || n == 0 || t.FIN || t.RST || t.SYN || !hf.started || hf.asmEnd || hf.queued ||
		s.complete || t.Seq != hf.seq || hf.lag+uint32(n) >= iwarpMaxLag || ie.filler > 0 {
		return false
	}
	ie.inOrderSegs++
	hf.lag += uint32(n)
	hf.seq = t.Seq + uint32(n)
	s.process(h, t.Payload, t.Seq)
	return true
}

// catchUp brings the assembler's next sequence number of direction h to
// ours: the octets inOrder delivered are given to it again (as zeros, in
// order), and ReassembledSG ignores them. Nothing waits in the assembler
// for the direction meanwhile (inOrder ran only then), so these go its
// in-order path and deliver nothing else.
func (ie *iwarpEngine) catchUp(s *iwStream, h int) {
	hf := &s.half[h]
	if hf.lag == 0 {
		return
	}
	ie.catchUps++
	b := s.tcpHeader(ie.fillBuf[:0], h, 0, 0)
	ie.fillBuf = b
	t := &ie.fillTCP
	if err := t.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		return
	}
	cs, ch := ie.curStream, ie.curHalf
	ie.curStream, ie.curHalf = s, h
	ie.catching = true
	for hf.lag > 0 {
		n := min(hf.lag, uint32(len(iwZeros)))
		t.Seq, t.Payload = hf.seq-hf.lag, iwZeros[:n]
		hf.lag -= n
		ie.asm.AssembleWithContext(s.flow(h), t, &ie.ctx)
	}
	ie.catching = false
	ie.curStream, ie.curHalf = cs, ch
}

// tcpFlagRST is the RST bit of the TCP header's flags octet (RFC 793 3.1).
const tcpFlagRST = 0x04

// tcpHeader appends a 20-octet TCP header of direction h of s with
// sequence number seq and flags, acknowledgement 0 and no options (RFC
// 793 3.1), for the segments the engine makes up for the assembler
// (catchUp, fill, abort).
func (s *iwStream) tcpHeader(b []byte, h int, seq uint32, flags byte) []byte {
	k := s.key
	if h == 1 {
		k = k.reverse()
	}
	b = append(b, byte(k.sport>>8), byte(k.sport), byte(k.dport>>8), byte(k.dport))
	b = binary.BigEndian.AppendUint32(b, seq)
	// Acknowledgement 0, data offset 5 words, the flags, window, checksum
	// and urgent pointer 0.
	return append(b, 0, 0, 0, 0, 5<<4, flags, 0, 0, 0, 0, 0, 0)
}

// iwZeros are the octets catchUp gives the assembler; nothing writes them.
var iwZeros [1 << 20]byte

// noteQueued records that the assembler may hold segment t of this
// direction: one beyond the next sequence number, or any before the
// direction started. (A FIN ahead counts its sequence number.)
func (hf *iwHalf) noteQueued(t *layers.TCP) {
	if len(t.Payload) == 0 && !t.FIN || hf.started && int32(t.Seq-hf.seq) <= 0 {
		return
	}
	end := t.Seq + uint32(len(t.Payload))
	if t.FIN {
		end++
	}
	if !hf.queued || int32(end-hf.qEnd) > 0 {
		hf.qEnd = end
	}
	hf.queued = true
}

// unqueue notes that the assembler delivered everything it may have held
// for the direction.
func (hf *iwHalf) unqueue() {
	if hf.queued && hf.started && int32(hf.seq-hf.qEnd) >= 0 {
		hf.queued = false
	}
}

// iwRange is a range of sequence numbers, end excluded.
type iwRange struct{ start, end uint32 }

// iwarpMaxAhead bounds the out-of-order ranges a direction remembers (to
// find the holes its peer's acknowledgements close); iwarpMaxFill the hole
// filled at once.
const (
	iwarpMaxAhead = 256
	iwarpMaxFill  = 1 << 20
)

// noteAhead remembers a segment given to the assembler beyond the octets
// delivered so far. A segment that continues or overlaps a range it
// remembers extends that range: only where a range starts matters (the end
// of a hole), and a sender that goes on sending while its peer's
// acknowledgements lag behind a hole would otherwise use up the list with
// one range a segment, and the ranges it could no longer note be taken for
// part of the hole.
func (hf *iwHalf) noteAhead(start, end uint32) {
	i := len(hf.ahead)
	for i > 0 && int32(hf.ahead[i-1].start-start) > 0 {
		i--
	}
	if i > 0 && int32(hf.ahead[i-1].end-start) >= 0 {
		if int32(end-hf.ahead[i-1].end) > 0 {
			hf.ahead[i-1].end = end
		}
		hf.mergeAhead(i - 1)
		return
	}
	if i < len(hf.ahead) && int32(end-hf.ahead[i].start) >= 0 {
		hf.ahead[i].start = start
		if int32(end-hf.ahead[i].end) > 0 {
			hf.ahead[i].end = end
		}
		hf.mergeAhead(i)
		return
	}
	if len(hf.ahead) >= iwarpMaxAhead {
		return
	}
	hf.ahead = append(hf.ahead, iwRange{})
	copy(hf.ahead[i+1:], hf.ahead[i:])
	hf.ahead[i] = iwRange{start, end}
}

// mergeAhead joins range i with those after it that it now reaches.
func (hf *iwHalf) mergeAhead(i int) {
	j := i + 1
	for j < len(hf.ahead) && int32(hf.ahead[i].end-hf.ahead[j].start) >= 0 {
		if int32(hf.ahead[j].end-hf.ahead[i].end) > 0 {
			hf.ahead[i].end = hf.ahead[j].end
		}
		j++
	}
	if j > i+1 {
		hf.ahead = append(hf.ahead[:i+1], hf.ahead[j:]...)
	}
}

// pruneAhead forgets the ranges delivered since.
func (hf *iwHalf) pruneAhead() {
	k := 0
	for k < len(hf.ahead) && int32(hf.ahead[k].start-hf.seq) <= 0 {
		k++
	}
	if k > 0 {
		hf.ahead = append(hf.ahead[:0], hf.ahead[k:]...)
	}
}

// fill hands the assembler n octets of filler at direction h's next
// sequence number: a hole the peer acknowledged, which no retransmission
// will fill. ReassembledSG skips them (they count as GapOctets) and frames
// what waited behind the hole.
func (ie *iwarpEngine) fill(s *iwStream, h, n int) bool {
	hf := &s.half[h]
	if n <= 0 || n > iwarpMaxFill || !hf.started || ie.asm == nil {
		return false
	}
	ie.catchUp(s, h)
	const hdr = 20
	b := s.tcpHeader(ie.fillBuf[:0], h, hf.seq, 0)
	for len(b) < hdr+n {
		b = append(b, make([]byte, min(hdr+n-len(b), 4096))...)
	}
	ie.fillBuf = b
	for i := hdr; i < len(b); i++ {
		b[i] = 0
	}
	if err := ie.fillTCP.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		return false
	}
	before := hf.seq
	cs, ch := ie.curStream, ie.curHalf
	ie.curStream, ie.curHalf = s, h
	ie.filler, ie.fillHalf, ie.fillStream = n, h, s
	ie.asm.AssembleWithContext(s.flow(h), &ie.fillTCP, &ie.ctx)
	ie.filler, ie.fillStream = 0, nil
	ie.curStream, ie.curHalf = cs, ch
	hf.unqueue()
	return hf.seq != before
}

// pkt returns the packet being processed when it is of stream s and
// direction h: the one that shows what h's octets completed.
func (s *iwStream) pkt(h int) *Packet {
	if ie := s.ie; ie.cur != nil && ie.pktStream == s && ie.pktHalf == h {
		return ie.cur
	}
	return nil
}

// noteCaptured keeps how far the capture has shown direction h's stream
// and, from the acknowledgement segment t carries, whether the other
// direction's peer received octets the capture has not shown: a segment
// the capture lost, or one whose copy in the capture is damaged (its
// checksum failed, so it was discarded above, while the receiver's copy
// was good — it acknowledged it), or one the capture shows only later.
// Either way the capture lacks evidence there (CaptureLoss).
func (s *iwStream) noteCaptured(h int, t *layers.TCP, n int) {
	hf, r := &s.half[h], &s.half[1-h]
	if !hf.hasEnd && n == 0 && !t.SYN && !t.FIN && !t.RST {
		// A pure acknowledgement carries the sender's next sequence
		// number (RFC 9293 3.4): where its stream stands.
		hf.maxEnd, hf.hasEnd = t.Seq, true
	}
	if t.FIN && hf.hasEnd && int32(t.Seq-hf.maxEnd) > 0 {
		// The FIN comes after octets the capture has not shown: the
		// sender's stream ended with them (the ACK that follows covers
		// the FIN too, so it would not tell).
		s.conn.captureLost(dirOfHalf(h), hf.lastNum)
	}
	if n > 0 || t.SYN || t.FIN {
		end := t.Seq + uint32(n)
		if t.SYN || t.FIN {
			end++ // each takes a sequence number (RFC 9293 3.4)
		}
		if !hf.hasEnd || int32(end-hf.maxEnd) > 0 {
			hf.maxEnd, hf.hasEnd = end, true
		}
	}
	if t.ACK && r.hasEnd && int32(t.Ack-r.maxEnd) > 0 {
		s.conn.captureLost(dirOfHalf(1-h), r.lastNum)
		r.maxEnd = t.Ack
	}
}

func dirOfHalf(h int) Direction {
	if h == 1 {
		return DirServerToClient
	}
	return DirClientToServer
}

// detect decides whether a segment of an unknown TCP connection starts
// iWARP: an MPA Request or Reply, or a plausible FPDU.
func (ie *iwarpEngine) detect(p *Packet, k tcpKey, payload []byte) (*iwStream, int) {
	hint := ie.hintPort(k.sport) || ie.hintPort(k.dport)
	switch {
	case len(payload) >= 16 && string(payload[:16]) == iwarp.MPAKeyReq:
		s := ie.newStream(p, k, hint)
		if s == nil {
			return nil, 0
		}
		s.half[0].mode, s.half[1].mode = iwReqRep, iwReqRep
		return s, 0
	case len(payload) >= 16 && string(payload[:16]) == iwarp.MPAKeyRep:
		// The Request is not in the capture: its receiver is the client.
		s := ie.newStream(p, k.reverse(), hint)
		if s == nil {
			return nil, 0
		}
		s.info.MidStream = true
		s.half[0].mode, s.half[1].mode = iwHunt, iwReqRep
		return s, 1
	}
	if ok, _ := plausibleFPDU(payload, hint); !ok {
		return nil, 0
	}
	s := ie.newStream(p, k, hint)
	if s == nil {
		return nil, 0
	}
	s.conn.State = StateNoSetup
	s.info.MidStream = true
	s.half[0].mode, s.half[1].mode = iwHunt, iwHunt
	return s, 0
}

func (ie *iwarpEngine) newStream(p *Packet, k tcpKey, hint bool) *iwStream {
	c := ie.e.Conns.newConn(TransportIWARP, p)
	if c == nil {
		ie.e.Conns.dropTCPConn(k)
		return nil
	}
	c.Client = Endpoint{Address: k.src.Unmap().String(), Port: k.sport}
	c.Server = Endpoint{Address: k.dst.Unmap().String(), Port: k.dport}
	c.ServicePort = k.dport
	c.State = StateIncomplete
	c.IWARP = &IWARPInfo{}
	ie.nextID++
	s := &iwStream{ie: ie, id: ie.nextID, key: k, conn: c, info: c.IWARP, hint: hint}
	ie.streams[k] = s
	ie.streams[k.reverse()] = s
	ie.last = nil
	ie.order = append(ie.order, s)
	return s
}

// forget ends a stream whose 4-tuple a new connection takes (a SYN, or an
// MPA Request elsewhere in the sequence space): it is closed and its
// 4-tuple forgotten at once.
func (ie *iwarpEngine) forget(s *iwStream) {
	ie.close(s)
	ie.drop(s)
}

// close ends a stream whose connection is over and has the engine release
// the connection (release.go): what is in progress is given up, the
// framers and reassemblers go back to the pools, and TCP reassembly lets go
// of it — a direction still open (a RST ended the other, or a new
// connection took the 4-tuple) is ended with a RST of our own. Its 4-tuple
// still leads to it until drop.
func (ie *iwarpEngine) close(s *iwStream) {
	if s.closed {
		return
	}
	s.closed = true
	if !s.complete && ie.asm != nil {
		ie.abort(s)
	}
	s.end()
	for i, o := range ie.order {
		if o == s {
			copy(ie.order[i:], ie.order[i+1:])
			ie.order[len(ie.order)-1] = nil
			ie.order = ie.order[:len(ie.order)-1]
			break
		}
	}
	s.conn.rel.stream = s
	ie.e.Conns.close(s.conn)
}

// drop removes a closed stream's 4-tuple from the table.
func (ie *iwarpEngine) drop(s *iwStream) {
	ie.last = nil
	if ie.streams[s.key] == s {
		delete(ie.streams, s.key)
		delete(ie.streams, s.key.reverse())
	}
}

// abort ends both directions of s in the assembler with a RST at each
// direction's next sequence number (a direction never started is started
// there), so that it forgets the connection (ReassemblyComplete).
func (ie *iwarpEngine) abort(s *iwStream) {
	cs, ch := ie.curStream, ie.curHalf
	for h := range s.half {
		if s.half[h].asmEnd || s.complete {
			continue
		}
		ie.catchUp(s, h)
		b := s.tcpHeader(ie.fillBuf[:0], h, s.half[h].seq, tcpFlagRST)
		ie.fillBuf = b
		if err := ie.fillTCP.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			continue
		}
		ie.curStream, ie.curHalf = s, h
		ie.aborting = true
		ie.asm.AssembleWithContext(s.flow(h), &ie.fillTCP, &ie.ctx)
		ie.aborting = false
	}
	ie.curStream, ie.curHalf = cs, ch
}

func (ie *iwarpEngine) finish() {
	ie.cur, ie.curStream, ie.pktStream = nil, nil, nil
	if ie.asm != nil {
		for _, s := range ie.order {
			for h := range s.half {
				if !s.half[h].asmEnd && !s.complete {
					ie.catchUp(s, h)
				}
			}
		}
		// FlushAll goes through its connections in the order of a map:
		// what it delivers is handed on afterwards, stream by stream in
		// the order they began (their ids), each stream's in the order
		// FlushAll made it — as if the map went in that order.
		ie.flushing = true
		ie.asm.FlushAll()
		ie.flushing = false
		sort.SliceStable(ie.flushed, func(i, j int) bool { return ie.flushed[i].s.id < ie.flushed[j].s.id })
		for _, f := range ie.flushed {
			if f.complete {
				f.s.complete = true
				f.s.end()
			} else {
				f.s.reassembled(f.d, f.end, f.skip, f.data)
			}
		}
		ie.flushed = nil
	}
	for _, s := range ie.order {
		s.end()
	}
}

// iwarpEndpoint is the endpoint type of the flows the engine gives the
// assembler: a stream id and a direction, not addresses, so that a
// 4-tuple reused by a new connection gets a new assembler connection.
const iwarpEndpoint gopacket.EndpointType = 1750

func (s *iwStream) flow(h int) gopacket.Flow {
	var a, b [5]byte
	binary.BigEndian.PutUint32(a[:], s.id)
	binary.BigEndian.PutUint32(b[:], s.id)
	a[4], b[4] = byte(h), byte(1-h)
	return gopacket.NewFlow(iwarpEndpoint, a[:], b[:])
}

func (ie *iwarpEngine) assembler() *reassembly.Assembler {
	if ie.asm == nil {
		ie.pool = reassembly.NewStreamPool(ie)
		ie.asm = reassembly.NewAssembler(ie.pool)
		// Out-of-order segments wait in gopacket's pages, which the
		// budget cannot see page by page: an eighth of it is set aside
		// for them, and the page limits are set from that share.
		b := ie.e.budget()
		total := min(iwarpMaxPagesTotal, max(1, b.max/8/tcpPageCost))
		ie.asm.MaxBufferedPagesTotal = total
		ie.asm.MaxBufferedPagesPerConnection = min(iwarpMaxPagesPerConn, max(1, total/4))
		b.reserved = total * tcpPageCost
	}
	return ie.asm
}

// New implements reassembly.StreamFactory: the assembler asks for the
// stream of the packet being assembled.
func (ie *iwarpEngine) New(_, _ gopacket.Flow, _ *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	s := ie.curStream
	if s == nil {
		return nil
	}
	s.asmC2S = ie.curHalf
	return s
}

func (s *iwStream) halfOf(d reassembly.TCPFlowDirection) int {
	if d == reassembly.TCPDirClientToServer {
		return s.asmC2S
	}
	return 1 - s.asmC2S
}

// Accept implements reassembly.Stream. A direction that expects an MPA
// Request or Reply starts at the segment that begins with its key (or the
// key's first octets): octets that arrive before it (reordered) wait in the
// assembler until it comes. If instead a segment starts with a plausible
// FPDU, the frame is taken to be missing from the capture and the direction
// is picked up there. A direction picked up mid-stream starts at its first
// segment with payload.
func (s *iwStream) Accept(t *layers.TCP, _ gopacket.CaptureInfo, d reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, _ reassembly.AssemblerContext) bool {
	h := s.halfOf(d)
	hf := &s.half[h]
	if s.ie.aborting {
		*start = true // our own RST ends the direction wherever it is
		return true
	}
	if nextSeq >= 0 || len(t.Payload) == 0 {
		return true
	}
	if hf.mode == iwReqRep && !mpaKeyPrefix(t.Payload) {
		if ok, _ := plausibleFPDU(t.Payload, false); !ok {
			return true
		}
		s.toHunt(h)
	}
	*start = true
	if !hf.started {
		hf.started = true
		hf.seq, hf.startSeq = t.Seq, t.Seq
	}
	return true
}

// ReassembledSG implements reassembly.Stream: stream octets in order.
func (s *iwStream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	ie := s.ie
	if ie.catching {
		return
	}
	d, _, end, skip := sg.Info()
	n, _ := sg.Lengths()
	// One segment is handed over without copying; octets held out of order
	// come in several pieces, which Fetch joins.
	data := sg.Fetch(n)
	if ie.flushing {
		ie.flushed = append(ie.flushed, iwFlushed{s: s, d: d, end: end, skip: skip, data: append([]byte(nil), data...)})
		return
	}
	s.reassembled(d, end, skip, data)
}

// reassembled takes stream octets in order from TCP reassembly: skip
// octets missing before data, end when the direction ended with them.
func (s *iwStream) reassembled(d reassembly.TCPFlowDirection, end bool, skip int, data []byte) {
	h := s.halfOf(d)
	if end {
		s.half[h].asmEnd = true
	}
	if skip < 0 {
		skip = 0
	}
	hf := &s.half[h]
	seq := hf.seq
	if ie := s.ie; ie.filler > 0 && ie.fillStream == s && ie.fillHalf == h {
		n := min(ie.filler, len(data))
		data = data[n:]
		skip += n
		ie.filler = 0
	}
	if skip > 0 {
		s.info.Dir[h].GapOctets += uint64(skip)
		s.gap(h, skip)
		seq += uint32(skip)
	}
	hf.seq = seq + uint32(len(data))
	s.process(h, data, seq)
}

// ReassemblyComplete implements reassembly.Stream: both directions ended.
func (s *iwStream) ReassemblyComplete(reassembly.AssemblerContext) bool {
	if s.ie.flushing {
		s.ie.flushed = append(s.ie.flushed, iwFlushed{s: s, complete: true})
		return true
	}
	s.complete = true
	s.end()
	return true
}

// iwFlushed is what FlushAll delivered to a stream (complete: it ended
// both directions), held until it is done.
type iwFlushed struct {
	s        *iwStream
	d        reassembly.TCPFlowDirection
	end      bool
	skip     int
	data     []byte
	complete bool
}

// end gives up what is in progress and returns the buffers.
func (s *iwStream) end() {
	if s.ended {
		return
	}
	s.ended = true
	ie := s.ie
	for h := range s.half {
		hf := &s.half[h]
		for _, op := range hf.writes {
			s.giveUp(op)
		}
		hf.writes = hf.writes[:0]
		for _, op := range hf.reads {
			// The responder sent on after the request and nothing answered
			// it: unanswered. (A capture that ends first shows nothing.)
			if op.got == 0 && len(op.packets) > 0 && s.half[1-h].lastNum > op.packets[0] {
				s.unanswered(h, op)
			}
			s.giveUp(op)
		}
		s.ie.readsEnded(len(hf.reads))
		hf.reads = hf.reads[:0]
		if hf.framer != nil {
			// Pooled framers hold no buffer (they take them again as
			// they need them): the budget counts only live ones.
			hf.framer.FreeSpare()
			s.syncFramer(h)
			if len(ie.freeFramers) < iwarpMaxFreeFramers {
				ie.freeFramers = append(ie.freeFramers, hf.framer)
			}
			hf.framer = nil
		}
		if hf.reasm != nil {
			s.info.Dir[h].Reassembly = hf.reasm.Stats
			// Its Sends in progress end with the stream (a reused
			// reassembler must not carry them into another).
			held := hf.reasm.Buffered()
			hf.reasm.Reset()
			if len(ie.freeReasm) < iwarpMaxFreeFramers {
				ie.freeReasm = append(ie.freeReasm, hf.reasm)
				ie.e.buf.grew(held, hf.reasm.Buffered())
			} else {
				ie.e.buf.grew(held, 0)
			}
			hf.reasm = nil
		}
		hf.mode = iwDead
		hf.hdr, hf.pend = nil, nil
	}
}

// gap tells direction h that n octets are missing before what follows.
func (s *iwStream) gap(h, n int) {
	hf := &s.half[h]
	s.conn.captureLost(dirOfHalf(h), hf.lastNum)
	switch hf.mode {
	case iwFPDU:
		// A gap inside an FPDU whose header was seen leaves the next
		// FPDU's start known: framing goes on there (the FPDU is lost).
		d0 := hf.framer.Stats.Discarded
		if !hf.probing && hf.framer.SkipInside(n) {
			s.info.Dir[h].Discarded += hf.framer.Stats.Discarded - d0
			break
		}
		if !hf.probing {
			s.info.Dir[h].LostSync++
		}
		hf.framer.Skip(n)
		hf.mode = iwHunt
	case iwReqRep:
		s.info.Dir[h].Discarded += uint64(len(hf.hdr))
		hf.hdr = hf.hdr[:0]
		s.toHunt(h)
	case iwWait:
		s.info.Dir[h].Discarded += uint64(len(hf.pend))
		hf.pend = hf.pend[:0]
		s.info.Dir[h].LostSync++
		hf.mode = iwHunt
	}
	// Whatever was in flight lost octets.
	for _, op := range hf.writes {
		op.broken = true
	}
	for _, op := range s.half[1-h].reads {
		op.broken = true
	}
	hf.fresh = true
}

// process frames octets of direction h starting at TCP sequence number seq.
func (s *iwStream) process(h int, data []byte, seq uint32) {
	hf := &s.half[h]
	ctr := &s.info.Dir[h]
	if p := s.pkt(h); p != nil && len(data) > 0 {
		hf.lastNum = p.Number
	}
	for len(data) > 0 {
		n := len(data)
		switch hf.mode {
		case iwReqRep:
			n = s.reqRepBytes(h, data, seq)
		case iwWait:
			if len(hf.pend)+len(data) > iwarpMaxPending {
				// The peer's frame is not coming: frame without it.
				ctr.Discarded += uint64(len(hf.pend))
				hf.pend = hf.pend[:0]
				hf.mode = iwHunt
				n = 0
				break
			}
			if len(hf.pend) == 0 {
				hf.pendSeq = seq
			}
			hf.pend = append(hf.pend, data...)
		case iwFPDU:
			s.frame(h, data)
		case iwHunt:
			if !hf.hasRR && s.info.Dir[h].FPDUs == 0 && iwarp.IsMPAKey(data) {
				// The frame after all (reordered behind the peer's).
				hf.mode = iwReqRep
				n = 0
				break
			}
			if k, ok := s.pickUp(h, data, seq); ok {
				ctr.Discarded += uint64(k)
				n = k
			} else {
				ctr.Discarded += uint64(n)
			}
		case iwDead:
			ctr.Discarded += uint64(n)
		}
		data = data[n:]
		seq += uint32(n)
	}
}

// mpaKeyPrefix reports whether b starts with an MPA Request or Reply key,
// or with the first octets of one when b is shorter.
func mpaKeyPrefix(b []byte) bool {
	n := min(len(b), len(iwarp.MPAKeyReq))
	return string(b[:n]) == iwarp.MPAKeyReq[:n] || string(b[:n]) == iwarp.MPAKeyRep[:n]
}

// reqRepBytes takes octets of the MPA Request or Reply at the start of
// direction h and returns how many it used.
func (s *iwStream) reqRepBytes(h int, data []byte, seq uint32) int {
	hf := &s.half[h]
	if len(hf.hdr) == 0 {
		if !mpaKeyPrefix(data) {
			s.toHunt(h)
			return 0
		}
		if n, ok := iwarp.MPAReqRepLen(data); ok && len(data) >= n {
			s.gotReqRep(h, data[:n], seq+uint32(n))
			return n
		}
	}
	max := iwarp.MPAReqRepHeaderLen + iwarp.MPAMaxPrivateDataLen
	k := min(len(data), max-len(hf.hdr))
	hf.hdr = append(hf.hdr, data[:k]...)
	if !mpaKeyPrefix(hf.hdr) {
		s.info.Dir[h].Discarded += uint64(len(hf.hdr))
		hf.hdr = hf.hdr[:0]
		s.toHunt(h)
		return k
	}
	n, ok := iwarp.MPAReqRepLen(hf.hdr)
	if !ok || len(hf.hdr) < n && len(hf.hdr) < max {
		return k
	}
	if n > len(hf.hdr) {
		n = len(hf.hdr) // PD_Length beyond 512: DecodeFromBytes says why
	}
	used := k - (len(hf.hdr) - n)
	s.gotReqRep(h, hf.hdr[:n], seq+uint32(used))
	hf.hdr = hf.hdr[:0]
	return used
}

// toHunt turns direction h to hunting for FPDUs; a peer waiting for this
// direction's frame stops waiting.
func (s *iwStream) toHunt(h int) {
	s.half[h].mode = iwHunt
	s.info.MidStream = true
	o := &s.half[1-h]
	if o.mode == iwWait {
		s.unwait(1 - h)
	}
}

// unwait frames what direction h held while waiting, by hunting.
func (s *iwStream) unwait(h int) {
	hf := &s.half[h]
	hf.mode = iwHunt
	pend, seq := hf.pend, hf.pendSeq
	hf.pend = nil
	s.process(h, pend, seq)
}

// gotReqRep handles a whole MPA Request or Reply frame of direction h that
// ends at sequence number end.
func (s *iwStream) gotReqRep(h int, frame []byte, end uint32) {
	ie := s.ie
	hf := &s.half[h]
	m := &ie.rr
	if err := m.DecodeFromBytes(frame, gopacket.NilDecodeFeedback); err != nil {
		s.info.Dir[h].Malformed++
		if p := s.pkt(h); p != nil {
			p.fail("MPA", err)
		}
		s.toHunt(h)
		return
	}
	if s.conn.Server.Port == iwarp.SMBDirectPort {
		m.DecodeLegacy() // [MS-SMBD] 6.1: before RFC 6581, on port 5445
	}
	hf.rr = *m
	hf.rr.BaseLayer = layers.BaseLayer{}
	hf.rrBuf = append(hf.rrBuf[:0], m.PrivateData...)
	hf.rr.PrivateData = hf.rrBuf
	hf.hasRR = true
	hf.fpduSeq = end
	if p := s.pkt(h); p != nil {
		p.IWARP.addReqRep(m)
	}
	side := &s.info.MPA[h]
	*side = MPAInfo{Seen: true, Packet: ie.curNum, Revision: m.Rev, Markers: m.M, CRC: m.C, Rejected: m.R,
		Enhanced: m.Enhanced, HasIRDORD: m.HasEnhancedData}
	if m.HasEnhancedData {
		x := m.EnhancedData
		side.IRD, side.ORD = x.IRD, x.ORD
		side.PeerToPeer, side.RTRSend, side.RTRWrite, side.RTRRead = x.A, x.B, x.C, x.D
	}
	if m.HasLegacyIRDORD {
		l := m.LegacyIRDORD
		side.Legacy = &l
	}
	prefix := pvtdata.PrefixNone
	if m.Rev == iwarp.MPARevision2 && m.Enhanced {
		prefix = pvtdata.PrefixMPAv2
	}
	pkt := s.pkt(h)
	if pkt == nil {
		pkt = &Packet{Number: s.lastNum}
	}
	s.conn.setPrivateData(dirOfHalf(h), pkt, m.PrivateData, prefix)
	if m.IsReply() {
		switch {
		case m.R:
			s.conn.State = StateRejected
			s.conn.RejectReason = "MPA Reply with the Rejected flag (RFC 5044 section 7.1)"
			ie.e.Conns.noteRejected(s.conn)
		case s.conn.State == StateIncomplete:
			s.conn.State = StateEstablished
			ie.e.Conns.noteEstablished(s.conn)
		}
	}
	o := &s.half[1-h]
	switch {
	case o.hasRR:
		hf.mode = iwWait
		hf.pend = hf.pend[:0]
		s.negotiate()
	case o.mode == iwReqRep:
		hf.mode = iwWait
		hf.pend = hf.pend[:0]
	default:
		hf.mode = iwHunt
	}
}

// negotiate fixes both directions' framing once the Request and the Reply
// are known (RFC 5044 section 7.1) and starts framing what was held.
func (s *iwStream) negotiate() {
	req, rep := -1, -1
	for h := range s.half {
		if !s.half[h].hasRR {
			return
		}
		if s.half[h].rr.IsRequest() {
			req = h
		} else {
			rep = h
		}
	}
	if req < 0 || rep < 0 {
		// Two Requests or two Replies: not a connection we can frame by
		// the book; hunt.
		s.unwaitAll()
		return
	}
	i2r, r2i := iwarp.Negotiate(&s.half[req].rr, &s.half[rep].rr)
	s.info.Framing[req], s.info.Framing[rep] = i2r, r2i
	s.info.Negotiated = true
	for h := range s.half {
		hf := &s.half[h]
		if hf.mode != iwWait {
			continue
		}
		if s.half[rep].rr.R {
			s.info.Dir[h].Discarded += uint64(len(hf.pend))
			hf.pend = nil
			hf.mode = iwDead
			continue
		}
		s.startFraming(h, hf.fpduSeq, s.info.Framing[h], hf.fpduSeq)
		pend := hf.pend
		hf.pend = nil
		if len(pend) > 0 {
			s.process(h, pend, hf.fpduSeq)
		}
	}
}

func (s *iwStream) unwaitAll() {
	for h := range s.half {
		if s.half[h].mode == iwWait {
			s.unwait(h)
		}
	}
}

func (s *iwStream) startFraming(h int, seq uint32, fr iwarp.Framing, markerSeq uint32) {
	ie := s.ie
	hf := &s.half[h]
	if hf.framer == nil {
		if n := len(ie.freeFramers); n > 0 {
			hf.framer = ie.freeFramers[n-1]
			ie.freeFramers = ie.freeFramers[:n-1]
		} else {
			hf.framer = iwarp.NewFramer(iwarp.FramerConfig{})
		}
	}
	hf.framer.Reset(iwarp.FramerConfig{Framing: fr, Seq: seq, MarkerSeq: markerSeq})
	if hf.reasm == nil {
		if n := len(ie.freeReasm); n > 0 {
			hf.reasm = ie.freeReasm[n-1]
			ie.freeReasm = ie.freeReasm[:n-1]
			hf.reasm.Stats = iwarp.ReassemblyStats{}
		} else {
			hf.reasm = iwarp.NewReassembler(iwarp.ReassemblerConfig{MaxMessageBytes: ie.maxMsg, MaxInProgress: iwarpMaxSendsInProgress})
		}
	}
	hf.mode = iwFPDU
}

// pickUp tries to start framing direction h in data (at TCP sequence seq)
// without the MPA exchange having told us where an FPDU starts: a capture
// that started mid-stream, or after sync was lost. It returns how many
// octets of data come before the FPDU it starts at.
func (s *iwStream) pickUp(h int, data []byte, seq uint32) (int, bool) {
	hf := &s.half[h]
	var fr iwarp.Framing
	markerSeq := seq
	skip := 0
	relaxed := s.hint || s.info.Dir[h].FPDUs > 0 || s.info.Negotiated
	switch {
	case s.info.Negotiated && s.info.Framing[h].Markers:
		// A marker in data says where its FPDU starts (RFC 5044 section
		// 5); the framer then checks every marker's FPDUPTR.
		fr, markerSeq = s.info.Framing[h], hf.fpduSeq
		k, ok := markerStart(data, seq, markerSeq)
		if !ok {
			return 0, false
		}
		skip = k
	case s.info.Negotiated:
		fr, markerSeq = s.info.Framing[h], hf.fpduSeq
		if ok, _ := plausibleFPDU(data, relaxed); !ok {
			// data starts inside an FPDU (the rest of one whose start
			// the gap took): look for the next FPDU in it.
			k, ok := fpduInside(data, seq, hf.fpduSeq, fr.CRC)
			if !ok {
				return 0, false
			}
			skip = k
		}
	default:
		ok, crc := plausibleFPDU(data, relaxed)
		if !ok {
			return 0, false
		}
		fr.CRC = crc
		s.info.Framing[h] = fr
	}
	s.startFraming(h, seq+uint32(skip), fr, markerSeq)
	hf.probing = true
	hf.fresh = true
	return skip, true
}

// markerStart finds an FPDU start in data, which begins at TCP sequence
// seq, on a stream whose markers sit every 512 octets from markerSeq (RFC
// 5044 section 5): the first marker in data whose reserved bits are zero
// and whose FPDUPTR points back, inside data, to a plausible FPDU header
// (a leading marker, FPDUPTR 0, is followed by one). Without a marker in
// data, data's start must be on the markers' grid of four and look like
// an FPDU header. It returns the offset of the FPDU (of its leading marker).
func markerStart(data []byte, seq, markerSeq uint32) (int, bool) {
	// header collects the first octets of the FPDU header at h, without
	// the marker at m.
	header := func(h, m int) []byte {
		var b []byte
		for i := h; i < len(data) && len(b) < 12; i++ {
			if i >= m && i < m+iwarp.MarkerLen {
				continue
			}
			b = append(b, data[i])
		}
		return b
	}
	plausible := func(hdr []byte) bool {
		return len(hdr) >= 4 && plausibleDDP(hdr[2:], int(binary.BigEndian.Uint16(hdr)))
	}
	for m := int((markerSeq - seq) % iwarp.MarkerInterval); m+iwarp.MarkerLen <= len(data); m += iwarp.MarkerInterval {
		if data[m] != 0 || data[m+1] != 0 {
			continue
		}
		ptr := int(binary.BigEndian.Uint16(data[m+2:]) &^ 3)
		start := m - ptr
		if start < 0 {
			continue
		}
		h := start
		if ptr == 0 {
			h = m + iwarp.MarkerLen
		}
		hdr := header(h, m)
		if !plausible(hdr) {
			continue
		}
		// The FPDU must reach the marker that points to it.
		if n := iwarp.FPDULen(int(binary.BigEndian.Uint16(hdr))); ptr != 0 && n+iwarp.MarkerLen*(ptr/iwarp.MarkerInterval+1) <= ptr {
			continue
		}
		return start, true
	}
	if (seq-markerSeq)%4 != 0 {
		return 0, false
	}
	if (seq-markerSeq)%iwarp.MarkerInterval == 0 {
		return 0, false // a leading marker the loop above did not accept
	}
	return 0, plausible(header(0, -iwarp.MarkerLen))
}

// syncFramer tells the buffer budget what direction h's framer holds now.
func (s *iwStream) syncFramer(h int) {
	hf := &s.half[h]
	n := 0
	if hf.framer != nil {
		n = hf.framer.Held()
	}
	s.ie.e.buf.grew(hf.framerHeld, n)
	hf.framerHeld = n
}

// frame feeds octets to direction h's framer and handles every FPDU.
func (s *iwStream) frame(h int, data []byte) {
	hf := &s.half[h]
	ctr := &s.info.Dir[h]
	f := hf.framer
	d0 := f.Stats.Discarded
	defer func() {
		ctr.Discarded += f.Stats.Discarded - d0
		// A partial FPDU the framer now holds counts in the budget.
		if f == hf.framer && f.Held() != hf.framerHeld {
			s.syncFramer(h)
			s.ie.e.checkBudget()
		}
	}()
	if err := f.Feed(data); err != nil {
		s.lost(h, err)
		return
	}
	for {
		fp, err := f.Next()
		if err == iwarp.ErrNeedMore {
			return
		}
		if err != nil {
			s.lost(h, err)
			return
		}
		if hf.probing {
			hf.probing = false
			ctr.Resyncs++
			if p := s.pkt(h); p != nil {
				p.IWARP.Resync = true
			}
		}
		for _, m := range fp.Markers {
			if m.Swapped {
				var b [4]byte
				binary.BigEndian.PutUint16(b[0:], m.Reserved)
				binary.BigEndian.PutUint16(b[2:], m.FPDUPTR)
				s.badMarker(h, &iwarp.MarkerFault{Seq: fp.Seq + uint32(m.Offset), FPDUSeq: fp.Seq, Want: uint16(m.Offset), Octets: b, Swapped: true})
				break
			}
		}
		s.fpdu(h, fp)
		if hf.mode != iwFPDU {
			return
		}
	}
}

// lost handles a framing error of direction h.
func (s *iwStream) lost(h int, err error) {
	hf := &s.half[h]
	if !hf.probing {
		var se *iwarp.SyncError
		if errors.As(err, &se) && se.Marker != nil {
			s.badMarker(h, se.Marker)
		}
		s.info.Dir[h].LostSync++
		if p := s.pkt(h); p != nil && !errors.Is(err, iwarp.ErrUnconsumed) {
			p.fail("MPA", err)
		}
	}
	hf.probing = false
	hf.mode = iwHunt
}

// badMarker records direction h's first bad marker.
func (s *iwStream) badMarker(h int, m *iwarp.MarkerFault) {
	if s.info.BadMarker[h] != nil {
		return
	}
	b := &BadMarker{MarkerFault: *m}
	if p := s.pkt(h); p != nil {
		b.Packet = p.Number
	} else {
		b.Packet = s.half[h].lastNum
	}
	s.info.BadMarker[h] = b
}

// plausibleFPDU reports whether b starts with an FPDU without markers:
// a ULPDU_Length that fits a DDP header, a DDP version 1 control octet
// with zero reserved bits (RFC 5041 section 4.2), an RDMAP version 1
// control octet with a known opcode on its buffer model (RFC 5040 section
// 4.2), and for untagged segments the queue number the opcode uses and a
// zero reserved word (section 4.3). Relaxed, the first header is enough;
// strict, b must hold at least one complete FPDU and every FPDU in it must
// pass (the last may be cut by the segment's end). crc tells whether every
// complete FPDU's CRC field holds its CRC32c, which then says CRC is in
// use.
func plausibleFPDU(b []byte, relaxed bool) (ok, crc bool) {
	complete := 0
	crc = true
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < 4 {
			if complete == 0 && !relaxed {
				return false, false
			}
			break
		}
		l := int(binary.BigEndian.Uint16(rest))
		if !plausibleDDP(rest[2:], l) {
			return false, false
		}
		n := iwarp.FPDULen(l)
		if len(rest) < n {
			if complete == 0 && !relaxed {
				return false, false
			}
			break
		}
		if iwarp.CRC32c(rest[:n-iwarp.CRCLen]) != binary.BigEndian.Uint32(rest[n-iwarp.CRCLen:]) {
			crc = false
		}
		complete++
		off += n
	}
	return true, crc && complete > 0
}

// fpduInside finds an FPDU start after the first octet of data, which
// begins at TCP sequence seq inside an FPDU of a stream without markers
// whose first FPDU was at fpduSeq. FPDUs are padded to four octets (RFC
// 5044 section 4.1: ULPDU_Length, ULPDU and PAD fill a multiple of four;
// the CRC is four), so every FPDU of the stream starts on fpduSeq's grid of
// four. A start there is taken when the FPDUs from it chain to the end of
// data, the last one possibly cut, with at least two whole ones, or one
// whose CRC32c matches when CRC was negotiated: a header's few plausible
// octets alone are too easily found in payload.
func fpduInside(data []byte, seq, fpduSeq uint32, crc bool) (int, bool) {
	for k := int((fpduSeq - seq) % 4); k+4 <= len(data); k += 4 {
		if k == 0 {
			continue
		}
		if !plausibleDDP(data[k+2:], int(binary.BigEndian.Uint16(data[k:]))) {
			continue
		}
		whole, good := 0, true
		off := k
		for off+4 <= len(data) {
			l := int(binary.BigEndian.Uint16(data[off:]))
			if !plausibleDDP(data[off+2:], l) {
				good = false
				break
			}
			n := iwarp.FPDULen(l)
			if off+n > len(data) {
				break
			}
			if crc && iwarp.CRC32c(data[off:off+n-iwarp.CRCLen]) != binary.BigEndian.Uint32(data[off+n-iwarp.CRCLen:]) {
				good = false
				break
			}
			whole++
			off += n
		}
		if good && (whole >= 2 || whole == 1 && crc) {
			return k, true
		}
	}
	return 0, false
}

// plausibleDDP checks the start of a DDP segment of length l.
func plausibleDDP(c []byte, l int) bool {
	if len(c) < 2 {
		return false
	}
	ctl, rc := c[0], c[1]
	tagged := ctl&0x80 != 0
	if ctl&0x3c != 0 || ctl&0x03 != iwarp.DDPVersion1 || rc>>6 != iwarp.RDMAPVersion1 || rc&0x30 != 0 {
		return false
	}
	op := iwarp.Opcode(rc & 0x0f)
	if !op.Known() || op.Tagged() != tagged {
		return false
	}
	if tagged {
		return l >= iwarp.DDPTaggedHeaderLen
	}
	if l < iwarp.DDPUntaggedHeaderLen {
		return false
	}
	if len(c) < 10 {
		return true
	}
	qn := binary.BigEndian.Uint32(c[6:10])
	reserved := binary.BigEndian.Uint32(c[2:6])
	switch {
	case op.IsSend():
		return qn == iwarp.QNSend && (op.HasInvalidateSTag() || reserved == 0)
	case op == iwarp.OpRDMAReadRequest:
		return qn == iwarp.QNReadRequest && reserved == 0 && l == iwarp.DDPUntaggedHeaderLen+iwarp.ReadRequestHeaderLen
	case op == iwarp.OpTerminate:
		return qn == iwarp.QNTerminate && reserved == 0
	}
	return qn <= 3
}
