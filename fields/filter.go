// Package fields is rdmashark's presentation of the engine's model: for now
// the display-filter view of dissect's field registry (dfilter compiles
// filters against FilterRegistry). It imports dissect; dissect never imports
// it, so the engine does not depend on the display-filter language (issue
// 11: the field table, value formats and summary lines are to follow).
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
func FilterRegistry(s *dissect.FieldSet) dfilter.Registry[*dissect.Packet] {
	return filterRegistry{s}
}

type filterRegistry struct{ s *dissect.FieldSet }

// FilterType maps a field type to the type a display filter compares it as.
func FilterType(t dissect.FieldType) dfilter.Type {
	switch t {
	case dissect.FTUint8, dissect.FTUint16, dissect.FTUint24, dissect.FTUint32, dissect.FTUint64:
		return dfilter.TypeUint
	case dissect.FTBoolean:
		return dfilter.TypeBool
	case dissect.FTBytes:
		return dfilter.TypeBytes
	case dissect.FTEther:
		return dfilter.TypeEther
	case dissect.FTIPv4:
		return dfilter.TypeIPv4
	case dissect.FTIPv6:
		return dfilter.TypeIPv6
	case dissect.FTString:
		return dfilter.TypeString
	case dissect.FTTime, dissect.FTRelTime:
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
	f    *dissect.Field
	emit func(dfilter.Value)
	recv func(dissect.Value)
}

func (a *fieldAdapter) each(p *dissect.Packet, emit func(dfilter.Value)) {
	a.emit = emit
	a.f.Get(p, a.recv)
	a.emit = nil
}

func (a *fieldAdapter) forward(v dissect.Value) {
	a.emit(dfilter.Value{U: v.U, B: v.B, S: v.S, Addr: v.Addr})
}

// protoAdapter is a protocol's presence: one empty occurrence when any of
// its fields occurs.
type protoAdapter struct {
	children []*dissect.Field
	any      bool
	recv     func(dissect.Value)
}

func (a *protoAdapter) found(dissect.Value) { a.any = true }

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
