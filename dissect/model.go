package dissect

import (
	"strings"
	"time"

	"github.com/rdmashark/rdmashark/pvtdata"
)

// Transport is the RDMA transport a connection runs on.
type Transport uint8

const (
	TransportRoCE  Transport = iota + 1 // InfiniBand transport: native IB, RoCEv1, RoCEv2
	TransportIWARP                      // MPA/DDP/RDMAP over TCP
)

func (t Transport) String() string {
	switch t {
	case TransportRoCE:
		return "roce"
	case TransportIWARP:
		return "iwarp"
	}
	return "unknown"
}

// MarshalText makes a Transport appear by name in JSON.
func (t Transport) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Direction tells which side sent a packet of a connection.
type Direction uint8

const (
	DirUnknown        Direction = iota
	DirClientToServer           // from the side that sent the CM REQ / MPA Request
	DirServerToClient
)

func (d Direction) String() string {
	switch d {
	case DirClientToServer:
		return "client-to-server"
	case DirServerToClient:
		return "server-to-client"
	}
	return "unknown"
}

// Index is 0 for client-to-server and 1 for server-to-client, for
// per-direction arrays.
func (d Direction) Index() int {
	if d == DirServerToClient {
		return 1
	}
	return 0
}

// Opposite is the other direction.
func (d Direction) Opposite() Direction { return opposite(d) }

func opposite(d Direction) Direction {
	if d == DirServerToClient {
		return DirClientToServer
	}
	return DirServerToClient
}

// ConnState is where a connection's establishment got to in the capture.
type ConnState uint8

const (
	// StateIncomplete: the exchange started but neither finished nor failed
	// in the capture (a REQ without REP, a REP without RTU).
	StateIncomplete ConnState = iota
	// StateEstablished: REQ/REP/RTU seen (RoCE), or MPA Request/Reply (iWARP).
	StateEstablished
	// StateRejected: CM REJ or MPA Reply with the Rejected bit.
	StateRejected
	// StateClosed: DREQ/DREP (RoCE) or TCP FIN/RST (iWARP) after
	// establishment.
	StateClosed
	// StateNoSetup: traffic without its connection set-up in the capture;
	// the connection is keyed by addresses and QPNs only.
	StateNoSetup
)

func (s ConnState) String() string {
	switch s {
	case StateIncomplete:
		return "incomplete"
	case StateEstablished:
		return "established"
	case StateRejected:
		return "rejected"
	case StateClosed:
		return "closed"
	case StateNoSetup:
		return "no-setup"
	}
	return "unknown"
}

// MarshalText makes a ConnState appear by name in JSON.
func (s ConnState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// HostPort writes an address with a port as people and URLs write it: an
// IPv6 address in brackets, "[2001:db8::2]:58286", so the port cannot be
// read as the address's last group (RFC 3986 section 3.2.2, RFC 5952
// section 6); "192.0.2.2:58286" otherwise.
func HostPort(address string, port uint16) string {
	if strings.IndexByte(address, ':') >= 0 {
		return "[" + address + "]:" + itoa(uint64(port))
	}
	return address + ":" + itoa(uint64(port))
}

// Endpoint is one side of a connection.
type Endpoint struct {
	// Address is the side's network address as text: an IP address for
	// RoCEv2 and iWARP, a GID for RoCEv1 and routed IB, "LID n" for local IB.
	Address string
	// QPN is the side's queue pair number (RoCE); 0 for iWARP.
	QPN uint32
	// Port is the TCP port (iWARP); 0 for RoCE.
	Port uint16
	// CommID is the side's CM communication ID (RoCE with CM), 0 otherwise.
	CommID uint32
	// StartPSN is the first PSN the side sends. A CM message's Starting
	// PSN is the PSN its sender's receive queue expects first (IBA 12.6.5,
	// 12.6.8; Linux ib_cm sets the active side's rq_psn from its REQ and
	// its sq_psn from the REP), so the client sends from the REP's Starting
	// PSN and the server from the REQ's — as every capture here shows
	// (rxe-rping.pcap: REQ 16174010, REP 4152345; the client's first SEND
	// carries PSN 4152345, the server's first request 16174010).
	StartPSN uint32
	// HasStartPSN tells whether StartPSN is known.
	HasStartPSN bool
}

// PrivateData is what one side's connection request or reply carried.
type PrivateData struct {
	// Seen is set once the CM REQ/REP (MPA Request/Reply) of this side was
	// in the capture; without it nothing is known of the side's private data.
	Seen bool
	// Packet is the packet number that carried it.
	Packet int
	// Bytes is a copy of the private data (at most a few hundred bytes).
	Bytes []byte
	// Framing is the generic framing in front of the consumer's data: the
	// RDMA-CM IP header of a CM REQ (IBA Annex A11) or the MPA v2 IRD/ORD
	// field (RFC 6581), and where the consumer's data starts. What that
	// data means (RFC 8797's message, NVMe/RDMA's, iSER's) is the ULP's.
	Framing pvtdata.Framing
}

// Consumer returns the consumer's private data: what follows the generic
// framing in front of it — the RDMA-CM IP header of a CM REQ (IBA Annex
// A11) or the MPA v2 IRD/ORD field (RFC 6581) — where a ULP's own set-up
// message starts (RFC 8797, the NVMe/RDMA private data, iSER's). Nil when
// the side's set-up is not in the capture.
func (pd *PrivateData) Consumer() []byte {
	if !pd.Seen {
		return nil
	}
	return pd.Framing.Consumer(pd.Bytes)
}

// RejectPrivateData returns the private data of the refusal that ended
// the connection's set-up and the side that sent it: the CM REJ's
// (Reject), or an iWARP MPA Reply's with the Rejected flag (the server's
// PrivateData[1], RFC 5044 section 7.1); nil when it was not refused so
// or the capture lacks the refusal.
func (c *Connection) RejectPrivateData() (*PrivateData, Direction) {
	switch {
	case c.Reject.Seen:
		return &c.Reject, c.RejectedBy
	case c.State == StateRejected && c.Transport == TransportIWARP && c.PrivateData[1].Seen:
		return &c.PrivateData[1], DirServerToClient
	}
	return nil, DirUnknown
}

// Counters counts one direction of a connection.
type Counters struct {
	Packets uint64
	Bytes   uint64 // frame lengths on the wire
}

// Connection is one RDMA connection: an RC queue pair pair (RoCE) or a TCP
// connection carrying MPA (iWARP).
type Connection struct {
	ID        int
	Transport Transport
	Client    Endpoint
	Server    Endpoint
	// ServiceID is the CM REQ's ServiceID (RoCE with CM).
	ServiceID uint64
	// ServicePort is the port the server listens on: the port of the
	// RDMA-CM service ID (RoCE) or the server's TCP port (iWARP).
	ServicePort uint16
	State       ConnState
	// RejectReason names the CM REJ reason (or MPA reject, or the TCP RST
	// that refused an iWARP connection's SYN) when rejected.
	RejectReason string
	// RetriedBy is the ID of a later connection between the same two
	// addresses that was established after this one was rejected (a
	// client probing ports, as SMB Direct clients probe 5445 then 445),
	// 0 when the capture shows none.
	RetriedBy int

	FirstPacket int
	LastPacket  int
	// Idle is set when the engine released the connection because no
	// packet of it came for Options.IdleTimeout (release.go); State still
	// tells how far its set-up got.
	Idle bool
	// RolesToldBy is, on a connection whose set-up the capture lacks
	// (StateNoSetup, IB/RoCE), the packet whose ULP reading settled which
	// side is the client (dissect.Orienter, orient.go); 0 when none did.
	// RolesGuessed is set when no packet told before the roles had to be
	// settled: the client is then the sender of the connection's first
	// packet, a guess.
	RolesToldBy  int
	RolesGuessed bool
	// MissingPSNs counts the PSNs skipped by forward jumps on its request
	// streams (IB/RoCE: packets the capture lacks; reassembly.go).
	MissingPSNs uint64
	// REPLost: the capture holds the CM REQ but lost the REP; the
	// server's QPN was taken from the client's first request.
	REPLost bool
	// Lost is, per direction (Direction.Index()), what the capture lacks
	// of the request stream that side sent (evidence.go).
	Lost [2]CaptureLoss
	// Health is the connection's transport health (IB/RoCE: health.go,
	// rcmodel.go); nil until a packet of it went through the model.
	Health *Health
	tcpH   *tcpHealth // iWARP: TCP-level health state (health_tcp.go)

	// PrivateData is indexed by Direction.Index(): [0] the client's (REQ),
	// [1] the server's (REP).
	PrivateData [2]PrivateData
	// Reject is the private data of the CM REJ that refused the
	// connection (IBA 12.6.7: a consumer's refusal — an SRP_LOGIN_REJ,
	// NVMe/RDMA's Reject Private Data — travels there), sent by
	// RejectedBy; RejectPrivateData also finds an iWARP MPA reject's.
	Reject     PrivateData
	RejectedBy Direction
	// Negotiated is set once both sides' set-up messages (CM REQ and REP,
	// MPA Request and Reply) were seen: what they negotiated is the ULP's
	// to say (Connection.Negotiation).
	Negotiated bool

	// Dir is indexed by Direction.Index().
	Dir [2]Counters

	// IWARP holds what the MPA exchange negotiated (iWARP only).
	IWARP *IWARPInfo
	// ULP names the upper-layer protocol the connection carries (the
	// ULP's Name, "rpcordma" for RPC-over-RDMA), "" when no registered ULP
	// claimed it (ulp.go).
	ULP string
	// ULPData is what the session of the connection's ULP keeps of it for
	// the reports and rules (its negotiation, counters), set by the
	// session and kept after the connection is released: a plug-in's own
	// type that encoding/json can write; analyze writes it under the
	// ULP's name ("nvme_rdma"), RPC-over-RDMA's (*rpcordma.RPCStats) as
	// its own "rpc" object. DropDetail lets go of a DetailDropper.
	ULPData any
	ulp     ulpConn

	// rel is what the engine must drop when it is done with the
	// connection (release.go).
	rel connRelease
}

// IPoIBCMServiceIDPrefix is the top octet of the service IDs of IPoIB
// connected mode (RFC 4755 section 4: IETF's 0x1000000000000000 | QPN).
const IPoIBCMServiceIDPrefix = 0x10

// IPoIBCM reports whether the connection is IPoIB connected mode.
func (c *Connection) IPoIBCM() bool {
	return c.Transport == TransportRoCE && c.ServiceID>>56 == IPoIBCMServiceIDPrefix
}

// Message is one RDMA Send (Send, Send with Immediate, Send with
// Invalidate, with or without Solicited Event) reassembled from its packets
// (IB/RoCE SEND_FIRST/MIDDLE/LAST/ONLY in PSN order; iWARP untagged DDP
// segments by MSN and MO). The engine hands each message up once, whole.
type Message struct {
	Conn *Connection
	Dir  Direction
	// Packets are the numbers of the packets the message came from, in
	// message order; the last one completes it.
	Packets []int
	// Data is the message's payload. It is valid only during the call that
	// hands the message out; copy what must be kept.
	Data []byte
	// Length is the message length on the wire; larger than len(Data)
	// when the capture cut bytes (Truncated).
	Length    int
	Truncated bool
	// Invalidate is set for Send with Invalidate; InvalidatedSTag is the
	// R_Key (IETH) or STag (RDMAP Inval STag) it invalidated.
	Invalidate      bool
	InvalidatedSTag uint32
	// HasImmediate and Immediate carry IB immediate data.
	HasImmediate bool
	Immediate    uint32
	Time         time.Time
	// ULP is the record the session of the connection's ULP made of the
	// message (*rpcordma.RPCRecord, *nvmeof.Capsule, ...): a plug-in's own
	// type, which its rules and fields read. Valid only during the
	// Observer call.
	ULP any
	// Duplicate marks a retransmitted Send (IB/RoCE: a SEND_ONLY whose PSN
	// was consumed already) handed to the connection's session for display
	// only; the Observer never sees one.
	Duplicate bool
}

// RDMAOpKind is what an RDMA operation does.
type RDMAOpKind uint8

const (
	RDMARead  RDMAOpKind = iota + 1 // RDMA Read Request and its Responses
	RDMAWrite                       // RDMA Write (with or without immediate)
)

func (k RDMAOpKind) String() string {
	switch k {
	case RDMARead:
		return "RDMA Read"
	case RDMAWrite:
		return "RDMA Write"
	}
	return "unknown"
}

// RDMAOp is one RDMA Read or Write on a connection: the remote memory it
// names (the R_Key/STag, offset and length of the RETH or DDP tagged header)
// and the packets that carried it.
type RDMAOp struct {
	Kind RDMAOpKind
	Conn *Connection
	// Dir is the direction of the request: for a Write the data's
	// direction, for a Read the Read Request's (the data flows back).
	Dir    Direction
	STag   uint32
	Offset uint64
	Length uint32
	// Packets: for a Write its packets; for a Read the request, then the
	// responses.
	Packets []int
	// Data is the bytes moved, when the capture holds them (valid only
	// during the call that hands the operation out).
	Data []byte
	// Complete: every byte of Length was seen, from whichever
	// transmission carried it.
	Complete bool
	// Retransmitted counts, for a Read, the re-issued or repeated Read
	// Requests and repeated Read Responses seen while it was outstanding;
	// none of them added data (Writes: 0, their resent packets are not
	// attributed).
	Retransmitted int
	Start         time.Time
	End           time.Time
	// Attach is the request the operation served, or why none
	// (attach.go), as the session of the connection's ULP found; Reason
	// is UnattachedNoULP on connections no ULP session has.
	Attach OpAttachment
}

// ConnObserver is an Observer that also wants to know when the engine is
// done with a connection (release.go). A closed connection (CM DREP or REJ;
// TCP FIN both ways, or RST) loses its reassembly and RPC state at once, and
// its open transactions end; its CM communication IDs and TCP 4-tuple stay
// known for the next few closes so that the messages trailing a close still
// count on it. After that no packet, message or operation reaches it again,
// and ConnectionDone is called: what remains of it is the Connection itself,
// the summary reports show. Connections still open at the end of the input
// get no call (their state ends with Finish).
type ConnObserver interface {
	Observer
	// ConnectionDone is called once per released connection.
	ConnectionDone(c *Connection)
}

// Observer receives what the engine reassembles. The protocol layers above
// the RDMA transport (RPC-over-RDMA, the checks) hang off it.
type Observer interface {
	// Message is called once per reassembled Send.
	Message(m *Message)
	// RDMAOp is called once per RDMA Read or Write, when it completes or
	// is given up.
	RDMAOp(op *RDMAOp)
}
