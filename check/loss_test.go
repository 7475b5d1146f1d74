package check

import (
	"slices"
	"strings"
	"testing"
)

// errorRules returns the rules with error findings.
func errorRules(res *Result) []string {
	var ids []string
	for _, f := range res.Findings {
		if f.Severity == Error && !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestLossyCapturesNoNewErrors: the lossy captures (Linux rxe and siw under
// netem loss, every workload completed) show no error the loss-free capture
// of the same workload lacks: go-back-N replays are not RDMA after the
// Reply, not second messages, not differing retransmissions; every NAK
// PSN sequence error was recovered.
func TestLossyCapturesNoNewErrors(t *testing.T) {
	pairs := [][2]string{
		{"lossy/rxe-nfs3-lossy.pcap", "rxe-nfs3.pcap"},
		{"lossy/rxe-ib_write_bw-lossy.pcap", "rxe-ib_write_bw.pcap"},
		{"lossy/rxe-ib_read_bw-lossy.pcap", ""}, // no loss-free rxe ib_read_bw: no error at all
		{"lossy/siw-nfs3-lossy.pcap", "siw-nfs3.pcap"},
		{"lossy/siw-ib_write_bw-lossy.pcap", ""},
	}
	for _, p := range pairs {
		lossy := runFile(t, "../testdata/pcaps/"+p[0], Config{})
		var base []string
		if p[1] != "" {
			base = errorRules(runFile(t, "../testdata/pcaps/"+p[1], Config{}))
		}
		for _, id := range errorRules(lossy) {
			if !slices.Contains(base, id) {
				for _, f := range lossy.Findings {
					if f.Rule == id {
						t.Errorf("%s: %s error the loss-free capture lacks: %v %s", p[0], id, f.Packets, f.Message)
						break
					}
				}
			}
		}
		recovered := 0
		for _, f := range lossy.Findings {
			if f.Rule != "NAK" || !strings.Contains(f.Message, "PSN sequence error") {
				continue
			}
			switch {
			case strings.Contains(f.Message, "; recovered") && f.Severity == Info:
				recovered++
			default:
				t.Errorf("%s: NAK not recovered: %v %s", p[0], f.Packets, f.Message)
			}
		}
		if strings.HasPrefix(p[0], "lossy/rxe-ib_write_bw") && recovered == 0 {
			t.Errorf("%s: no recovered NAK", p[0])
		}
		t.Logf("%s: errors %v (loss-free: %v), %d NAKs recovered", p[0], errorRules(lossy), base, recovered)
	}
}
