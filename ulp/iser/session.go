package iser

import (
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
)

// Connection is one iSER connection (one iSCSI connection over one RDMA
// connection) as analyze shows it: what its set-up and login negotiated,
// and what its traffic did. It is the dissect.Connection's ULPData;
// analyze writes it under "iser".
type Connection struct {
	// From the initiator's CM REQ (RFC 7145 section 5.1.3): the iSER CM
	// REQ flags; from the target's CM REP, Linux isert's answer in the
	// same format. Null when the set-up is not in the capture.
	ReqFlags *uint8 `json:"cm_req_flags"`
	RepFlags *uint8 `json:"cm_rep_flags"`
	// ZBVANotSupported and SendWithInvalidate: what the CM REQ said
	// (SIE: the target may answer a task by Send With Invalidate).
	ZBVANotSupported   *bool  `json:"zbva_not_supported"`
	SendWithInvalidate *bool  `json:"send_with_invalidate"`
	SetUpError         string `json:"setup_error,omitempty"`
	// Hello and HelloReply (iWARP): the initiator's IRD, the target's ORD.
	HelloIRD    *uint16 `json:"hello_ird,omitempty"`
	HelloORD    *uint16 `json:"hello_ord,omitempty"`
	HelloReject bool    `json:"hello_reject,omitempty"`

	// The login (RFC 7143 section 6): the session type and names, the
	// login's outcome, and the keys it negotiated.
	SessionType   string `json:"session_type,omitempty"`
	InitiatorName string `json:"initiator_name,omitempty"`
	TargetName    string `json:"target_name,omitempty"`
	// LoginStatus is the last Login Response's status; LoginPacket where
	// the login reached full-feature phase (0: not in the capture).
	LoginStatus string `json:"login_status,omitempty"`
	LoginPacket int    `json:"login_packet,omitempty"`
	Keys        Keys   `json:"keys"`

	Commands  uint64 `json:"commands"`
	Responses uint64 `json:"responses"`
	// RemoteInvalidations counts the responses sent With Invalidate.
	RemoteInvalidations uint64 `json:"remote_invalidations"`
	// Data moved: by the target's RDMA Reads (Data-Out) and Writes
	// (Data-In) attached to the tasks' STags, and as immediate or
	// unsolicited data in Sends.
	dissect.Moved
	ImmediateBytes   uint64 `json:"immediate_bytes"`
	UnsolicitedBytes uint64 `json:"unsolicited_bytes"`
	// MaxOutstanding is the most tasks awaiting their response at once.
	MaxOutstanding int `json:"max_outstanding"`
	// What did not pair: responses without their task, tasks the capture
	// ended on, tasks replaced by a new one with their ITT, RDMA
	// operations no task explains, Sends that did not decode.
	ResponsesWithoutTask uint64 `json:"responses_without_task"`
	TasksWithoutResponse uint64 `json:"tasks_without_response"`
	ITTReused            uint64 `json:"itt_reused"`
	Evicted              uint64 `json:"evicted,omitempty"`
	UnattachedRDMAOps    uint64 `json:"unattached_rdma_ops"`
	BadPDUs              uint64 `json:"bad_pdus"`
	// Errors counts responses by status other than success.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// Commands per name: count, bytes and latency.
	Opcodes map[string]*OpcodeStats `json:"opcodes"`

	outstanding int
	// loginReqs counts the Login Requests seen; the offers of each side.
	loginReqs      int
	initiator      offers
	target         offers
	loginFinished  bool
	firstLoginSeen bool
}

// Keys are the login keys the connection negotiated (RFC 7143 section
// 13, RFC 7145 section 6), as the results of both sides' offers; null
// when the login did not carry them. The defaults apply to those absent
// (Keys.Effective).
type Keys struct {
	HeaderDigest                   string  `json:"header_digest,omitempty"`
	DataDigest                     string  `json:"data_digest,omitempty"`
	RDMAExtensions                 *bool   `json:"rdma_extensions"`
	InitialR2T                     *bool   `json:"initial_r2t"`
	ImmediateData                  *bool   `json:"immediate_data"`
	FirstBurstLength               *uint32 `json:"first_burst_length"`
	MaxBurstLength                 *uint32 `json:"max_burst_length"`
	InitiatorMaxRecvDataSegmentLen *uint32 `json:"initiator_max_recv_data_segment_length"`
	TargetMaxRecvDataSegmentLen    *uint32 `json:"target_max_recv_data_segment_length"`
	InitiatorRecvDataSegmentLength *uint32 `json:"initiator_recv_data_segment_length"`
	TargetRecvDataSegmentLength    *uint32 `json:"target_recv_data_segment_length"`
	MaxOutstandingUnexpectedPDUs   *uint32 `json:"max_outstanding_unexpected_pdus"`
}

// offers are the values one side offered or declared in its Login PDUs.
type offers struct {
	has                                       uint32 // bit per key (key*)
	rdma, initialR2T, immediateData           bool
	firstBurst, maxBurst, mrdsl, irdsl, trdsl uint32
	mou                                       uint32
	headerDigest, dataDigest                  string
}

const (
	kRDMA = 1 << iota
	kInitialR2T
	kImmediateData
	kFirstBurst
	kMaxBurst
	kMRDSL
	kIRDSL
	kTRDSL
	kMOU
	kHeaderDigest
	kDataDigest
)

// Defaults of the keys (RFC 7143 section 13, RFC 7145 section 6).
const (
	DefaultFirstBurstLength         = 65536
	DefaultMaxBurstLength           = 262144
	DefaultMaxRecvDataSegmentLength = 8192
	DefaultRecvDataSegmentLength    = 8192 // Initiator- and TargetRecvDataSegmentLength
)

// Effective are the keys in force: negotiated, or the defaults.
type Effective struct {
	RDMAExtensions, InitialR2T, ImmediateData bool
	FirstBurstLength, MaxBurstLength          uint32
	TargetRecvDataSegmentLength               uint32
	InitiatorRecvDataSegmentLength            uint32
}

// Effective returns the keys in force.
func (k *Keys) Effective() Effective {
	e := Effective{InitialR2T: true, ImmediateData: true, FirstBurstLength: DefaultFirstBurstLength,
		MaxBurstLength: DefaultMaxBurstLength, TargetRecvDataSegmentLength: DefaultRecvDataSegmentLength,
		InitiatorRecvDataSegmentLength: DefaultRecvDataSegmentLength}
	if k.RDMAExtensions != nil {
		e.RDMAExtensions = *k.RDMAExtensions
	}
	if k.InitialR2T != nil {
		e.InitialR2T = *k.InitialR2T
	}
	if k.ImmediateData != nil {
		e.ImmediateData = *k.ImmediateData
	}
	if k.FirstBurstLength != nil {
		e.FirstBurstLength = *k.FirstBurstLength
	}
	if k.MaxBurstLength != nil {
		e.MaxBurstLength = *k.MaxBurstLength
	}
	if k.TargetRecvDataSegmentLength != nil {
		e.TargetRecvDataSegmentLength = *k.TargetRecvDataSegmentLength
	}
	if k.InitiatorRecvDataSegmentLength != nil {
		e.InitiatorRecvDataSegmentLength = *k.InitiatorRecvDataSegmentLength
	}
	if !e.RDMAExtensions {
		// Without the RDMA extensions the iSCSI limit applies: the
		// target's MaxRecvDataSegmentLength.
		e.TargetRecvDataSegmentLength = DefaultMaxRecvDataSegmentLength
		if k.TargetMaxRecvDataSegmentLen != nil {
			e.TargetRecvDataSegmentLength = *k.TargetMaxRecvDataSegmentLen
		}
	}
	return e
}

// LoginDone reports whether the capture holds the connection's login to
// full-feature phase, so that the keys it negotiated are known.
func (c *Connection) LoginDone() bool { return c.loginFinished && c.firstLoginSeen }

// OpcodeStats sum up the tasks of one name.
type OpcodeStats = dissect.ExchangeStats

// setUp reads the connection's CM private data.
func (c *Connection) setUp(dc *dissect.Connection) {
	if pd := &dc.PrivateData[0]; pd.Seen && c.ReqFlags == nil {
		var p iscsi.CMPrivateData
		if err := p.DecodeFromBytes(pd.Consumer()); err != nil {
			c.SetUpError = "CM REQ: " + err.Error()
		} else {
			z, s := p.ZBVANotSupported(), p.SendWithInvalidate()
			c.ReqFlags, c.ZBVANotSupported, c.SendWithInvalidate = &p.Flags, &z, &s
		}
	}
	if pd := &dc.PrivateData[1]; pd.Seen && c.RepFlags == nil {
		var p iscsi.CMPrivateData
		if p.DecodeFromBytes(pd.Consumer()) == nil {
			c.RepFlags = &p.Flags
		}
	}
}

// Task is one iSCSI task — a SCSI command, a Login, Text, Logout, NOP-Out
// or Task Management request — and what became of it: the request of an
// exchange (dissect.Exchange.Detail, OpAttachment.Owner).
type Task struct {
	ITT    uint32
	Opcode iscsi.Opcode
	// For a SCSI command: the CDB's opcode, its R and W flags, Expected
	// Data Transfer Length (and the bidirectional read length).
	CDB            iscsi.CDBOpcode
	Read, Write    bool
	EDTL, BidiRead uint32
	Name           string
	// The iSER header's STags (valid as WSV and RSV say).
	WSV, RSV        bool
	WriteSTag       uint32
	WriteBaseOffset uint64
	ReadSTag        uint32
	ReadBaseOffset  uint64
	// Immediate data in the command's Send; unsolicited Data-Out after
	// it (TTT 0xffffffff).
	Immediate, Unsolicited uint32
	// writeLen and readLen: the advertised regions' lengths.
	writeLen, readLen uint32
	Packet            int
	Time              time.Time
	// ReadBytes and WriteBytes: moved by the RDMA Reads and Writes
	// attached, Ops how many.
	dissect.OpsMoved
}

// ReadRegion and WriteRegion are the memory the task's iSER header
// advertised: the Read STag's for Data-In, filled by the target's RDMA
// Write; the Write STag's for the solicited Data-Out, pulled by its RDMA
// Read (RFC 7145 section 9.2: the Write Base Offset is where the data not
// sent unsolicited begins). ok false when the header did not advertise it.
func (t *Task) ReadRegion() (dissect.Region, bool) {
	return dissect.Region{STag: t.ReadSTag, Offset: t.ReadBaseOffset, Length: t.readLen}, t.RSV
}

// WriteRegion: see ReadRegion.
func (t *Task) WriteRegion() (dissect.Region, bool) {
	return dissect.Region{STag: t.WriteSTag, Offset: t.WriteBaseOffset, Length: t.writeLen, Read: true}, t.WSV
}

// PDU is the record of one Send of an iSER connection (dissect.Message.ULP,
// dissect.Packet.ULP): the iSER message, and the task it opened or
// answered. Valid until the next packet.
type PDU struct {
	Conn *Connection
	// Msg is the decoded message; its AHS and Data slices are cleared
	// after the session's call (Text keeps a Login's or Text's key=value
	// text).
	Msg iscsi.Message
	Err error
	// FirstPacket is the Send's first packet (tshark shows the PDU
	// there), Length its length.
	FirstPacket int
	Length      int
	// DataLength: the data segment's octets in the Send.
	DataLength int
	Text       []byte
	// Initiator: sent by the initiator (the connection's client).
	Initiator bool
	// Task is a request's own task record, or the task a response
	// answered (nil when none was outstanding with its ITT).
	Task *Task
	// Replaced is the outstanding task with the same ITT that a new one
	// replaced.
	Replaced *Task
	// Response: the PDU answers a task (and retired it).
	Response bool
	// LoginComplete: a Login Response that took the connection to
	// full-feature phase with success.
	LoginComplete bool
	Outstanding   int
	// Invalidate, InvalidatedSTag: sent by Send With Invalidate.
	Invalidate      bool
	InvalidatedSTag uint32
}

// session is iSER on one connection.
type session struct {
	c     *dissect.Connection
	env   *dissect.Env
	conn  *Connection
	out   dissect.Outstanding[uint32, Task]
	mem   dissect.Memory[*Task]
	recs  dissect.Records[PDU]
	x     dissect.Exchange
	tasks dissect.Pool[Task]
}

// Message takes one Send.
func (s *session) Message(p *dissect.Packet, m *dissect.Message) {
	if m.Duplicate {
		return
	}
	if s.recs.NewPacket(p) {
		// The tasks finished while the last packet was handed out are
		// free again; not before: the records of a packet that completes
		// several Sends (iWARP) keep pointing at theirs until the next.
		s.tasks.Recycle()
	}
	cn := s.conn
	cn.setUp(s.c)
	r := s.recs.Next(p, m)
	text := r.Text[:0]
	*r = PDU{Conn: cn, Length: m.Length, Invalidate: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag,
		Initiator: m.Dir == dissect.DirClientToServer, Text: text}
	if len(m.Packets) > 0 {
		r.FirstPacket = m.Packets[0]
	}
	r.Err = r.Msg.DecodeFromBytes(m.Data)
	s.message(m, r)
	// The AHS and data segment are m.Data's, valid during this call only.
	r.Msg.PDU.AHS, r.Msg.PDU.Data = nil, nil
}

func (s *session) message(m *dissect.Message, r *PDU) {
	cn := s.conn
	if op := r.Msg.ISER.Opcode; op == iscsi.ISERHello || op == iscsi.ISERHelloReply {
		if r.Err != nil {
			cn.BadPDUs++
			return
		}
		v := r.Msg.Hello.IRDORD
		if op == iscsi.ISERHello {
			cn.HelloIRD = &v
		} else {
			cn.HelloORD, cn.HelloReject = &v, r.Msg.Hello.Reject
		}
		return
	}
	switch r.Err {
	case nil:
	case iscsi.ErrDataSegment, iscsi.ErrAHS:
		// The BHS decoded but the Send holds less than its lengths say:
		// the capture cut it, or the lengths lie. The task pairs all the
		// same.
		if !m.Truncated {
			cn.BadPDUs++
		}
	default:
		cn.BadPDUs++
		return
	}
	pdu := &r.Msg.PDU
	r.DataLength = len(pdu.Data)
	if pdu.Opcode == iscsi.OpLogin || pdu.Opcode == iscsi.OpLoginResp || pdu.Opcode == iscsi.OpText || pdu.Opcode == iscsi.OpTextResp {
		r.Text = append(r.Text, pdu.Data...)
	}
	if r.Initiator {
		s.request(m, r)
		return
	}
	s.response(m, r)
}

// request takes a PDU of the initiator.
func (s *session) request(m *dissect.Message, r *PDU) {
	cn, pdu := s.conn, &r.Msg.PDU
	switch pdu.Opcode {
	case iscsi.OpDataOut:
		// Data-Out of a task: unsolicited when its TTT is the reserved
		// one (RFC 7143 section 11.7.4).
		if t := s.out.Get(pdu.ITT); t != nil {
			r.Task = t
			if pdu.TTT() == iscsi.ReservedTag {
				t.Unsolicited += uint32(len(pdu.Data))
				cn.UnsolicitedBytes += uint64(len(pdu.Data))
			}
		}
		return
	case iscsi.OpSNACK:
		return
	case iscsi.OpNOPOut:
		if pdu.ITT == iscsi.ReservedTag {
			return // the answer to a NOP-In: no response expected
		}
	case iscsi.OpLogin:
		if cn.loginReqs == 0 {
			cn.firstLoginSeen = true
		}
		cn.loginReqs++
		cn.initiator.take(r.Text, cn, true)
	case iscsi.OpText:
		cn.initiator.take(r.Text, cn, true)
	}
	cn.Commands++
	if old := s.out.Get(pdu.ITT); old != nil {
		// An ITT is unique among a session's outstanding tasks (RFC
		// 7143 section 11.2.1.8); a Login or Text continuing a
		// negotiation reuses the tag of its finished predecessor only.
		r.Replaced = old
		cn.ITTReused++
		s.finish(old, nil, nil, dissect.Superseded)
	}
	for s.env.Full(s.out.Len()) {
		cn.Evicted++
		s.finish(s.out.Oldest(), nil, nil, dissect.Evicted)
	}
	t := s.tasks.Get()
	h := &r.Msg.ISER
	*t = Task{ITT: pdu.ITT, Opcode: pdu.Opcode, Packet: dissect.LastPacket(m.Packets), Time: m.Time}
	switch pdu.Opcode {
	case iscsi.OpSCSICommand:
		cdb := pdu.CDB()
		t.CDB, t.Name = cdb.Opcode(), cdb.Name()
		t.Read, t.Write, t.EDTL = pdu.Read(), pdu.Write(), pdu.ExpectedDataTransferLength()
		t.BidiRead, _ = pdu.BidiReadDataLength()
		t.Immediate = uint32(len(pdu.Data))
		cn.ImmediateBytes += uint64(t.Immediate)
		t.WSV, t.RSV = h.WSV(), h.RSV()
		t.WriteSTag, t.WriteBaseOffset, t.ReadSTag, t.ReadBaseOffset = h.WriteSTag, h.WriteBaseOffset, h.ReadSTag, h.ReadBaseOffset
		readLen := t.EDTL
		if t.Read && t.Write {
			readLen = t.BidiRead
		}
		t.readLen = readLen
		if t.EDTL > t.Immediate {
			t.writeLen = t.EDTL - t.Immediate
		}
	case iscsi.OpTaskMgmt:
		t.Name = "Task Management " + pdu.Function().String()
	default:
		t.Name = requestName(pdu.Opcode)
	}
	r.Task = t
	s.out.Put(t.ITT, t)
	s.env.Opened()
	cn.outstanding++
	cn.MaxOutstanding = max(cn.MaxOutstanding, cn.outstanding)
	r.Outstanding = cn.outstanding
	// The initiator advertises the task's buffers; the target writes the
	// Read STag's and reads the Write STag's (RFC 7145 section 9.2).
	if g, ok := t.ReadRegion(); ok && g.Length > 0 {
		s.mem.Advertise(t, dissect.DirClientToServer, 0, 0, g)
	}
	if g, ok := t.WriteRegion(); ok && g.Length > 0 {
		// A bidirectional command may name one STag for both buffers:
		// Memory keeps both regions under it (finish withdraws it once).
		s.mem.Advertise(t, dissect.DirClientToServer, 1, 0, g)
	}
}

func requestName(op iscsi.Opcode) string {
	switch op {
	case iscsi.OpNOPOut:
		return "NOP-Out"
	case iscsi.OpLogin:
		return "Login"
	case iscsi.OpText:
		return "Text"
	case iscsi.OpLogout:
		return "Logout"
	}
	return op.String()
}

// take notes the keys of one side's Login or Text PDU.
func (o *offers) take(text []byte, cn *Connection, initiator bool) {
	for k, v, rest, ok := iscsi.KeyValues(text).Next(); ok; k, v, rest, ok = rest.Next() {
		num := func(bit uint32, dst *uint32) {
			if n, ok := iscsi.ParseNumber(v); ok {
				*dst, o.has = n, o.has|bit
			}
		}
		boolean := func(bit uint32, dst *bool) {
			if b, ok := iscsi.ParseBool(v); ok {
				*dst, o.has = b, o.has|bit
			}
		}
		switch string(k) {
		case iscsi.KeyRDMAExtensions:
			boolean(kRDMA, &o.rdma)
		case iscsi.KeyInitialR2T:
			boolean(kInitialR2T, &o.initialR2T)
		case iscsi.KeyImmediateData:
			boolean(kImmediateData, &o.immediateData)
		case iscsi.KeyFirstBurstLength:
			num(kFirstBurst, &o.firstBurst)
		case iscsi.KeyMaxBurstLength:
			num(kMaxBurst, &o.maxBurst)
		case iscsi.KeyMaxRecvDataSegmentLength:
			num(kMRDSL, &o.mrdsl)
		case iscsi.KeyInitiatorRecvDataSegmentLength:
			num(kIRDSL, &o.irdsl)
		case iscsi.KeyTargetRecvDataSegmentLength:
			num(kTRDSL, &o.trdsl)
		case iscsi.KeyMaxOutstandingUnexpectedPDUs:
			num(kMOU, &o.mou)
		case iscsi.KeyHeaderDigest:
			if string(v) != o.headerDigest {
				o.headerDigest = string(v)
			}
			o.has |= kHeaderDigest
		case iscsi.KeyDataDigest:
			if string(v) != o.dataDigest {
				o.dataDigest = string(v)
			}
			o.has |= kDataDigest
		case iscsi.KeySessionType:
			if initiator && string(v) != cn.SessionType {
				cn.SessionType = string(v)
			}
		case iscsi.KeyInitiatorName:
			if initiator && string(v) != cn.InitiatorName {
				cn.InitiatorName = string(v)
			}
		case iscsi.KeyTargetName:
			if initiator && string(v) != cn.TargetName {
				cn.TargetName = string(v)
			}
		}
	}
}

// negotiate computes the keys from both sides' offers (RFC 7143 section
// 6.2: the result functions; RFC 7145 section 6).
func (c *Connection) negotiate() {
	i, t := &c.initiator, &c.target
	both := func(bit uint32) (bool, bool) { return i.has&bit != 0, t.has&bit != 0 }
	boolean := func(bit uint32, iv, tv bool, and bool) *bool {
		hi, ht := both(bit)
		if !hi && !ht {
			return nil
		}
		var v bool
		switch {
		case hi && ht && and:
			v = iv && tv
		case hi && ht:
			v = iv || tv
		case hi:
			v = iv
		default:
			v = tv
		}
		return &v
	}
	minimum := func(bit uint32, iv, tv uint32) *uint32 {
		hi, ht := both(bit)
		var v uint32
		switch {
		case hi && ht:
			v = min(iv, tv)
		case hi:
			v = iv
		case ht:
			v = tv
		default:
			return nil
		}
		return &v
	}
	k := &c.Keys
	k.RDMAExtensions = boolean(kRDMA, i.rdma, t.rdma, true)
	k.InitialR2T = boolean(kInitialR2T, i.initialR2T, t.initialR2T, false)
	k.ImmediateData = boolean(kImmediateData, i.immediateData, t.immediateData, true)
	k.FirstBurstLength = minimum(kFirstBurst, i.firstBurst, t.firstBurst)
	k.MaxBurstLength = minimum(kMaxBurst, i.maxBurst, t.maxBurst)
	k.InitiatorRecvDataSegmentLength = minimum(kIRDSL, i.irdsl, t.irdsl)
	k.TargetRecvDataSegmentLength = minimum(kTRDSL, i.trdsl, t.trdsl)
	// Declarative: each side says what it receives.
	if i.has&kMRDSL != 0 {
		v := i.mrdsl
		k.InitiatorMaxRecvDataSegmentLen = &v
	}
	if t.has&kMRDSL != 0 {
		v := t.mrdsl
		k.TargetMaxRecvDataSegmentLen = &v
	}
	if hi, ht := both(kMOU); hi || ht {
		// 0 is no limit; the smaller limit binds.
		v := i.mou
		if !hi || ht && t.mou != 0 && (v == 0 || t.mou < v) {
			v = t.mou
		}
		k.MaxOutstandingUnexpectedPDUs = &v
	}
	// Digests: the target answers with its choice from the list.
	if t.has&kHeaderDigest != 0 {
		k.HeaderDigest = t.headerDigest
	}
	if t.has&kDataDigest != 0 {
		k.DataDigest = t.dataDigest
	}
}

// response takes a PDU of the target.
func (s *session) response(m *dissect.Message, r *PDU) {
	cn, pdu := s.conn, &r.Msg.PDU
	if m.Invalidate {
		cn.RemoteInvalidations++
	}
	itt := pdu.ITT
	switch pdu.Opcode {
	case iscsi.OpR2T, iscsi.OpAsyncMessage:
		r.Task = s.out.Get(itt)
		return
	case iscsi.OpDataIn:
		r.Task = s.out.Get(itt)
		if !pdu.HasStatus() {
			return
		}
	case iscsi.OpNOPIn:
		if itt == iscsi.ReservedTag {
			return // the target's own ping
		}
	case iscsi.OpReject:
		// A Reject answers the task of the PDU it rejects, when one is
		// outstanding (a rejected Data-Out or NOP-Out answers nothing).
		var ok bool
		if itt, ok = pdu.RejectedITT(); !ok || s.out.Get(itt) == nil {
			return
		}
	case iscsi.OpLoginResp, iscsi.OpTextResp:
		cn.target.take(r.Text, cn, false)
		cn.negotiate()
		if pdu.Opcode == iscsi.OpLoginResp {
			cn.LoginStatus = pdu.LoginStatus().String()
			if pdu.LoginStatus() == 0 && pdu.Transit() && pdu.NSG() == iscsi.StageFullFeature {
				r.LoginComplete = true
				cn.loginFinished = true
				cn.LoginPacket = dissect.LastPacket(m.Packets)
			}
		}
	case iscsi.OpSCSIResponse, iscsi.OpTaskMgmtResp, iscsi.OpLogoutResp:
	default:
		return
	}
	r.Response = true
	cn.Responses++
	t := s.out.Get(itt)
	r.Task = t
	if t == nil {
		cn.ResponsesWithoutTask++
		s.x = dissect.Exchange{ULP: Name, Conn: s.c, Key: uint64(itt), Initiator: dissect.DirClientToServer,
			ResponsePacket: dissect.LastPacket(m.Packets), ResponseTime: m.Time, Outcome: dissect.ResponseWithoutRequest,
			Invalidated: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag}
		s.status(&s.x, pdu)
		s.env.End(&s.x)
		return
	}
	s.finish(t, m, pdu, dissect.Responded)
}

// status names a response's status on x.
func (s *session) status(x *dissect.Exchange, pdu *iscsi.PDU) {
	switch pdu.Opcode {
	case iscsi.OpSCSIResponse, iscsi.OpDataIn:
		resp := pdu.Response()
		if pdu.Opcode == iscsi.OpDataIn {
			resp = 0
		}
		x.StatusCode = uint32(resp)<<8 | uint32(pdu.Status())
		x.OK = resp == 0 && pdu.Status().Success()
		if resp != 0 {
			x.Status = "Target Failure (0x" + strconv.FormatUint(uint64(resp), 16) + ")"
		} else {
			x.Status = pdu.Status().String()
		}
	case iscsi.OpLoginResp:
		x.StatusCode = uint32(pdu.LoginStatus())
		x.OK, x.Status = pdu.LoginStatus().Class() == 0, pdu.LoginStatus().String()
	case iscsi.OpTaskMgmtResp:
		x.StatusCode = uint32(pdu.Response())
		x.OK, x.Status = pdu.Response() == 0, iscsi.TaskMgmtResponse(pdu.Response())
	case iscsi.OpLogoutResp:
		x.StatusCode = uint32(pdu.Response())
		x.OK, x.Status = pdu.Response() == 0, iscsi.LogoutResponse(pdu.Response())
	case iscsi.OpReject:
		x.StatusCode = uint32(pdu.BHS[2])
		x.Status = "Reject: " + iscsi.RejectReason(pdu.BHS[2])
	default: // Text Response, NOP-In
		x.OK, x.Status = true, "Success"
	}
	if !x.OK {
		dissect.CountError(&s.conn.Errors, x.Status)
	}
}

// finish ends task t: answered by the PDU of Send m, or not (m nil).
func (s *session) finish(t *Task, m *dissect.Message, pdu *iscsi.PDU, o dissect.Outcome) {
	cn := s.conn
	s.out.Delete(t.ITT)
	s.env.Closed()
	cn.outstanding--
	rg, rok := t.ReadRegion()
	wg, wok := t.WriteRegion()
	if rok {
		s.mem.Withdraw(t, rg.STag)
	}
	if wok && !(rok && wg.STag == rg.STag) {
		s.mem.Withdraw(t, wg.STag)
	}
	resp := 0
	if m != nil {
		resp = dissect.LastPacket(m.Packets)
	}
	ret := s.mem.Retire(dissect.DirClientToServer, uint64(t.ITT), resp)
	if rok {
		ret.Add(rg)
	}
	if wok {
		ret.Add(wg)
	}
	st := dissect.StatsFor(&cn.Opcodes, t.Name)
	st.Ended(t.ReadBytes + t.WriteBytes + uint64(t.Immediate) + uint64(t.Unsolicited))
	e := &s.x
	*e = dissect.Exchange{ULP: Name, Conn: s.c, Key: uint64(t.ITT), Initiator: dissect.DirClientToServer, Name: t.Name,
		RequestPacket: t.Packet, RequestTime: t.Time, ReadBytes: t.ReadBytes, WriteBytes: t.WriteBytes, Outcome: o, Detail: t}
	if m != nil {
		e.ResponsePacket, e.ResponseTime = resp, m.Time
		e.Latency = m.Time.Sub(t.Time)
		e.Invalidated, e.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
		s.status(e, pdu)
		st.Answered(e.Latency, e.OK)
	} else if o == dissect.NoResponse {
		cn.TasksWithoutResponse++
	}
	s.env.End(e)
	s.tasks.Done(t)
}

// RDMAOp attaches an RDMA Read or Write to the task STag it served.
func (s *session) RDMAOp(p *dissect.Packet, op *dissect.RDMAOp) {
	cn := s.conn
	dissect.Attach(&s.mem, op, &cn.Moved, &cn.UnattachedRDMAOps)
}

// Close ends the tasks still open, in the order they came.
func (s *session) Close() {
	s.tasks.Recycle()
	for _, o := range s.out.InOrder() {
		s.finish(o.Req, nil, nil, dissect.NoResponse)
	}
}

// ULPTableHeader and ULPTableRow give the connection's row of analyze's
// text table (report.ULPTable).
func (c *Connection) ULPTableHeader() []string {
	return []string{"Session", "Target", "RDMAExt", "ImmData / InitR2T / FirstBurst", "TRDSL / IRDSL", "SIE", "Cmds / Resps", "Inv.", "Depth", "Unpaired"}
}

// ULPTableRow: see ULPTableHeader.
func (c *Connection) ULPTableRow() []string {
	yn := func(b *bool) string {
		switch {
		case b == nil:
			return "-"
		case *b:
			return "Yes"
		}
		return "No"
	}
	num := func(v *uint32) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatUint(uint64(*v), 10)
	}
	orDash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	k := &c.Keys
	n := strconv.FormatUint
	return []string{orDash(c.SessionType), orDash(c.TargetName), yn(k.RDMAExtensions),
		yn(k.ImmediateData) + " / " + yn(k.InitialR2T) + " / " + num(k.FirstBurstLength),
		num(k.TargetRecvDataSegmentLength) + " / " + num(k.InitiatorRecvDataSegmentLength),
		yn(c.SendWithInvalidate), n(c.Commands, 10) + " / " + n(c.Responses, 10), n(c.RemoteInvalidations, 10),
		strconv.Itoa(c.MaxOutstanding), n(c.TasksWithoutResponse+c.ResponsesWithoutTask, 10)}
}
