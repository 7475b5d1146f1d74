package check

import "github.com/rdmashark/rdmashark/dissect"

// ruleTable is the list of rules: `rdmashark rules`, the reports and the
// docs read it. Order: connection set-up, inline thresholds, remote
// invalidation, transport header, credits, chunks, RDMA operations,
// transport. Rules marked Added are not in shared/specs/conformance-rules.md;
// the spec they cite supports them.
func ruleTable() []*Rule {
	return []*Rule{
		// Connection set-up (IBA CM; the consumer's private data are its ULP's
		// rules: RPC-over-RDMA's PD-* come before these).
		{
			ID: "CM-IP-HEADER", Severity: Warning, Reference: "IBA Vol 1 Annex A11 (RDMA IP CM Service)", Added: true,
			Summary: "a CM REQ for an IP service ID starts its private data with a valid IP CM header",
			Explanation: `A CM REQ whose service ID is in the RDMA IP CM range (as RDMA-CM builds them:
0x0000000001 port-space port) carries the 36-octet IP CM Request header in front
of the consumer's private data: version 0, IP version 4 or 6, source port and
both addresses. A REQ without a valid header is rejected by RDMA-CM on the
passive side, and the RFC 8797 message after it cannot be found where a
receiver looks for it. (Added: not in the project's list; IBA Annex A11 defines
the header.)`,
			Evidence: "the CM REQ of the connection",
			Applies:  cmaApplies, End: checkCMAHeader,
		},
		{
			ID: "CM-REJ", Severity: Warning, Reference: "IBA Vol 1 12.6.7",
			Summary: "a CM REJ ended a connection attempt: its reason code and private data",
			Explanation: `A CM REJ refuses a connection request (or a reply). The finding shows the
reason code (IBA Vol 1 12.6.7.2, e.g. 28 "consumer reject" when the application
refused, 8 "invalid service ID" when nothing listens), any additional rejection
information, and the private data, decoded when it holds an RFC 8797 message.
An RPC-over-RDMA client that keeps being rejected never gets to send a Call.
A refusal followed by an established connection between the same two
addresses is information, not a warning: clients probe ports (SMB Direct
clients try 5445, then 445).`,
			Evidence: "the CM messages of the connection",
			Applies:  func(c *Conn) string { return roceOnly(c) + needsSetupIfRoCE(c) },
			Packet:   checkCMREJ, End: endRefusal, Transport: dissect.TransportRoCE,
		},

		// Transport (IB/RoCE, iWARP).
		{
			ID: "ICRC-BAD", Severity: Error, Reference: "IBA Vol 1 7.8.1; Annex A17.3.3 (RoCEv2)",
			Summary: "the invariant CRC of an InfiniBand/RoCE packet does not match",
			Explanation: `Every IB transport packet ends with a 32-bit invariant CRC over the fields that
do not change in flight (RoCEv2: over the IP and UDP headers with variant fields
masked, the BTH and the payload). A receiver drops a packet whose ICRC does not
match; the finding names the carried and the computed value. A packet cut by the
snap length cannot be verified and is not evaluated. Whose damage it is, the
responder tells: a request it NAKs or that is sent again was damaged on the wire
(the finding, at its severity); one it acknowledges with no NAK and no resend
reached it intact, and only the capture's copy is damaged (information: capture
damage is not a protocol error).`,
			Evidence: "whole IB/RoCE packets",
			Applies:  roceOnly, Packet: checkICRC, SeesDiscarded: true, End: endICRC, Transport: dissect.TransportRoCE,
		},
		{
			ID: "TCP-CHECKSUM-BAD", Severity: Error, Reference: "RFC 9293 section 3.1; RFC 1122 section 4.2.2.7", Added: true,
			Summary: "the IPv4 header or TCP checksum of an iWARP connection's segment does not match",
			Explanation: `A receiver drops a TCP segment whose checksum (or IPv4 header checksum) fails,
and its sender's retransmission fills the hole. Checksums are judged only in a
direction whose checksums were right before (a capture on a sender that leaves
them to its NIC sees them all wrong). A segment whose octets the sender sends again
was damaged on the wire (the finding, at its severity); one the receiver
acknowledges with no resend reached it intact, and only the capture's copy is
damaged (information: capture damage is not a protocol error). (Added: the list
names the ICRC; this is its iWARP counterpart.)`,
			Evidence: "iWARP TCP segments",
			Applies:  iwarpOnly, Packet: checkTCPChecksum, SeesDiscarded: true, End: endTCPChecksum, Transport: dissect.TransportIWARP,
		},
		{
			ID: "VCRC-BAD", Severity: Error, Reference: "IBA Vol 1 7.8.2", Added: true,
			Summary: "the variant CRC of a native InfiniBand packet does not match",
			Explanation: `Native InfiniBand packets (LRH first, as ibdump captures them) end with a 16-bit
variant CRC over the whole packet; a link drops a packet whose VCRC does not
match. (Added: the list names the ICRC only; the VCRC is checked the same way
where the capture has it.)`,
			Evidence: "whole native InfiniBand packets",
			Applies:  vcrcApplies, Packet: checkVCRC, SeesDiscarded: true, Transport: dissect.TransportRoCE,
		},
		{
			ID: "MPA-CRC-BAD", Severity: Error, Reference: "RFC 5044 section 6",
			Summary: "the CRC32c of an MPA FPDU does not match (when CRC was negotiated)",
			Explanation: `When both MPA peers negotiated CRC (the C bit of the MPA Request and Reply),
every FPDU ends with a CRC32c over the FPDU; a receiver closes the connection on
a mismatch.`,
			Evidence: "iWARP FPDUs of a connection that negotiated CRC",
			Applies:  mpaCRCApplies, Packet: checkMPACRC, Transport: dissect.TransportIWARP,
		},
		{
			ID: "MPA-MARKERS", Severity: Info, Reference: "RFC 5044 section 5",
			Summary: "MPA markers negotiated and in use",
			Explanation: `MPA markers (every 512 octets of the TCP stream) let a receiver find FPDU
boundaries after loss; they are rarely negotiated today, and a capture reader
must skip them. Reported as information when a connection uses them.`,
			Evidence: "the MPA Request/Reply of an iWARP connection",
			Applies:  mpaMarkersApplies, End: endMPAMarkers,
		},
		{
			ID: "MPA-MARKER-BAD", Severity: Error, Reference: "RFC 5044 sections 4, 5", Added: true,
			Summary: "an MPA marker is not where RFC 5044 puts it, or not in network byte order: the first one",
			Explanation: `With markers negotiated the sender puts a four-octet marker every 512 octets of
the TCP stream, counted from the first octet after its MPA Request or Reply
(RFC 5044 section 5): 16 reserved bits zero and FPDUPTR, in network byte order,
the number of octets back to the FPDU that holds the marker (section 4). A
receiver that finds anything else there loses FPDU framing and terminates the
connection (MPA error 0x03, Marker and ULPDU Length field mismatch). Some
implementations put their markers elsewhere (counted from another origin) or
write FPDUPTR little-endian. The finding names the first such marker of each
direction, what it holds, and where a marker pointing back to the FPDU is
instead (or that FPDUPTR reads right byte-swapped: rdmashark then frames the
FPDUs anyway). Only markers met while framing was in sync count: after a gap in
the capture the FPDU boundary is a guess until a marker confirms it, and the
capture, not the sender, may be what is wrong.`,
			Evidence: "the markers of an iWARP direction that negotiated them",
			Applies:  mpaMarkerBadApplies, End: endMPAMarkerBad,
		},
		{
			ID: "RDMA-READ-UNPAIRED", Severity: Warning, Reference: "RFC 5040 sections 4.4, 5.5", Added: true,
			Summary: "an iWARP RDMA Read Request no Read Response answered, or a Read Response no Read Request asked for",
			Explanation: `An RDMA Read Request names the Data Sink STag and TO its responses are placed
at (RFC 5040 section 4.4), and the responder answers the requests in the order
they came (section 5.5). A request whose responses never come while the responder
goes on sending, or is passed over by the responses to a later one, was not
answered; a Read Response tagged with a sink nothing requested answers nothing
the capture shows. Both come from one fault too: a requester that writes the
Read Request header in the wrong byte order (its responses then carry the STag
and TO as the responder read them). Capture loss is not a protocol error: on a
connection whose capture lost part of either stream (a missing response or
request, and the pairing after it a guess), or started after the connection
did, these items are not evaluated.`,
			Evidence: "the RDMA Read Requests and Read Responses of an iWARP connection",
			Applies:  iwarpOnly, End: endReadUnpaired,
		},
		{
			ID: "MPA-REJ", Severity: Warning, Reference: "RFC 5044 section 7.1; RFC 6581 section 5", Added: true,
			Summary: "an MPA Reply with the Rejected flag ended an iWARP connection attempt: its private data",
			Explanation: `The iWARP counterpart of CM-REJ. A responder that refuses an MPA Request
answers with an MPA Reply whose R (Rejected) flag is set and then closes the TCP
connection (RFC 5044 section 7.1); the Reply's private data may say why. The
finding shows the Reply's revision, the RFC 6581 IRD/ORD field when present and
the private data: an RFC 8797 message when it holds one, text when it is
printable, hex otherwise. (Added, a rule of its own rather than CM-REJ on
iWARP: an MPA reject has no reason code and comes from another spec, and a
separate ID lets a baseline or --rules choice treat the transports apart.) A
reject followed by an established connection between the same two addresses is
information, not a warning.`,
			Evidence: "the MPA Reply of an iWARP connection",
			Applies:  iwarpOnly, Packet: checkMPAREJ, End: endRefusal, Transport: dissect.TransportIWARP,
		},
		{
			ID: "IWARP-REFUSED", Severity: Warning, Reference: "RFC 9293 section 3.10.7.1", Added: true,
			Summary: "a TCP RST answered the SYN of an iWARP connection attempt",
			Explanation: `A server with nothing listening on a TCP port answers a SYN with a RST (RFC
9293 section 3.10.7.1): the iWARP connection never reaches its MPA Request. The
attempt is shown when it was meant for iWARP: its port is NFS/RDMA's 20049, SMB
Direct's 5445 or a registered upper-layer protocol's, or the two addresses carry
an iWARP connection already. Like CM-REJ, a refusal followed by an established
connection between the same two addresses is information, not a warning:
clients probe ports (SMB Direct clients try 5445, then 445).`,
			Evidence: "the SYN and RST of a refused iWARP connection attempt",
			Applies:  iwarpOnly, End: endIWARPRefused,
		},
		{
			ID: "MPA-NO-REPLY", Severity: Warning, Reference: "RFC 5044 section 7.1", Added: true,
			Summary: "an MPA Request got no MPA Reply in the capture",
			Explanation: `After the MPA Request the initiator sends nothing until the responder's MPA
Reply arrives (RFC 5044 section 7.1); a responder that does not want the
connection rejects it with an MPA Reply or closes the TCP connection. A Request
the capture shows unanswered means the responder's application never accepted
the connection (or the capture ended or lost the Reply): the initiator's
connect times out.`,
			Evidence: "the MPA Request of an iWARP connection",
			Applies:  iwarpOnly, End: endMPANoReply,
		},
		{
			ID: "PSN-GAP", Severity: Warning, Reference: "IBA Vol 1 9.7.1, 9.7.5.1",
			Summary: "a gap or a retransmission in the packet sequence of an RC/UC queue pair",
			Explanation: `Requests on a queue pair carry consecutive PSNs (an RDMA Read Request takes one
per response packet). A PSN ahead of the expected one means packets are missing
from the capture: when the responder then NAKs with a PSN sequence error, they
were lost on the network; when it acknowledges past them, only the capture lost
them. A PSN behind the expected one is a retransmission by the requester.
Either way the capture may lack evidence other checks need. What the transport
recovered is information: a gap the requester sent again, a retransmission the
responder then acknowledged (or answered, for a Read); what the capture shows
no recovery of is a warning.`,
			Evidence: "the connection's RC/UC packets",
			Applies:  roceOnly, Packet: checkPSN, End: endPSN, SeesDiscarded: true, Transport: dissect.TransportRoCE,
		},
		{
			ID: "NAK", Severity: Warning, Reference: "IBA Vol 1 9.7.5.2; RFC 5040 sections 4.8, 7 (iWARP Terminate)",
			Summary: "AETH NAK or RNR NAK (iWARP: Terminate): the syndrome or error code",
			Explanation: `A responder answers a request it cannot carry out with a NAK: PSN sequence
error (it missed packets), invalid request, remote access error (an R_Key or
range it does not accept — for RPC-over-RDMA, a chunk that was not registered),
remote operational error; or with an RNR NAK when no Receive was posted (the
requester ran past its credits). On iWARP the same failures end the stream with a
Terminate message, which names the layer (RDMAP, DDP, MPA), the error type and
the error code.`,
			Evidence: "the connection's acknowledgements (iWARP: its FPDUs)",
			Packet:   checkNAK, End: endNAK,
		},
		{
			ID: "RETRANS-DIFFERS", Severity: Error, Reference: "IBA Vol 1 9.7.5.1.1, 9.9.2.1", Added: true,
			Summary: "a retransmitted request packet differs from the original with the same PSN",
			Explanation: `After a NAK PSN sequence error, an RNR NAK or a timeout the requester resends
its requests from the PSN it resumes at (go-back-N): the packets carry the same
PSNs, so they must carry the same request — opcode, RDMA address, key and
length, immediate data, payload. A resend that differs from the original the
capture holds (kept for the last 256 PSNs of each direction) is not a
retransmission of it: the responder, which may have executed the original, and
the requester no longer agree on what was asked. (A Read Request re-issued for
the part still missing carries a new address and length and is not compared.)`,
			Evidence: "retransmitted request packets whose original is in the capture",
			Applies:  retransDiffersApplies, Packet: checkRetransDiffers,
		},
		{
			ID: "READ-DEPTH", Severity: Warning, Reference: "IBA Vol 1 12.7.29, 12.7.30, 9.5; RFC 6581 section 5", Added: true,
			Summary: "more RDMA Read/Atomic requests outstanding than the connection set-up agreed",
			Explanation: `The CM REQ and REP carry each side's Responder Resources (RDMA Read and Atomic
requests it accepts outstanding) and Initiator Depth (the ones it will have
outstanding); iWARP's MPA Request and Reply carry the same as IRD and ORD
(RFC 6581). A requester with more outstanding than its initiator depth and its
peer's responder resources allow makes the responder reject or stall them.
A request is outstanding until its last response (or a later response or ACK)
comes back; retransmitted requests do not count again.`,
			Evidence: "RDMA Read and Atomic requests after a CM REQ/REP (or MPA exchange with IRD/ORD)",
			Applies:  readDepthApplies, Packet: checkReadDepth,
		},
	}
}

// needsSetupIfRoCE: CM-REJ needs the CM exchange of a RoCE connection.
func needsSetupIfRoCE(c *Conn) string {
	if c.ID == 0 || c.Transport != dissect.TransportRoCE {
		return ""
	}
	if c.State == dissect.StateNoSetup {
		return ReasonNoSetup.String()
	}
	return ""
}
