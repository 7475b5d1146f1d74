package diff

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/nvme"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
	"github.com/rdmashark/rdmashark/smbdirect"
)

// Kind says how a behaviour metric is compared (Tolerances).
type Kind string

const (
	// KindCount: a count or a byte total, a change when it moves by
	// more than the count tolerance.
	KindCount Kind = "count"
	// KindExact: a value that any difference changes (credits, the
	// largest queue depth, a maximum size).
	KindExact Kind = "exact"
	// KindLatencyP50 and KindLatencyP99: latency quantiles in
	// nanoseconds, each with its own relative tolerance, compared only
	// with enough samples on both sides.
	KindLatencyP50 Kind = "latency_p50"
	KindLatencyP99 Kind = "latency_p99"
	// KindLatencyDist: the latencies of an exchange name as a whole
	// (Bins), compared by a Mann-Whitney U test and the Hodges-Lehmann
	// shift (docs/diff.md); Value is the number of latencies.
	KindLatencyDist Kind = "latency_distribution"
	// KindSizeDist: a size histogram (RDMA operation sizes, TCP segment
	// sizes, packets per Send) as a whole, Bins keyed by the bucket's
	// index; compared by a Mann-Whitney U test and its rank-biserial
	// effect. Value is the count.
	KindSizeDist Kind = "size_distribution"
)

// Field is one negotiated value, as text (compared exactly).
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Metric is one behaviour figure.
type Metric struct {
	Name  string  `json:"name"`
	Kind  Kind    `json:"kind"`
	Value float64 `json:"value"`
	// Samples is, for a latency quantile, the number of latencies it was
	// taken from.
	Samples uint64 `json:"samples,omitempty"`
	// Bins is, for the latency metrics, the latencies' Sketch bins, and
	// for a size distribution its buckets' counts: what the significance
	// tests read.
	Bins []Bin `json:"bins,omitempty"`
	// Family is, for the count of one bucket of a size histogram, the
	// name of the histogram's KindSizeDist metric: a bucket's count that
	// moves is a change only when the histogram's distribution or total
	// did.
	Family string `json:"family,omitempty"`
}

// Conn is one connection's profile.
type Conn struct {
	// Role is how the connection is matched with the other capture's:
	// transport, ULP ("-" for none), service port and its ordinal among
	// the capture's connections of that transport, ULP and port, in the
	// order they were set up (first packet).
	Role        string `json:"role"`
	ID          int    `json:"id"`
	Transport   string `json:"transport"`
	ULP         string `json:"ulp"`
	ServicePort uint16 `json:"service_port"`
	// Queue is, for NVMe/RDMA, the queue the connection carries ("qid
	// 0" the admin queue) from its CM REQ private data: part of its role,
	// so that an I/O queue is never matched with an admin queue when
	// the captures set up their queues in another order.
	Queue       string  `json:"queue,omitempty"`
	Ordinal     int     `json:"ordinal"`
	FirstPacket int     `json:"first_packet"`
	Negotiation []Field `json:"negotiation"`
	// Behaviour is the connection's health, segmentation, RDMA operation
	// sizes and, for RPC-over-RDMA, its message kinds and credits.
	Behaviour []Metric `json:"behaviour"`
}

// Exchanges is what the exchanges of one name did, every connection of
// the capture together.
type Exchanges struct {
	ULP     string   `json:"ulp"`
	Name    string   `json:"name"`
	Metrics []Metric `json:"metrics"`
}

// Profile is one capture reduced to what Compare compares.
type Profile struct {
	File        string      `json:"file"`
	Packets     uint64      `json:"packets"`
	Connections []Conn      `json:"connections"`
	Exchanges   []Exchanges `json:"exchanges"`
	// Findings counts the findings of each rule that found something.
	Findings map[string]int `json:"findings"`
	// NamesCut counts exchanges counted under "(other names)" past
	// MaxExchangeNames distinct names.
	NamesCut uint64 `json:"names_cut,omitempty"`
	// ConnectionsCut counts the connections released past
	// MaxConnections profiles, not profiled.
	ConnectionsCut uint64 `json:"connections_cut,omitempty"`
}

// MaxExchangeNames bounds the distinct exchange names a profile keeps.
const MaxExchangeNames = 512

// MaxConnections bounds the connections a profile keeps (a few KiB
// each): past it, the connections released are counted, not profiled.
const MaxConnections = 16384

// size buckets: upper bounds (inclusive) of RDMA operation, TCP segment
// and message sizes; past the last, "larger".
var sizeBounds = []uint64{4, 64, 512, 1024, 2048, 4096, 8192, 65536, 1 << 20}

func sizeBucket(n uint64) int { return bucketOf(sizeBounds, n) }

// bucketOf is the index of the first of bounds (ascending, inclusive upper
// bounds) that n does not exceed; len(bounds) past the last.
func bucketOf[T cmp.Ordered](bounds []T, n T) int {
	for i, b := range bounds {
		if n <= b {
			return i
		}
	}
	return len(bounds)
}

func sizeLabel(i int) string {
	lo := uint64(1)
	if i > 0 {
		lo = sizeBounds[i-1] + 1
	}
	if i == len(sizeBounds) {
		return ">" + humanSize(sizeBounds[i-1])
	}
	return humanSize(lo) + "-" + humanSize(sizeBounds[i])
}

func humanSize(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatUint(n>>20, 10) + "M"
	case n >= 1024 && n%1024 == 0:
		return strconv.FormatUint(n>>10, 10) + "K"
	}
	return strconv.FormatUint(n, 10)
}

// packets per message buckets: 1, 2, 3-4, 5-8, 9-16, 17+.
var pktBounds = []int{1, 2, 4, 8, 16}

func pktBucket(n int) int { return bucketOf(pktBounds, n) }

func pktLabel(i int) string {
	switch {
	case i == 0:
		return "1"
	case i == len(pktBounds):
		return ">" + strconv.Itoa(pktBounds[i-1])
	case pktBounds[i-1]+1 == pktBounds[i]:
		return strconv.Itoa(pktBounds[i])
	}
	return strconv.Itoa(pktBounds[i-1]+1) + "-" + strconv.Itoa(pktBounds[i])
}

var dirNames = [2]string{"c2s", "s2c"}

// connState is what the Collector gathers of a live connection besides
// what the engine keeps in it.
type connState struct {
	req            roce.CMREQ
	repl           roce.CMREP
	hasREQ, hasREP bool
	msgPkts        [2][6]uint64
	msgs           [2]uint64
	tcpSegs        [2][10]uint64
	tcpCRC         [2]uint64 // segments of exactly 4 octets
	ops            [2][2][10]uint64
	opBytes        [2][2]uint64
	// SMB Direct's negotiation: the first message each way.
	smbReq                smbdirect.NegotiateRequest
	smbResp               smbdirect.NegotiateResponse
	hasSMBReq, hasSMBResp bool
	// iSER on iWARP: the Hello and HelloReply; and the iSCSI Login
	// keys each way (the last value of a key, at most maxLoginKeys).
	hello    [2]iscsi.Hello
	hasHello [2]bool
	login    [2][]Field
}

// maxLoginKeys bounds the iSCSI Login keys kept per direction.
const maxLoginKeys = 64

// Names of the ULPs whose negotiation diff decodes (the plug-ins' names,
// which diff may not import).
const (
	ulpSMBDirect = "smb_direct"
	ulpISER      = "iser"
	ulpNVMe      = "nvme-rdma"
)

type exchState struct {
	count, responded, notOK, readBytes, writeBytes uint64
	withRead, withWrite, invalidated               uint64
	readChunk, longCall, writeChunk, replyChunk    uint64
	longReply, oneHandle, multiHandle              uint64
	latency                                        Sketch
}

type exchKey struct{ ulp, name string }

// Collector builds a Profile in the engine's one pass: make it the
// engine's Observer (behind a check.Runner, as Config.Next), hand it
// every exchange (Options.Exchange) and every packet (Packet), then call
// Profile. What it keeps grows with the connections and the distinct
// exchange names, never with the packets.
type Collector struct {
	file    string
	live    map[*dissect.Connection]*connState
	done    []Conn
	exch    map[exchKey]*exchState
	cut     uint64
	connCut uint64
	other   *exchState
}

// NewCollector returns a Collector for the capture named file.
func NewCollector(file string) *Collector {
	return &Collector{file: file, live: map[*dissect.Connection]*connState{}, exch: map[exchKey]*exchState{}}
}

func (c *Collector) state(conn *dissect.Connection) *connState {
	s := c.live[conn]
	if s == nil {
		s = &connState{}
		c.live[conn] = s
	}
	return s
}

// Packet takes what a profile needs of one packet: the CM REQ and REP
// fields and iWARP's TCP segment sizes.
func (c *Collector) Packet(p *dissect.Packet) error {
	conn := p.Conn
	if conn == nil || conn.Released() {
		return nil
	}
	switch p.CM.Attr {
	case roce.LayerTypeCMREQ:
		s := c.state(conn)
		if !s.hasREQ {
			s.req, s.hasREQ = p.CM.REQ, true
			s.req.PrivateData, s.req.Contents, s.req.Payload = nil, nil, nil
		}
	case roce.LayerTypeCMREP:
		s := c.state(conn)
		if !s.hasREP {
			s.repl, s.hasREP = p.CM.REP, true
			s.repl.PrivateData, s.repl.Contents, s.repl.Payload = nil, nil, nil
		}
	}
	if conn.Transport == dissect.TransportIWARP && p.Dir != dissect.DirUnknown && p.Has(layers.LayerTypeTCP) && len(p.TCP.Payload) > 0 {
		s := c.state(conn)
		d := p.Dir.Index()
		n := uint64(len(p.TCP.Payload))
		s.tcpSegs[d][sizeBucket(n)]++
		if n == 4 {
			s.tcpCRC[d]++
		}
	}
	return nil
}

// Message counts a reassembled Send's packets.
func (c *Collector) Message(m *dissect.Message) {
	if m.Conn == nil || m.Dir == dissect.DirUnknown {
		return
	}
	s := c.state(m.Conn)
	d := m.Dir.Index()
	s.msgs[d]++
	s.msgPkts[d][pktBucket(len(m.Packets))]++
	switch m.Conn.ULP {
	case ulpSMBDirect:
		// [MS-SMBD] 3.1.5.2, 3.1.5.6: the first message each way is
		// the Negotiate Request, the Negotiate Response.
		if s.msgs[d] != 1 {
			break
		}
		if d == 0 && smbdirect.LooksLikeNegotiateRequest(m.Data) {
			s.hasSMBReq = s.smbReq.DecodeFromBytes(m.Data) == nil
		} else if d == 1 && len(m.Data) == smbdirect.NegotiateResponseLen {
			s.hasSMBResp = s.smbResp.DecodeFromBytes(m.Data) == nil
		}
	case ulpISER:
		c.iserMessage(s, d, m.Data)
	}
}

// iserMessage keeps an iSER Hello or HelloReply (RFC 7145 section 5.1.4,
// iWARP only) and the keys of iSCSI Login Requests and Responses (RFC
// 7143 section 11.12-11.13, RFC 7145 section 6).
func (c *Collector) iserMessage(s *connState, d int, data []byte) {
	var msg iscsi.Message
	err := msg.DecodeFromBytes(data)
	if msg.ISER.Opcode == iscsi.ISERHello || msg.ISER.Opcode == iscsi.ISERHelloReply {
		if err == nil && !s.hasHello[d] {
			s.hello[d], s.hasHello[d] = msg.Hello, true
		}
		return
	}
	if err != nil || msg.ISER.Opcode != iscsi.ISERControl {
		return
	}
	if (d == 0 && msg.PDU.Opcode != iscsi.OpLogin) || (d == 1 && msg.PDU.Opcode != iscsi.OpLoginResp) {
		return
	}
	kv := iscsi.KeyValues(msg.PDU.Data)
	for k, v, rest, ok := kv.Next(); ok; k, v, rest, ok = rest.Next() {
		// CHAP's challenges and responses change with every login.
		if strings.HasPrefix(string(k), "CHAP_") {
			continue
		}
		i := 0
		for i < len(s.login[d]) && s.login[d][i].Name != string(k) {
			i++
		}
		switch {
		case i < len(s.login[d]):
			s.login[d][i].Value = string(v)
		case len(s.login[d]) < maxLoginKeys:
			s.login[d] = append(s.login[d], Field{string(k), string(v)})
		}
	}
}

// RDMAOp counts an RDMA Read or Write by its size.
func (c *Collector) RDMAOp(op *dissect.RDMAOp) {
	if op.Conn == nil || op.Dir == dissect.DirUnknown || (op.Kind != dissect.RDMARead && op.Kind != dissect.RDMAWrite) {
		return
	}
	s := c.state(op.Conn)
	k := 0
	if op.Kind == dissect.RDMAWrite {
		k = 1
	}
	s.ops[k][op.Dir.Index()][sizeBucket(uint64(op.Length))]++
	s.opBytes[k][op.Dir.Index()] += uint64(op.Length)
}

// ConnectionDone profiles a released connection at once, so that the
// engine may forget it (Options.ForgetReleased).
func (c *Collector) ConnectionDone(conn *dissect.Connection) {
	if len(c.done) < MaxConnections {
		c.done = append(c.done, c.conn(conn))
	} else {
		c.connCut++
	}
	delete(c.live, conn)
}

// ExchangeName is the name an exchange is counted under: its Name, or
// the finer name its ULP gives it (ULP.ExchangeName: for an NFSv4
// COMPOUND, its operations, "COMPOUND SEQUENCE,PUTFH,GETATTR").
func ExchangeName(x *dissect.Exchange) string {
	for i := range ulps {
		if f := ulps[i].ExchangeName; f != nil {
			if n, ok := f(x); ok {
				return n
			}
		}
	}
	return x.Name
}

// Exchange counts one exchange under its name.
func (c *Collector) Exchange(x *dissect.Exchange) {
	k := exchKey{x.ULP, ExchangeName(x)}
	e := c.exch[k]
	if e == nil {
		if len(c.exch) >= MaxExchangeNames {
			c.cut++
			if c.other == nil {
				c.other = &exchState{}
			}
			e = c.other
		} else {
			e = &exchState{}
			c.exch[k] = e
		}
	}
	e.count++
	if x.Outcome == dissect.Responded {
		e.responded++
		if !x.OK {
			e.notOK++
		}
		if x.Latency > 0 {
			e.latency.Add(float64(x.Latency))
		}
	}
	e.readBytes += x.ReadBytes
	e.writeBytes += x.WriteBytes
	if x.ReadBytes > 0 {
		e.withRead++
	}
	if x.WriteBytes > 0 {
		e.withWrite++
	}
	if x.Invalidated {
		e.invalidated++
	}
	for i := range ulps {
		f := ulps[i].Chunks
		if f == nil {
			continue
		}
		if ch, ok := f(x); ok {
			e.readChunk += b2u(ch.ReadChunk)
			e.longCall += b2u(ch.LongCall)
			e.writeChunk += b2u(ch.WriteChunk)
			e.replyChunk += b2u(ch.ReplyChunk)
			e.longReply += b2u(ch.LongReply)
			e.oneHandle += b2u(ch.OneHandle)
			e.multiHandle += b2u(ch.MultiHandle)
			break
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Profile finishes the profile: the connections still live (conns, the
// engine's table at the end), the checks' result (nil: none) and the
// number of packets read.
func (c *Collector) Profile(conns []*dissect.Connection, res *check.Result, packets uint64) *Profile {
	p := &Profile{File: c.file, Packets: packets, Findings: map[string]int{}, NamesCut: c.cut, ConnectionsCut: c.connCut}
	all := append([]Conn(nil), c.done...)
	for _, conn := range conns {
		if !conn.Released() {
			all = append(all, c.conn(conn))
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].FirstPacket != all[j].FirstPacket {
			return all[i].FirstPacket < all[j].FirstPacket
		}
		return all[i].ID < all[j].ID
	})
	seen := map[string]int{}
	for i := range all {
		k := all[i].Transport + " " + all[i].ULP + " :" + strconv.Itoa(int(all[i].ServicePort))
		if all[i].Queue != "" {
			k += " " + all[i].Queue
		}
		seen[k]++
		all[i].Ordinal = seen[k]
		all[i].Role = k + " #" + strconv.Itoa(seen[k])
	}
	p.Connections = all
	for k, e := range c.exch {
		p.Exchanges = append(p.Exchanges, Exchanges{ULP: k.ulp, Name: k.name, Metrics: e.metrics()})
	}
	if c.other != nil {
		p.Exchanges = append(p.Exchanges, Exchanges{ULP: "*", Name: "(other names)", Metrics: c.other.metrics()})
	}
	sort.Slice(p.Exchanges, func(i, j int) bool {
		a, b := p.Exchanges[i], p.Exchanges[j]
		if a.ULP != b.ULP {
			return a.ULP < b.ULP
		}
		return a.Name < b.Name
	})
	if res != nil {
		for _, cr := range res.Connections {
			for _, ch := range cr.Checks {
				if ch.Findings > 0 {
					p.Findings[ch.Rule] += ch.Findings
				}
			}
		}
		for _, ch := range res.ForgottenChecks {
			if ch.Findings > 0 {
				p.Findings[ch.Rule] += ch.Findings
			}
		}
	}
	return p
}

func (e *exchState) metrics() []Metric {
	m := []Metric{
		{Name: "count", Kind: KindCount, Value: float64(e.count)},
		{Name: "responded", Kind: KindCount, Value: float64(e.responded)},
		{Name: "not ok", Kind: KindCount, Value: float64(e.notOK)},
		{Name: "RDMA Read bytes", Kind: KindCount, Value: float64(e.readBytes)},
		{Name: "RDMA Write bytes", Kind: KindCount, Value: float64(e.writeBytes)},
		{Name: "with RDMA Read", Kind: KindCount, Value: float64(e.withRead)},
		{Name: "with RDMA Write", Kind: KindCount, Value: float64(e.withWrite)},
		{Name: "response With Invalidate", Kind: KindCount, Value: float64(e.invalidated)},
		{Name: "call read chunk", Kind: KindCount, Value: float64(e.readChunk)},
		{Name: "call position-zero read chunk", Kind: KindCount, Value: float64(e.longCall)},
		{Name: "call write chunk", Kind: KindCount, Value: float64(e.writeChunk)},
		{Name: "call reply chunk", Kind: KindCount, Value: float64(e.replyChunk)},
		{Name: "long reply (RDMA_NOMSG)", Kind: KindCount, Value: float64(e.longReply)},
		{Name: "call chunks of one handle", Kind: KindCount, Value: float64(e.oneHandle)},
		{Name: "call chunks of several handles", Kind: KindCount, Value: float64(e.multiHandle)},
	}
	n := e.latency.N()
	bins := e.latency.Bins()
	m = append(m,
		Metric{Name: "latency distribution", Kind: KindLatencyDist, Value: float64(n), Samples: n, Bins: bins},
		Metric{Name: "latency p50", Kind: KindLatencyP50, Value: e.latency.Quantile(0.5), Samples: n, Bins: bins},
		Metric{Name: "latency p99", Kind: KindLatencyP99, Value: e.latency.Quantile(0.99), Samples: n, Bins: bins})
	return m
}

// conn profiles one connection.
func (c *Collector) conn(conn *dissect.Connection) Conn {
	s := c.live[conn]
	if s == nil {
		s = &connState{}
	}
	ulp := conn.ULP
	if ulp == "" {
		ulp = "-"
	}
	out := Conn{ID: conn.ID, Transport: conn.Transport.String(), ULP: ulp, ServicePort: conn.ServicePort,
		FirstPacket: conn.FirstPacket}
	neg := func(name string, v any) { out.Negotiation = append(out.Negotiation, Field{name, fmt.Sprint(v)}) }
	neg("state", conn.State)
	if conn.RejectReason != "" {
		neg("reject reason", conn.RejectReason)
	}
	if s.hasREQ {
		r := &s.req
		neg("cm.req.vendor_id", fmt.Sprintf("0x%06x", r.VendorID))
		neg("cm.req.service_id", fmt.Sprintf("0x%016x", r.ServiceID))
		neg("cm.req.responder_resources", r.ResponderResources)
		neg("cm.req.initiator_depth", r.InitiatorDepth)
		neg("cm.req.remote_cm_response_timeout", cmTimeout(r.RemoteCMResponseTimeout))
		neg("cm.req.transport_service_type", r.TransportServiceType)
		neg("cm.req.end_to_end_flow_control", r.EndToEndFlowControl)
		neg("cm.req.local_cm_response_timeout", cmTimeout(r.LocalCMResponseTimeout))
		neg("cm.req.retry_count", r.RetryCount)
		neg("cm.req.partition_key", fmt.Sprintf("0x%04x", r.PartitionKey))
		neg("cm.req.path_mtu", r.PathPacketPayloadMTU)
		neg("cm.req.rdc_exists", r.RDCExists)
		neg("cm.req.rnr_retry_count", r.RNRRetryCount)
		neg("cm.req.max_cm_retries", r.MaxCMRetries)
		neg("cm.req.srq", r.SRQ)
		neg("cm.req.extended_transport_type", r.ExtendedTransportType)
		neg("cm.req.primary.packet_rate", r.PrimaryPath.PacketRate)
		neg("cm.req.primary.traffic_class", r.PrimaryPath.TrafficClass)
		neg("cm.req.primary.hop_limit", r.PrimaryPath.HopLimit)
		neg("cm.req.primary.sl", r.PrimaryPath.SL)
		neg("cm.req.primary.subnet_local", r.PrimaryPath.SubnetLocal)
		neg("cm.req.primary.local_ack_timeout", ackTimeout(r.PrimaryPath.LocalACKTimeout))
		if r.AlternatePath != (roce.CMPath{}) {
			neg("cm.req.alternate.packet_rate", r.AlternatePath.PacketRate)
			neg("cm.req.alternate.local_ack_timeout", ackTimeout(r.AlternatePath.LocalACKTimeout))
		}
		neg("cm.req.sap_supported", r.SAPSupported)
	}
	if s.hasREP {
		r := &s.repl
		neg("cm.rep.vendor_id", fmt.Sprintf("0x%06x", r.VendorID))
		neg("cm.rep.responder_resources", r.ResponderResources)
		neg("cm.rep.initiator_depth", r.InitiatorDepth)
		neg("cm.rep.target_ack_delay", cmTimeout(r.TargetACKDelay))
		neg("cm.rep.failover_accepted", r.FailoverAccepted)
		neg("cm.rep.end_to_end_flow_control", r.EndToEndFlowControl)
		neg("cm.rep.rnr_retry_count", r.RNRRetryCount)
		neg("cm.rep.srq", r.SRQ)
	}
	if iw := conn.IWARP; iw != nil {
		for d, side := range [2]string{"mpa.request", "mpa.reply"} {
			m := &iw.MPA[d]
			if !m.Seen {
				continue
			}
			neg(side+".revision", m.Revision)
			neg(side+".markers", m.Markers)
			neg(side+".crc", m.CRC)
			neg(side+".rejected", m.Rejected)
			neg(side+".enhanced", m.Enhanced)
			if m.HasIRDORD {
				neg(side+".ird", m.IRD)
				neg(side+".ord", m.ORD)
				neg(side+".peer_to_peer", m.PeerToPeer)
				neg(side+".rtr", rtr(m.RTRSend, m.RTRWrite, m.RTRRead))
			}
		}
		if iw.Negotiated {
			for d := range 2 {
				neg("mpa.framing."+dirNames[d], fmt.Sprintf("markers=%v crc=%v", iw.Framing[d].Markers, iw.Framing[d].CRC))
			}
		}
	}
	for d, side := range [2]string{"pd.client", "pd.server"} {
		pd := &conn.PrivateData[d]
		if !pd.Seen {
			continue
		}
		cons := pd.Consumer()
		neg(side+".consumer_length", len(trimZeros(cons)))
		neg(side+".consumer_bytes", hex.EncodeToString(trimZeros(cons)))
		sum := rfc8797.Summarize(pd.Seen, pd.Packet, pd.Bytes, pd.Framing)
		if sum.Present {
			neg(side+".rfc8797.version", sum.Version)
			neg(side+".rfc8797.remote_invalidate", sum.RemoteInvalidate)
			neg(side+".rfc8797.send_size", sum.SendSize)
			neg(side+".rfc8797.receive_size", sum.ReceiveSize)
		} else if sum.Found {
			neg(side+".rfc8797", sum.Note)
		}
		switch conn.ULP {
		case ulpNVMe:
			nvmePD(neg, side, d, cons)
			var r nvme.CMRequest
			if d == 0 && r.DecodeFromBytes(cons) == nil {
				out.Queue = "qid " + strconv.Itoa(int(r.QID))
			}
		case ulpISER:
			// RFC 7145 section 5.1.3: the iSER CM REQ message; Linux's
			// isert answers with the same layout in the REP.
			var r iscsi.CMPrivateData
			if len(trimZeros(cons)) > 0 && r.DecodeFromBytes(cons) == nil {
				neg(side+".iser.flags", fmt.Sprintf("0x%02x", r.Flags))
				neg(side+".iser.zbva_not_supported", r.ZBVANotSupported())
				neg(side+".iser.send_with_invalidate", r.SendWithInvalidate())
			}
		case ulpSRP:
			srpPD(neg, side, d, conn, cons)
		}
	}
	if pd, _ := conn.RejectPrivateData(); pd != nil && conn.ULP == ulpSRP && pd != &conn.PrivateData[1] {
		srpReject(neg, "pd.reject", pd.Consumer())
	}
	ulpNegotiation(neg, conn.ULP, s)
	if conn.Negotiated {
		th := rfc8797.NegotiateFramed(conn.PrivateData[0].Bytes, conn.PrivateData[0].Framing, conn.PrivateData[1].Bytes, conn.PrivateData[1].Framing)
		neg("inline.client_to_server", th.ClientToServer)
		neg("inline.server_to_client", th.ServerToClient)
		neg("remote_invalidation", th.RemoteInvalidation)
	}

	// Only what is not zero is kept (Compare reads a missing count as
	// 0): most of a connection's figures are, and a profile is kept for
	// every connection to the end.
	met := func(name string, k Kind, v uint64) {
		if v != 0 {
			out.Behaviour = append(out.Behaviour, Metric{Name: name, Kind: k, Value: float64(v)})
		}
	}
	// A size histogram: its distribution (bins keyed by the bucket's
	// index), then its buckets' counts, each naming the distribution as
	// its Family.
	hist := func(family string, counts []uint64, label func(int) string) {
		var bins []Bin
		var total uint64
		for i, n := range counts {
			if n != 0 {
				bins = append(bins, Bin{int32(i), n})
				total += n
			}
		}
		if total == 0 {
			return
		}
		out.Behaviour = append(out.Behaviour, Metric{Name: family, Kind: KindSizeDist, Value: float64(total), Samples: total, Bins: bins})
		for i, n := range counts {
			if n != 0 {
				out.Behaviour = append(out.Behaviour, Metric{Name: label(i), Kind: KindCount, Value: float64(n), Family: family})
			}
		}
	}
	for d := range 2 {
		met(dirNames[d]+" packets", KindCount, conn.Dir[d].Packets)
		met(dirNames[d]+" bytes", KindCount, conn.Dir[d].Bytes)
	}
	if h := conn.Health; h != nil {
		for d := range 2 {
			dh := &h.Dir[d]
			p := dirNames[d] + " "
			met(p+"retransmitted packets", KindCount, dh.RetransmittedPackets)
			met(p+"duplicate packets", KindCount, dh.DuplicatePackets)
			met(p+"out-of-order packets", KindCount, dh.OutOfOrderPackets)
			met(p+"PSN gaps", KindCount, dh.LostSegments)
			met(p+"PSNs lost on the wire", KindCount, dh.WireLostPSNs)
			met(p+"PSNs lost by the capture", KindCount, dh.CaptureLostPSNs)
			for code, n := range dh.NAKs {
				met(p+"NAK "+roce.NAKCode(code).String(), KindCount, n)
			}
			met(p+"NAK reserved codes", KindCount, dh.NAKsOther)
			met(p+"RNR NAKs", KindCount, dh.RNRNAKs)
			for t, n := range dh.EpisodesByTrigger {
				if t != int(dissect.TriggerNone) {
					met(p+"retransmission episodes "+dissect.EpisodeTrigger(t).String(), KindCount, n)
				}
			}
			met(p+"early timeouts", KindCount, dh.EarlyTimeouts)
			met(p+"ECN CE packets", KindCount, dh.ECNCE)
			met(p+"CNPs", KindCount, dh.CNPs)
			if conn.Transport == dissect.TransportIWARP {
				met(p+"TCP retransmissions", KindCount, dh.TCPRetransmissions)
				met(p+"TCP duplicate ACKs", KindCount, dh.TCPDupAcks)
				met(p+"TCP zero windows", KindCount, dh.TCPZeroWindows)
				met(p+"TCP missing octets", KindCount, dh.TCPMissingOctets)
			}
		}
	}
	if iw := conn.IWARP; iw != nil {
		for d := range 2 {
			ic := &iw.Dir[d]
			p := dirNames[d] + " "
			met(p+"FPDUs", KindCount, ic.FPDUs)
			met(p+"FPDU CRC errors", KindCount, ic.CRCErrors)
			met(p+"MPA lost sync", KindCount, ic.LostSync)
			met(p+"Terminates", KindCount, ic.Terminates)
		}
	}
	for d := range 2 {
		p := dirNames[d] + " "
		met(p+"Sends", KindCount, s.msgs[d])
		hist(p+"Send packets per message", s.msgPkts[d][:], func(i int) string {
			if i == 0 {
				return p + "Sends of 1 packet"
			}
			return p + "Sends of " + pktLabel(i) + " packets"
		})
	}
	if conn.Transport == dissect.TransportIWARP {
		for d := range 2 {
			p := dirNames[d] + " "
			met(p+"TCP segments of 4 octets (lone MPA CRC)", KindCount, s.tcpCRC[d])
			hist(p+"TCP segment sizes", s.tcpSegs[d][:], func(i int) string { return p + "TCP segments of " + sizeLabel(i) + " octets" })
		}
	}
	for k, kind := range [2]string{"RDMA Read", "RDMA Write"} {
		for d := range 2 {
			p := dirNames[d] + " " + kind
			met(p+" bytes", KindCount, s.opBytes[k][d])
			hist(p+" sizes", s.ops[k][d][:], func(i int) string { return p + "s of " + sizeLabel(i) + " octets" })
		}
	}
	for i := range ulps {
		if f := ulps[i].Behaviour; f != nil {
			f(conn, met)
		}
	}
	return out
}

// ulpNegotiation writes what SMB Direct and iSER negotiated in their
// first messages.
func ulpNegotiation(neg func(string, any), ulp string, s *connState) {
	if s.hasSMBReq {
		r := &s.smbReq
		neg("smbd.request.min_version", r.MinVersion)
		neg("smbd.request.max_version", r.MaxVersion)
		neg("smbd.request.credits_requested", r.CreditsRequested)
		neg("smbd.request.preferred_send_size", r.PreferredSendSize)
		neg("smbd.request.max_receive_size", r.MaxReceiveSize)
		neg("smbd.request.max_fragmented_size", r.MaxFragmentedSize)
	}
	if s.hasSMBResp {
		r := &s.smbResp
		neg("smbd.response.min_version", r.MinVersion)
		neg("smbd.response.max_version", r.MaxVersion)
		neg("smbd.response.negotiated_version", r.NegotiatedVersion)
		neg("smbd.response.credits_requested", r.CreditsRequested)
		neg("smbd.response.credits_granted", r.CreditsGranted)
		neg("smbd.response.status", r.Status)
		neg("smbd.response.max_read_write_size", r.MaxReadWriteSize)
		neg("smbd.response.preferred_send_size", r.PreferredSendSize)
		neg("smbd.response.max_receive_size", r.MaxReceiveSize)
		neg("smbd.response.max_fragmented_size", r.MaxFragmentedSize)
	}
	if ulp != ulpISER {
		return
	}
	for d, side := range [2]string{"iser.hello", "iser.hello_reply"} {
		if !s.hasHello[d] {
			continue
		}
		h := &s.hello[d]
		neg(side+".max_version", h.MaxVer)
		if d == 0 {
			neg(side+".min_version", h.MinVer)
			neg(side+".ird", h.IRDORD)
		} else {
			neg(side+".reject", h.Reject)
			neg(side+".cur_version", h.MinVer)
			neg(side+".ord", h.IRDORD)
		}
	}
	for d, side := range [2]string{"iscsi.login.request.", "iscsi.login.response."} {
		for _, f := range s.login[d] {
			neg(side+f.Name, f.Value)
		}
	}
}

// trimZeros drops the zero padding that ends a fixed-size private data
// area (a CM REQ's 92 octets), which says nothing of the consumer.
func trimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:n]
}

// nvmePD decodes the NVMe/RDMA private data (NVMe RDMA Transport 1.0
// "RDMA_CM_REQUEST Private Data", "RDMA_CM_REPLY Private Data").
func nvmePD(neg func(string, any), side string, d int, b []byte) {
	if d == 0 {
		var r nvme.CMRequest
		if err := r.DecodeFromBytes(b); err != nil {
			neg(side+".nvme", err.Error())
			return
		}
		neg(side+".nvme.recfmt", r.RECFMT)
		neg(side+".nvme.qid", r.QID)
		neg(side+".nvme.hrqsize", r.HRQSIZE)
		neg(side+".nvme.hsqsize", r.HSQSIZE)
		neg(side+".nvme.cntlid", r.CNTLID)
		return
	}
	var r nvme.CMReply
	if err := r.DecodeFromBytes(b); err != nil {
		neg(side+".nvme", err.Error())
		return
	}
	neg(side+".nvme.recfmt", r.RECFMT)
	neg(side+".nvme.crqsize", r.CRQSIZE)
}

func rtr(send, write, read bool) string {
	var s []string
	if send {
		s = append(s, "send")
	}
	if write {
		s = append(s, "write")
	}
	if read {
		s = append(s, "read")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// cmTimeout writes a 5-bit CM timeout with what it means.
func cmTimeout(v uint8) string {
	return fmt.Sprintf("%d (%s)", v, fmtDuration(roce.CMTimeout(v)))
}

// ackTimeout is cmTimeout for the Local ACK Timeout, whose 0 means none.
func ackTimeout(v uint8) string {
	if v == 0 {
		return "0 (infinite)"
	}
	return cmTimeout(v)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	case d >= time.Microsecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + " µs"
	}
	return strconv.FormatInt(int64(d), 10) + " ns"
}
