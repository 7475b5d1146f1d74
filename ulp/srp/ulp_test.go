package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// TestClaimAndProbe: which connections SRP takes. The private data are
// the capture's (tshark's octets, rxe-srp.cm.tsv), the same login in the
// SRP_LOGIN_REQ IU layout an InfiniBand CM REQ carries (service ID: the
// target's ID extension, as ib_srpt listens), and other protocols'; the
// first Sends the capture's first SRP_CMD (rxe-srp.sends.tsv, frame 20)
// and others.
func TestClaimAndProbe(t *testing.T) {
	var req, rep []byte
	for _, r := range tsv(t, "rxe-srp.cm.tsv") {
		if v := r["infiniband.cm.req.ip_cm.private"]; v != "" {
			req = unhex(t, v)
		}
		if v := r["infiniband.cm.rep.private"]; v != "" {
			rep = unhex(t, v)
		}
	}
	// The IU layout: opcode, 7 reserved, tag, REQUESTED MAXIMUM IU, 4
	// reserved, REQUIRED BUFFER FORMATS, flags, reserved, IMMEDIATE DATA
	// OFFSET, 2 reserved, the port IDs; then the CM REQ's zero padding.
	iu := make([]byte, 92)
	copy(iu[8:16], req[0:8])
	copy(iu[16:20], req[12:16])
	copy(iu[24:26], req[8:10])
	iu[26] = req[10]
	copy(iu[28:30], req[48:50])
	copy(iu[32:64], req[16:48])
	const cmaSID, ibSID = 0x00000000010615b3, 0x505400fffe000201
	conn := func(tr dissect.Transport, sid uint64, pd0, pd1 []byte) *dissect.Connection {
		c := &dissect.Connection{Transport: tr, ServiceID: sid, ServicePort: uint16(sid)}
		if pd0 != nil {
			c.PrivateData[0] = dissect.PrivateData{Seen: true, Bytes: pd0}
		}
		if pd1 != nil {
			c.PrivateData[1] = dissect.PrivateData{Seen: true, Bytes: pd1}
		}
		return c
	}
	u := srpulp.New()
	for _, tc := range []struct {
		name string
		c    *dissect.Connection
		want dissect.Verdict
	}{
		{"RDMA/CM login (RoCE)", conn(dissect.TransportRoCE, cmaSID, req, rep), dissect.Yes},
		{"RDMA/CM login (iWARP MPA)", conn(dissect.TransportIWARP, 0, req, rep), dissect.Yes},
		{"IB CM login (the IU)", conn(dissect.TransportRoCE, ibSID, iu, rep), dissect.Yes},
		{"the IU read as the RDMA/CM layout", conn(dissect.TransportRoCE, cmaSID, iu[:56], nil), dissect.No},
		{"NVMe/RDMA private data", conn(dissect.TransportRoCE, 0x10611b4, append([]byte{0, 0, 0, 0, 32, 0, 31, 0}, make([]byte, 24)...), nil), dissect.No},
		{"RPC-over-RDMA private data", conn(dissect.TransportRoCE, 0x1064e51, []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 0, 0}, nil), dissect.No},
		{"no set-up", conn(dissect.TransportRoCE, 0, nil, nil), dissect.Maybe},
		{"only the REP, an SRP_LOGIN_RSP", conn(dissect.TransportRoCE, 0, nil, rep), dissect.Yes},
	} {
		if got := u.Claim(tc.c); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if srpulp.New(5555).Claim(conn(dissect.TransportRoCE, cmaSID, nil, nil)) != dissect.Yes {
		t.Error("an added port is not claimed")
	}
	var cmd []byte
	for _, r := range tsv(t, "rxe-srp.sends.tsv") {
		if r["frame.number"] == "20" {
			cmd = unhex(t, r["data.data"])
		}
	}
	tmf := make([]byte, 48)
	tmf[0], tmf[8], tmf[30] = 0x01, 0x05, 0x08 // SRP_TSK_MGMT, tag 5, LOGICAL UNIT RESET
	c := conn(dissect.TransportRoCE, 0, nil, nil)
	for _, tc := range []struct {
		name string
		dir  dissect.Direction
		data []byte
		want dissect.Verdict
	}{
		{"SRP_CMD", dissect.DirClientToServer, cmd, dissect.Yes},
		{"SRP_TSK_MGMT", dissect.DirClientToServer, tmf, dissect.Yes},
		{"SRP_CMD cut before its descriptor's end", dissect.DirClientToServer, cmd[:60], dissect.No},
		{"SRP_CMD with a reserved octet set", dissect.DirClientToServer, append([]byte{2, 0, 1}, cmd[3:]...), dissect.No},
		{"iSER Login", dissect.DirClientToServer, append([]byte{0x10}, make([]byte, 75)...), dissect.No},
		{"NVMe Connect", dissect.DirClientToServer, append([]byte{0x7f, 0x40, 0, 0, 1}, make([]byte, 59)...), dissect.No},
		{"a Send of the target", dissect.DirServerToClient, cmd, dissect.Maybe},
	} {
		m := &dissect.Message{Conn: c, Dir: tc.dir, Data: tc.data, Length: len(tc.data)}
		if got := u.Probe(c, m); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestOtherCapturesUntouched: on the NFS, NVMe/RDMA, SMB Direct and iSER
// captures SRP claims no connection and makes no exchange.
func TestOtherCapturesUntouched(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "ulp/rxe-nvmeof.pcap", "ulp/siw-nvmeof.pcap", "ulp/rxe-smbdirect.pcap", "ulp/rxe-iser.pcap", "rxe-rping.pcap", "rxe-ib_send_bw.pcap"} {
		e, xs, _ := run(t, name)
		for _, c := range e.Conns.Connections() {
			if c.ULP == srpulp.Name {
				t.Errorf("%s connection %d: claimed by SRP", name, c.ID)
			}
		}
		for _, x := range xs {
			if x.ULP == srpulp.Name {
				t.Fatalf("%s: an SRP exchange", name)
			}
		}
	}
}
