package srp

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
	"github.com/rdmashark/rdmashark/srp"
)

// Connection is one SRP RDMA channel as analyze shows it: what its login
// negotiated, the initiator's request limit over the channel's life, and
// what its traffic did. It is the dissect.Connection's ULPData; analyze
// writes it under "srp".
type Connection struct {
	// Layout says where the login was found: "ib-cm" (the SRP_LOGIN_REQ
	// IU in an InfiniBand CM REQ) or "rdma-cm" (Linux's RDMA/CM layout in
	// an RDMA/CM REQ or MPA Request); "" when the set-up is not in the
	// capture.
	Layout     string         `json:"login_layout,omitempty"`
	Login      *LoginRequest  `json:"login_request"`
	Accepted   *LoginResponse `json:"login_response"`
	SetUpError string         `json:"setup_error,omitempty"`
	// Rejected is the target's refusal of the login (an SRP_LOGIN_REJ in
	// the CM REJ, or an MPA Reply with the Rejected flag); Unanswered:
	// the capture holds the login request and no answer to it. Both
	// from dissect.SetUpFailer: such a channel carries no IU.
	Rejected   *LoginReject `json:"login_reject,omitempty"`
	Unanswered bool         `json:"login_unanswered,omitempty"`

	// RequestLimit is the initiator's request limit (credits) after the
	// last IU; Min and Max over the channel's life. Null when the login
	// response is not in the capture, so that the limit is unknown.
	RequestLimit    *int64 `json:"request_limit"`
	MinRequestLimit *int64 `json:"min_request_limit"`
	MaxRequestLimit *int64 `json:"max_request_limit"`
	// OverLimit counts the commands sent while the request limit was
	// spent (0 or less).
	OverLimit uint64 `json:"over_limit"`

	Commands        uint64 `json:"commands"`
	TaskManagement  uint64 `json:"task_management"`
	Responses       uint64 `json:"responses"`
	CreditRequests  uint64 `json:"credit_requests"`
	AERRequests     uint64 `json:"aer_requests"`
	InitiatorLogout uint64 `json:"initiator_logouts"`
	TargetLogout    uint64 `json:"target_logouts"`
	// Moved: the bytes of the target's RDMA Reads (data-out) and Writes
	// (data-in) attached to the commands' descriptors; ImmediateBytes in
	// SRP_CMDs (SRP-2 immediate data).
	dissect.Moved
	ImmediateBytes uint64 `json:"immediate_bytes"`
	// Descriptors counts the commands by data buffer descriptor format.
	Descriptors map[string]uint64 `json:"descriptors,omitempty"`
	// MaxOutstanding is the most commands awaiting their response at
	// once.
	MaxOutstanding int `json:"max_outstanding"`
	// What did not pair: responses without their command, commands the
	// capture ended on, tags reused while outstanding, commands given up
	// at the bound, RDMA operations no command explains, Sends that did
	// not decode.
	ResponsesWithoutCommand uint64 `json:"responses_without_command"`
	CommandsWithoutResponse uint64 `json:"commands_without_response"`
	TagReused               uint64 `json:"tag_reused"`
	Evicted                 uint64 `json:"evicted,omitempty"`
	UnattachedRDMAOps       uint64 `json:"unattached_rdma_ops"`
	BadIUs                  uint64 `json:"bad_ius"`
	// Errors counts responses by status other than success.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// Opcodes: commands per CDB operation (or task management function):
	// count, bytes and latency.
	Opcodes map[string]*OpcodeStats `json:"opcodes"`

	outstanding int
	// answered remembers the last commands answered, by the packet of
	// their SRP_RSP, for naming the command an RDMA operation after its
	// response was for (Memory remembers 32 bits of the key only).
	answered   [dissect.RetiredRequests]answered
	nanswered  int
	limit      int64
	limitKnown bool
	login      srp.LoginRequest
	accepted   srp.LoginResponse
	loginOK    bool // the login request decoded
	acceptedOK bool // the login response decoded
}

type answered struct {
	packet int
	tag    uint64
	name   string
}

// answeredAt returns the tag and name of the command whose SRP_RSP was
// at packet.
func (c *Connection) answeredAt(packet int) (uint64, string, bool) {
	for i := range c.answered {
		if a := &c.answered[i]; a.packet == packet && packet != 0 {
			return a.tag, a.name, true
		}
	}
	return 0, "", false
}

// LoginRequest is the SRP_LOGIN_REQ as analyze shows it.
type LoginRequest struct {
	Packet                 int    `json:"packet"`
	RequestedMaxITIULength uint32 `json:"requested_max_it_iu_length"`
	RequiredBufferFormats  string `json:"required_buffer_formats"`
	MultiChannelAction     uint8  `json:"multi_channel_action"`
	ImmediateRequested     bool   `json:"immediate_data_requested"`
	ImmediateDataOffset    uint16 `json:"immediate_data_offset"`
	InitiatorPortID        string `json:"initiator_port_id"`
	TargetPortID           string `json:"target_port_id"`
}

// LoginResponse is the SRP_LOGIN_RSP as analyze shows it.
type LoginResponse struct {
	Packet                 int    `json:"packet"`
	RequestLimitDelta      int32  `json:"request_limit_delta"`
	MaxITIULength          uint32 `json:"max_it_iu_length"`
	MaxTIIULength          uint32 `json:"max_ti_iu_length"`
	SupportedBufferFormats string `json:"supported_buffer_formats"`
	MultiChannelResult     uint8  `json:"multi_channel_result"`
	ImmediateSupported     bool   `json:"immediate_data_supported"`
}

// LoginReject is the refusal of a login as analyze shows it: the
// SRP_LOGIN_REJ's REASON (SRP-2) when the refusal carried one, and the
// connection set-up's own reason (the CM REJ's, or the MPA reject).
type LoginReject struct {
	Packet int `json:"packet"`
	// SRP: the refusal's private data held an SRP_LOGIN_REJ; Reason,
	// ReasonText and SupportedBufferFormats are its.
	SRP                    bool   `json:"srp_login_rej"`
	Reason                 uint32 `json:"reason,omitempty"`
	ReasonText             string `json:"reason_text,omitempty"`
	SupportedBufferFormats string `json:"supported_buffer_formats,omitempty"`
	Tag                    string `json:"tag,omitempty"`
	// SetUpReason is the set-up's reason (Connection.RejectReason).
	SetUpReason string `json:"setup_reason"`
	// By is the side that refused: "target" or "initiator".
	By     string `json:"by"`
	reject srp.LoginReject
	tagOK  bool
}

// rejected records the refusal of the login of a channel whose set-up
// failed (SetUpFailed).
func (c *Connection) rejected(dc *dissect.Connection) {
	pd, dir := dc.RejectPrivateData()
	if dc.State != dissect.StateRejected {
		c.Unanswered = true
		return
	}
	r := &LoginReject{SetUpReason: dc.RejectReason, By: sender(dir)}
	if pd != nil {
		r.Packet = pd.Packet
		var rej srp.LoginReject
		if rej.DecodeFromBytes(pd.Consumer()) == nil && rej.Opcode == srp.OpLoginRej {
			r.SRP, r.reject = true, rej
			r.Reason, r.ReasonText = uint32(rej.Reason), rej.Reason.String()
			r.SupportedBufferFormats = rej.SupportedBufferFormats.String()
			r.Tag = fmt.Sprintf("0x%016x", rej.Tag)
			r.tagOK = c.loginOK && rej.Tag == c.login.Tag
		}
	}
	c.Rejected = r
}

// OpcodeStats sum up the commands of one name: count, errors, bytes (RDMA
// and immediate data moved) and latency, command to response, of the
// completed ones (dissect.ExchangeStats), with the latency's quantiles.
type OpcodeStats struct {
	dissect.ExchangeStats
	// LatencyP50NS and LatencyP99NS are the median and 99th percentile,
	// from a bounded log histogram (dissect.Histogram), set when written.
	LatencyP50NS int64 `json:"latency_p50_ns"`
	LatencyP99NS int64 `json:"latency_p99_ns"`
	latency      dissect.Histogram
}

// MarshalJSON writes the stats with their quantiles.
func (st *OpcodeStats) MarshalJSON() ([]byte, error) {
	st.LatencyP50NS, st.LatencyP99NS = st.latency.Quantile(0.5).Nanoseconds(), st.latency.Quantile(0.99).Nanoseconds()
	type plain OpcodeStats
	return json.Marshal((*plain)(st))
}

// LoginKnown reports whether the capture holds the channel's login
// (request and response), so that its limits are known.
func (c *Connection) LoginKnown() bool { return c.loginOK && c.acceptedOK }

// LoginParams returns the decoded login request and response (valid when
// LoginKnown).
func (c *Connection) LoginParams() (*srp.LoginRequest, *srp.LoginResponse) {
	return &c.login, &c.accepted
}

// setUp reads the channel's login from the set-up's private data.
func (c *Connection) setUp(dc *dissect.Connection) {
	if !c.loginOK && c.SetUpError == "" {
		seen, err := login(dc, &c.login)
		switch {
		case !seen:
		case err != nil:
			c.SetUpError = "login request: " + err.Error()
		default:
			c.loginOK = true
			c.Layout = "ib-cm"
			if rdmaCM(dc) {
				c.Layout = "rdma-cm"
			}
			l := &c.login
			c.Login = &LoginRequest{Packet: dc.PrivateData[0].Packet, RequestedMaxITIULength: l.RequestedMaxITIULength,
				RequiredBufferFormats: l.RequiredBufferFormats.String(), MultiChannelAction: l.Flags.MultiChannelAction(),
				ImmediateRequested: l.Flags&srp.ImmediateRequested != 0, ImmediateDataOffset: l.ImmediateDataOffset,
				InitiatorPortID: hex.EncodeToString(l.InitiatorPortID[:]), TargetPortID: hex.EncodeToString(l.TargetPortID[:])}
		}
	}
	if pd := &dc.PrivateData[1]; pd.Seen && !c.acceptedOK && dc.State != dissect.StateRejected {
		if err := c.accepted.DecodeFromBytes(pd.Consumer()); err == nil && c.accepted.Opcode == srp.OpLoginRsp {
			c.acceptedOK = true
			a := &c.accepted
			c.Accepted = &LoginResponse{Packet: pd.Packet, RequestLimitDelta: a.RequestLimitDelta, MaxITIULength: a.MaxITIULength,
				MaxTIIULength: a.MaxTIIULength, SupportedBufferFormats: a.SupportedBufferFormats.String(),
				MultiChannelResult: a.Flags.MultiChannelResult(), ImmediateSupported: a.Flags&srp.ImmediateSupported != 0}
			// The login response grants the initial request limit.
			c.limitKnown = true
			c.limit = int64(a.RequestLimitDelta)
			c.noteLimit()
		} else if c.SetUpError == "" {
			c.SetUpError = "login response: not an SRP_LOGIN_RSP"
		}
	}
}

func (c *Connection) noteLimit() {
	v := c.limit
	c.RequestLimit = &v
	if c.MinRequestLimit == nil || v < *c.MinRequestLimit {
		m := v
		c.MinRequestLimit = &m
	}
	if c.MaxRequestLimit == nil || v > *c.MaxRequestLimit {
		m := v
		c.MaxRequestLimit = &m
	}
}

// immediateAllowed reports whether the login negotiated SRP-2 immediate
// data: requested by the initiator, supported by the target.
func (c *Connection) immediateAllowed() bool {
	return c.LoginKnown() && c.login.Flags&srp.ImmediateRequested != 0 && c.accepted.Flags&srp.ImmediateSupported != 0
}

// maxIU returns the maximum IU length of the side sending in direction d
// (0: unknown).
func (c *Connection) maxIU(d dissect.Direction) uint32 {
	if !c.acceptedOK {
		return 0
	}
	if d == dissect.DirClientToServer {
		return c.accepted.MaxITIULength
	}
	return c.accepted.MaxTIIULength
}

// Command is one SRP_CMD or SRP_TSK_MGMT and what became of it: the
// request of an exchange (dissect.Exchange.Detail, OpAttachment.Owner).
type Command struct {
	Tag    uint64
	Opcode srp.Opcode
	// For an SRP_CMD: the CDB's operation code and its name, the data
	// buffer descriptor formats and lengths; for an SRP_TSK_MGMT: the
	// function (Name "Task Management ABORT TASK").
	CDB                   iscsi.CDBOpcode
	Name                  string
	DataOutFormat         srp.DescriptorFormat
	DataInFormat          srp.DescriptorFormat
	DataOutLen, DataInLen uint32
	// Immediate: SRP-2 immediate data the SRP_CMD carried.
	Immediate uint32
	// Partial: an indirect descriptor whose partial list in the IU is
	// shorter than its table: the rest of the regions are unknown.
	Partial bool
	Packet  int
	Time    time.Time
	// OpsMoved: what the RDMA Reads and Writes attached moved, and how
	// many they were (dissect.Attach).
	dissect.OpsMoved
	// OverLimit: sent while the initiator's request limit was spent.
	OverLimit bool
	// regions: every region advertised (at most 2 x (1 + 255)); the
	// slice is reused when the record is.
	regions []dissect.Region
}

// Regions returns the data buffer regions the command advertised.
func (t *Command) Regions() []dissect.Region { return t.regions }

// IU is the record of one Send of an SRP channel (dissect.Message.ULP,
// dissect.Packet.ULP): the IU, and the command it opened or answered.
// Valid until the next packet.
type IU struct {
	Conn *Connection
	Msg  srp.Message
	Err  error
	// FirstPacket is the Send's first packet, Length its length.
	FirstPacket int
	Length      int
	// Initiator: sent by the initiator (the connection's client).
	Initiator bool
	// Command is a request's own record, or the command a response
	// answered (nil when none was outstanding with its tag).
	Command *Command
	// Replaced is the outstanding command with the same tag a new one
	// replaced.
	Replaced *Command
	// Response: the IU answers a command (and retired it).
	Response bool
	// Answers: an SRP_CRED_RSP or SRP_AER_RSP answering a target request
	// outstanding with its tag (AnswersKnown false: none was).
	AnswersKnown bool
	Outstanding  int
	// RequestLimit is the initiator's request limit after this IU
	// (LimitKnown: the login response is in the capture).
	RequestLimit int64
	LimitKnown   bool
	// Immediate: the SRP-2 immediate data an SRP_CMD carried (ok false
	// when its offset does not fit the IU).
	ImmediateLength int
	ImmediateOK     bool
	// Invalidate, InvalidatedSTag: sent by Send With Invalidate.
	Invalidate      bool
	InvalidatedSTag uint32
	// Latency of a response: since its command.
	Latency time.Duration
	// descs: an SRP_CMD's indirect partial-list descriptors, copied out
	// of the Send (reused with the record).
	descs []desc
}

type desc struct {
	out bool // data-out's, else data-in's
	d   srp.Descriptor
}

// session is SRP on one connection.
type session struct {
	c    *dissect.Connection
	env  *dissect.Env
	conn *Connection
	out  dissect.Outstanding[uint64, Command]
	// targetReqs: the target's SRP_CRED_REQs and SRP_AER_REQs awaiting
	// the initiator's response, by tag (bounded).
	targetReqs map[uint64]srp.Opcode
	mem        dissect.Memory[*Command]
	recs       dissect.Records[IU]
	x          dissect.Exchange
	// free and done are the command records' pool: dissect.Pool's
	// protocol (a record ended while its Send is handed out is free from
	// the next Send on), kept here because Pool zeroes a record and an
	// SRP command keeps its regions slice's storage (up to 512 regions).
	free, done []*Command
}

// maxTargetRequests bounds the target requests remembered.
const maxTargetRequests = 64

func (s *session) recycle() {
	s.free = append(s.free, s.done...)
	clear(s.done)
	s.done = s.done[:0]
}

func (s *session) newCommand() *Command {
	if n := len(s.free); n > 0 {
		t := s.free[n-1]
		s.free = s.free[:n-1]
		return t
	}
	return &Command{}
}

// Message takes one Send.
func (s *session) Message(p *dissect.Packet, m *dissect.Message) {
	if m.Duplicate {
		return
	}
	if s.recs.NewPacket(p) {
		// The commands finished while the last packet was handed out
		// are free again; not before (a packet completing several
		// Sends keeps its records pointing at theirs until the next).
		s.recycle()
	}
	cn := s.conn
	cn.setUp(s.c)
	r := s.recs.Next(p, m)
	descs := r.descs[:0] // keep the storage
	*r = IU{descs: descs, Conn: cn, Length: m.Length, Invalidate: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag,
		Initiator: m.Dir == dissect.DirClientToServer}
	r.FirstPacket = dissect.FirstPacket(m.Packets)
	r.Err = r.Msg.DecodeFromBytes(m.Data)
	s.message(m, r)
	if r.Msg.Opcode == srp.OpCmd && r.Err == nil {
		for _, bf := range [2]*srp.Buffer{&r.Msg.Command.DataOut, &r.Msg.Command.DataIn} {
			for i := 0; i < bf.List.Len(); i++ {
				r.descs = append(r.descs, desc{bf == &r.Msg.Command.DataOut, bf.List.At(i)})
			}
		}
	}
	// The slices point into m.Data, valid during this call only.
	r.Msg.Command.AdditionalCDB, r.Msg.Command.DataOut.List, r.Msg.Command.DataIn.List = nil, nil, nil
	r.Msg.Response.ResponseData, r.Msg.Response.SenseData, r.Msg.AERRequest.SenseData = nil, nil, nil
}

func (s *session) message(m *dissect.Message, r *IU) {
	cn := s.conn
	if !srp.FixedOK(r.Err) {
		cn.BadIUs++
		return
	}
	if r.Err != nil && !m.Truncated {
		// The fixed part decoded; its lengths reach beyond the Send.
		cn.BadIUs++
	}
	if r.Initiator != r.Msg.Opcode.FromInitiator() {
		// An IU of the other side's kind: counted, not paired.
		cn.BadIUs++
		return
	}
	if r.Msg.HasDelta && cn.limitKnown && r.Msg.Opcode != srp.OpLoginRsp {
		cn.limit += int64(r.Msg.RequestLimitDelta)
	}
	switch r.Msg.Opcode {
	case srp.OpCmd, srp.OpTskMgmt:
		s.request(m, r)
	case srp.OpRsp:
		s.response(m, r)
	case srp.OpCredReq, srp.OpAERReq:
		if r.Msg.Opcode == srp.OpCredReq {
			cn.CreditRequests++
		} else {
			cn.AERRequests++
		}
		if len(s.targetReqs) < maxTargetRequests {
			s.targetReqs[r.Msg.Tag] = r.Msg.Opcode
		}
	case srp.OpCredRsp, srp.OpAERRsp:
		want := srp.OpCredReq
		if r.Msg.Opcode == srp.OpAERRsp {
			want = srp.OpAERReq
		}
		if op, ok := s.targetReqs[r.Msg.Tag]; ok && op == want {
			r.AnswersKnown = true
			delete(s.targetReqs, r.Msg.Tag)
		}
	case srp.OpILogout:
		cn.InitiatorLogout++
	case srp.OpTLogout:
		cn.TargetLogout++
	}
	if cn.limitKnown {
		r.RequestLimit, r.LimitKnown = cn.limit, true
		cn.noteLimit()
	}
}

// request takes an SRP_CMD or SRP_TSK_MGMT.
func (s *session) request(m *dissect.Message, r *IU) {
	cn := s.conn
	tag := r.Msg.Tag
	over := false
	if cn.limitKnown {
		// SRP flow control: the initiator may send a request only while
		// its request limit is above 0; each one spends a credit.
		over = cn.limit <= 0
		cn.limit--
		if over {
			cn.OverLimit++
		}
	}
	if old := s.out.Get(tag); old != nil {
		r.Replaced = old
		cn.TagReused++
		s.finish(old, nil, nil, dissect.Superseded)
	}
	for s.env.Full(s.out.Len()) {
		cn.Evicted++
		s.finish(s.out.Oldest(), nil, nil, dissect.Evicted)
	}
	t := s.newCommand()
	regs := t.regions[:0]
	*t = Command{Tag: tag, Opcode: r.Msg.Opcode, Packet: dissect.LastPacket(m.Packets), Time: m.Time, OverLimit: over, regions: regs}
	r.Command = t
	s.out.Put(tag, t)
	s.env.Opened()
	cn.outstanding++
	cn.MaxOutstanding = max(cn.MaxOutstanding, cn.outstanding)
	r.Outstanding = cn.outstanding
	if r.Msg.Opcode == srp.OpTskMgmt {
		cn.TaskManagement++
		t.Name = "Task Management " + r.Msg.TaskManagement.Function.String()
		return
	}
	cn.Commands++
	cmd := &r.Msg.Command
	cdb := iscsi.CDB(cmd.CDB)
	t.CDB, t.Name = cdb.Opcode(), cdb.Name()
	t.DataOutFormat, t.DataInFormat = cmd.DataOut.Format, cmd.DataIn.Format
	t.DataOutLen, t.DataInLen = cmd.DataOut.Length(), cmd.DataIn.Length()
	if cn.Descriptors == nil {
		cn.Descriptors = map[string]uint64{}
	}
	if f := cmd.DataOut.Format; f != srp.FormatNone {
		cn.Descriptors[descriptorKey(true, f)]++
	}
	if f := cmd.DataIn.Format; f != srp.FormatNone {
		cn.Descriptors[descriptorKey(false, f)]++
	}
	if cmd.DataOut.Format == srp.FormatImmediate {
		r.ImmediateLength = int(cmd.DataOut.ImmediateLength)
		if cn.LoginKnown() {
			data, ok := cmd.ImmediateData(m.Data, cn.login.ImmediateDataOffset)
			r.ImmediateOK = ok && len(data) == int(cmd.DataOut.ImmediateLength)
			if ok {
				t.Immediate = uint32(len(data))
			}
		} else {
			t.Immediate = cmd.DataOut.ImmediateLength
		}
		cn.ImmediateBytes += uint64(t.Immediate)
	}
	// The initiator advertises the command's buffers; the target writes
	// the data-in ones and reads the data-out ones (and the indirect
	// tables).
	s.advertise(t, &cmd.DataOut, true, 0)
	s.advertise(t, &cmd.DataIn, false, 1)
	if t.Partial {
		s.mem.Unknown(dissect.DirClientToServer, tag)
	}
}

var descriptorKeys = [2][4]string{
	{"data-in none", "data-in direct", "data-in indirect", "data-in immediate"},
	{"data-out none", "data-out direct", "data-out indirect", "data-out immediate"},
}

// descriptorKey names a descriptor format for Connection.Descriptors
// without allocating.
func descriptorKey(out bool, f srp.DescriptorFormat) string {
	i := 0
	if out {
		i = 1
	}
	if int(f) < len(descriptorKeys[i]) {
		return descriptorKeys[i][f]
	}
	return descriptorKeys[i][0][:len(descriptorKeys[i][0])-4] + "reserved"
}

// advertise indexes the regions of one direction's data buffer
// descriptor: i is 0 for data-out, 1 for data-in; j the descriptor (-1:
// the indirect table).
func (s *session) advertise(t *Command, b *srp.Buffer, read bool, i int32) {
	add := func(j int32, d srp.Descriptor, read bool) {
		if d.DataLength == 0 {
			return
		}
		g := dissect.Region{STag: d.MemoryHandle, Offset: d.VirtualAddress, Length: d.DataLength, Read: read}
		s.mem.Advertise(t, dissect.DirClientToServer, i, j, g)
		t.regions = append(t.regions, g)
	}
	switch b.Format {
	case srp.FormatDirect:
		add(0, b.Direct, read)
	case srp.FormatIndirect:
		// The target may fetch the descriptor table by RDMA Read.
		add(-1, b.Table, true)
		for j := 0; j < b.List.Len(); j++ {
			add(int32(j), b.List.At(j), read)
		}
		if uint64(b.List.Len())*srp.DescriptorLen < uint64(b.Table.DataLength) {
			t.Partial = true
		}
	}
}

// response takes an SRP_RSP.
func (s *session) response(m *dissect.Message, r *IU) {
	cn := s.conn
	rsp := &r.Msg.Response
	r.Response = true
	cn.Responses++
	t := s.out.Get(r.Msg.Tag)
	r.Command = t
	if t == nil {
		cn.ResponsesWithoutCommand++
		s.x = dissect.Exchange{ULP: Name, Conn: s.c, Key: r.Msg.Tag, Initiator: dissect.DirClientToServer,
			ResponsePacket: dissect.LastPacket(m.Packets), ResponseTime: m.Time, Outcome: dissect.ResponseWithoutRequest,
			Invalidated: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag}
		s.status(&s.x, nil, rsp)
		s.end(&s.x)
		return
	}
	r.Latency = m.Time.Sub(t.Time)
	s.finish(t, m, rsp, dissect.Responded)
}

// status names a response's status on x.
func (s *session) status(x *dissect.Exchange, t *Command, rsp *srp.Response) {
	if t != nil && t.Opcode == srp.OpTskMgmt || t == nil && rsp.Flags&srp.RspValid != 0 {
		code, ok := rsp.TaskManagementResponseCode()
		if !ok {
			code = 0
		}
		x.StatusCode = uint32(code)
		x.OK = code == 0 || code == 0x08
		x.Status = srp.TaskManagementResponse(code)
	} else {
		x.StatusCode = uint32(rsp.Status)
		x.OK, x.Status = rsp.Status.Success(), rsp.Status.String()
	}
	if !x.OK {
		dissect.CountError(&s.conn.Errors, x.Status)
	}
}

// finish ends command t: answered by the SRP_RSP rsp of Send m, or not (m
// nil).
func (s *session) finish(t *Command, m *dissect.Message, rsp *srp.Response, o dissect.Outcome) {
	cn := s.conn
	s.out.Delete(t.Tag)
	s.env.Closed()
	cn.outstanding--
	for i, g := range t.Regions() {
		dup := false
		for _, h := range t.regions[:i] {
			dup = dup || h.STag == g.STag
		}
		if !dup {
			s.mem.Withdraw(t, g.STag)
		}
	}
	if t.Partial {
		s.mem.Known(dissect.DirClientToServer, t.Tag)
	}
	resp := 0
	if m != nil {
		resp = dissect.LastPacket(m.Packets)
	}
	ret := s.mem.Retire(dissect.DirClientToServer, t.Tag, resp)
	if resp != 0 {
		cn.answered[cn.nanswered%len(cn.answered)] = answered{resp, t.Tag, t.Name}
		cn.nanswered++
	}
	for _, g := range t.Regions() {
		if !ret.Add(g) {
			break
		}
	}
	st := dissect.StatsFor(&cn.Opcodes, t.Name)
	st.Ended(t.ReadBytes + t.WriteBytes + uint64(t.Immediate))
	e := &s.x
	*e = dissect.Exchange{ULP: Name, Conn: s.c, Key: t.Tag, Initiator: dissect.DirClientToServer, Name: t.Name,
		RequestPacket: t.Packet, RequestTime: t.Time, ReadBytes: t.ReadBytes, WriteBytes: t.WriteBytes, Outcome: o, Detail: t}
	if m != nil {
		e.ResponsePacket, e.ResponseTime = resp, m.Time
		e.Latency = m.Time.Sub(t.Time)
		e.Invalidated, e.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
		s.status(e, t, rsp)
		st.Answered(e.Latency, e.OK)
		st.latency.Add(e.Latency)
	} else if o == dissect.NoResponse {
		cn.CommandsWithoutResponse++
	}
	s.end(e)
	s.done = append(s.done, t)
}

func (s *session) end(x *dissect.Exchange) { s.env.End(x) }

// RDMAOp attaches an RDMA Read or Write to the command descriptor it
// served.
func (s *session) RDMAOp(p *dissect.Packet, op *dissect.RDMAOp) {
	cn := s.conn
	if op.Length == 0 && op.Kind == dissect.RDMAWrite {
		// A zero-length RDMA Write touches no memory: ib_srpt sends one
		// when the channel comes up, to learn that the queue pair is
		// ready (before or after the first SRP_CMD, as it happens).
		op.Attach = dissect.OpAttachment{Reason: dissect.UnattachedNoRegion}
		return
	}
	dissect.Attach(&s.mem, op, &cn.Moved, &cn.UnattachedRDMAOps)
}

// Close ends the commands still open, in the order they came.
func (s *session) Close() {
	s.recycle()
	for _, o := range s.out.InOrder() {
		s.finish(o.Req, nil, nil, dissect.NoResponse)
	}
}

// ULPTableHeader and ULPTableRow give the connection's row of analyze's
// text table (report.ULPTable).
func (c *Connection) ULPTableHeader() []string {
	return []string{"Login", "MaxIU I→T / T→I", "Formats", "Imm.", "ReqLim init / min / max", "Cmds / Resps", "Over limit", "Depth", "Unpaired"}
}

// ULPTableRow: see ULPTableHeader.
func (c *Connection) ULPTableRow() []string {
	n := strconv.FormatUint
	dash := "-"
	login, iu, formats, imm, lim := dash, dash, dash, dash, dash
	if c.Layout != "" {
		login = c.Layout
	}
	switch {
	case c.Rejected != nil && c.Rejected.SRP:
		login += ", rejected 0x" + strconv.FormatUint(uint64(c.Rejected.Reason), 16)
	case c.Rejected != nil:
		login += ", rejected"
	case c.Unanswered:
		login += ", unanswered"
	}
	if c.Accepted != nil {
		iu = n(uint64(c.Accepted.MaxITIULength), 10) + " / " + n(uint64(c.Accepted.MaxTIIULength), 10)
		formats = c.Accepted.SupportedBufferFormats
		imm = "No"
		if c.immediateAllowed() {
			imm = "Yes"
		}
		lim = strconv.FormatInt(int64(c.Accepted.RequestLimitDelta), 10) + " / " + strconv.FormatInt(*c.MinRequestLimit, 10) +
			" / " + strconv.FormatInt(*c.MaxRequestLimit, 10)
	}
	return []string{login, iu, formats, imm, lim, n(c.Commands+c.TaskManagement, 10) + " / " + n(c.Responses, 10),
		n(c.OverLimit, 10), strconv.Itoa(c.MaxOutstanding), n(c.CommandsWithoutResponse+c.ResponsesWithoutCommand, 10)}
}
