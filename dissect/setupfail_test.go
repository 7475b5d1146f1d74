package dissect

import "testing"

// failULP claims the connections to port (Yes) and, as a SetUpFailer,
// records the ones whose set-up failed.
type failULP struct {
	testULP
	port   uint16
	failed []*Connection
}

func (u *failULP) Name() string { return "fail" }
func (u *failULP) Claim(c *Connection) Verdict {
	if c.ServicePort == u.port {
		return Yes
	}
	return No
}
func (u *failULP) SetUpFailed(c *Connection) { u.failed = append(u.failed, c) }

// TestSetUpFailed: a connection refused by a CM REJ (the lab's real
// refused SRP login, rxe-srp-rej.pcap: REQ in frame 13, REJ in 14 with
// an SRP_LOGIN_REJ as private data) carries no Send; the SetUpFailer that
// claims it hears of it once, with the REJ's private data kept, and the
// connection is its. A healthy capture's connections (rxe-srp.pcap) are
// never reported.
func TestSetUpFailed(t *testing.T) {
	u := &failULP{port: 5555}
	e, _ := runCapture(t, "ulp/rxe-srp-rej.pcap", Options{ULPs: []ULP{u}}, nil)
	if len(u.failed) != 1 {
		t.Fatalf("%d set-up failures, want 1", len(u.failed))
	}
	c := u.failed[0]
	pd, d := c.RejectPrivateData()
	// The REJ's private data starts with the SRP_LOGIN_REJ's type code
	// 0xc2 and reason 0x00010006 (tshark -x of frame 14).
	if c.ULP != "fail" || c.State != StateRejected || pd == nil || d != DirServerToClient || pd.Packet != 14 ||
		len(pd.Bytes) != 148 || pd.Bytes[0] != 0xc2 || pd.Bytes[7] != 0x06 {
		t.Errorf("connection %+v, REJ private data %+v from %v", c, pd, d)
	}
	if e.Conns.Connections()[0] != c {
		t.Error("not the table's connection")
	}

	// A ULP before it that claims the connection but is no SetUpFailer
	// keeps it: no call, no ULP named.
	first := &failULP{port: 5555}
	plain := &struct{ ULP }{first}
	u = &failULP{port: 5555}
	e, _ = runCapture(t, "ulp/rxe-srp-rej.pcap", Options{ULPs: []ULP{plain, u}}, nil)
	if len(u.failed) != 0 || len(first.failed) != 0 || e.Conns.Connections()[0].ULP != "" {
		t.Errorf("calls %d, %d; ULP %q", len(u.failed), len(first.failed), e.Conns.Connections()[0].ULP)
	}

	u = &failULP{port: 5555}
	if runCapture(t, "ulp/rxe-srp.pcap", Options{ULPs: []ULP{u}}, nil); len(u.failed) != 0 {
		t.Errorf("%d set-up failures on a healthy capture", len(u.failed))
	}
}
