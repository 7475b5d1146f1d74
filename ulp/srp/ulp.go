// Package srp is the SCSI RDMA Protocol (SRP, T10 SRP and SRP-2: Linux's
// ib_srp initiator and ib_srpt target) as a plug-in of the engine's
// upper-layer-protocol seam (dissect/ulp.go): it claims the connections
// whose set-up carries an SRP_LOGIN_REQ (in the InfiniBand CM REQ, or the
// RDMA/CM REQ or MPA Request of RoCE and iWARP), or whose first Sends are
// SRP_CMDs; reads the login each negotiated (maximum IU lengths, buffer
// formats, immediate data, the initial request limit); keeps the
// initiator's request limit (credits) as the target's SRP_LOGIN_RSP,
// SRP_RSP, SRP_CRED_REQ and SRP_AER_REQ grant it and its SRP_CMDs and
// SRP_TSK_MGMTs spend it; pairs every command with its SRP_RSP by tag (a
// dissect.Exchange each, named after the CDB's operation code); attaches
// the target's RDMA Reads and Writes to the data buffer descriptors the
// command advertised through the seam's neutral Memory; and keeps the
// latency per CDB operation code. Analyze shows its summary under "srp";
// its conformance rules are in rules.go, its fields in fields.go.
//
// The wire is package srp's (the root one).
package srp

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/srp"
)

// Name is the ULP's name. tshark 4.0 has no SRP dissector; its fields are
// rdmashark.srp.*.
const Name = "srp"

// New returns the SRP ULP for one engine. SRP has no well-known port (it
// is found by its login in the set-up); ports, when given, are claimed
// outright and are the iWARP hint ports.
func New(ports ...uint16) dissect.ULP {
	return &ulp{ports: ports}
}

type ulp struct{ ports []uint16 }

func (u *ulp) Name() string    { return Name }
func (u *ulp) Ports() []uint16 { return u.ports }

// rdmaCM reports whether the connection's set-up went through RDMA/CM, so
// that the login request is in Linux's RDMA/CM layout: an iWARP MPA
// Request, or a CM REQ whose service ID is in the RDMA IP CM range.
func rdmaCM(c *dissect.Connection) bool {
	return c.Transport == dissect.TransportIWARP || pvtdata.ServiceID(c.ServiceID).IsIP()
}

// login decodes the client's set-up private data as an SRP_LOGIN_REQ.
func login(c *dissect.Connection, l *srp.LoginRequest) (seen bool, err error) {
	pd := &c.PrivateData[0]
	if !pd.Seen {
		return false, nil
	}
	if rdmaCM(c) {
		return true, l.DecodeRDMACM(pd.Consumer())
	}
	return true, l.DecodeFromBytes(pd.Consumer())
}

// Claim says Yes to a connection to one of the ports, or whose client's
// set-up private data is a plausible SRP_LOGIN_REQ (SRP: the login
// request is the CM REQ's private data; Linux sends it over RDMA/CM too,
// in its struct srp_login_req_rdma layout), and No to one whose set-up
// carried other private data: an SRP RDMA channel is always logged in by
// its set-up. Without the set-up in the capture: Maybe, the first Sends
// tell (Probe).
func (u *ulp) Claim(c *dissect.Connection) dissect.Verdict {
	for _, p := range u.ports {
		if c.ServicePort == p {
			return dissect.Yes
		}
	}
	var l srp.LoginRequest
	seen, err := login(c, &l)
	switch {
	case !seen:
		if pd := &c.PrivateData[1]; pd.Seen {
			var r srp.LoginResponse
			if r.DecodeFromBytes(pd.Consumer()) == nil && r.Opcode == srp.OpLoginRsp {
				return dissect.Yes
			}
		}
		return dissect.Maybe
	case err == nil && l.Plausible():
		return dissect.Yes
	}
	return dissect.No
}

// Probe says Yes to a Send of the initiator that is a well-formed SRP_CMD
// or SRP_TSK_MGMT (its reserved octets zero, its descriptors filling the
// IU), No to any other Send of the initiator.
func (u *ulp) Probe(c *dissect.Connection, m *dissect.Message) dissect.Verdict {
	if m.Dir != dissect.DirClientToServer {
		return dissect.Maybe
	}
	if LooksLikeCommand(m.Data) {
		return dissect.Yes
	}
	return dissect.No
}

// LooksLikeCommand reports whether b is a plausible SRP_CMD or
// SRP_TSK_MGMT: the type code, reserved octets zero, descriptor formats
// defined, and (SRP_CMD) the descriptors ending where the IU does, or
// immediate data following them.
func LooksLikeCommand(b []byte) bool {
	if len(b) < srp.CommandLen {
		return false
	}
	zero := func(from, to int) bool {
		for _, v := range b[from:to] {
			if v != 0 {
				return false
			}
		}
		return true
	}
	switch srp.Opcode(b[0]) {
	case srp.OpTskMgmt:
		return len(b) == srp.CommandLen && zero(2, 8) && zero(16, 20) && zero(28, 30) && b[31] == 0 && zero(40, 48)
	case srp.OpCmd:
		if !zero(2, 5) || !zero(16, 20) || b[28] != 0 || b[30] != 0 || b[5]>>4 > 3 || b[5]&0xf > 3 {
			return false
		}
		var cmd srp.Command
		if cmd.DecodeFromBytes(b) != nil {
			return false
		}
		return cmd.Len == len(b) || cmd.DataOut.Format == srp.FormatImmediate && len(b) > cmd.Len
	}
	return false
}

// Start begins the analysis of one SRP connection.
func (u *ulp) Start(c *dissect.Connection, env *dissect.Env) dissect.Session {
	s := &session{c: c, env: env, conn: &Connection{}, targetReqs: map[uint64]srp.Opcode{}}
	s.conn.setUp(c)
	c.ULPData = s.conn
	return s
}

// SetUpFailed records the refusal of a login (dissect.SetUpFailer): a
// channel whose set-up was rejected, or never answered, carries no IU
// and starts no session, yet its SRP_LOGIN_REJ says why the target
// refused it.
func (u *ulp) SetUpFailed(c *dissect.Connection) {
	cn := &Connection{}
	cn.setUp(c)
	cn.rejected(c)
	c.ULPData = cn
}
