package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func analyzeHealthFile(t *testing.T, name string) *Analysis {
	t.Helper()
	r, err := source.Open("../testdata/pcaps/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(rpcordma.With(dissect.Options{HealthInterval: 500 * time.Millisecond}, nfs.NewBinding(), nil))
	if err := e.Run(r, nil); err != nil {
		t.Fatal(err)
	}
	return NewAnalysis(name, e.Snapshot())
}

// TestTransportHealthJSON: on a lossy capture the document carries the
// figures the engine counted, under the keys docs/loss.md names, their
// intervals add up to the direction's packets and bytes, and goodput is
// bytes less retransmitted bytes; the table has its section.
func TestTransportHealthJSON(t *testing.T) {
	a := analyzeHealthFile(t, "lossy/rxe-nfs3-lossy.pcap")
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Connections []struct {
			Traffic struct {
				ClientToServer struct{ Packets, Bytes uint64 } `json:"client_to_server"`
			} `json:"traffic"`
			TransportHealth struct {
				Interval float64                    `json:"interval_seconds"`
				C2S      map[string]json.RawMessage `json:"client_to_server"`
			} `json:"transport_health"`
		} `json:"connections"`
		PFC map[string]json.RawMessage `json:"pfc"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Connections) != 2 || doc.PFC["note"] == nil {
		t.Fatalf("%d connections, pfc %v", len(doc.Connections), doc.PFC)
	}
	var retrans uint64
	for i, c := range doc.Connections {
		if c.TransportHealth.Interval != 0.5 {
			t.Errorf("interval %v", c.TransportHealth.Interval)
		}
		h := a.Connections[i].TransportHealth
		for _, k := range []string{"packets", "bytes", "retransmitted_packets", "retransmitted_bytes", "goodput_bytes", "duplicate_packets",
			"out_of_order_packets", "psn_gaps", "psns_missing", "psns_never_seen", "psns_lost_on_wire", "psns_lost_by_capture", "naks",
			"rnr_naks", "retransmission_episodes", "episodes_by_trigger", "episode_duration", "episode_list", "ack_latency", "read_latency",
			"ecn_ce_packets", "cnps", "ce_to_cnp_delay", "throughput", "limits", "ack_timeout_us", "timeout_resends_before_ack_timeout"} {
			if _, ok := c.TransportHealth.C2S[k]; !ok {
				t.Errorf("connection %d: no %s", i+1, k)
			}
		}
		for _, d := range []DirectionHealth{h.ClientToServer, h.ServerToClient} {
			var p, b, rb uint64
			for _, iv := range d.Throughput {
				p, b, rb = p+iv.Packets, b+iv.Bytes, rb+iv.RetransmittedBytes
				if iv.GoodputBytes != iv.Bytes-iv.RetransmittedBytes {
					t.Errorf("interval %+v", iv)
				}
			}
			if p != d.Packets || b != d.Bytes || rb != d.RetransmittedBytes || d.GoodputBytes != d.Bytes-d.RetransmittedBytes {
				t.Errorf("connection %d: intervals add up to %d packets %d bytes %d retransmitted, direction %+v", i+1, p, b, rb, d)
			}
			retrans += d.RetransmittedPackets
		}
		// The RoCE packets of the direction are the traffic's (CM packets
		// are not the model's).
		if h.ClientToServer.Packets > c.Traffic.ClientToServer.Packets {
			t.Errorf("connection %d: %d packets in health, %d in traffic", i+1, h.ClientToServer.Packets, c.Traffic.ClientToServer.Packets)
		}
	}
	// 977 + 1152 + 1 + 1677, the raw PSN reader's count (dissect's
	// TestLossyCapturesRetransmissionsCounted).
	if retrans != 3807 {
		t.Errorf("%d retransmitted packets", retrans)
	}
	buf.Reset()
	if err := a.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Transport health") || !strings.Contains(buf.String(), "nak_sequence_error") {
		t.Errorf("table without its health section")
	}
}
