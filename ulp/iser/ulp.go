// Package iser is iSER, iSCSI Extensions for RDMA (RFC 7145), as a
// plug-in of the engine's upper-layer-protocol seam (dissect/ulp.go): it
// claims the connections that carry iSER, follows the login and the keys
// it negotiates, pairs every iSCSI task with its response by Initiator
// Task Tag (a dissect.Exchange each: SCSI commands, Login, Text, Logout,
// NOP, Task Management), attaches the target's RDMA Reads and Writes to
// the Write and Read STags the task's iSER header advertised through the
// seam's neutral Memory, and keeps per connection what its set-up and
// login negotiated and what its traffic did (Connection, analyze's
// "iser"). Its conformance rules are in rules.go, its fields in fields.go.
//
// The wire is package iscsi's; the specifications are RFC 7145 (iSER) and
// RFC 7143 (iSCSI).
package iser

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
)

// Name is the ULP's name, tshark's protocol name for iSER.
const Name = "iser"

// Port is iSCSI's well-known port (IANA "iscsi-target"), which iSER
// targets listen on too: the RDMA-CM service ID names it on InfiniBand and
// RoCE (tshark's iSER heuristic requires it), the TCP port on iWARP.
const Port = 3260

// New returns the iSER ULP for one engine, claiming connections to ports
// besides 3260 (flags may add them).
func New(ports ...uint16) dissect.ULP {
	return &ulp{ports: append([]uint16{Port}, ports...)}
}

type ulp struct{ ports []uint16 }

func (u *ulp) Name() string    { return Name }
func (u *ulp) Ports() []uint16 { return u.ports }

// Claim says Yes to a connection to one of the ports, or whose client's
// set-up consumer private data is an iSER CM REQ message (RFC 7145
// section 5.1.3: only its ZBVA and SIE bits may be set, the rest zero, at
// least one bit set: all-zero private data tells nothing), Maybe
// otherwise: an iSER initiator may send all-zero private data, or the
// capture may lack the set-up; the first Sends tell (Probe).
func (u *ulp) Claim(c *dissect.Connection) dissect.Verdict {
	for _, p := range u.ports {
		if c.ServicePort == p {
			return dissect.Yes
		}
	}
	if pd := &c.PrivateData[0]; pd.Seen && iscsi.LooksLikeCMRequest(pd.Consumer()) {
		return dissect.Yes
	}
	return dissect.Maybe
}

// Probe says Yes to a Send from the client that is an iSER control-type
// header (no reserved flag bit) followed by an iSCSI Login Request — the
// first PDU of every iSCSI connection (RFC 7143 section 6.1) — or an iSER
// Hello (iWARP, RFC 7145 section 9.3.1), and No to any other first Send of
// the client.
func (u *ulp) Probe(c *dissect.Connection, m *dissect.Message) dissect.Verdict {
	if m.Dir != dissect.DirClientToServer {
		return dissect.Maybe
	}
	var msg iscsi.Message
	if msg.DecodeFromBytes(m.Data) != nil && len(m.Data) < iscsi.ISERHeaderLen+iscsi.BHSLen {
		return dissect.No
	}
	switch {
	case msg.ISER.Opcode == iscsi.ISERHello && msg.Hello.MaxVer == iscsi.ISERVersion:
		return dissect.Yes
	case msg.ISER.Opcode == iscsi.ISERControl && msg.ISER.Flags&0x0f == 0 && msg.PDU.Opcode == iscsi.OpLogin &&
		msg.PDU.ITT != iscsi.ReservedTag:
		return dissect.Yes
	}
	return dissect.No
}

// Start begins the analysis of one iSER connection.
func (u *ulp) Start(c *dissect.Connection, env *dissect.Env) dissect.Session {
	s := &session{c: c, env: env, conn: &Connection{}}
	s.conn.setUp(c)
	c.ULPData = s.conn
	return s
}
