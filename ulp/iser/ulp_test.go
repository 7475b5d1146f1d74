package iser_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/iser"
)

// TestClaimAndProbe: which connections iSER takes. The private data are
// the capture's (flags 0x80, then zeros), NVMe/RDMA's admin-queue REQ and
// RFC 8797's; the first Sends a Login Request (frame 29's iSER and BHS
// octets) and others.
func TestClaimAndProbe(t *testing.T) {
	u := iser.New()
	conn := func(port uint16, pd []byte) *dissect.Connection {
		c := &dissect.Connection{ServicePort: port}
		if pd != nil {
			c.PrivateData[0] = dissect.PrivateData{Seen: true, Bytes: pd}
		}
		return c
	}
	iserPD := append([]byte{0x80}, make([]byte, 55)...)
	for _, tc := range []struct {
		name string
		c    *dissect.Connection
		want dissect.Verdict
	}{
		{"port 3260", conn(3260, nil), dissect.Yes},
		{"iSER private data on another port", conn(5000, iserPD), dissect.Yes},
		{"all-zero private data", conn(5000, make([]byte, 56)), dissect.Maybe},
		{"NVMe/RDMA private data", conn(4420, []byte{0, 0, 0, 0, 32, 0, 31, 0}), dissect.Maybe},
		{"RPC-over-RDMA private data", conn(20049, []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 0, 0}), dissect.Maybe},
		{"no set-up", conn(0, nil), dissect.Maybe},
	} {
		if got := u.Claim(tc.c); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if iser.New(9999).Claim(conn(9999, nil)) != dissect.Yes {
		t.Error("an added port is not claimed")
	}
	login := pdu(ctrl, 0, 0, 0, 0, 0x43, 0x87, 0, []byte("InitiatorName=iqn.2026-11.lab:client\x00"))
	scsi := pdu(ctrl|rsv, 0, 0, 0x157c, 0x1000, opCmd, 0xc1, 0x01000000, nil)
	c := conn(0, nil)
	for _, tc := range []struct {
		name string
		dir  dissect.Direction
		data []byte
		want dissect.Verdict
	}{
		{"Login Request", dissect.DirClientToServer, login, dissect.Yes},
		{"iSER Hello", dissect.DirClientToServer, []byte{0x20, 0xaa, 0, 16, 0, 0, 0, 0}, dissect.Yes},
		{"a SCSI command first", dissect.DirClientToServer, scsi, dissect.No},
		{"a short Send", dissect.DirClientToServer, login[:40], dissect.No},
		{"reserved iSER flag bits", dissect.DirClientToServer, append([]byte{0x13}, login[1:]...), dissect.No},
		{"NVMe Connect", dissect.DirClientToServer, append([]byte{0x7f, 0x40, 0, 0, 1}, make([]byte, 59)...), dissect.No},
		{"a Send of the server", dissect.DirServerToClient, login, dissect.Maybe},
	} {
		m := &dissect.Message{Conn: c, Dir: tc.dir, Data: tc.data, Length: len(tc.data)}
		if got := u.Probe(c, m); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestOtherCapturesUntouched: on the NFS, NVMe/RDMA and SMB Direct
// captures iSER claims no connection and makes no exchange (NVMe/RDMA's
// and SMB Direct's connections carry no ULP here: their plug-ins are not
// registered in this test).
func TestOtherCapturesUntouched(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "ulp/rxe-nvmeof.pcap", "ulp/siw-nvmeof.pcap", "ulp/rxe-smbdirect.pcap"} {
		e, xs, _ := run(t, name)
		for _, c := range e.Conns.Connections() {
			if c.ULP == iser.Name {
				t.Errorf("%s connection %d: claimed by iSER", name, c.ID)
			}
		}
		for _, x := range xs {
			if x.ULP == iser.Name {
				t.Fatalf("%s: an iSER exchange", name)
			}
		}
	}
}

// TestRecordsOfOnePacketStayValid: on iWARP one TCP segment can complete
// several Sends; the record of a response keeps its task until the next
// packet, even when a later Send of the same packet opens a new task.
func TestRecordsOfOnePacketStayValid(t *testing.T) {
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportIWARP, ServicePort: iser.Port, State: dissect.StateEstablished}
	s := iser.New().Start(c, &dissect.Env{})
	p := &dissect.Packet{Number: 5}
	send := func(dir dissect.Direction, b []byte) {
		s.Message(p, &dissect.Message{Conn: c, Dir: dir, Packets: []int{p.Number}, Data: b, Length: len(b)})
	}
	send(dissect.DirClientToServer, pdu(ctrl|rsv, 0, 0, 0x10, 0, opCmd, 0xc1, 7, nil))
	p.Number, p.ULP = 6, nil
	send(dissect.DirServerToClient, pdu(ctrl, 0, 0, 0, 0, opResp, 0x80, 7, nil))
	send(dissect.DirClientToServer, pdu(ctrl|rsv, 0, 0, 0x11, 0, opCmd, 0xc1, 8, nil))
	if len(p.ULP) != 2 {
		t.Fatalf("%d records", len(p.ULP))
	}
	resp, cmd := p.ULP[0].(*iser.PDU), p.ULP[1].(*iser.PDU)
	if resp.Task == nil || resp.Task.ITT != 7 || cmd.Task == nil || cmd.Task.ITT != 8 || resp.Task == cmd.Task {
		t.Errorf("response's task %+v, command's %+v", resp.Task, cmd.Task)
	}
}
