package report

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// writeJSONStream writes v as json.Encoder with SetIndent("", "  ") and
// SetEscapeHTML(false) would, byte for byte, but without holding the whole
// document: structs and slices are written field by field and element by
// element, and only the values inside them (a string, a number, a map, a
// type with its own marshaller) are encoded whole. A report of thousands of
// connections used to be built two or three times over in memory before it
// was written, some 40 KB per connection (issue 13, docs/streaming.md).
func writeJSONStream(w io.Writer, v any) error {
	return writeJSONStreamLists(w, v, nil, nil)
}

// jsonList gives, for a struct value, the walk over the elements of one of
// its list fields that is written in the field's place; nil: the field's
// own value is written.
type jsonList func(v reflect.Value) func(put func(elem reflect.Value)) error

// walkList is the element walk of a walk over *T.
func walkList[T any](each func(fn func(*T) error) error) func(put func(reflect.Value)) error {
	return func(put func(reflect.Value)) error {
		return each(func(x *T) error {
			put(reflect.ValueOf(x).Elem())
			return nil
		})
	}
}

// writeJSONStreamLists is writeJSONStream with the list fields of the
// structs of type of in v that lists names written from the walks they
// give: a document whose connections were spilled, read back as they are
// written (analyze_spill.go, findings_spill.go).
func writeJSONStreamLists(w io.Writer, v any, of reflect.Type, lists map[string]jsonList) error {
	return writeJSONStreamMore(w, v, of, lists, nil)
}

// jsonMember is a member written after the fields of the document's
// top-level object: what encoding/json writes of a struct that embeds the
// document and then has that field (capture's document, Analysis.WriteJSONWith).
type jsonMember struct {
	key   string
	value any
}

// writeJSONStreamMore is writeJSONStreamLists with the members more after
// the top-level object's own.
func writeJSONStreamMore(w io.Writer, v any, of reflect.Type, lists map[string]jsonList, more []jsonMember) error {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10), listsOf: of, more: more}
	for name, l := range lists {
		f, ok := of.FieldByName(name)
		if !ok {
			panic("report: no field " + name + " in " + of.String())
		}
		if s.lists == nil {
			s.lists = map[int]jsonList{}
		}
		s.lists[f.Index[0]] = l
	}
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
	num []byte // scratch for numbers
	// lists are the list fields (by index) of the struct type listsOf
	// written from walks (writeJSONStreamLists).
	listsOf reflect.Type
	lists   map[int]jsonList
	// more are written after the fields of the top-level object
	// (writeJSONStreamMore).
	more []jsonMember
}

// jsonStreamer writes its own value, at the nesting whose lines start with
// prefix (a list too long to hold, transactions_spill.go).
type jsonStreamer interface {
	streamJSON(s *jsonStream, prefix string)
}

// list writes the elements each hands to put as value writes a slice of
// them, at the nesting of prefix, and empty ("[]" or "null") when there
// is none: the lists made as they are written (jsonStreamer).
func (s *jsonStream) list(prefix, empty string, each func(put func(elem reflect.Value)) error) {
	n := 0
	err := each(func(elem reflect.Value) {
		if n == 0 {
			s.w.WriteString("[\n")
		} else {
			s.w.WriteString(",\n")
		}
		n++
		s.w.WriteString(prefix + "  ")
		s.value(elem, prefix+"  ")
	})
	if err != nil && s.err == nil {
		s.err = err
	}
	if n == 0 {
		s.w.WriteString(empty)
		return
	}
	s.w.WriteString("\n" + prefix + "]")
}

var jsonStreamerType = reflect.TypeFor[jsonStreamer]()

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// leafKind is how a value written whole is encoded: the common scalars
// directly, the way encoding/json writes them, anything else through
// json.Encoder. A transaction list of 12,000 entries made ~500,000 leaves,
// and an Encoder call (reflection, SetIndent, a copy) for each was most of
// `transactions --format json`'s time.
type leafKind uint8

const (
	leafEncoder leafKind = iota
	leafString
	leafBool
	leafInt
	leafUint
	leafFloat64
	leafText // a value-receiver encoding.TextMarshaler: its text as a string
)

// jsType is what the stream needs to know of a type, worked out once.
type jsType struct {
	streamer bool // implements jsonStreamer
	whole    bool // has a marshaller: encoded whole
	leaf     leafKind
	// ptrText: a pointer to a value-receiver TextMarshaler, written as
	// null or its element's text as json.Encoder would.
	ptrText bool
	// Structs: the fields encoding/json writes, with their keys encoded
	// ("name": ), or wholeStruct when the struct must be encoded whole
	// (embedded fields, the ,string option).
	fields      []jsField
	wholeStruct bool
}

type jsField struct {
	key       string // the JSON-encoded name, a colon and a space
	i         int
	omitEmpty bool
}

var jsTypes sync.Map // reflect.Type -> *jsType

func typeInfo(t reflect.Type) *jsType {
	if ti, ok := jsTypes.Load(t); ok {
		return ti.(*jsType)
	}
	ti := &jsType{streamer: t.Implements(jsonStreamerType), whole: marshals(t)}
	switch {
	case t.Implements(jsonMarshaler):
	case t.Implements(textMarshaler):
		if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
			ti.leaf = leafText
		}
	case reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler):
		// json.Encoder decides (it sees the value unaddressable).
	default:
		switch t.Kind() {
		case reflect.String:
			ti.leaf = leafString
		case reflect.Bool:
			ti.leaf = leafBool
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			ti.leaf = leafInt
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			ti.leaf = leafUint
		case reflect.Float64:
			ti.leaf = leafFloat64
		}
	}
	if t.Kind() == reflect.Struct {
		ti.structFields(t)
	}
	if e := t.Elem; t.Kind() == reflect.Pointer && !t.Implements(jsonMarshaler) &&
		e().Kind() != reflect.Pointer && e().Kind() != reflect.Interface &&
		!e().Implements(jsonMarshaler) && e().Implements(textMarshaler) {
		ti.ptrText = true
	}
	jsTypes.Store(t, ti)
	return ti
}

// structFields lists the fields as encoding/json names and tags them.
func (ti *jsType) structFields(t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			ti.wholeStruct = true
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
			ti.wholeStruct = true
			return
		}
		if name == "" {
			name = f.Name
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(name)
		ti.fields = append(ti.fields, jsField{
			key:       strings.TrimSuffix(b.String(), "\n") + ": ",
			i:         i,
			omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
		})
	}
}

// indent is the prefix one level deeper than prefix (prefixes are spaces).
func indent(prefix string) string {
	const spaces = "                                                                " +
		"                                                                "
	if n := len(prefix) + 2; n <= len(spaces) {
		return spaces[:n]
	}
	return prefix + "  "
}

// jsonPlain reports whether encoding/json writes s as it is between quotes
// (printable ASCII but '"' and '\\'; with SetEscapeHTML(false), <, > and &
// are printable too).
func jsonPlain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (s *jsonStream) leafAs(v reflect.Value, k leafKind, prefix string) {
	if s.err != nil {
		return
	}
	b := s.num[:0]
	switch k {
	case leafString:
		if str := v.String(); jsonPlain(str) {
			s.w.WriteByte('"')
			s.w.WriteString(str)
			s.w.WriteByte('"')
			return
		}
	case leafBool:
		if v.Bool() {
			s.w.WriteString("true")
		} else {
			s.w.WriteString("false")
		}
		return
	case leafInt:
		s.num = strconv.AppendInt(b, v.Int(), 10)
		s.w.Write(s.num)
		return
	case leafUint:
		s.num = strconv.AppendUint(b, v.Uint(), 10)
		s.w.Write(s.num)
		return
	case leafFloat64:
		// encoding/json's floatEncoder: ES6 number form.
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			break // the Encoder's error
		}
		format := byte('f')
		if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, f, format, -1, 64)
		if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		s.num = b
		s.w.Write(b)
		return
	case leafText:
		text, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err == nil && jsonPlain(text) {
			s.w.WriteByte('"')
			s.w.Write(text)
			s.w.WriteByte('"')
			return
		}
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
	ti := typeInfo(t)
	if ti.streamer {
		v.Interface().(jsonStreamer).streamJSON(s, prefix)
		return
	}
	if ti.ptrText {
		if v.IsNil() {
			s.w.WriteString("null")
		} else {
			s.leafAs(v.Elem(), leafText, prefix)
		}
		return
	}
	if ti.whole {
		s.leafAs(v, ti.leaf, prefix)
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
			s.leafAs(v, ti.leaf, prefix)
			return
		}
		s.w.WriteString("[\n")
		in := indent(prefix)
		for i := range v.Len() {
			s.w.WriteString(in)
			s.value(v.Index(i), in)
			if i < v.Len()-1 {
				s.w.WriteString(",")
			}
			s.w.WriteString("\n")
		}
		s.w.WriteString(prefix)
		s.w.WriteString("]")
	case reflect.Struct:
		s.object(v, ti, prefix)
	default:
		s.leafAs(v, ti.leaf, prefix)
	}
}

// object writes a struct field by field, as encoding/json names and omits
// them; a struct with embedded fields is encoded whole.
func (s *jsonStream) object(v reflect.Value, ti *jsType, prefix string) {
	if ti.wholeStruct {
		s.leafAs(v, leafEncoder, prefix)
		return
	}
	var more []jsonMember
	if prefix == "" { // the top-level object
		more, s.more = s.more, nil
	}
	last := -1 // the last field written
	for k, f := range ti.fields {
		if !f.omitEmpty || !emptyJSON(v.Field(f.i)) {
			last = k
		}
	}
	if last < 0 && len(more) == 0 {
		s.w.WriteString("{}")
		return
	}
	s.w.WriteString("{\n")
	in := indent(prefix)
	for k, f := range ti.fields[:last+1] {
		if f.omitEmpty && emptyJSON(v.Field(f.i)) {
			continue
		}
		s.w.WriteString(in)
		s.w.WriteString(f.key)
		s.field(v, f.i, in)
		if k < last || len(more) > 0 {
			s.w.WriteString(",")
		}
		s.w.WriteString("\n")
	}
	for k, m := range more {
		s.w.WriteString(in)
		s.value(reflect.ValueOf(m.key), in)
		s.w.WriteString(": ")
		s.value(reflect.ValueOf(m.value), in)
		if k < len(more)-1 {
			s.w.WriteString(",")
		}
		s.w.WriteString("\n")
	}
	s.w.WriteString(prefix)
	s.w.WriteString("}")
}

// field writes field i of struct v, at the nesting of prefix: from its
// walk, when it is a list writeJSONStreamLists was given one for, or as it
// is.
func (s *jsonStream) field(v reflect.Value, i int, prefix string) {
	if l := s.lists[i]; l != nil && v.Type() == s.listsOf {
		if walk := l(v); walk != nil {
			empty := "[]"
			if v.Field(i).IsNil() {
				empty = "null"
			}
			s.list(prefix, empty, walk)
			return
		}
	}
	s.value(v.Field(i), prefix)
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
