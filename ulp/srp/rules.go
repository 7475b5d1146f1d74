package srp

import (
	"fmt"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/srp"
)

// Rules are SRP's conformance rules, for check.Register. Each cites the
// part of SRP (T10, revision 16a) or SRP-2 it enforces by IU and field
// name (the standards' text was not at hand to check section numbers
// against; Linux's include/scsi/srp.h transcribes their layouts). Like
// every rule they judge what the capture holds and no more: a capture that
// lacks packets (PSNs skipped, a connection without its set-up, a login
// not in the capture) makes the rules that would need them not evaluated,
// never a finding.
func Rules() []*check.Rule {
	applies := check.NeedsULP(Name)
	// The neutral RDMA rules (check/neutral.go), under SRP's own IDs.
	neutral := &check.Neutral{ULP: Name, Protocol: "SRP", Requester: "initiator", Responder: "target",
		Request: "command", Response: "SRP_RSP", Conn: "channel", Tag: "R_Key", Offset: "address", Memory: "buffer",
		Region: func(k dissect.RDMAOpKind) string {
			if k == dissect.RDMARead {
				return "data-out descriptor or indirect table of a command"
			}
			return "data-in descriptor of a command"
		},
		AppendKey: AppendKey, KeyText: func(key uint64) string { return fmt.Sprintf("tag 0x%016x", key) },
		Damaged: damaged, Answered: answeredCommand,
		Keys: check.NeutralKeys{ByRequester: "by-initiator"}}
	return []*check.Rule{
		{
			ID: "SRP-LOGIN", Severity: check.Error, ULP: Name,
			Reference: "SRP, SRP_LOGIN_REQ and SRP_LOGIN_RSP (TAG; REQUESTED MAXIMUM and MAXIMUM INITIATOR TO TARGET IU LENGTH)",
			Summary:   "the login response answers the login request's tag and grants at most the initiator-to-target IU length it asked for",
			Explanation: `An SRP RDMA channel is logged in by the set-up: the initiator's SRP_LOGIN_REQ (in
the CM REQ's private data) says the largest IU it means to send (REQUESTED MAXIMUM
INITIATOR TO TARGET IU LENGTH); the target's SRP_LOGIN_RSP (in the CM REP's) grants
the channel's MAXIMUM INITIATOR TO TARGET IU LENGTH, which may be smaller but not
larger — the initiator's send buffers were sized by its request — and carries the
login request's TAG, as every response carries its request's.`,
			Evidence: "the connection's login request and response (CM REQ and REP, or MPA Request and Reply)",
			Applies:  applies, End: checkLogin,
		},
		{
			ID: "SRP-LOGIN-REJECTED", Severity: check.Warning, ULP: Name,
			Reference: "SRP-2, SRP_LOGIN_REJ (REASON: the login rejection reason codes)",
			Summary:   "the target accepts the initiator's login: a refused one is reported with the SRP_LOGIN_REJ's reason",
			Explanation: `A target refuses a login with an SRP_LOGIN_REJ instead of an SRP_LOGIN_RSP: Linux's
ib_srpt sends it in the private data of a CM REJ (reason 28, consumer defined),
an iWARP target in an MPA Reply with the Rejected flag. Its REASON says why:
unable to establish the RDMA channel, insufficient channel resources, the requested
maximum initiator to target IU length too large, unable to associate the channel
with the I_T nexus, a requested buffer descriptor format not supported, multiple
channels per I_T nexus not supported, the channel limit reached for the initiator
(Linux's ib_srpt gives the last when no ACL admits the initiator). The channel then
carries nothing: without this rule a refused login shows only as a CM REJ. A
refusal that carried no SRP_LOGIN_REJ (the connection manager's own, before the
target saw the login) is reported with the set-up's reason. When a later
connection between the same addresses was established, the refusal is
information.`,
			Evidence: "the connection's login request and its refusal (CM REJ, or MPA Reply with the Rejected flag)",
			Applies:  applies, End: checkLoginRejected,
		},
		{
			ID: "SRP-IU-LENGTH", Severity: check.Error, ULP: Name,
			Reference: "SRP, SRP_LOGIN_RSP (MAXIMUM INITIATOR TO TARGET IU LENGTH, MAXIMUM TARGET TO INITIATOR IU LENGTH)",
			Summary:   "no IU is longer than the maximum IU length the login granted its sender",
			Explanation: `The login fixes, per direction, the longest IU either side may send on the channel:
the peer posted receive buffers of that size. An initiator's IU (an SRP_CMD with its
descriptors or immediate data) longer than MAXIMUM INITIATOR TO TARGET IU LENGTH,
or a target's (an SRP_RSP with its sense data) longer than MAXIMUM TARGET TO
INITIATOR IU LENGTH, overruns the receiver's buffer: on RDMA its receive fails and
the channel goes down.`,
			Evidence: "the connection's login response and Sends",
			Applies:  applies, ULPMessage: checkIULength,
		},
		{
			ID: "SRP-REQUEST-LIMIT", Severity: check.Error, ULP: Name,
			Reference: "SRP, flow control: REQUEST LIMIT DELTA of SRP_LOGIN_RSP, SRP_RSP, SRP_CRED_REQ and SRP_AER_REQ",
			Summary:   "the initiator sends an SRP_CMD or SRP_TSK_MGMT only while its request limit is above 0",
			Explanation: `SRP's flow control is a request limit the target grants: the SRP_LOGIN_RSP sets
it, and every SRP_RSP, SRP_CRED_REQ and SRP_AER_REQ adds its REQUEST LIMIT DELTA.
Each SRP_CMD and SRP_TSK_MGMT the initiator sends spends one; with none left it
must wait. A request beyond the limit may find no receive buffer at the target.`,
			Evidence: "the connection's login response, its requests and every IU that grants credits",
			Applies:  applies, ULPMessage: checkRequestLimit,
		},
		{
			ID: "SRP-BUFFER-FORMAT", Severity: check.Error, ULP: Name,
			Reference: "SRP, SRP_CMD (DATA-OUT and DATA-IN BUFFER DESCRIPTOR FORMAT) and SRP_LOGIN_RSP (SUPPORTED BUFFER FORMATS); SRP-2, immediate data (SRP_LOGIN_REQ IMMEDIATE DATA REQUESTED, SRP_LOGIN_RSP IMMEDIATE DATA SUPPORTED)",
			Summary:   "an SRP_CMD describes its data only in formats the login agreed, and immediate data fits the IU",
			Explanation: `An SRP_CMD names the format of its data-out and data-in buffer descriptors: none,
direct (one memory descriptor), indirect (a descriptor table), or, SRP-2, immediate
(data-out only: the data follows in the IU at the login's IMMEDIATE DATA OFFSET).
Direct and indirect descriptors are for the formats the target listed in its login
response's SUPPORTED BUFFER FORMATS; immediate data only when the initiator
requested it and the target said it supports it. Other codes are reserved. The
immediate data must lie in the IU, after the descriptors.`,
			Evidence: "the connection's login and SRP_CMDs",
			Applies:  applies, ULPMessage: checkBufferFormat,
		},
		srpRDMA(neutral.Rule(check.NeutralRule{Checks: check.RDMAByRequester | check.RDMAUnadvertised, Rule: check.Rule{
			ID: "SRP-RDMA-BOUNDS", Severity: check.Error,
			Reference: "SRP, data transfer: the target's RDMA Writes of data-in and RDMA Reads of data-out and of indirect descriptor tables, within the SRP_CMD's memory descriptors",
			Summary:   "only the target initiates RDMA, inside a memory descriptor of an outstanding command",
			Explanation: `SRP moves a command's data by the target's RDMA operations only: RDMA Writes into the
regions its data-in descriptors name, RDMA Reads from the regions of its data-out
descriptors (and of an indirect descriptor table the IU did not carry whole).
Each descriptor gives a virtual address, a memory handle (R_Key) and a length. An
RDMA operation of the initiator, or one outside every outstanding command's
descriptors, reaches memory no command lent. (A zero-length RDMA Write, which Linux's
ib_srpt sends once to learn that the queue pair is ready, touches no memory.)`,
			Evidence: "the connection's SRP_CMDs and RDMA operations",
		}})),
		srpRDMA(neutral.Rule(check.NeutralRule{Checks: check.RDMAAfterResponse, Rule: check.Rule{
			ID: "SRP-RDMA-AFTER-RESPONSE", Severity: check.Error,
			Reference: "SRP, SRP_RSP (the target sends it once the command's data has moved)",
			Summary:   "no RDMA operation targets a command's buffers after its SRP_RSP",
			Explanation: `The target sends a command's SRP_RSP once the command's data has moved; the
initiator then unmaps and invalidates the memory its descriptors named and reuses it.
An RDMA operation on it afterwards reaches memory the command no longer owns.`,
			Evidence: "the connection's SRP_CMDs, SRP_RSPs and RDMA operations",
		}})),
		{
			ID: "SRP-RESPONSE-UNMATCHED", Severity: check.Warning, ULP: Name,
			Reference: "SRP, the TAG field of SRP_RSP, SRP_CRED_RSP and SRP_AER_RSP",
			Summary:   "every response carries the tag of a request outstanding on the channel",
			Explanation: `A response names the request it answers by TAG: an SRP_RSP an SRP_CMD or
SRP_TSK_MGMT of the initiator, an SRP_CRED_RSP or SRP_AER_RSP the target's
SRP_CRED_REQ or SRP_AER_REQ. A response with no outstanding request of its tag
answers nothing the capture shows: a bug, or a request the capture does not hold.`,
			Evidence: "the connection's requests and responses, with its set-up",
			Applies:  applies, ULPMessage: checkResponseMatched,
		},
		{
			ID: "SRP-TAG-IN-USE", Severity: check.Warning, ULP: Name,
			Reference: "SRP, SRP_CMD and SRP_TSK_MGMT (TAG); SAM, task tags unique within the I_T nexus",
			Summary:   "a new SRP_CMD or SRP_TSK_MGMT does not reuse the tag of a request still outstanding",
			Explanation: `The TAG identifies a task to the target until its SRP_RSP: a second request with
the tag of one still outstanding makes the two indistinguishable (an ABORT TASK, a
response), a task tag conflict.`,
			Evidence: "the connection's requests and responses, with its set-up",
			Applies:  applies, ULPMessage: checkTagInUse,
		},
	}
}

func connOf(c *check.Conn) *Connection {
	cn, _ := c.Connection.ULPData.(*Connection)
	return cn
}

func iuOf(m *dissect.Message) *IU {
	r, _ := m.ULP.(*IU)
	return r
}

// damaged reports whether the capture lacks part of the connection, so
// that a missing request explains what would be a finding: its set-up is
// not in it, PSNs were skipped, or commands were given up at the bound.
func damaged(c *check.Conn) bool {
	cn := connOf(c)
	return c.State == dissect.StateNoSetup || c.MissingPSNs > 0 || cn != nil && cn.Evicted > 0
}

func checkLogin(c *check.Conn) {
	cn := connOf(c)
	if cn == nil {
		return
	}
	switch {
	case !c.PrivateData[0].Seen:
		c.Skip(check.ReasonNoSetup)
		return
	case !cn.loginOK:
		c.Checked()
		c.Reportf([]int{c.PrivateData[0].Packet}, "malformed", "the set-up's private data is no SRP_LOGIN_REQ: %s", cn.SetUpError)
		return
	case !cn.acceptedOK:
		c.Skip(check.ReasonHalfSetup)
		return
	}
	c.Checked()
	l, a := &cn.login, &cn.accepted
	pk := []int{c.PrivateData[0].Packet, c.PrivateData[1].Packet}
	if a.MaxITIULength > l.RequestedMaxITIULength {
		c.Reportf(pk, "it-iu-length", "the SRP_LOGIN_RSP grants a MAXIMUM INITIATOR TO TARGET IU LENGTH of %d, more than the %d the SRP_LOGIN_REQ requested",
			a.MaxITIULength, l.RequestedMaxITIULength)
	}
	if a.Tag != l.Tag {
		c.Reportf(pk, "tag", "the SRP_LOGIN_RSP's TAG 0x%016x is not the SRP_LOGIN_REQ's 0x%016x", a.Tag, l.Tag)
	}
}

func checkLoginRejected(c *check.Conn) {
	cn := connOf(c)
	if cn == nil {
		return
	}
	r := cn.Rejected
	if r == nil {
		if cn.Accepted != nil {
			c.Checked()
		}
		return
	}
	c.Checked()
	f := check.Finding{Packets: []int{r.Packet}, Key: "setup", ULP: Name}
	if r.Packet == 0 {
		f.Packets = nil
	}
	if r.SRP {
		f.Key = fmt.Sprintf("reason 0x%08x", r.Reason)
		f.Message = fmt.Sprintf("the %s refused the login: SRP_LOGIN_REJ reason 0x%08x (%s), supported buffer formats %s; set-up: %s",
			r.By, r.Reason, r.ReasonText, r.SupportedBufferFormats, r.SetUpReason)
		if cn.loginOK && !r.tagOK {
			f.Message += fmt.Sprintf("; its TAG %s is not the SRP_LOGIN_REQ's 0x%016x", r.Tag, cn.login.Tag)
		}
	} else {
		f.Message = fmt.Sprintf("the login was refused without an SRP_LOGIN_REJ: %s", r.SetUpReason)
	}
	if c.RetriedBy != 0 {
		f.Severity = check.Info
		f.Message += fmt.Sprintf("; connection %d between the same addresses was established afterwards", c.RetriedBy)
	}
	c.Report(f)
}

func sender(d dissect.Direction) string {
	if d == dissect.DirClientToServer {
		return "initiator"
	}
	return "target"
}

func checkIULength(c *check.Conn, m *dissect.Message) {
	r := iuOf(m)
	if r == nil {
		return
	}
	limit := r.Conn.maxIU(m.Dir)
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
	if uint64(m.Length) > uint64(limit) {
		what := "MAXIMUM TARGET TO INITIATOR IU LENGTH"
		if m.Dir == dissect.DirClientToServer {
			what = "MAXIMUM INITIATOR TO TARGET IU LENGTH"
		}
		c.Reportf(m.Packets, "length", "an %s of %d octets from the %s, more than the %s %d the login granted",
			r.Msg.Opcode, m.Length, sender(m.Dir), what, limit)
	}
}

func checkRequestLimit(c *check.Conn, m *dissect.Message) {
	r := iuOf(m)
	if r == nil || r.Command == nil || !r.Initiator || r.Response {
		return
	}
	if !r.LimitKnown {
		c.Skip(check.ReasonNoSetup)
		return
	}
	if !r.Command.OverLimit {
		c.Checked()
		return
	}
	// An IU that granted credits may be one the capture lost: judged at
	// the end of the connection, against every stretch lost before it.
	c.Hold(check.Finding{Packets: m.Packets, Key: "over", ULP: Name, Exchange: exchangeKey(r.Command.Tag), Message: fmt.Sprintf(
		"%s (tag 0x%016x) sent with the request limit spent: %d before it", r.Msg.Opcode, r.Command.Tag, r.RequestLimit+1)},
		dissect.DirUnknown, 0, dissect.LastPacket(m.Packets))
}

func checkBufferFormat(c *check.Conn, m *dissect.Message) {
	r := iuOf(m)
	if r == nil || r.Command == nil || r.Msg.Opcode != srp.OpCmd {
		return
	}
	cmd := &r.Msg.Command
	cn := r.Conn
	report := func(key, format string, a ...any) {
		c.Report(check.Finding{Packets: m.Packets, Key: key, ULP: Name, Exchange: exchangeKey(r.Command.Tag), Message: fmt.Sprintf(format, a...)})
	}
	for _, d := range [2]struct {
		name string
		f    srp.DescriptorFormat
	}{{"DATA-OUT", cmd.DataOut.Format}, {"DATA-IN", cmd.DataIn.Format}} {
		if d.f > srp.FormatImmediate || d.f == srp.FormatImmediate && d.name == "DATA-IN" {
			c.Checked()
			report("reserved", "%s (tag 0x%016x) has the reserved %s BUFFER DESCRIPTOR FORMAT %d", r.Command.Name, r.Command.Tag, d.name, d.f)
			return
		}
	}
	if !cn.LoginKnown() {
		c.Skip(check.ReasonNoSetup)
		return
	}
	c.Checked()
	sup := cn.accepted.SupportedBufferFormats
	for _, d := range [2]struct {
		name string
		f    srp.DescriptorFormat
	}{{"data-out", cmd.DataOut.Format}, {"data-in", cmd.DataIn.Format}} {
		if d.f == srp.FormatDirect && sup&srp.BufferDirect == 0 || d.f == srp.FormatIndirect && sup&srp.BufferIndirect == 0 {
			report("unsupported", "%s (tag 0x%016x) has a %s %s descriptor, a format the SRP_LOGIN_RSP's SUPPORTED BUFFER FORMATS (%s) lacks",
				r.Command.Name, r.Command.Tag, d.name, d.f, sup)
			return
		}
	}
	if cmd.DataOut.Format != srp.FormatImmediate {
		return
	}
	switch {
	case !cn.immediateAllowed():
		report("immediate", "%s (tag 0x%016x) carries %d octets of immediate data, but the login did not negotiate immediate data (requested %t, supported %t)",
			r.Command.Name, r.Command.Tag, cmd.DataOut.ImmediateLength, cn.login.Flags&srp.ImmediateRequested != 0, cn.accepted.Flags&srp.ImmediateSupported != 0)
	case !r.ImmediateOK && !m.Truncated:
		report("immediate-length", "%s (tag 0x%016x) says %d octets of immediate data at offset %d, but its IU of %d octets does not hold them after its descriptors (%d octets)",
			r.Command.Name, r.Command.Tag, cmd.DataOut.ImmediateLength, cn.login.ImmediateDataOffset, m.Length, cmd.Len)
	}
}

// srpRDMA adapts a neutral RDMA rule to what SRP adds: a zero-length
// RDMA Write (ib_srpt's readiness probe) touches no memory and an RDMA
// operation of no length is judged by neither rule. (One that may be on a
// region of an outstanding command's indirect table the IU did not carry
// whole, dissect.UnattachedRequestUnknown, the neutral rule leaves not
// evaluated itself.)
func srpRDMA(ru *check.Rule) *check.Rule {
	judge := ru.RDMAOp
	bounds := ru.ID == "SRP-RDMA-BOUNDS"
	ru.RDMAOp = func(c *check.Conn, op *dissect.RDMAOp) {
		if op.Length == 0 && (op.Kind == dissect.RDMAWrite || !bounds) {
			return
		}
		judge(c, op)
	}
	return ru
}

// answeredCommand names the command whose SRP_RSP was at replyPacket
// (check.Neutral.Answered): Memory keeps 32 bits of the 64-bit tag.
func answeredCommand(c *check.Conn, replyPacket int) (uint64, string, bool) {
	if cn := connOf(c); cn != nil {
		return cn.answeredAt(replyPacket)
	}
	return 0, "", false
}

func checkResponseMatched(c *check.Conn, m *dissect.Message) {
	r := iuOf(m)
	if r == nil {
		return
	}
	var what string
	switch r.Msg.Opcode {
	case srp.OpRsp:
		if r.Command != nil {
			c.Checked()
			return
		}
		what = "SRP_CMD or SRP_TSK_MGMT"
	case srp.OpCredRsp, srp.OpAERRsp:
		if r.AnswersKnown {
			c.Checked()
			return
		}
		what = "SRP_CRED_REQ"
		if r.Msg.Opcode == srp.OpAERRsp {
			what = "SRP_AER_REQ"
		}
	default:
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	// The request went the other way.
	requester := dissect.DirClientToServer
	if r.Initiator {
		requester = dissect.DirServerToClient
	}
	// Its request may be one the capture lost: judged at the end of the
	// connection.
	c.Hold(check.Finding{Packets: m.Packets, Key: "unmatched", ULP: Name, Exchange: exchangeKey(r.Msg.Tag),
		Message: fmt.Sprintf("an %s with tag 0x%016x, but no %s with that tag is outstanding on the channel", r.Msg.Opcode, r.Msg.Tag, what)},
		requester, 0, dissect.FirstPacket(m.Packets))
}

func checkTagInUse(c *check.Conn, m *dissect.Message) {
	r := iuOf(m)
	if r == nil || r.Command == nil || !r.Initiator || r.Response {
		return
	}
	old := r.Replaced
	if old == nil {
		c.Checked()
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	// The first one's SRP_RSP may be what the capture lost.
	c.Hold(check.Finding{Packets: []int{old.Packet, dissect.LastPacket(m.Packets)}, Key: "reused", ULP: Name, Exchange: exchangeKey(r.Command.Tag),
		Message: fmt.Sprintf("%s reuses tag 0x%016x of %s (packet %d), which has had no SRP_RSP", r.Command.Name, r.Command.Tag, old.Name, old.Packet)},
		dissect.DirServerToClient, old.Packet, dissect.LastPacket(m.Packets))
}
