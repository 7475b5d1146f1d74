package dissect

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect/source"
)

// capturePath names a capture of testdata/pcaps.
func capturePath(name string) string {
	return filepath.Join("..", "testdata", "pcaps", name)
}

// runCapture runs a capture through an engine, keeping clones of the
// finished transactions and, per packet, the RPC records' summaries.
func runCapture(t testing.TB, name string, opts Options, each func(*Packet)) (*Engine, []*Transaction) {
	t.Helper()
	r, err := source.Open(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var txns []*Transaction
	if opts.Transaction == nil {
		opts.Transaction = func(tx *Transaction) { txns = append(txns, tx.Clone()) }
	}
	e := NewEngine(opts)
	err = e.Run(r, func(p *Packet) error {
		if each != nil {
			each(p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return e, txns
}
