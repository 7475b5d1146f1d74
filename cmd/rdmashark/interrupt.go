package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Interruption (issue 13 point 5, issue 29 point 6). run catches SIGINT and
// SIGTERM for every command: the first one stops reading — after the
// packet being read, or at once if the read is waiting on a pipe, a FIFO
// or a terminal — and the command reports what it read, saying that the
// input was not read to its end (analyze, report: "interrupted" in JSON,
// an INCOMPLETE line in text; transactions, dissect, export: "interrupted
// ... after N packets", N the packets every output shows).
//
// One rule for the exit status (docs/architecture.md, "Output contracts"):
// an interrupted read is not an error. Every command exits as the packets
// it read earn — 0, or 1 for findings — and its outputs are written whole
// for them (dissect -w, check -o, report -o, export's part files); the
// gate alone judges the missing rest: check (--fail-on-damage, the
// default) fails incomplete input with 2.
//
// The first signal also gives the signal back its default action, so a
// second Ctrl-C or SIGTERM ends a run that does not stop at once.

// errInterrupted is what runEngine returns, with the engine, when a
// signal stopped the read.
var errInterrupted = errors.New("interrupted by a signal before the end of the input")

// interruptContext returns a context a signal cancels, and its release.
func interruptContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the next signal has its default action again
	}()
	return ctx, stop
}

// interruptFlag is set once ctx is done: a cheap per-packet test.
func interruptFlag(ctx context.Context) (flag *atomic.Bool, release func()) {
	flag = new(atomic.Bool)
	if ctx.Err() != nil {
		flag.Store(true) // already: from the first packet on
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			flag.Store(true)
		case <-done:
		}
	}()
	return flag, func() { close(done) }
}

// ctxReader reads r in a goroutine of its own, so that a Read waiting on a
// pipe or FIFO that nothing writes to returns errInterrupted as soon as
// ctx is done. open, if set, opens the input first, in that goroutine (a
// FIFO's open waits for a writer).
type ctxReader struct {
	ctx     context.Context
	open    func() (io.ReadCloser, error)
	r       io.Reader
	closer  io.Closer
	req     chan int
	res     chan ctxResult
	buf     []byte
	waiting bool
	err     error
}

type ctxResult struct {
	n   int
	err error
}

func newCtxReader(ctx context.Context, r io.Reader, open func() (io.ReadCloser, error)) *ctxReader {
	c := &ctxReader{ctx: ctx, r: r, open: open, req: make(chan int), res: make(chan ctxResult, 1), buf: make([]byte, 64<<10)}
	go c.pump()
	return c
}

func (c *ctxReader) pump() {
	if c.open != nil {
		f, err := c.open()
		if err != nil {
			<-c.req
			c.res <- ctxResult{0, err}
			return
		}
		c.r, c.closer = f, f
	}
	for n := range c.req {
		k, err := c.r.Read(c.buf[:n])
		c.res <- ctxResult{k, err}
		if err != nil {
			return
		}
	}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.waiting {
		c.req <- min(len(p), len(c.buf))
		c.waiting = true
	}
	// Data that has arrived is read before the signal is heeded: the
	// signal stops the wait for more, not the packets already read.
	select {
	case r := <-c.res:
		return c.got(p, r)
	default:
	}
	select {
	case r := <-c.res:
		return c.got(p, r)
	case <-c.ctx.Done():
		select {
		case r := <-c.res:
			return c.got(p, r)
		default:
		}
		c.err = errInterrupted
		return 0, c.err
	}
}

func (c *ctxReader) got(p []byte, r ctxResult) (int, error) {
	c.waiting = false
	n := copy(p, c.buf[:r.n])
	if r.err != nil {
		c.err = r.err
	}
	return n, r.err
}

// Close closes what open opened, unless a Read is still waiting on it
// (the process is about to end).
func (c *ctxReader) Close() error {
	if c.waiting || c.closer == nil {
		return nil
	}
	return c.closer.Close()
}

// waitsForever reports whether reading name may wait for a writer: a
// FIFO, a terminal or another character device. (Standard input is always
// read through a ctxReader.)
func waitsForever(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice|os.ModeSocket) != 0
}
