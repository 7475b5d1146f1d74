package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// FieldsOptions are tshark's -E options of -T fields.
type FieldsOptions struct {
	BOM        bool   // bom=y: a UTF-8 byte-order mark first
	Header     bool   // header=y: the field names first
	Separator  string // between fields (tshark's default: a tab)
	Aggregator string // between occurrences of one field (default ",")
	Quote      byte   // 0, '"' or '\'': around every non-empty field
	// Occurrence chooses which occurrences are printed: 0 all, 1 the
	// first, -1 the last (tshark's a, f and l).
	Occurrence int
	// TimeFormat is -t's format of _ws.col.Time (timefmt.go; "" or "r":
	// relative to the first packet).
	TimeFormat string
}

// NewFieldsWriterOptions is NewFieldsWriter with tshark's -E options.
func NewFieldsWriterOptions(w io.Writer, names []string, o FieldsOptions) (PacketWriter, error) {
	if o.Separator == "" {
		o.Separator = "\t"
	}
	if o.Aggregator == "" {
		o.Aggregator = ","
	}
	fw := &optFieldsWriter{w: bufio.NewWriter(w), o: o}
	if o.BOM {
		fw.w.WriteString("\uFEFF")
	}
	for _, n := range names {
		f, ok := fields.Registry.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("unknown field %q (rdmashark dissect -G fields lists them)", n)
		}
		if n == "_ws.col.Time" && o.TimeFormat != "" && o.TimeFormat != "r" {
			f = timeColumnField(f, o.TimeFormat) // packets_tshark.go
		}
		fw.fields = append(fw.fields, f)
	}
	if o.Header {
		for i, n := range names {
			if i > 0 {
				fw.w.WriteString(o.Separator)
			}
			fw.w.WriteString(n)
		}
		fw.w.WriteByte('\n')
	}
	return fw, nil
}

type optFieldsWriter struct {
	w      *bufio.Writer
	o      FieldsOptions
	fields []*fields.Field
	// The line is built in one reused buffer, every value appended with
	// Field.AppendFormat (no string per value); vals holds the current
	// field's occurrences, gathered by collect (a method value made once:
	// a closure per field and packet would be allocated).
	line    []byte
	vals    []fields.Value
	collect func(fields.Value)
	// With every occurrence printed (-E occurrence=a, the default) the
	// values are appended as they come, by direct (no copy of each Value
	// into vals and out again): cur is the field, n its count so far.
	direct func(fields.Value)
	cur    *fields.Field
	n      int
}

func (fw *optFieldsWriter) add(v fields.Value) { fw.vals = append(fw.vals, v) }

func (fw *optFieldsWriter) appendNext(v fields.Value) {
	if fw.n == 0 {
		if fw.o.Quote != 0 {
			fw.line = append(fw.line, fw.o.Quote)
		}
	} else {
		fw.line = append(fw.line, fw.o.Aggregator...)
	}
	fw.n++
	fw.line = fw.cur.AppendText(fw.line, v)
}

func (fw *optFieldsWriter) WritePacket(p *dissect.Packet) error {
	if fw.collect == nil {
		fw.collect, fw.direct = fw.add, fw.appendNext
	}
	if fw.o.Occurrence == 0 {
		return fw.writeAll(p)
	}
	b := fw.line[:0]
	for i, f := range fw.fields {
		if i > 0 {
			b = append(b, fw.o.Separator...)
		}
		if f.Get == nil {
			continue
		}
		fw.vals = fw.vals[:0]
		f.Get(p, fw.collect)
		vals := fw.vals
		switch n := fw.o.Occurrence; {
		case n > 0 && n <= len(vals):
			vals = vals[n-1 : n]
		case n > 0:
			vals = nil
		case n < 0 && len(vals) > 0:
			vals = vals[len(vals)-1:]
		}
		if len(vals) == 0 {
			continue
		}
		if fw.o.Quote != 0 {
			b = append(b, fw.o.Quote)
		}
		for j, v := range vals {
			if j > 0 {
				b = append(b, fw.o.Aggregator...)
			}
			b = f.AppendText(b, v)
		}
		if fw.o.Quote != 0 {
			b = append(b, fw.o.Quote)
		}
	}
	b = append(b, '\n')
	fw.line = b
	_, err := fw.w.Write(b)
	return err
}

// writeAll is WritePacket with every occurrence printed.
func (fw *optFieldsWriter) writeAll(p *dissect.Packet) error {
	fw.line = fw.line[:0]
	for i, f := range fw.fields {
		if i > 0 {
			fw.line = append(fw.line, fw.o.Separator...)
		}
		if f.Get == nil {
			continue
		}
		fw.cur, fw.n = f, 0
		f.Get(p, fw.direct)
		if fw.n > 0 && fw.o.Quote != 0 {
			fw.line = append(fw.line, fw.o.Quote)
		}
	}
	fw.line = append(fw.line, '\n')
	_, err := fw.w.Write(fw.line)
	return err
}

func (fw *optFieldsWriter) Flush() error { return fw.w.Flush() }
