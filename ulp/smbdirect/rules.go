package smbdirect

import (
	"fmt"
	"strconv"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	smbd "github.com/rdmashark/rdmashark/smbdirect"
)

// Rules are SMB Direct's conformance rules, for check.Register. Each cites
// the section of [MS-SMBD] (and [MS-SMB2] where the SMB2 side says it) it
// enforces. Like every rule they judge what the capture holds and no
// more: a capture that lacks packets (PSNs skipped, TCP bytes missing, a
// connection without its set-up or its negotiation) makes the rules that
// would need them not evaluated, never a finding.
func Rules() []*check.Rule {
	applies := check.NeedsULP(Name)
	neutral := &check.Neutral{ULP: Name, Protocol: "SMB Direct", Requester: "client", Responder: "server",
		Request: "request", Response: "response", Conn: "connection", Tag: "token", Offset: "offset", Memory: "buffer",
		Region:    func(dissect.RDMAOpKind) string { return "buffer descriptor of a READ or WRITE" },
		AppendKey: AppendKey, KeyText: func(key uint64) string { return "MessageId " + strconv.FormatUint(key, 10) },
		Damaged: damaged, Invalidated: invalidated,
		Keys: check.NeutralKeys{ByRequester: "by-client", Unadvertised: "unadvertised", AfterResponse: "after-response",
			InvalidateByRequester: "by-client", Foreign: "token"}}
	return []*check.Rule{
		{
			ID: "SMBD-NEGOTIATE-FIRST", Severity: check.Error, ULP: Name,
			Reference: "[MS-SMBD] 3.1.5.6 Receiving a Negotiate Request Message; 2.2.1, 2.2.2",
			Summary:   "the client's first Send is a Negotiate Request, the server's first a Negotiate Response",
			Explanation: `An SMB Direct connection starts with the negotiation: the first message the
listening side receives is a 20-byte Negotiate Request, and it answers with a
32-byte Negotiate Response before any Data Transfer Message. Data before the
negotiation cannot be interpreted (no credits, no sizes are agreed).`,
			Evidence: "the connection's first Sends, with its set-up",
			Applies:  applies, ULPMessage: checkNegotiateFirst,
		},
		{
			ID: "SMBD-NEGOTIATE-VALUES", Severity: check.Error, ULP: Name,
			Reference: "[MS-SMBD] 3.1.5.6 Receiving a Negotiate Request Message; 3.1.5.7 Receiving a Negotiate Response Message; 2.2.1, 2.2.2",
			Summary:   "the negotiation names version 0x0100, credits above 0, MaxReceiveSize ≥ 128, MaxFragmentedSize ≥ 131072",
			Explanation: `The Negotiate Request's MinVersion..MaxVersion must include 0x0100 and its
CreditsRequested be above 0, its MaxReceiveSize at least 128 and its
MaxFragmentedSize at least 131,072 octets; otherwise the server terminates the
connection. A successful Negotiate Response names NegotiatedVersion 0x0100
(inside the client's range) and holds the same bounds, with CreditsGranted above
0: a client granted no credit can never send.`,
			Evidence: "the connection's Negotiate Request and Response",
			Applies:  applies, End: checkNegotiateValues,
		},
		{
			ID: "SMBD-RECV-SIZE", Severity: check.Error, ULP: Name,
			Reference: "[MS-SMBD] 3.1.5.1 Sending Upper Layer Messages; 3.1.5.6 Receiving a Negotiate Request Message (Connection.MaxSendSize); 2.2.1 MaxReceiveSize",
			Summary:   "no Send is longer than the MaxReceiveSize its receiver negotiated",
			Explanation: `Each peer posts receive buffers of the MaxReceiveSize it named in the
negotiation; the sender keeps every Data Transfer Message within it (fragmenting
larger upper-layer messages). A longer Send overruns the receiver's buffer: on
RDMA the receive fails and the connection is lost.`,
			Evidence: "the negotiation and the connection's Sends",
			Applies:  applies, ULPMessage: checkRecvSize,
		},
		{
			ID: "SMBD-FRAGMENTED-SIZE", Severity: check.Error, ULP: Name,
			Reference: "[MS-SMBD] 2.2.3 Data Transfer Message (RemainingDataLength); 3.1.5.6 Receiving a Negotiate Request Message (Connection.MaxFragmentedSendSize); 2.2.1 MaxFragmentedSize",
			Summary:   "a fragmented message is at most its receiver's MaxFragmentedSize, and each fragment's RemainingDataLength follows from the previous",
			Explanation: `An upper-layer message longer than one Send goes in fragments: each Data
Transfer Message names in RemainingDataLength the octets that follow it, so that
the receiver knows the whole length from the first fragment and every later
RemainingDataLength is the previous one less the DataLength just carried. The
whole message must not exceed the MaxFragmentedSize the receiver negotiated.`,
			Evidence: "the negotiation and every fragment of the message",
			Applies:  applies, ULPMessage: checkFragmented,
		},
		{
			ID: "SMBD-CREDITS", Severity: check.Error, ULP: Name,
			Reference: "[MS-SMBD] 3.1.5.1 Sending Upper Layer Messages; 3.1.5.9 Managing Credits Prior to Sending",
			Summary:   "every Data Transfer Message spends a credit its peer granted, and the last credit only with a grant",
			Explanation: `A credit is a receive buffer the peer posted: the Negotiate Response grants the
client its first credits, and every Data Transfer Message grants the peer more in
CreditsGranted. A peer may send only while it holds a credit, and may spend its
last one only on a message that grants credits back (else both sides could end
up holding none).`,
			Evidence: "the negotiation and every Send of the connection",
			Applies:  applies, ULPMessage: checkCredits,
		},
		neutral.Rule(check.NeutralRule{Checks: check.RDMAByRequester | check.RDMAUnadvertised | check.RDMAAfterResponse,
			Attached: checkMaxReadWrite, Rule: check.Rule{
				ID: "SMBD-RDMA-DESCRIPTOR", Severity: check.Error,
				Reference: "[MS-SMBD] 2.2.3.1 Buffer Descriptor V1 Structure, 2.2.2 MaxReadWriteSize; [MS-SMB2] 2.2.19, 2.2.21, 3.3.5.12 Receiving an SMB2 READ Request, 3.3.5.13 Receiving an SMB2 WRITE Request",
				Summary:   "only the server initiates RDMA, inside the buffer descriptors of an outstanding READ or WRITE, within MaxReadWriteSize",
				Explanation: `A client asks for RDMA by naming its registered buffers (buffer descriptors V1:
offset, token, length) in the channel info of a READ or WRITE request; the server
then RDMA Writes the data read into them, or RDMA Reads the data to write from
them, before it responds. Every RDMA operation must fall inside a descriptor of
a request still outstanding, and a request's descriptors must not total more
than the MaxReadWriteSize the server negotiated. The client initiates none.`,
				Evidence: "the READ and WRITE requests and the connection's RDMA operations",
			}}),
		neutral.Rule(check.NeutralRule{Checks: check.InvalidateForeign, Rule: check.Rule{
			ID: "SMBD-INVALIDATE", Severity: check.Error,
			Reference: "[MS-SMB2] 2.2.19, 2.2.21 (SMB2_CHANNEL_RDMA_V1_INVALIDATE), 3.3.5.12 Receiving an SMB2 READ Request, 3.3.5.13 Receiving an SMB2 WRITE Request; [MS-SMBD] 3.1.4.2, 3.1.5.1 Sending Upper Layer Messages",
			Summary:   "a Send With Invalidate answers a READ or WRITE whose channel was RDMA_V1_INVALIDATE, invalidating its descriptor's token",
			Explanation: `With SMB2_CHANNEL_RDMA_V1_INVALIDATE the client lets the server invalidate the
token of the request's buffer descriptor remotely, by sending the response With
Invalidate. Invalidating a token the answered request did not name, or for a
request whose channel was SMB2_CHANNEL_RDMA_V1, tears down memory the client
still uses.`,
			Evidence: "the Sends With Invalidate and the requests they answer",
		}}),
		{
			ID: "SMBD-KEEPALIVE-UNANSWERED", Severity: check.Warning, ULP: Name,
			Reference: "[MS-SMBD] 2.2.3 Data Transfer Message (SMB_DIRECT_RESPONSE_REQUESTED); 3.1.5.1 Sending Upper Layer Messages; Idle Connection Timer",
			Summary:   "a Send with SMB_DIRECT_RESPONSE_REQUESTED is followed by a Send of the peer",
			Explanation: `A peer checks an idle connection by sending a Data Transfer Message with the
SMB_DIRECT_RESPONSE_REQUESTED flag; the receiver must send a message (an empty
one if it has nothing else) promptly. A peer that never answers while the
requester keeps sending is taken for dead when the requester's timer expires.`,
			Evidence: "a keep-alive request, later Sends of its sender, and no Send of the peer",
			Applies:  applies, End: checkKeepalive,
		},
	}
}

func connOf(c *check.Conn) *Conn {
	q, _ := c.Connection.ULPData.(*Conn)
	return q
}

// damaged reports whether the capture (or the analysis, within its
// budget) lacks part of the connection, so that a missing message explains
// what would be a finding: its set-up is not in it, bytes or PSNs were
// skipped, requests were evicted, or reassemblies given up at the buffer
// budget left SMB2 messages undecoded.
func damaged(c *check.Conn) bool {
	q := connOf(c)
	return c.State == dissect.StateNoSetup || c.MissingPSNs > 0 || tcpMissing(c.Connection) ||
		q != nil && (q.Evicted > 0 || q.Client.FragmentsCut+q.Server.FragmentsCut > 0)
}

// tcpMissing reports whether an iWARP connection's TCP streams lack
// octets the capture never had (IB/RoCE: MissingPSNs says it).
func tcpMissing(c *dissect.Connection) bool {
	h := c.Health
	return h != nil && h.Dir[0].TCPMissingOctets+h.Dir[1].TCPMissingOctets > 0
}

// AppendKey appends an SMB Direct exchange key, the SMB2 MessageId, as
// "MID:N" (fields.RegisterExchangeKey).
func AppendKey(dst []byte, key uint64) []byte {
	return strconv.AppendUint(append(dst, "MID:"...), key, 10)
}

func exchangeKey(id uint64) string { return string(AppendKey(nil, id)) }

func sendOf(m *dissect.Message) *Send {
	r, _ := m.ULP.(*Send)
	return r
}

func checkNegotiateFirst(c *check.Conn, m *dissect.Message) {
	r := sendOf(m)
	if r == nil || !r.First {
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	if m.Dir == dissect.DirServerToClient && r.Conn.Request == nil {
		return // the client's finding says it
	}
	c.Checked()
	switch {
	case m.Dir == dissect.DirClientToServer && r.Kind != KindNegotiateRequest:
		c.Reportf(m.Packets, "request", "the client's first Send (%d octets) is not a Negotiate Request: 20 octets with MinVersion..MaxVersion including 0x0100", m.Length)
	case m.Dir == dissect.DirServerToClient && r.Kind != KindNegotiateResponse:
		c.Reportf(m.Packets, "response", "the server's first Send (%d octets) is not a Negotiate Response (32 octets)", m.Length)
	}
}

func checkNegotiateValues(c *check.Conn) {
	q := connOf(c)
	if q == nil || q.Request == nil && q.Response == nil {
		return
	}
	c.Checked()
	if rq := q.Request; rq != nil {
		n, pk := &rq.raw, []int{rq.Packet}
		if n.MinVersion > smbd.Version1 || n.MaxVersion < smbd.Version1 {
			c.Reportf(pk, "req-version", "the Negotiate Request's versions %s..%s do not include 0x0100", n.MinVersion, n.MaxVersion)
		}
		checkSizes(c, pk, "Negotiate Request", n.CreditsRequested, n.MaxReceiveSize, n.MaxFragmentedSize)
	}
	rs := q.Response
	if rs == nil || rs.raw.Status != smbd.StatusSuccess {
		return // a failure response names no values to hold to
	}
	n, pk := &rs.raw, []int{rs.Packet}
	switch {
	case n.NegotiatedVersion != smbd.Version1:
		c.Reportf(pk, "resp-version", "the Negotiate Response names NegotiatedVersion %s; SMB Direct 1.0 is 0x0100", n.NegotiatedVersion)
	case q.Request != nil && (n.NegotiatedVersion < q.Request.raw.MinVersion || n.NegotiatedVersion > q.Request.raw.MaxVersion):
		c.Reportf(pk, "resp-version", "the Negotiate Response's NegotiatedVersion %s is outside the client's %s..%s",
			n.NegotiatedVersion, q.Request.raw.MinVersion, q.Request.raw.MaxVersion)
	}
	if n.CreditsGranted == 0 {
		c.Reportf(pk, "granted", "the Negotiate Response grants the client no credit: it can never send")
	}
	checkSizes(c, pk, "Negotiate Response", n.CreditsRequested, n.MaxReceiveSize, n.MaxFragmentedSize)
}

func checkSizes(c *check.Conn, pk []int, what string, credits uint16, recv, frag uint32) {
	if credits == 0 {
		c.Reportf(pk, "credits", "the %s's CreditsRequested is 0", what)
	}
	if recv < 128 {
		c.Reportf(pk, "max-receive", "the %s's MaxReceiveSize %d is below 128", what, recv)
	}
	if frag < 131072 {
		c.Reportf(pk, "max-fragmented", "the %s's MaxFragmentedSize %d is below 131072", what, frag)
	}
}

func peerName(d dissect.Direction) string {
	if d == dissect.DirClientToServer {
		return "server"
	}
	return "client"
}

func checkRecvSize(c *check.Conn, m *dissect.Message) {
	r := sendOf(m)
	if r == nil || r.Kind != KindData {
		return
	}
	limit := r.Conn.maxReceive(m.Dir)
	if limit == 0 {
		c.Skip(check.ReasonNoSetup)
		return
	}
	if m.EvidenceLost() {
		// Its length is a guess across what the capture lost.
		c.Skip(check.ReasonCaptureGap)
		return
	}
	c.Checked()
	if uint32(m.Length) > limit {
		c.Reportf(m.Packets, "size", "a Data Transfer Message of %d octets to the %s, whose MaxReceiveSize is %d", m.Length, peerName(m.Dir), limit)
	}
}

func checkFragmented(c *check.Conn, m *dissect.Message) {
	r := sendOf(m)
	if r == nil || r.Kind != KindData || r.Err != nil || r.Reassembled == 0 && !r.RemainingMismatch {
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	c.Checked()
	if r.RemainingMismatch {
		c.Reportf(m.Packets, "remaining", "a fragment's RemainingDataLength %d does not follow from the previous fragment's less its DataLength %d",
			r.Data.RemainingDataLength, r.Data.DataLength)
	}
	if limit := smbdLimit(r.Conn, m.Dir); r.Reassembled > 0 && limit > 0 && uint64(r.Reassembled) > uint64(limit) {
		c.Reportf(m.Packets, "size", "a message of %d octets in %d fragments to the %s, whose MaxFragmentedSize is %d",
			r.Reassembled, r.Fragments, peerName(m.Dir), limit)
	}
}

func smbdLimit(q *Conn, dir dissect.Direction) uint32 {
	if dir == dissect.DirClientToServer {
		if q.Response != nil {
			return q.Response.MaxFragmentedSize
		}
	} else if q.Request != nil {
		return q.Request.MaxFragmentedSize
	}
	return 0
}

func checkCredits(c *check.Conn, m *dissect.Message) {
	r := sendOf(m)
	if r == nil || r.Kind != KindData {
		return
	}
	if !r.CreditsKnown || damaged(c) {
		c.Skip(check.ReasonNoSetup)
		return
	}
	c.Checked()
	switch {
	case r.NoCredit:
		c.Reportf(m.Packets, "no-credit", "the %s sent a Data Transfer Message holding no credit: its peer has granted none it has not used",
			peerName(other(m.Dir)))
	case r.LastCredit:
		c.Reportf(m.Packets, "last-credit", "the %s spent its last credit on a message that grants none (CreditsGranted 0)", peerName(other(m.Dir)))
	}
}

// checkMaxReadWrite judges an RDMA operation attached to a READ or WRITE
// (SMBD-RDMA-DESCRIPTOR): the request's descriptors, at its first
// operation, total at most the MaxReadWriteSize the server negotiated.
func checkMaxReadWrite(c *check.Conn, op *dissect.RDMAOp) {
	q := connOf(c)
	x, _ := op.Attach.Owner.(*Request)
	if x == nil || x.Ops != 1 || q == nil || q.Response == nil {
		return
	}
	if t := x.DescriptorTotal(); t > uint64(q.Response.MaxReadWriteSize) {
		c.Report(check.Finding{Packets: []int{x.Packet}, Key: "max-read-write", ULP: Name, Exchange: exchangeKey(x.MessageID),
			Message: fmt.Sprintf("the %s's buffer descriptors total %d octets, more than the MaxReadWriteSize %d the server negotiated",
				x.Command, t, q.Response.MaxReadWriteSize)})
	}
}

// invalidated reads a Send With Invalidate for SMBD-INVALIDATE: the READ
// or WRITE it answers must have named the token in a buffer descriptor
// and asked for remote invalidation (SMB2_CHANNEL_RDMA_V1_INVALIDATE).
func invalidated(c *check.Conn, m *dissect.Message) (inv check.Invalidation, ok bool) {
	r := sendOf(m)
	if r == nil || !r.Invalidate {
		return inv, false
	}
	x := r.InvRequest
	if x == nil {
		for i := range r.SMB2 {
			if h := &r.SMB2[i].Header; h.Response() && !h.Interim() && r.SMB2[i].Request != nil {
				x = r.SMB2[i].Request
				break
			}
		}
	}
	if x == nil {
		inv.Unsure = r.Err != nil || r.Fragment || r.Cut
		return inv, true
	}
	inv = check.Invalidation{Answered: true, Key: x.MessageID, Packet: x.Packet, Name: x.Command.String(),
		Advertised: x == r.InvRequest}
	if inv.Advertised && x.Channel != smbd.ChannelRDMAV1Invalidate {
		inv.NotAllowedKey, inv.NotAllowed = "channel", fmt.Sprintf(
			"the response to %s (MessageId %d) invalidated token 0x%08x, but the request's channel was %s, not SMB2_CHANNEL_RDMA_V1_INVALIDATE",
			x.Command, x.MessageID, r.InvalidatedSTag, x.Channel)
	}
	return inv, true
}

func checkKeepalive(c *check.Conn) {
	q := connOf(c)
	if q == nil || q.Client.KeepalivesRequested+q.Server.KeepalivesRequested == 0 {
		return
	}
	for d, u := range q.unanswered {
		if u.packet == 0 {
			continue
		}
		if u.later == 0 || damaged(c) {
			// The capture (or the connection) ended before the peer had
			// to answer.
			c.Skip(check.ReasonMidTransaction)
			continue
		}
		c.Checked()
		req := "client"
		if d == 1 {
			req = "server"
		}
		c.Reportf([]int{u.packet}, "unanswered", "the %s asked for a response (SMB_DIRECT_RESPONSE_REQUESTED) and sent %d more messages, but the %s sent nothing after it",
			req, u.later, map[string]string{"client": "server", "server": "client"}[req])
	}
	if q.unanswered[0].packet == 0 && q.unanswered[1].packet == 0 {
		c.Checked()
	}
}
