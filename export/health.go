package export

import (
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// The transport-health tables (issue 10; docs/loss.md defines every
// figure, as analyze's transport_health and ud_flows carry them).
const (
	TableTransportHealth = "transport_health"
	TableUDFlows         = "ud_flows"
)

// HealthCounts is one direction's transport health: the packets that
// travel in it and what became of the requests sent in it (dissect.DirHealth).
type HealthCounts struct {
	Packets              int64 `parquet:"packets" json:"packets"`
	Bytes                int64 `parquet:"bytes" json:"bytes"`
	RetransmittedPackets int64 `parquet:"retransmitted_packets" json:"retransmitted_packets"`
	RetransmittedBytes   int64 `parquet:"retransmitted_bytes" json:"retransmitted_bytes"`
	GoodputBytes         int64 `parquet:"goodput_bytes" json:"goodput_bytes"`
	DuplicatePackets     int64 `parquet:"duplicate_packets" json:"duplicate_packets"`
	OutOfOrderPackets    int64 `parquet:"out_of_order_packets" json:"out_of_order_packets"`
	PSNGaps              int64 `parquet:"psn_gaps" json:"psn_gaps"`
	PSNsMissing          int64 `parquet:"psns_missing" json:"psns_missing"`
	PSNsNeverSeen        int64 `parquet:"psns_never_seen" json:"psns_never_seen"`
	PSNsWireLost         int64 `parquet:"psns_lost_on_wire" json:"psns_lost_on_wire"`
	PSNsCaptureLost      int64 `parquet:"psns_lost_by_capture" json:"psns_lost_by_capture"`
	// NAKs by code (IBA 9.7.5.2.2, Table 44), then every NAK but RNR.
	NAKsPSNSequenceError       int64 `parquet:"naks_psn_sequence_error" json:"naks_psn_sequence_error"`
	NAKsInvalidRequest         int64 `parquet:"naks_invalid_request" json:"naks_invalid_request"`
	NAKsRemoteAccessError      int64 `parquet:"naks_remote_access_error" json:"naks_remote_access_error"`
	NAKsRemoteOperationalError int64 `parquet:"naks_remote_operational_error" json:"naks_remote_operational_error"`
	NAKsInvalidRDRequest       int64 `parquet:"naks_invalid_rd_request" json:"naks_invalid_rd_request"`
	NAKsReserved               int64 `parquet:"naks_reserved" json:"naks_reserved"`
	NAKs                       int64 `parquet:"naks" json:"naks"`
	RNRNAKs                    int64 `parquet:"rnr_naks" json:"rnr_naks"`
	Episodes                   int64 `parquet:"retransmission_episodes" json:"retransmission_episodes"`
	// Latencies in microseconds (null without a sample).
	EpisodeP50us    *float64 `parquet:"episode_duration_p50_us,optional" json:"episode_duration_p50_us"`
	EpisodeMaxus    *float64 `parquet:"episode_duration_max_us,optional" json:"episode_duration_max_us"`
	AckLatencyP50us *float64 `parquet:"ack_latency_p50_us,optional" json:"ack_latency_p50_us"`
	AckLatencyP99us *float64 `parquet:"ack_latency_p99_us,optional" json:"ack_latency_p99_us"`
	AckLatencyMaxus *float64 `parquet:"ack_latency_max_us,optional" json:"ack_latency_max_us"`
	ReadLatencyP50  *float64 `parquet:"read_latency_p50_us,optional" json:"read_latency_p50_us"`
	ReadLatencyP99  *float64 `parquet:"read_latency_p99_us,optional" json:"read_latency_p99_us"`
	ReadLatencyMax  *float64 `parquet:"read_latency_max_us,optional" json:"read_latency_max_us"`
	ECNCEPackets    int64    `parquet:"ecn_ce_packets" json:"ecn_ce_packets"`
	CNPs            int64    `parquet:"cnps" json:"cnps"`
	Differing       int64    `parquet:"retransmissions_differing" json:"retransmissions_differing"`
	// iWARP's TCP (zero for RoCE).
	TCPRetransmissions int64 `parquet:"tcp_retransmissions" json:"tcp_retransmissions"`
	TCPDupAcks         int64 `parquet:"tcp_duplicate_acks" json:"tcp_duplicate_acks"`
	TCPZeroWindows     int64 `parquet:"tcp_zero_windows" json:"tcp_zero_windows"`
	TCPMissingOctets   int64 `parquet:"tcp_missing_octets" json:"tcp_missing_octets"`
}

// TransportHealth is one row per connection and direction.
type TransportHealth struct {
	Common
	ConnectionID int64 `parquet:"connection_id" json:"connection_id"`
	// Direction is "client-to-server" or "server-to-client" (as the packets table): the
	// direction the packets travel in.
	Direction string `parquet:"direction,dict" json:"direction"`
	Transport string `parquet:"transport,dict" json:"transport"`
	HealthCounts
}

// UDFlow is one UD flow (source and destination node and QP): one
// direction, no connection.
type UDFlow struct {
	Common
	Source      string  `parquet:"source" json:"source"`
	Destination string  `parquet:"destination" json:"destination"`
	SourceQPN   int64   `parquet:"source_qpn" json:"source_qpn"`
	DestQPN     int64   `parquet:"destination_qpn" json:"destination_qpn"`
	QKeys       []int64 `parquet:"q_keys,list" json:"q_keys"`
	FirstPacket int64   `parquet:"first_packet" json:"first_packet"`
	LastPacket  int64   `parquet:"last_packet" json:"last_packet"`
	HealthCounts
}

func healthCounts(d *dissect.DirHealth) HealthCounts {
	h := HealthCounts{
		Packets: int64(d.Packets), Bytes: int64(d.Bytes),
		RetransmittedPackets: int64(d.RetransmittedPackets), RetransmittedBytes: int64(d.RetransmittedBytes),
		GoodputBytes:     int64(d.Bytes - d.RetransmittedBytes),
		DuplicatePackets: int64(d.DuplicatePackets), OutOfOrderPackets: int64(d.OutOfOrderPackets),
		PSNGaps: int64(d.LostSegments), PSNsMissing: int64(d.MissingPSNs),
		PSNsWireLost: int64(d.WireLostPSNs), PSNsCaptureLost: int64(d.CaptureLostPSNs),
		NAKsPSNSequenceError:       int64(d.NAKs[roce.NAKPSNSequenceError]),
		NAKsInvalidRequest:         int64(d.NAKs[roce.NAKInvalidRequest]),
		NAKsRemoteAccessError:      int64(d.NAKs[roce.NAKRemoteAccessError]),
		NAKsRemoteOperationalError: int64(d.NAKs[roce.NAKRemoteOperationalError]),
		NAKsInvalidRDRequest:       int64(d.NAKs[roce.NAKInvalidRDRequest]),
		NAKsReserved:               int64(d.NAKsOther),
		RNRNAKs:                    int64(d.RNRNAKs),
		ECNCEPackets:               int64(d.ECNCE), CNPs: int64(d.CNPs),
		Differing:          int64(d.PayloadMismatches),
		TCPRetransmissions: int64(d.TCPRetransmissions), TCPDupAcks: int64(d.TCPDupAcks),
		TCPZeroWindows: int64(d.TCPZeroWindows), TCPMissingOctets: int64(d.TCPMissingOctets),
	}
	for _, n := range d.NAKs {
		h.NAKs += int64(n)
	}
	h.NAKs += int64(d.NAKsOther)
	for _, n := range d.EpisodesByTrigger {
		h.Episodes += int64(n)
	}
	if d.MissingPSNs > d.FilledPSNs {
		h.PSNsNeverSeen = int64(d.MissingPSNs - d.FilledPSNs)
	}
	us := func(t time.Duration) *float64 { v := float64(t) / float64(time.Microsecond); return &v }
	if e := &d.EpisodeDuration; e.N > 0 {
		h.EpisodeP50us, h.EpisodeMaxus = us(e.Quantile(0.5)), us(e.Max)
	}
	if a := &d.AckLatency; a.N > 0 {
		h.AckLatencyP50us, h.AckLatencyP99us, h.AckLatencyMaxus = us(a.Quantile(0.5)), us(a.Quantile(0.99)), us(a.Max)
	}
	if r := &d.ReadLatency; r.N > 0 {
		h.ReadLatencyP50, h.ReadLatencyP99, h.ReadLatencyMax = us(r.Quantile(0.5)), us(r.Quantile(0.99)), us(r.Max)
	}
	return h
}

// healthOf returns the transport_health rows of a connection: one per
// direction, none without transport health.
func healthOf(common Common, dc *dissect.Connection) []TransportHealth {
	if dc.Health == nil {
		return nil
	}
	rows := make([]TransportHealth, 0, 2)
	for d, dir := range []string{"client-to-server", "server-to-client"} {
		rows = append(rows, TransportHealth{Common: common, ConnectionID: int64(dc.ID), Direction: dir,
			Transport: dc.Transport.String(), HealthCounts: healthCounts(&dc.Health.Dir[d])})
	}
	return rows
}

// udRows writes the UD flows.
func (c *Capture) udRows(eng *dissect.Engine) {
	for _, f := range eng.UD.Flows {
		if c.err != nil {
			return
		}
		row := UDFlow{Common: c.common, Source: f.Src.String(), Destination: f.Dst.String(),
			SourceQPN: int64(f.SrcQPN), DestQPN: int64(f.DstQPN), QKeys: make([]int64, len(f.QKeys)),
			FirstPacket: int64(f.FirstPacket), LastPacket: int64(f.LastPacket), HealthCounts: healthCounts(&f.Health)}
		for i, k := range f.QKeys {
			row.QKeys[i] = int64(k)
		}
		c.note(c.ud.add(row))
	}
}
