package nvmeof

import (
	"strconv"
	"strings"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/nvme"
)

// Controller is one NVMe controller as the capture shows it: an
// association of an admin queue (QID 0) and the I/O queues a host
// connected to it (NVMe over Fabrics 1.1 "Controller Model",
// "Connect Command"). The admin queue's Connect names the host and
// subsystem NQNs in its data and gets the CNTLID in its completion (the
// controller the target allocated, dynamic model); every I/O queue's
// Connect names that CNTLID, with the same NQNs, in its data. Every queue
// of one controller points to the same Controller (Queue.Controller), so
// analyze's "nvme_rdma" of each queue shows the controller and all its
// queues.
type Controller struct {
	// ID numbers the controllers of the capture, 1, 2, ... in the order
	// their first queue connected (the CNTLID need not be unique across
	// targets).
	ID      int    `json:"id"`
	CNTLID  uint16 `json:"cntlid"`
	HostNQN string `json:"host_nqn,omitempty"`
	SubNQN  string `json:"subsystem_nqn,omitempty"`
	HostID  string `json:"host_id,omitempty"`
	// Target is the controller side's address.
	Target string `json:"target"`
	// AdminConnection is the connection of the admin queue, null when
	// the capture does not hold its Connect; KATO its Keep Alive Timeout
	// (ms, 0: none) as that Connect set it.
	AdminConnection *int   `json:"admin_connection"`
	KATO            uint32 `json:"kato_ms"`
	// Queues are the queues connected to it, in the order they connected.
	Queues []QueueRef `json:"queues"`

	admin *dissect.Connection
	key   ctrlKey
	state ctrlState
	// assoc names it in its exchanges (dissect.Exchange.Association).
	assoc dissect.Association
}

// association returns x's name for its exchanges: host NQN, subsystem
// NQN, CNTLID (nil for no controller).
func (x *Controller) association() *dissect.Association {
	if x == nil {
		return nil
	}
	return &x.assoc
}

// QueueRef names one queue of a controller: its QID and the connection it
// rides on.
type QueueRef struct {
	QID        uint16 `json:"qid"`
	Connection int    `json:"connection"`
}

// ctrlState is what the sessions of a controller's queues share while the
// capture is read.
type ctrlState struct {
	// all are the engine's controllers (the queues no controller names).
	all *controllers
	// The Keep Alive Timer as the capture shows it (NVMe Base 2.0 "Keep
	// Alive Timer"): kaLive from the admin Connect's successful
	// completion (the timer starts) to the end of the admin queue's
	// connection; kaAt and kaPacket when it last restarted.
	kaLive   bool
	kaAt     time.Time
	kaPacket int
	// tbkas is the admin queue's Identify Controller's CTRATT.TBKAS:
	// tbkasUnknown until one is seen.
	tbkas tbkas
	// conns are the connections of its queues.
	conns []*dissect.Connection
	// The controller's enable as its admin queue shows it (NVMe Base 2.0
	// "Controller Initialization"; NVMe over Fabrics 1.1 "Property Set",
	// "Property Get"): enabled once a Property Set of CC with EN 1
	// completed, cleared by one with EN 0; readyPacket the completion of
	// the Property Get of CSTS that then showed RDY 1 (0: none yet).
	enabled     bool
	readyPacket int
	// shutdown: the host sent a Property Set of CC with SHN not 0 (NVMe
	// Base 2.0 "Controller Shutdown"): the association is ending, and
	// the silence after it is no Keep Alive Timer's to judge.
	shutdown bool
}

type tbkas uint8

const (
	tbkasUnknown tbkas = iota
	tbkasYes
	tbkasNo
)

// restartsOn reports whether a command restarts the controller's Keep
// Alive Timer: a Keep Alive command always; any command, of any queue,
// under Traffic Based Keep Alive (CTRATT.TBKAS), which is taken to be
// in effect while the capture holds no Identify Controller that says
// otherwise (so that a capture that lacks it never makes a finding).
func (st *ctrlState) restartsOn(keepAlive bool) bool {
	return keepAlive || st.tbkas != tbkasNo
}

// ctrlKey identifies a controller: the target's address, the host and
// subsystem NQNs and the CNTLID.
type ctrlKey struct {
	target, host, sub string
	cntlid            uint16
}

// controllers is the engine-wide registry of controllers (one per ULP
// value, that is per engine).
type controllers struct {
	byKey map[ctrlKey]*Controller
	n     int
	// unknown counts, per target address, the queues whose Connect the
	// capture lacks (their controller unknown).
	unknown map[string]int
}

// unnamed counts a queue to target whose controller the capture cannot
// name (its Connect is not in the capture).
func (cs *controllers) unnamed(target string) {
	if cs.unknown == nil {
		cs.unknown = map[string]int{}
	}
	cs.unknown[target]++
}

// join adds queue q (on connection c, connected with QID qid) to the
// controller of key k: a new one for an admin queue (a new association,
// even with a CNTLID seen before), the current one for an I/O queue (a
// new one, without admin queue, when the capture lacks it).
func (cs *controllers) join(k ctrlKey, c *dissect.Connection, qid uint16, q *Queue) *Controller {
	if cs.byKey == nil {
		cs.byKey = map[ctrlKey]*Controller{}
	}
	x := cs.byKey[k]
	if x == nil || qid == 0 && x.admin != nil {
		cs.n++
		x = &Controller{ID: cs.n, CNTLID: k.cntlid, HostNQN: k.host, SubNQN: k.sub, Target: k.target, key: k,
			assoc: dissect.Association{Initiator: k.host, Target: k.sub, ID: uint32(k.cntlid)}}
		x.state.all = cs
		cs.byKey[k] = x
	}
	if qid == 0 {
		id := c.ID
		x.AdminConnection, x.admin = &id, c
		if q.Connect != nil {
			x.KATO = q.Connect.KATO
		}
		if q.Identify != nil {
			x.state.setTBKAS(q.Identify.CTRATT)
		}
	}
	if x.HostID == "" && q.Connect != nil {
		x.HostID = q.Connect.HostID
	}
	x.Queues = append(x.Queues, QueueRef{QID: qid, Connection: c.ID})
	x.state.conns = append(x.state.conns, c)
	return x
}

// end forgets controller x, whose admin queue's connection ended: the
// registry holds the controllers still connected only.
func (cs *controllers) end(x *Controller) {
	if cs.byKey[x.key] == x {
		delete(cs.byKey, x.key)
	}
}

// find returns the current controller of key k, nil when none.
func (cs *controllers) find(k ctrlKey) *Controller { return cs.byKey[k] }

// label is the controller as the text table names it: its number, CNTLID
// and, on the admin queue's row, the connections of its queues.
func (x *Controller) label(admin bool) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(x.ID))
	b.WriteString(" (cntlid ")
	b.WriteString(strconv.Itoa(int(x.CNTLID)))
	if admin {
		b.WriteString("; conns")
		for _, r := range x.Queues {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(r.Connection))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func (st *ctrlState) setTBKAS(ctratt uint32) {
	st.tbkas = tbkasNo
	if ctratt&nvme.CTRATTTBKAS != 0 {
		st.tbkas = tbkasYes
	}
}

// ioLost reports whether the capture lost part of the host's stream of an
// I/O queue of the controller between packets from and to, or cannot
// tell (PSNs skipped): a command that restarted the Keep Alive Timer
// under Traffic Based Keep Alive may be what it lost.
func (x *Controller) ioLost(from, to int) bool {
	if x.state.all != nil && x.state.all.unknown[x.Target] > 0 {
		// A queue to the same target whose Connect the capture lacks
		// may be this controller's.
		return true
	}
	for _, c := range x.state.conns {
		if c == x.admin {
			continue
		}
		if c.MissingPSNs > 0 || c.State == dissect.StateNoSetup || c.Lost[dissect.DirClientToServer.Index()].Between(from, to) {
			return true
		}
	}
	return false
}
