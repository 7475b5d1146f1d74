package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
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

type summaryWriter struct{ w *bufio.Writer }

func (s *summaryWriter) WritePacket(p *dissect.Packet) error {
	_, err := fmt.Fprintf(s.w, "%5d %11.6f %15s → %-15s %-7s %5d %s\n",
		p.Number, p.RelTime.Seconds(), p.Source(), p.Destination(), p.Protocol(), p.Length, p.Info())
	return err
}

func (s *summaryWriter) Flush() error { return s.w.Flush() }

// NewFieldsWriter prints the named fields of every packet separated by tabs,
// several occurrences of one field separated by commas, as tshark -T fields
// -E occurrence=a does. Unknown names are an error before anything runs.
func NewFieldsWriter(w io.Writer, names []string, header bool) (PacketWriter, error) {
	fw := &fieldsWriter{w: bufio.NewWriter(w)}
	for _, n := range names {
		f, ok := dissect.Fields.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("unknown field %q (rdmashark dissect -G fields lists them)", n)
		}
		fw.fields = append(fw.fields, f)
	}
	if header {
		fmt.Fprintln(fw.w, strings.Join(names, "\t"))
	}
	return fw, nil
}

type fieldsWriter struct {
	w      *bufio.Writer
	fields []*dissect.Field
	vals   []string
}

func (fw *fieldsWriter) WritePacket(p *dissect.Packet) error {
	for i, f := range fw.fields {
		if i > 0 {
			fw.w.WriteByte('\t')
		}
		fw.vals = f.Values(p, fw.vals[:0])
		for j, v := range fw.vals {
			if j > 0 {
				fw.w.WriteByte(',')
			}
			fw.w.WriteString(v)
		}
	}
	return fw.w.WriteByte('\n')
}

func (fw *fieldsWriter) Flush() error { return fw.w.Flush() }

// group is one protocol's fields present in a packet, in table order.
type group struct {
	name   string
	title  string
	fields []fieldValues
}

type fieldValues struct {
	f    *dissect.Field
	vals []dissect.Value
}

// collect walks the field table once and groups the occurrences in p.
func collect(p *dissect.Packet) []group {
	var out []group
	for _, f := range dissect.Fields.All() {
		if f.Get == nil {
			continue
		}
		var vals []dissect.Value
		f.Get(p, func(v dissect.Value) { vals = append(vals, v) })
		if len(vals) == 0 {
			continue
		}
		if len(out) == 0 || out[len(out)-1].name != f.Parent {
			out = append(out, group{name: f.Parent, title: dissect.Fields.Title(f.Parent)})
		}
		g := &out[len(out)-1]
		g.fields = append(g.fields, fieldValues{f, vals})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return dissect.Fields.Rank(out[i].name) < dissect.Fields.Rank(out[j].name)
	})
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
	fmt.Fprintf(v.w, "    %s → %s %s %s\n", p.Source(), p.Destination(), p.Protocol(), p.Info())
	for _, g := range collect(p) {
		if g.name == "frame" {
			continue
		}
		fmt.Fprintf(v.w, "  %s\n", g.title)
		for _, fv := range g.fields {
			for _, val := range fv.vals {
				fmt.Fprintf(v.w, "      %s: %s\n", fv.f.Label, fv.f.Display(val))
			}
		}
	}
	if p.Err != nil {
		fmt.Fprintf(v.w, "  [Malformed: %v]\n", p.Err)
	}
	_, err := v.w.WriteString("\n")
	return err
}

func (v *verboseWriter) Flush() error { return v.w.Flush() }

// NewJSONWriter prints one JSON object per packet, one per line:
// {"number", "time", "length", "summary", "layers": {"<protocol>": {"<field>": value or [values]}}}.
func NewJSONWriter(w io.Writer) PacketWriter {
	return &jsonWriter{w: bufio.NewWriter(w)}
}

type jsonWriter struct{ w *bufio.Writer }

func (j *jsonWriter) WritePacket(p *dissect.Packet) error {
	w := j.w
	fmt.Fprintf(w, `{"number":%d,"time":%q,"length":%d,"captured":%d,"source":%s,"destination":%s,"protocol":%s,"info":%s,"layers":{`,
		p.Number, p.Timestamp.UTC().Format("2006-01-02T15:04:05.000000000Z"), p.Length, p.CaptureLength,
		jsonString(p.Source()), jsonString(p.Destination()), jsonString(p.Protocol()), jsonString(p.Info()))
	for i, g := range collect(p) {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "%s:{", jsonString(g.name))
		for k, fv := range g.fields {
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
		w.WriteByte('}')
	}
	w.WriteString("}")
	if p.Err != nil {
		fmt.Fprintf(w, `,"error":%s`, jsonString(p.Err.Error()))
	}
	_, err := w.WriteString("}\n")
	return err
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
	for _, f := range dissect.Fields.Sorted() {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.Type, f.Base, f.Parent, f.Label)
	}
	return bw.Flush()
}
