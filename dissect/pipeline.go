package dissect

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/rdmashark/rdmashark/source"
)

// The pipeline runs Engine.Run on two cores: one goroutine reads the
// records, copies each into a slot of a ring of reused Packets and decodes
// it there (link, IP, transport headers, the ICRC and VCRC); the caller's
// goroutine takes the decoded Packets in capture order and does everything
// that has state — connection tracking, reassembly, the RPC layer, the
// Observer and Run's callback. Decoding depends on nothing but the bytes
// of the frame (Decoder has no state between packets), so the output is
// the same as decoding in line, packet for packet.
//
// The ring holds pipeDepth batches of pipeBatch Packets and their frames'
// bytes; a batch goes back to the reader once the engine is done with it,
// so the steady state allocates nothing. A partial batch is handed over
// before each read of the input (source.Reader.Ready), which may block on a
// live stream on standard input, so that no packet waits for the next one;
// the engine calls Options.BeforeWait once it has processed that batch, as
// Run does before each read when it decodes in line.

// PipelineMode says whether Engine.Run decodes on a goroutine of its own.
type PipelineMode uint8

const (
	// PipelineAuto: on when GOMAXPROCS > 1 and the capture is a regular
	// file (source.Reader.Regular). Not on a pipe: when Run stops early
	// (Options.Count, an error of its callback) it waits for the reading
	// goroutine, which may be blocked reading a live input until its next
	// packet comes.
	PipelineAuto PipelineMode = iota
	// PipelineOff decodes each packet in line, on the caller's goroutine.
	PipelineOff
	// PipelineOn decodes ahead on a goroutine of its own.
	PipelineOn
)

func (m PipelineMode) String() string {
	switch m {
	case PipelineAuto:
		return "auto"
	case PipelineOff:
		return "off"
	case PipelineOn:
		return "on"
	}
	return fmt.Sprintf("PipelineMode(%d)", uint8(m))
}

// ParsePipelineMode reads "auto", "on" or "off".
func ParsePipelineMode(s string) (PipelineMode, error) {
	for m := PipelineAuto; m <= PipelineOn; m++ {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("pipeline mode %q: want auto, on or off", s)
}

const (
	pipeBatch = 64 // Packets handed over at once
	pipeDepth = 4  // batches in the ring
)

// pipeItem is one slot of the ring: a decoded Packet and its frame, or the
// reader's error in its place.
type pipeItem struct {
	p    Packet
	buf  []byte // the frame; p.Data and the decoded layers point into it
	cbuf []byte // the record's comments, which p.Comments point into
	err  error
}

type pipeBatchBuf struct {
	items [pipeBatch]pipeItem
	n     int
	wait  bool // the reader reads its input after this batch
}

type pipeline struct {
	free   chan *pipeBatchBuf // batches the engine is done with
	full   chan *pipeBatchBuf // decoded batches, in capture order
	stop   chan struct{}      // closed when the engine stops early
	exited chan struct{}      // closed when the reading goroutine returns
	dec    Decoder
}

// pipelined tells whether Run uses the pipeline on r.
func (e *Engine) pipelined(r *source.Reader) bool {
	switch e.opts.Pipeline {
	case PipelineOn:
		return true
	case PipelineOff:
		return false
	}
	return runtime.GOMAXPROCS(0) > 1 && r.Regular()
}

// runPipeline is Run with the decoding on a goroutine of its own.
func (e *Engine) runPipeline(r *source.Reader, each func(*Packet) error) error {
	pl := &pipeline{
		free:   make(chan *pipeBatchBuf, pipeDepth),
		full:   make(chan *pipeBatchBuf, pipeDepth),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
		dec:    Decoder{RoCEPort: e.dec.RoCEPort},
	}
	for range pipeDepth {
		pl.free <- new(pipeBatchBuf)
	}
	go pl.read(r)
	defer func() {
		// The reader is the caller's again once Run returns: wait for
		// the goroutine, which stops at its next record.
		close(pl.stop)
		<-pl.exited
	}()
	var first int64
	for {
		b := <-pl.full
		for i := range b.items[:b.n] {
			if e.opts.Count > 0 && e.Stats.Packets >= uint64(e.opts.Count) {
				return nil
			}
			it := &b.items[i]
			if it.err != nil {
				if e.skipRecord(it.err) {
					continue
				}
				return nilIfEOF(it.err)
			}
			p := &it.p
			if e.Stats.Packets == 0 {
				first = p.Timestamp.UnixNano()
			}
			p.RelTime = durationSince(first, p.Timestamp.UnixNano())
			e.processDecoded(p)
			if each != nil {
				if err := each(p); err != nil {
					return err
				}
			}
		}
		if b.wait && e.opts.BeforeWait != nil {
			// The reader is about to read its input, which may block.
			e.opts.BeforeWait()
		}
		pl.free <- b
	}
}

// read is the reading and decoding goroutine.
func (pl *pipeline) read(r *source.Reader) {
	defer close(pl.exited)
	var b *pipeBatchBuf
	announced := false
	for {
		if b == nil {
			select {
			case b = <-pl.free:
				b.n, b.wait = 0, false
			case <-pl.stop:
				return
			}
		}
		if !announced && !r.Ready() {
			// Next reads the input, and may block on a live one: hand
			// over what is decoded, even nothing, marked so that the
			// engine calls BeforeWait once it is done with it.
			b.wait = true
			if !pl.send(b) {
				return
			}
			b, announced = nil, true
			continue
		}
		announced = false
		rec, err := r.Next()
		it := &b.items[b.n]
		b.n++
		it.err = err
		if err != nil {
			var serr *source.Error
			if !errors.As(err, &serr) || serr.Final {
				pl.send(b) // the last batch: the error ends the input
				return
			}
		} else {
			it.buf = append(it.buf[:0], rec.Data...)
			p := &it.p
			p.Number = rec.Number
			p.Timestamp = rec.CI.Timestamp
			p.CaptureLength = rec.CI.CaptureLength
			p.Length = rec.CI.Length
			p.LinkType = rec.LinkType
			p.Interface = rec.CI.InterfaceIndex
			// The comments, like the data, are the reader's until its
			// next Next: copied.
			it.cbuf, p.Comments = it.cbuf[:0], p.Comments[:0]
			for _, c := range rec.Comments {
				start := len(it.cbuf)
				it.cbuf = append(it.cbuf, c...)
				p.Comments = append(p.Comments, it.cbuf[start:len(it.cbuf):len(it.cbuf)])
			}
			pl.dec.Decode(p, it.buf)
		}
		if b.n == pipeBatch {
			if !pl.send(b) {
				return
			}
			b = nil
		}
	}
}

// send hands b to the engine; false when the engine stopped.
func (pl *pipeline) send(b *pipeBatchBuf) bool {
	select {
	case pl.full <- b:
		return true
	case <-pl.stop:
		return false
	}
}
