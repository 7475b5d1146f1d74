package dissect

import (
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/ipoib"
	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Encap is how the InfiniBand transport reached us.
type Encap uint8

const (
	EncapNone   Encap = iota
	EncapIB           // native InfiniBand: LRH [GRH] BTH
	EncapRoCEv1       // Ethernet, EtherType 0x8915: GRH BTH
	EncapRoCEv2       // UDP port 4791 (or --roce-port): BTH
)

func (e Encap) String() string {
	switch e {
	case EncapIB:
		return "IB"
	case EncapRoCEv1:
		return "RoCEv1"
	case EncapRoCEv2:
		return "RoCEv2"
	}
	return ""
}

// CRCStatus is the verdict on a carried CRC.
type CRCStatus uint8

const (
	CRCNotApplicable CRCStatus = iota // the packet has no such CRC
	CRCGood
	CRCBad
	CRCTruncated // the capture cut the packet before the CRC or inside the covered bytes
)

func (s CRCStatus) String() string {
	switch s {
	case CRCGood:
		return "good"
	case CRCBad:
		return "bad"
	case CRCTruncated:
		return "not verifiable (truncated)"
	}
	return ""
}

// MarshalText makes a CRCStatus appear by name in JSON.
func (s CRCStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// CRCCheck is a carried CRC, the one we computed, and the verdict.
type CRCCheck struct {
	Status   CRCStatus
	Carried  uint32
	Computed uint32
}

// CRCFailed tells whether the packet's invariant or variant CRC does not
// match. Its receiver discards it (IBA Vol 1 7.8.1, 7.8.2; RoCEv2 Annex
// A17.3.3), and so does the engine (CRCDiscarded) when the capture has
// shown the sender's CRCs right: then it reaches no transport: no
// connection, no PSN, no message. A network that corrupts a frame on its
// way turns it into a lost one — the responder NAKs or times out and the
// requester resends it (lossy/rxe-nfs3-corrupt.pcap, netem "corrupt 1%":
// packet 1117, an RDMA Write MIDDLE with a bad ICRC, NAKed in 1213, resent
// in 1249) — and since the flipped bit may lie in any header field (packet
// 3013's is in the IP source address), nothing in it is trusted but for
// display and ICRC-BAD.
func (p *Packet) CRCFailed() bool { return p.ICRC.Status == CRCBad || p.VCRC.Status == CRCBad }

// Packet is one captured frame, decoded. The engine reuses one Packet for
// every frame: nothing in it outlives the call that hands it out, and slices
// in it point into the capture's buffer.
type Packet struct {
	Number        int // 1-based, as Wireshark counts
	Timestamp     time.Time
	RelTime       time.Duration // since the first packet
	TimeDelta     time.Duration // since the previous packet (frame_state.go)
	TCPStream     int           // tcp.stream, as tshark numbers TCP conversations; -1 without TCP
	TCPInitialRTT time.Duration // tcp.analysis.initial_rtt: last SYN to first ACK without SYN; 0 until seen
	// TCPSeqBase and TCPAckBase are the base sequence numbers tshark's
	// relative tcp.seq and tcp.ack count from: this direction's and, when
	// TCPAckBaseSet, the other's (frame_state.go).
	TCPSeqBase, TCPAckBase uint32
	TCPAckBaseSet          bool
	// TCPWinShift is the window scale (RFC 7323 section 2.3) that applies
	// to this segment's window (frame_state.go); 0 on a SYN, without the
	// option or when the sender's SYN was not seen (tshark's
	// tcp.window_size then is the raw value too).
	TCPWinShift uint8
	// EchoRequestIn is, for an ICMP or ICMPv6 echo reply, the number of the
	// request it answers (same identifier and sequence number, the
	// addresses swapped), as tshark's "(request in N)"; 0 when the capture
	// holds none (frame_state.go).
	EchoRequestIn int
	CaptureLength int
	Length        int // on the wire
	LinkType      layers.LinkType
	Interface     int // the pcapng interface (within its section) the record came from; 0 for pcap
	Data          []byte
	Comments      [][]byte // the record's pcapng comments (frame.comment), valid like Data

	// Decoded lists the layers decoded, outermost first.
	Decoded []gopacket.LayerType
	// has holds a bit (layerMask) for each of the first nhas entries of
	// Decoded, which the decoder appended through decoded: Has answers
	// from it instead of walking the list, which it is asked ~20 times
	// per packet (6% of analyze's CPU profile as a loop).
	has  uint64
	nhas int

	ERF   erf.ERF
	IPoIB ipoib.IPoIB
	Eth   layers.Ethernet
	VLAN  [2]layers.Dot1Q
	NVLAN int
	SLL   layers.LinuxSLL
	SLL2  layers.LinuxSLL2
	IPv4  layers.IPv4
	IPv6  layers.IPv6
	UDP   layers.UDP
	TCP   layers.TCP

	Encap Encap
	LRH   roce.LRH
	GRH   roce.GRH
	BTH   roce.BTH
	ICRC  CRCCheck
	VCRC  CRCCheck

	MAD roce.MAD
	CM  CM

	// IWARP is the MPA Request/Reply and the FPDUs this packet's TCP
	// segment completed (iwarp_packet.go).
	IWARP IWARPPacket
	// CRCDiscarded: the packet's ICRC or VCRC does not match (CRCFailed)
	// and its sender's CRCs were right before in the capture (crctrust.go):
	// a corrupted packet, which its receiver discards (IBA Vol 1 7.8.1,
	// 7.8.2; RoCEv2 Annex A17.3.3). It reaches no transport: no connection
	// is opened, completed or advanced by it, it has no PSN in the
	// sequence and no message; ICRC-BAD and VCRC-BAD name it. Set by the
	// engine.
	CRCDiscarded bool
	// TCPDiscarded: a segment of an iWARP connection whose IPv4 header or
	// TCP checksum fails, in a direction whose checksums were real before
	// (iwHalf.sumsReal). Its receiver discards it (RFC 9293 3.1; RFC 1122
	// 4.2.2.7 and 3.2.1.2), so it carries nothing into the iWARP stream;
	// the TCP figures, like tshark's, still count it as sent.
	TCPDiscarded bool

	// ULP holds the records the sessions of the ULPs made of what this
	// packet completed (their own types, e.g. *nvmeof.Capsule; RPC-over-
	// RDMA keeps one set of its records per packet, rpcordma.Records),
	// valid until the next packet: what their fields read.
	ULP []any

	// Err is the decoding error that stopped decoding early, if any; the
	// layers decoded before it are valid.
	Err error

	// Conn and Dir place the packet in its connection, when it has one.
	Conn *Connection
	Dir  Direction

	// PFC is an IEEE 802.3 MAC Control frame (PAUSE, PFC), when decoded.
	PFC pfc.MACControl

	// Analysis is the RC requester model's verdict (rcmodel.go).
	Analysis Analysis

	// hash is packetHash of BTH when hashed: computed ahead by the
	// pipeline's reading goroutine (pipeline.go, requestHash).
	hash   uint64
	hashed bool
	// tcpSum is segmentChecksum of the TCP segment when tcpSummed:
	// computed ahead by the pipeline's reading goroutine (tcpChecksum).
	tcpSum    CRCStatus
	tcpSummed bool
}

// Has tells whether layer t was decoded.
func (p *Packet) Has(t gopacket.LayerType) bool {
	if uint(t) < uint(len(layerMask)) && len(p.Decoded) == p.nhas {
		if m := layerMask[t]; m != 0 {
			return p.has&m != 0
		}
	}
	for _, d := range p.Decoded {
		if d == t {
			return true
		}
	}
	return false
}

// CM holds the Communication Manager attribute a CM MAD carried. Attr is the
// layer type of the one that is valid.
type CM struct {
	Attr          gopacket.LayerType
	ClassPortInfo roce.ClassPortInfo
	REQ           roce.CMREQ
	MRA           roce.CMMRA
	REJ           roce.CMREJ
	REP           roce.CMREP
	RTU           roce.CMRTU
	DREQ          roce.CMDREQ
	DREP          roce.CMDREP
	SIDRREQ       roce.CMSIDRREQ
	SIDRREP       roce.CMSIDRREP
	LAP           roce.CMLAP
	APR           roce.CMAPR
}

// decoded records that layer t was decoded: Decoded and its bit.
func (p *Packet) decoded(t gopacket.LayerType) {
	p.Decoded = append(p.Decoded, t)
	if len(p.Decoded)-1 != p.nhas {
		return // Decoded was set from outside: Has walks it from now on
	}
	p.nhas = len(p.Decoded)
	if uint(t) < uint(len(layerMask)) {
		p.has |= layerMask[t]
	}
}

// layerMask gives each layer type the decoder appends to Decoded its bit
// in Packet.has (0: none; Has walks Decoded for such a type): the mask
// itself, not its index, which saves Has a variable shift (it is asked
// ~10 times a packet). Layer types are small numbers: gopacket's below
// 200, ours 1700-1799.
var layerMask = func() (a [1800]uint64) {
	types := []gopacket.LayerType{
		layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2, layers.LayerTypeEthernet,
		layers.LayerTypeDot1Q, layers.LayerTypeARP, pfc.LayerTypeMACControl,
		layers.LayerTypeIPv4, layers.LayerTypeIPv6, layers.LayerTypeUDP, layers.LayerTypeTCP,
		erf.LayerTypeERF, ipoib.LayerTypeIPoIB,
		roce.LayerTypeLRH, roce.LayerTypeGRH, roce.LayerTypeBTH, roce.LayerTypeMAD,
		roce.LayerTypeClassPortInfo, roce.LayerTypeCMREQ, roce.LayerTypeCMMRA,
		roce.LayerTypeCMREJ, roce.LayerTypeCMREP, roce.LayerTypeCMRTU,
		roce.LayerTypeCMDREQ, roce.LayerTypeCMDREP, roce.LayerTypeCMSIDRREQ,
		roce.LayerTypeCMSIDRREP, roce.LayerTypeCMLAP, roce.LayerTypeCMAPR,
	}
	for i, t := range types {
		if uint(t) < uint(len(a)) {
			a[t] = 1 << i
		}
	}
	return a
}()

func (p *Packet) reset() {
	p.Decoded = p.Decoded[:0]
	p.has, p.nhas = 0, 0
	p.NVLAN = 0
	p.Encap = EncapNone
	p.ICRC = CRCCheck{}
	p.VCRC = CRCCheck{}
	p.CM.Attr = gopacket.LayerTypeZero
	p.IWARP.reset()
	p.TCPDiscarded = false
	p.CRCDiscarded = false
	// Usually none or one: a loop, not clear's call of memclrHasPointers
	// (which a range loop zeroing each element would compile to too).
	for i := 0; i < len(p.ULP); i++ {
		p.ULP[i] = nil
	}
	p.ULP = p.ULP[:0]
	p.Err = nil
	p.Conn = nil
	p.Dir = DirUnknown
	p.Analysis = Analysis{}
	p.hashed = false
	p.tcpSummed = false
}
