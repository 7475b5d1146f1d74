package fields

import (
	"strings"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
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
		return dfilter.Field[*dissect.Packet]{Name: name, Type: FilterType(f.Type), Each: a.each}, true
	}
	// A protocol: present when any field under it is.
	prefix := name + "."
	pa := &protoAdapter{}
	for _, f := range r.s.All() {
		if strings.HasPrefix(f.Name, prefix) && f.Get != nil && !notPresence[f.Name] {
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
// Wireshark: IPv6 packets carry ip.version; NFSACL replies nfs.status.
var notPresence = map[string]bool{"ip.version": true, "nfs.status": true}

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
