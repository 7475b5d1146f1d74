package check

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// severities returns, by connection ID, the severity of each finding of
// rule id.
func severities(res *Result, id string) map[int][]Severity {
	out := map[int][]Severity{}
	for _, f := range res.Findings {
		if f.Rule == id {
			out[f.Connection] = append(out[f.Connection], f.Severity)
		}
	}
	return out
}

// TestRefusalThenConnected: a refusal followed by an established
// connection between the same addresses is information, not a warning
// (issue 28: SMB Direct clients probe 5445, then 445). The real
// rxe-smbdirect capture, as tshark 4.0 decodes it: CM REQ to service ID
// 0x0000000001061545 (port 5445) refused by CM REJ reason 8 in packets 14
// and 2931, each followed by REQ/REP/RTU to port 445 (0x...01bd).
func TestRefusalThenConnected(t *testing.T) {
	res, _ := runStream(t, "ulp/rxe-smbdirect.pcap", 1, dissect.Options{}, nil)
	var rejPackets []int
	for _, f := range res.Findings {
		if f.Rule == "CM-REJ" {
			rejPackets = append(rejPackets, f.Packets...)
		}
	}
	if len(rejPackets) != 2 || rejPackets[0] != 14 || rejPackets[1] != 2931 {
		t.Fatalf("CM-REJ packets %v, want [14 2931]", rejPackets)
	}
	for conn, sev := range severities(res, "CM-REJ") {
		if len(sev) != 1 || sev[0] != Info {
			t.Errorf("connection %d: CM-REJ severities %v, want one info", conn, sev)
		}
	}
	for _, cr := range res.Connections {
		if cr.State == "rejected" && cr.Connection() != nil && cr.Connection().RetriedBy != cr.ID+1 {
			t.Errorf("connection %d: RetriedBy %d, want %d", cr.ID, cr.Connection().RetriedBy, cr.ID+1)
		}
	}
}

// TestIWARPRefused: a SYN to NFS/RDMA's port answered by a RST (RFC 9293
// section 3.10.7.1; the mutated captures' README says how they were made)
// is shown as a rejected iWARP connection: a warning alone, information
// when the connection that follows to the same server is established.
func TestIWARPRefused(t *testing.T) {
	for _, c := range []struct {
		file string
		want Severity
	}{
		{"mutated/siw-nfs3-head--syn-refused.pcap", Warning},
		{"mutated/siw-nfs3-head--syn-refused-then-connected.pcap", Info},
	} {
		res, _ := runStream(t, c.file, 1, dissect.Options{}, nil)
		got := severities(res, "IWARP-REFUSED")
		if len(got) != 1 || len(got[1]) != 1 || got[1][0] != c.want {
			t.Errorf("%s: IWARP-REFUSED by connection %v, want connection 1: %v", c.file, got, c.want)
		}
		for _, f := range res.Findings {
			if f.Rule == "IWARP-REFUSED" && (len(f.Packets) != 2 || f.Packets[0] != 36 || f.Packets[1] != 37) {
				t.Errorf("%s: packets %v, want the SYN and RST [36 37]", c.file, f.Packets)
			}
		}
		cr := res.Connections[0]
		if cr.Transport != "iwarp" || cr.State != "rejected" {
			t.Errorf("%s: connection 1 is %s %v, want a rejected iwarp connection", c.file, cr.Transport, cr.State)
		}
	}
}
