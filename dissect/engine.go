package dissect

import (
	"errors"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect/source"
	"github.com/rdmashark/rdmashark/layers/roce"
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
	// MaxTransactions bounds the RPC transactions awaiting their Reply per
	// connection (default DefaultMaxTransactions); MaxRebuildBytes the chunk
	// data held to rebuild RPC messages, all transactions together (default
	// DefaultMaxRebuildBytes). See rpc.go.
	MaxTransactions int
	MaxRebuildBytes int
	// IdleTimeout, when positive, releases a connection that saw no
	// packet for that long in capture time (the packets' timestamps), as if
	// it had closed: Connection.Idle tells (release.go). 0: never.
	IdleTimeout time.Duration
	// MaxBufferedBytes bounds the payload bytes all reassembly buffers hold
	// together (default DefaultMaxBufferedBytes; see budget.go).
	MaxBufferedBytes int
	// Transaction, when set, receives every RPC transaction once it is over
	// (Reply processed, evicted, or the capture ended without a Reply). The
	// engine forgets it afterwards: copy what must be kept.
	Transaction func(*Transaction)
	// ULP decodes RPC procedure arguments and results (NFS); nil uses
	// DefaultULP.
	ULP ULPDecoder
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
	numProtos
)

var protoNames = [numProtos]string{"other", "ARP", "IPv4", "IPv6", "UDP", "TCP", "RoCEv2", "RoCEv1",
	"InfiniBand", "CNP", "MAD", "IB CM", "malformed", "MPA", "iWARP"}

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
	switch {
	case p.Err != nil && len(p.Decoded) == 0:
		return ProtoMalformed
	case p.CM.Attr != 0:
		return ProtoCM
	case p.Has(roce.LayerTypeMAD):
		return ProtoMAD
	case p.Has(roce.LayerTypeBTH) && p.BTH.OpCode.Transport() == roce.TransportCNP:
		return ProtoCNP
	case p.Encap == EncapRoCEv2 && p.Has(roce.LayerTypeBTH):
		return ProtoRoCEv2
	case p.Encap == EncapRoCEv1 && p.Has(roce.LayerTypeBTH):
		return ProtoRoCEv1
	case p.Encap == EncapIB && p.Has(roce.LayerTypeBTH):
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
	// tracking (reassembly.go); RPC the RPC-over-RDMA layer (rpc.go).
	Reassembly ReassemblyStats
	RPC        RPCCounters
	rxs        rxState
	rpcs       rpcState
	buf        bufBudget
	idle       idleClock
	frames     frameState // frame.time_delta, tcp.stream (frame_state.go)
}

// NewEngine returns an engine with opts, defaults filled in.
func NewEngine(opts Options) *Engine {
	if opts.RoCEPort == 0 {
		opts.RoCEPort = DefaultRoCEPort
	}
	e := &Engine{opts: opts, Conns: NewConnTable()}
	if opts.MaxConnections > 0 {
		e.Conns.Max = opts.MaxConnections
	}
	e.Conns.retired, e.Conns.forgotten = e.retired, e.forgotten
	e.dec.RoCEPort = opts.RoCEPort
	return e
}

// Run reads r to its end, handing each decoded packet to each (which may be
// nil). The Packet is reused: each must not keep it. Run stops at the first
// error of r or of each; r's errors name the file and the packet. Everything
// processed before an error stays in the engine's connections and stats.
func (e *Engine) Run(r *source.Reader, each func(*Packet) error) error {
	defer e.Finish()
	var first int64
	for {
		if e.opts.Count > 0 && e.Stats.Packets >= uint64(e.opts.Count) {
			return nil
		}
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var serr *source.Error
		if errors.As(err, &serr) && !serr.Final {
			// A damaged record whose neighbours are intact: note it and
			// go on with the next one.
			e.Stats.Skipped++
			if len(e.Warnings) < MaxWarnings {
				e.Warnings = append(e.Warnings, err)
			}
			continue
		}
		if err != nil {
			return err
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

// Process decodes one frame into p and tracks it. p's number, times,
// lengths and link type must be set.
func (e *Engine) Process(p *Packet, data []byte) {
	if e.opts.IdleTimeout > 0 {
		// Connections quiet for IdleTimeout before this packet go first.
		e.expireIdle(p.Timestamp)
	}
	e.dec.Decode(p, data)
	e.frames.note(p)
	e.Conns.Track(p)
	if c := p.Conn; c != nil && c.IPoIBCM() && p.BTH.OpCode.IsSend() && (p.BTH.OpCode.IsOnly() || p.BTH.OpCode.IsFirst()) {
		// IPoIB connected mode (RFC 4755) carries the same encapsulation
		// header as datagram mode, in RC Sends: only the connection's
		// service ID tells, as it does for Wireshark.
		e.dec.ipoibDatagram(p, p.BTH.Payload)
	}
	// iWARP: TCP stream reassembly, MPA framing, DDP/RDMAP (iwarp.go).
	e.trackIWARP(p)
	// IB/RoCE: Send reassembly and RDMA operations (reassembly.go).
	e.reassembleRoCE(p)
	if len(e.Conns.closing) > 0 {
		// The packet closed a connection: release its state (release.go).
		e.releaseClosed()
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
	e.finishRPC()
}

func durationSince(first, now int64) time.Duration { return time.Duration(now - first) }
