package check

import (
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// status returns a rule's result on connection id.
func status(t *testing.T, res *Result, id int, rule string) CheckResult {
	t.Helper()
	for _, cr := range res.Connections {
		if cr.ID != id {
			continue
		}
		for _, ch := range cr.Checks {
			if ch.Rule == rule {
				return ch
			}
		}
	}
	t.Fatalf("no %s on connection %d", rule, id)
	return CheckResult{}
}

// TestMPAChecks: siw negotiates neither MPA CRC nor markers, so no capture
// has them; the model values the iWARP engine fills (dissect.IWARPFPDU,
// IWARPInfo) are built here. RFC 5044 section 6: with CRC negotiated every
// FPDU carries a CRC32c; section 7.1: M asks for markers.
func TestMPAChecks(t *testing.T) {
	for _, tc := range []struct {
		name             string
		carried          uint32
		markers          bool
		crcStatus        Status
		markersFindings  int
		crcFindingPacket int
	}{
		{"good CRC, no markers", 0x0badcafe, false, StatusPassed, 0, 0},
		{"bad CRC, markers", 0x0badcaff, true, StatusFound, 1, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc := &dissect.Connection{ID: 1, Transport: dissect.TransportIWARP, State: dissect.StateEstablished,
				IWARP: &dissect.IWARPInfo{Negotiated: true,
					Framing: [2]iwarp.Framing{{CRC: true, Markers: tc.markers}, {CRC: true}}}}
			dc.IWARP.MPA[1].Packet = 4
			r := NewRunner(Config{})
			p := &dissect.Packet{Number: 7, Conn: dc, Dir: dissect.DirClientToServer}
			p.IWARP.FPDUs = []dissect.IWARPFPDU{{Seq: 1000, ULPDULength: 40, CRC: tc.carried, CRCChecked: true, CRCComputed: 0x0badcafe}}
			r.Packet(p)
			res := r.Finish([]*dissect.Connection{dc})
			crc := status(t, res, 1, "MPA-CRC-BAD")
			if crc.Status != tc.crcStatus || crc.Checked != 1 {
				t.Errorf("MPA-CRC-BAD: %+v, want %s after 1 FPDU", crc, tc.crcStatus)
			}
			if tc.crcFindingPacket != 0 && (len(res.Findings) == 0 || res.Findings[0].First() == 0) {
				t.Errorf("no finding with packet %d: %+v", tc.crcFindingPacket, res.Findings)
			}
			mk := status(t, res, 1, "MPA-MARKERS")
			if mk.Findings != tc.markersFindings || mk.Status == StatusNotEvaluated {
				t.Errorf("MPA-MARKERS: %+v, want %d findings", mk, tc.markersFindings)
			}
		})
	}
	// Without CRC negotiated the rule says so instead of passing.
	dc := &dissect.Connection{ID: 1, Transport: dissect.TransportIWARP, IWARP: &dissect.IWARPInfo{Negotiated: true}}
	r := NewRunner(Config{})
	res := r.Finish([]*dissect.Connection{dc})
	if ch := status(t, res, 1, "MPA-CRC-BAD"); ch.Status != StatusNotEvaluated || ch.Reason == "" {
		t.Errorf("MPA-CRC-BAD without CRC negotiated: %+v", ch)
	}
}

// TestMPAMarkerBad: the first marker the engine found wrong
// (dissect.IWARPInfo.BadMarker, from TestMPABadMarkers's edited captures)
// is an error naming its packet and what it holds; without markers
// negotiated the rule is not evaluated.
func TestMPAMarkerBad(t *testing.T) {
	dc := &dissect.Connection{ID: 1, Transport: dissect.TransportIWARP, State: dissect.StateEstablished,
		IWARP: &dissect.IWARPInfo{Negotiated: true, Framing: [2]iwarp.Framing{{Markers: true, CRC: true}, {Markers: true, CRC: true}}}}
	dc.IWARP.BadMarker[0] = &dissect.BadMarker{Packet: 9, MarkerFault: iwarp.MarkerFault{Seq: 1540, FPDUSeq: 1488, Want: 52, Octets: [4]byte{0, 0, 0x34, 0}, Swapped: true}}
	res := NewRunner(Config{}).Finish([]*dissect.Connection{dc})
	var n int
	for _, f := range res.Findings {
		if f.Rule != "MPA-MARKER-BAD" {
			continue
		}
		n++
		if f.Severity != Error || f.First() != 9 || !strings.Contains(f.Message, "TCP sequence 1540") || !strings.Contains(f.Message, "little-endian") {
			t.Errorf("finding %+v", f)
		}
	}
	if ch := status(t, res, 1, "MPA-MARKER-BAD"); n != 1 || ch.Checked != 2 {
		t.Errorf("%d findings, %+v", n, ch)
	}
	dc.IWARP.Framing = [2]iwarp.Framing{}
	res = NewRunner(Config{}).Finish([]*dissect.Connection{dc})
	if ch := status(t, res, 1, "MPA-MARKER-BAD"); ch.Status != StatusNotEvaluated {
		t.Errorf("without markers: %+v", ch)
	}
}
