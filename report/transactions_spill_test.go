package report

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// writeBoth returns a list's table and JSON document.
func writeBoth(t *testing.T, l *TransactionList) (string, string) {
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

// spilled re-keeps ts (in the order they finished) in a list that writes a
// sorted run to disk every n transactions.
func spilled(t *testing.T, from *TransactionList, ts []Transaction, n int) *TransactionList {
	t.Helper()
	old := spillAt
	spillAt = n
	defer func() { spillAt = old }()
	l := NewTransactionList(from.File, from.max, from.filter)
	for _, x := range ts {
		l.keep(x)
	}
	if len(ts) > n && (l.spill == nil || len(l.spill.runs) == 0) {
		t.Fatalf("%d transactions, runs of %d: nothing spilled", len(ts), n)
	}
	l.Omitted, l.Counters, l.Errors = from.Omitted, from.Counters, from.Errors
	l.Sort()
	return l
}

// TestTransactionsSpilledSame: the list sorted externally (runs on disk,
// merged) writes the same table and JSON, byte for byte, as the list
// sorted whole in memory (tablewriter's table, json.Encoder's bytes), on
// every bundled capture (real, lossy, mutated), whole and with --max.
func TestTransactionsSpilledSame(t *testing.T) {
	files := bundledCaptures(t)
	if len(files) < 50 {
		t.Fatalf("%d captures", len(files))
	}
	total, merged := 0, 0
	for _, file := range files {
		for _, max := range []int{0, 40} {
			r, err := source.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			whole := NewTransactionList(filepath.Base(file), max, TxnFilter{})
			var order []Transaction
			add := func(x *rpcordma.Transaction) {
				n := len(whole.Transactions)
				whole.addTxn(x)
				if len(whole.Transactions) > n {
					order = append(order, whole.Transactions[n])
				}
			}
			e := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), add))
			runErr := e.Run(r, nil)
			r.Close()
			if runErr != nil {
				whole.Errors = []string{runErr.Error()}
			}
			whole.SetCounters(e.Snapshot())
			whole.Sort()
			wantTable, wantJSON := writeBoth(t, whole)
			total += len(order)
			for _, n := range []int{1, 7, 256} {
				if len(order) <= n {
					continue
				}
				merged++
				l := spilled(t, whole, order, n)
				gotTable, gotJSON := writeBoth(t, l)
				if gotTable != wantTable {
					t.Errorf("%s (max %d, runs of %d): table differs\n%s\nwant\n%s", file, max, n, head(gotTable), head(wantTable))
				}
				if gotJSON != wantJSON {
					t.Errorf("%s (max %d, runs of %d): JSON differs", file, max, n)
				}
				if err := l.Close(); err != nil {
					t.Error(err)
				}
			}
		}
	}
	if total == 0 || merged == 0 {
		t.Fatalf("%d transactions, %d merged lists", total, merged)
	}
	t.Logf("%d captures, %d transactions, %d merged lists compared", len(files), total, merged)
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000]
	}
	return s
}

// TestTransactionsSpilledOrder: transactions finishing in random order,
// many with the same first packet, cells of every width (including
// characters of one column wider than a byte, × and µ): the merged list
// is the stable sort of the whole, as the table and JSON show it.
func TestTransactionsSpilledOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	from := NewTransactionList("synthetic", 0, TxnFilter{})
	var ts []Transaction
	for i := range 1000 {
		first := rng.Intn(200)
		x := Transaction{XID: Hex32(i), Connection: rng.Intn(1000), Direction: "forward", Operations: []string{}, Outcome: "replied"}
		if rng.Intn(10) > 0 {
			x.Call = &TxnSide{Packets: []int{first, first + rng.Intn(5)}, RDMAProc: "RDMA_MSG", Credits: uint32(rng.Intn(300)), Chunks: []TxnChunk{}}
			if rng.Intn(3) == 0 {
				p := uint32(rng.Intn(5000))
				x.Call.Chunks = append(x.Call.Chunks, TxnChunk{Kind: "read", Position: &p, Segments: make([]TxnSegment, rng.Intn(3))})
			}
		}
		if x.Call == nil || rng.Intn(4) > 0 {
			x.Reply = &TxnSide{Packets: []int{first + rng.Intn(9)}, RDMAProc: "RDMA_NOMSG", Chunks: []TxnChunk{}, Status: []string{"", "SUCCESS", "GARBAGE_ARGS"}[rng.Intn(3)]}
		}
		if x.Call != nil && x.Reply != nil {
			us := rng.Float64() * float64(rng.Intn(100000))
			x.LatencyUS = &us
		}
		ts = append(ts, x)
	}
	for _, x := range ts {
		from.keep(x)
	}
	from.Sort()
	wantTable, wantJSON := writeBoth(t, from)
	for _, n := range []int{2, 50, 999} {
		l := spilled(t, from, ts, n)
		gotTable, gotJSON := writeBoth(t, l)
		if gotTable != wantTable || gotJSON != wantJSON {
			t.Errorf("runs of %d: table same %v, JSON same %v", n, gotTable == wantTable, gotJSON == wantJSON)
		}
		l.Close()
	}
}
