package smbdirect

import (
	"sort"
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	smbd "github.com/rdmashark/rdmashark/smbdirect"
)

// Conn is one SMB Direct connection as analyze shows it: what its
// negotiation said, how its credits went, what its SMB2 traffic did. It is
// the connection's dissect.Connection.ULPData; analyze writes it under
// "smb_direct".
type Conn struct {
	// Request and Response are the Negotiate Request and Response
	// ([MS-SMBD] 2.2.1, 2.2.2); nil when not in the capture.
	Request  *NegotiateRequest  `json:"negotiate_request"`
	Response *NegotiateResponse `json:"negotiate_response"`
	// Client and Server are each direction's Sends and credits.
	Client Side `json:"client"`
	Server Side `json:"server"`

	Requests  uint64 `json:"requests"`
	Responses uint64 `json:"responses"`
	// Interim counts interim responses (STATUS_PENDING), which do not end
	// their request; Notifications the server's oplock and lease breaks
	// (MessageId 0xFFFFFFFFFFFFFFFF), which answer none; Cancels the
	// CANCEL requests, which get no response of their own.
	Interim       uint64 `json:"interim"`
	Notifications uint64 `json:"notifications"`
	Cancels       uint64 `json:"cancels"`
	// RDMAChannel counts READ and WRITE requests with buffer descriptors;
	// InvalidateRequested those with SMB2_CHANNEL_RDMA_V1_INVALIDATE;
	// RemoteInvalidations the server's Sends With Invalidate.
	RDMAChannel         uint64 `json:"rdma_channel"`
	InvalidateRequested uint64 `json:"invalidate_requested"`
	RemoteInvalidations uint64 `json:"remote_invalidations"`
	// Data moved by the server's RDMA Reads (WRITE data) and RDMA Writes
	// (READ data) attached to the requests' buffer descriptors.
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	// MaxOutstanding: the most requests awaiting their response at once.
	MaxOutstanding int `json:"max_outstanding"`
	// What did not pair or decode.
	ResponsesWithoutRequest uint64 `json:"responses_without_request"`
	RequestsWithoutResponse uint64 `json:"requests_without_response"`
	MessageIDReused         uint64 `json:"message_id_reused"`
	Evicted                 uint64 `json:"evicted,omitempty"`
	UnattachedRDMAOps       uint64 `json:"unattached_rdma_ops"`
	BadMessages             uint64 `json:"bad_messages"`
	// Errors counts responses by status, for statuses that are errors.
	Errors map[string]uint64 `json:"errors,omitempty"`
	// Commands are per SMB2 command: count, bytes and latency.
	Commands map[string]*CommandStats `json:"commands"`

	outstanding int
	unanswered  [2]unanswered
}

// NegotiateRequest is what the client's Negotiate Request said.
type NegotiateRequest struct {
	Packet            int    `json:"packet"`
	MinVersion        string `json:"min_version"`
	MaxVersion        string `json:"max_version"`
	CreditsRequested  uint16 `json:"credits_requested"`
	PreferredSendSize uint32 `json:"preferred_send_size"`
	MaxReceiveSize    uint32 `json:"max_receive_size"`
	MaxFragmentedSize uint32 `json:"max_fragmented_size"`
	raw               smbd.NegotiateRequest
}

// NegotiateResponse is what the server's Negotiate Response said.
type NegotiateResponse struct {
	Packet            int    `json:"packet"`
	NegotiatedVersion string `json:"negotiated_version"`
	Status            string `json:"status"`
	CreditsRequested  uint16 `json:"credits_requested"`
	CreditsGranted    uint16 `json:"credits_granted"`
	MaxReadWriteSize  uint32 `json:"max_read_write_size"`
	PreferredSendSize uint32 `json:"preferred_send_size"`
	MaxReceiveSize    uint32 `json:"max_receive_size"`
	MaxFragmentedSize uint32 `json:"max_fragmented_size"`
	raw               smbd.NegotiateResponse
}

// Side is one direction of a connection: the Data Transfer Messages its
// peer sent, and the credits ([MS-SMBD] 3.1.5.1, 3.1.5.9).
type Side struct {
	Sends uint64 `json:"sends"`
	Bytes uint64 `json:"bytes"`
	// Granted is the credits this side granted its peer in all (the
	// server's Negotiate Response included); Credits the credits it held
	// at the end (null when unknown: the negotiation is not in the
	// capture), MinCredits the fewest it held at any time.
	Granted    uint64 `json:"credits_granted"`
	Credits    *int64 `json:"credits"`
	MinCredits *int64 `json:"min_credits"`
	// NoCredit counts Sends made without a credit; LastCredit those that
	// spent the last credit without granting any ([MS-SMBD] 3.1.5.1).
	NoCredit   uint64 `json:"sends_without_credit"`
	LastCredit uint64 `json:"last_credit_without_grant"`
	// Fragmented counts upper-layer messages sent in more than one Data
	// Transfer Message; MaxMessage is the longest upper-layer message.
	Fragmented uint64 `json:"fragmented"`
	MaxMessage int    `json:"max_message"`
	// FragmentsCut counts reassemblies given up at the buffer budget,
	// Oversized those given up past the peer's MaxFragmentedSize (or 16
	// MiB): their SMB2 messages were not decoded.
	FragmentsCut uint64 `json:"fragments_cut,omitempty"`
	Oversized    uint64 `json:"oversized,omitempty"`
	// KeepalivesRequested counts Sends with SMB_DIRECT_RESPONSE_REQUESTED.
	KeepalivesRequested uint64 `json:"keepalives_requested"`

	credits, minCredits int64
	known               bool
}

// CommandStats sum up the requests of one SMB2 command.
type CommandStats struct {
	Count        uint64        `json:"count"`
	Errors       uint64        `json:"errors"`
	Bytes        uint64        `json:"bytes"` // moved by RDMA
	Completed    uint64        `json:"completed"`
	LatencyTotal time.Duration `json:"-"`
	LatencyMaxNS int64         `json:"latency_max_ns"`
	LatencyAvgNS int64         `json:"latency_avg_ns"`
}

// MaxDescriptors bounds the buffer descriptors kept of one request (Linux
// sends one; Windows a few).
const MaxDescriptors = 8

// Request is one SMB2 request and what became of it: the request of an
// exchange (dissect.Exchange.Detail, OpAttachment.Owner).
type Request struct {
	MessageID    uint64
	Command      smbd.Command
	CreditCharge uint16
	// READ and WRITE: the file range's length, the channel and its buffer
	// descriptors (the first MaxDescriptors; NDesc counts all).
	Length  uint32
	Channel smbd.Channel
	Desc    [MaxDescriptors]smbd.BufferDescriptor
	NDesc   int
	// Packet and Time: the Send that completed the request.
	Packet int
	Time   time.Time
	// Interim: an interim response (STATUS_PENDING) came.
	Interim bool
	// ReadBytes, WriteBytes: moved by the RDMA operations attached.
	ReadBytes, WriteBytes uint64
	Ops                   int
	seq                   uint64
}

// Descriptors returns the descriptors kept.
func (r *Request) Descriptors() []smbd.BufferDescriptor { return r.Desc[:min(r.NDesc, MaxDescriptors)] }

// HasToken reports whether one of the request's descriptors has token.
func (r *Request) HasToken(token uint32) bool {
	for _, d := range r.Descriptors() {
		if d.Token == token {
			return true
		}
	}
	return false
}

// DescriptorTotal is the sum of the descriptors' lengths.
func (r *Request) DescriptorTotal() uint64 {
	var n uint64
	for _, d := range r.Descriptors() {
		n += uint64(d.Length)
	}
	return n
}

// Kind is which SMB Direct message a Send is.
type Kind uint8

const (
	KindNegotiateRequest Kind = iota + 1
	KindNegotiateResponse
	KindData
)

func (k Kind) String() string {
	switch k {
	case KindNegotiateRequest:
		return "NegotiateRequest"
	case KindNegotiateResponse:
		return "NegotiateResponse"
	case KindData:
		return "DataMessage"
	}
	return "unknown"
}

// Send is the record of one Send of an SMB Direct connection
// (dissect.Message.ULP, dissect.Packet.ULP). Valid during the Observer
// call.
type Send struct {
	Conn *Conn
	Dir  dissect.Direction
	Kind Kind
	// FirstPacket is the Send's first packet (a multi-packet RoCE Send
	// is recorded on its last).
	FirstPacket int
	// First: the first Send of its direction in the capture.
	First   bool
	NegReq  smbd.NegotiateRequest
	NegResp smbd.NegotiateResponse
	Data    smbd.DataTransfer
	// Err is why the message did not decode.
	Err    error
	Length int
	// Credits: the sender's credits before this Send (CreditsKnown: the
	// negotiation is in the capture); NoCredit and LastCredit: it broke
	// [MS-SMBD] 3.1.5.1.
	Credits      int64
	CreditsKnown bool
	NoCredit     bool
	LastCredit   bool
	// Fragment: the Send carries part of an upper-layer message that
	// later Sends complete. Reassembled is the length of the upper-layer
	// message this Send completed from more than one fragment (0 when
	// none); Fragments how many Sends it took. RemainingMismatch: the
	// RemainingDataLength does not follow from the previous fragment's.
	Fragment          bool
	Reassembled       int
	Fragments         int
	RemainingMismatch bool
	// Cut: the reassembly this Send belongs to was given up (buffer
	// budget, MaxFragmentedSize).
	Cut bool
	// SMB2 are the SMB2 messages this Send completed (a compound chain
	// has several); SMB2Err why the chain stopped early.
	SMB2    []SMB2
	SMB2Err error
	// Invalidate, InvalidatedSTag: a Send With Invalidate. InvRequest is
	// the request, answered in this Send, whose descriptor has the token
	// (nil when none); InvChannel its channel.
	Invalidate      bool
	InvalidatedSTag uint32
	InvRequest      *Request
	// Keepalive: SMB_DIRECT_RESPONSE_REQUESTED.
	Keepalive bool
}

// SMB2 is one SMB2 message of a Send.
type SMB2 struct {
	Header smbd.Header
	// RW is the READ or WRITE request's channel info.
	RW smbd.ReadWrite
	// Channel of a SESSION_SETUP, READ or WRITE request.
	Channel    smbd.Channel
	HasChannel bool
	// Request: for a request its record, for a response the request it
	// answers (nil when none is outstanding with its MessageId).
	Request *Request
	// Replaced is an outstanding request with the same MessageId a new
	// request replaced.
	Replaced *Request
	// Err is why the request's body did not decode.
	Err error
}

// session is SMB Direct on one connection.
type session struct {
	c   *dissect.Connection
	env *dissect.Env
	sum *Conn
	out map[uint64]*Request
	mem dissect.Memory[*Request]
	seq uint64
	x   dissect.Exchange
	// seen: a Send of the direction (by Direction.Index) was seen.
	seen [2]bool
	// frag: the upper-layer message being reassembled per direction;
	// fragLen its length so far (also when cut), fragN its Sends,
	// fragRemaining the previous fragment's RemainingDataLength, fragCut
	// whether it was given up.
	frag          [2][]byte
	fragLen       [2]int
	fragN         [2]int
	fragRemaining [2]uint32
	fragOn        [2]bool
	fragCut       [2]bool
	// keepalive: the packet of a Send asking for a response, per
	// direction, that no Send of the peer has followed yet (0: none);
	// keepaliveLater the Sends of the same direction since.
	keepalive      [2]int
	keepaliveLater [2]int
	// Records of the Sends the current packet (recPkt) completed.
	rec    Send
	recs   []*Send
	recN   int
	recPkt int
	free   []*Request
	done   []*Request
}

func (s *session) recycle() {
	s.free = append(s.free, s.done...)
	clear(s.done)
	s.done = s.done[:0]
}

func (s *session) newRequest() *Request {
	if n := len(s.free); n > 0 {
		r := s.free[n-1]
		s.free = s.free[:n-1]
		*r = Request{}
		return r
	}
	return &Request{}
}

func (s *session) record(p *dissect.Packet) *Send {
	if p == nil {
		return &s.rec
	}
	if p.Number != s.recPkt {
		s.recPkt, s.recN = p.Number, 0
	}
	if s.recN == len(s.recs) {
		s.recs = append(s.recs, &Send{})
	}
	r := s.recs[s.recN]
	s.recN++
	return r
}

func (q *Conn) side(d dissect.Direction) *Side {
	if d == dissect.DirServerToClient {
		return &q.Server
	}
	return &q.Client
}

// Message takes one Send.
func (s *session) Message(p *dissect.Packet, m *dissect.Message) {
	if m.Duplicate {
		return // a go-back-N replay: already counted
	}
	s.recycle()
	q := s.sum
	r := s.record(p)
	smb2 := r.SMB2[:0]
	*r = Send{Conn: q, Dir: m.Dir, FirstPacket: dissect.FirstPacket(m.Packets), Length: m.Length, Invalidate: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag, SMB2: smb2}
	m.ULP = r
	if p != nil {
		p.ULP = append(p.ULP, r)
	}
	d := m.Dir.Index()
	// The first Send of the direction the capture shows is the first
	// sent only if the capture lost nothing of the direction before it
	// (a Negotiate message the capture lost leaves the next Send a data
	// transfer message, not a Negotiate with garbage values).
	r.First = !s.seen[d] && !s.c.Lost[d].Before(dissect.FirstPacket(m.Packets))
	s.seen[d] = true
	// Any Send answers the peer's keep-alive ([MS-SMBD] 3.1.5.1: the
	// receiver of SMB_DIRECT_RESPONSE_REQUESTED sends at once).
	s.keepalive[1-d], s.keepaliveLater[1-d] = 0, 0
	if s.keepalive[d] != 0 {
		s.keepaliveLater[d]++
	}
	switch {
	case r.First && m.Dir == dissect.DirClientToServer && smbd.LooksLikeNegotiateRequest(m.Data):
		r.Kind = KindNegotiateRequest
		_ = r.NegReq.DecodeFromBytes(m.Data)
		n := &r.NegReq
		q.Request = &NegotiateRequest{Packet: dissect.LastPacket(m.Packets), MinVersion: n.MinVersion.String(), MaxVersion: n.MaxVersion.String(),
			CreditsRequested: n.CreditsRequested, PreferredSendSize: n.PreferredSendSize, MaxReceiveSize: n.MaxReceiveSize,
			MaxFragmentedSize: n.MaxFragmentedSize, raw: *n}
		return
	case r.First && m.Dir == dissect.DirServerToClient && q.Request != nil && len(m.Data) >= smbd.NegotiateResponseLen &&
		r.NegResp.DecodeFromBytes(m.Data) == nil:
		r.Kind = KindNegotiateResponse
		n := &r.NegResp
		q.Response = &NegotiateResponse{Packet: dissect.LastPacket(m.Packets), NegotiatedVersion: n.NegotiatedVersion.String(),
			Status: n.Status.String(), CreditsRequested: n.CreditsRequested, CreditsGranted: n.CreditsGranted,
			MaxReadWriteSize: n.MaxReadWriteSize, PreferredSendSize: n.PreferredSendSize, MaxReceiveSize: n.MaxReceiveSize,
			MaxFragmentedSize: n.MaxFragmentedSize, raw: *n}
		// The client holds the credits granted; the server none until
		// the client grants some ([MS-SMBD] 3.1.5.6, 3.1.5.7).
		q.Client.setCredits(int64(n.CreditsGranted))
		q.Server.setCredits(0)
		q.Server.Granted += uint64(n.CreditsGranted)
		return
	}
	r.Kind = KindData
	if r.Err = r.Data.DecodeFromBytes(m.Data); r.Err != nil {
		q.BadMessages++
		if len(m.Data) < smbd.DataTransferHeaderLen {
			return
		}
	}
	s.credits(m, r)
	if r.Data.Flags&smbd.FlagResponseRequested != 0 {
		r.Keepalive = true
		q.side(m.Dir).KeepalivesRequested++
		if s.keepalive[d] == 0 {
			s.keepalive[d], s.keepaliveLater[d] = dissect.LastPacket(m.Packets), 0
		}
	}
	if r.Err != nil {
		return
	}
	side := q.side(m.Dir)
	side.Sends++
	side.Bytes += uint64(m.Length)
	msg := s.reassemble(m, r)
	if msg == nil {
		return
	}
	side.MaxMessage = max(side.MaxMessage, len(msg))
	s.smb2(m, r, msg)
	if r.Invalidate && m.Dir == dissect.DirServerToClient {
		q.RemoteInvalidations++
	}
}

func (sd *Side) setCredits(n int64) {
	sd.credits, sd.minCredits, sd.known = n, n, true
	sd.Credits, sd.MinCredits = &sd.credits, &sd.minCredits
}

// credits accounts one Data Transfer Message: it spends one of the
// sender's credits and grants the peer CreditsGranted ([MS-SMBD] 3.1.5.1,
// 3.1.5.9).
func (s *session) credits(m *dissect.Message, r *Send) {
	q := s.sum
	snd, peer := q.side(m.Dir), q.side(other(m.Dir))
	if snd.known {
		r.Credits, r.CreditsKnown = snd.credits, true
		switch {
		case snd.credits <= 0:
			r.NoCredit = true
			snd.NoCredit++
		case snd.credits == 1 && r.Data.CreditsGranted == 0:
			r.LastCredit = true
			snd.LastCredit++
		}
		snd.credits = max(snd.credits-1, 0)
		snd.minCredits = min(snd.minCredits, snd.credits)
	}
	snd.Granted += uint64(r.Data.CreditsGranted)
	if peer.known {
		peer.credits += int64(r.Data.CreditsGranted)
	}
}

// maxReassembly bounds a reassembled message whatever the negotiation
// said (16 MiB: far beyond the 1 MiB Windows and Linux negotiate).
const maxReassembly = 16 << 20

// reassemble returns the upper-layer message r's Send completes (nil when
// it completes none: a fragment, an empty message, a cut reassembly).
func (s *session) reassemble(m *dissect.Message, r *Send) []byte {
	d := m.Dir.Index()
	dt := &r.Data
	if !s.fragOn[d] {
		if dt.RemainingDataLength == 0 {
			if dt.DataLength == 0 {
				return nil
			}
			return dt.Data
		}
		s.fragOn[d], s.fragLen[d], s.fragN[d], s.fragCut[d] = true, 0, 0, false
		s.frag[d] = s.frag[d][:0]
	} else if want := int64(s.fragRemaining[d]) - int64(dt.DataLength); want != int64(dt.RemainingDataLength) {
		r.RemainingMismatch = true
	}
	s.fragRemaining[d] = dt.RemainingDataLength
	s.fragLen[d] += len(dt.Data)
	s.fragN[d]++
	r.Fragment = dt.RemainingDataLength != 0
	limit := maxReassembly
	if mf := s.maxFragmented(m.Dir); mf > 0 {
		limit = min(limit, int(mf))
	}
	if !s.fragCut[d] {
		old := cap(s.frag[d])
		switch need := len(s.frag[d]) + len(dt.Data); {
		case need > limit:
			s.cut(d, m.Dir, false)
		case need > old:
			if s.env.Budget != nil && !s.env.Budget.Fits(need-old) {
				s.cut(d, m.Dir, true)
				break
			}
			s.frag[d] = append(s.frag[d], dt.Data...)
			if s.env.Budget != nil {
				s.env.Budget.Grew(old, cap(s.frag[d]))
			}
		default:
			s.frag[d] = append(s.frag[d], dt.Data...)
		}
	}
	r.Cut = s.fragCut[d]
	if r.Fragment {
		return nil
	}
	s.fragOn[d] = false
	r.Reassembled, r.Fragments = s.fragLen[d], s.fragN[d]
	s.sum.side(m.Dir).Fragmented++
	if s.fragCut[d] {
		return nil
	}
	return s.frag[d]
}

// cut gives up the reassembly of direction index d, at the budget or
// past the size limit.
func (s *session) cut(d int, dir dissect.Direction, budget bool) {
	s.fragCut[d] = true
	if budget {
		s.sum.side(dir).FragmentsCut++
	} else {
		s.sum.side(dir).Oversized++
	}
	s.release(d)
}

func (s *session) release(d int) {
	if c := cap(s.frag[d]); c > 0 && s.env.Budget != nil {
		s.env.Budget.Grew(c, 0)
	}
	s.frag[d] = nil
}

// maxFragmented is the MaxFragmentedSize of the receiver of a message
// sent in dir (0 when unknown).
func (s *session) maxFragmented(dir dissect.Direction) uint32 {
	q := s.sum
	if dir == dissect.DirClientToServer {
		if q.Response != nil {
			return q.Response.MaxFragmentedSize
		}
	} else if q.Request != nil {
		return q.Request.MaxFragmentedSize
	}
	return 0
}

// maxReceive is the MaxReceiveSize of the receiver of a Send in dir (0
// when unknown).
func (q *Conn) maxReceive(dir dissect.Direction) uint32 {
	if dir == dissect.DirClientToServer {
		if q.Response != nil {
			return q.Response.MaxReceiveSize
		}
	} else if q.Request != nil {
		return q.Request.MaxReceiveSize
	}
	return 0
}

// smb2 takes the SMB2 messages of one upper-layer message.
func (s *session) smb2(m *dissect.Message, r *Send, msg []byte) {
	ch := smbd.NewChain(msg)
	for {
		r.SMB2 = append(r.SMB2, SMB2{})
		x := &r.SMB2[len(r.SMB2)-1]
		if !ch.Next(&x.Header) {
			r.SMB2 = r.SMB2[:len(r.SMB2)-1]
			break
		}
		if x.Header.Response() {
			s.response(m, r, x)
		} else {
			s.request(m, x)
		}
	}
	if r.SMB2Err = ch.Err(); r.SMB2Err != nil {
		s.sum.BadMessages++
	}
}

func (s *session) request(m *dissect.Message, x *SMB2) {
	q := s.sum
	h := &x.Header
	switch h.Command {
	case smbd.Cancel:
		// CANCEL names the request it cancels and has no response
		// ([MS-SMB2] 3.2.4.24).
		q.Cancels++
		return
	case smbd.Read:
		x.Err = x.RW.DecodeRead(h)
		x.Channel, x.HasChannel = x.RW.Channel, x.Err == nil
	case smbd.Write:
		x.Err = x.RW.DecodeWrite(h)
		x.Channel, x.HasChannel = x.RW.Channel, x.Err == nil
	case smbd.SessionSetup:
		var err error
		x.Channel, err = smbd.SessionSetupChannel(h)
		x.HasChannel = err == nil
	}
	q.Requests++
	if old := s.out[h.MessageID]; old != nil {
		x.Replaced = old
		q.MessageIDReused++
		s.finish(old, nil, nil, dissect.Superseded)
	}
	for len(s.out) > 0 && (s.env.MaxExchanges > 0 && len(s.out) >= s.env.MaxExchanges ||
		s.env.Budget != nil && !s.env.Budget.ExchangeFits()) {
		var oldest *Request
		for _, o := range s.out {
			if oldest == nil || o.seq < oldest.seq {
				oldest = o
			}
		}
		q.Evicted++
		s.finish(oldest, nil, nil, dissect.Evicted)
	}
	rq := s.newRequest()
	s.seq++
	*rq = Request{MessageID: h.MessageID, Command: h.Command, CreditCharge: h.CreditCharge, Packet: dissect.LastPacket(m.Packets),
		Time: m.Time, seq: s.seq}
	x.Request = rq
	s.out[h.MessageID] = rq
	if s.env.Budget != nil {
		s.env.Budget.Opened()
	}
	q.outstanding++
	q.MaxOutstanding = max(q.MaxOutstanding, q.outstanding)
	if (h.Command == smbd.Read || h.Command == smbd.Write) && x.Err == nil {
		rq.Length, rq.Channel = x.RW.Length, x.RW.Channel
		if h.Command == smbd.Write && rq.Length == 0 {
			rq.Length = x.RW.RemainingBytes // data by RDMA: [MS-SMB2] 2.2.21
		}
		if x.RW.Channel.RDMA() {
			q.RDMAChannel++
			if x.RW.Channel == smbd.ChannelRDMAV1Invalidate {
				q.InvalidateRequested++
			}
			n := x.RW.ChannelInfo.Len()
			rq.NDesc = n
			for i := 0; i < n && i < MaxDescriptors; i++ {
				bd := x.RW.ChannelInfo.At(i)
				rq.Desc[i] = bd
				// The client advertises its buffer: the server writes
				// READ data into it and reads WRITE data from it
				// ([MS-SMB2] 3.3.5.12, 3.3.5.13).
				s.mem.Advertise(rq, dissect.DirClientToServer, int32(i), 0, dissect.Region{STag: bd.Token, Offset: bd.Offset,
					Length: bd.Length, Read: h.Command == smbd.Write})
			}
			if n > MaxDescriptors {
				s.mem.Unknown(dissect.DirClientToServer, h.MessageID)
			}
		}
	}
}

func (s *session) response(m *dissect.Message, r *Send, x *SMB2) {
	q := s.sum
	h := &x.Header
	if h.MessageID == smbd.UnsolicitedMessageID && h.Command == smbd.OplockBreak {
		q.Notifications++
		return
	}
	rq := s.out[h.MessageID]
	x.Request = rq
	if h.Interim() {
		q.Interim++
		if rq != nil {
			rq.Interim = true
		}
		return
	}
	q.Responses++
	if rq != nil && r.Invalidate && r.InvRequest == nil && rq.HasToken(r.InvalidatedSTag) {
		r.InvRequest = rq
	}
	if rq == nil {
		s.mem.Known(dissect.DirClientToServer, h.MessageID)
		q.ResponsesWithoutRequest++
		s.x = dissect.Exchange{ULP: Name, Conn: s.c, Key: h.MessageID, Initiator: dissect.DirClientToServer, Name: h.Command.String(),
			ResponsePacket: dissect.LastPacket(m.Packets), ResponseTime: m.Time, Outcome: dissect.ResponseWithoutRequest,
			Invalidated: m.Invalidate, InvalidatedSTag: m.InvalidatedSTag}
		s.status(&s.x, h.Status)
		s.end(&s.x)
		return
	}
	s.finish(rq, m, h, dissect.Responded)
}

func (s *session) status(x *dissect.Exchange, st smbd.Status) {
	x.Status, x.StatusCode, x.OK = st.String(), uint32(st), st.OK()
	if !x.OK {
		if s.sum.Errors == nil {
			s.sum.Errors = map[string]uint64{}
		}
		s.sum.Errors[x.Status]++
	}
}

// finish ends request x: answered by the response h of Send m, or not (m
// nil).
func (s *session) finish(x *Request, m *dissect.Message, h *smbd.Header, o dissect.Outcome) {
	q := s.sum
	delete(s.out, x.MessageID)
	if s.env.Budget != nil {
		s.env.Budget.Closed()
	}
	q.outstanding--
	for i, d := range x.Descriptors() {
		if i == 0 || !x.hasTokenBefore(i) {
			s.mem.Withdraw(x, d.Token)
		}
	}
	resp := 0
	if m != nil {
		resp = dissect.LastPacket(m.Packets)
	}
	ret := s.mem.Retire(dissect.DirClientToServer, x.MessageID, resp)
	for _, d := range x.Descriptors() {
		if !ret.Add(dissect.Region{STag: d.Token, Offset: d.Offset, Length: d.Length}) {
			break
		}
	}
	name := x.Command.String()
	st := q.Commands[name]
	if st == nil {
		if q.Commands == nil {
			q.Commands = map[string]*CommandStats{}
		}
		st = &CommandStats{}
		q.Commands[name] = st
	}
	st.Count++
	st.Bytes += x.ReadBytes + x.WriteBytes
	e := &s.x
	*e = dissect.Exchange{ULP: Name, Conn: s.c, Key: x.MessageID, Initiator: dissect.DirClientToServer, Name: name,
		RequestPacket: x.Packet, RequestTime: x.Time, ReadBytes: x.ReadBytes, WriteBytes: x.WriteBytes, Outcome: o, Detail: x}
	if m != nil {
		e.ResponsePacket, e.ResponseTime = resp, m.Time
		e.Latency = m.Time.Sub(x.Time)
		e.Invalidated, e.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
		s.status(e, h.Status)
		st.Completed++
		st.LatencyTotal += e.Latency
		st.LatencyMaxNS = max(st.LatencyMaxNS, e.Latency.Nanoseconds())
		st.LatencyAvgNS = (st.LatencyTotal / time.Duration(st.Completed)).Nanoseconds()
		if !e.OK {
			st.Errors++
		}
	} else if o == dissect.NoResponse {
		q.RequestsWithoutResponse++
	}
	s.end(e)
	s.done = append(s.done, x)
}

func (x *Request) hasTokenBefore(i int) bool {
	for _, d := range x.Desc[:i] {
		if d.Token == x.Desc[i].Token {
			return true
		}
	}
	return false
}

func (s *session) end(x *dissect.Exchange) {
	if s.env.Exchange != nil {
		s.env.Exchange(x)
	}
}

// RDMAOp attaches an RDMA Read or Write of the server to the buffer
// descriptor it served.
func (s *session) RDMAOp(p *dissect.Packet, op *dissect.RDMAOp) {
	q := s.sum
	ref, ok := s.mem.Find(op)
	if !ok {
		q.UnattachedRDMAOps++
		// Why none, the same way for every ULP (capture loss included).
		op.Attach = s.mem.Unattached(op)
		return
	}
	x := ref.Owner
	op.Attach = dissect.OpAttachment{Owner: x, I: int(ref.I)}
	x.Ops++
	if op.Kind == dissect.RDMARead {
		x.ReadBytes += uint64(op.Length)
		q.ReadBytes += uint64(op.Length)
	} else {
		x.WriteBytes += uint64(op.Length)
		q.WriteBytes += uint64(op.Length)
	}
}

// Close ends the requests still open, in the order they came, and
// releases the reassembly buffers.
func (s *session) Close() {
	s.recycle()
	open := make([]*Request, 0, len(s.out))
	for _, x := range s.out {
		open = append(open, x)
	}
	sort.Slice(open, func(i, j int) bool { return open[i].seq < open[j].seq })
	for _, x := range open {
		s.finish(x, nil, nil, dissect.NoResponse)
	}
	s.release(0)
	s.release(1)
	for d := range s.keepalive {
		if s.keepalive[d] != 0 {
			s.sum.unanswered[d] = unanswered{packet: s.keepalive[d], later: s.keepaliveLater[d]}
		}
	}
}

// unanswered is a keep-alive request no Send of the peer followed: its
// packet, and the Sends its sender made after it.
type unanswered struct{ packet, later int }

func other(d dissect.Direction) dissect.Direction {
	if d == dissect.DirServerToClient {
		return dissect.DirClientToServer
	}
	return dissect.DirServerToClient
}

// ULPTableHeader and ULPTableRow give the connection's row of analyze's
// text table (report.ULPTable).
func (q *Conn) ULPTableHeader() []string {
	return []string{"Version", "Credits to C / S", "MaxRecv C / S", "MaxRW", "Reqs / Resps", "RDMA ch. / Inv.", "File read / written", "Unpaired"}
}

// ULPTableRow: see ULPTableHeader.
func (q *Conn) ULPTableRow() []string {
	n := strconv.FormatUint
	ver, maxrw, credits, recv := "-", "-", "-", "-"
	if r := q.Response; r != nil {
		ver, maxrw = r.NegotiatedVersion, n(uint64(r.MaxReadWriteSize), 10)
		credits = n(q.Server.Granted, 10) + " / " + n(q.Client.Granted, 10)
		recv = "- / " + n(uint64(r.MaxReceiveSize), 10)
		if q.Request != nil {
			recv = n(uint64(q.Request.MaxReceiveSize), 10) + " / " + n(uint64(r.MaxReceiveSize), 10)
		}
	}
	return []string{ver, credits, recv, maxrw, n(q.Requests, 10) + " / " + n(q.Responses, 10),
		n(q.RDMAChannel, 10) + " / " + n(q.RemoteInvalidations, 10),
		n(q.WriteBytes, 10) + " / " + n(q.ReadBytes, 10),
		n(q.RequestsWithoutResponse+q.ResponsesWithoutRequest, 10)}
}
