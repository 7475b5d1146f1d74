package iser

import (
	"fmt"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/iscsi"
)

// Rules are iSER's conformance rules, for check.Register. Each cites the
// part of RFC 7145 (iSER) or RFC 7143 (iSCSI) it enforces, by title (the
// RFCs' text was not at hand to check section numbers against). Like every
// rule they judge what the capture holds and no more: a capture that
// lacks packets (PSNs skipped, a connection without its set-up, a login
// not in the capture) makes the rules that would need them not evaluated,
// never a finding.
func Rules() []*check.Rule {
	applies := check.NeedsULP(Name)
	neutral := &check.Neutral{ULP: Name, Protocol: "iSER", Requester: "initiator", Responder: "target",
		Request: "task", Response: "response", Conn: "connection", Tag: "STag", Offset: "offset", Memory: "buffer",
		Region: func(k dissect.RDMAOpKind) string {
			if k == dissect.RDMARead {
				return "Write STag (Data-Out) buffer of a task"
			}
			return "Read STag (Data-In) buffer of a task"
		},
		AppendKey: AppendKey, KeyText: func(key uint64) string { return fmt.Sprintf("ITT 0x%08x", uint32(key)) },
		Damaged: damaged, Invalidated: invalidated,
		Keys: check.NeutralKeys{ByRequester: "by-initiator", NoRequest: "no-task", Foreign: "wrong-stag"}}
	return []*check.Rule{
		{
			ID: "ISER-FLAGS-DIRECTION", Severity: check.Error, ULP: Name,
			Reference: "RFC 7145, iSER Header Format (W and R: Write and Read STag Valid) and iSCSI Data Transfer; RFC 7143, SCSI Command (R and W bits)",
			Summary:   "a SCSI command's iSER header advertises a Read STag exactly when it reads and a Write STag when it has solicited data to write",
			Explanation: `The iSER header of a SCSI Command carries the STags of the task's buffers: the
Read STag (R flag, "Read STag Valid") for the Data-In the target writes by RDMA
Write, the Write STag (W flag) for the Data-Out it reads by RDMA Read. A command
whose R bit says it reads data must advertise a Read STag; one whose W bit says it
writes data beyond what it sent as immediate or unsolicited data must advertise a
Write STag; and an STag flagged valid on a command of the other direction names
memory the target has no business with.`,
			Evidence: "the connection's SCSI Command PDUs",
			Applies:  applies, ULPMessage: checkFlagsDirection,
		},
		neutral.Rule(check.NeutralRule{Checks: check.RDMAByRequester | check.RDMAUnadvertised, Rule: check.Rule{
			ID: "ISER-RDMA-BOUNDS", Severity: check.Error,
			Reference: "RFC 7145, iSCSI Data Transfer (Data-In by the target's RDMA Write to the Read STag, Data-Out by its RDMA Read from the Write STag)",
			Summary:   "only the target initiates RDMA, inside the STag, base offset and length an outstanding task advertised",
			Explanation: `iSER moves a task's data with the target's RDMA operations only: an RDMA Write of
Data-In into the buffer the Read STag and Read Base Offset name, up to the
command's expected length, and an RDMA Read of Data-Out from the buffer of the
Write STag and Write Base Offset, up to the data not sent unsolicited. An RDMA
operation of the initiator, or one outside every outstanding task's advertised
buffer, reaches memory no task lent.`,
			Evidence: "the connection's SCSI commands and RDMA operations",
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAAfterResponse, Rule: check.Rule{
			ID: "ISER-RDMA-AFTER-RESPONSE", Severity: check.Error,
			Reference: "RFC 7145, iSCSI Data Transfer and SCSI Response (sent once the task's data has moved)",
			Summary:   "no RDMA operation targets a task's buffers after its SCSI Response",
			Explanation: `The target sends the SCSI Response once the task's data has moved; the initiator
then invalidates the STags (or the Send With Invalidate did) and reuses the
buffers. An RDMA operation on them afterwards reaches memory the task no longer
owns.`,
			Evidence: "the connection's SCSI commands, responses and RDMA operations",
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.InvalidateForeign, Rule: check.Rule{
			ID: "ISER-INVALIDATE", Severity: check.Error,
			Reference: "RFC 7145, iSER CM REQ Message Format (SIE) and SCSI Response (Send with Invalidate of the task's STag)",
			Summary:   "a response comes by Send With Invalidate only when the CM REQ allowed it, and invalidates an STag of the task it answers",
			Explanation: `The initiator's iSER CM REQ message says whether it accepts Send With Invalidate
(the SIE bit; Linux: ISER_SEND_W_INV_NOT_SUP clear). When it does, the target may
send a task's SCSI Response by Send With Invalidate of the task's Read or Write
STag. Invalidating when not allowed, or an STag the task did not advertise, tears
down memory the initiator still uses.`,
			Evidence: "responses sent With Invalidate, with the connection's CM REQ",
		}}),
		{
			ID: "ISER-UNSOLICITED", Severity: check.Error, ULP: Name,
			Reference: "RFC 7143, Unsolicited Data and the InitialR2T, ImmediateData and FirstBurstLength keys; RFC 7145, TargetRecvDataSegmentLength and iSCSI Data Transfer",
			Summary:   "immediate and unsolicited data stay within what the login negotiated",
			Explanation: `A write command may carry data in its own Send (immediate data) only when the
login negotiated ImmediateData=Yes, and send unsolicited Data-Out PDUs only when it
negotiated InitialR2T=No; together they are at most FirstBurstLength and the
command's expected length, and one Send's data segment is at most what the target
receives (TargetRecvDataSegmentLength under iSER). The rest the target fetches by
RDMA Read.`,
			Evidence: "the connection's login and write commands",
			Applies:  applies, ULPMessage: checkUnsolicited,
		},
		{
			ID: "ISER-RESPONSE-UNMATCHED", Severity: check.Warning, ULP: Name,
			Reference: "RFC 7143, Basic Header Segment (Initiator Task Tag)",
			Summary:   "every response answers a task outstanding on the connection",
			Explanation: `A response names the task it answers by Initiator Task Tag. A response with no
outstanding task of that tag answers nothing the capture shows: a target bug, or a
request the capture does not hold.`,
			Evidence: "the connection's responses, with its set-up",
			Applies:  applies, ULPMessage: checkResponseMatched,
		},
		{
			ID: "ISER-LOGIN-KEYS", Severity: check.Error, ULP: Name,
			Reference: "RFC 7145, iSER-Assisted Login and the RDMAExtensions key",
			Summary:   "a normal session over iSER enters full-feature phase with RDMAExtensions=Yes negotiated",
			Explanation: `An iSER connection of a normal session runs its full-feature phase with the RDMA
extensions: the initiator offers RDMAExtensions=Yes in its login and the target
answers Yes. Without them the peers would exchange iSCSI Data-In/Out and R2T PDUs
over Sends, which neither expects on an RDMA connection.`,
			Evidence: "the connection's whole login",
			Applies:  applies, ULPMessage: checkLoginKeys,
		},
	}
}

func connOf(c *check.Conn) *Connection {
	cn, _ := c.Connection.ULPData.(*Connection)
	return cn
}

// damaged reports whether the capture lacks part of the connection, so
// that a missing request explains what would be a finding: its set-up is
// not in it, PSNs were skipped, or tasks were given up at the bound.
func damaged(c *check.Conn) bool {
	cn := connOf(c)
	return c.State == dissect.StateNoSetup || c.MissingPSNs > 0 || cn != nil && cn.Evicted > 0
}

// AppendKey appends an iSER exchange key, the Initiator Task Tag, as
// "ITT:0x%08x" (tshark's iscsi.initiatortasktag form), for
// fields.RegisterExchangeKey.
func AppendKey(dst []byte, key uint64) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, "ITT:0x"...)
	for i := 28; i >= 0; i -= 4 {
		dst = append(dst, hexd[key>>uint(i)&0xf])
	}
	return dst
}

func exchangeKey(itt uint32) string { return string(AppendKey(nil, uint64(itt))) }

func pduOf(m *dissect.Message) *PDU {
	r, _ := m.ULP.(*PDU)
	return r
}

// command returns the SCSI Command of a record, nil for others.
func command(r *PDU) *Task {
	if r == nil || !r.Initiator || r.Task == nil || r.Msg.ISER.Opcode != iscsi.ISERControl || r.Msg.PDU.Opcode != iscsi.OpSCSICommand {
		return nil
	}
	return r.Task
}

func checkFlagsDirection(c *check.Conn, m *dissect.Message) {
	r := pduOf(m)
	t := command(r)
	if t == nil {
		return
	}
	c.Checked()
	report := func(key, format string, a ...any) {
		c.Report(check.Finding{Packets: m.Packets, Key: key, ULP: Name, Exchange: exchangeKey(t.ITT),
			Message: fmt.Sprintf(format, a...)})
	}
	readLen := t.readLen
	switch {
	case t.Read && readLen > 0 && !t.RSV:
		report("no-read-stag", "%s (ITT 0x%08x) reads %d bytes (R bit) but its iSER header has no valid Read STag", t.Name, t.ITT, readLen)
	case t.RSV && !t.Read:
		report("read-stag", "%s (ITT 0x%08x) does not read (R bit clear) but its iSER header advertises Read STag 0x%08x", t.Name, t.ITT, t.ReadSTag)
	}
	// The data a write leaves to the target's RDMA Read: what it may not
	// send unsolicited. With InitialR2T=No it may send up to
	// FirstBurstLength in Data-Out PDUs after the command, and needs no
	// Write STag for that part; without the login the keys are unknown.
	unsol := t.Immediate
	known := r.Conn.LoginDone() && c.State != dissect.StateNoSetup
	if k := r.Conn.Keys.Effective(); known && !k.InitialR2T {
		unsol = max(unsol, min(k.FirstBurstLength, t.EDTL))
	}
	switch {
	case t.Write && t.EDTL > unsol && !t.WSV && !known:
		// Unsolicited Data-Out may cover it: the login is not in the
		// capture to say.
		c.Skip(check.ReasonNoSetup)
	case t.Write && t.EDTL > unsol && !t.WSV:
		report("no-write-stag", "%s (ITT 0x%08x) writes %d bytes, %d of them solicited (W bit), but its iSER header has no valid Write STag",
			t.Name, t.ITT, t.EDTL, t.EDTL-unsol)
	case t.WSV && !t.Write:
		report("write-stag", "%s (ITT 0x%08x) does not write (W bit clear) but its iSER header advertises Write STag 0x%08x", t.Name, t.ITT, t.WriteSTag)
	}
}

// invalidated reads a PDU sent With Invalidate for ISER-INVALIDATE: the
// initiator's CM REQ must have allowed it (SIE), and the response
// invalidate an STag of the task it answers.
func invalidated(c *check.Conn, m *dissect.Message) (inv check.Invalidation, ok bool) {
	r := pduOf(m)
	if r == nil || !r.Invalidate {
		return inv, false
	}
	inv.What = r.Msg.PDU.Opcode.String()
	if t := r.Task; t != nil && r.Response && !r.Initiator {
		inv = check.Invalidation{Answered: true, Key: uint64(t.ITT), Packet: t.Packet, Name: t.Name, What: inv.What,
			Advertised: t.RSV && t.ReadSTag == r.InvalidatedSTag || t.WSV && t.WriteSTag == r.InvalidatedSTag}
		if !inv.Advertised {
			inv.Asked = " (" + stags(t) + ")"
		}
	}
	if cn := r.Conn; cn.SendWithInvalidate != nil && !*cn.SendWithInvalidate {
		inv.BySetUp, inv.NotAllowedKey, inv.NotAllowed = true, "not-enabled", fmt.Sprintf(
			"a %s came by Send With Invalidate of STag 0x%08x, but the initiator's CM REQ (packet %d, flags 0x%02x) did not allow Send With Invalidate",
			r.Msg.PDU.Opcode, r.InvalidatedSTag, c.PrivateData[0].Packet, *cn.ReqFlags)
	}
	return inv, true
}

func stags(t *Task) string {
	switch {
	case t.RSV && t.WSV:
		return fmt.Sprintf("Read STag 0x%08x, Write STag 0x%08x", t.ReadSTag, t.WriteSTag)
	case t.RSV:
		return fmt.Sprintf("Read STag 0x%08x", t.ReadSTag)
	case t.WSV:
		return fmt.Sprintf("Write STag 0x%08x", t.WriteSTag)
	}
	return "no STag"
}

func checkUnsolicited(c *check.Conn, m *dissect.Message) {
	r := pduOf(m)
	if r == nil || !r.Initiator || r.Task == nil || r.Msg.ISER.Opcode != iscsi.ISERControl {
		return
	}
	t := r.Task
	var now uint32 // this Send's unsolicited data
	switch r.Msg.PDU.Opcode {
	case iscsi.OpSCSICommand:
		now = t.Immediate
	case iscsi.OpDataOut:
		if r.Msg.PDU.TTT() != iscsi.ReservedTag {
			return // solicited (an R2T's): not this rule's
		}
		now = uint32(r.DataLength)
	default:
		return
	}
	if now == 0 && r.Msg.PDU.Opcode == iscsi.OpSCSICommand {
		return
	}
	cn := r.Conn
	if !cn.LoginDone() || c.State == dissect.StateNoSetup {
		c.Skip(check.ReasonNoSetup) // the login's keys are not in the capture
		return
	}
	c.Checked()
	k := cn.Keys.Effective()
	report := func(key, format string, a ...any) {
		c.Report(check.Finding{Packets: m.Packets, Key: key, ULP: Name, Exchange: exchangeKey(t.ITT), Message: fmt.Sprintf(format, a...)})
	}
	total := t.Immediate + t.Unsolicited
	switch {
	case r.Msg.PDU.Opcode == iscsi.OpSCSICommand && !k.ImmediateData:
		report("immediate", "%s (ITT 0x%08x) carries %d bytes of immediate data, but the login negotiated ImmediateData=No", t.Name, t.ITT, now)
	case r.Msg.PDU.Opcode == iscsi.OpDataOut && k.InitialR2T:
		report("initial-r2t", "an unsolicited Data-Out of %d bytes for %s (ITT 0x%08x), but the login negotiated InitialR2T=Yes", now, t.Name, t.ITT)
	case total > k.FirstBurstLength:
		report("first-burst", "%s (ITT 0x%08x) sent %d bytes of unsolicited data, more than the FirstBurstLength %d the login negotiated",
			t.Name, t.ITT, total, k.FirstBurstLength)
	case total > t.EDTL:
		report("edtl", "%s (ITT 0x%08x) sent %d bytes of unsolicited data, more than its Expected Data Transfer Length %d", t.Name, t.ITT, total, t.EDTL)
	case now > k.TargetRecvDataSegmentLength:
		report("segment", "a Send of %s (ITT 0x%08x) carries a %d-byte data segment, more than the %d the target receives (TargetRecvDataSegmentLength)",
			t.Name, t.ITT, now, k.TargetRecvDataSegmentLength)
	}
}

func checkResponseMatched(c *check.Conn, m *dissect.Message) {
	r := pduOf(m)
	if r == nil || r.Initiator || !r.Response {
		return
	}
	if r.Task != nil {
		c.Checked()
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	// Its task may be one the capture lost: judged at the end of the
	// connection.
	c.Hold(check.Finding{Packets: m.Packets, Key: "unmatched", ULP: Name, Exchange: exchangeKey(r.Msg.PDU.ITT),
		Message: fmt.Sprintf("a %s for ITT 0x%08x, but no task with that tag is outstanding on the connection", r.Msg.PDU.Opcode, r.Msg.PDU.ITT)},
		dissect.DirClientToServer, 0, dissect.FirstPacket(m.Packets))
}

func checkLoginKeys(c *check.Conn, m *dissect.Message) {
	r := pduOf(m)
	if r == nil || !r.LoginComplete {
		return
	}
	cn := r.Conn
	if !cn.firstLoginSeen || c.State == dissect.StateNoSetup {
		c.Skip(check.ReasonNoSetup)
		return
	}
	if cn.SessionType == "Discovery" {
		// Linux's initiator logs discovery sessions in without the RDMA
		// extensions (rxe-iser.pcap); they carry only Text.
		return
	}
	c.Checked()
	k := &cn.Keys
	switch {
	case cn.initiator.has&kRDMA == 0 || !cn.initiator.rdma:
		c.Reportf(m.Packets, "not-offered", "the login entered full-feature phase but the initiator did not offer RDMAExtensions=Yes")
	case k.RDMAExtensions == nil || !*k.RDMAExtensions:
		c.Reportf(m.Packets, "not-accepted", "the login entered full-feature phase without RDMAExtensions=Yes: the target did not answer Yes")
	}
}
