// Package smbdirect is SMB Direct ([MS-SMBD], SMB2 over RDMA) as a
// plug-in of the engine's upper-layer-protocol seam (dissect/ulp.go): it
// claims the connections that carry SMB Direct, reads the negotiation of
// each (both sides' sizes and credits), keeps the credit accounting of
// both directions over time, reassembles fragmented messages by
// RemainingDataLength within the engine's buffer budget, pairs every SMB2
// request with its response by MessageId (a dissect.Exchange each; an
// interim STATUS_PENDING response does not end it), attaches the RDMA
// Reads and Writes of the server to the buffer descriptors of the READ and
// WRITE requests through the seam's neutral Memory, and records every Send
// With Invalidate. Analyze shows its summary under "smb_direct"; its
// conformance rules are in rules.go, its fields in fields.go.
//
// The wire is package smbdirect's (the root one); the specifications are
// [MS-SMBD] and [MS-SMB2].
package smbdirect

import (
	"github.com/rdmashark/rdmashark/dissect"
	smbd "github.com/rdmashark/rdmashark/smbdirect"
)

// Name is the ULP's name, tshark's protocol name for SMB Direct.
const Name = "smb_direct"

// Well-known ports ([MS-SMBD] 1.9, [MS-SMB2] 2.1): SMB Direct on iWARP
// listens on TCP port 5445; on InfiniBand and RoCE the RDMA-CM service
// port is 445 (Linux's cifs client tries 5445 first there too).
const (
	Port      = 445
	IWARPPort = 5445
)

// New returns the SMB Direct ULP for one engine, claiming connections to
// ports besides the well-known ones (flags may add them).
func New(ports ...uint16) dissect.ULP {
	return &ulp{ports: append([]uint16{Port, IWARPPort}, ports...)}
}

type ulp struct{ ports []uint16 }

func (u *ulp) Name() string    { return Name }
func (u *ulp) Ports() []uint16 { return u.ports }

// Claim says Yes to a connection to one of the ports. SMB Direct carries
// no private data in its set-up, so any other connection is a Maybe: its
// first Sends are probed.
func (u *ulp) Claim(c *dissect.Connection) dissect.Verdict {
	for _, p := range u.ports {
		if c.ServicePort == p {
			return dissect.Yes
		}
	}
	if pd := &c.PrivateData[0]; pd.Seen && len(pd.Consumer()) > 0 {
		return dissect.No
	}
	return dissect.Maybe
}

// Probe says Yes to a first Send of the client that is a plausible
// Negotiate Request (20 octets, versions around 0x0100: [MS-SMBD] 2.2.1),
// No to any other Send of the client.
func (u *ulp) Probe(c *dissect.Connection, m *dissect.Message) dissect.Verdict {
	if m.Dir != dissect.DirClientToServer {
		return dissect.Maybe
	}
	if smbd.LooksLikeNegotiateRequest(m.Data) {
		return dissect.Yes
	}
	return dissect.No
}

// Start begins the analysis of one connection.
func (u *ulp) Start(c *dissect.Connection, env *dissect.Env) dissect.Session {
	s := &session{c: c, env: env, sum: &Conn{}}
	c.ULPData = s.sum
	return s
}
