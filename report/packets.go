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
// "%5d %11.6f %s → %s %-7s %5d %s\n", built with strconv into a reused
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
	// The addresses as they are: padded to 15 columns each, an IPv4
	// address took 12 columns of spaces a line, and a wider one (IPv6, a
	// MAC) broke the alignment all the same (issue 31).
	b = fields.AppendSource(p, b)
	b = append(b, " → "...)
	b = fields.AppendDestination(p, b)
	b = append(b, ' ')
	b = padRight(len(b), 7, append(b, fields.Protocol(p)...))
	b = append(b, ' ')
	b = padLeft(len(b), 5, strconv.AppendInt(b, int64(p.Length), 10))
	b = append(b, ' ')
	b = fields.AppendEscaped(b, info)
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
	// gen: the packet that last used the group (collector).
	gen int
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

// collector walks the field table once per packet and groups the
// occurrences in p by protocol and, within a protocol, by instance. Hidden
// fields are left out, as tshark leaves them out of its tree. A writer
// keeps one and reuses its buffers from packet to packet: a packet's
// groups and values are valid until the next collect. (A new closure,
// slice and map per field and packet were ~700 allocations a packet, half
// of -V's and -T json's CPU.)
type collector struct {
	vals   []fields.Value     // every value of the packet, one after the other
	emit   func(fields.Value) // appends to vals; made once
	groups map[string]*group  // by name, kept from packet to packet
	used   []*group           // this packet's, in the order the walk found them
	out    []group
	gen    int // the packet being collected: a group last used in an earlier one is reset
	counts []kindCount
}

// kindCount caches Registry.Count for one kind of instance in this packet.
type kindCount struct {
	kind string
	n    int
}

func (c *collector) count(kind string, p *dissect.Packet) int {
	for _, k := range c.counts {
		if k.kind == kind {
			return k.n
		}
	}
	n := fields.Registry.Count(kind, p)
	c.counts = append(c.counts, kindCount{kind, n})
	return n
}

// groupOf returns f's group in this packet, reset at its first use.
func (c *collector) groupOf(f *fields.Field) *group {
	g := c.groups[f.Parent]
	if g == nil {
		if c.groups == nil {
			c.groups = map[string]*group{}
		}
		g = &group{name: f.Parent, title: fields.Registry.Title(f.Parent)}
		c.groups[f.Parent] = g
	}
	if g.gen != c.gen {
		g.gen = c.gen
		g.fields = g.fields[:0]
		g.instances = g.instances[:0]
		clear(g.byIndex)
		g.kind, g.count = "", 0
		c.used = append(c.used, g)
	}
	return g
}

// collect returns p's groups, outermost protocol first.
func (c *collector) collect(p *dissect.Packet) []group {
	if c.emit == nil {
		c.emit = func(v fields.Value) { c.vals = append(c.vals, v) }
	}
	c.gen++
	c.vals, c.used, c.out, c.counts = c.vals[:0], c.used[:0], c.out[:0], c.counts[:0]
	for _, f := range fields.Registry.All() {
		if f.Get == nil || f.Hidden || f.InTree != nil && !f.InTree(p) {
			continue
		}
		if f.At == nil {
			start := len(c.vals)
			f.Get(p, c.emit)
			if len(c.vals) > start {
				g := c.groupOf(f)
				g.fields = append(g.fields, fieldValues{f, c.vals[start:len(c.vals):len(c.vals)]})
			}
			continue
		}
		n := c.count(f.Per, p)
		for i := 0; i < n; i++ {
			start := len(c.vals)
			f.At(p, i, c.emit)
			if len(c.vals) == start {
				continue
			}
			vals := c.vals[start:len(c.vals):len(c.vals)]
			g := c.groupOf(f)
			g.kind, g.count = f.Per, max(g.count, n)
			if g.byIndex == nil {
				g.byIndex = map[int]int{}
			}
			k, ok := g.byIndex[i]
			if !ok {
				k = len(g.instances)
				g.byIndex[i] = k
				if k < cap(g.instances) {
					g.instances = g.instances[:k+1]
					g.instances[k].n, g.instances[k].fields = i+1, g.instances[k].fields[:0]
				} else {
					g.instances = append(g.instances, instance{n: i + 1})
				}
			}
			g.instances[k].fields = append(g.instances[k].fields, fieldValues{f, vals})
		}
	}
	for _, g := range c.used {
		c.out = append(c.out, *g)
	}
	sort.SliceStable(c.out, func(i, j int) bool {
		return fields.Registry.Rank(c.out[i].name) < fields.Registry.Rank(c.out[j].name)
	})
	return c.out
}

// repeated tells whether the group shows its instances apart: the packet
// holds more than one instance of their kind. The instances are then
// numbered as they are in the packet (FPDU #2 is the packet's second
// FPDU), also in a protocol that only some of them have.
func (g *group) repeated() bool { return g.count > 1 }

// flatInto appends to dst the group's fields with every instance's values
// joined, in table order (a group that does not repeat).
func (g *group) flatInto(dst []fieldValues) []fieldValues {
	dst = append(dst, g.fields...)
	for _, inst := range g.instances {
		dst = append(dst, inst.fields...)
	}
	return dst
}

// NewVerboseWriter prints every packet's full field tree (-V).
func NewVerboseWriter(w io.Writer) PacketWriter {
	return &verboseWriter{w: bufio.NewWriter(w)}
}

type verboseWriter struct {
	w    *bufio.Writer
	c    collector
	buf  []byte
	flat []fieldValues
	// only, when set, are the protocols whose fields are shown; the
	// others show their heading only (-O, packets_tshark.go).
	only map[string]bool
}

func (v *verboseWriter) WritePacket(p *dissect.Packet) error {
	fmt.Fprintf(v.w, "Packet %d: %d bytes on wire, %d captured, %s\n", p.Number, p.Length, p.CaptureLength,
		p.Timestamp.UTC().Format("2006-01-02 15:04:05.000000000 UTC"))
	fmt.Fprintf(v.w, "    %s → %s %s %s\n", fields.Source(p), fields.Destination(p), fields.Protocol(p), fields.Escape(fields.Info(p)))
	gs := v.c.collect(p)
	for i := 0; i < len(gs); {
		g := &gs[i]
		if g.name == "frame" {
			i++
			continue
		}
		if !g.repeated() {
			v.heading(g.title, 0)
			if v.detail(g.name) {
				v.flat = g.flatInto(v.flat[:0])
				v.fields(v.flat)
			}
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
				v.heading(run[k].title, 0)
				if v.detail(run[k].name) {
					v.fields(run[k].fields)
				}
			}
		}
		for n := 1; n <= g.count; n++ {
			for k := range run {
				if x, ok := run[k].byIndex[n-1]; ok {
					v.heading(run[k].title, n)
					if v.detail(run[k].name) {
						v.fields(run[k].instances[x].fields)
					}
				}
			}
		}
		i = j
	}
	if p.Err != nil {
		fmt.Fprintf(v.w, "  [Malformed: %s]\n", fields.Escape(p.Err.Error()))
	}
	_, err := v.w.WriteString("\n")
	return err
}

// heading writes a group's line: "  %s\n", or "  %s #%d\n" of instance
// n when n > 0.
func (v *verboseWriter) heading(title string, n int) {
	b := append(v.buf[:0], "  "...)
	b = append(b, title...)
	if n > 0 {
		b = append(b, " #"...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, '\n')
	v.w.Write(b)
	v.buf = b
}

func (v *verboseWriter) fields(fvs []fieldValues) {
	for _, fv := range fvs {
		for _, val := range fv.vals {
			// "      %s: %s\n" of the label and Display, appended.
			b := append(v.buf[:0], "      "...)
			b = append(b, fv.f.Label...)
			b = append(b, ": "...)
			b = fv.f.AppendDisplay(b, val)
			b = append(b, '\n')
			v.w.Write(b)
			v.buf = b
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

type jsonWriter struct {
	w    *bufio.Writer
	c    collector
	buf  []byte
	flat []fieldValues
}

func (j *jsonWriter) WritePacket(p *dissect.Packet) error {
	w := j.w
	fmt.Fprintf(w, `{"number":%d,"time":%q,"length":%d,"captured":%d,"source":%s,"destination":%s,"protocol":%s,"info":%s,"layers":{`,
		p.Number, p.Timestamp.UTC().Format("2006-01-02T15:04:05.000000000Z"), p.Length, p.CaptureLength,
		jsonString(fields.Source(p)), jsonString(fields.Destination(p)), jsonString(fields.Protocol(p)), jsonString(fields.Info(p)))
	for i, g := range j.c.collect(p) {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, g.name)
		w.WriteByte(':')
		if !g.repeated() {
			j.flat = g.flatInto(j.flat[:0])
			writeJSONFields(w, &j.buf, j.flat)
			continue
		}
		w.WriteByte('{')
		writeJSONMembers(w, &j.buf, g.fields)
		if len(g.fields) > 0 {
			w.WriteByte(',')
		}
		w.WriteString(`"instances":[`)
		for n := 1; n <= g.count; n++ {
			if n > 1 {
				w.WriteByte(',')
			}
			if x, ok := g.byIndex[n-1]; ok {
				writeJSONFields(w, &j.buf, g.instances[x].fields)
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
func writeJSONFields(w *bufio.Writer, buf *[]byte, fvs []fieldValues) {
	w.WriteByte('{')
	writeJSONMembers(w, buf, fvs)
	w.WriteByte('}')
}

// writeJSONMembers writes the members of writeJSONFields' object.
func writeJSONMembers(w *bufio.Writer, buf *[]byte, fvs []fieldValues) {
	for k, fv := range fvs {
		if k > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, fv.f.Name)
		w.WriteByte(':')
		if len(fv.vals) == 1 {
			*buf = fv.f.AppendFormat((*buf)[:0], fv.vals[0])
			writeJSONBytes(w, *buf)
			continue
		}
		w.WriteByte('[')
		for n, val := range fv.vals {
			if n > 0 {
				w.WriteByte(',')
			}
			*buf = fv.f.AppendFormat((*buf)[:0], val)
			writeJSONBytes(w, *buf)
		}
		w.WriteByte(']')
	}
}

func (j *jsonWriter) Flush() error { return j.w.Flush() }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// marshalPlain reports whether json.Marshal writes s as it is between
// quotes: printable ASCII without '"', '\\' or the HTML characters it
// escapes (<, >, &).
func marshalPlain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// writeJSONString writes s as json.Marshal does.
func writeJSONString(w *bufio.Writer, s string) {
	if !marshalPlain(s) {
		w.WriteString(jsonString(s))
		return
	}
	w.WriteByte('"')
	w.WriteString(s)
	w.WriteByte('"')
}

// writeJSONBytes writes the string in b as json.Marshal does.
func writeJSONBytes(w *bufio.Writer, b []byte) {
	if !marshalPlain(b) {
		w.WriteString(jsonString(string(b)))
		return
	}
	w.WriteByte('"')
	w.Write(b)
	w.WriteByte('"')
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
