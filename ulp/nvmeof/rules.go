package nvmeof

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/nvme"
)

// Rules are NVMe/RDMA's conformance rules, for check.Register. Each cites
// the section of the NVMe RDMA Transport Specification 1.0, NVMe over
// Fabrics 1.1 or NVMe Base 2.0 it enforces, by its title in quotes (the
// numbers move between revisions, and the specifications were not at hand
// to check numbers against: a title finds the section in any revision).
// Like every rule they judge what the capture holds and no more: a
// capture that lacks packets (PSNs skipped, a connection without its
// set-up) makes the rules that would need them not evaluated, never a
// finding.
func Rules() []*check.Rule {
	applies := check.NeedsULP(Name)
	neutral := &check.Neutral{ULP: Name, Protocol: "NVMe/RDMA", Requester: "host", Responder: "controller",
		Request: "command", Response: "completion", Conn: "queue", Tag: "key", Offset: "address", Memory: "memory",
		Region:    func(dissect.RDMAOpKind) string { return "keyed SGL of a command" },
		AppendKey: AppendKey, KeyText: func(key uint64) string { return "CID " + strconv.Itoa(int(uint16(key))) },
		Damaged: damaged, Invalidated: invalidated, Keys: check.NeutralKeys{Foreign: "wrong-key"}}
	return []*check.Rule{
		{
			ID: "NVME-CM-PRIVATE-DATA", Severity: check.Error, ULP: Name,
			Reference: "NVMe RDMA Transport 1.0 sections 'RDMA_CM_REQUEST Private Data' and 'RDMA_CM_REPLY Private Data'",
			Summary:   "the CM REQ and REP carry NVMe/RDMA private data: RECFMT 0, HRQSIZE ≥ HSQSIZE + 1, CRQSIZE ≥ HSQSIZE + 1",
			Explanation: `An NVMe/RDMA queue is set up by an RDMA-CM exchange whose REQ carries the host's
private data (RECFMT, QID, HRQSIZE, HSQSIZE, CNTLID) and whose REP carries the
controller's (RECFMT, CRQSIZE). RECFMT must be 0. HSQSIZE is 0's based and the
receive queues are 1's based: each side must be able to receive a capsule for
every submission queue entry, so HRQSIZE and CRQSIZE are at least HSQSIZE + 1.`,
			Evidence: "the connection's CM REQ and REP",
			Applies:  applies, End: checkCMPrivateData,
		},
		{
			ID: "NVME-CONNECT-FIRST", Severity: check.Error, ULP: Name,
			Reference: "NVMe over Fabrics 1.1 section 'Connect Command'; NVMe RDMA Transport 1.0 section 'RDMA_CM_REQUEST Private Data' (QID, HSQSIZE)",
			Summary:   "the first capsule on a queue is a Fabrics Connect for the QID and SQSIZE its set-up named",
			Explanation: `A queue is usable only after a Fabrics Connect command: it must be the first
command capsule the host sends on the RDMA connection, its QID must be the QID of
the CM REQ, and its SQSIZE the CM REQ's HSQSIZE (both 0's based).`,
			Evidence: "the first command capsule of the connection",
			Applies:  applies, ULPMessage: checkConnectFirst,
		},
		{
			ID: "NVME-CAPSULE-SIZE", Severity: check.Error, ULP: Name,
			Reference: "NVMe over Fabrics 1.1 section 'Capsules'; NVMe RDMA Transport 1.0 section 'Capsule and Data Transfer'",
			Summary:   "command capsules are a 64-byte SQE plus in-capsule data inside the capsule; response capsules are 16 bytes",
			Explanation: `On NVMe/RDMA a command capsule is the 64-byte submission queue entry followed by
any in-capsule data, which an SGL data block with subtype Offset must name within
the capsule; a response capsule is the 16-byte completion queue entry (the RDMA
transport supports no response data in the capsule).`,
			Evidence: "the connection's capsules",
			Applies:  applies, ULPMessage: checkCapsuleSize,
		},
		{
			ID: "NVME-CID-UNIQUE", Severity: check.Error, ULP: Name,
			Reference: "NVMe Base 2.0 section 'Common Command Format' (Command Identifier)",
			Summary:   "a command's CID is not that of a command still outstanding on the queue",
			Explanation: `The Command Identifier and the submission queue together identify a command: the
host must not reuse a CID while the command with it awaits its completion.`,
			Evidence: "the connection's command capsules",
			Applies:  applies, ULPMessage: checkCIDUnique,
		},
		{
			ID: "NVME-COMPLETION-UNMATCHED", Severity: check.Warning, ULP: Name,
			Reference: "NVMe Base 2.0 section 'Common Completion Queue Entry' (Command Identifier)",
			Summary:   "every completion answers a command outstanding on the queue",
			Explanation: `A completion queue entry names the command it completes by CID. A completion with
no outstanding command of that CID answers nothing the capture shows: a
controller bug, or a command capsule the capture does not hold.`,
			Evidence: "the connection's completions, with its set-up",
			Applies:  applies, ULPMessage: checkCompletionMatched,
		},
		{
			ID: "NVME-QUEUE-DEPTH", Severity: check.Error, ULP: Name,
			Reference: "NVMe RDMA Transport 1.0 section 'RDMA_CM_REQUEST Private Data' (HSQSIZE); NVMe Base 2.0 section 'Full Queue'",
			Summary:   "commands outstanding at once are at most HSQSIZE + 1",
			Explanation: `The host's submission queue holds HSQSIZE + 1 entries (HSQSIZE is 0's based);
over RDMA the controller has posted receive buffers for that many capsules. A host
with more commands outstanding overruns them.`,
			Evidence: "the connection's set-up and command capsules",
			Applies:  applies, ULPMessage: checkQueueDepth,
		},
		neutral.Rule(check.NeutralRule{Checks: check.InvalidateForeign, Rule: check.Rule{
			ID: "NVME-INV-KEY", Severity: check.Error,
			Reference: "NVMe RDMA Transport 1.0 section 'Keyed SGL Data Block Descriptor' (subtype Invalidate Key)",
			Summary:   "a completion Send With Invalidate invalidates exactly the key its command asked to invalidate",
			Explanation: `The host asks for remote invalidation per command, with a keyed SGL data block of
subtype Invalidate Key; the controller may then send the completion by Send With
Invalidate of that key. Invalidating another key, or for a command that did not ask,
tears down memory the host still uses (Linux hosts reset the controller).`,
			Evidence: "completions sent With Invalidate",
		}}),
		{
			ID: "NVME-KEEP-ALIVE", Severity: check.Warning, ULP: Name,
			Reference: "NVMe Base 2.0 sections 'Keep Alive Timer', 'Keep Alive command', 'Identify Controller data structure' (CTRATT.TBKAS) and 'Controller Shutdown' (CC.SHN); NVMe over Fabrics 1.1 section 'Connect Command' (KATO)",
			Summary:   "while a controller is connected, the host restarts its Keep Alive Timer within KATO",
			Explanation: `The admin queue's Connect sets the Keep Alive Timeout (KATO, ms; 0 turns the timer
off). The controller's Keep Alive Timer starts when that Connect completes and
restarts on every Keep Alive command (opcode 18h) — on any command of any of its
queues when the controller supports Traffic Based Keep Alive (CTRATT.TBKAS). If it
expires, the controller tears the association down. Linux hosts send a Keep Alive
every KATO/2 (drivers/nvme/host/core.c, nvme_keep_alive_work), skipping it when a
completion came since and the controller has TBKAS. A gap longer than KATO before an
admin-queue command is a warning: the controller may already have given up. Under
Traffic Based Keep Alive, and without an Identify Controller in the capture to say
whether it applies, any command or completion of the controller's queues is taken to
restart the timer. The silence after the last command is judged too, when the admin
queue ends (or the capture does), up to the latest NVMe/RDMA packet of the capture —
unless the host shut the controller down (a Property Set of CC with SHN not 0, NVMe
Base 2.0 "Controller Shutdown"): from then on the host need not keep the association
alive, and neither the silence nor later admin commands are judged.`,
			Evidence: "the admin queue's Connect and its commands; with Traffic Based Keep Alive, the I/O queues' commands",
			Applies: func(c *check.Conn) string {
				if why := applies(c); why != "" {
					return why
				}
				switch q := queueOf(c); {
				case q == nil || q.Connect == nil:
				case !q.Admin():
					return "an I/O queue: Keep Alive is judged on its controller's admin queue"
				case q.Controller == nil:
					return "the admin queue's Connect did not succeed in the capture"
				case q.Controller.KATO == 0:
					return "the admin queue's Connect set KATO 0: no Keep Alive Timer"
				}
				return ""
			},
			ULPMessage: checkKeepAlive, End: checkKeepAliveTail,
		},
		{
			ID: "NVME-SQHD", Severity: check.Warning, ULP: Name,
			Reference: "NVMe Base 2.0 sections 'Common Completion Queue Entry' (SQ Head Pointer) and 'Submission Queue Head Pointer'; NVMe over Fabrics 1.1 sections 'Connect Command' (SQSIZE, CATTR) and 'SQ Flow Control'",
			Summary:   "a completion's SQHD advances modulo the queue size and never past the entries the host submitted",
			Explanation: `Each completion carries the SQ Head Pointer: the submission queue entry the
controller will consume next. The host fills the queue in order, one entry a command
capsule, from the Connect (its first entry) on, modulo the queue size SQSIZE + 1, and
uses SQHD to know which entries are free (SQ flow control). SQHD can only move
forward, and the entries it reports consumed can never be more than the commands the
host has sent; an SQHD at or past the queue size names no entry. When the Connect
disabled SQ flow control (CATTR bit 2; Linux hosts only with the disable_sqflow
option) SQHD is reserved (Linux targets send FFFFh) and the rule is not evaluated.`,
			Evidence: "the queue's Connect, its commands and completions",
			Applies: func(c *check.Conn) string {
				if why := applies(c); why != "" {
					return why
				}
				if q := queueOf(c); q != nil && q.Connect != nil && q.Connect.CATTR&nvme.CATTRDisableSQFlow != 0 {
					return "the Connect disabled SQ flow control (CATTR bit 2): SQHD is reserved"
				}
				return ""
			},
			ULPMessage: checkSQHD,
		},
		{
			ID: "NVME-IO-BEFORE-ENABLE", Severity: check.Warning, ULP: Name,
			Reference: "NVMe Base 2.0 section 'Controller Initialization' (Message-Based Transport: CC.EN, CSTS.RDY, then the I/O queues); NVMe over Fabrics 1.1 sections 'Connect Command', 'Property Set Command' and 'Property Get Command'",
			Summary:   "an I/O queue is connected only after its controller's admin queue set CC.EN to 1 and saw CSTS.RDY 1",
			Explanation: `A host brings a controller up on its admin queue: Connect, Property Set of CC
(offset 14h) with EN 1, then Property Get of CSTS (offset 1Ch) until RDY is 1. Only
then may it create I/O queues, which on a fabric means connecting them: the I/O
queue's Connect names the controller by CNTLID in its data. A warning: the
initialization sequence orders it, and a controller may still accept the Connect. The rule judges an I/O queue's
Connect when the capture holds its controller's admin queue, and no capture loss
of that admin queue before it.`,
			Evidence: "the I/O queue's Connect and its controller's admin queue",
			Applies: func(c *check.Conn) string {
				if why := applies(c); why != "" {
					return why
				}
				if q := queueOf(c); q != nil && q.Connect != nil && q.Connect.QID == 0 {
					return "an admin queue: the rule judges the Connects of I/O queues"
				}
				return ""
			},
			ULPMessage: checkIOBeforeEnable,
		},
		neutral.Rule(check.NeutralRule{Checks: check.RDMAByRequester, Rule: check.Rule{
			ID: "NVME-RDMA-BY-HOST", Severity: check.Error,
			Reference: "NVMe RDMA Transport 1.0 section 'Data Transfer' (RDMA Read and Write by the controller)",
			Summary:   "only the controller initiates RDMA Read and Write",
			Explanation: `The host advertises memory with keyed SGL data blocks and the controller moves the
data: RDMA Read for host-to-controller data, RDMA Write for controller-to-host
data. The host initiates none.`,
			Evidence: "the connection's RDMA operations",
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAUnadvertised, Rule: check.Rule{
			ID: "NVME-RDMA-UNADVERTISED", Severity: check.Error,
			Reference: "NVMe RDMA Transport 1.0 section 'Data Transfer' (RDMA Read and Write by the controller)",
			Summary:   "an RDMA Read or Write of the controller falls inside a keyed SGL of an outstanding command",
			Explanation: `Every RDMA operation of the controller moves data of one command: it must fall
inside the keyed SGL data block (address, length, key) of a command still
outstanding on the queue, Read for host-to-controller and Write for
controller-to-host data.`,
			Evidence: "the connection's commands and RDMA operations",
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAAfterResponse, Rule: check.Rule{
			ID: "NVME-RDMA-AFTER-COMPLETION", Severity: check.Error,
			Reference: "NVMe over Fabrics 1.1 section 'Data Transfers'; NVMe RDMA Transport 1.0 section 'Data Transfer'",
			Summary:   "no RDMA operation targets a command's memory after its completion",
			Explanation: `The controller sends the completion once the command's data has moved; the host
then reuses or invalidates the memory. An RDMA operation on it afterwards reaches
memory the command no longer owns.`,
			Evidence: "the connection's commands and RDMA operations",
		}}),
	}
}

func queueOf(c *check.Conn) *Queue {
	q, _ := c.Connection.ULPData.(*Queue)
	return q
}

// damaged reports whether the capture lacks part of the connection, so
// that a missing command explains what would be a finding: its set-up is
// not in it, or PSNs were skipped (a capture drop or wire loss whose
// retransmission the capture also lacks).
func damaged(c *check.Conn) bool {
	q := queueOf(c)
	return c.State == dissect.StateNoSetup || c.MissingPSNs > 0 || q != nil && q.Evicted > 0
}

// exchangeKey is the key of the exchange of a CID on q, as the exchanges
// listing writes it: findings name the exchange the listing shows.
func exchangeKey(q *Queue, cid uint16) string { return string(AppendKey(nil, q.key(cid))) }

// AppendKey appends an NVMe/RDMA exchange key (QID<<16 | CID) as
// "QID:CID", the CID in hex as tshark's nvme.cmd.cid writes it
// ("1:0x0041"), for fields.RegisterExchangeKey.
func AppendKey(dst []byte, key uint64) []byte {
	dst = strconv.AppendUint(dst, key>>16, 10)
	dst = append(dst, ':', '0', 'x')
	const hexd = "0123456789abcdef"
	cid := uint16(key)
	return append(dst, hexd[cid>>12], hexd[cid>>8&0xf], hexd[cid>>4&0xf], hexd[cid&0xf])
}

func checkCMPrivateData(c *check.Conn) {
	q := queueOf(c)
	if q == nil || !c.PrivateData[0].Seen {
		return
	}
	c.Checked()
	pk := []int{c.PrivateData[0].Packet}
	switch {
	case q.HSQSIZE == nil:
		c.Reportf(pk, "malformed", "the CM REQ's private data is not NVMe/RDMA's: %s", q.SetUpError)
		return
	case q.SetUpError != "":
		c.Reportf(pk, "recfmt", "%s", q.SetUpError)
	case *q.HRQSIZE < *q.HSQSIZE+1:
		c.Reportf(pk, "hrqsize", "the host's HRQSIZE %d is below HSQSIZE %d + 1: it cannot receive a completion for every command it may submit",
			*q.HRQSIZE, *q.HSQSIZE)
	}
	if q.CRQSIZE != nil && *q.CRQSIZE < *q.HSQSIZE+1 {
		c.Reportf([]int{c.PrivateData[1].Packet}, "crqsize", "the controller's CRQSIZE %d is below HSQSIZE %d + 1: it cannot receive every command the host may submit",
			*q.CRQSIZE, *q.HSQSIZE)
	}
}

func capsuleOf(m *dissect.Message) *Capsule {
	r, _ := m.ULP.(*Capsule)
	return r
}

func checkConnectFirst(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || !r.Command || !r.First || r.Err != nil && r.Request == nil {
		return
	}
	if c.State == dissect.StateNoSetup || c.MissingPSNs > 0 {
		// The capture may lack the Connect.
		c.Skip(check.ReasonMidTransaction)
		return
	}
	c.Checked()
	cmd := &r.Cmd
	if !cmd.IsFabrics() || cmd.FCTYPE != nvme.FabricsConnect {
		c.Reportf(m.Packets, "not-connect", "the queue's first command capsule is %s (opcode 0x%02x), not a Fabrics Connect",
			r.Request.Name, cmd.OPC)
		return
	}
	cc := cmd.Connect()
	q := r.Queue
	if q.QID != nil && cc.QID != *q.QID {
		c.Reportf(m.Packets, "qid", "the Connect names QID %d but the CM REQ (packet %d) set up QID %d", cc.QID, c.PrivateData[0].Packet, *q.QID)
	}
	if q.HSQSIZE != nil && cc.SQSIZE != *q.HSQSIZE {
		c.Reportf(m.Packets, "sqsize", "the Connect's SQSIZE %d differs from the CM REQ's HSQSIZE %d (packet %d)", cc.SQSIZE, *q.HSQSIZE, c.PrivateData[0].Packet)
	}
}

func checkCapsuleSize(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || m.Truncated {
		return
	}
	c.Checked()
	switch {
	case r.Command && m.Length < nvme.SQELen:
		c.Reportf(m.Packets, "short-command", "a command capsule of %d bytes: shorter than the 64-byte submission queue entry", m.Length)
	case r.Command && errors.Is(r.Err, nvme.ErrInCapsuleData):
		c.Reportf(m.Packets, "in-capsule", "the command's SGL names in-capsule data at offset %d, %d bytes, beyond the %d bytes the capsule carries after its SQE",
			r.Cmd.SGL1.Address, r.Cmd.SGL1.Length, len(r.Cmd.Data))
	case !r.Command && m.Length != nvme.CQELen:
		c.Reportf(m.Packets, "response-size", "a response capsule of %d bytes: NVMe/RDMA completions are the 16-byte completion queue entry", m.Length)
	}
}

func checkCIDUnique(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || !r.Command || r.Request == nil {
		return
	}
	old := r.Replaced
	if old == nil {
		c.Checked()
		return
	}
	// The first command's completion may be what the capture lost of the
	// controller's stream since: judged at the end of the connection.
	c.Hold(check.Finding{Packets: []int{old.Packet, dissect.LastPacket(m.Packets)}, Key: "cid", ULP: Name,
		Exchange: exchangeKey(r.Queue, old.CID), Message: fmt.Sprintf(
			"command %s reuses CID %d of the %s of packet %d, which has no completion yet", r.Request.Name, old.CID, old.Name, old.Packet)},
		dissect.DirServerToClient, old.Packet, dissect.FirstPacket(m.Packets))
}

func checkCompletionMatched(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || r.Command || r.Err != nil {
		return
	}
	if r.Request != nil {
		c.Checked()
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonMidTransaction)
		return
	}
	// Its command may be what the capture lost of the host's stream:
	// judged at the end of the connection.
	c.Hold(check.Finding{Packets: m.Packets, Key: "unmatched", ULP: Name, Exchange: exchangeKey(r.Queue, r.Cpl.CID),
		Message: fmt.Sprintf("a completion for CID %d (%s), but no command with that CID is outstanding on the queue",
			r.Cpl.CID, r.Cpl.Status)}, dissect.DirClientToServer, 0, dissect.FirstPacket(m.Packets))
}

func checkQueueDepth(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || !r.Command || r.Request == nil || r.Queue.HSQSIZE == nil {
		return
	}
	c.Checked()
	if limit := int(*r.Queue.HSQSIZE) + 1; r.Outstanding > limit {
		c.Reportf(m.Packets, "depth", "%d commands outstanding with this %s: more than the HSQSIZE + 1 = %d the queue was set up for",
			r.Outstanding, r.Request.Name, limit)
	}
}

// invalidated reads a capsule sent With Invalidate for NVME-INV-KEY: the
// command its completion answers, which must have asked for remote
// invalidation (keyed SGL subtype Invalidate Key) of exactly that key.
func invalidated(c *check.Conn, m *dissect.Message) (inv check.Invalidation, ok bool) {
	r := capsuleOf(m)
	if r == nil || !r.Invalidate || r.Err != nil {
		return inv, false
	}
	x := r.Request
	if x == nil || r.Command {
		return inv, true
	}
	inv = check.Invalidation{Answered: true, Key: r.Queue.key(x.CID), Packet: x.Packet, Name: x.Name,
		Advertised: x.SGL.Key == r.InvalidatedSTag}
	switch {
	case !x.SGL.InvalidateKey():
		inv.NotAllowedKey, inv.NotAllowed = "not-asked", fmt.Sprintf(
			"the completion of %s (CID %d) came by Send With Invalidate of key 0x%08x, but the command's SGL (%s, subtype %s) did not ask for remote invalidation",
			x.Name, x.CID, r.InvalidatedSTag, x.SGL.Type, x.SGL.Subtype)
	case !inv.Advertised:
		inv.Asked = fmt.Sprintf("; it asked to invalidate key 0x%08x", x.SGL.Key)
	}
	return inv, true
}

func checkKeepAlive(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || !r.Command || !r.KeepAlive {
		return
	}
	x := r.Queue.Controller
	to := dissect.FirstPacket(m.Packets)
	if x.state.tbkas != tbkasNo && x.ioLost(r.KeepAliveFrom, to) {
		c.Skip(check.ReasonCaptureGap)
		return
	}
	c.Checked()
	kato := time.Duration(x.KATO) * time.Millisecond
	if r.KeepAliveGap <= kato {
		return
	}
	what := "Keep Alive"
	if x.state.tbkas != tbkasNo {
		what = "command"
	}
	// A command the capture lost may have restarted the timer: judged at
	// the end of the connection.
	c.Hold(check.Finding{Packets: []int{r.KeepAliveFrom, to}, Key: "gap", ULP: Name, Message: fmt.Sprintf(
		"%v without a %s to controller %d (CNTLID %d) before this %s: longer than its KATO of %d ms",
		r.KeepAliveGap.Round(time.Millisecond), what, x.ID, x.CNTLID, r.Request.Name, x.KATO)},
		dissect.DirClientToServer, r.KeepAliveFrom, to)
}

// checkKeepAliveTail judges the silence at the end of an association
// (Queue.KeepAliveTail): the capture must hold every command that could
// have restarted the timer in it.
func checkKeepAliveTail(c *check.Conn) {
	q := queueOf(c)
	if q == nil || q.KeepAliveTail == nil || q.Controller == nil {
		return
	}
	t, x := q.KeepAliveTail, q.Controller
	// Findings of End rules are final: what the capture lost is known.
	if c.Lost[dissect.DirClientToServer.Index()].Between(t.From, t.To) || x.state.tbkas != tbkasNo && x.ioLost(t.From, t.To) {
		c.Skip(check.ReasonCaptureGap)
		return
	}
	c.Checked()
	if kato := time.Duration(x.KATO) * time.Millisecond; t.Gap <= kato {
		return
	}
	what := "Keep Alive"
	if x.state.tbkas != tbkasNo {
		what = "command"
	}
	c.Reportf([]int{t.From, t.To}, "gap-end", "%v without a %s to controller %d (CNTLID %d) until the last NVMe/RDMA packet of the capture, with no shutdown: longer than its KATO of %d ms",
		t.Gap.Round(time.Millisecond), what, x.ID, x.CNTLID, x.KATO)
}

func checkSQHD(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || r.Command || r.Err != nil {
		return
	}
	if !r.SQHD {
		if !r.Queue.sqOn && r.Queue.Connect == nil {
			c.Skip(check.ReasonMidTransaction) // the capture lacks the Connect
		}
		return
	}
	if damaged(c) {
		c.Skip(check.ReasonCaptureGap)
		return
	}
	c.Checked()
	if !r.SQHDBad {
		return
	}
	q := r.Queue
	msg := fmt.Sprintf("SQHD %d names no entry of the queue's %d (SQSIZE %d + 1)", r.Cpl.SQHD, q.sqSize, q.sqSize-1)
	if uint32(r.Cpl.SQHD) < q.sqSize {
		msg = fmt.Sprintf("SQHD %d reports %d submission queue entries consumed (modulo %d), but the host has sent %d commands since its Connect",
			r.Cpl.SQHD, r.SQHDConsumed, q.sqSize, r.SQHDSubmitted)
	}
	// A command the capture lost may be the entry it reports: judged at
	// the end of the connection.
	from := 0
	if q.Connect != nil {
		from = q.Connect.Packet
	}
	c.Hold(check.Finding{Packets: m.Packets, Key: "sqhd", ULP: Name, Exchange: exchangeKey(q, r.Cpl.CID), Message: msg},
		dissect.DirClientToServer, from, dissect.FirstPacket(m.Packets))
}

func checkIOBeforeEnable(c *check.Conn, m *dissect.Message) {
	r := capsuleOf(m)
	if r == nil || !r.IOConnect {
		return
	}
	x := r.IOConnectOf
	if x == nil || x.admin == nil || r.Request == nil {
		c.Skip(check.ReasonMidTransaction) // the admin queue is not in the capture
		return
	}
	a := x.admin
	if a.State == dissect.StateNoSetup || a.MissingPSNs > 0 || a.Lost[0].Between(0, r.Request.Packet) || a.Lost[1].Between(0, r.Request.Packet) {
		c.Skip(check.ReasonCaptureGap)
		return
	}
	c.Checked()
	if r.ReadyPacket != 0 && r.ReadyPacket < r.Request.Packet {
		return
	}
	why := "set CC.EN to 1"
	if x.state.enabled || r.ReadyPacket != 0 {
		why = "seen CSTS.RDY 1"
	}
	c.Report(check.Finding{Packets: []int{r.Request.Packet, dissect.LastPacket(m.Packets)}, Key: "not-ready", ULP: Name,
		Exchange: exchangeKey(r.Queue, r.Cpl.CID), Message: fmt.Sprintf(
			"the Connect of I/O queue %d to controller %d (CNTLID %d) came before its admin queue (connection %d) had %s",
			r.Queue.Connect.QID, x.ID, x.CNTLID, a.ID, why)})
}
