package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestV2InlineThresholds: on a version 2 connection analyze shows the
// thresholds of draft-07 "Inline Threshold" — 4096 each way without
// Transport Properties, else the sender's SBSIZ against the receiver's
// RBSIZ — in place of RFC 8797's; a version 1 connection keeps RFC 8797's
// and has no "v2_transport" member.
func TestV2InlineThresholds(t *testing.T) {
	base := func(rs *rpcordma.RPCStats) *dissect.Connection {
		// Both sides' set-up seen, neither with RFC 8797 private data:
		// the section 5.1 defaults, 1024 bytes each way.
		return &dissect.Connection{ULP: rpcordma.Name, Negotiated: true, ULPData: rs,
			PrivateData: [2]dissect.PrivateData{{Seen: true}, {Seen: true}}}
	}
	v1 := connection(base(&rpcordma.RPCStats{Version: 1, Versions: [3]uint64{0, 3, 0}}))
	if v1.InlineThreshold == nil || v1.InlineThreshold.ClientToServer != 1024 || v1.RPC.V2 != nil {
		t.Errorf("version 1: %+v %+v", v1.InlineThreshold, v1.RPC.V2)
	}
	if b, _ := json.Marshal(v1.RPC); strings.Contains(string(b), `"v2_transport"`) {
		t.Errorf("version 1 JSON has v2_transport: %s", b)
	}
	noProps := connection(base(&rpcordma.RPCStats{Version: 2, Versions: [3]uint64{0, 0, 3}}))
	if th := noProps.InlineThreshold; th == nil || *th != (Thresholds{4096, 4096}) || noProps.RPC.V2.Source != "default" {
		t.Errorf("version 2 without properties: %+v %+v", th, noProps.RPC.V2)
	}
	p := &rpcordma.V2Props{}
	p.Sides[0] = rpcordma.V2PropSide{Messages: 1, FirstPacket: 5, FinalPacket: 5, Given: 1 << 1, SBSIZ: 16384, RBSIZ: 4096, RSSIZ: 1048576, RCSIZ: 16, HostAuth: -1}
	p.Sides[1] = rpcordma.V2PropSide{Messages: 1, FirstPacket: 6, FinalPacket: 6, Given: 1 << 2, SBSIZ: 4096, RBSIZ: 9000, RSSIZ: 1048576, RCSIZ: 16, HostAuth: -1}
	props := connection(base(&rpcordma.RPCStats{Version: 2, Versions: [3]uint64{0, 0, 3}, V2Props: p}))
	if th := props.InlineThreshold; th == nil || *th != (Thresholds{9000, 4096}) {
		t.Errorf("version 2 with properties: %+v", th)
	}
	v := props.RPC.V2
	if v.Source != "transport properties" || v.Client == nil || len(v.Client.Published) != 1 || v.Client.Published[0] != "RDMA2_PROPID_SBSIZ" {
		t.Errorf("version 2 summary %+v %+v", v, v.Client)
	}
	if row := v2Row(&props); strings.Join(row[:4], "|") != "0|9000|4096|transport properties" {
		t.Errorf("row %q", row)
	}
}
