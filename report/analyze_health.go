package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// TransportHealth is a connection's transport health in the Analysis
// document (dissect/health.go; docs/loss.md defines every figure).
type TransportHealth struct {
	// IntervalSeconds is the length of each throughput interval.
	IntervalSeconds float64         `json:"interval_seconds"`
	ClientToServer  DirectionHealth `json:"client_to_server"`
	ServerToClient  DirectionHealth `json:"server_to_client"`
}

// DirectionHealth is one direction: the packets that travel in it, and
// (NAKs, latencies, lost PSNs) what became of the requests sent in it.
type DirectionHealth struct {
	Packets              uint64 `json:"packets"`
	Bytes                uint64 `json:"bytes"`
	RetransmittedPackets uint64 `json:"retransmitted_packets"`
	RetransmittedBytes   uint64 `json:"retransmitted_bytes"`
	// GoodputBytes: Bytes less RetransmittedBytes.
	GoodputBytes      uint64 `json:"goodput_bytes"`
	DuplicatePackets  uint64 `json:"duplicate_packets"`
	OutOfOrderPackets uint64 `json:"out_of_order_packets"`
	// NetworkDuplicates: of the duplicate packets, requests the network
	// repeated (the same IPv4 datagram twice), not resent by the requester.
	NetworkDuplicates uint64 `json:"network_duplicates"`
	PSNGaps           uint64 `json:"psn_gaps"`
	PSNsMissing       uint64 `json:"psns_missing"`
	// PSNsNeverSeen: missing PSNs never sent again in the capture;
	// PSNsFilled the others, which a later packet carried (resent, or
	// reordered): the two add up to PSNsMissing.
	PSNsNeverSeen   uint64 `json:"psns_never_seen"`
	PSNsFilled      uint64 `json:"psns_filled"`
	PSNsWireLost    uint64 `json:"psns_lost_on_wire"`
	PSNsCaptureLost uint64 `json:"psns_lost_by_capture"`
	// NAKs of this direction's requests, by code name.
	NAKs              map[string]uint64 `json:"naks"`
	RNRNAKs           uint64            `json:"rnr_naks"`
	RNRTimerMin       *string           `json:"rnr_timer_min"`
	RNRTimerMax       *string           `json:"rnr_timer_max"`
	Episodes          uint64            `json:"retransmission_episodes"`
	EpisodesByTrigger map[string]uint64 `json:"episodes_by_trigger"`
	EpisodeDuration   *Latency          `json:"episode_duration"`
	EpisodeList       []EpisodeJSON     `json:"episode_list"`
	// AckTimeoutUs is the CM REQ's Local ACK Timeout (null unknown);
	// EarlyTimeouts the timeout episodes resent sooner than it after the
	// original: a figure, not a rule (a NAK or completer check unseen).
	AckTimeoutUs      *float64       `json:"ack_timeout_us"`
	EarlyTimeouts     uint64         `json:"timeout_resends_before_ack_timeout"`
	AckLatency        *Latency       `json:"ack_latency"`
	ReadLatency       *Latency       `json:"read_latency"`
	ECNCEPackets      uint64         `json:"ecn_ce_packets"`
	CNPs              uint64         `json:"cnps"`
	CEToCNP           *Latency       `json:"ce_to_cnp_delay"`
	PayloadMismatches uint64         `json:"retransmissions_differing"`
	TCP               *TCPHealth     `json:"tcp,omitempty"`
	Throughput        []IntervalJSON `json:"throughput"`
	Limits            HealthLimits   `json:"limits"`
	// Notes say which figures the capture cannot support, and why.
	Notes []string `json:"notes,omitempty"`
}

// Latency is a latency distribution from a fixed-size histogram (quantiles
// within 1/8 of an octave), in microseconds.
type Latency struct {
	Samples uint64  `json:"samples"`
	P50us   float64 `json:"p50_us"`
	P99us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`
}

// EpisodeJSON is one retransmission episode.
type EpisodeJSON struct {
	Number      int     `json:"number"`
	Trigger     string  `json:"trigger"`
	FirstPacket int     `json:"first_packet"`
	LastPacket  int     `json:"last_packet"`
	FirstPSN    *uint32 `json:"first_psn,omitempty"`
	Packets     int     `json:"packets"`
	DurationUs  float64 `json:"duration_us"`
}

// TCPHealth is what iWARP's TCP layer did.
type TCPHealth struct {
	Retransmissions uint64 `json:"retransmissions"`
	DupAcks         uint64 `json:"duplicate_acks"`
	ZeroWindows     uint64 `json:"zero_windows"`
	MissingOctets   uint64 `json:"missing_octets"`
}

// IntervalJSON is one throughput interval.
type IntervalJSON struct {
	StartSeconds       float64 `json:"start_s"`
	Packets            uint64  `json:"packets"`
	Bytes              uint64  `json:"bytes"`
	GoodputBytes       uint64  `json:"goodput_bytes"`
	RetransmittedBytes uint64  `json:"retransmitted_bytes"`
}

// HealthLimits counts what the bounded state cut.
type HealthLimits struct {
	WindowCut    uint64 `json:"psn_window_cut"`
	CompareCut   uint64 `json:"compare_window_cut"`
	LatencyCut   uint64 `json:"latency_cut"`
	EpisodesCut  uint64 `json:"episodes_cut"`
	IntervalsCut uint64 `json:"intervals_cut"`
}

func latency(h *dissect.Histogram) *Latency {
	if h.N == 0 {
		return nil
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return &Latency{Samples: h.N, P50us: us(h.Quantile(0.5)), P99us: us(h.Quantile(0.99)), MaxUs: us(h.Max)}
}

func transportHealth(c *dissect.Connection) *TransportHealth {
	h := c.Health
	if h == nil {
		return nil
	}
	iv := h.Interval
	if iv <= 0 {
		iv = dissect.DefaultHealthInterval
	}
	out := &TransportHealth{IntervalSeconds: iv.Seconds()}
	out.ClientToServer = directionHealth(c, &h.Dir[0], &h.Dir[1])
	out.ServerToClient = directionHealth(c, &h.Dir[1], &h.Dir[0])
	return out
}

func directionHealth(c *dissect.Connection, d, other *dissect.DirHealth) DirectionHealth {
	out := DirectionHealth{
		Packets: d.Packets, Bytes: d.Bytes,
		RetransmittedPackets: d.RetransmittedPackets, RetransmittedBytes: d.RetransmittedBytes,
		GoodputBytes:     d.Bytes - d.RetransmittedBytes,
		DuplicatePackets: d.DuplicatePackets, OutOfOrderPackets: d.OutOfOrderPackets,
		NetworkDuplicates: d.NetworkDuplicates,
		PSNGaps:           d.LostSegments, PSNsMissing: d.MissingPSNs,
		PSNsWireLost: d.WireLostPSNs, PSNsCaptureLost: d.CaptureLostPSNs,
		NAKs: map[string]uint64{}, RNRNAKs: d.RNRNAKs,
		EpisodesByTrigger: map[string]uint64{},
		EpisodeDuration:   latency(&d.EpisodeDuration),
		EpisodeList:       []EpisodeJSON{},
		AckLatency:        latency(&d.AckLatency),
		ReadLatency:       latency(&d.ReadLatency),
		ECNCEPackets:      d.ECNCE, CNPs: d.CNPs,
		CEToCNP:           latency(&d.CEToCNP),
		PayloadMismatches: d.PayloadMismatches,
		Throughput:        []IntervalJSON{},
		Limits: HealthLimits{WindowCut: d.WindowCut, CompareCut: d.CompareCut, LatencyCut: d.LatencyCut,
			EpisodesCut: d.EpisodesCut, IntervalsCut: d.IntervalsCut},
	}
	if d.MissingPSNs > d.FilledPSNs {
		out.PSNsNeverSeen = d.MissingPSNs - d.FilledPSNs
	}
	out.PSNsFilled = d.MissingPSNs - out.PSNsNeverSeen
	out.EarlyTimeouts = d.EarlyTimeouts
	if d.AckTimeout > 0 {
		v := float64(d.AckTimeout) / float64(time.Microsecond)
		out.AckTimeoutUs = &v
	}
	for code, n := range d.NAKs {
		if n > 0 {
			out.NAKs[roce.NAKCode(code).String()] = n
		}
	}
	if d.NAKsOther > 0 {
		out.NAKs["reserved"] = d.NAKsOther
	}
	if d.RNRNAKs > 0 {
		lo, hi := d.RNRTimerMin.String(), d.RNRTimerMax.String()
		out.RNRTimerMin, out.RNRTimerMax = &lo, &hi
	}
	for t, n := range d.EpisodesByTrigger {
		if n > 0 {
			out.EpisodesByTrigger[dissect.EpisodeTrigger(t).String()] = n
			out.Episodes += n
		}
	}
	if len(d.Episodes) > 0 {
		out.EpisodeList = make([]EpisodeJSON, 0, len(d.Episodes))
	}
	for _, ep := range d.Episodes {
		j := EpisodeJSON{Number: ep.Number, Trigger: ep.Trigger.String(), FirstPacket: ep.FirstPacket,
			LastPacket: ep.LastPacket, Packets: ep.Packets, DurationUs: float64(ep.Duration) / float64(time.Microsecond)}
		if c.Transport == dissect.TransportRoCE {
			psn := ep.FirstPSN
			j.FirstPSN = &psn
		}
		out.EpisodeList = append(out.EpisodeList, j)
	}
	if len(d.Intervals) > 0 {
		out.Throughput = make([]IntervalJSON, 0, len(d.Intervals)) // kept to the end: sized exactly
	}
	for _, iv := range d.Intervals {
		out.Throughput = append(out.Throughput, IntervalJSON{StartSeconds: iv.Start.Seconds(), Packets: iv.Packets,
			Bytes: iv.Bytes, GoodputBytes: iv.Bytes - iv.RetransmittedBytes, RetransmittedBytes: iv.RetransmittedBytes})
	}
	if c.Transport == dissect.TransportIWARP {
		out.TCP = &TCPHealth{Retransmissions: d.TCPRetransmissions, DupAcks: d.TCPDupAcks,
			ZeroWindows: d.TCPZeroWindows, MissingOctets: d.TCPMissingOctets}
		out.PSNsMissing, out.PSNsNeverSeen, out.PSNsFilled = 0, 0, 0
	}
	// What the capture cannot tell.
	if out.AckLatency == nil {
		out.Notes = append(out.Notes, "ack_latency: no request of this direction was acknowledged in the capture")
	}
	if out.ReadLatency == nil && c.Transport == dissect.TransportRoCE {
		out.Notes = append(out.Notes, "read_latency: no RDMA Read Request of this direction got its first response in the capture")
	}
	if out.CEToCNP == nil {
		out.Notes = append(out.Notes, "ce_to_cnp_delay: no CE-marked packet of this direction was followed by a CNP the other way")
	}
	if out.AckTimeoutUs == nil && c.Transport == dissect.TransportRoCE && out.Episodes > 0 {
		out.Notes = append(out.Notes, "ack_timeout_us: no CM REQ with a Local ACK Timeout in the capture: resends cannot be set against the timeout")
	}
	if c.State == dissect.StateNoSetup {
		out.Notes = append(out.Notes, "the capture started mid-stream (no connection set-up): a first gap or retransmission before the first packet seen is not visible")
	}
	if other.Packets == 0 {
		out.Notes = append(out.Notes, "the other direction is not in the capture: NAKs, acknowledgements and lost-by-capture PSNs cannot be told")
	}
	if c.Transport == dissect.TransportIWARP {
		out.Notes = append(out.Notes, "iWARP: loss and recovery are TCP's (tcp, retransmitted_packets); PSN figures do not apply")
	}
	return out
}

// appendUs appends a time in µs: in s or ms with two decimals past a
// second or a millisecond.
func appendUs(b []byte, v float64) []byte {
	switch {
	case v >= 1e6:
		return append(strconv.AppendFloat(b, v/1e6, 'f', 2, 64), " s"...)
	case v >= 1e3:
		return append(strconv.AppendFloat(b, v/1e3, 'f', 2, 64), " ms"...)
	}
	return append(strconv.AppendFloat(b, v, 'f', 0, 64), " µs"...)
}

func healthLatencyText(l *Latency) string {
	if l == nil {
		return "-"
	}
	var buf [96]byte
	b := appendUs(buf[:0], l.P50us)
	b = append(b, " / "...)
	b = appendUs(b, l.P99us)
	b = append(b, " / "...)
	return string(appendUs(b, l.MaxUs))
}

// parenText is "n (inner)", the inner numbers separated by " / ", as fmt's
// "%d (%d / %d)" writes it.
func parenText(n uint64, inner ...uint64) string {
	var buf [96]byte
	b := strconv.AppendUint(buf[:0], n, 10)
	b = append(b, " ("...)
	for i, v := range inner {
		if i > 0 {
			b = append(b, " / "...)
		}
		b = strconv.AppendUint(b, v, 10)
	}
	return string(append(b, ')'))
}

func triggersText(m map[string]uint64) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range []string{"nak_sequence_error", "rnr_nak", "timeout", "reissued_read", "tcp"} {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func naksText(d *DirectionHealth) string {
	var n uint64
	for _, v := range d.NAKs {
		n += v
	}
	s := strconv.FormatUint(n, 10)
	if d.RNRNAKs > 0 {
		s += fmt.Sprintf(" + %d RNR", d.RNRNAKs)
	}
	return s
}

// healthHeader heads the transport health table (IB/RoCE connections).
// Each column means one thing in every row: the missing PSNs split into
// those a later packet filled (resent, or reordered), those the responder
// acknowledged without a resend (lost by the capture) and the rest, which
// the capture does not tell, so that the three add up to the total.
var healthHeader = []string{"ID", "Dir", "Packets", "Retrans. pkts (bytes)", "Episodes", "NAKs", "Dup / OOO",
	"PSNs missing (filled later / lost by capture / not known)", "ACK latency", "Read latency", "CE / CNP"}

// tcpHealthHeader heads the iWARP connections' table: TCP's figures (as
// tshark's tcp.analysis counts them), not the RC model's.
var tcpHealthHeader = []string{"ID", "Dir", "Packets", "TCP retrans. (bytes)", "Episodes", "Out of order", "Dup ACKs",
	"Zero windows", "Octets missing", "RTT"}

// missingSplit splits d's missing PSNs so that the parts add up: filled
// later, lost by the capture, not known.
func missingSplit(d *DirectionHealth) (filled, capture, unknown uint64) {
	filled = min(d.PSNsFilled, d.PSNsMissing)
	capture = min(d.PSNsCaptureLost, d.PSNsMissing-filled)
	return filled, capture, d.PSNsMissing - filled - capture
}

// rowAdder takes a table's rows: a rowTable, or analyze's text
// (healthSections).
type rowAdder interface{ add(cells ...string) }

// addHealthRows adds c's rows, one per direction, to the transport health
// table (IB/RoCE) or the TCP one (iWARP), when it has any.
func addHealthRows(rows, tcpRows rowAdder, c *Connection) {
	h := c.TransportHealth
	if h == nil {
		return
	}
	for i, d := range []*DirectionHealth{&h.ClientToServer, &h.ServerToClient} {
		dir := [2]string{"C→S", "S→C"}[i]
		if t := d.TCP; t != nil {
			tcpRows.add(strconv.Itoa(c.ID), dir, strconv.FormatUint(d.Packets, 10),
				parenText(d.RetransmittedPackets, d.RetransmittedBytes),
				triggersText(d.EpisodesByTrigger), strconv.FormatUint(d.OutOfOrderPackets, 10),
				strconv.FormatUint(t.DupAcks, 10), strconv.FormatUint(t.ZeroWindows, 10),
				strconv.FormatUint(t.MissingOctets, 10), healthLatencyText(d.AckLatency))
			continue
		}
		filled, capture, unknown := missingSplit(d)
		rows.add(strconv.Itoa(c.ID), dir,
			strconv.FormatUint(d.Packets, 10),
			parenText(d.RetransmittedPackets, d.RetransmittedBytes),
			triggersText(d.EpisodesByTrigger), naksText(d),
			slashText(d.DuplicatePackets, d.OutOfOrderPackets),
			parenText(d.PSNsMissing, filled, capture, unknown),
			healthLatencyText(d.AckLatency), healthLatencyText(d.ReadLatency),
			slashText(d.ECNCEPackets, d.CNPs))
	}
}

// writeHealthTable writes the "Transport health" sections (rows from
// addHealthRows).
func writeHealthTable(w io.Writer, rows, tcpRows *rowTable) error {
	if rows.len() > 0 {
		fmt.Fprintln(w, "\nTransport health (p50 / p99 / max; docs/loss.md):")
		if err := rows.render(w, houseStyle...); err != nil {
			return err
		}
		// A responder's repeated Read Responses are its direction's
		// retransmissions; the episode that caused them is the
		// requester's (its re-issued Read Requests), in the other row.
		fmt.Fprintln(w, "Retransmitted Read Responses count in the responder's row; the episodes that caused them (re-issued Read Requests) in the requester's.")
	}
	if tcpRows.len() > 0 {
		fmt.Fprintln(w, "\nTransport health, iWARP (TCP as tshark's tcp.analysis; RTT p50 / p99 / max):")
		return tcpRows.render(w, houseStyle...)
	}
	return nil
}

// PFCSummary is what the capture shows of link-level flow control: IEEE
// 802.3 PAUSE and 802.1Qbb PFC frames (dissect.PFCStats).
type PFCSummary struct {
	PFCFrames   uint64        `json:"pfc_frames"`
	PauseFrames uint64        `json:"pause_frames"`
	FirstPacket int           `json:"first_packet,omitempty"`
	Priorities  []PFCPriority `json:"priorities"`
	Note        string        `json:"note,omitempty"`
}

// PFCPriority is one priority's pauses.
type PFCPriority struct {
	Priority  int    `json:"priority"`
	Pauses    uint64 `json:"pauses"`
	Resumes   uint64 `json:"resumes"`
	MaxQuanta uint16 `json:"max_quanta"`
}

func pfcSummary(s *dissect.PFCStats) *PFCSummary {
	out := &PFCSummary{PFCFrames: s.PFCFrames, PauseFrames: s.PauseFrames, FirstPacket: s.FirstPacket, Priorities: []PFCPriority{}}
	for i := range s.Pauses {
		if s.Pauses[i]+s.Resumes[i] > 0 {
			out.Priorities = append(out.Priorities, PFCPriority{Priority: i, Pauses: s.Pauses[i], Resumes: s.Resumes[i], MaxQuanta: s.MaxQuanta[i]})
		}
	}
	if s.PFCFrames+s.PauseFrames == 0 {
		out.Note = "no PAUSE or PFC frame in the capture: a host's NIC consumes them, a switch mirror port shows them"
	}
	return out
}

func writePFCLine(w io.Writer, s *PFCSummary) {
	if s == nil || s.PFCFrames+s.PauseFrames == 0 {
		return
	}
	fmt.Fprintf(w, "Flow control: %d PFC frames, %d PAUSE frames", s.PFCFrames, s.PauseFrames)
	for _, p := range s.Priorities {
		fmt.Fprintf(w, "; priority %d: %d pauses (longest %d quanta), %d resumes", p.Priority, p.Pauses, p.MaxQuanta, p.Resumes)
	}
	fmt.Fprintln(w)
}

// UDFlow is one Unreliable Datagram flow (dissect.UDFlow): UD traffic has
// no connection, so its transport health is per flow.
type UDFlow struct {
	Source      string          `json:"source"`
	Destination string          `json:"destination"`
	SourceQPN   uint32          `json:"source_qpn"`
	DestQPN     uint32          `json:"destination_qpn"`
	QKeys       []string        `json:"q_keys"`
	FirstPacket int             `json:"first_packet"`
	LastPacket  int             `json:"last_packet"`
	Health      DirectionHealth `json:"transport_health"`
}

func udFlows(eng *dissect.Snapshot) []UDFlow {
	var out []UDFlow
	for _, f := range eng.UD.Flows {
		u := UDFlow{Source: f.Src.String(), Destination: f.Dst.String(), SourceQPN: f.SrcQPN, DestQPN: f.DstQPN,
			QKeys: []string{}, FirstPacket: f.FirstPacket, LastPacket: f.LastPacket}
		for _, k := range f.QKeys {
			u.QKeys = append(u.QKeys, fmt.Sprintf("0x%08x", k))
		}
		d := &f.Health
		u.Health = DirectionHealth{Packets: d.Packets, Bytes: d.Bytes, GoodputBytes: d.Bytes,
			OutOfOrderPackets: d.OutOfOrderPackets, PSNGaps: d.LostSegments, PSNsMissing: d.MissingPSNs, PSNsNeverSeen: d.MissingPSNs,
			NAKs: map[string]uint64{}, EpisodesByTrigger: map[string]uint64{}, EpisodeList: []EpisodeJSON{},
			ECNCEPackets: d.ECNCE, Throughput: []IntervalJSON{},
			Limits: HealthLimits{IntervalsCut: d.IntervalsCut},
			Notes:  []string{"UD (IBA 9.8): no acknowledgement, no retransmission; a PSN gap is a datagram lost for good (by the network or the capture)"}}
		for _, iv := range d.Intervals {
			u.Health.Throughput = append(u.Health.Throughput, IntervalJSON{StartSeconds: iv.Start.Seconds(), Packets: iv.Packets,
				Bytes: iv.Bytes, GoodputBytes: iv.Bytes})
		}
		out = append(out, u)
	}
	return out
}

// writeUDTable writes the "UD flows" section.
func writeUDTable(w io.Writer, a *Analysis) error {
	if len(a.UDFlows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nUD flows (no connection; IBA 9.8):")
	t := newTable(w)
	t.Header("Source", "Destination", "Q_Keys", "Packets", "Bytes", "PSN gaps (missing)", "Out of order", "CE")
	for _, f := range a.UDFlows {
		_ = t.Append([]string{fmt.Sprintf("%s QP 0x%06x", f.Source, f.SourceQPN), fmt.Sprintf("%s QP 0x%06x", f.Destination, f.DestQPN),
			strings.Join(f.QKeys, " "), strconv.FormatUint(f.Health.Packets, 10), strconv.FormatUint(f.Health.Bytes, 10),
			fmt.Sprintf("%d (%d)", f.Health.PSNGaps, f.Health.PSNsMissing), strconv.FormatUint(f.Health.OutOfOrderPackets, 10),
			strconv.FormatUint(f.Health.ECNCEPackets, 10)})
	}
	return t.Render()
}
