package rpcordma

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// Rules returns RPC-over-RDMA's conformance rules (check.Register): the
// RFC 8797 set-up rules (PD-*), inline thresholds, remote invalidation,
// the transport header, credits, chunks, the Upper-Layer Binding, RDMA
// operations and version 2's, in the order `rdmashark rules` lists them,
// each placed where it stood when it was check's own (Rule.Before). They
// read the view Hooks makes of each message (Msg), and run on, and say why
// they were not evaluated on, the connections no ULP claimed too
// (Rule.OnUnclaimed). Rules marked Added are not in
// shared/specs/conformance-rules.md; the spec they cite supports them.
func Rules() []*check.Rule {
	rules := []*check.Rule{
		// Connection set-up and private data (RFC 8797), listed before
		// check's CM-IP-HEADER.
		{
			ID: "PD-FORMAT", Severity: check.Error, Reference: "RFC 8797 sections 4, 5.2",
			ULP:     Name,
			Summary: "private data with the 0xf6ab0e18 identifier is version 1 and 8 octets long",
			Explanation: `A peer that places the RPC-over-RDMA format identifier 0xf6ab0e18 in its CM
private data (CM REQ/REP, or MPA Request/Reply on iWARP) must follow it with a
version 1 message: the identifier, then version 1, flags, Send Size and Receive
Size, 8 octets in all. A receiver that finds the identifier with another
version, or with the private data ending before the 8 octets do, must act as if
no private data was sent (RFC 8797 section 5.2), so the sender's R bit and
sizes are silently lost: remote invalidation is off and both thresholds fall
back to 1024 bytes.`,
			Evidence: "the CM REQ/REP or MPA Request/Reply of the connection",
			Applies:  needsIdentifier, End: checkPDFormat,
		},
		{
			ID: "PD-RESERVED", Severity: check.Warning, Reference: "RFC 8797 section 4 (Reserved)",
			ULP:     Name,
			Summary: "the 7 reserved bits of the private data are zero",
			Explanation: `The 7 bits before R in the second word of the RFC 8797 message are reserved:
"Senders MUST set these bits to zero and receivers MUST ignore their value."
A sender that sets them breaks the rule and risks misinterpretation by a later
version of the format that gives the bits a meaning.`,
			Evidence: "a valid RFC 8797 message in the set-up",
			Applies:  needsIdentifier, End: checkPDReserved,
		},
		{
			ID: "PD-SIZE-RANGE", Severity: check.Info, Reference: "RFC 8797 sections 4, 4.2",
			ULP:     Name,
			Summary: "advertised sizes are 1024..262144 bytes; note sizes that changed since the last connection",
			Explanation: `Send Size and Receive Size are encoded as (bytes / 1024) - 1 in one octet, so
they always decode to 1024..262144 bytes. The check reports, as information,
when a peer advertises other sizes or R than it did on the previous connection
between the same endpoints in the capture: RFC 8797 section 4 lets settings
change on reconnection ("An implementation ... MUST be prepared for the settings
to change upon a reconnection"), so this is not a violation, but it explains
why two connections of one mount behave differently.`,
			Evidence: "valid RFC 8797 messages in the set-up",
			Applies:  needsIdentifier, End: checkPDSizeRange,
		},
		{
			ID: "PD-ABSENT", Severity: check.Info, Reference: "RFC 8797 section 5.1",
			ULP:     Name,
			Summary: "a side sent no recognisable private data: defaults apply (R=0, 1024/1024)",
			Explanation: `On an RPC-over-RDMA connection whose whole set-up is in the capture, a side whose
CM REQ/REP (MPA Request/Reply) carries no valid RFC 8797 message counts as having
sent R=0 and Send/Receive sizes of 1024 bytes (RFC 8797 section 5.1). That is
legal — the private data is optional — but it fixes the inline thresholds at
1024 bytes in the direction that side receives and rules out remote
invalidation; the check says so, so the thresholds other checks apply make
sense.`,
			Evidence: "both sides' set-up messages",
			Applies:  pdAbsentApplies, End: checkPDAbsent,
		},
		// Inline thresholds (RFC 8797 section 4.2, RFC 8166 section 3.3.2).
		{
			ID: "THRESH-C2S", Severity: check.Error, Reference: "RFC 8166 section 3.3.2; RFC 8797 section 4.2",
			ULP:     Name,
			Summary: "every client-to-server Send of RPC-over-RDMA fits the negotiated inline threshold",
			Explanation: `The client-to-server inline threshold is the smaller of the client's Send Size
and the server's Receive Size (1024 bytes for a side without RFC 8797 private
data). A Send larger than that may not fit the receive buffer the server posted:
the Receive fails and the RDMA provider typically tears the connection down
(RFC 8797 section 3.1). Larger messages must move by RDMA: Read chunks for
DDP-eligible arguments, or a Long Call (RDMA_NOMSG with a position-zero Read
chunk). The size checked is the whole reassembled Send, transport header
included.`,
			Evidence: "the connection's set-up (negotiated values) and its reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkThreshold(dissect.DirClientToServer),
		},
		{
			ID: "THRESH-S2C", Severity: check.Error, Reference: "RFC 8166 section 3.3.2; RFC 8797 section 4.2",
			ULP:     Name,
			Summary: "every server-to-client Send of RPC-over-RDMA fits the negotiated inline threshold",
			Explanation: `The server-to-client inline threshold is the smaller of the server's Send Size
and the client's Receive Size (1024 bytes for a side without RFC 8797 private
data). A Reply larger than that must use the Write chunks and Reply chunk the
Call provided (a Long Reply is RDMA_NOMSG with the Reply chunk); sent inline it
may overrun the client's receive buffer and take the connection down.`,
			Evidence: "the connection's set-up (negotiated values) and its reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkThreshold(dissect.DirServerToClient),
		},

		// Remote invalidation (RFC 8797 section 4.1).
		{
			ID: "INV-NOT-NEGOTIATED", Severity: check.Error, Reference: "RFC 8797 section 4.1",
			ULP: Name, Version: 1,
			Summary: "Send With Invalidate used while either peer's R bit is clear (or its private data absent)",
			Explanation: `RFC 8797 section 4.1: "When both connection peers have set this bit flag in
their CM Private Data, the responder MAY use RDMA Send With Invalidate when
transmitting RPC Replies ... When either peer on a connection clears this flag,
the responder MUST use only RDMA Send when transmitting RPC Replies." A peer
that sent no RFC 8797 message counts as R=0. A requester that cleared R may
expose STags that must not be invalidated remotely (RFC 8797 section 3.2); a
responder that invalidates them anyway breaks its peer's memory registration.`,
			Evidence: "the connection's set-up and its Send With Invalidate messages",
			Applies:  needsRPC, ULPMessage: checkInvNegotiated,
		},
		neutral.Rule(check.NeutralRule{Checks: check.InvalidateByRequester, Rule: check.Rule{
			ID: "INV-WRONG-DIRECTION", Severity: check.Error, Reference: "RFC 8797 section 4.1",
			Summary: "Send With Invalidate carries something other than an RPC Reply",
			Explanation: `Only the responder may use RDMA Send With Invalidate, and only to transmit RPC
Replies (RFC 8797 section 4.1). A Call, an RDMA_ERROR or any other message sent
With Invalidate asks the receiver to invalidate an STag it never associated with
that message.`,
			Evidence: "the connection's reassembled Sends",
			Applies:  needsRPC,
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.InvalidateSTag, Rule: check.Rule{
			ID: "INV-FOREIGN-STAG", Severity: check.Error, Reference: "RFC 8797 section 4.1",
			Summary: "the invalidated STag is one the Call with the same XID advertised",
			Explanation: `"Each RDMA Send With Invalidate MUST invalidate an STag associated only with the
XID in the rdma_xid field of the RPC-over-RDMA Transport Header it carries"
(RFC 8797 section 4.1). The check compares the STag in the IETH (iWARP: the
Inval STag) with the handles of the Read list, Write list and Reply chunk of
the Call with that XID. Invalidating another transaction's STag pulls memory
out from under an RPC still in progress.`,
			Evidence: "the Call and the Reply of a transaction",
			Applies:  needsRPC,
		}}),
		{
			ID: "INV-V2-HANDLE", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 section \"Remote Invalidation\"", Added: true,
			ULP: Name, Version: 2,
			Summary: "version 2: Send With Invalidate uses exactly the Call's rdma_inv_handle, which names one of the Call's handles",
			Explanation: `RPC-over-RDMA version 2 does not negotiate remote invalidation per connection
(RFC 8797's R bit is version 1's): a Requester solicits it per Call, by setting
rdma_inv_handle in RDMA2_CALL_EXTERNAL or RDMA2_CALL_INLINE to "a non-zero value
that matches one of the rdma_handle fields in that header", or to zero when the
Responder may invalidate none of them. A Responder that sends the Reply With
Invalidate "MUST use the value in the corresponding Call's rdma_inv_handle
field". The check finds a Call whose non-zero rdma_inv_handle is none of its
handles, a Reply With Invalidate to a Call that solicited none, and one that
invalidates another handle than the solicited one. (Added: version 2.)`,
			Evidence: "version 2 Calls and their Replies With Invalidate",
			Applies:  needsRPC, ULPMessage: checkInvV2Handle,
		},
		{
			ID: "INV-USAGE", Severity: check.Info, Reference: "RFC 8797 sections 3.2, 4.1",
			ULP:     Name,
			Summary: "per connection: Replies sent with and without remote invalidation",
			Explanation: `Reports, per RPC-over-RDMA connection, how many Replies the responder sent with
Send With Invalidate and how many with plain Send, next to whether remote
invalidation was negotiated. A connection that negotiated R but never uses it
pays for nothing; one that did not negotiate it but uses it is an
INV-NOT-NEGOTIATED finding.`,
			Evidence: "the connection's Replies",
			Applies:  needsRPC, End: endInvUsage,
		},

		// Transport header (RFC 8166 section 4; draft-ietf-nfsv4-rpcrdma-version-two).
		{
			ID: "HDR-VERSION", Severity: check.Error, Reference: "RFC 8166 sections 4.2.2, 4.5",
			ULP:     Name,
			Summary: "rdma_vers is 1 (or 2); unknown versions are answered by ERR_VERS with a sensible range",
			Explanation: `Every transport header starts with rdma_xid, rdma_vers, rdma_credit and
rdma_proc. Version 1 is RFC 8166; version 2 is the draft. A header with another
version is an error, and a responder that does not support a Call's version must
answer with RDMA_ERROR/ERR_VERS, whose rdma_vers_low..rdma_vers_high range must
be non-empty and contain the version the responder speaks on the connection.`,
			Evidence: "the connection's reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkHdrVersion,
		},
		{
			ID: "HDR-PROC", Severity: check.Error, Reference: "RFC 8166 sections 4.2.4, 4.6",
			ULP:     Name,
			Summary: "rdma_proc is a known procedure; RDMA_MSGP and RDMA_DONE are not to be used (warning)",
			Explanation: `Version 1 defines RDMA_MSG (0), RDMA_NOMSG (1), RDMA_MSGP (2), RDMA_DONE (3) and
RDMA_ERROR (4). Other values are errors. RFC 8166 section 4.6 keeps RDMA_MSGP and
RDMA_DONE only for compatibility: senders no longer use them, so they are
reported as warnings. For version 2, rdma_htype must be a type the draft
defines.`,
			Evidence: "the connection's reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkHdrProc,
		},
		{
			ID: "HDR-TRUNCATED", Severity: check.Error, Reference: "RFC 8166 section 4.3",
			ULP:     Name,
			Summary: "the header's chunk lists end within the Send",
			Explanation: `The chunk lists are XDR linked lists inside the transport header; a header whose
lists (or counted segment arrays) run past the end of the Send cannot be parsed
by the receiver, which answers ERR_CHUNK or drops the connection. A Send cut by
the capture's snap length is not evaluated.`,
			Evidence: "the connection's reassembled Sends, whole",
			Applies:  needsRPC, ULPMessage: checkHdrTruncated,
		},
		{
			ID: "HDR-MALFORMED", Severity: check.Error, Reference: "RFC 8166 section 4.3; RFC 4506 section 4.19", Added: true,
			ULP:     Name,
			Summary: "the transport header is valid XDR (discriminators 0/1, known error codes)",
			Explanation: `The Read list, Write list and Reply chunk are XDR optional-data: every
discriminator is 0 or 1 (RFC 4506 section 4.19), and RDMA_ERROR's rdma_err is
ERR_VERS or ERR_CHUNK (the union has no default arm). Anything else cannot be
decoded by a conforming receiver. (Added: the list has HDR-TRUNCATED for
lists that run short; this is the other way a header fails to parse.)`,
			Evidence: "the connection's reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkHdrMalformed,
		},
		{
			ID: "HDR-XID-MISMATCH", Severity: check.Error, Reference: "RFC 8166 section 4.2.1",
			ULP:     Name,
			Summary: "rdma_xid equals the XID of the RPC message carried inline",
			Explanation: `rdma_xid is a copy of the XID of the RPC message the transport header conveys;
receivers match Replies to Calls with it before parsing the RPC message, and
remote invalidation ties STags to it. An RDMA_MSG whose rdma_xid differs from
the inline RPC message's XID sends the receiver to the wrong transaction.`,
			Evidence: "RDMA_MSG Sends with the start of their RPC message",
			Applies:  needsRPC, ULPMessage: checkHdrXID,
		},
		{
			ID: "HDR-ERROR", Severity: check.Warning, Reference: "RFC 8166 section 4.5", Added: true,
			ULP:     Name,
			Summary: "a responder answered a Call with RDMA_ERROR (ERR_VERS, ERR_CHUNK)",
			Explanation: `RDMA_ERROR reports that the responder could not process a Call's transport
header: ERR_VERS for an unsupported version, ERR_CHUNK for chunk lists it could
not parse or provision (too many chunks, a Reply that did not fit). The RPC never
ran; the requester sees a transport error. (Added: the list mentions ERR_CHUNK
under CHUNK-MISSING-REPLY; this reports every transport error.)`,
			Evidence: "the connection's reassembled Sends",
			Applies:  needsRPC, ULPMessage: checkHdrError,
		},

		// Credits (RFC 8166 section 3.3.1).
		{
			ID: "CREDIT-ZERO", Severity: check.Warning, Reference: "RFC 8166 section 3.3.1",
			ULP: Name, Version: 1,
			Summary: "a Reply grants zero credits",
			Explanation: `In a Reply, rdma_credit is the credit limit the responder grants: the number of
Calls the requester may have outstanding. A grant of zero leaves the requester
unable to send anything until another Reply raises it — and with no Call
outstanding none will come, so the connection stalls.`,
			Evidence: "the connection's Replies",
			Applies:  needsRPC, ULPMessage: checkCreditZero,
		},
		{
			ID: "CREDIT-OVERRUN", Severity: check.Error, Reference: "RFC 8166 section 3.3.1",
			ULP: Name, Version: 1,
			Summary: "the requester has more Calls outstanding than the last credit limit granted",
			Explanation: `A requester must not have more Calls outstanding (sent, Reply not yet received)
than the credit limit the responder last granted; each credit stands for a
Receive buffer the responder posted. One Call too many arrives with no buffer
posted: an RNR NAK at best, a broken connection at worst. Evaluated from the
first Reply in the capture on (before it no limit is known).`,
			Evidence: "the connection's Calls and Replies",
			Applies:  needsRPC, ULPMessage: checkCreditOverrun,
		},

		// Chunks (RFC 8166 sections 3.4, 3.5, 4.3; RFC 8267).
		{
			ID: "CHUNK-READ-IN-REPLY", Severity: check.Error, Reference: "RFC 8166 section 3.4.5; RFC 8267 appendix A",
			ULP:     Name,
			Summary: "a Reply carries a non-empty Read list",
			Explanation: `Read chunks let the responder pull a Call's data; a Reply has nothing to pull
from, and RPC-over-RDMA version 1 removed the use of the Read list in Replies
(RFC 8267 appendix A). A Reply with Read segments exposes requester-side
semantics in the wrong direction.`,
			Evidence: "the connection's Replies",
			Applies:  needsRPC, ULPMessage: checkReadInReply,
		},
		{
			ID: "CHUNK-READ-POSITION", Severity: check.Error, Reference: "RFC 8166 sections 3.4.5, 4.3.1",
			ULP:     Name,
			Summary: "Read positions are multiples of 4, non-decreasing, within the Payload stream; a chunk's segments are adjacent",
			Explanation: `A Read segment's position is the XDR offset in the Call's Payload stream where
its data belongs, so it is a multiple of 4; the Read list is ordered by
position, the segments of one chunk share one position and follow each other,
and a position past the end of the (reduced) Payload stream sent inline points
nowhere. The responder reassembles the Call from these positions.`,
			Evidence: "the connection's Calls with Read lists",
			Applies:  needsRPC, ULPMessage: checkReadPosition,
		},
		{
			ID: "CHUNK-LONG-CALL", Severity: check.Error, Reference: "RFC 8166 sections 3.5.3, 4.2.4",
			ULP:     Name,
			Summary: "an RDMA_NOMSG Call has a position-zero Read chunk and nothing inline; position zero only with RDMA_NOMSG",
			Explanation: `A Long Call moves the whole RPC Call in a position-zero Read chunk and is sent
as RDMA_NOMSG, with nothing after the transport header. An RDMA_NOMSG Call
without a position-zero chunk has no RPC message anywhere, and an RDMA_MSG Call
with a position-zero chunk conveys its Call twice.`,
			Evidence: "the connection's Calls",
			Applies:  needsRPC, ULPMessage: checkLongCall,
		},
		{
			ID: "CHUNK-LONG-REPLY", Severity: check.Error, Reference: "RFC 8166 sections 3.5.4, 4.2.4",
			ULP:     Name,
			Summary: "an RDMA_NOMSG Reply uses the Reply chunk its Call provided",
			Explanation: `A Long Reply writes the whole RPC Reply into the Reply chunk the Call provided
and is sent as RDMA_NOMSG, returning that Reply chunk with the lengths written.
An RDMA_NOMSG Reply without a Reply chunk, or to a Call that provided none,
has nowhere its Reply could be.`,
			Evidence: "the connection's Calls and Replies",
			Applies:  needsRPC, ULPMessage: checkLongReply,
		},
		{
			ID: "CHUNK-REPLY-ECHO", Severity: check.Error, Reference: "RFC 8166 sections 3.4.6, 4.3.2, 4.3.3",
			ULP:     Name,
			Summary: "a Reply returns the Call's Write chunks and Reply chunk with lengths no larger than provided",
			Explanation: `A Reply repeats its Call's Write list — the same number of chunks, each with the
same segments and handles — and its Reply chunk, with each segment's length set
to the number of bytes written. A different shape leaves the requester unable
to tell which of its buffers hold results; a length above the provided one
claims a write past the end of the requester's buffer.`,
			Evidence: "the Call and the Reply of a transaction",
			Applies:  needsRPC, ULPMessage: checkReplyEcho,
		},
		{
			ID: "CHUNK-DDP-ELIGIBLE", Severity: check.Error, Reference: "RFC 8166 section 3.4.1; RFC 8267 sections 3, 5.1",
			ULP:     Name,
			Summary: "Read chunks carry only DDP-eligible arguments, Write chunks only DDP-eligible results",
			Explanation: `The Upper-Layer Binding names the data items that may move by direct data
placement. NFSv2/v3 (RFC 8267 section 3): the data of WRITE and the pathname of
SYMLINK (Read chunks), the data of READ and the pathname of READLINK (Write
chunks); nothing else, and nothing in MOUNT or NFSACL. NFSv4 COMPOUND (section
5.1): the data of WRITE and the linkdata of CREATE (NF4LNK) as arguments, the
data of READ and the link of READLINK as results; the callback program has
none (section 5.5). A Read chunk whose position is not where such an argument
sits, or more Write chunks than the procedure has such results, moves an item
the responder does not expect there. The arguments are walked to find the
items.`,
			Evidence: "Calls with chunks and their RPC header",
			Applies:  needsRPC, ULPMessage: checkDDPEligible,
		},
		{
			ID: "CHUNK-NFS4-PAIRING", Severity: check.Error, Reference: "RFC 8267 section 5.4.1",
			ULP:     Name,
			Summary: "in an NFSv4 COMPOUND, the Nth Write chunk goes to the Nth READ-like operation",
			Explanation: `NFSv4 pairs Write chunks with the COMPOUND's operations that have a DDP-eligible
result (READ, READLINK) in order: the first chunk to the first such operation,
and so on; an empty Write chunk asks for that result inline, and operations
beyond the chunks return inline. A server that writes a result into another
chunk, or a client that provides more chunks than such operations, breaks the
pairing.`,
			Evidence: "NFSv4 COMPOUND Calls and Replies, with their operations decoded",
			Applies:  needsRPC, ULPMessage: checkNFS4Pairing,
		},
		{
			ID: "CHUNK-UNNEEDED", Severity: check.Info, Reference: "RFC 8166 section 3.5",
			ULP:     Name,
			Summary: "a chunk moved data that would have fit inline (an efficiency hint)",
			Explanation: `Chunks cost an RDMA Read or Write and a memory registration; RFC 8166 uses them
for what does not fit the inline threshold. A Call or Reply that moved data by
chunk although the whole message would have fit inline is correct but slower.
Reported as information, once per connection for Calls and once for Replies,
with the count and the first example.`,
			Evidence: "the connection's set-up and its messages with chunks",
			Applies:  needsRPC, ULPMessage: checkUnneeded, End: endUnneeded,
		},
		{
			ID: "CHUNK-MISSING-REPLY", Severity: check.Error, Reference: "RFC 8166 sections 3.5.4, 4.5.2; RFC 8267 section 2",
			ULP:     Name,
			Summary: "a Reply too large for the inline threshold had no Reply chunk to go to",
			Explanation: `The requester must estimate each Reply's size and provide a Reply chunk when it
may exceed the server-to-client inline threshold (RFC 8267 section 2, "reply
size estimation"). Without one, the responder either sends an oversize Reply
inline or cannot send it at all and answers RDMA_ERROR/ERR_CHUNK. The finding
points at the Call that provided no Reply chunk.`,
			Evidence: "the Call and the Reply (or RDMA_ERROR) of a transaction",
			Applies:  needsRPC, ULPMessage: checkMissingReply,
		},
		{
			ID: "CHUNK-ROUNDUP", Severity: check.Warning, Reference: "RFC 8166 sections 3.4.5.2, 3.4.6.2",
			ULP:     Name,
			Summary: "XDR roundup padding is not moved in a Read chunk nor written into a Write chunk",
			Explanation: `A DDP-eligible opaque item whose length is not a multiple of 4 has XDR roundup
padding in its inline encoding; when the item moves by chunk, the padding stays
behind: a Read chunk carries the data only, and a responder does not write the
padding into a Write chunk. Evaluated where the inline part states the data
length: NFSv3 WRITE Calls and READ Replies.`,
			Evidence: "NFSv3 WRITE Calls with Read chunks, READ Replies with Write chunks",
			Applies:  needsRPC, ULPMessage: checkRoundup,
		},

		// RDMA operations against advertised memory.
		neutral.Rule(check.NeutralRule{Checks: check.RDMAReadUnadvertised, Rule: check.Rule{
			ID: "RDMA-READ-UNADVERTISED", Severity: check.Error, Reference: "RFC 8166 sections 3.4.3, 3.4.5",
			Summary: "an RDMA Read targets memory inside a Read segment of an outstanding Call",
			Explanation: `The responder pulls a Call's Read chunks with RDMA Read; every Read must fall
inside a Read segment (handle, offset, length) that a Call still outstanding on
the connection advertised. A Read elsewhere reaches requester memory that was
not offered for it — at best a remote access error, at worst a data leak.`,
			Evidence: "the connection's Calls and RDMA Reads",
			Applies:  needsRPCOps,
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAWriteUnadvertised, Rule: check.Rule{
			ID: "RDMA-WRITE-UNADVERTISED", Severity: check.Error, Reference: "RFC 8166 sections 3.4.3, 3.4.6",
			Summary: "an RDMA Write targets memory inside a Write chunk or Reply chunk of an outstanding Call",
			Explanation: `The responder pushes results with RDMA Write into the Write chunks and the Reply
chunk of the Call they answer; every Write must fall inside one of their
segments. A Write elsewhere overwrites requester memory that was not offered for
it.`,
			Evidence: "the connection's Calls and RDMA Writes",
			Applies:  needsRPCOps,
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAAfterResponse, Rule: check.Rule{
			ID: "RDMA-AFTER-REPLY", Severity: check.Error, Reference: "RFC 8166 sections 3.4.3, 3.6",
			Summary: "no RDMA Read or Write against a Call's segments after its Reply was sent",
			Explanation: `The responder finishes moving a transaction's data before it sends the Reply;
once the Reply arrives, the requester invalidates the segments and may reuse the
memory. An RDMA operation against a Call's segments after its Reply reaches
memory that may already belong to someone else.`,
			Evidence: "the connection's Calls, Replies and RDMA operations",
			Applies:  needsRPCOps,
		}}),
		neutral.Rule(check.NeutralRule{Checks: check.RDMAByRequester, Rule: check.Rule{
			ID: "RDMA-BY-REQUESTER", Severity: check.Error, Reference: "RFC 8166 section 3.4.3",
			Summary: "the requester initiated an RDMA Read or Write",
			Explanation: `In RPC-over-RDMA version 1 only the requester exposes memory and only the
responder initiates RDMA Read and Write. An RDMA operation started by the
client on an RPC-over-RDMA connection has no chunk that could have advertised
its target.`,
			Evidence: "the connection's RDMA operations",
			Applies:  needsRPCOps,
		}}),

		// RPC-over-RDMA version 2 (draft-ietf-nfsv4-rpcrdma-version-two-07).
		{
			ID: "V2-CONTINUATION", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_CALL_MIDDLE, RDMA2_REPLY_MIDDLE, RDMA2_CONNPROP_*; RDMA2_ERR_INVAL_CONT", Added: true,
			ULP: Name, Version: 2,
			Summary: "a continued message goes on with its own *_MIDDLE and ends with its *_INLINE; no CONNPROP after CONNPROP_FINAL",
			Explanation: `Version 2 splits a message too large for one Send over several (Message
Continuation): RDMA2_CALL_MIDDLE pieces end with RDMA2_CALL_INLINE, REPLY_MIDDLE
with REPLY_INLINE, CONNPROP_MIDDLE with CONNPROP_FINAL. A peer that follows a
*_MIDDLE with anything else — another type, another XID — makes the receiver
answer RDMA2_ERR_INVAL_CONT and drop the message; so does a CONNPROP-type
message after the sender's CONNPROP_FINAL. The check follows each sender's
version 2 messages in order. (Added: version 2.)`,
			Evidence: "version 2 messages",
			Applies:  needsRPC, ULPMessage: checkV2Continuation,
		},
		{
			ID: "V2-GRANT-XID", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_GRANT", Added: true,
			ULP: Name, Version: 2,
			Summary: "RDMA2_GRANT has rdma_xid zero",
			Explanation: `RDMA2_GRANT updates credits without a payload; its rdma_xid is unused, and
"Senders MUST set the rdma_xid field to zero". A non-zero XID points a receiver
that does look at it to an unrelated transaction. (Added: version 2.)`,
			Evidence: "version 2 RDMA2_GRANT messages",
			Applies:  needsRPC, ULPMessage: checkV2GrantXID,
		},
		{
			ID: "V2-CALL-CHUNK", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_CALL_EXTERNAL, Special Format", Added: true,
			ULP: Name, Version: 2,
			Summary: "RDMA2_CALL_EXTERNAL has a Call chunk, all of whose segments have position zero",
			Explanation: `RDMA2_CALL_EXTERNAL sends only the transport header: the Responder reads the
whole Call from the Call chunk (rdma_call). Without one the Call is nowhere.
"Every Read segment in this chunk MUST contain zero (0) in its Position field"
— the Call chunk is the Payload stream itself. (Added: version 2.)`,
			Evidence: "version 2 RDMA2_CALL_EXTERNAL messages",
			Applies:  needsRPC, ULPMessage: checkV2CallChunk,
		},
		{
			ID: "V2-READ-POSITION-ZERO", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_CALL_EXTERNAL, RDMA2_CALL_INLINE", Added: true,
			ULP: Name, Version: 2,
			Summary: "a version 2 Read list has no position-zero Read chunk",
			Explanation: `Version 1 sends a Long Call as a position-zero Read chunk. Version 2 has the
Call chunk for that, and its rdma_reads lists "only data item chunks. A
Requester MUST NOT insert Position-zero Read chunks in this list". (Added:
version 2.)`,
			Evidence: "version 2 Calls with a Read list",
			Applies:  needsRPC, ULPMessage: checkV2ReadZero,
		},
		{
			ID: "V2-CREDIT-OVERRUN", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 Flow Control, Initial Connection State", Added: true,
			ULP: Name, Version: 2,
			Summary: "a version 2 peer posts a Send while its sent message count exceeds the credits it received",
			Explanation: `In version 2 both peers grant credits: every message's rdma_credit is the
sender's sent message count plus the credits it advertises, and the peer that
receives it "MUST NOT post" a message while its own sent message count is
greater than that value (1 before any message came). The check counts each
side's Sends from the connection's set-up (so it needs the set-up in the
capture) and compares with the largest limit received so far; it reports once
per overrun. (Added: version 2.)`,
			Evidence: "version 2 messages of a connection whose set-up is in the capture",
			Applies:  needsRPC, ULPMessage: checkV2Credits,
		},
		{
			ID: "V2-VERS-MISMATCH", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_ERR_VERS_MISMATCH, RDMA2_ERR_VERS", Added: true,
			ULP: Name, Version: 2,
			Summary: "no version 1 message once both peers exchanged version 2",
			Explanation: `A Responder that receives "a message with a transport protocol version that
does not match the protocol version that was used in previous successful
exchanges on the same connection" answers RDMA2_ERR_VERS_MISMATCH and drops
it. The check takes version 2 as in effect once both peers sent a version 2
message other than RDMA2_ERROR, and finds every version 1 message after that.
A fallback after RDMA2_ERR_VERS happens before: the refusing peer sent only
the error. (Added: version 2.)`,
			Evidence: "the connection's messages once version 2 is in effect",
			Applies:  needsRPC, ULPMessage: checkV2VersMismatch,
		},
		{
			ID: "V2-PROPVAL", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 Transport Properties Model; RDMA2_ERR_BAD_PROPVAL", Added: true,
			ULP: Name, Version: 2,
			Summary: "every known transport property's rdma_data holds its XDR type",
			Explanation: `A Transport Property's rdma_data is opaque on the wire but holds the XDR type
of its rdma_which: a uint32 (4 octets) for SBSIZ, RBSIZ, RSSIZ, RCSIZ and BRS,
an opaque<> for HOSTAUTH; empty means the default. When the receiver recognizes
the property and the data does not hold that type, it "MUST report the error
RDMA2_ERR_BAD_PROPVAL" and discards the message "without applying any of its
property settings" — rdmashark then keeps the sender's earlier values (and
inline thresholds). Unknown properties are skipped without error. (Added:
version 2.)`,
			Evidence: "version 2 RDMA2_CONNPROP_MIDDLE/FINAL messages",
			Applies:  needsRPC, ULPMessage: checkV2PropVal,
		},
		{
			ID: "V2-REMAINING", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_CALL_MIDDLE, RDMA2_REPLY_MIDDLE", Added: true,
			ULP: Name, Version: 2,
			Summary: "rdma_remaining of a continued message agrees with the octets of it that follow",
			Explanation: `A *_MIDDLE piece of a continued message says in rdma_remaining how many octets
of the RPC message remain to be sent after it. The next piece must carry no
more than that; if it is a *_MIDDLE too, its rdma_remaining is what is left
after it; the *_INLINE that ends the message carries exactly what remained.
The octets a piece carries are those after its transport header (from
rdma_rpc_first_word to the end of the Send). A receiver that sizes its
reassembly buffer by rdma_remaining overruns or waits for octets that never
come. (Added: version 2.)`,
			Evidence: "version 2 continued messages (a *_MIDDLE and the pieces after it)",
			Applies:  needsRPC, ULPMessage: checkV2Remaining,
		},
		{
			ID: "V2-REPLY-CHUNK", Severity: check.Error, Reference: "draft-ietf-nfsv4-rpcrdma-version-two-07 RDMA2_REPLY_EXTERNAL; Choosing a Reply Mechanism", Added: true,
			ULP: Name, Version: 2,
			Summary: "an external Reply uses the Reply chunk its Call provisioned; a Reply over the threshold uses it when it fits",
			Explanation: `RDMA2_REPLY_EXTERNAL conveys the Reply in the Reply chunk the Requester
provisioned, and its rdma_reply "MUST contain exactly one Reply chunk": a Call
that provisioned none leaves the Responder nothing to write the Reply into.
Conversely, "If a Requester provided a Reply chunk and the reduced Payload
stream is larger than the reply inline threshold, the Responder MUST use the
Requester-provided Reply chunk": a Reply over the threshold sent inline or by
Message Continuation while a Reply chunk large enough for it was provisioned is
a violation (continuation is the fallback when the chunk is too small).
(Added: version 2.)`,
			Evidence: "version 2 Replies whose Call is in the capture",
			Applies:  needsRPC, ULPMessage: checkV2ReplyChunk,
		},
	}
	for i, r := range rules {
		r.Before = "ICRC-BAD"
		if i < numPDRules {
			r.Before = "CM-IP-HEADER"
		}
		r.OnUnclaimed = true
		if r.Version != 0 {
			r.Hide = otherVersion(r.Version)
		}
	}
	return rules
}

// numPDRules are the set-up rules at the head of Rules.
const numPDRules = 4

// msgOf is the view of the message being checked, which hookMessage made
// before the runner calls the rules' ULPMessage: each rule reads it
// directly (no wrapper per rule and message).
//
// connOf's fast path written out: through connOf it is past the inlining
// budget, and it runs about thirty times per message.
func msgOf(c *check.Conn) *Msg {
	if s, ok := c.ULPState.(*connState); ok {
		return s.run.msg
	}
	return newConnState(c).run.msg
}

// otherVersion returns a check.Rule.Hide for a rule that judges one
// RPC-over-RDMA version: it is not listed for a connection whose messages
// all used the other one.
func otherVersion(v uint32) func(c *check.Conn) bool {
	return func(c *check.Conn) bool {
		var n [3]uint64
		if rs := Stats(c.Connection); rs != nil {
			n = rs.Versions
		}
		switch v {
		case 1:
			return n[1] == 0 && n[2] > 0
		case 2:
			return n[2] == 0
		}
		return false
	}
}
