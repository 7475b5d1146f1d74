package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// Statistics in the spirit of tshark's -z, computed while the capture
// streams (`rdmashark stats`, docs/statistics.md): conversations per
// connection and per queue pair (conv), frames and bytes per interval
// (io,stat), findings by severity (expert), and service response times per
// upper-layer protocol and request name (srt: rpc,srt's figures, and
// NVMe's, SMB Direct's and iSER's the same way). Memory is bounded: each
// table has a limit and counts what it cut.

// StatsOptions says which statistics to gather.
type StatsOptions struct {
	Conv, IO, Expert, SRT bool
	// Interval is io,stat's interval (tshark's io,stat,INTERVAL).
	Interval time.Duration
}

// Bounds of the statistics' tables.
const (
	MaxStatsConnections = 1 << 16
	MaxStatsIntervals   = 1 << 20
	MaxStatsSRTNames    = 4096
)

// Stats is the document of `rdmashark stats --format json`. Its keys are
// a contract: later versions add keys and never rename these.
type Stats struct {
	File          string       `json:"file"`
	Packets       uint64       `json:"packets"`
	Bytes         uint64       `json:"bytes"`
	DurationS     float64      `json:"duration_seconds"`
	Conversations *ConvStats   `json:"conversations,omitempty"`
	IO            *IOStats     `json:"io,omitempty"`
	Expert        *ExpertStats `json:"expert,omitempty"`
	SRT           *SRTStats    `json:"srt,omitempty"`
	Errors        []string     `json:"errors,omitempty"`
	opts          StatsOptions
	first, last   time.Time
	conns         map[int]*convC
	// streams: packets of TCP streams outside a connection (an iWARP
	// connection's TCP handshake and teardown), by stream and source
	// port, joined to the connection of the same stream at the end.
	streams map[streamKey]*convDir
	srt     map[srtKey]*srtC
	ops     map[srtKey]*srtC
}

// ConvStats are the conversations: RDMA connections and, within each,
// the traffic to each queue pair.
type ConvStats struct {
	Connections []ConvConnection `json:"connections"`
	// Unattached counts the packets (and bytes) that belong to no RDMA
	// connection (ARP, ICMP, the MADs of a CM exchange that never
	// completed, TCP without MPA).
	Unattached ConvCount `json:"unattached"`
	// Cut counts packets of connections past MaxStatsConnections.
	Cut uint64 `json:"cut,omitempty"`
}

// ConvCount is packets and bytes (frame lengths on the wire).
type ConvCount struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// ConvConnection is one connection, as analyze numbers them.
type ConvConnection struct {
	ID        int    `json:"id"`
	Transport string `json:"transport"`
	ULP       string `json:"ulp,omitempty"`
	Client    string `json:"client"`
	Server    string `json:"server"`
	ConvCount
	StartS    float64 `json:"start_seconds"` // relative to the first packet
	DurationS float64 `json:"duration_seconds"`
	// BitsPerSecond is Bytes*8 over the duration (0 for one packet).
	BitsPerSecond float64 `json:"bits_per_second"`
	// QPs are the two directions: the traffic to each side's queue pair
	// ("qpn" null on iWARP, whose headers carry none).
	QPs []ConvQP `json:"qps"`
}

// ConvQP is the traffic one way: to the queue pair of Dst.
type ConvQP struct {
	Direction string  `json:"direction"` // "client-to-server" or "server-to-client"
	Dst       string  `json:"dst"`
	QPN       *uint32 `json:"qpn"`
	ConvCount
	StartS        float64 `json:"start_seconds"`
	DurationS     float64 `json:"duration_seconds"`
	BitsPerSecond float64 `json:"bits_per_second"`
}

type convDir struct {
	n           ConvCount
	first, last time.Time
}

type convC struct {
	out    ConvConnection
	c      *dissect.Connection
	dirs   [2]convDir
	all    convDir
	stream int // the TCP stream (iWARP), -1 without
}

type streamKey struct {
	stream  int
	srcPort uint16
}

// IOStats are tshark's io,stat: frames and bytes per interval from the
// first packet.
type IOStats struct {
	IntervalS float64      `json:"interval_seconds"`
	Intervals []IOInterval `json:"intervals"`
	// Cut counts packets past MaxStatsIntervals intervals.
	Cut uint64 `json:"cut,omitempty"`
}

// IOInterval is one interval.
type IOInterval struct {
	StartS        float64 `json:"start_seconds"`
	Frames        uint64  `json:"frames"`
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
}

// ExpertStats are the findings of `check` by severity, then rule: tshark's
// -z expert with rdmashark's rules for its expert infos.
type ExpertStats struct {
	Errors   []ExpertRule `json:"errors"`
	Warnings []ExpertRule `json:"warnings"`
	Infos    []ExpertRule `json:"infos"`
	// Omitted counts findings the check runner did not keep (its bounds).
	Omitted int `json:"omitted,omitempty"`
}

// ExpertRule is one rule's findings.
type ExpertRule struct {
	Rule    string `json:"rule"`
	ULP     string `json:"ulp,omitempty"`
	Count   int    `json:"count"`
	Summary string `json:"summary"`
}

// SRTStats are the service response times of every upper-layer protocol's
// exchanges: for RPC (rpcordma) tshark's rpc,srt per program, version and
// procedure; for NVMe per opcode name; for SMB Direct and iSER per command.
type SRTStats struct {
	Procedures []SRTRow `json:"procedures"`
	// Operations splits NFSv4 COMPOUNDs by their main operation (the
	// first value tshark shows as nfs.main_opcode: READ, WRITE, OPEN...),
	// Name holding it.
	Operations []SRTRow `json:"operations"`
	// NoResponse counts requests without a response in the capture (not
	// in the times).
	NoResponse uint64 `json:"no_response"`
	// Cut counts exchanges past MaxStatsSRTNames names.
	Cut uint64 `json:"cut,omitempty"`
	// Accuracy states how far the percentiles may be from the exact ones.
	Accuracy string `json:"percentile_accuracy"`
}

// SRTRow is one request name's response times, in seconds.
type SRTRow struct {
	ULP       string  `json:"ulp"`
	Program   string  `json:"program,omitempty"` // RPC: "NFS v3"
	Procedure *uint32 `json:"procedure,omitempty"`
	Name      string  `json:"name"`
	Count     uint64  `json:"count"`
	Min       float64 `json:"min"`
	Avg       float64 `json:"avg"`
	Max       float64 `json:"max"`
	Sum       float64 `json:"sum"`
	P50       float64 `json:"p50"`
	P99       float64 `json:"p99"`
}

type srtKey struct {
	ulp, prog, name string
	proc            uint32
	hasProc         bool
}

type srtC struct {
	key srtKey
	h   LatencyHist
}

// NewStats returns the statistics of one capture.
func NewStats(file string, o StatsOptions) *Stats {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	s := &Stats{File: file, opts: o, conns: map[int]*convC{}, srt: map[srtKey]*srtC{}, ops: map[srtKey]*srtC{}, streams: map[streamKey]*convDir{}}
	if o.Conv {
		s.Conversations = &ConvStats{Connections: []ConvConnection{}}
	}
	if o.IO {
		s.IO = &IOStats{IntervalS: o.Interval.Seconds(), Intervals: []IOInterval{}}
	}
	if o.SRT {
		s.SRT = &SRTStats{Procedures: []SRTRow{}, Operations: []SRTRow{}, Accuracy: "p50 and p99 within 3.2% of the exact sample's value (log-linear histogram, 16 buckets per power of two); count, min, avg, max and sum exact"}
	}
	return s
}

// Packet counts one packet (engine.Run's per-packet callback).
func (s *Stats) Packet(p *dissect.Packet) {
	s.Packets++
	n := uint64(p.Length)
	s.Bytes += n
	if s.Packets == 1 {
		s.first = p.Timestamp
	}
	s.last = p.Timestamp
	if s.IO != nil {
		i := p.RelTime / s.opts.Interval
		if p.RelTime < 0 {
			i = 0
		}
		if i >= MaxStatsIntervals {
			s.IO.Cut++
		} else {
			for int64(len(s.IO.Intervals)) <= int64(i) {
				k := len(s.IO.Intervals)
				s.IO.Intervals = append(s.IO.Intervals, IOInterval{StartS: (time.Duration(k) * s.opts.Interval).Seconds()})
			}
			iv := &s.IO.Intervals[i]
			iv.Frames++
			iv.Bytes += n
		}
	}
	if s.Conversations == nil {
		return
	}
	c := p.Conn
	if c == nil {
		s.Conversations.Unattached.Packets++
		s.Conversations.Unattached.Bytes += n
		if p.TCPStream >= 0 {
			k := streamKey{p.TCPStream, uint16(p.TCP.SrcPort)}
			d := s.streams[k]
			if d == nil && len(s.streams) < MaxStatsConnections {
				d = &convDir{}
				s.streams[k] = d
			}
			if d != nil {
				d.add(p.Timestamp, n)
			}
		}
		return
	}
	cc := s.conns[c.ID]
	if cc == nil {
		if len(s.conns) >= MaxStatsConnections {
			s.Conversations.Cut++
			return
		}
		cc = &convC{c: c, out: ConvConnection{ID: c.ID}, stream: -1}
		s.conns[c.ID] = cc
	}
	cc.c = c
	if c.Transport == dissect.TransportIWARP && p.TCPStream >= 0 {
		cc.stream = p.TCPStream
	}
	cc.all.add(p.Timestamp, n)
	if p.Dir != dissect.DirUnknown { // (unknown: roles not settled yet, dissect/orient.go)
		cc.dirs[p.Dir.Index()].add(p.Timestamp, n)
	}
}

// merge adds o's counts to d.
func (d *convDir) merge(o *convDir) {
	if o.n.Packets == 0 {
		return
	}
	if d.n.Packets == 0 || o.first.Before(d.first) {
		d.first = o.first
	}
	if d.n.Packets == 0 || o.last.After(d.last) {
		d.last = o.last
	}
	d.n.Packets += o.n.Packets
	d.n.Bytes += o.n.Bytes
}

func (d *convDir) add(t time.Time, n uint64) {
	if d.n.Packets == 0 {
		d.first = t
	}
	d.last = t
	d.n.Packets++
	d.n.Bytes += n
}

// Exchange counts one ended exchange (dissect.Options.Exchange).
func (s *Stats) Exchange(x *dissect.Exchange) {
	if s.SRT == nil {
		return
	}
	if x.Outcome != dissect.Responded || x.RequestPacket == 0 {
		if x.Outcome == dissect.NoResponse || x.Outcome == dissect.Evicted {
			s.SRT.NoResponse++
		}
		return
	}
	k := srtKey{ulp: x.ULP, name: x.Name}
	n, ok := ulpSRT(x)
	if ok {
		k.prog = n.Program
		k.proc, k.hasProc = n.Procedure, true
	}
	s.srtAdd(s.srt, k, x.Latency)
	if ok && n.Operation != "" {
		s.srtAdd(s.ops, srtKey{ulp: x.ULP, prog: k.prog, name: n.Operation}, x.Latency)
	}
}

func (s *Stats) srtAdd(m map[srtKey]*srtC, k srtKey, d time.Duration) {
	e := m[k]
	if e == nil {
		if len(s.srt)+len(s.ops) >= MaxStatsSRTNames {
			s.SRT.Cut++
			return
		}
		e = &srtC{key: k}
		m[k] = e
	}
	e.h.Add(d)
}

// AddFindings fills expert from a check result.
func (s *Stats) AddFindings(res *check.Result) {
	if !s.opts.Expert || res == nil {
		return
	}
	type k struct {
		rule string
		sev  check.Severity
	}
	counts := map[k]int{}
	var order []k
	for _, f := range res.Findings {
		kk := k{f.Rule, f.Severity}
		if counts[kk] == 0 {
			order = append(order, kk)
		}
		counts[kk]++
	}
	ex := &ExpertStats{Errors: []ExpertRule{}, Warnings: []ExpertRule{}, Infos: []ExpertRule{}, Omitted: res.Omitted}
	for _, kk := range order {
		r := ExpertRule{Rule: kk.rule, Count: counts[kk]}
		if rule, ok := check.Lookup(kk.rule); ok {
			r.ULP, r.Summary = rule.ULP, rule.Summary
		}
		switch kk.sev {
		case check.Error:
			ex.Errors = append(ex.Errors, r)
		case check.Warning:
			ex.Warnings = append(ex.Warnings, r)
		default:
			ex.Infos = append(ex.Infos, r)
		}
	}
	for _, l := range [][]ExpertRule{ex.Errors, ex.Warnings, ex.Infos} {
		sort.SliceStable(l, func(i, j int) bool {
			if l[i].Count != l[j].Count {
				return l[i].Count > l[j].Count
			}
			return l[i].Rule < l[j].Rule
		})
	}
	s.Expert = ex
}

// Finish turns the counters into the document's tables.
func (s *Stats) Finish() {
	if s.Packets > 0 {
		s.DurationS = s.last.Sub(s.first).Seconds()
	}
	if s.IO != nil {
		for i := range s.IO.Intervals {
			iv := &s.IO.Intervals[i]
			iv.BitsPerSecond = float64(iv.Bytes*8) / s.IO.IntervalS
		}
	}
	if s.Conversations != nil {
		ids := make([]int, 0, len(s.conns))
		for id := range s.conns {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		s.Conversations.Connections = s.Conversations.Connections[:0]
		for _, id := range ids {
			cc := s.conns[id]
			out := cc.out
			c := cc.c
			// An iWARP connection is its TCP connection, as tshark's
			// conv,tcp counts it: its packets before MPA and after
			// the last FPDU too.
			for d := 0; d < 2 && cc.stream >= 0; d++ {
				port := c.Client.Port
				if d == 1 {
					port = c.Server.Port
				}
				if o := s.streams[streamKey{cc.stream, port}]; o != nil {
					cc.dirs[d].merge(o)
					cc.all.merge(o)
					s.Conversations.Unattached.Packets -= o.n.Packets
					s.Conversations.Unattached.Bytes -= o.n.Bytes
					delete(s.streams, streamKey{cc.stream, port})
				}
			}
			out.Transport, out.ULP = c.Transport.String(), c.ULP
			out.Client, out.Server = statsEndpoint(&c.Client), statsEndpoint(&c.Server)
			out.ConvCount = cc.all.n
			out.StartS, out.DurationS, out.BitsPerSecond = s.span(&cc.all)
			out.QPs = []ConvQP{}
			for d := 0; d < 2; d++ {
				cd := &cc.dirs[d]
				dst := &c.Server
				dir := "client-to-server"
				if d == 1 {
					dst, dir = &c.Client, "server-to-client"
				}
				q := ConvQP{Direction: dir, Dst: statsEndpoint(dst), ConvCount: cd.n}
				if c.Transport != dissect.TransportIWARP {
					n := dst.QPN
					q.QPN = &n
				}
				q.StartS, q.DurationS, q.BitsPerSecond = s.span(cd)
				out.QPs = append(out.QPs, q)
			}
			s.Conversations.Connections = append(s.Conversations.Connections, out)
		}
	}
	if s.SRT != nil {
		s.SRT.Procedures = srtRows(s.srt)
		s.SRT.Operations = srtRows(s.ops)
	}
}

// srtRows are the rows of m, by ULP, program, procedure and name.
func srtRows(m map[srtKey]*srtC) []SRTRow {
	{
		rows := make([]SRTRow, 0, len(m))
		for _, e := range m {
			h := &e.h
			r := SRTRow{ULP: e.key.ulp, Program: e.key.prog, Name: e.key.name, Count: h.Count,
				Min: h.Min.Seconds(), Avg: h.Mean().Seconds(), Max: h.Max.Seconds(), Sum: h.Sum.Seconds(),
				P50: h.Percentile(50).Seconds(), P99: h.Percentile(99).Seconds()}
			if e.key.hasProc {
				p := e.key.proc
				r.Procedure = &p
			}
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool {
			a, b := &rows[i], &rows[j]
			if a.ULP != b.ULP {
				return a.ULP < b.ULP
			}
			if a.Program != b.Program {
				return a.Program < b.Program
			}
			if (a.Procedure == nil) != (b.Procedure == nil) {
				return a.Procedure != nil
			}
			if a.Procedure != nil && *a.Procedure != *b.Procedure {
				return *a.Procedure < *b.Procedure
			}
			return a.Name < b.Name
		})
		return rows
	}
}

// span is a direction's start (from the first packet), duration and rate.
func (s *Stats) span(d *convDir) (start, dur, bps float64) {
	if d.n.Packets == 0 {
		return 0, 0, 0
	}
	start = d.first.Sub(s.first).Seconds()
	dur = d.last.Sub(d.first).Seconds()
	if dur > 0 {
		bps = float64(d.n.Bytes*8) / dur
	}
	return start, dur, bps
}

// statsEndpoint is "address:port" (iWARP) or "address QP 0x..." (RoCE),
// as analyze prints endpoints.
func statsEndpoint(e *dissect.Endpoint) string {
	if e.Port != 0 {
		return dissect.HostPort(e.Address, e.Port)
	}
	return fmt.Sprintf("%s QP 0x%06x", e.Address, e.QPN)
}
