package dissect

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// frameState numbers what tshark numbers across a capture: the time since
// the previous frame (frame.time_delta) and TCP conversations (tcp.stream).

// maxTCPStreams bounds the TCP conversations remembered for tcp.stream;
// past it the table starts afresh (a conversation seen again then gets a
// new number) and frameState.Forgotten counts the times.
const maxTCPStreams = 1 << 20

type streamKey struct{ a, b netip.AddrPort }

type tcpStream struct {
	index int
	// base is each direction's base sequence number ([0] from the lower
	// address and port): a SYN's, or one before the first segment seen.
	// A SYN without ACK whose sequence number is not its direction's base
	// starts a new stream (the 4-tuple reused); a SYN retransmitted with
	// the same ISN does not, even after a RST or FIN — tshark 4.0's rule
	// (packet-tcp.c, TCP_S_BASE_SEQ_SET and base_seq).
	base    [2]uint32
	hasBase [2]bool
	// synT: the last SYN without ACK (Unix ns, 0 none); firstRTT: from it
	// to the first segment with ACK and without SYN (tshark's
	// tcp.analysis.initial_rtt, its out-of-order threshold).
	synT     int64
	firstRTT time.Duration
	// synSeen and wscale: each direction's SYN was seen, and the window
	// scale shift it announced (-1: no Window Scale option).
	synSeen [2]bool
	wscale  [2]int8
}

// echoKey is an ICMP echo: its addresses (request's source first), and
// identifier and sequence number.
type echoKey struct {
	src, dst netip.Addr
	id, seq  uint16
}

// maxEchoes bounds the echo requests remembered for EchoRequestIn; past it
// the table starts afresh.
const maxEchoes = 4096

type frameState struct {
	echoes    map[echoKey]int
	prev      wallClock // the previous frame's time
	seen      bool
	streams   map[streamKey]tcpStream
	next      int
	Forgotten int
	// last is streams[lastKey] (when hasLast): a conversation's segments,
	// both ways, mostly follow each other.
	lastKey streamKey
	last    tcpStream
	hasLast bool
}

// note sets p.TimeDelta and p.TCPStream; the engine calls it for every
// packet, in order, after decoding.
func (s *frameState) note(p *Packet) {
	w := wallOf(p.Timestamp)
	if s.seen {
		p.TimeDelta = w.sub(s.prev)
	} else {
		p.TimeDelta = 0
	}
	s.prev, s.seen = w, true
	p.TCPStream, p.TCPInitialRTT = -1, 0
	p.TCPSeqBase, p.TCPAckBase, p.TCPAckBaseSet, p.TCPWinShift = 0, 0, false, 0
	p.EchoRequestIn = 0
	if !p.Has(layers.LayerTypeTCP) {
		// echo's first test, here: most packets are RoCE on UDP.
		if p.IPv4.Protocol == layers.IPProtocolICMPv4 || p.IPv6.NextHeader == layers.IPProtocolICMPv6 {
			s.echo(p)
		}
		return
	}
	var src, dst netip.Addr
	switch {
	case p.Has(layers.LayerTypeIPv4):
		src, _ = netip.AddrFromSlice(p.IPv4.SrcIP)
		dst, _ = netip.AddrFromSlice(p.IPv4.DstIP)
	case p.Has(layers.LayerTypeIPv6):
		src, _ = netip.AddrFromSlice(p.IPv6.SrcIP)
		dst, _ = netip.AddrFromSlice(p.IPv6.DstIP)
	default:
		return
	}
	a := netip.AddrPortFrom(src, uint16(p.TCP.SrcPort))
	b := netip.AddrPortFrom(dst, uint16(p.TCP.DstPort))
	d := 0 // the packet's direction: from a
	if c := a.Addr().Compare(b.Addr()); c > 0 || c == 0 && a.Port() > b.Port() {
		a, b = b, a
		d = 1
	}
	k := streamKey{a, b}
	if s.streams == nil {
		s.streams = map[streamKey]tcpStream{}
	}
	var st tcpStream
	ok := s.hasLast && s.lastKey == k
	if ok {
		st = s.last
	} else {
		st, ok = s.streams[k]
	}
	was := st
	syn := p.TCP.SYN && !p.TCP.ACK
	if !ok || syn && st.hasBase[d] && p.TCP.Seq != st.base[d] {
		if len(s.streams) >= maxTCPStreams {
			clear(s.streams)
			s.Forgotten++
		}
		st = tcpStream{index: s.next}
		s.next++
	}
	if !st.hasBase[d] {
		st.base[d], st.hasBase[d] = p.TCP.Seq, true
		if !p.TCP.SYN {
			st.base[d]--
		}
	}
	// An ACK sets the other direction's base when its first segment is
	// still to come (tshark 4.0: the reverse base_seq is th_ack - 1).
	if p.TCP.ACK && !st.hasBase[1-d] {
		st.base[1-d], st.hasBase[1-d] = p.TCP.Ack-1, true
	}
	if p.TCP.SYN {
		st.synSeen[d], st.wscale[d] = true, windowScale(&p.TCP)
	}
	switch {
	case p.TCP.SYN && !p.TCP.ACK:
		st.synT = p.Timestamp.UnixNano()
	case p.TCP.ACK && !p.TCP.SYN && st.synT != 0 && st.firstRTT == 0:
		st.firstRTT = max(time.Duration(p.Timestamp.UnixNano()-st.synT), 1)
	}
	if !ok || st != was {
		s.streams[k] = st
	}
	s.lastKey, s.last, s.hasLast = k, st, true
	p.TCPStream = st.index
	p.TCPInitialRTT = st.firstRTT
	p.TCPSeqBase = st.base[d]
	p.TCPAckBase, p.TCPAckBaseSet = st.base[1-d], st.hasBase[1-d]
	p.TCPWinShift = 0
	// The sender's SYN announced a shift, and the other's SYN, if seen,
	// did too (RFC 7323 section 2.2: both or neither scale); tshark 4.0
	// scales when the other SYN was not captured.
	if !p.TCP.SYN && st.synSeen[d] && st.wscale[d] >= 0 && !(st.synSeen[1-d] && st.wscale[1-d] < 0) {
		p.TCPWinShift = uint8(st.wscale[d])
	}
}

// windowScale returns the shift a SYN's Window Scale option announces
// (RFC 7323 section 2.2: at most 14), or -1 without the option.
func windowScale(t *layers.TCP) int8 {
	for _, o := range t.Options {
		if o.OptionType == layers.TCPOptionKindWindowScale && len(o.OptionData) == 1 {
			return int8(min(o.OptionData[0], 14))
		}
	}
	return -1
}

// echo remembers an ICMP echo request (RFC 792: type 8; ICMPv6, RFC 4443
// section 4.1: 128) and sets a reply's EchoRequestIn from it.
//
// The protocol field is tested before the layer, which holds the last
// packet's value when absent: most packets are neither (RoCE on UDP).
func (s *frameState) echo(p *Packet) {
	var b []byte
	var src, dst netip.Addr
	req, rep := uint8(8), uint8(0)
	switch {
	case p.IPv4.Protocol == layers.IPProtocolICMPv4 && p.Has(layers.LayerTypeIPv4) && p.IPv4.FragOffset == 0:
		b = p.IPv4.Payload
		src, _ = netip.AddrFromSlice(p.IPv4.SrcIP)
		dst, _ = netip.AddrFromSlice(p.IPv4.DstIP)
	case p.IPv6.NextHeader == layers.IPProtocolICMPv6 && p.Has(layers.LayerTypeIPv6):
		b = p.IPv6.Payload
		src, _ = netip.AddrFromSlice(p.IPv6.SrcIP)
		dst, _ = netip.AddrFromSlice(p.IPv6.DstIP)
		req, rep = 128, 129
	default:
		return
	}
	if len(b) < 8 || b[0] != req && b[0] != rep {
		return
	}
	id, seq := uint16(b[4])<<8|uint16(b[5]), uint16(b[6])<<8|uint16(b[7])
	if b[0] == rep {
		p.EchoRequestIn = s.echoes[echoKey{dst, src, id, seq}]
		return
	}
	if s.echoes == nil || len(s.echoes) >= maxEchoes {
		s.echoes = map[echoKey]int{}
	}
	s.echoes[echoKey{src, dst, id, seq}] = p.Number
}
