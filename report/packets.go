package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// PacketWriter prints packets one at a time as the engine hands them out.
type PacketWriter interface {
	WritePacket(p *dissect.Packet) error
	Flush() error
}

// NewSummaryWriter prints one line per packet, in the spirit of tshark:
// number, time, source → destination, protocol, length, info.
func NewSummaryWriter(w io.Writer) PacketWriter {
	return &summaryWriter{w: bufio.NewWriter(w)}
}

type summaryWriter struct {
	w          *bufio.Writer
	line       []byte // reused: the line is built here, without fmt
	info       []byte
	timeFormat string    // -t (timefmt.go)
	prevShown  time.Time // for -t dd
	shown      bool
}

// WritePacket prints the packet's line, or one line per FPDU when an iWARP
// segment carries several (fields.InfoLines), each with the packet's columns:
// "%5d %11.6f %15s → %-15s %-7s %5d %s\n", built with strconv into a reused
// buffer.
func (s *summaryWriter) WritePacket(p *dissect.Packet) error {
	var t string // the default relative time is appended without fmt
	if s.timeFormat != "" && s.timeFormat != "r" {
		t = s.timeColumn(p)
	}
	if fields.OneInfoLine(p) {
		s.info = fields.AppendInfo(p, s.info[:0])
		return s.writeLine(p, t, s.info)
	}
	for _, info := range fields.InfoLines(p) {
		s.info = append(s.info[:0], info...)
		if err := s.writeLine(p, t, s.info); err != nil {
			return err
		}
	}
	return nil
}

// writeLine writes one line; t is the time column as -t formats it, or ""
// for the default (seconds since the first packet, %11.6f).
func (s *summaryWriter) writeLine(p *dissect.Packet, t string, info []byte) error {
	b := s.line[:0]
	b = padLeft(len(b), 5, strconv.AppendInt(b, int64(p.Number), 10))
	b = append(b, ' ')
	if t != "" {
		b = append(b, t...)
	} else {
		b = padLeft(len(b), 11, appendSeconds6(b, p.RelTime))
	}
	b = append(b, ' ')
	b = padLeft(len(b), 15, fields.AppendSource(p, b))
	b = append(b, " → "...)
	b = padRight(len(b), 15, fields.AppendDestination(p, b))
	b = append(b, ' ')
	b = padRight(len(b), 7, append(b, fields.Protocol(p)...))
	b = append(b, ' ')
	b = padLeft(len(b), 5, strconv.AppendInt(b, int64(p.Length), 10))
	b = append(b, ' ')
	b = append(b, info...)
	b = append(b, '\n')
	s.line = b
	_, err := s.w.Write(b)
	return err
}

// appendSeconds6 appends d in seconds with six decimals, as
// strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64) does, from the integer
// nanoseconds (AppendFloat was 5% of dissect's text output). Rounding the
// exact decimal agrees with rounding the float64 unless the nanoseconds end
// in exactly 500 (a tie, which the float's error decides) or the float's
// error reaches a nanosecond (below 2^20 s it stays under 2.5e-10 s);
// those, and negative times, go through AppendFloat.
func appendSeconds6(b []byte, d time.Duration) []byte {
	if d < 0 || d >= 1<<20*time.Second || d%1000 == 500 {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	}
	us := (int64(d) + 500) / 1000 // to the nearest microsecond
	b = strconv.AppendInt(b, us/1e6, 10)
	b = append(b, '.')
	frac := us % 1e6
	for div := int64(1e5); div > 0; div /= 10 {
		b = append(b, byte('0'+frac/div%10))
	}
	return b
}

// padLeft right-justifies what was appended to b after start in width
// runes, as fmt's %*s does.
func padLeft(start, width int, b []byte) []byte {
	n := utf8.RuneCount(b[start:])
	if n >= width {
		return b
	}
	pad, text := width-n, len(b)-start
	for range pad {
		b = append(b, ' ')
	}
	copy(b[start+pad:], b[start:start+text])
	for i := start; i < start+pad; i++ {
		b[i] = ' '
	}
	return b
}

// padRight left-justifies what was appended to b after start in width
// runes (%-*s).
func padRight(start, width int, b []byte) []byte {
	for n := utf8.RuneCount(b[start:]); n < width; n++ {
		b = append(b, ' ')
	}
	return b
}

func (s *summaryWriter) Flush() error { return s.w.Flush() }

// NewFieldsWriter prints the named fields of every packet separated by tabs,
// several occurrences of one field separated by commas, as tshark -T fields
// -E occurrence=a does. Unknown names are an error before anything runs.
func NewFieldsWriter(w io.Writer, names []string, header bool) (PacketWriter, error) {
	return NewFieldsWriterOptions(w, names, FieldsOptions{Header: header})
}

// group is one protocol's fields present in a packet, in table order:
// those that occur once per packet (fields), and those that repeat per
// instance (fields.Field.Per: an iWARP FPDU, an RPC-over-RDMA message),
// one entry per instance that has any.
type group struct {
	name      string
	title     string
	fields    []fieldValues
	instances []instance
	byIndex   map[int]int // instance number -> index in instances
	// kind is the instances' kind (fields.Field.Per) and count how many
	// the packet holds (even those where this protocol has no field).
	kind  string
	count int
}

// instance is one FPDU's or RPC message's fields of a protocol; n is its
// number in the packet, from 1.
type instance struct {
	n      int
	fields []fieldValues
}

type fieldValues struct {
	f    *fields.Field
	vals []fields.Value
}

// collect walks the field table once and groups the occurrences in p by
// protocol and, within a protocol, by instance. Hidden fields are left out,
// as tshark leaves them out of its tree.
func collect(p *dissect.Packet) []group {
	var out []group
	index := map[string]int{}
	groupOf := func(f *fields.Field) *group {
		i, ok := index[f.Parent]
		if !ok {
			i = len(out)
			index[f.Parent] = i
			out = append(out, group{name: f.Parent, title: fields.Registry.Title(f.Parent)})
		}
		return &out[i]
	}
	for _, f := range fields.Registry.All() {
		if f.Get == nil || f.Hidden {
			continue
		}
		if f.At == nil {
			var vals []fields.Value
			f.Get(p, func(v fields.Value) { vals = append(vals, v) })
			if len(vals) > 0 {
				g := groupOf(f)
				g.fields = append(g.fields, fieldValues{f, vals})
			}
			continue
		}
		n := fields.Registry.Count(f.Per, p)
		for i := 0; i < n; i++ {
			var vals []fields.Value
			f.At(p, i, func(v fields.Value) { vals = append(vals, v) })
			if len(vals) == 0 {
				continue
			}
			g := groupOf(f)
			g.kind, g.count = f.Per, max(g.count, n)
			if g.byIndex == nil {
				g.byIndex = map[int]int{}
			}
			k, ok := g.byIndex[i]
			if !ok {
				k = len(g.instances)
				g.byIndex[i] = k
				g.instances = append(g.instances, instance{n: i + 1})
			}
			g.instances[k].fields = append(g.instances[k].fields, fieldValues{f, vals})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return fields.Registry.Rank(out[i].name) < fields.Registry.Rank(out[j].name)
	})
	return out
}

// repeated tells whether the group shows its instances apart: the packet
// holds more than one instance of their kind. The instances are then
// numbered as they are in the packet (FPDU #2 is the packet's second
// FPDU), also in a protocol that only some of them have.
func (g *group) repeated() bool { return g.count > 1 }

// flat is the group's fields with every instance's values joined, in
// table order (a group that does not repeat).
func (g *group) flat() []fieldValues {
	out := append([]fieldValues(nil), g.fields...)
	for _, inst := range g.instances {
		out = append(out, inst.fields...)
	}
	return out
}

// NewVerboseWriter prints every packet's full field tree (-V).
func NewVerboseWriter(w io.Writer) PacketWriter {
	return &verboseWriter{w: bufio.NewWriter(w)}
}

type verboseWriter struct{ w *bufio.Writer }

func (v *verboseWriter) WritePacket(p *dissect.Packet) error {
	fmt.Fprintf(v.w, "Packet %d: %d bytes on wire, %d captured, %s\n", p.Number, p.Length, p.CaptureLength,
		p.Timestamp.UTC().Format("2006-01-02 15:04:05.000000000 UTC"))
	fmt.Fprintf(v.w, "    %s → %s %s %s\n", fields.Source(p), fields.Destination(p), fields.Protocol(p), fields.Info(p))
	gs := collect(p)
	for i := 0; i < len(gs); {
		g := &gs[i]
		if g.name == "frame" {
			i++
			continue
		}
		if !g.repeated() {
			fmt.Fprintf(v.w, "  %s\n", g.title)
			v.fields(g.flat())
			i++
			continue
		}
		// Several FPDUs or RPC messages in the packet: the protocols
		// that repeat with them (MPA, DDP, RDMAP; RPC-over-RDMA, RPC,
		// NFS) are shown instance by instance, as tshark does — each
		// protocol's per-packet fields first, then for each FPDU or
		// message its protocols under numbered headings.
		j := i + 1
		for j < len(gs) && gs[j].repeated() && gs[j].kind == g.kind {
			j++
		}
		run := gs[i:j]
		for k := range run {
			if len(run[k].fields) > 0 {
				fmt.Fprintf(v.w, "  %s\n", run[k].title)
				v.fields(run[k].fields)
			}
		}
		for n := 1; n <= g.count; n++ {
			for k := range run {
				if x, ok := run[k].byIndex[n-1]; ok {
					fmt.Fprintf(v.w, "  %s #%d\n", run[k].title, n)
					v.fields(run[k].instances[x].fields)
				}
			}
		}
		i = j
	}
	if p.Err != nil {
		fmt.Fprintf(v.w, "  [Malformed: %v]\n", p.Err)
	}
	_, err := v.w.WriteString("\n")
	return err
}

func (v *verboseWriter) fields(fvs []fieldValues) {
	for _, fv := range fvs {
		for _, val := range fv.vals {
			fmt.Fprintf(v.w, "      %s: %s\n", fv.f.Label, fv.f.Display(val))
		}
	}
}

func (v *verboseWriter) Flush() error { return v.w.Flush() }

// NewJSONWriter prints one JSON object per packet, one per line:
// {"number", "time", "length", "summary", "layers": {"<protocol>": {"<field>": value or [values]}}}.
// When the packet holds several FPDUs or RPC-over-RDMA messages, a
// protocol that repeats with them is {"<field>": ... (its per-packet
// fields, if any), "instances": [{...} or null, ...]}: element k holds the
// protocol's fields in the packet's (k+1)th FPDU or message, null when that
// one does not have the protocol. Field names always hold a dot, so
// "instances" is never a field.
func NewJSONWriter(w io.Writer) PacketWriter {
	return &jsonWriter{w: bufio.NewWriter(w)}
}

type jsonWriter struct{ w *bufio.Writer }

func (j *jsonWriter) WritePacket(p *dissect.Packet) error {
	w := j.w
	fmt.Fprintf(w, `{"number":%d,"time":%q,"length":%d,"captured":%d,"source":%s,"destination":%s,"protocol":%s,"info":%s,"layers":{`,
		p.Number, p.Timestamp.UTC().Format("2006-01-02T15:04:05.000000000Z"), p.Length, p.CaptureLength,
		jsonString(fields.Source(p)), jsonString(fields.Destination(p)), jsonString(fields.Protocol(p)), jsonString(fields.Info(p)))
	for i, g := range collect(p) {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "%s:", jsonString(g.name))
		if !g.repeated() {
			writeJSONFields(w, g.flat())
			continue
		}
		w.WriteByte('{')
		writeJSONMembers(w, g.fields)
		if len(g.fields) > 0 {
			w.WriteByte(',')
		}
		w.WriteString(`"instances":[`)
		for n := 1; n <= g.count; n++ {
			if n > 1 {
				w.WriteByte(',')
			}
			if x, ok := g.byIndex[n-1]; ok {
				writeJSONFields(w, g.instances[x].fields)
			} else {
				w.WriteString("null")
			}
		}
		w.WriteString("]}")
	}
	w.WriteString("}")
	if p.Err != nil {
		fmt.Fprintf(w, `,"error":%s`, jsonString(p.Err.Error()))
	}
	_, err := w.WriteString("}\n")
	return err
}

// writeJSONFields writes one object: each field's value, or its values
// as an array when it occurs more than once.
func writeJSONFields(w *bufio.Writer, fvs []fieldValues) {
	w.WriteByte('{')
	writeJSONMembers(w, fvs)
	w.WriteByte('}')
}

// writeJSONMembers writes the members of writeJSONFields' object.
func writeJSONMembers(w *bufio.Writer, fvs []fieldValues) {
	for k, fv := range fvs {
		if k > 0 {
			w.WriteByte(',')
		}
		w.WriteString(jsonString(fv.f.Name))
		w.WriteByte(':')
		if len(fv.vals) == 1 {
			w.WriteString(jsonString(fv.f.Format(fv.vals[0])))
			continue
		}
		w.WriteByte('[')
		for n, val := range fv.vals {
			if n > 0 {
				w.WriteByte(',')
			}
			w.WriteString(jsonString(fv.f.Format(val)))
		}
		w.WriteByte(']')
	}
}

func (j *jsonWriter) Flush() error { return j.w.Flush() }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// WriteFieldList prints the field table (-G fields): name, type, base,
// protocol, label — tab-separated like tshark -G fields.
func WriteFieldList(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, f := range fields.Registry.Sorted() {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.Type, f.Base, f.Parent, f.Label)
	}
	return bw.Flush()
}
