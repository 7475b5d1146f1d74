package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestTransactionsJSONAsEncoder: WriteJSON, which writes the transactions
// one at a time, writes the very bytes json.Encoder (indent "  ") makes of
// the whole document, for an NFSv3 and an NFSv4.1 capture (several
// thousand transactions, backchannel included), an empty list and one
// that omits some (--max).
func TestTransactionsJSONAsEncoder(t *testing.T) {
	for _, tc := range []struct {
		file string
		max  int
	}{{"rxe-nfs3.pcap", 0}, {"siw-nfs41.pcap", 0}, {"rxe-nfs3.pcap", 5}, {"rxe-rping.pcap", 0}} {
		r, err := source.Open(filepath.Join("..", "testdata", "pcaps", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		l := NewTransactionList("<"+tc.file+">", tc.max, TxnFilter{})
		e := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), l.addTxn))
		if err := e.Run(r, nil); err != nil {
			t.Fatal(err)
		}
		r.Close()
		l.SetCounters(e.Snapshot())
		l.Sort()
		l.Errors = []string{"an error & <more>"}
		var got, want bytes.Buffer
		if err := l.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // the reports are no HTML: "<stdin>", "a & b" as they are
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (max %d, %d transactions): WriteJSON differs from json.Encoder", tc.file, tc.max, len(l.Transactions))
		}
		if tc.file != "rxe-rping.pcap" && len(l.Transactions) == 0 {
			t.Errorf("%s: no transactions", tc.file)
		}
	}
}
