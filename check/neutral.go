package check

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
)

// The protocol-neutral rules of a request/response ULP on RDMA (issue 25):
// the requester (RPC client, NVMe host, iSCSI initiator, SMB client)
// advertises memory with each request and only the responder (RPC server,
// controller, target, SMB server) moves data by RDMA, inside what an
// outstanding request advertised and before its response; a response by Send With Invalidate invalidates an
// STag of the request it answers, when the ULP allowed it. They are
// written once here and instantiated by each plug-in under its own rule
// IDs (Neutral.Rule), reading what the session left on the model:
// RDMAOp.Attach (dissect.Memory: Attached, UnattachedAfterResponse,
// UnattachedCaptureGap, ...) and, for Sends With Invalidate, the ULP's
// record through Neutral.Invalidated. Every plug-in instantiates them:
// NVMe/RDMA, iSER, SMB Direct, SRP and RPC-over-RDMA (whose findings keep
// the words they had before these rules were neutral: Neutral.Words).

// Neutral describes one ULP to the neutral rules: its name, how its
// findings name the parties and the memory, and how to read its records.
type Neutral struct {
	// ULP is the plug-in's Name (Rule.ULP, NeedsULP).
	ULP string
	// Protocol names the ULP in findings ("NVMe/RDMA", "iSER").
	Protocol string
	// Requester and Responder name the parties ("host", "controller");
	// Request, Response and Conn an exchange's halves and the connection
	// ("command", "completion", "queue").
	Requester, Responder string
	Request, Response    string
	Conn                 string
	// Tag and Offset name an RDMA operation's STag and offset ("key",
	// "address"); Memory what a request advertised ("memory", "buffer").
	Tag, Offset, Memory string
	// Region names what an RDMA operation of kind k must fall inside,
	// with its request: "keyed SGL of a command".
	Region func(k dissect.RDMAOpKind) string
	// AppendKey writes an exchange key as the exchanges listing does;
	// KeyText names a request by it in a message ("CID 65").
	AppendKey func(dst []byte, key uint64) []byte
	KeyText   func(key uint64) string
	// Damaged reports whether the capture (or the analysis, at its
	// bounds) lacks part of the connection, so that a request it lacks
	// explains what would be a finding (not evaluated,
	// ReasonMidTransaction).
	Damaged func(c *Conn) bool
	// Answered, when set, names the request a response at packet
	// replyPacket answered (its whole key, its name) for an RDMA
	// operation after it: dissect.Memory keeps 32 bits of a key, too few
	// for a 64-bit one (SRP's tag). Not ok: the request is named no
	// further than "a request". When nil, the key is the operation's
	// OpAttachment.Key.
	Answered func(c *Conn, replyPacket int) (key uint64, name string, ok bool)
	// Invalidated reads the ULP's record of a Send (m.ULP): ok when it is
	// a Send With Invalidate the rules judge, with what the ULP knows of
	// it.
	Invalidated func(c *Conn, m *dissect.Message) (inv Invalidation, ok bool)
	// Keys are the findings' keys (Finding.Key, what a baseline matches).
	Keys NeutralKeys
	// Words, when set, words a finding in the ULP's own terms: it gets
	// the finding the neutral rule made (w.Finding), with what it is
	// about, and may rewrite its Message, Key, XID, Exchange and
	// Packets. RPC-over-RDMA's findings are older than these rules: their
	// messages and keys are an output contract, and say more than the
	// neutral ones (the chunk lists, the Calls outstanding).
	Words func(c *Conn, w *Wording)
}

// Wording is what Neutral.Words gets: the finding and what it is about.
type Wording struct {
	Finding *Finding
	// Check is the check that found it.
	Check NeutralCheck
	// Op is the RDMA operation of the RDMA checks' findings.
	Op *dissect.RDMAOp
	// Msg and Inv are the Send With Invalidate of the invalidation's
	// findings and what the ULP's record says of it.
	Msg *dissect.Message
	Inv *Invalidation
}

// word lets the ULP word f (Neutral.Words).
func (n *Neutral) word(c *Conn, f *Finding, k NeutralCheck, op *dissect.RDMAOp, m *dissect.Message, inv *Invalidation) {
	if n.Words != nil {
		n.Words(c, &Wording{Finding: f, Check: k, Op: op, Msg: m, Inv: inv})
	}
}

// NeutralKeys are the keys of the neutral findings; an empty one is the
// RDMA operation's kind ("RDMA Read") for the RDMA checks, and "by-"
// Requester, "no-request" and "foreign-stag" for the invalidation's.
type NeutralKeys struct {
	ByRequester, Unadvertised, AfterResponse  string
	InvalidateByRequester, NoRequest, Foreign string
}

// Invalidation is a Send With Invalidate as the ULP's record says it.
type Invalidation struct {
	// Answered: the Send answers an outstanding request, with Key,
	// Packet and Name (its exchange key, its packet and what it asked).
	Answered bool
	Key      uint64
	Packet   int
	Name     string
	// Advertised: the request advertised the STag invalidated; Asked,
	// when it did not, says what it did ask to be invalidated (";
	// the command asked to invalidate key 0x…"), or what it advertised.
	Advertised bool
	Asked      string
	// NotAllowed, when set, is why the ULP did not allow this
	// invalidation (the finding's message), under NotAllowedKey: the
	// negotiation or the request did not ask for remote invalidation.
	// BySetUp: the connection's set-up refused it, whatever the request
	// (the finding names the Send alone, judged at once).
	NotAllowed, NotAllowedKey string
	BySetUp                   bool
	// Unsure: the Send's request cannot be told (it did not decode, a
	// fragment, a reassembly cut): no request answered is then not a
	// finding, but not evaluated for UnsureWhy (ReasonMidTransaction
	// when none).
	Unsure    bool
	UnsureWhy Reason
	// Undecodable: the ULP could not tell what the Send is (its header
	// did not decode): a rule of InvalidateByRequester alone, which
	// examines every Send, leaves it not evaluated.
	Undecodable bool
	// Role, when not RoleByDirection, says whether the Send may carry an
	// invalidation where its direction does not tell (RPC-over-RDMA,
	// whose backchannel turns the roles round: a Reply may, from either
	// side; a Call or an RDMA_ERROR may not).
	Role InvalidateRole
	// What names the message ("SCSI Response"), "" when nothing more
	// than a Send.
	What string
}

// InvalidateRole says who may send a Send With Invalidate
// (Invalidation.Role).
type InvalidateRole uint8

const (
	// RoleByDirection: the responder's Sends may, the requester's may
	// not.
	RoleByDirection InvalidateRole = iota
	// RoleResponse: the Send is a response, which may.
	RoleResponse
	// RoleOther: the Send is no response (a request, an error), which
	// may not, whichever side sent it.
	RoleOther
)

// NeutralCheck is one of the neutral checks, to combine in one rule.
type NeutralCheck uint8

const (
	// RDMAByRequester: the requester initiates no RDMA Read or Write.
	RDMAByRequester NeutralCheck = 1 << iota
	// RDMAReadUnadvertised and RDMAWriteUnadvertised: an RDMA Read
	// (Write) of the responder falls inside a region an outstanding
	// request advertised for it (a ULP with one rule per kind).
	RDMAReadUnadvertised
	RDMAWriteUnadvertised
	// RDMAAfterResponse: none targets a request's memory after its
	// response.
	RDMAAfterResponse
	// InvalidateByRequester: no Send With Invalidate comes from the
	// requester (or is no response: Invalidation.Role). Alone in a rule,
	// it examines every Send of the ULP.
	InvalidateByRequester
	// InvalidateSTag: a Send With Invalidate of the responder is allowed
	// by the ULP, answers an outstanding request and invalidates an STag
	// that request advertised.
	InvalidateSTag

	// RDMAUnadvertised: both kinds of RDMAReadUnadvertised and
	// RDMAWriteUnadvertised.
	RDMAUnadvertised = RDMAReadUnadvertised | RDMAWriteUnadvertised
	// InvalidateForeign: InvalidateByRequester and InvalidateSTag, in
	// one rule.
	InvalidateForeign = InvalidateByRequester | InvalidateSTag
)

// unadvertised is the check of RDMA operations of kind k outside every
// advertised region.
func unadvertised(k dissect.RDMAOpKind) NeutralCheck {
	if k == dissect.RDMARead {
		return RDMAReadUnadvertised
	}
	return RDMAWriteUnadvertised
}

// NeutralRule is one rule made of neutral checks: Rule gives its ID,
// severity and texts (Neutral.Rule fills in ULP, Applies and the check
// functions); Attached, when set, also judges every RDMA operation
// attached to a request (a ULP's own limit on it).
type NeutralRule struct {
	Rule
	Checks   NeutralCheck
	Attached func(c *Conn, op *dissect.RDMAOp)
}

// Rule makes the rule spec describes for n's ULP.
func (n *Neutral) Rule(spec NeutralRule) *Rule {
	ru := spec.Rule
	ru.ULP = n.ULP
	if ru.Applies == nil {
		ru.Applies = NeedsULP(n.ULP)
	}
	checks, attached := spec.Checks, spec.Attached
	if checks&(RDMAByRequester|RDMAUnadvertised|RDMAAfterResponse) != 0 {
		ru.RDMAOp = func(c *Conn, op *dissect.RDMAOp) { n.rdmaOp(c, op, checks, attached) }
	}
	if checks&InvalidateForeign != 0 {
		only := checks&InvalidateSTag == 0 // see invalidate
		ru.ULPMessage = func(c *Conn, m *dissect.Message) {
			if m.Invalidate || only {
				n.invalidate(c, m, checks)
			}
		}
	}
	return &ru
}

func (n *Neutral) key(k string, op *dissect.RDMAOp) string {
	if k == "" {
		return op.Kind.String()
	}
	return k
}

func (n *Neutral) exchange(key uint64) string {
	if n.AppendKey == nil {
		return ""
	}
	return string(n.AppendKey(nil, key))
}

func (n *Neutral) opText(op *dissect.RDMAOp) string {
	return fmt.Sprintf("%s of %d bytes at %s 0x%08x %s 0x%x", op.Kind, op.Length, n.Tag, op.STag, n.Offset, op.Offset)
}

func (n *Neutral) damaged(c *Conn) bool { return n.Damaged != nil && n.Damaged(c) }

// rdmaOp judges op by the checks of one rule. An operation no session of
// the ULP looked at (dissect.UnattachedNoULP: its connection's ULP was
// not decided yet, or it carries none, for a rule that also runs on
// unclaimed connections) is none of the ULP's to judge. The requester's
// operations are RDMAByRequester's alone; the responder's are judged by
// where the session attached them (dissect.Memory): to a request
// (checked), to one already answered (RDMAAfterResponse), or to none
// (RDMA*Unadvertised; capture loss, or an outstanding request whose
// regions did not decode, makes either not evaluated).
func (n *Neutral) rdmaOp(c *Conn, op *dissect.RDMAOp, checks NeutralCheck, attached func(*Conn, *dissect.RDMAOp)) {
	if op.Attach.Reason == dissect.UnattachedNoULP {
		return
	}
	if op.Dir == dissect.DirClientToServer {
		if checks&RDMAByRequester == 0 {
			return
		}
		c.Checked()
		if c.dropped() {
			return
		}
		f := Finding{Packets: op.Packets, Key: n.key(n.Keys.ByRequester, op), Message: fmt.Sprintf(
			"the %s initiated an %s; on %s only the %s moves data by RDMA", n.Requester, n.opText(op), n.Protocol, n.Responder)}
		n.word(c, &f, RDMAByRequester, op, nil, nil)
		c.Report(f)
		return
	}
	if checks == RDMAByRequester {
		c.Checked() // the responder's: what the rule asks of it holds
		return
	}
	unadv := checks&unadvertised(op.Kind) != 0
	if op.Dir != dissect.DirServerToClient || !unadv && checks&RDMAAfterResponse == 0 {
		return
	}
	switch a := &op.Attach; a.Reason {
	case dissect.Attached:
		c.Checked()
		if attached != nil {
			attached(c, op)
		}
	case dissect.UnattachedCaptureGap:
		c.Skip(ReasonCaptureGap)
	case dissect.UnattachedAfterResponse:
		if checks&RDMAAfterResponse == 0 {
			return
		}
		c.Checked()
		key := uint64(a.Key)
		f := Finding{Packets: append(append([]int{}, op.Packets...), a.ResponsePacket), Key: n.key(n.Keys.AfterResponse, op)}
		if n.Answered != nil {
			k, name, ok := n.Answered(c, a.ResponsePacket)
			if !ok {
				f.Message = fmt.Sprintf("the %s's %s targets the %s of a %s after its %s (packet %d)",
					n.Responder, n.opText(op), n.Memory, n.Request, n.Response, a.ResponsePacket)
				n.word(c, &f, RDMAAfterResponse, op, nil, nil)
				c.Report(f)
				return
			}
			f.Exchange = n.exchange(k)
			f.Message = fmt.Sprintf("the %s's %s targets the %s of %s (%s) after its %s (packet %d)",
				n.Responder, n.opText(op), n.Memory, name, n.KeyText(k), n.Response, a.ResponsePacket)
			n.word(c, &f, RDMAAfterResponse, op, nil, nil)
			c.Report(f)
			return
		}
		f.Exchange = n.exchange(key)
		f.Message = fmt.Sprintf("the %s's %s targets the %s of the %s with %s after its %s (packet %d)",
			n.Responder, n.opText(op), n.Memory, n.Request, n.KeyText(key), n.Response, a.ResponsePacket)
		n.word(c, &f, RDMAAfterResponse, op, nil, nil)
		c.Report(f)
	case dissect.UnattachedRequestUnknown:
		if unadv {
			// An outstanding request's regions did not decode: the
			// operation may well be its.
			c.Skip(ReasonCallUnknown)
		}
	default:
		if !unadv {
			return
		}
		if n.damaged(c) {
			c.Skip(ReasonMidTransaction)
			return
		}
		// The request that advertised it may be one the capture lost:
		// judged at the end of the connection.
		f := Finding{Packets: op.Packets, Key: n.key(n.Keys.Unadvertised, op), Message: fmt.Sprintf(
			"the %s's %s is inside no %s outstanding on the %s", n.Responder, n.opText(op), n.Region(op.Kind), n.Conn)}
		n.word(c, &f, unadvertised(op.Kind), op, nil, nil)
		c.Hold(f, dissect.DirClientToServer, 0, dissect.FirstPacket(op.Packets))
	}
}

// invalidate judges a Send With Invalidate: sent by the responder, as the
// ULP allowed, answering an outstanding request that advertised the STag
// it invalidated. A finding about a request rests on the capture holding
// every Send between the request and the response (a later request with
// the same key, a response the capture lost): judged at the end of the
// connection.
func (n *Neutral) invalidate(c *Conn, m *dissect.Message, checks NeutralCheck) {
	// A rule of InvalidateByRequester alone examines every Send: one
	// not sent With Invalidate, or by the responder, passes it. Any
	// other rule has nothing to judge in a Send without Invalidate.
	only := checks&InvalidateSTag == 0
	if !m.Invalidate && !only {
		return
	}
	inv, ok := n.Invalidated(c, m)
	if !ok {
		return
	}
	if inv.Undecodable {
		if only {
			c.Skip(ReasonUndecodable)
		}
		return
	}
	if !m.Invalidate {
		if only {
			c.Checked()
		}
		return
	}
	byRequester := m.Dir == dissect.DirClientToServer
	if inv.Role != RoleByDirection {
		byRequester = inv.Role == RoleOther
	}
	if byRequester {
		if checks&InvalidateByRequester == 0 {
			return
		}
		c.Checked()
		if c.dropped() {
			return
		}
		key := n.Keys.InvalidateByRequester
		if key == "" {
			key = "by-" + n.Requester
		}
		f := Finding{Packets: m.Packets, Key: key, Message: fmt.Sprintf("the %s sent With Invalidate of %s 0x%08x; only the %s's responses may",
			n.Requester, n.Tag, m.InvalidatedSTag, n.Responder)}
		iv := inv // its own copy: &inv would put inv on the heap for every Send
		n.word(c, &f, InvalidateByRequester, nil, m, &iv)
		c.Report(f)
		return
	}
	if only {
		c.Checked()
		return
	}
	to := dissect.FirstPacket(m.Packets)
	f := Finding{Packets: []int{inv.Packet, dissect.LastPacket(m.Packets)}}
	if inv.Answered {
		f.Exchange = n.exchange(inv.Key)
	}
	switch {
	case inv.NotAllowed != "":
		f.Key, f.Message = inv.NotAllowedKey, inv.NotAllowed
		if !inv.Answered || inv.BySetUp {
			c.Checked()
			f.Packets = m.Packets
			c.Report(f)
			return
		}
		c.Hold(f, dissect.DirUnknown, inv.Packet, to)
	case !inv.Answered:
		if inv.Unsure || n.damaged(c) {
			why := inv.UnsureWhy
			if why == ReasonNone {
				why = ReasonMidTransaction
			}
			c.Skip(why)
			return
		}
		key := n.Keys.NoRequest
		if key == "" {
			key = "no-request"
		}
		what := ""
		if inv.What != "" {
			what = " (" + inv.What + ")"
		}
		// Its request may be one the capture lost.
		f = Finding{Packets: m.Packets, Key: key, Message: fmt.Sprintf("a Send With Invalidate of %s 0x%08x%s answers no %s outstanding on the %s",
			n.Tag, m.InvalidatedSTag, what, n.Request, n.Conn)}
		iv := inv
		n.word(c, &f, InvalidateSTag, nil, m, &iv)
		c.Hold(f, dissect.DirClientToServer, 0, to)
	case inv.Advertised:
		c.Checked()
	default:
		f.Key = n.Keys.Foreign
		if f.Key == "" {
			f.Key = "foreign-stag"
		}
		f.Message = fmt.Sprintf("the %s to %s (%s) invalidated %s 0x%08x, which the %s did not advertise%s",
			n.Response, inv.Name, n.KeyText(inv.Key), n.Tag, m.InvalidatedSTag, n.Request, inv.Asked)
		iv := inv
		n.word(c, &f, InvalidateSTag, nil, m, &iv)
		c.Hold(f, dissect.DirUnknown, inv.Packet, to)
	}
}
