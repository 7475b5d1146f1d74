package check

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
)

// The protocol-neutral rules of a request/response ULP on RDMA (issue 25):
// the requester (NVMe host, iSCSI initiator, SMB client) advertises memory
// with each request and only the responder (controller, target, server)
// moves data by RDMA, inside what an outstanding request advertised and
// before its response; a response by Send With Invalidate invalidates an
// STag of the request it answers, when the ULP allowed it. They are
// written once here and instantiated by each plug-in under its own rule
// IDs (Neutral.Rule), reading what the session left on the model:
// RDMAOp.Attach (dissect.Memory: Attached, UnattachedAfterResponse,
// UnattachedCaptureGap, ...) and, for Sends With Invalidate, the ULP's
// record through Neutral.Invalidated. RPC-over-RDMA's own versions are
// its plug-in's (ulp/rpcordma/rules_rdma.go, rules_inv.go).

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
	// finding.
	Unsure bool
	// What names the message ("SCSI Response"), "" when nothing more
	// than a Send.
	What string
}

// NeutralCheck is one of the neutral checks, to combine in one rule.
type NeutralCheck uint8

const (
	// RDMAByRequester: the requester initiates no RDMA Read or Write.
	RDMAByRequester NeutralCheck = 1 << iota
	// RDMAUnadvertised: an RDMA operation of the responder falls inside
	// a region an outstanding request advertised.
	RDMAUnadvertised
	// RDMAAfterResponse: none targets a request's memory after its
	// response.
	RDMAAfterResponse
	// InvalidateForeign: a Send With Invalidate comes from the
	// responder, as the ULP allows, and invalidates an STag of the
	// request it answers.
	InvalidateForeign
)

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
		ru.ULPMessage = n.invalidate
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

// rdmaOp judges op by the checks of one rule. The requester's operations
// are RDMAByRequester's alone; the responder's are judged by where the
// session attached them (dissect.Memory): to a request (checked), to one
// already answered (RDMAAfterResponse), or to none (RDMAUnadvertised;
// capture loss makes either not evaluated).
func (n *Neutral) rdmaOp(c *Conn, op *dissect.RDMAOp, checks NeutralCheck, attached func(*Conn, *dissect.RDMAOp)) {
	if op.Dir == dissect.DirClientToServer {
		if checks&RDMAByRequester == 0 {
			return
		}
		c.Checked()
		c.Reportf(op.Packets, n.key(n.Keys.ByRequester, op), "the %s initiated an %s; on %s only the %s moves data by RDMA",
			n.Requester, n.opText(op), n.Protocol, n.Responder)
		return
	}
	if checks == RDMAByRequester {
		c.Checked() // the responder's: what the rule asks of it holds
		return
	}
	if op.Dir != dissect.DirServerToClient {
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
				c.Report(f)
				return
			}
			f.Exchange = n.exchange(k)
			f.Message = fmt.Sprintf("the %s's %s targets the %s of %s (%s) after its %s (packet %d)",
				n.Responder, n.opText(op), n.Memory, name, n.KeyText(k), n.Response, a.ResponsePacket)
			c.Report(f)
			return
		}
		f.Exchange = n.exchange(key)
		f.Message = fmt.Sprintf("the %s's %s targets the %s of the %s with %s after its %s (packet %d)",
			n.Responder, n.opText(op), n.Memory, n.Request, n.KeyText(key), n.Response, a.ResponsePacket)
		c.Report(f)
	default:
		if checks&RDMAUnadvertised == 0 {
			return
		}
		if n.damaged(c) {
			c.Skip(ReasonMidTransaction)
			return
		}
		// The request that advertised it may be one the capture lost:
		// judged at the end of the connection.
		c.Hold(Finding{Packets: op.Packets, Key: n.key(n.Keys.Unadvertised, op), Message: fmt.Sprintf(
			"the %s's %s is inside no %s outstanding on the %s", n.Responder, n.opText(op), n.Region(op.Kind), n.Conn)},
			dissect.DirClientToServer, 0, dissect.FirstPacket(op.Packets))
	}
}

// invalidate judges a Send With Invalidate: sent by the responder, as the
// ULP allowed, answering an outstanding request that advertised the STag
// it invalidated. A finding about a request rests on the capture holding
// every Send between the request and the response (a later request with
// the same key, a response the capture lost): judged at the end of the
// connection.
func (n *Neutral) invalidate(c *Conn, m *dissect.Message) {
	inv, ok := n.Invalidated(c, m)
	if !ok || !m.Invalidate {
		return
	}
	if m.Dir == dissect.DirClientToServer {
		c.Checked()
		key := n.Keys.InvalidateByRequester
		if key == "" {
			key = "by-" + n.Requester
		}
		c.Reportf(m.Packets, key, "the %s sent With Invalidate of %s 0x%08x; only the %s's responses may", n.Requester, n.Tag, m.InvalidatedSTag, n.Responder)
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
			c.Skip(ReasonMidTransaction)
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
		c.Hold(Finding{Packets: m.Packets, Key: key, Message: fmt.Sprintf("a Send With Invalidate of %s 0x%08x%s answers no %s outstanding on the %s",
			n.Tag, m.InvalidatedSTag, what, n.Request, n.Conn)}, dissect.DirClientToServer, 0, to)
	case inv.Advertised:
		c.Checked()
	default:
		f.Key = n.Keys.Foreign
		if f.Key == "" {
			f.Key = "foreign-stag"
		}
		f.Message = fmt.Sprintf("the %s to %s (%s) invalidated %s 0x%08x, which the %s did not advertise%s",
			n.Response, inv.Name, n.KeyText(inv.Key), n.Tag, m.InvalidatedSTag, n.Request, inv.Asked)
		c.Hold(f, dissect.DirUnknown, inv.Packet, to)
	}
}
