package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// tshark's -T json and -T ek shapes (issue 31), so that scripts written for
// tshark's output read rdmashark's: `jq '.[]._source.layers'`.
//
// -T json is one array of packets, each
//
//	{"_index": "packets-YYYY-MM-DD", "_type": "doc", "_score": null,
//	 "_source": {"layers": {"frame": {"frame.number": "1", ...}, ...}}}
//
// pretty-printed as tshark prints it. A protocol's layer is keyed by its
// filter name ("infiniband"); a header inside it (rdmashark's group
// "infiniband.bth") is its "infiniband.bth_tree" object, as tshark nests a
// header's fields under the header's field. Every value is a string as
// -T fields prints it. A field that occurs several times, and a protocol a
// packet holds several instances of (iWARP FPDUs, RPC-over-RDMA messages),
// is an array: the shape of tshark's --no-duplicate-keys (tshark otherwise
// repeats the key, which JSON readers take the last of).
//
// -T ek is tshark's Elasticsearch bulk format: per packet an index line
// {"index":{"_index":"packets-YYYY-MM-DD","_type":"doc"}} and a document
// line {"timestamp":"<ms since the epoch>","layers":{"<protocol>":
// {"<protocol>_<field with _ for .>": value}}}, booleans as true/false.

// jnode is one member of the JSON tree of a packet.
type jnode struct {
	key  string
	vals []string  // a field's values
	kids []*jnode  // an object's members
	arr  [][]jnode // an array of objects (the instances of a protocol)
	obj  bool
}

func (n *jnode) child(key string) *jnode {
	for _, k := range n.kids {
		if k.key == key && k.obj {
			return k
		}
	}
	k := &jnode{key: key, obj: true}
	n.kids = append(n.kids, k)
	return k
}

// layerKey splits a group name into its protocol and the key of its
// subtree inside the protocol ("" when the group is the protocol).
func layerKey(group string) (proto, sub string) {
	if strings.HasPrefix(group, "_ws.") {
		return group, ""
	}
	proto, _, ok := strings.Cut(group, ".")
	if !ok {
		return group, ""
	}
	return proto, group + "_tree"
}

func fieldNodes(fvs []fieldValues, buf *[]byte) []*jnode {
	out := make([]*jnode, 0, len(fvs))
	for _, fv := range fvs {
		n := &jnode{key: fv.f.Name}
		for _, v := range fv.vals {
			*buf = appendJSONValue((*buf)[:0], fv.f, v)
			n.vals = append(n.vals, string(*buf))
		}
		out = append(out, n)
	}
	return out
}

// appendJSONValue appends a value as tshark's -T json and -T ek print it:
// as -T fields does, but bytes with a colon between octets.
func appendJSONValue(dst []byte, f *fields.Field, v fields.Value) []byte {
	if f.Type != fields.FTBytes {
		return f.AppendFormat(dst, v)
	}
	const hexDigits = "0123456789abcdef"
	for i, c := range v.B {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// tsharkTree builds the layers object of p.
func tsharkTree(c *collector, p *dissect.Packet, buf *[]byte) *jnode {
	layers := &jnode{obj: true}
	for _, g := range c.collect(p) {
		proto, sub := layerKey(g.name)
		at := layers.child(proto)
		if sub != "" {
			at = at.child(sub)
		}
		if !g.repeated() {
			var flat []fieldValues
			flat = g.flatInto(flat)
			at.kids = append(at.kids, fieldNodes(flat, buf)...)
			continue
		}
		at.kids = append(at.kids, fieldNodes(g.fields, buf)...)
		inst := &jnode{key: "instances"}
		for _, in := range g.instances {
			obj := jnode{obj: true, kids: fieldNodes(in.fields, buf)}
			inst.arr = append(inst.arr, []jnode{obj})
		}
		at.kids = append(at.kids, inst)
	}
	return layers
}

// NewTsharkJSONWriter prints packets as tshark -T json does.
func NewTsharkJSONWriter(w io.Writer) PacketWriter {
	return &tsharkJSONWriter{w: bufio.NewWriter(w)}
}

type tsharkJSONWriter struct {
	w     *bufio.Writer
	c     collector
	buf   []byte
	begun bool
}

func (j *tsharkJSONWriter) WritePacket(p *dissect.Packet) error {
	w := j.w
	if !j.begun {
		w.WriteString("[\n")
		j.begun = true
	} else {
		w.WriteString(",\n")
	}
	w.WriteString("  {\n    \"_index\": ")
	writeJSONString(w, "packets-"+p.Timestamp.Local().Format("2006-01-02"))
	w.WriteString(",\n    \"_type\": \"doc\",\n    \"_score\": null,\n    \"_source\": {\n      \"layers\": ")
	writeJNode(w, tsharkTree(&j.c, p, &j.buf), 6)
	w.WriteString("\n    }\n  }")
	return nil
}

// Flush writes out what is buffered; the array stays open for more
// packets (the engine flushes while it waits for input).
func (j *tsharkJSONWriter) Flush() error { return j.w.Flush() }

// End closes the array after the last packet ("[" and "]" also for no
// packet, as tshark prints them) and flushes.
func (j *tsharkJSONWriter) End() error {
	if !j.begun {
		j.w.WriteString("[\n]\n")
	} else {
		j.w.WriteString("\n]\n")
	}
	j.begun = true
	return j.w.Flush()
}

func pad(w *bufio.Writer, n int) {
	for range n {
		w.WriteByte(' ')
	}
}

// writeJNode writes an object's members at indent, tshark's layout:
// two spaces a level, one member a line.
func writeJNode(w *bufio.Writer, n *jnode, indent int) {
	if len(n.kids) == 0 {
		w.WriteString("{}")
		return
	}
	w.WriteString("{\n")
	for i, k := range n.kids {
		if i > 0 {
			w.WriteString(",\n")
		}
		pad(w, indent+2)
		writeJSONString(w, k.key)
		w.WriteString(": ")
		switch {
		case k.obj:
			writeJNode(w, k, indent+2)
		case k.arr != nil:
			w.WriteString("[\n")
			for x, o := range k.arr {
				if x > 0 {
					w.WriteString(",\n")
				}
				pad(w, indent+4)
				writeJNode(w, &o[0], indent+4)
			}
			w.WriteByte('\n')
			pad(w, indent+2)
			w.WriteByte(']')
		case len(k.vals) == 1:
			writeJSONString(w, k.vals[0])
		default:
			w.WriteByte('[')
			for x, v := range k.vals {
				if x > 0 {
					w.WriteString(", ")
				}
				writeJSONString(w, v)
			}
			w.WriteByte(']')
		}
	}
	w.WriteByte('\n')
	pad(w, indent)
	w.WriteByte('}')
}

// NewEKWriter prints packets as tshark -T ek does.
func NewEKWriter(w io.Writer) PacketWriter {
	return &ekWriter{w: bufio.NewWriter(w)}
}

type ekWriter struct {
	w   *bufio.Writer
	c   collector
	buf []byte
}

func (e *ekWriter) WritePacket(p *dissect.Packet) error {
	w := e.w
	w.WriteString(`{"index":{"_index":`)
	writeJSONString(w, "packets-"+p.Timestamp.Local().Format("2006-01-02"))
	w.WriteString(`,"_type":"doc"}}` + "\n")
	w.WriteString(`{"timestamp":"`)
	w.WriteString(strconv.FormatInt(p.Timestamp.UnixMilli(), 10))
	w.WriteString(`","layers":{`)
	// One object per protocol, its fields flat, in order of appearance.
	type member struct {
		key  string
		f    *fields.Field
		vals []fields.Value
	}
	var protos []string
	byProto := map[string][]member{}
	for _, g := range e.c.collect(p) {
		proto, _ := layerKey(g.name)
		if _, ok := byProto[proto]; !ok {
			protos = append(protos, proto)
		}
		var flat []fieldValues
		flat = g.flatInto(flat)
		ms := byProto[proto]
	next:
		for _, fv := range flat {
			key := strings.ReplaceAll(proto+"_"+fv.f.Name, ".", "_")
			for i := range ms {
				if ms[i].key == key {
					ms[i].vals = append(ms[i].vals, fv.vals...)
					continue next
				}
			}
			ms = append(ms, member{key, fv.f, append([]fields.Value(nil), fv.vals...)})
		}
		byProto[proto] = ms
	}
	for i, proto := range protos {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, strings.ReplaceAll(proto, ".", "_"))
		w.WriteString(":{")
		for k, m := range byProto[proto] {
			if k > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, m.key)
			w.WriteByte(':')
			if len(m.vals) > 1 {
				w.WriteByte('[')
			}
			for x, v := range m.vals {
				if x > 0 {
					w.WriteByte(',')
				}
				if m.f.Type == fields.FTBoolean {
					w.WriteString(strconv.FormatBool(v.U != 0))
					continue
				}
				e.buf = appendJSONValue(e.buf[:0], m.f, v)
				writeJSONBytes(w, e.buf)
			}
			if len(m.vals) > 1 {
				w.WriteByte(']')
			}
		}
		w.WriteByte('}')
	}
	_, err := w.WriteString("}}\n")
	return err
}

func (e *ekWriter) Flush() error { return e.w.Flush() }

// NewVerboseWriterOnly is NewVerboseWriter showing the fields of the named
// protocols only, the others by their heading (tshark -O): a name is a
// protocol ("infiniband", "rpcordma") or one of its headers
// ("infiniband.bth").
func NewVerboseWriterOnly(w io.Writer, protocols []string) PacketWriter {
	v := &verboseWriter{w: bufio.NewWriter(w), only: map[string]bool{}}
	for _, p := range protocols {
		v.only[p] = true
	}
	return v
}

// detail tells whether the group's fields are shown.
func (v *verboseWriter) detail(group string) bool {
	if v.only == nil || v.only[group] {
		return true
	}
	proto, _ := layerKey(group)
	return v.only[proto]
}

// timeColumnField is the _ws.col.Time field f printed in -t's format, as
// tshark's column is ("2026-11-21 23:29:52.097489" for -t ad), without the
// summary line's padding.
func timeColumnField(f *fields.Field, format string) *fields.Field {
	s := &summaryWriter{timeFormat: format}
	c := *f
	c.Get = func(p *dissect.Packet, emit func(fields.Value)) {
		emit(fields.Value{S: strings.TrimSpace(s.timeColumn(p))})
	}
	return &c
}
