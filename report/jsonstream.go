package report

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// writeJSONStream writes v as json.Encoder with SetIndent("", "  ") and
// SetEscapeHTML(false) would, byte for byte, but without holding the whole
// document: structs and slices are written field by field and element by
// element, and only the values inside them (a string, a number, a map, a
// type with its own marshaller) are encoded whole. A report of thousands of
// connections used to be built two or three times over in memory before it
// was written, some 40 KB per connection (issue 13, docs/streaming.md).
func writeJSONStream(w io.Writer, v any) error {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.value(reflect.ValueOf(v), "")
	s.w.WriteString("\n")
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

// jsonStreamer writes its own value, at the nesting whose lines start with
// prefix (a list too long to hold, transactions_spill.go).
type jsonStreamer interface {
	streamJSON(s *jsonStream, prefix string)
}

var jsonStreamerType = reflect.TypeFor[jsonStreamer]()

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// leaf encodes v whole, its lines after the first starting with prefix.
func (s *jsonStream) leaf(v reflect.Value, prefix string) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	s.enc.SetIndent(prefix, "  ")
	if err := s.enc.Encode(v.Interface()); err != nil {
		s.err = err
		return
	}
	s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

func marshals(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

// value writes v at the nesting whose lines start with prefix.
func (s *jsonStream) value(v reflect.Value, prefix string) {
	if s.err != nil {
		return
	}
	if !v.IsValid() {
		s.w.WriteString("null")
		return
	}
	t := v.Type()
	if t.Implements(jsonStreamerType) {
		v.Interface().(jsonStreamer).streamJSON(s, prefix)
		return
	}
	if marshals(t) {
		s.leaf(v, prefix)
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			s.w.WriteString("null")
			return
		}
		s.value(v.Elem(), prefix)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 || v.IsNil() || v.Len() == 0 {
			s.leaf(v, prefix)
			return
		}
		s.w.WriteString("[\n")
		for i := range v.Len() {
			s.w.WriteString(prefix + "  ")
			s.value(v.Index(i), prefix+"  ")
			if i < v.Len()-1 {
				s.w.WriteString(",")
			}
			s.w.WriteString("\n")
		}
		s.w.WriteString(prefix + "]")
	case reflect.Struct:
		s.object(v, prefix)
	default:
		s.leaf(v, prefix)
	}
}

// object writes a struct field by field, as encoding/json names and omits
// them; a struct with embedded fields is encoded whole.
func (s *jsonStream) object(v reflect.Value, prefix string) {
	t := v.Type()
	type field struct {
		name string
		i    int
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			s.leaf(v, prefix)
			return
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			s.leaf(v, prefix)
			return
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && emptyJSON(v.Field(i)) {
			continue
		}
		fields = append(fields, field{name, i})
	}
	if len(fields) == 0 {
		s.w.WriteString("{}")
		return
	}
	s.w.WriteString("{\n")
	for k, f := range fields {
		s.w.WriteString(prefix + "  ")
		s.leaf(reflect.ValueOf(f.name), "")
		s.w.WriteString(": ")
		s.value(v.Field(f.i), prefix+"  ")
		if k < len(fields)-1 {
			s.w.WriteString(",")
		}
		s.w.WriteString("\n")
	}
	s.w.WriteString(prefix + "}")
}

// emptyJSON is encoding/json's omitempty test.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
