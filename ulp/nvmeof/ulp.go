// Package nvmeof is NVMe over Fabrics on RDMA (nvme-rdma) as a plug-in of
// the engine's upper-layer-protocol seam (dissect/ulp.go): it claims the
// connections that carry NVMe/RDMA queues, pairs every command capsule with
// its completion by CID (a dissect.Exchange each), attaches the RDMA Reads
// and Writes that moved a command's data to its keyed SGL data block
// through the seam's neutral Memory, and keeps per queue what its set-up
// negotiated and what its traffic did (Queue, analyze's "nvme_rdma"). Its
// conformance rules are in rules.go.
//
// The wire is package nvme's; the specifications are the NVMe RDMA
// Transport Specification 1.0 (set-up private data, keyed SGLs with
// Invalidate Key, Send With Invalidate), NVMe over Fabrics 1.1 and NVMe
// Base 2.0 (capsules, Fabrics commands, the queue model).
package nvmeof

import (
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/nvme"
)

// Name is the ULP's name, tshark's protocol name for NVMe/RDMA.
const Name = "nvme-rdma"

// Well-known ports (IANA): NVMe/RDMA I/O controllers listen on 4420
// ("nvme-rdma"), discovery controllers on 8009 ("nvme-disc").
const (
	Port          = 4420
	DiscoveryPort = 8009
)

// New returns the NVMe/RDMA ULP for one engine, claiming connections to
// ports besides the well-known ones (flags may add them).
func New(ports ...uint16) dissect.ULP {
	addPorts(ports) // for the CM private data fields (fields.go setUpOf)
	return &ulp{ports: append([]uint16{Port, DiscoveryPort}, ports...)}
}

type ulp struct {
	ports []uint16
	// ctrls are the controllers of the engine's connections.
	ctrls controllers
	// lastTime and lastPacket: the latest packet any queue's session
	// was handed (what the capture shows of NVMe/RDMA until now), the
	// end of the silence a closing admin queue's Keep Alive Timer is
	// judged over.
	lastTime   time.Time
	lastPacket int
}

// saw notes packet n at t as the latest NVMe/RDMA traffic.
func (u *ulp) saw(n int, t time.Time) {
	if n > u.lastPacket {
		u.lastPacket, u.lastTime = n, t
	}
}

func (u *ulp) Name() string    { return Name }
func (u *ulp) Ports() []uint16 { return u.ports }

// Claim says Yes to a connection to one of the ports, or whose client's
// set-up consumer private data is an NVMe/RDMA CM REQ (RECFMT 0 and
// plausible queue sizes; NVMe RDMA Transport 1.0 "RDMA_CM_REQUEST Private
// Data"), and No to one whose set-up carried other private data; Maybe
// without set-up in the capture.
func (u *ulp) Claim(c *dissect.Connection) dissect.Verdict {
	for _, p := range u.ports {
		if c.ServicePort == p {
			return dissect.Yes
		}
	}
	if pd := &c.PrivateData[0]; pd.Seen {
		if nvme.LooksLikeCMRequest(pd.Consumer()) {
			return dissect.Yes
		}
		return dissect.No
	}
	return dissect.Maybe
}

// Probe says Yes to a Send from the client that is a Fabrics Connect
// command capsule (the first capsule on every NVMe/RDMA queue: NVMe over
// Fabrics 1.1 "Connect Command"), No to any other first Send of the
// client.
func (u *ulp) Probe(c *dissect.Connection, m *dissect.Message) dissect.Verdict {
	if m.Dir != dissect.DirClientToServer {
		return dissect.Maybe
	}
	var cmd nvme.Command
	if len(m.Data) >= nvme.SQELen && cmd.DecodeFromBytes(m.Data) == nil &&
		cmd.IsFabrics() && cmd.FCTYPE == nvme.FabricsConnect && cmd.Connect().RECFMT == 0 {
		return dissect.Yes
	}
	return dissect.No
}

// Start begins the analysis of one queue.
func (u *ulp) Start(c *dissect.Connection, env *dissect.Env) dissect.Session {
	s := &session{u: u, c: c, env: env, q: &Queue{}}
	s.q.setUp(c)
	c.ULPData = s.q
	return s
}

// SetUpFailed records the refusal of a queue (dissect.SetUpFailer): a
// connection whose set-up was rejected, or never answered, carries no
// capsule and starts no session, yet its RDMA_CM_REJECT's STS says why
// the controller refused it.
func (u *ulp) SetUpFailed(c *dissect.Connection) {
	q := &Queue{}
	q.setUp(c)
	q.rejected(c)
	c.ULPData = q
}
