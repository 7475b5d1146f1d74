package connspill

import (
	"fmt"
	"slices"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// testDoc is a document: its ID, padding, and its checks.
type testDoc struct {
	ID     int
	Pad    string
	Checks []check.CheckResult
	Packed []byte
}

// The store, its compaction and the merge, without an engine: records of
// even IDs written (to a file, to memory, to a file that fills up), most
// of them forgotten again, the others merged with odd IDs in memory come
// back whole, once each, in ID order. (report's and export's tests run
// the spill on captures: TestConnSpillMatches, TestSpillSameRows.)
func TestStoreCompactMerge(t *testing.T) {
	pad := func(id int) string { return fmt.Sprintf("%040d", id) }
	for _, mode := range []struct {
		name     string
		cfg      Config
		inMemory bool
	}{
		{"file", Config{ToFile: true, CompactAt: 1}, false},
		{"memory", Config{CompactAt: 1}, true},
		{"disk full", Config{ToFile: true, CompactAt: 1 << 20, DiskFull: 500}, true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var s Spill[testDoc]
			s.Init(mode.cfg, Hooks[testDoc]{
				Checks:    func(d *testDoc) (*[]check.CheckResult, *[]byte) { return &d.Checks, &d.Packed },
				Forgotten: func(d *testDoc) ([]check.CheckResult, int) { return d.Checks, 0 },
				Marshal:   json.Marshal,
				Unmarshal: json.Unmarshal,
			})
			s.SetRunner(check.NewRunner(check.Config{}))
			defer s.Close()
			conns := map[int]*dissect.Connection{}
			for id := 2; id <= 40; id += 2 {
				b, err := json.Marshal(&testDoc{ID: id, Pad: pad(id)})
				if err != nil {
					t.Fatal(err)
				}
				conns[id] = &dissect.Connection{ID: id}
				s.write(conns[id], b)
			}
			var want []int
			for id := 2; id <= 40; id += 2 {
				if id%8 == 0 || id > 34 {
					want = append(want, id)
					continue
				}
				s.ConnectionForgotten(conns[id])
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if _, n := s.Stats(); mode.cfg.CompactAt == 1 && n == 0 {
				t.Error("never compacted")
			}
			if s.InMemory() != mode.inMemory {
				t.Errorf("in memory: %v, want %v", s.InMemory(), mode.inMemory)
			}
			for id, dc := range conns {
				if s.Has(dc) != slices.Contains(want, id) {
					t.Errorf("Has(%d) = %v", id, s.Has(dc))
				}
			}
			if s.Len() != len(want) {
				t.Errorf("Len %d, want %d", s.Len(), len(want))
			}
			s.Finish()
			var mem []int
			for id := 1; id <= 41; id += 2 {
				mem = append(mem, id)
			}
			var got []int
			err := s.Merge(len(mem), func(i int) int { return mem[i] },
				func(i int) error { got = append(got, mem[i]); return nil },
				func(d *testDoc) error {
					if d.Pad != pad(d.ID) {
						t.Errorf("record %d came back altered", d.ID)
					}
					got = append(got, d.ID)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			all := append(slices.Clone(mem), want...)
			slices.Sort(all)
			if !slices.Equal(got, all) {
				t.Errorf("merged %v\nwant %v", got, all)
			}
		})
	}
}
