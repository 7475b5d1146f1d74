package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/pcapwrite"
)

// TestExportYearPast9999 (issue 29 point 7): a pcapng whose timestamps are
// past year 9999 made export --format ndjson fail with an encoder error,
// while Parquet wrote them. Every format writes them now; NDJSON as Go's
// RFC 3339 form with a five-digit year.
func TestExportYearPast9999(t *testing.T) {
	data, err := os.ReadFile(rpingPcap)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "future.pcapng")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapwrite.NewWriter(f, "test")
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.AddInterface(pcapwrite.Interface{LinkType: 1})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	offs := pcapRecords(t, data)
	for i, off := range offs[:5] {
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		if err := w.WritePacket(id, base.Add(time.Duration(i)*time.Millisecond), data[off+16:off+16+n], n); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// 12000-01-01 does not fit 64 bits of nanoseconds: the interface's
	// if_tsresol becomes 6 (microseconds), every EPB's timestamp that date.
	b, _ := os.ReadFile(name)
	if !setTsresol6(b) {
		t.Fatal("no if_tsresol option in the IDB")
	}
	ts := uint64(time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) * 1e6
	patched := 0
	for off := 0; off+12 <= len(b); {
		typ, size := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if typ == 6 { // EPB: interface, timestamp high, timestamp low
			binary.LittleEndian.PutUint32(b[off+12:], uint32(ts>>32))
			binary.LittleEndian.PutUint32(b[off+16:], uint32(ts))
			patched++
		}
		off += size
	}
	if patched != 5 {
		t.Fatalf("%d EPBs patched", patched)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"ndjson", "parquet"} {
		out := filepath.Join(dir, format)
		if code, o, errs := runCmd(t, "export", "--packets", "--format", format, "-o", out, name); code != 0 {
			t.Fatalf("--format %s: exit %d\n%s%s", format, code, o, errs)
		}
	}
	pf, err := os.Open(filepath.Join(dir, "ndjson", "packets", "label=unlabelled", "part-0.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	sc := bufio.NewScanner(pf)
	rows := 0
	for sc.Scan() {
		var row struct {
			Time string `json:"time"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v: %s", rows+1, err, sc.Bytes())
		}
		if !strings.HasPrefix(row.Time, "12000-01-01T00:00:00") {
			t.Errorf("line %d: time %q", rows+1, row.Time)
		}
		rows++
	}
	if rows != 5 {
		t.Errorf("%d packet rows, want 5", rows)
	}
}

// setTsresol6 sets the if_tsresol option of the first IDB to 6.
func setTsresol6(b []byte) bool {
	for off := 0; off+12 <= len(b); {
		typ, size := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if typ == 1 {
			for o := off + 16; o+4 <= off+size-4; {
				code, l := binary.LittleEndian.Uint16(b[o:]), int(binary.LittleEndian.Uint16(b[o+2:]))
				if code == 0 {
					break
				}
				if code == 9 && l == 1 {
					b[o+4] = 6
					return true
				}
				o += 4 + (l+3)&^3
			}
			return false
		}
		off += size
	}
	return false
}
