package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// writeExch returns a list's table and JSON document.
func writeExch(t *testing.T, l *ExchangeList) (string, string) {
	t.Helper()
	var tb, js bytes.Buffer
	if err := l.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return tb.String(), js.String()
}

// exchangesOf lists a capture's exchanges as they end (copies: the engine
// reuses the value it hands over).
func exchangesOf(t *testing.T, file string) []*dissect.Exchange {
	t.Helper()
	r, err := source.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var xs []*dissect.Exchange
	e := dissect.NewEngine(rpcordma.With(dissect.Options{Exchange: func(x *dissect.Exchange) { xs = append(xs, x.Clone()) }}, nil, nil))
	_ = e.Run(r, nil) // damaged captures end early: what was read is listed
	return xs
}

// spilledExch keeps xs in a list that writes a sorted run to disk every n
// exchanges.
func spilledExch(t *testing.T, xs []*dissect.Exchange, n int) *ExchangeList {
	t.Helper()
	old := spillAt
	spillAt = n
	defer func() { spillAt = old }()
	l := NewExchangeList("capture", 0, ExchFilter{})
	for _, x := range xs {
		l.Add(x)
	}
	if len(xs) > n && (l.spill == nil || len(l.spill.runs) == 0) {
		t.Fatalf("%d exchanges, runs of %d: nothing spilled", len(xs), n)
	}
	return l
}

// inMemory keeps xs in a list that never spills.
func inMemory(xs []*dissect.Exchange) *ExchangeList {
	l := NewExchangeList("capture", 0, ExchFilter{})
	l.noSpill = true
	for _, x := range xs {
		l.Add(x)
	}
	return l
}

// TestExchangesSpilledSame: the list sorted externally (runs on disk,
// merged) writes the same table and JSON, byte for byte, as the list
// sorted whole in memory, on every bundled capture (real, lossy,
// mutated).
func TestExchangesSpilledSame(t *testing.T) {
	files := bundledCaptures(t)
	if len(files) < 50 {
		t.Fatalf("%d captures", len(files))
	}
	total, merged := 0, 0
	for _, file := range files {
		xs := exchangesOf(t, file)
		total += len(xs)
		wantTable, wantJSON := writeExch(t, inMemory(xs))
		for _, n := range []int{1, 97} {
			if len(xs) <= n {
				continue
			}
			merged++
			l := spilledExch(t, xs, n)
			gotTable, gotJSON := writeExch(t, l)
			if gotTable != wantTable {
				t.Errorf("%s (runs of %d): table differs\n%s\nwant\n%s", filepath.Base(file), n, head(gotTable), head(wantTable))
			}
			if gotJSON != wantJSON {
				t.Errorf("%s (runs of %d): JSON differs", filepath.Base(file), n)
			}
			if err := l.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	if total == 0 || merged == 0 {
		t.Fatalf("%d exchanges, %d merged lists", total, merged)
	}
	t.Logf("%d captures, %d exchanges, %d merged lists compared", len(files), total, merged)
}

// randomExchanges are n exchanges ending in random order, many with the
// same request packet, some without request or response, names and
// statuses of every length.
func randomExchanges(n int, seed int64) []*dissect.Exchange {
	rng := rand.New(rand.NewSource(seed))
	conns := make([]*dissect.Connection, 20)
	for i := range conns {
		conns[i] = &dissect.Connection{ID: i + 1}
	}
	ulps := []string{"rpcordma", "nvme-rdma"}
	var xs []*dissect.Exchange
	for i := range n {
		x := &dissect.Exchange{ULP: ulps[rng.Intn(2)], Conn: conns[rng.Intn(len(conns))], Key: uint64(rng.Uint32()),
			Initiator: dissect.Direction(rng.Intn(3)), Outcome: dissect.Responded, ReadBytes: uint64(rng.Intn(1 << 20)),
			WriteBytes: uint64(rng.Intn(3)) << 30}
		if rng.Intn(8) > 0 {
			x.RequestPacket = 1 + rng.Intn(200)
			x.Name = strings.Repeat("N", rng.Intn(40)) + "µ"
		}
		if x.RequestPacket == 0 || rng.Intn(4) > 0 {
			x.ResponsePacket = 1 + x.RequestPacket + rng.Intn(9)
			if rng.Intn(3) > 0 {
				x.Status = []string{"SUCCESS", "GARBAGE_ARGS", strings.Repeat("S", 30)}[rng.Intn(3)]
				x.OK = x.Status == "SUCCESS"
			}
			if rng.Intn(2) == 0 {
				x.Invalidated, x.InvalidatedSTag = true, rng.Uint32()
			}
		}
		switch {
		case x.RequestPacket == 0:
			x.Outcome = dissect.ResponseWithoutRequest
		case x.ResponsePacket == 0:
			x.Outcome = []dissect.Outcome{dissect.NoResponse, dissect.Evicted, dissect.Superseded}[rng.Intn(3)]
		default:
			x.Latency = time.Duration(rng.Int63n(int64(time.Second)))
		}
		if x.ULP == "nvme-rdma" && x.Key%3 != 0 {
			// A controller (without drawing from rng: the other fields
			// stay as the seeds made them).
			x.Association = &dissect.Association{Initiator: "nqn.2014-08.org.nvmexpress:uuid:h" + strconv.Itoa(int(x.Key%5)),
				Target: "nqn.2026-11.lab:nvme", ID: uint32(x.Key % 7)}
		}
		if x.ULP == "rpcordma" && x.Key%4 != 0 {
			// An object (without drawing from rng either): a handle, a
			// name of any length, a handle returned for it.
			k := x.Key
			x.Object = dissect.ExchangeObject{HasHandle: k%3 != 0, Handle: uint32(k * 2654435761),
				HasReplyHandle: k%5 == 0, ReplyHandle: uint32(k >> 3)}
			if k%2 == 0 {
				x.Object.Name = []byte(strings.Repeat("f", int(k%300)) + "é")
			}
		}
		_ = i
		xs = append(xs, x)
	}
	return xs
}

// TestExchangesSpilledOrder: the merged list is the stable sort of the
// whole by request packet (response packet without a request), as the
// JSON shows it; the spilled list writes what the list in memory writes.
func TestExchangesSpilledOrder(t *testing.T) {
	xs := randomExchanges(1000, 1)
	wantTable, wantJSON := writeExch(t, inMemory(xs))
	for _, n := range []int{2, 50, 999} {
		l := spilledExch(t, xs, n)
		gotTable, gotJSON := writeExch(t, l)
		if gotTable != wantTable || gotJSON != wantJSON {
			t.Errorf("runs of %d: table same %v, JSON same %v", n, gotTable == wantTable, gotJSON == wantJSON)
		}
		l.Close()
	}
	// The order, checked independently of the code under test: keys are
	// random, so the keys in the order written must be the keys of the
	// stable sort of xs by packet.
	var doc struct {
		Exchanges []Exchange `json:"exchanges"`
	}
	if err := json.Unmarshal([]byte(wantJSON), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Exchanges) != len(xs) {
		t.Fatalf("%d exchanges written, %d added", len(doc.Exchanges), len(xs))
	}
	want := append([]*dissect.Exchange(nil), xs...)
	pkt := func(x *dissect.Exchange) int {
		if x.RequestPacket != 0 {
			return x.RequestPacket
		}
		return x.ResponsePacket
	}
	// Insertion sort: stable, and no code shared with the list's.
	for i := 1; i < len(want); i++ {
		for j := i; j > 0 && pkt(want[j]) < pkt(want[j-1]); j-- {
			want[j], want[j-1] = want[j-1], want[j]
		}
	}
	for i, x := range doc.Exchanges {
		w := want[i]
		if x.Connection != w.Conn.ID || x.ULP != w.ULP || x.ReadBytes != w.ReadBytes {
			t.Fatalf("exchange %d: %+v, want the one of conn %d, %s, %d bytes read", i, x, w.Conn.ID, w.ULP, w.ReadBytes)
		}
		if (x.LatencyNS == nil) != (w.RequestPacket == 0 || w.ResponsePacket == 0) {
			t.Errorf("exchange %d: latency %v with request %d, response %d", i, x.LatencyNS, w.RequestPacket, w.ResponsePacket)
		}
		if x.LatencyNS != nil && *x.LatencyNS != w.Latency.Nanoseconds() {
			t.Errorf("exchange %d: latency %d ns, want %d", i, *x.LatencyNS, w.Latency.Nanoseconds())
		}
		if (x.InvalidatedSTag == nil) != !w.Invalidated || x.InvalidatedSTag != nil && uint32(*x.InvalidatedSTag) != w.InvalidatedSTag {
			t.Errorf("exchange %d: invalidated STag %v, want %v %#x", i, x.InvalidatedSTag, w.Invalidated, w.InvalidatedSTag)
		}
	}
}

// TestExchangesTableFits: every line of the text table fits a 100-column
// terminal, long names and statuses cut with an ellipsis, numbers whole
// (keys of 32 bits, as XIDs and NVMe's QID<<16|CID are).
func TestExchangesTableFits(t *testing.T) {
	xs := randomExchanges(300, 2)
	tb, _ := writeExch(t, inMemory(xs))
	lines := strings.Split(strings.TrimSuffix(tb, "\n"), "\n")
	if len(lines) != 2+len(xs) {
		t.Fatalf("%d lines for %d exchanges", len(lines), len(xs))
	}
	cut := 0
	for _, line := range lines[1:] {
		if n := utf8.RuneCountInString(line); n > exchWidth {
			t.Errorf("%d columns: %q", n, line)
		}
		if strings.Contains(line, "…") {
			cut++
		}
	}
	if cut == 0 {
		t.Error("names of 40 characters and statuses of 30, none cut")
	}
	// The largest write (2 GiB) is written whole.
	if !strings.Contains(tb, " 2147483648 ") {
		t.Error("the 2 GiB write is not in the table whole")
	}
}

// TestExchangesFilterAndMax: the filter keeps one connection's or one
// ULP's exchanges; --max keeps the first that end and counts the rest.
func TestExchangesFilterAndMax(t *testing.T) {
	xs := randomExchanges(500, 3)
	count := func(f ExchFilter, max int) (*ExchangeList, int) {
		l := NewExchangeList("capture", max, f)
		n := 0
		for _, x := range xs {
			if (f.Connection == 0 || x.Conn.ID == f.Connection) && (f.ULP == "" || f.ULP == x.ULP) {
				n++
			}
			l.Add(x)
		}
		return l, n
	}
	for _, f := range []ExchFilter{{Connection: 3}, {ULP: "nvme-rdma"}, {Connection: 7, ULP: "rpcordma"}} {
		l, want := count(f, 0)
		if l.Len() != want || want == 0 {
			t.Errorf("%+v: %d kept, %d match", f, l.Len(), want)
		}
		_ = l.Each(func(x *Exchange) error {
			if f.Connection != 0 && x.Connection != f.Connection || f.ULP != "" && x.ULP != f.ULP {
				t.Errorf("%+v: kept %+v", f, x)
			}
			return nil
		})
	}
	l, _ := count(ExchFilter{}, 42)
	if l.Len() != 42 || l.Omitted != uint64(len(xs)-42) {
		t.Errorf("--max 42: %d kept, %d omitted", l.Len(), l.Omitted)
	}
}

// TestExchangeCodec: a record written to a run reads back as it was.
func TestExchangeCodec(t *testing.T) {
	var b []byte
	var want []exchRec
	for _, x := range randomExchanges(200, 4) {
		r := newExchRec(x)
		want = append(want, r)
		b = appendExchRec(b, &r)
	}
	d := exchDecoder{r: bufioReader(b), strs: map[string]string{}}
	for i, w := range want {
		var got exchRec
		if err := d.decode(&got); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got != w {
			t.Fatalf("record %d: %+v, want %+v", i, got, w)
		}
	}
	var r exchRec
	if err := d.decode(&r); err == nil {
		t.Error("a record past the end")
	}
	// A cut record is an error, not a panic.
	d = exchDecoder{r: bufioReader(b[:len(b)-3]), strs: map[string]string{}}
	var err error
	for err == nil {
		err = d.decode(&r)
	}
	if err != errExchCorrupt {
		t.Errorf("cut run: %v", err)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// BenchmarkExchangeListAdd: keeping an exchange as it ends, runs written
// to disk every spillAt (allocs/op: none in steady state but the runs'
// and the names of the objects some requests name).
func BenchmarkExchangeListAdd(b *testing.B) {
	xs := randomExchanges(4096, 5)
	l := NewExchangeList("bench", 1<<62, ExchFilter{})
	defer l.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l.Add(xs[i%len(xs)])
	}
}
