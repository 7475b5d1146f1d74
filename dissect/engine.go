package dissect

import (
	"errors"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// Options configure an Engine.
type Options struct {
	// RoCEPort is the UDP destination port of RoCEv2 (default 4791).
	RoCEPort uint16
	// MaxConnections bounds the connection table: live connections and the
	// summaries of released ones (default DefaultMaxConnections; see
	// release.go).
	MaxConnections int
	// Count stops after that many packets when positive.
	Count int
	// Observer, when set, receives every reassembled message and RDMA
	// operation (and, if it is a ConnObserver, the connections released).
	Observer Observer

	// MaxMessageBytes bounds a reassembled Send and the data kept of an RDMA
	// operation (default DefaultMaxMessageBytes); MaxOutstandingReads the
	// RDMA Read Requests awaiting responses per direction (default
	// DefaultMaxOutstandingReads). See reassembly.go.
	MaxMessageBytes     int
	MaxOutstandingReads int
	// MaxTransactions bounds the exchanges (RPC transactions) awaiting
	// their response per connection (default DefaultMaxTransactions);
	// MaxRebuildBytes the data a ULP holds to rebuild messages from RDMA
	// data (RPC's chunk data), all connections together (default
	// DefaultMaxRebuildBytes). The sessions have them from Env.
	MaxTransactions int
	MaxRebuildBytes int
	// IdleTimeout, when positive, releases a connection that saw no
	// packet for that long in capture time (the packets' timestamps), as if
	// it had closed: Connection.Idle tells (release.go). 0: never.
	IdleTimeout time.Duration
	// MaxBufferedBytes bounds the payload bytes all reassembly buffers hold
	// together (default DefaultMaxBufferedBytes; see budget.go).
	MaxBufferedBytes int
	// HealthInterval is the throughput interval of transport health
	// (default DefaultHealthInterval; health.go).
	HealthInterval time.Duration
	// Exchange, when set, receives every exchange of every ULP once it is
	// over (exchange.go).
	Exchange func(*Exchange)
	// ULPs are the upper-layer protocols the engine asks about each
	// connection, in order (ulp.go): fresh values for each engine. Nil:
	// none, every connection carries "no ULP"; cmd/rdmashark registers the
	// tool's list.
	ULPs []ULP
	// Pipeline: whether Run reads the capture and computes its CRCs on a
	// goroutine of its own, ahead of the connection engine (pipeline.go);
	// the output is the same.
	Pipeline PipelineMode
	// BeforeWait, when set, is called on Run's goroutine each time Run is
	// about to wait for its input: the packets handed out so far are all
	// processed, and the next is not read yet (the reader's buffer holds
	// no whole record; with the pipeline, no decoded packet is ready). A
	// command printing a live stream flushes its output there.
	BeforeWait func()
	// Fields says which fields of the packets' presentation the caller
	// reads (package fields: dissect's -V, JSON and -T fields outputs,
	// display filters), by field name: a ULP may leave out of its
	// per-packet records (Packet.ULP) what only fields nobody reads would
	// show — RPC-over-RDMA the NFS values behind nfs.fhandle,
	// nfs.offset3... Nil: none but the summary line and frame.protocols,
	// which a ULP's records always serve (analyze, check and the other
	// commands that print no packet); AllFields: every one. The sessions
	// have it from Env.Fields.
	Fields func(name string) bool
	// ForgetReleased drops the summary of a released connection as soon
	// as no packet can reach it any more (it leaves the grace window,
	// release.go) instead of keeping it to the end for a report: for a
	// program that reports packets or transactions as they come and
	// nothing per connection at the end (rdmashark dissect and
	// transactions), whose memory then does not grow with the number of
	// connections the input held. ConnTable.Forgotten counts them, and a
	// ConnForgetter hears ConnectionForgotten, as when a full table
	// forgets one.
	ForgetReleased bool
}

// AllFields is Options.Fields for a caller that may read any field of a
// packet (dissect -V, its JSON outputs).
func AllFields(string) bool { return true }

// fillDefaults replaces every unset (zero or negative) limit by its
// default.
func (o *Options) fillDefaults() {
	if o.RoCEPort == 0 {
		o.RoCEPort = DefaultRoCEPort
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxConnections, DefaultMaxConnections)
	def(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&o.MaxOutstandingReads, DefaultMaxOutstandingReads)
	def(&o.MaxTransactions, DefaultMaxTransactions)
	def(&o.MaxRebuildBytes, DefaultMaxRebuildBytes)
	def(&o.MaxBufferedBytes, DefaultMaxBufferedBytes)
}

// Proto is the top-level protocol a packet was counted under.
type Proto uint8

const (
	ProtoOther Proto = iota
	ProtoARP
	ProtoIPv4
	ProtoIPv6
	ProtoUDP
	ProtoTCP
	ProtoRoCEv2
	ProtoRoCEv1
	ProtoIB
	ProtoCNP
	ProtoMAD
	ProtoCM
	ProtoMalformed
	ProtoMPA   // an MPA Request or Reply (iWARP connection set-up)
	ProtoIWARP // MPA FPDUs: DDP and RDMAP
	// ProtoMACControl: IEEE 802.3 MAC Control (PAUSE, PFC), tshark's
	// "MAC CTRL".
	ProtoMACControl
	numProtos
)

var protoNames = [numProtos]string{"other", "ARP", "IPv4", "IPv6", "UDP", "TCP", "RoCEv2", "RoCEv1",
	"InfiniBand", "CNP", "MAD", "IB CM", "malformed", "MPA", "iWARP", "MAC CTRL"}

func (p Proto) String() string {
	if p < numProtos {
		return protoNames[p]
	}
	return "?"
}

// Stats are the capture-wide counters.
type Stats struct {
	Packets uint64
	Bytes   uint64
	// ByProto counts packets by their innermost decoded protocol.
	ByProto [numProtos]uint64
	// ICRC counts verdicts on invariant CRCs, indexed by CRCStatus.
	ICRC [4]uint64
	// VCRC counts verdicts on variant CRCs (native IB).
	VCRC [4]uint64
	// Skipped counts damaged records skipped without stopping the read.
	Skipped uint64
	// Dropped counts the frames the capture lost where it says so
	// (source.Record.LostBefore: a live capture's kernel drops, a pcapng
	// file's epb_dropcount).
	Dropped uint64
}

// MaxWarnings bounds Engine.Warnings.
const MaxWarnings = 100

// ProtoCount is one row of the protocol hierarchy.
type ProtoCount struct {
	Proto   string `json:"protocol"`
	Packets uint64 `json:"packets"`
}

// Protocols lists the non-zero protocol counts.
func (s *Stats) Protocols() []ProtoCount {
	var out []ProtoCount
	for i, n := range s.ByProto {
		if n > 0 {
			out = append(out, ProtoCount{Proto(i).String(), n})
		}
	}
	return out
}

// Classify names the innermost protocol of a decoded packet.
func Classify(p *Packet) Proto {
	bth := p.Has(roce.LayerTypeBTH) // asked once: most packets are RoCE
	switch {
	case p.Err != nil && len(p.Decoded) == 0:
		return ProtoMalformed
	case p.CM.Attr != 0:
		return ProtoCM
	case p.Has(roce.LayerTypeMAD):
		return ProtoMAD
	case bth && p.BTH.OpCode.Transport() == roce.TransportCNP:
		return ProtoCNP
	case bth && p.Encap == EncapRoCEv2:
		return ProtoRoCEv2
	case bth && p.Encap == EncapRoCEv1:
		return ProtoRoCEv1
	case bth && p.Encap == EncapIB:
		return ProtoIB
	case p.Err != nil && p.Encap != EncapNone:
		return ProtoMalformed
	case len(p.IWARP.FPDUs) > 0:
		return ProtoIWARP
	case p.IWARP.HasReqRep:
		return ProtoMPA
	case p.Has(layers.LayerTypeTCP):
		return ProtoTCP
	case p.Has(layers.LayerTypeUDP):
		return ProtoUDP
	case p.Has(layers.LayerTypeIPv6):
		return ProtoIPv6
	case p.Has(layers.LayerTypeIPv4):
		return ProtoIPv4
	case p.Has(layers.LayerTypeARP):
		return ProtoARP
	case p.Has(pfc.LayerTypeMACControl):
		return ProtoMACControl
	}
	return ProtoOther
}

// Engine runs packets through decoding and connection tracking. It owns the
// loop over a capture; callers see each packet through a callback.
type Engine struct {
	// Warnings holds the first MaxWarnings errors that skipped a record
	// without stopping the read (Stats.Skipped counts them all).
	Warnings []error
	opts     Options
	dec      Decoder
	Conns    *ConnTable
	Stats    Stats
	pkt      Packet
	iw       *iwarpEngine // TCP streams carrying iWARP (iwarp.go)
	// Reassembly counts IB/RoCE Send reassembly and RDMA operation
	// tracking (reassembly.go).
	Reassembly ReassemblyStats
	// Ops counts what both transports handed up to the ULPs (ulp.go).
	Ops       TransportCounters
	rxs       rxState
	buf       bufBudget
	idle      idleClock
	holderBuf [2]bufferHolder // budget.go

	// PFC counts the PAUSE and PFC frames of the capture (health.go).
	PFC PFCStats
	// UD holds the Unreliable Datagram flows and their health (udflows.go).
	UD UDFlows
	// healthIntervals counts the throughput intervals held (health.go).
	healthIntervals int
	frames          frameState // frame.time_delta, tcp.stream (frame_state.go)
	crcs            crcTrust   // whose CRCs are real (crctrust.go)
	env             Env        // what the ULP sessions are lent (ulp.go)
	budgetView      Budget
	dupMsg          Message // a retransmitted Send handed to a session (deliverDuplicate)
}

// TransportCounters count what the transports handed up to the ULPs,
// whichever protocol a connection carries.
type TransportCounters struct {
	// Sends and RDMA operations handed up by either transport (RDMA
	// operations by kind, and those incomplete).
	Sends, RDMAReads, RDMAWrites, RDMAOpsIncomplete uint64
	// Unclaimed counts the Sends on connections no registered ULP claimed
	// (yet): probed, or found to carry none.
	Unclaimed uint64
}

// NewEngine returns an engine with opts, defaults filled in (here, once:
// the sub-trackers read the limits as given).
func NewEngine(opts Options) *Engine {
	opts.fillDefaults()
	e := &Engine{opts: opts, Conns: NewConnTable()}
	e.Conns.Max = opts.MaxConnections
	e.Conns.forgetReleased = opts.ForgetReleased
	e.Conns.retired, e.Conns.forgotten = e.retired, e.forgotten
	e.Conns.orient = orienter(opts.ULPs)
	e.Conns.swapped = e.swapRoCE
	e.dec.RoCEPort = opts.RoCEPort
	e.budgetView.e = e
	e.env = Env{Budget: &e.budgetView, MaxExchanges: opts.MaxTransactions, Observer: opts.Observer,
		MaxMessageBytes: opts.MaxMessageBytes, MaxRebuildBytes: opts.MaxRebuildBytes, Fields: opts.Fields}
	if _, obs := opts.Observer.(ExchangeObserver); obs || opts.Exchange != nil {
		// Nobody hears exchanges otherwise: the sessions need not make them.
		e.env.Exchange = e.endExchange
	}
	return e
}

// Run reads r to its end, handing each decoded packet to each (which may be
// nil). The Packet is reused: each must not keep it. Run stops at the first
// error of r or of each; r's errors name the file and the packet. Everything
// processed before an error stays in the engine's connections and stats.
// Run is the engine's only loop: a file (*source.Reader) and a live capture
// (source/live) both come through it, and both end with Finish.
func (e *Engine) Run(r source.Source, each func(*Packet) error) error {
	defer e.Finish()
	if rd, ok := r.(*source.Reader); ok && e.pipelined(rd) {
		return e.runPipeline(rd, each) // decoding on a core of its own (pipeline.go)
	}
	ready, _ := r.(interface{ Ready() bool })
	var first int64
	st := newPipeStat("inline")
	defer st.end()
	for {
		if e.opts.Count > 0 && e.Stats.Packets >= uint64(e.opts.Count) {
			return nil
		}
		if e.opts.BeforeWait != nil && (ready == nil || !ready.Ready()) {
			e.opts.BeforeWait()
		}
		rec, err := r.Next()
		if err != nil {
			// Only here: errors.As's target escapes, and would be
			// allocated for every packet.
			if e.skipRecord(err) {
				continue
			}
			return nilIfEOF(err)
		}
		if rec.LostBefore > 0 {
			e.captureDropped(rec.LostBefore)
		}
		p := &e.pkt
		p.Number = rec.Number
		p.Timestamp = rec.CI.Timestamp
		if e.Stats.Packets == 0 {
			first = rec.CI.Timestamp.UnixNano()
		}
		p.RelTime = durationSince(first, rec.CI.Timestamp.UnixNano())
		p.CaptureLength = rec.CI.CaptureLength
		p.Length = rec.CI.Length
		p.LinkType = rec.LinkType
		p.Comments = rec.Comments
		p.Interface = rec.CI.InterfaceIndex
		e.Process(p, rec.Data)
		if each != nil {
			if err := each(p); err != nil {
				return err
			}
		}
	}
}

// skipRecord reports whether err, from the reader's Next, is a damaged
// record whose neighbours are intact: it is noted (Stats.Skipped, Warnings)
// and the read goes on with the next one.
func (e *Engine) skipRecord(err error) bool {
	var serr *source.Error
	if !errors.As(err, &serr) || serr.Final {
		return false
	}
	e.Stats.Skipped++
	if len(e.Warnings) < MaxWarnings {
		e.Warnings = append(e.Warnings, err)
	}
	return true
}

// nilIfEOF returns nil for the clean end of the input, err otherwise.
func nilIfEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Process decodes one frame into p and tracks it. p's number, times,
// lengths and link type must be set.
func (e *Engine) Process(p *Packet, data []byte) {
	e.dec.Decode(p, data)
	e.processDecoded(p)
}

// processDecoded tracks a decoded packet: all of Process but the decoding,
// which depends on nothing but the frame's bytes (so the pipeline runs it
// ahead on another goroutine).
func (e *Engine) processDecoded(p *Packet) {
	// Per-frame state that follows capture order (frame.time_delta,
	// tcp.stream): here, not in the decoding the pipeline runs ahead.
	e.frames.note(p)
	e.crcs.note(p)
	if e.opts.IdleTimeout > 0 {
		// Connections quiet for IdleTimeout before this packet go first.
		e.expireIdle(p.Timestamp)
	}
	e.Conns.Track(p)
	if c := p.Conn; c != nil && c.IPoIBCM() && p.BTH.OpCode.IsSend() && (p.BTH.OpCode.IsOnly() || p.BTH.OpCode.IsFirst()) {
		// IPoIB connected mode (RFC 4755) carries the same encapsulation
		// header as datagram mode, in RC Sends: only the connection's
		// service ID tells, as it does for Wireshark.
		e.dec.ipoibDatagram(p, p.BTH.Payload)
	}
	// iWARP: TCP stream reassembly, MPA framing, DDP/RDMAP (iwarp.go).
	e.trackIWARP(p)
	e.classifyTCP(p)
	e.countPFC(p)
	e.trackUD(p)
	// IB/RoCE: Send reassembly and RDMA operations (reassembly.go).
	e.reassembleRoCE(p)
	if len(e.Conns.closing) > 0 {
		// The packet closed a connection: release its state (release.go).
		e.releaseClosed()
	}
	if c := p.Conn; c != nil && c.rel.unoriented {
		// Its roles are not settled: the packet goes on with no
		// direction, which a later swap would contradict (orient.go).
		p.Dir = DirUnknown
	}
	s := &e.Stats
	s.Packets++
	s.Bytes += uint64(p.Length)
	s.ByProto[Classify(p)]++
	s.ICRC[p.ICRC.Status]++
	s.VCRC[p.VCRC.Status]++
}

// Finish ends the input: TCP data still waiting for segments that never
// came is handed on past the gap (iWARP), the messages and RDMA operations
// still open are handed to the Observer as they are, and the transactions
// still open end. Run calls it when it returns; callers of Process call it
// after their last packet.
func (e *Engine) Finish() {
	e.finishIWARP()
	e.flushRoCE()
	e.finishSessions()
}

func durationSince(first, now int64) time.Duration { return time.Duration(now - first) }

// orienter asks the ULPs that are Orienters which side sent a packet
// (Orienter): the side those that tell agree on, SideUnknown when none
// tells or they disagree; nil when no ULP is an Orienter.
func orienter(ulps []ULP) func(op roce.OpCode, payload []byte) Side {
	var os []Orienter
	for _, u := range ulps {
		if o, ok := u.(Orienter); ok {
			os = append(os, o)
		}
	}
	if len(os) == 0 {
		return nil
	}
	return func(op roce.OpCode, payload []byte) Side {
		// In every request/response ULP on RDMA only the responder — the
		// server — initiates RDMA Read and Write (RFC 8166 section 3.4.3,
		// RFC 7145 sections 7.3.5-7.3.6, NVMe RDMA Transport "RDMA
		// Transport Protocol Operations", SRP's "the target port performs
		// all data transfers", [MS-SMB2] 3.3.5.12-3.3.5.13; check.Neutral's
		// model; each ULP's Sender cites its own):
		// the engine reads that itself, and asks the ULPs only of a packet
		// that starts a Send, where their own headers say the sender.
		switch {
		case op.IsWrite() || op.IsReadRequest():
			return SideServer
		case op.IsReadResponse():
			return SideClient
		case !op.IsSend() || !(op.IsFirst() || op.IsOnly()):
			return SideUnknown
		}
		// Every Orienter is asked: the packet tells only when those that
		// answer agree (a 16-octet Send is an NVMe/RDMA completion's, or
		// an SRP initiator's credit response: the ULPs that read it so
		// disagree, and a later packet will tell).
		told := SideUnknown
		for _, o := range os {
			switch s := o.Sender(op, payload); {
			case s == SideUnknown:
			case told == SideUnknown:
				told = s
			case s != told:
				return SideUnknown
			}
		}
		return told
	}
}
