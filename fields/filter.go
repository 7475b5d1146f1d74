package fields

import (
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// The display-filter view of the field registry: dfilter compiles filters
// against this, knowing only names, types and values.

// FilterRegistry returns the registry display filters (dfilter.Compile) use:
// every field of s by name, and every protocol or header that names a
// prefix of fields ("rpcordma", "infiniband.reth", "ip") as a protocol that
// is present when any of its fields is.
func FilterRegistry(s *FieldSet) dfilter.Registry[*dissect.Packet] {
	return filterRegistry{s}
}

type filterRegistry struct{ s *FieldSet }

// FilterType maps a field type to the type a display filter compares it as.
func FilterType(t FieldType) dfilter.Type {
	switch t {
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		return dfilter.TypeUint
	case FTBoolean:
		return dfilter.TypeBool
	case FTBytes:
		return dfilter.TypeBytes
	case FTEther:
		return dfilter.TypeEther
	case FTIPv4:
		return dfilter.TypeIPv4
	case FTIPv6:
		return dfilter.TypeIPv6
	case FTString:
		return dfilter.TypeString
	case FTTime, FTRelTime:
		return dfilter.TypeTime
	}
	return dfilter.TypeProtocol
}

func (r filterRegistry) Lookup(name string) (dfilter.Field[*dissect.Packet], bool) {
	if f, ok := r.s.Lookup(name); ok {
		if f.Get == nil {
			return dfilter.Field[*dissect.Packet]{}, false
		}
		a := &fieldAdapter{f: f}
		a.recv = a.forward
		return dfilter.Field[*dissect.Packet]{Name: name, Type: FilterType(f.Type), Each: a.each, Names: namesOf(f),
			Size: intSize(f.Type)}, true
	}
	// A protocol whose bytes rdmashark knows: its bytes, once, when present.
	if span, ok := protocolSpans[name]; ok {
		a := &spanAdapter{span: span}
		return dfilter.Field[*dissect.Packet]{Name: name, Type: dfilter.TypeBytes, Each: a.each}, true
	}
	// A protocol: present when any field under it is.
	prefix := name + "."
	pa := &protoAdapter{}
	for _, f := range r.s.All() {
		if strings.HasPrefix(f.Name, prefix) && f.Get != nil && !notPresence[f.Name] && !f.NoPresence {
			pa.children = append(pa.children, f)
		}
	}
	if len(pa.children) == 0 {
		return dfilter.Field[*dissect.Packet]{}, false
	}
	pa.recv = pa.found
	return dfilter.Field[*dissect.Packet]{Name: name, Type: dfilter.TypeProtocol, Each: pa.each}, true
}

// notPresence are fields that occur without their protocol, as in
// Wireshark: IPv6 packets carry ip.version. (A plug-in's say so with
// Field.NoPresence.)
var notPresence = map[string]bool{"ip.version": true}

// fieldAdapter hands a field's values to a filter without allocating: the
// callback it gives Get is made once.
type fieldAdapter struct {
	f    *Field
	emit func(dfilter.Value)
	recv func(Value)
}

func (a *fieldAdapter) each(p *dissect.Packet, emit func(dfilter.Value)) {
	a.emit = emit
	a.f.Get(p, a.recv)
	a.emit = nil
}

func (a *fieldAdapter) forward(v Value) {
	a.emit(dfilter.Value{U: v.U, B: v.B, S: v.S, Addr: v.Addr})
}

// protoAdapter is a protocol's presence: one empty occurrence when any of
// its fields occurs.
type protoAdapter struct {
	children []*Field
	any      bool
	recv     func(Value)
}

func (a *protoAdapter) found(Value) { a.any = true }

func (a *protoAdapter) each(p *dissect.Packet, emit func(dfilter.Value)) {
	a.any = false
	for _, f := range a.children {
		f.Get(p, a.recv)
		if a.any {
			emit(dfilter.Value{})
			return
		}
	}
}

// intSize is the width of an integer field's values, as its Wireshark
// field type gives it (len() returns it).
func intSize(t FieldType) int {
	switch t {
	case FTUint8:
		return 1
	case FTUint16:
		return 2
	case FTUint24:
		return 3
	case FTUint32:
		return 4
	case FTUint64:
		return 8
	}
	return 0
}

// valueName is one name of a field's value (valuenames.go).
type valueName struct {
	v    uint64
	name string
}

// namesOf reads the names a filter may give for f's values: tshark's
// value_string of the field, and for a boolean its true_false_string
// ("True" and "False" when tshark gives it none). Names are compared
// ignoring case, and a name that occurs twice stands for its first value,
// as tshark 4.0 reads them.
func namesOf(f *Field) func(string, bool) (uint64, bool) {
	if f.Type == FTBoolean {
		tf, ok := boolNames[f.Name]
		if !ok {
			tf = [2]string{"True", "False"}
		}
		return func(s string, _ bool) (uint64, bool) {
			switch {
			case strings.EqualFold(s, tf[0]):
				return 1, true
			case strings.EqualFold(s, tf[1]):
				return 0, true
			}
			return 0, false
		}
	}
	vs, ok := valueNames[f.Name]
	if !ok {
		return nil
	}
	quotedOnly := quotedNamesOnly[f.Name]
	return func(s string, quoted bool) (uint64, bool) {
		if quotedOnly && !quoted {
			return 0, false
		}
		for _, n := range vs {
			if strings.EqualFold(s, n.name) {
				return n.v, true
			}
		}
		return 0, false
	}
}

// protocolSpans are the protocols a filter can treat as their bytes, as
// Wireshark does (frame[0:2], ip[12:4], udp contains 12:b7, len(ip)): the
// bytes each spans in the frame, as tshark 4.0's protocol items span them
// (checked with tshark -T pdml on the real captures): a link, IP, UDP or
// TCP header alone; InfiniBand from its first header to the end of the
// frame; the frame all of it. Other protocols (rpcordma, rpc, nfs, iWARP's)
// lie in reassembled data tshark keeps apart, and can only be tested for
// presence here.
var protocolSpans = map[string]func(p *dissect.Packet) ([]byte, bool){
	"frame": func(p *dissect.Packet) ([]byte, bool) { return p.Data, true },
	"eth":   layerSpan(layers.LayerTypeEthernet, func(p *dissect.Packet) []byte { return p.Eth.Contents }),
	"sll": func(p *dissect.Packet) ([]byte, bool) {
		switch {
		case p.Has(layers.LayerTypeLinuxSLL):
			return within(p, p.SLL.Contents, false)
		case p.Has(layers.LayerTypeLinuxSLL2):
			return within(p, p.SLL2.Contents, false)
		}
		return nil, false
	},
	"ip":   layerSpan(layers.LayerTypeIPv4, func(p *dissect.Packet) []byte { return p.IPv4.Contents }),
	"ipv6": layerSpan(layers.LayerTypeIPv6, func(p *dissect.Packet) []byte { return p.IPv6.Contents }),
	"udp":  layerSpan(layers.LayerTypeUDP, func(p *dissect.Packet) []byte { return p.UDP.Contents }),
	"tcp":  layerSpan(layers.LayerTypeTCP, func(p *dissect.Packet) []byte { return p.TCP.Contents }),
	"infiniband": func(p *dissect.Packet) ([]byte, bool) {
		switch {
		case p.Has(roce.LayerTypeLRH):
			return within(p, p.LRH.Contents, true)
		case p.Has(roce.LayerTypeGRH):
			return within(p, p.GRH.Contents, true)
		case p.Has(roce.LayerTypeBTH):
			return within(p, p.BTH.Contents, true)
		}
		return nil, false
	},
}

func layerSpan(t gopacket.LayerType, contents func(p *dissect.Packet) []byte) func(p *dissect.Packet) ([]byte, bool) {
	return func(p *dissect.Packet) ([]byte, bool) {
		if !p.Has(t) {
			return nil, false
		}
		return within(p, contents(p), false)
	}
}

// within returns b, a header decoded from p.Data, as the bytes of p.Data it
// occupies (toEnd: to the end of the frame); ok is false if b is not in
// p.Data. The decoders slice p.Data, so b's place is where its capacity
// says.
func within(p *dissect.Packet, b []byte, toEnd bool) ([]byte, bool) {
	off := cap(p.Data) - cap(b)
	if len(b) == 0 || off < 0 || off+len(b) > len(p.Data) || &p.Data[off] != &b[0] {
		return nil, false
	}
	if toEnd {
		return p.Data[off:], true
	}
	return p.Data[off : off+len(b)], true
}

// spanAdapter is a protocol's bytes, for a filter.
type spanAdapter struct {
	span func(p *dissect.Packet) ([]byte, bool)
}

func (a *spanAdapter) each(p *dissect.Packet, emit func(dfilter.Value)) {
	if b, ok := a.span(p); ok {
		emit(dfilter.Value{B: b})
	}
}
