package nvmeof

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/nvme"
)

// Queue is one NVMe/RDMA queue (one RDMA connection) as analyze shows it:
// what its set-up and Connect negotiated, and what its traffic did. It is
// the connection's dissect.Connection.ULPData; analyze writes it under
// "nvme_rdma".
type Queue struct {
	// From the CM REQ (NVMe RDMA Transport 1.0 "RDMA_CM_REQUEST Private
	// Data"): QID, HRQSIZE (1's based), HSQSIZE (0's based), CNTLID; from
	// the CM REP: CRQSIZE. Null when the set-up is not in the capture.
	QID     *uint16 `json:"qid"`
	HRQSIZE *uint16 `json:"hrqsize"`
	HSQSIZE *uint16 `json:"hsqsize"`
	CRQSIZE *uint16 `json:"crqsize"`
	CNTLID  *uint16 `json:"cntlid"`
	// SetUpError says why the CM private data did not decode.
	SetUpError string `json:"setup_error,omitempty"`
	// Reject is the controller's refusal of the queue (a CM REJ or MPA
	// reject, with the RDMA_CM_REJECT STS); Unanswered: the capture holds
	// the CM REQ and no answer. Both from dissect.SetUpFailer: such a
	// queue carries no capsule.
	Reject     *QueueReject `json:"reject,omitempty"`
	Unanswered bool         `json:"unanswered,omitempty"`
	// From the Fabrics Connect command and its data (NVMe over Fabrics 1.1
	// "Connect Command"): SQSIZE (0's based), KATO in ms (admin queue), the
	// host and subsystem NQNs; ControllerID is the CNTLID the Connect's
	// completion returned.
	Connect *ConnectInfo `json:"connect,omitempty"`
	// From an Identify Controller the queue carried (admin queue): the
	// command and response capsule sizes of the controller's I/O queues
	// and its MAXCMD.
	Identify *IdentifyInfo `json:"identify,omitempty"`
	// Controller is the controller the queue belongs to (controller.go),
	// null when its Connect did not succeed in the capture.
	Controller *Controller `json:"controller"`

	Commands    uint64 `json:"commands"`
	Completions uint64 `json:"completions"`
	// RemoteInvalidationRequested counts commands whose keyed SGL asked
	// for remote invalidation (subtype Invalidate Key); RemoteInvalidations
	// the completions sent With Invalidate.
	RemoteInvalidationRequested uint64 `json:"remote_invalidation_requested"`
	RemoteInvalidations         uint64 `json:"remote_invalidations"`
	// Data moved: by RDMA Read (host to controller) and RDMA Write
	// (controller to host) attached to the commands' keyed SGLs, and in
	// the command capsules themselves.
	dissect.Moved
	InCapsuleBytes uint64 `json:"in_capsule_bytes"`
	// MaxOutstanding is the queue depth reached: the most commands
	// awaiting their completion at once.
	MaxOutstanding int `json:"max_outstanding"`
	// What did not pair: completions without their command, commands the
	// capture ended on, commands replaced by a new one with their CID
	// before a completion, RDMA operations no command explains, capsules
	// that did not decode.
	CompletionsWithoutCommand uint64 `json:"completions_without_command"`
	CommandsWithoutCompletion uint64 `json:"commands_without_completion"`
	CIDReused                 uint64 `json:"cid_reused"`
	Evicted                   uint64 `json:"evicted,omitempty"`
	UnattachedRDMAOps         uint64 `json:"unattached_rdma_ops"`
	BadCapsules               uint64 `json:"bad_capsules"`
	// Errors counts completions by status other than success.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// Opcodes are per command name: count, bytes and latency.
	Opcodes map[string]*OpcodeStats `json:"opcodes"`

	// outstanding is the number of commands awaiting completion now.
	outstanding int
	// The submission queue as the host fills it and the controller
	// reports consuming it (NVMe Base 2.0 "Submission Queue Head
	// Pointer"), from the queue's Connect on: sqSize entries (SQSIZE+1),
	// sqSubmitted commands, sqConsumed the entries SQHD has reported
	// consumed (unwrapped). sqOn: the Connect was the queue's first
	// command.
	sqOn                    bool
	sqSize                  uint32
	sqSubmitted, sqConsumed uint64
	// connectSeen: the queue's first command capsule was seen (Connect or
	// not).
	firstCommand bool
	// KeepAliveTail is, on the admin queue of a controller whose Keep
	// Alive Timer ran when the queue ended with no shutdown, the silence
	// after the timer last restarted (NVME-KEEP-ALIVE).
	KeepAliveTail *KeepAliveTail `json:"-"`
}

// KeepAliveTail is the silence at the end of a controller's association:
// from the Keep Alive Timer's last restart (packet From) to the latest
// NVMe/RDMA packet of the capture when the admin queue ended (To), Gap
// long.
type KeepAliveTail struct {
	From, To int
	Gap      time.Duration
}

// ConnectInfo is what a queue's Fabrics Connect said.
type ConnectInfo struct {
	Packet  int    `json:"packet"`
	QID     uint16 `json:"qid"`
	SQSIZE  uint16 `json:"sqsize"`
	KATO    uint32 `json:"kato_ms"`
	HostNQN string `json:"host_nqn,omitempty"`
	SubNQN  string `json:"subsystem_nqn,omitempty"`
	HostID  string `json:"host_id,omitempty"`
	// CATTR is the Connect's attributes (bit 2: SQ flow control
	// disabled); DataCNTLID the CNTLID its data asked for (FFFFh: any,
	// on an admin queue of the dynamic model; the controller's on an I/O
	// queue).
	CATTR        uint8   `json:"cattr"`
	DataCNTLID   *uint16 `json:"data_cntlid"`
	ControllerID *uint16 `json:"controller_id"`
	Status       string  `json:"status,omitempty"`
}

// IdentifyInfo is what an Identify Controller returned.
type IdentifyInfo struct {
	IOCCSZ uint32 `json:"ioccsz"`
	IORCSZ uint32 `json:"iorcsz"`
	ICDOFF uint16 `json:"icdoff"`
	MAXCMD uint16 `json:"maxcmd"`
	// CTRATT is the controller attributes (bit 6: Traffic Based Keep
	// Alive Support).
	CTRATT uint32 `json:"ctratt"`
	// InCapsuleDataSize is IOCCSZ*16 less the SQE: the in-capsule data an
	// I/O command may carry.
	InCapsuleDataSize int `json:"in_capsule_data_size"`
}

// OpcodeStats sum up the commands of one name: count, errors, bytes (RDMA
// and in-capsule data moved) and latency, command to completion, of the
// completed ones (dissect.ExchangeStats), with the latency's quantiles.
type OpcodeStats struct {
	dissect.ExchangeStats
	// LatencyP50NS and LatencyP99NS are the median and 99th percentile,
	// from a bounded log histogram (dissect.Histogram: 8 buckets an
	// octave, the upper edge of the quantile's bucket, never above the
	// maximum); set when written.
	LatencyP50NS int64 `json:"latency_p50_ns"`
	LatencyP99NS int64 `json:"latency_p99_ns"`
	latency      dissect.Histogram
}

// MarshalJSON writes the stats with their quantiles.
func (st *OpcodeStats) MarshalJSON() ([]byte, error) {
	st.quantiles()
	type plain OpcodeStats
	return json.Marshal((*plain)(st))
}

func (st *OpcodeStats) quantiles() {
	st.LatencyP50NS, st.LatencyP99NS = st.latency.Quantile(0.5).Nanoseconds(), st.latency.Quantile(0.99).Nanoseconds()
}

// setUp reads the connection's CM private data.
func (q *Queue) setUp(c *dissect.Connection) {
	if pd := &c.PrivateData[0]; pd.Seen && q.QID == nil {
		var r nvme.CMRequest
		if err := r.DecodeFromBytes(pd.Consumer()); err != nil {
			q.SetUpError = "CM REQ: " + err.Error()
		} else {
			q.QID, q.HRQSIZE, q.HSQSIZE, q.CNTLID = u16(r.QID), u16(r.HRQSIZE), u16(r.HSQSIZE), u16(r.CNTLID)
			if r.RECFMT != 0 {
				q.SetUpError = "CM REQ: RECFMT " + r.RECFMT.String()
			}
		}
	}
	if pd := &c.PrivateData[1]; pd.Seen && q.CRQSIZE == nil && c.State != dissect.StateRejected {
		var r nvme.CMReply
		if err := r.DecodeFromBytes(pd.Consumer()); err == nil {
			q.CRQSIZE = u16(r.CRQSIZE)
		} else if q.SetUpError == "" {
			q.SetUpError = "CM REP: " + err.Error()
		}
	}
}

// QueueReject is the controller's refusal of a queue's connection as
// analyze shows it: the RDMA_CM_REJECT private data's STS (NVMe RDMA
// Transport 1.0 "RDMA_CM_REJECT Status Values") when the refusal carried
// it, and the set-up's own reason (the CM REJ's, or the MPA reject).
type QueueReject struct {
	Packet      int     `json:"packet"`
	STS         *uint16 `json:"sts"`
	Status      string  `json:"status,omitempty"`
	SetUpReason string  `json:"setup_reason"`
}

// rejected records the refusal of a queue whose set-up failed
// (dissect.SetUpFailer); a request never answered is Unanswered.
func (q *Queue) rejected(c *dissect.Connection) {
	if c.State != dissect.StateRejected {
		q.Unanswered = true
		return
	}
	r := &QueueReject{SetUpReason: c.RejectReason}
	if pd, _ := c.RejectPrivateData(); pd != nil {
		r.Packet = pd.Packet
		var rej nvme.CMReject
		if rej.DecodeFromBytes(pd.Consumer()) == nil && rej.RECFMT == 0 && rej.STS != 0 {
			r.STS, r.Status = u16(uint16(rej.STS)), rej.STS.String()
		}
	}
	q.Reject = r
}

func u16(v uint16) *uint16 { return &v }

// qid returns the queue's ID as its set-up, else its Connect, says.
func (q *Queue) qid() (uint16, bool) {
	switch {
	case q.QID != nil:
		return *q.QID, true
	case q.Connect != nil:
		return q.Connect.QID, true
	}
	return 0, false
}

// ID returns the queue's ID (QID) as its set-up, else its Connect, says;
// false when the capture holds neither.
func (q *Queue) ID() (uint16, bool) { return q.qid() }

// Admin reports whether the queue is an admin queue (QID 0), as its
// set-up or Connect says; unknown queues are taken for I/O queues.
func (q *Queue) Admin() bool {
	id, ok := q.qid()
	return ok && id == 0
}

// key is the exchange key of a CID on the queue: QID<<16 | CID (QID 0
// when unknown).
func (q *Queue) key(cid uint16) uint64 {
	id, _ := q.qid()
	return uint64(id)<<16 | uint64(cid)
}

// Command is one command capsule and what became of it: the request of an
// NVMe exchange (dissect.Exchange.Detail, OpAttachment.Owner).
type Command struct {
	CID    uint16
	OPC    uint8
	FCTYPE nvme.FabricsType
	CDW10  uint32
	Name   string
	SGL    nvme.SGLDescriptor
	// Transfer is the data's direction by opcode.
	Transfer nvme.DataTransfer
	// Packet and Time: the Send that carried the capsule.
	Packet int
	Time   time.Time
	// ReadBytes, WriteBytes: moved by the RDMA operations attached, Ops
	// how many they were; InCapsule: carried in the capsule.
	dissect.OpsMoved
	InCapsule int
	// Controller is the controller of the command's queue (nil when not
	// known: before the queue's Connect completed).
	Controller *Controller
	// Prop is a Property Get or Set's offset and value.
	Prop nvme.PropertyCommand
	// NSID, CDW11 and CDW12 as the SQE carried them: with CDW10, an I/O
	// command's SLBA and NLB (nvme.RWCommand; NVM Command Set 1.0
	// "Read command").
	NSID         uint32
	CDW11, CDW12 uint32
	// Completed: the completion came, with Status; set when the exchange
	// ends (dissect.Exchange.Detail). For a completion without its
	// command the exchange's Detail is a Command with only CID, Completed
	// and Status.
	Completed bool
	Status    nvme.Status
	// LPO is a Get Log Page's log page offset (CDW12-13, bits 1:0
	// cleared: it counts dwords, Base 2.0 "Get Log Page Command");
	// NUMREC the Discovery log page's record count once the data
	// showed it (numrecKnown).
	LPO         uint64
	numrec      uint64
	numrecKnown bool
}

// RW reads the command's SLBA and NLB (and the rest of CDW10-CDW12) as an
// I/O command with an LBA range carries them (nvme.RWCommand).
func (x *Command) RW() nvme.RWCommand {
	c := nvme.Command{CDW10: x.CDW10, CDW11: x.CDW11, CDW12: x.CDW12}
	return c.RW()
}

// Capsule is the record of one Send of an NVMe/RDMA queue
// (dissect.Message.ULP): a command or a completion, and what it pairs
// with. Valid during the Observer call.
type Capsule struct {
	Queue *Queue
	// Command: a command capsule (host to controller), decoded into Cmd;
	// else a completion (controller to host), decoded into Cpl.
	Command bool
	Cmd     nvme.Command
	Cpl     nvme.Completion
	// Err is why the capsule did not decode.
	Err error
	// Length is the Send's length.
	Length int
	// Request is the command of a completion (nil when none is
	// outstanding with its CID) or, for a command, its own record.
	Request *Command
	// Replaced is the outstanding command with the same CID that a new
	// command replaced (nil when none).
	Replaced *Command
	// First: the queue's first command capsule.
	First bool
	// Outstanding: commands awaiting completion with this one.
	Outstanding int
	// KeepAlive: a command on the admin queue of a controller whose
	// Keep Alive Timer runs (KATO ≠ 0, connected); KeepAliveGap is the
	// time since the timer last restarted, at packet KeepAliveFrom
	// (controller.go, ctrlState).
	KeepAlive     bool
	KeepAliveGap  time.Duration
	KeepAliveFrom int
	// SQHD: a completion whose SQ Head Pointer was followed; SQHDBad
	// when it reports more entries consumed than the host had submitted,
	// or an entry outside the queue; Submitted and Consumed are the
	// counts then (Consumed as the SQHD would have it).
	SQHD          bool
	SQHDBad       bool
	SQHDSubmitted uint64
	SQHDConsumed  uint64
	// Latency is a completion's time since its command's capsule.
	Latency time.Duration
	// IOConnect: the completion of an I/O queue's Connect; IOConnectOf
	// the controller its data named (nil when the capture holds none),
	// ReadyPacket the packet where that controller's admin queue showed
	// it ready (CC.EN 1 and then CSTS.RDY 1; 0: not by then).
	IOConnect   bool
	IOConnectOf *Controller
	ReadyPacket int
	// Invalidate, InvalidatedSTag: the Send With Invalidate of a
	// completion.
	Invalidate      bool
	InvalidatedSTag uint32
}

// session is NVMe/RDMA on one queue.
type session struct {
	// counted: the queue was counted among those whose controller the
	// capture cannot name.
	counted bool
	u       *ulp
	c       *dissect.Connection
	env     *dissect.Env
	q       *Queue
	out     dissect.Outstanding[uint16, Command]
	mem     dissect.Memory[*Command]
	// recs are the records of the Sends the current packet completed:
	// each stays valid, in dissect.Packet.ULP, until the next packet.
	recs dissect.Records[Capsule]
	// data are the records of the RDMA Write packets that carried an
	// admin command's data (data.go), reused.
	data dataRecords
	// connData is the Connect data the controller fetched by an RDMA Read
	// answered in one packet, filed in that packet's ULP records (the
	// fields' nvme.fabrics.cmd.connect.data.*; reused).
	connData ConnectDataRecord
	x        dissect.Exchange
	// orphan is the Detail of the exchange of a completion without its
	// command (reused).
	orphan Command
	// cmds are the command records, reused.
	cmds dissect.Pool[Command]
}

// Message takes one Send: a command from the host, a completion from the
// controller.
func (s *session) Message(p *dissect.Packet, m *dissect.Message) {
	if m.Duplicate {
		return // a go-back-N replay: already counted
	}
	s.u.saw(dissect.LastPacket(m.Packets), m.Time)
	if s.recs.NewPacket(p) {
		// The commands finished while the last packet was handed out
		// are free again; not before: the records of a packet that
		// completes several Sends (iWARP) keep pointing at theirs until
		// the next.
		s.cmds.Recycle()
	}
	q := s.q
	q.setUp(s.c) // the REP may have come after the Start
	r := s.recs.Next(p, m)
	cmd, cpl := r.Cmd, r.Cpl // keep the decoders' storage
	*r = Capsule{Queue: q, Cmd: cmd, Cpl: cpl, Length: m.Length,
		Invalidate: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag}
	if m.Dir == dissect.DirClientToServer {
		r.Command = true
		s.command(m, r)
	} else {
		s.completion(m, r)
	}
	if !s.counted && q.Controller == nil && r.Command && r.Err == nil && !(r.Cmd.IsFabrics() && r.Cmd.FCTYPE == nvme.FabricsConnect) {
		// A queue that sends commands with no controller known — its
		// Connect, or the Connect's data the target fetched, is not in
		// the capture — belongs to a controller the capture cannot
		// name: its traffic may have restarted a Keep Alive Timer
		// (checkKeepAlive).
		s.counted = true
		s.u.ctrls.unnamed(s.c.Server.Address)
	}
}

func (s *session) command(m *dissect.Message, r *Capsule) {
	q := s.q
	if r.Err = r.Cmd.DecodeFromBytes(m.Data); r.Err != nil && len(m.Data) < nvme.SQELen {
		q.BadCapsules++
		return
	}
	r.First = !q.firstCommand
	q.firstCommand = true
	q.Commands++
	c := &r.Cmd
	if c.IsFabrics() && c.FCTYPE == nvme.FabricsConnect {
		cc := c.Connect()
		if r.First {
			q.sqOn, q.sqSize = true, uint32(cc.SQSIZE)+1
		}
		q.Connect = &ConnectInfo{Packet: dissect.LastPacket(m.Packets), QID: cc.QID, SQSIZE: cc.SQSIZE, KATO: cc.KATO, CATTR: cc.CATTR}
		if len(c.InCapsule) >= nvme.ConnectDataLen {
			q.connectData(c.InCapsule)
		}
	}
	if old := s.out.Get(c.CID); old != nil {
		// A CID must be unique among the outstanding commands of a
		// queue (NVMe Base 2.0 "Command Identifier"): the old command is
		// over, unanswered.
		r.Replaced = old
		q.CIDReused++
		s.finish(old, nil, nil, dissect.Superseded)
	}
	for s.env.Full(s.out.Len()) {
		// Past the queue's bound or the buffer budget: the oldest
		// command is given up.
		q.Evicted++
		s.finish(s.out.Oldest(), nil, nil, dissect.Evicted)
	}
	if q.sqOn {
		q.sqSubmitted++
	}
	s.keepAlive(m, r)
	x := s.cmds.Get()
	*x = Command{CID: c.CID, OPC: c.OPC, FCTYPE: c.FCTYPE, CDW10: c.CDW10, Name: c.Name(q.Admin()), SGL: c.SGL1, Transfer: c.Transfer(),
		Packet: dissect.LastPacket(m.Packets), Time: m.Time, InCapsule: len(c.InCapsule), Controller: q.Controller,
		NSID: c.NSID, CDW11: c.CDW11, CDW12: c.CDW12}
	if c.IsFabrics() && (c.FCTYPE == nvme.FabricsPropertySet || c.FCTYPE == nvme.FabricsPropertyGet) {
		x.Prop = c.Property()
	}
	if !c.IsFabrics() && q.Admin() && nvme.AdminOpcode(c.OPC) == nvme.AdminGetLogPage {
		x.LPO = c.GetLogPage().LPO &^ 3
	}
	r.Request = x
	s.out.Put(c.CID, x)
	s.env.Opened()
	q.outstanding++
	q.MaxOutstanding = max(q.MaxOutstanding, q.outstanding)
	r.Outstanding = q.outstanding
	q.InCapsuleBytes += uint64(len(c.InCapsule))
	if x.SGL.IsKeyed() && x.SGL.Length > 0 {
		if x.SGL.InvalidateKey() {
			q.RemoteInvalidationRequested++
		}
		// The host advertises the keyed data block; the controller reads
		// it (host-to-controller data) or writes it (NVMe RDMA Transport
		// 1.0 "Keyed SGL Data Block Descriptor").
		s.mem.Advertise(x, dissect.DirClientToServer, 0, 0, dissect.Region{STag: x.SGL.Key, Offset: x.SGL.Address,
			Length: x.SGL.Length, Read: x.Transfer != nvme.TransferCtrlToHost})
	}
}

// keepAlive follows the Keep Alive Timer of the queue's controller
// through command r.
func (s *session) keepAlive(m *dissect.Message, r *Capsule) {
	x := s.q.Controller
	if x == nil || x.KATO == 0 || !x.state.kaLive || x.state.shutdown {
		// After a shutdown notification the host need not keep the
		// association alive.
		return
	}
	st := &x.state
	if s.q.Admin() {
		r.KeepAlive, r.KeepAliveGap, r.KeepAliveFrom = true, m.Time.Sub(st.kaAt), st.kaPacket
	}
	if st.restartsOn(!r.Cmd.IsFabrics() && s.q.Admin() && nvme.AdminOpcode(r.Cmd.OPC) == nvme.AdminKeepAlive) {
		st.kaAt, st.kaPacket = m.Time, dissect.FirstPacket(m.Packets)
	}
	if c := &r.Cmd; s.q.Admin() && c.IsFabrics() && c.FCTYPE == nvme.FabricsPropertySet {
		if p := c.Property(); p.OFST == nvme.PropertyCC && nvme.CC(p.VALUE).SHN() != 0 {
			// A shutdown notification: the host ends the association,
			// and stops keeping it alive.
			st.shutdown = true
		}
	}
}

// connectData takes what a Connect's data says.
func (q *Queue) connectData(b []byte) {
	var d nvme.ConnectData
	if d.DecodeFromBytes(b) != nil || q.Connect == nil || q.Connect.HostNQN != "" {
		return
	}
	q.Connect.HostNQN, q.Connect.SubNQN = string(d.HOSTNQN), string(d.SUBNQN)
	q.Connect.DataCNTLID = u16(d.CNTLID)
	const hexd = "0123456789abcdef"
	var id [36]byte
	j := 0
	for i, v := range d.HOSTID {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			id[j] = '-'
			j++
		}
		id[j], id[j+1] = hexd[v>>4], hexd[v&0xf]
		j += 2
	}
	q.Connect.HostID = string(id[:])
}

func (s *session) completion(m *dissect.Message, r *Capsule) {
	q := s.q
	if r.Err = r.Cpl.DecodeFromBytes(m.Data); r.Err != nil {
		q.BadCapsules++
		return
	}
	q.Completions++
	q.sqHead(r)
	if x := q.Controller; x != nil && x.state.kaLive && x.state.restartsOn(false) {
		// Under Traffic Based Keep Alive a command the controller
		// processed restarts the timer (Linux hosts skip the Keep Alive
		// when a completion came).
		x.state.kaAt, x.state.kaPacket = m.Time, dissect.FirstPacket(m.Packets)
	}
	if m.Invalidate {
		q.RemoteInvalidations++
	}
	x := s.out.Get(r.Cpl.CID)
	r.Request = x
	if x == nil {
		q.CompletionsWithoutCommand++
		s.x = dissect.Exchange{ULP: Name, Conn: s.c, Key: s.q.key(r.Cpl.CID), Initiator: dissect.DirClientToServer,
			ResponsePacket: dissect.LastPacket(m.Packets), ResponseTime: m.Time, Outcome: dissect.ResponseWithoutRequest,
			Invalidated: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag, Association: q.Controller.association()}
		s.orphan = Command{CID: r.Cpl.CID, Completed: true, Status: r.Cpl.Status}
		s.x.Detail = &s.orphan
		s.status(&s.x, &r.Cpl, 0, 0)
		s.env.End(&s.x)
		return
	}
	r.Latency = m.Time.Sub(x.Time)
	if x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsConnect && q.Connect != nil && q.Connect.QID != 0 {
		// Was its controller ready when the host connected the I/O
		// queue? Its admin queue tells (NVMe Base 2.0 "Controller
		// Initialization").
		r.IOConnect = true
		if d := q.Connect.DataCNTLID; d != nil {
			r.IOConnectOf = s.u.ctrls.find(ctrlKey{target: s.c.Server.Address, host: q.Connect.HostNQN, sub: q.Connect.SubNQN, cntlid: *d})
			if c := r.IOConnectOf; c != nil {
				r.ReadyPacket = c.state.readyPacket
			}
		}
	}
	if x.OPC == nvme.OpcodeFabrics && q.Admin() && q.Controller != nil && r.Cpl.Status.Success() {
		st := &q.Controller.state
		switch {
		case x.FCTYPE == nvme.FabricsPropertySet && x.Prop.OFST == nvme.PropertyCC:
			if en := x.Prop.VALUE&1 != 0; en != st.enabled { // CC.EN
				st.enabled, st.readyPacket = en, 0
			}
		case x.FCTYPE == nvme.FabricsPropertyGet && x.Prop.OFST == nvme.PropertyCSTS && st.enabled &&
			r.Cpl.DW0&1 != 0 && st.readyPacket == 0: // CSTS.RDY
			st.readyPacket = dissect.LastPacket(m.Packets)
		}
	}
	if x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsConnect && q.Connect != nil {
		cr := r.Cpl.ConnectResponse()
		if r.Cpl.Status.Success() {
			q.Connect.ControllerID = u16(cr.CNTLID)
			s.join(cr.CNTLID)
			x.Controller = q.Controller
			if q.Admin() {
				// The Keep Alive Timer starts (NVMe Base 2.0 "Keep
				// Alive Timer").
				st := &q.Controller.state
				st.kaLive, st.kaAt, st.kaPacket = true, m.Time, dissect.FirstPacket(m.Packets)
			}
		}
		q.Connect.Status = r.Cpl.Status.Describe(x.OPC, true, x.FCTYPE)
	}
	s.finish(x, m, &r.Cpl, dissect.Responded)
}

// join makes the queue, whose Connect just succeeded, a queue of its
// controller: the CNTLID the completion returned for the admin queue, the
// one its Connect data named for an I/O queue (NVMe over Fabrics 1.1
// "Connect Command", "Connect Response").
func (s *session) join(cntlid uint16) {
	q := s.q
	qid := q.Connect.QID
	if qid != 0 && q.Connect.DataCNTLID != nil {
		cntlid = *q.Connect.DataCNTLID
	}
	k := ctrlKey{target: s.c.Server.Address, host: q.Connect.HostNQN, sub: q.Connect.SubNQN, cntlid: cntlid}
	q.Controller = s.u.ctrls.join(k, s.c, qid, q)
}

// sqHead follows the SQ Head Pointer of completion r: it advances modulo
// the queue's size, and never past the entries the host submitted.
func (q *Queue) sqHead(r *Capsule) {
	if !q.sqOn || q.Connect != nil && q.Connect.CATTR&nvme.CATTRDisableSQFlow != 0 {
		return
	}
	r.SQHD = true
	h, size := uint64(r.Cpl.SQHD), uint64(q.sqSize)
	c := q.sqConsumed + (h+size-q.sqConsumed%size)%size
	r.SQHDSubmitted, r.SQHDConsumed = q.sqSubmitted, c
	if h >= size || c > q.sqSubmitted {
		r.SQHDBad = true
		// Take the latest position it can name, to judge the next.
		if h < size && q.sqSubmitted >= size {
			c -= size * ((c - q.sqSubmitted + size - 1) / size)
		} else {
			c = q.sqSubmitted
		}
	}
	q.sqConsumed = c
}

func (s *session) status(x *dissect.Exchange, c *nvme.Completion, opc uint8, fct nvme.FabricsType) {
	x.Status = c.Status.Describe(opc, s.q.Admin(), fct)
	x.StatusCode = uint32(c.Status.Code())
	x.OK = c.Status.Success()
	if !x.OK {
		dissect.CountError(&s.q.Errors, x.Status)
	}
}

// finish ends command x: answered by the completion cpl of Send m, or not
// (m nil).
func (s *session) finish(x *Command, m *dissect.Message, cpl *nvme.Completion, o dissect.Outcome) {
	q := s.q
	s.out.Delete(x.CID)
	s.env.Closed()
	q.outstanding--
	if x.SGL.IsKeyed() && x.SGL.Length > 0 {
		s.mem.Withdraw(x, x.SGL.Key)
	}
	resp := 0
	if m != nil {
		resp = dissect.LastPacket(m.Packets)
	}
	ret := s.mem.Retire(dissect.DirClientToServer, s.q.key(x.CID), resp)
	if x.SGL.IsKeyed() {
		ret.Add(dissect.Region{STag: x.SGL.Key, Offset: x.SGL.Address, Length: x.SGL.Length})
	}
	st := dissect.StatsFor(&q.Opcodes, x.Name)
	st.Ended(x.ReadBytes + x.WriteBytes + uint64(x.InCapsule))
	e := &s.x
	*e = dissect.Exchange{ULP: Name, Conn: s.c, Key: s.q.key(x.CID), Initiator: dissect.DirClientToServer, Name: x.Name,
		RequestPacket: x.Packet, RequestTime: x.Time, ReadBytes: x.ReadBytes, WriteBytes: x.WriteBytes, Outcome: o,
		Association: x.Controller.association(), Detail: x}
	if m != nil {
		x.Completed, x.Status = true, cpl.Status
		e.ResponsePacket, e.ResponseTime = resp, m.Time
		e.Latency = m.Time.Sub(x.Time)
		e.Invalidated, e.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
		s.status(e, cpl, x.OPC, x.FCTYPE)
		st.Answered(e.Latency, e.OK)
		st.latency.Add(e.Latency)
	} else if o == dissect.NoResponse {
		q.CommandsWithoutCompletion++
	}
	s.env.End(e)
	s.cmds.Done(x)
}

// RDMAOp attaches an RDMA Read or Write to the keyed SGL it served.
func (s *session) RDMAOp(p *dissect.Packet, op *dissect.RDMAOp) {
	if p != nil {
		s.u.saw(p.Number, p.Timestamp)
	}
	q := s.q
	ref, ok := dissect.Attach(&s.mem, op, &q.Moved, &q.UnattachedRDMAOps)
	if !ok {
		return
	}
	x := ref.Owner
	switch {
	case x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsConnect && op.Kind == dissect.RDMARead &&
		op.Offset == x.SGL.Address && len(op.Data) >= nvme.ConnectDataLen:
		// The controller fetched the Connect data (Linux hosts send it
		// by keyed SGL, rxe-nvmeof.pcap).
		q.connectData(op.Data)
		if p != nil && len(op.Packets) == 2 && op.Packets[1] == p.Number && s.connData.Data.DecodeFromBytes(op.Data) == nil {
			// One Read Response carried it: the fields show it there,
			// as tshark does.
			p.ULP = append(p.ULP, &s.connData)
		}
	case q.Admin() && nvme.AdminOpcode(x.OPC) == nvme.AdminIdentify && nvme.CNS(x.CDW10) == nvme.CNSController && op.Kind == dissect.RDMAWrite &&
		op.Offset == x.SGL.Address && len(op.Data) >= nvme.IdentifyDataLen && q.Identify == nil:
		var ic nvme.IdentifyController
		if ic.DecodeFromBytes(op.Data) == nil && ic.IOCCSZ != 0 {
			q.Identify = &IdentifyInfo{IOCCSZ: ic.IOCCSZ, IORCSZ: ic.IORCSZ, ICDOFF: ic.ICDOFF, MAXCMD: ic.MAXCMD, CTRATT: ic.CTRATT,
				InCapsuleDataSize: ic.InCapsuleDataSize()}
			if x := q.Controller; x != nil {
				x.state.setTBKAS(ic.CTRATT)
			}
		}
	}
}

// Close ends the commands still open, in the order they came.
func (s *session) Close() {
	s.cmds.Recycle()
	if x := s.q.Controller; x != nil && x.admin == s.c {
		// The association ends with its admin queue: the silence since
		// the Keep Alive Timer last restarted is judged up to the latest
		// NVMe/RDMA traffic the capture shows (unless the host shut the
		// controller down).
		if st := &x.state; st.kaLive && x.KATO != 0 && !st.shutdown && s.u.lastPacket > st.kaPacket {
			s.q.KeepAliveTail = &KeepAliveTail{From: st.kaPacket, To: s.u.lastPacket, Gap: s.u.lastTime.Sub(st.kaAt)}
		}
		x.state.kaLive = false
		s.u.ctrls.end(x)
	}
	for _, o := range s.out.InOrder() {
		s.finish(o.Req, nil, nil, dissect.NoResponse)
	}
}

// ULPTableHeader and ULPTableRow give the queue's row of analyze's text
// table (report.ULPTable).
func (q *Queue) ULPTableHeader() []string {
	return []string{"QID", "HSQSIZE / HRQSIZE / CRQSIZE", "Controller", "Host", "Subsystem", "Cmds / Cpls", "Inv. asked / used", "Depth", "Unpaired", "Latency p50 / p99"}
}

// ULPTableRow: see ULPTableHeader.
func (q *Queue) ULPTableRow() []string {
	opt := func(v *uint16) string {
		if v == nil {
			return "-"
		}
		return strconv.Itoa(int(*v))
	}
	qid, cntlid, host, sub := opt(q.QID), "-", "-", "-"
	if c := q.Connect; c != nil {
		if q.QID == nil {
			qid = strconv.Itoa(int(c.QID))
		}
		cntlid = opt(c.ControllerID)
		if x := q.Controller; x != nil {
			cntlid = x.label(q.Admin())
		}
		if c.SubNQN != "" {
			sub = c.SubNQN
		}
		if c.HostNQN != "" {
			host = c.HostNQN
		}
	}
	n := strconv.FormatUint
	return []string{qid, opt(q.HSQSIZE) + " / " + opt(q.HRQSIZE) + " / " + opt(q.CRQSIZE), cntlid, host, sub,
		n(q.Commands, 10) + " / " + n(q.Completions, 10),
		n(q.RemoteInvalidationRequested, 10) + " / " + n(q.RemoteInvalidations, 10),
		strconv.Itoa(q.MaxOutstanding),
		n(q.CommandsWithoutCompletion+q.CompletionsWithoutCommand, 10),
		q.latencyText()}
}

// latencyText is the latency p50 / p99 of the queue's most frequent
// completed opcodes (at most 2): "Read 1.20 ms / 3.40 ms, Write …".
func (q *Queue) latencyText() string {
	names := make([]string, 0, len(q.Opcodes))
	for name, st := range q.Opcodes {
		if st.Completed > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "-"
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := q.Opcodes[names[i]], q.Opcodes[names[j]]
		if a.Completed != b.Completed {
			return a.Completed > b.Completed
		}
		return names[i] < names[j]
	})
	var b []byte
	for i, name := range names {
		if i == 2 {
			b = append(b, ", …"...)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		st := q.Opcodes[name]
		st.quantiles()
		b = append(b, name...)
		b = append(b, ' ')
		b = appendDuration(b, st.LatencyP50NS)
		b = append(b, " / "...)
		b = appendDuration(b, st.LatencyP99NS)
	}
	return string(b)
}

// appendDuration writes ns as analyze's tables write latencies: µs under
// a millisecond, ms with two decimals under a second, s above.
func appendDuration(b []byte, ns int64) []byte {
	v := float64(ns) / 1e3
	switch {
	case v >= 1e6:
		return append(strconv.AppendFloat(b, v/1e6, 'f', 2, 64), " s"...)
	case v >= 1e3:
		return append(strconv.AppendFloat(b, v/1e3, 'f', 2, 64), " ms"...)
	}
	return append(strconv.AppendFloat(b, v, 'f', 0, 64), " µs"...)
}

// ConnectDataRecord is the Connect data a packet carried to the controller
// (an RDMA Read Response; dissect.Packet.ULP): valid until the next packet.
type ConnectDataRecord struct {
	Data nvme.ConnectData
}
