package main

import "testing"

// TestDiffSRPLogin: diff decodes SRP's login from the set-up's private
// data (issue 33's negotiation, for SRP). rxe-srp.pcap and
// rxe-srp-tmf.pcap are two real runs of the lab's SRP scenarios with the
// same login — the values read with tshark -x from the CM REQ's and REP's
// private data (testdata/pcaps/README.md): REQUESTED MAXIMUM INITIATOR TO
// TARGET IU LENGTH 8260, direct and indirect formats, IMMEDIATE DATA
// OFFSET 68; REQUEST LIMIT DELTA 128, 8260 octets both ways — and differ
// in none of it. rxe-srp-rej.pcap is a real refused login: its SRP_LOGIN_REJ
// (REASON 0x00010006 as both kernels logged, formats 0x0006) replaces the
// SRP_LOGIN_RSP, a negotiation change.
func TestDiffSRPLogin(t *testing.T) {
	const base = "../../testdata/pcaps/ulp/rxe-srp.pcap"
	code, d, errs := diffDoc(t, "--all", base, "../../testdata/pcaps/ulp/rxe-srp-tmf.pcap")
	if code != 1 || len(d.Pairs) != 1 {
		t.Fatalf("exit %d, %d pairs\n%s", code, len(d.Pairs), errs)
	}
	const scope = "connection roce srp :5555 #1"
	p := d.Pairs[0]
	for name, want := range map[string]string{
		"pd.client.srp.req_it_iu_len": "8260", "pd.client.srp.req_buf_fmt": "direct, indirect", "pd.client.srp.imm_data_offset": "68",
		"pd.server.srp.req_lim_delta": "128", "pd.server.srp.max_it_iu_len": "8260", "pd.server.srp.max_ti_iu_len": "8260",
		"pd.server.srp.sup_buf_fmt": "direct, indirect",
	} {
		if r := findRow(t, p, scope, name); r.Base != want || r.New != want || r.Changed {
			t.Errorf("%s: %+v, want %s unchanged", name, r, want)
		}
	}
	code, d, errs = diffDoc(t, "--all", base, "../../testdata/pcaps/ulp/rxe-srp-rej.pcap")
	if code != 1 || len(d.Pairs) != 1 {
		t.Fatalf("exit %d, %d pairs\n%s", code, len(d.Pairs), errs)
	}
	p = d.Pairs[0]
	if r := findRow(t, p, scope, "pd.reject.srp.login_rej.reason"); r.Base != "" || r.New != "0x00010006 (RDMA channel limit reached for this initiator)" || !r.Changed {
		t.Errorf("login rejection: %+v", r)
	}
	if r := findRow(t, p, scope, "pd.server.srp.req_lim_delta"); r.Base != "128" || r.New != "" || !r.Changed {
		t.Errorf("login response: %+v", r)
	}
	if r := findRow(t, p, scope, "pd.client.srp.req_it_iu_len"); r.Changed {
		t.Errorf("login request: %+v", r)
	}
}
