package fields

import (
	"sync"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/ipoib"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// frame.protocols: the protocols of the packet, outermost first, joined by
// ":" as tshark lists them ("eth:ethertype:ip:udp:infiniband:rpcordma:rpc:nfs").
// The names are tshark 4.0's protocol filter names, and the list follows
// tshark's dissectors: "ethertype" after every link header that carries an
// EtherType, "data" for a payload no dissector took, one "iwarp_ddp_rdmap"
// per iWARP FPDU. Where tshark's list depends on dissectors rdmashark does
// not have (RPC over TCP, ssh, heuristic dissectors), rdmashark's differs:
// testdata/KNOWN-DIFFERENCES.md, KD-FRAME-PROTOCOLS.

// protocol is one entry of the list.
type protocol uint8

const (
	protoNone protocol = iota
	protoEth
	protoEthertype
	protoVLAN
	protoQinQ
	protoSLL
	protoERF
	protoIPoIB
	protoRaw
	protoIP
	protoIPv6
	protoARP
	protoICMP
	protoICMPv6
	protoUDP
	protoTCP
	protoInfiniBand
	protoMPA
	protoDDP
	protoData
	protoMACC
	numProtocols
)

// protocolNames are the names of the protocols, the plug-ins' after
// numProtocols (registerProtocols).
var protocolNames = []string{
	protoEth: "eth", protoEthertype: "ethertype", protoVLAN: "vlan", protoQinQ: "ieee8021ad", protoSLL: "sll",
	protoERF: "erf", protoIPoIB: "ipoib", protoRaw: "raw", protoIP: "ip", protoIPv6: "ipv6", protoARP: "arp",
	protoICMP: "icmp", protoICMPv6: "icmpv6", protoUDP: "udp", protoTCP: "tcp", protoInfiniBand: "infiniband",
	protoMPA: "iwarp_mpa", protoDDP: "iwarp_ddp_rdmap",
	protoData: "data", protoMACC: "macc",
}

// registerProtocols adds a plug-in's protocol names (Messages.ProtocolNames)
// and returns the protocol of the first. It runs at registration, before
// any packet.
func registerProtocols(names []string) protocol {
	base := len(protocolNames)
	if base+len(names) > 256 {
		panic("fields: too many protocols")
	}
	protocolNames = append(protocolNames, names...)
	return protocol(base)
}

// maxProtocols bounds the list kept as a key; a longer one (an iWARP
// segment of many FPDUs) is built as a new string.
const maxProtocols = 48

type protoList struct {
	n int
	p [maxProtocols]protocol
	// over counts the entries beyond maxProtocols, which is built apart
	over []protocol
}

func (l *protoList) add(ps ...protocol) {
	for _, p := range ps {
		if l.n < maxProtocols {
			l.p[l.n] = p
			l.n++
		} else {
			l.over = append(l.over, p)
		}
	}
}

// protocolStrings interns the lists seen: a capture has a few dozen
// different ones, so the string of each is made once.
var protocolStrings = struct {
	sync.Mutex
	m map[[maxProtocols]protocol]string
}{m: map[[maxProtocols]protocol]string{}}

func (l *protoList) String() string {
	if l.over == nil {
		protocolStrings.Lock()
		s, ok := protocolStrings.m[l.p]
		protocolStrings.Unlock()
		if ok {
			return s
		}
	}
	var b []byte
	for i, p := range append(l.p[:l.n:l.n], l.over...) {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, protocolNames[p]...)
	}
	s := string(b)
	if l.over == nil {
		protocolStrings.Lock()
		if len(protocolStrings.m) < 4096 {
			protocolStrings.m[l.p] = s
		}
		protocolStrings.Unlock()
	}
	return s
}

// frameProtocols is frame.protocols of p.
func frameProtocols(p *dissect.Packet) string {
	var l protoList
	buildProtocols(p, &l)
	return l.String()
}

// buildProtocols puts the protocols of p into l.
func buildProtocols(p *dissect.Packet, l *protoList) {
	if p.LinkType == layers.LinkTypeRaw {
		l.add(protoRaw)
	}
	ethertype := false // the next IP or ARP layer follows an EtherType
	ib := false
	vlan := 0
	for _, t := range p.Decoded {
		switch t {
		case erf.LayerTypeERF:
			l.add(protoERF)
		case layers.LayerTypeEthernet:
			l.add(protoEth, protoEthertype)
		case layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2:
			l.add(protoSLL, protoEthertype)
		case layers.LayerTypeDot1Q:
			if isDot1Q(p, vlan) {
				l.add(protoVLAN, protoEthertype)
			} else {
				l.add(protoQinQ, protoEthertype)
			}
			vlan++
		case ipoib.LayerTypeIPoIB:
			l.add(protoIPoIB)
		case roce.LayerTypeLRH, roce.LayerTypeGRH, roce.LayerTypeBTH:
			if !ib {
				l.add(protoInfiniBand)
				ib = true
			}
			ethertype = true // IPoIB inside a UD Send names its EtherType
		case layers.LayerTypeARP:
			if ib && ethertype {
				l.add(protoEthertype)
			}
			l.add(protoARP)
		case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
			if ib && ethertype {
				l.add(protoEthertype)
			}
			if t == layers.LayerTypeIPv4 {
				l.add(protoIP)
			} else {
				l.add(protoIPv6)
			}
			switch proto := ipProto(p, t); proto {
			case layers.IPProtocolICMPv4:
				l.add(protoICMP)
				if icmpData(p, t) {
					l.add(protoData)
				}
			case layers.IPProtocolICMPv6:
				l.add(protoICMPv6)
				if icmpData(p, t) {
					l.add(protoData)
				}
			}
		case layers.LayerTypeUDP:
			l.add(protoUDP)
			if p.Encap != dissect.EncapRoCEv2 && len(p.UDP.Payload) > 0 {
				l.add(protoData)
			}
		case layers.LayerTypeTCP:
			l.add(protoTCP)
			tcpProtocols(p, l)
		}
	}
	if ib && p.BTH.NextLayerType() != roce.LayerTypeMAD && !ibCarriesIP(p) {
		if m, n := messagesOf(p); n > 0 {
			for i := 0; i < n; i++ {
				m.protocols(p, i, l)
			}
		} else if len(p.BTH.Payload) > 0 {
			l.add(protoData)
		}
	}
}

// ibCarriesIP tells whether an InfiniBand packet carries IPoIB.
func ibCarriesIP(p *dissect.Packet) bool {
	return p.Encap == dissect.EncapIB && (p.Has(layers.LayerTypeIPv4) || p.Has(layers.LayerTypeIPv6) || p.Has(layers.LayerTypeARP))
}

func ipProto(p *dissect.Packet, t gopacket.LayerType) layers.IPProtocol {
	if t == layers.LayerTypeIPv4 {
		return p.IPv4.Protocol
	}
	return p.IPv6.NextHeader
}

// icmpData tells whether an ICMP message carries data after its header:
// an echo request or reply (ICMP types 8 and 0, ICMPv6 128 and 129) with a
// payload, as tshark shows it ("icmp:data").
func icmpData(p *dissect.Packet, t gopacket.LayerType) bool {
	var b []byte
	if t == layers.LayerTypeIPv4 {
		b = p.IPv4.Payload
		return len(b) > 8 && (b[0] == 8 || b[0] == 0)
	}
	b = p.IPv6.Payload
	return len(b) > 8 && (b[0] == 128 || b[0] == 129)
}

// tcpProtocols adds what a TCP segment carried: iWARP's MPA, then for each
// FPDU "iwarp_ddp_rdmap" and what it delivered, as tshark 4.0 lists them:
// a tagged segment's payload (RDMA Write, Read Response) is "data", unless
// it completes an RPC message rebuilt from a chunk; an untagged Send's only
// on its last segment, where RPC-over-RDMA takes it (else "data"); a Read
// Request or Terminate header carries none.
func tcpProtocols(p *dissect.Packet, l *protoList) {
	w := &p.IWARP
	if !w.HasReqRep && len(w.FPDUs) == 0 {
		return
	}
	l.add(protoMPA)
	m, n := messagesOf(p)
	rec := 0 // the next of the ULP's messages to place
	for i := range w.FPDUs {
		f := &w.FPDUs[i]
		l.add(protoDDP)
		if f.Err != nil {
			continue
		}
		switch op := f.RDMAP.Opcode; {
		case f.DDP.T:
			if f.DDP.L && op == iwarp.OpRDMAReadResponse && rec < n && m.ByRead != nil && m.ByRead(p, rec) {
				m.protocols(p, rec, l)
				rec++
			} else if f.DataLen > 0 {
				l.add(protoData)
			}
		case op == iwarp.OpSend || op == iwarp.OpSendWithInvalidate || op == iwarp.OpSendWithSE || op == iwarp.OpSendWithSEAndInvalidate:
			if !f.DDP.L {
				continue
			}
			if rec < n {
				m.protocols(p, rec, l)
				rec++
			} else if f.DataLen > 0 {
				l.add(protoData)
			}
		}
	}
	for ; rec < n; rec++ {
		m.protocols(p, rec, l)
	}
}

// protocols adds the protocols of message i (Messages.Protocols).
func (m *Messages) protocols(p *dissect.Packet, i int, l *protoList) {
	if m.Protocols != nil {
		for _, k := range m.Protocols(p, i) {
			l.add(m.protoBase + protocol(k))
		}
	}
}

func protocolsTable() *Table {
	F := new(Table)
	F.Register(&Field{Name: "frame.protocols", Label: "Protocols in frame", Type: FTString, Parent: "frame",
		Get: func(p *dissect.Packet, emit func(Value)) { emit(Value{S: frameProtocols(p)}) }})
	return F
}
