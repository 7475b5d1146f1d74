package report

import (
	"bufio"
	"bytes"
	"io"
)

// TransactionPack keeps transactions in memory in the compact binary form
// the `transactions` spill writes its runs in (transactions_codec.go):
// varints and tagged pointers, ~5× smaller than the structures with their
// sides, chunks and packet lists, and read back exactly as they were
// added. The HTML report keeps each drawn connection's first MaxDetail
// transactions so until it draws them (report/html).
type TransactionPack struct {
	enc txnEncoder
	b   []byte
	n   int
}

// Add appends a copy of t.
func (p *TransactionPack) Add(t *Transaction) {
	p.b = p.enc.appendTxn(p.b, t)
	p.enc.buf = nil
	p.n++
}

// Len is the number of transactions added.
func (p *TransactionPack) Len() int { return p.n }

// Each calls fn with every transaction, in the order they were added,
// decoded into the same Transaction, which fn must not keep (what it
// points to it may). The first error stops it and is returned.
func (p *TransactionPack) Each(fn func(t *Transaction) error) error {
	if p.n == 0 {
		return nil
	}
	d := txnDecoder{r: bufio.NewReader(bytes.NewReader(p.b))}
	var t Transaction
	for {
		err := d.decode(&t)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
}
