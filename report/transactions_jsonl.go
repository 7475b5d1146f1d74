package report

import (
	"bufio"
	"encoding/json"
	"io"
)

// TransactionStream is `rdmashark transactions --format jsonl`: each
// transaction is written the moment the engine finishes it — its Reply
// seen, its Call evicted or superseded, or the capture ended — as one JSON
// object on one line (JSON Lines), so that a live pipe or a capture of any
// length is listed as it is read and nothing is kept.
//
// The objects are TransactionList's transactions with the capture's name
// in "file" first, so that lines of several captures can be told apart and
// a reader (DuckDB's read_json, jq -c, Spark's JSON source) takes the
// lines as rows. They come in the order transactions end, not in the order
// of their Calls: a READ that waited for its RDMA Writes ends after a
// GETATTR called later.
type TransactionStream struct {
	File string

	w       *bufio.Writer
	enc     *json.Encoder
	filter  TxnFilter
	max     int
	n       int
	omitted uint64
	err     error
}

// streamedTxn flattens the capture name into each line.
type streamedTxn struct {
	File string `json:"file"`
	*Transaction
}

// NewTransactionStream returns a stream writing to w the transactions that
// match f, at most max of them (DefaultMaxTransactions when max <= 0).
func NewTransactionStream(w io.Writer, file string, max int, f TxnFilter) *TransactionStream {
	if max <= 0 {
		max = DefaultMaxTransactions
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false) // "<stdin>" as it is: this is no HTML
	return &TransactionStream{File: file, w: bw, enc: enc, filter: f, max: max}
}

// Offer tells whether the stream writes the finished transaction whose
// head is h: it matches the filter and the limit has room (a match past
// the limit counts in Omitted; after a write error, none). The plug-in's
// presentation then converts it and hands it to Write
// (ulp/rpcordma/present's StreamTransactions).
func (s *TransactionStream) Offer(h *TxnHead) bool {
	if s.err != nil || !s.filter.matches(h) {
		return false
	}
	if s.n >= s.max {
		s.omitted++
		return false
	}
	s.n++
	return true
}

// Write writes a transaction Offer took. A write error is kept (Err) and
// stops further writes.
func (s *TransactionStream) Write(x *Transaction) {
	s.err = s.enc.Encode(streamedTxn{File: s.File, Transaction: x})
}

// Flush writes out what is buffered: called when the input would block, so
// that a live reader sees each transaction at once.
func (s *TransactionStream) Flush() error {
	if s.err != nil {
		return s.err
	}
	s.err = s.w.Flush()
	return s.err
}

// Len is the number of transactions written.
func (s *TransactionStream) Len() int { return s.n }

// Omitted counts the matching transactions past the limit.
func (s *TransactionStream) Omitted() uint64 { return s.omitted }

// Err is the first write error.
func (s *TransactionStream) Err() error { return s.err }
