package export

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// Format is the files' format.
type Format string

const (
	Parquet Format = "parquet"
	NDJSON  Format = "ndjson"
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Parquet, NDJSON:
		return Format(s), nil
	}
	return "", fmt.Errorf("format must be parquet or ndjson, not %q", s)
}

// DefaultRowGroupRows is the rows a Parquet row group (and the buffer of an
// NDJSON file) holds before it is written out.
const DefaultRowGroupRows = 64 * 1024

// PageBufferSize is the size of a Parquet data page before encoding and
// compression: what the writer buffers of every column of a table until it
// writes a page. The writers of the tables filled during the read
// (transactions: 36 columns, nvme_commands: 38, exchanges: 25, rdma_ops:
// 17, packets: 15) hold one such buffer per column at once, in pooled slices up to 1.6 times as large,
// and the Go heap is let to grow to twice what is live: at parquet-go's
// default (256 KiB) that was about 45 MiB of resident memory at the
// largest. 64 KiB pages (8,192 INT64 values, still several pages per
// column chunk) take a quarter of it; the files are about an eighth
// larger (smaller pages compress a little less well).
const PageBufferSize = 64 << 10

// DefaultLabel is the label of an export without --label.
const DefaultLabel = "unlabelled"

// Config is where and how an export is written.
type Config struct {
	// Dir is the export's root: DIR/TABLE/label=LABEL/part-N.EXT.
	Dir    string
	Format Format
	// Label marks every row and names the partition (a host, a run).
	Label string
	// Packets adds the packets table (one row per packet).
	Packets bool
	// RowGroupRows bounds the rows buffered per table (default
	// DefaultRowGroupRows).
	RowGroupRows int
	// Version is rdmashark's version, written into the metadata.
	Version string
	// Replace makes Reserve remove what an earlier export wrote under the
	// same label (every table's DIR/TABLE/label=LABEL) before this one
	// writes: re-exporting the same captures then does not add their rows
	// a second time. Other labels are left alone.
	Replace bool
}

func (c *Config) fill() {
	if c.Label == "" {
		c.Label = DefaultLabel
	}
	if c.RowGroupRows <= 0 {
		c.RowGroupRows = DefaultRowGroupRows
	}
	if c.Format == "" {
		c.Format = Parquet
	}
}

// PartitionDir is the directory of a table's files for a label:
// DIR/TABLE/label=VALUE, VALUE escaped as Hive escapes partition values
// (%XX for every octet but letters, digits and . _ -).
func PartitionDir(dir, table, label string) string {
	return filepath.Join(dir, table, "label="+escapeLabel(label))
}

func escapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.' && i > 0, c == '_', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

var partRE = regexp.MustCompile(`^part-([0-9]+)\.`)

// Reserve prepares an export of n captures into cfg.Dir: it creates the
// partition directories of every table and returns the first part number
// free in all of them, so that capture i of this export writes part
// first+i and an export into a directory that already holds one adds files
// instead of overwriting them (first > 0 then: the label already holds
// rows, and a capture exported again has them twice, unless cfg.Replace
// removed them). It writes DIR/_rdmashark_export.json, which names the
// schema version.
func Reserve(cfg Config, n int) (first int, err error) {
	cfg.fill()
	for _, t := range Tables {
		if t == TablePackets && !cfg.Packets {
			continue
		}
		d := PartitionDir(cfg.Dir, t, cfg.Label)
		if cfg.Replace {
			if err := os.RemoveAll(d); err != nil {
				return 0, err
			}
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return 0, err
		}
		for _, e := range ents {
			if m := partRE.FindStringSubmatch(e.Name()); m != nil {
				if k, err := strconv.Atoi(m[1]); err == nil && k+1 > first {
					first = k + 1
				}
			}
		}
	}
	man := struct {
		SchemaVersion int      `json:"schema_version"`
		Tables        []string `json:"tables"`
		Format        Format   `json:"format"`
		Writer        string   `json:"writer"`
	}{SchemaVersion, Tables, cfg.Format, "rdmashark " + cfg.Version}
	b, _ := json.MarshalIndent(man, "", "  ")
	return first, os.WriteFile(filepath.Join(cfg.Dir, "_rdmashark_export.json"), append(b, '\n'), 0o644)
}

// table writes one table's rows for one capture, buffering up to a row
// group.
type table[T any] struct {
	path string // the part file, once complete
	tmp  string // where it is written until then
	f    *os.File
	bw   *bufio.Writer
	pw   *parquet.GenericWriter[T] // Parquet
	enc  *json.Encoder             // NDJSON
	buf  []T
	max  int
	rows int64
	// closed: written out and closed (close does nothing more).
	closed bool
}

func newTable[T any](cfg *Config, name string, part int, capture string) (*table[T], error) {
	ext := ".parquet"
	if cfg.Format == NDJSON {
		ext = ".ndjson"
	}
	dir, base := PartitionDir(cfg.Dir, name, cfg.Label), "part-"+strconv.Itoa(part)+ext
	path := filepath.Join(dir, base)
	if _, err := os.Lstat(path); err == nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	// Written under a hidden temporary name that no dataset reader takes
	// for a part (".part-N.parquet.RANDOM.tmp"), moved to its name when
	// complete (close): a failed export — a full disk — leaves no 0-byte
	// or truncated part file to break a later read of the dataset.
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(rnd[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	t := &table[T]{path: path, tmp: tmp, f: f}
	if cfg.Format == NDJSON {
		t.bw = bufio.NewWriterSize(f, 64<<10)
		t.enc = json.NewEncoder(t.bw)
		t.max = 1024
	} else {
		// The Parquet writer buffers its output itself (32 KiB) and
		// writes a row group's pages in large writes.
		t.pw = parquet.NewGenericWriter[T](f,
			parquet.Compression(&snappy.Codec{}),
			parquet.MaxRowsPerRowGroup(int64(cfg.RowGroupRows)),
			parquet.PageBufferSize(PageBufferSize),
			parquet.CreatedBy("rdmashark", cfg.Version, ""),
			parquet.KeyValueMetadata(MetadataKey, strconv.Itoa(SchemaVersion)),
			parquet.KeyValueMetadata("rdmashark.table", name),
			parquet.KeyValueMetadata("rdmashark.capture", capture),
			parquet.KeyValueMetadata("rdmashark.label", cfg.Label),
			parquet.KeyValueMetadata("rdmashark.written", time.Now().UTC().Format(time.RFC3339)),
		)
		// Rows go to the writer in batches; it cuts row groups at
		// RowGroupRows.
		t.max = 512
	}
	return t, nil
}

func (t *table[T]) add(row T) error {
	if t.buf == nil {
		// Made at the first row: most tables get theirs at the end.
		t.buf = make([]T, 0, t.max)
	}
	t.buf = append(t.buf, row)
	t.rows++
	if len(t.buf) >= t.max {
		return t.flush()
	}
	return nil
}

func (t *table[T]) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	var err error
	if t.enc != nil {
		for i := range t.buf {
			if err = t.enc.Encode(&t.buf[i]); err != nil {
				// Encode wrote nothing: a timestamp past year 9999?
				err = encodeWideTimes(t.bw, &t.buf[i], err)
			}
			if err != nil {
				break
			}
		}
	} else {
		_, err = t.pw.Write(t.buf)
	}
	clear(t.buf)
	t.buf = t.buf[:0]
	if err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	return nil
}

func (t *table[T]) close() error {
	if t == nil || t.closed {
		return nil
	}
	t.closed = true
	err := t.flush()
	if t.pw != nil {
		if cerr := t.pw.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", t.path, cerr)
		}
	}
	if t.bw != nil {
		if ferr := t.bw.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("%s: %w", t.path, ferr)
		}
	}
	if err == nil {
		if serr := t.f.Sync(); serr != nil {
			err = fmt.Errorf("%s: %w", t.path, serr)
		}
	}
	if cerr := t.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", t.path, cerr)
	}
	if err == nil {
		err = commitPart(t.tmp, t.path)
	}
	if err != nil {
		os.Remove(t.tmp)
	}
	// What the table held goes now, not when the Capture does.
	t.buf, t.pw, t.enc, t.bw = nil, nil, nil, nil
	return err
}

// commitPart gives the complete temporary file tmp its part name, never
// replacing a part file there (another export into the same directory):
// a hard link then the temporary name's removal, or a rename where links
// are not supported once the name is seen free.
func commitPart(tmp, path string) error {
	err := os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Lstat(path); serr == nil {
			err = &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		} else {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	os.Remove(tmp)
	return nil
}

// remove closes and deletes the table's file, complete or not: a capture
// that could not be read, or whose export failed.
func (t *table[T]) remove() error {
	if !t.closed {
		t.closed = true
		t.f.Close()
		return os.Remove(t.tmp)
	}
	os.Remove(t.tmp) // gone already unless close failed
	if err := os.Remove(t.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

type closer interface {
	close() error
	remove() error
	rowCount() int64
}

func (t *table[T]) rowCount() int64 { return t.rows }

func closeAll(ts ...closer) error {
	var errs []error
	for _, t := range ts {
		errs = append(errs, t.close())
	}
	return errors.Join(errs...)
}

// encodeWideTimes writes the NDJSON line of *row, a table's row struct,
// whose time.Time or *time.Time field holds a year encoding/json refuses
// (past 9999, or before year 0: a pcapng timestamp can be that large,
// issue 29 point 7) — Parquet writes those times, so NDJSON must too. The
// field is written as time.Format(time.RFC3339Nano) prints it
// ("12000-01-01T00:00:00Z"). encErr is returned when no field explains it.
func encodeWideTimes(w io.Writer, row any, encErr error) error {
	v := reflect.ValueOf(row).Elem()
	cp := reflect.New(v.Type()).Elem()
	cp.Set(v)
	type wide struct{ key, text string }
	var wides []wide
	for i := 0; i < cp.NumField(); i++ {
		f, sf := cp.Field(i), cp.Type().Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if key == "" || key == "-" || !f.CanSet() {
			continue
		}
		var tm *time.Time
		switch x := f.Addr().Interface().(type) {
		case *time.Time:
			tm = x
		case **time.Time:
			tm = *x
		}
		if tm == nil || (tm.Year() >= 0 && tm.Year() <= 9999) {
			continue
		}
		wides = append(wides, wide{key, tm.Format(time.RFC3339Nano)})
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.ValueOf(&time.Time{}))
		} else {
			f.Set(reflect.ValueOf(time.Time{}))
		}
	}
	if len(wides) == 0 {
		return encErr
	}
	b, err := json.Marshal(cp.Addr().Interface())
	if err != nil {
		return err
	}
	zero, _ := json.Marshal(time.Time{})
	for _, x := range wides {
		text, _ := json.Marshal(x.text)
		k, _ := json.Marshal(x.key)
		b = bytes.Replace(b, append(append(k, ':'), zero...), append(append(k, ':'), text...), 1)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
