package dissect

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// The pipeline runs Engine.Run on two cores. One goroutine reads the
// records, copies each frame into its batch's byte arena and computes what
// costs most of decoding and depends on nothing but the frame's bytes: the
// ICRC and VCRC verdicts, and the hash the RC requester model keeps of a
// request (packetHash) — only while the engine has enough to do meanwhile
// (pipeAhead); otherwise the engine computes them. It hands over a small
// record (pipeRec: 144 bytes) per frame. The caller's goroutine takes the
// batches in capture order, decodes each frame's headers again into the
// engine's one Packet — cheap once the CRCs are known (Decoder.pre) — and
// does everything that has state: connection tracking, reassembly, the
// RPC layer, the Observer and Run's callback. The output is the same as in
// line, packet for packet: the values handed over are those the engine
// would compute from the same bytes (TestPipelineHandOver).
//
// Why not hand over the decoded Packet: it is 4.6 KB, written by one core
// and read by the other, and the cache traffic cost more than the decoding
// it saved (docs/speed.md, "The pipeline").
//
// The ring holds pipeDepth batches of at most pipeBatch records and
// pipeBytes of frames; a batch goes back to the reader once the engine is
// done with it, so the steady state allocates nothing. A partial batch is
// handed over before each read of the input (source.Reader.Ready), which
// may block on a live stream on standard input, so that no packet waits
// for the next one; the engine calls Options.BeforeWait once it has
// processed that batch, as Run does before each read when it decodes in
// line.

// PipelineMode says whether Engine.Run reads the capture (and computes its
// CRCs) on a goroutine of its own.
type PipelineMode uint8

const (
	// PipelineAuto: on when GOMAXPROCS > 1 and the capture is a regular
	// file (source.Reader.Regular). Not on a pipe: when Run stops early
	// (Options.Count, an error of its callback) it waits for the reading
	// goroutine, which may be blocked reading a live input until its next
	// packet comes.
	PipelineAuto PipelineMode = iota
	// PipelineOff reads and decodes each packet in line, on the caller's
	// goroutine.
	PipelineOff
	// PipelineOn reads ahead on a goroutine of its own.
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
	pipeBatch = 128      // records handed over at once, at most
	pipeBytes = 64 << 10 // frame bytes of a batch past which it is handed over
	pipeDepth = 16       // batches in the ring
	// pipeResume: a reader waiting for the ring to drain is woken once
	// this many batches are free, not at the first one. Waking a parked
	// goroutine takes ~150 µs on the 2-vCPU VM this was measured on,
	// longer than the engine takes for a batch (~60 µs): woken at every
	// batch, the reader fell behind and both goroutines spent a third of
	// their time waiting for each other (docs/speed.md).
	pipeResume = pipeDepth / 2
	// pipeAhead: the reader computes the CRCs and the request hash of a
	// record only while at least this many batches wait for the engine.
	pipeAhead = 4
	// pipeHungry: the records a batch is handed over with, at least,
	// when the engine has nothing left to do.
	pipeHungry = 16
	// pipeSpin: how long the engine, finding the ring empty, watches it
	// before parking, when the reader is not waiting for its input.
	pipeSpin = 50 * time.Microsecond
)

// pipeRec is what the reading goroutine hands over of one record: the
// record's header, where its frame and comments are in the batch, the
// verdicts of its CRCs and its request hash; or the reader's error.
type pipeRec struct {
	number         int
	lostBefore     uint64 // source.Record.LostBefore
	ts             time.Time
	caplen, length int
	iface          int
	linkType       layers.LinkType
	start, end     int32 // the frame: batch.data[start:end]
	cstart, cend   int32 // its comments: batch.comments[cstart:cend]
	pre            preDecoded
	err            error
}

// preDecoded is what the reading goroutine computed of a frame ahead of
// the engine, if done.
type preDecoded struct {
	done       bool
	icrc, vcrc CRCCheck
	hash       uint64 // packetHash of the BTH, when hashed
	hashed     bool
	// tcpSum is segmentChecksum of a TCP segment, when tcpSummed: the
	// iWARP engine asks it of every segment, and it reads every octet.
	tcpSum    CRCStatus
	tcpSummed bool
}

type pipeBatchBuf struct {
	recs     [pipeBatch]pipeRec
	n        int
	data     []byte   // the frames, one after the other
	cdata    []byte   // the comments' bytes
	comments [][]byte // slices of cdata
	wait     bool     // the reader reads its input after this batch
}

// pipeline is a single-producer single-consumer ring of batches: the
// reader fills ring[filled%pipeDepth] and publishes it by advancing
// filled; the engine takes ring[taken%pipeDepth] and gives it back by
// advancing taken. Each side parks only when it cannot go on (the ring
// full, or empty), after saying so in its waiting flag; the other side
// wakes it (a token in its wake channel) — the engine the reader once
// pipeResume batches are free, the reader the engine at the next batch.
type pipeline struct {
	ring          [pipeDepth]*pipeBatchBuf
	filled, taken atomic.Int64
	readerWaits   atomic.Bool
	engineWaits   atomic.Bool
	readerWake    chan struct{} // capacity 1
	engineWake    chan struct{} // capacity 1
	stop          chan struct{} // closed when the engine stops early
	exited        chan struct{} // closed when the reading goroutine returns
	dec           Decoder
	scratch       Packet // the reading goroutine's: decoded to find the CRCs and the BTH
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

// runPipeline is Run with the reading and the CRCs on a goroutine of their
// own.
func (e *Engine) runPipeline(r *source.Reader, each func(*Packet) error) error {
	pl := &pipeline{
		readerWake: make(chan struct{}, 1),
		engineWake: make(chan struct{}, 1),
		stop:       make(chan struct{}),
		exited:     make(chan struct{}),
		dec:        Decoder{RoCEPort: e.dec.RoCEPort},
	}
	for i := range pl.ring {
		pl.ring[i] = &pipeBatchBuf{data: make([]byte, 0, pipeBytes+2048)}
	}
	go pl.read(r)
	defer func() {
		// The reader is the caller's again once Run returns: wait for
		// the goroutine, which stops at its next record.
		close(pl.stop)
		<-pl.exited
	}()
	var first int64
	p := &e.pkt
	st := newPipeStat("engine")
	defer st.end()
	// Spinning makes sense only while the reader runs meanwhile on
	// another CPU.
	multi, spin := runtime.GOMAXPROCS(0) > 1, false
	for {
		b := pl.next(st, spin)
		spin = multi && !b.wait
		st.batch(b.n, len(b.data))
		for i := range b.recs[:b.n] {
			if e.opts.Count > 0 && e.Stats.Packets >= uint64(e.opts.Count) {
				return nil
			}
			rec := &b.recs[i]
			if rec.err != nil {
				if e.skipRecord(rec.err) {
					continue
				}
				return nilIfEOF(rec.err)
			}
			if rec.lostBefore > 0 {
				e.captureDropped(rec.lostBefore)
			}
			p.Number = rec.number
			p.Timestamp = rec.ts
			if e.Stats.Packets == 0 {
				first = rec.ts.UnixNano()
			}
			p.RelTime = durationSince(first, rec.ts.UnixNano())
			p.CaptureLength = rec.caplen
			p.Length = rec.length
			p.LinkType = rec.linkType
			p.Interface = rec.iface
			p.Comments = b.comments[rec.cstart:rec.cend:rec.cend]
			e.dec.decodePre(p, b.data[rec.start:rec.end:rec.end], &rec.pre)
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
		pl.release()
	}
}

// next returns the engine's next batch, waiting for the reader if need be.
// The reader always ends with a batch that holds its final error, so the
// engine never waits for a reader that has returned.
func (pl *pipeline) next(st *pipeStat, spin bool) *pipeBatchBuf {
	taken := pl.taken.Load()
	if pl.filled.Load() == taken {
		t := st.waitStart()
		if spin {
			// The reader is reading a file, not waiting for its input:
			// its next batch comes sooner than a parked engine would
			// wake (~120 µs here).
			start := time.Now()
			for i := 0; pl.filled.Load() == taken; i++ {
				if i%64 == 63 && time.Since(start) > pipeSpin {
					break
				}
			}
		}
		for pl.filled.Load() == taken {
			pl.engineWaits.Store(true)
			if pl.filled.Load() != taken {
				if !pl.engineWaits.CompareAndSwap(true, false) {
					<-pl.engineWake // the reader saw the flag: take its token
				}
				break
			}
			<-pl.engineWake
		}
		st.waitEnd(t)
	}
	return pl.ring[taken%pipeDepth]
}

// release gives the engine's batch back to the reader.
func (pl *pipeline) release() {
	taken := pl.taken.Add(1)
	if pl.readerWaits.Load() && pl.filled.Load()-taken <= pipeDepth-pipeResume &&
		pl.readerWaits.CompareAndSwap(true, false) {
		pl.readerWake <- struct{}{}
	}
}

// free returns the reader's next batch to fill, emptied, waiting for the
// engine if the ring is full; nil when the engine stopped.
func (pl *pipeline) free(st *pipeStat) *pipeBatchBuf {
	filled := pl.filled.Load()
	if filled-pl.taken.Load() == pipeDepth {
		t := st.waitStart()
		for {
			pl.readerWaits.Store(true)
			if filled-pl.taken.Load() <= pipeDepth-pipeResume {
				if !pl.readerWaits.CompareAndSwap(true, false) {
					<-pl.readerWake // the engine saw the flag: take its token
				}
				break
			}
			select {
			case <-pl.readerWake:
			case <-pl.stop:
				return nil
			}
		}
		st.waitEnd(t)
	}
	b := pl.ring[filled%pipeDepth]
	b.n, b.wait = 0, false
	b.data, b.cdata, b.comments = b.data[:0], b.cdata[:0], b.comments[:0]
	return b
}

// send hands the reader's batch to the engine; false when the engine
// stopped.
func (pl *pipeline) send() bool {
	select {
	case <-pl.stop:
		return false
	default:
	}
	pl.filled.Add(1)
	if pl.engineWaits.Load() && pl.engineWaits.CompareAndSwap(true, false) {
		pl.engineWake <- struct{}{}
	}
	return true
}

// read is the reading goroutine.
func (pl *pipeline) read(r *source.Reader) {
	defer close(pl.exited)
	st := newPipeStat("reader")
	defer st.end()
	var b *pipeBatchBuf
	announced := false
	for {
		if b == nil {
			if b = pl.free(st); b == nil {
				return
			}
			st.batch(0, 0)
		}
		if !announced && !r.Ready() {
			// Next reads the input, and may block on a live one: hand
			// over what is read, even nothing, marked so that the
			// engine calls BeforeWait once it is done with it.
			b.wait = true
			if !pl.send() {
				return
			}
			b, announced = nil, true
			continue
		}
		announced = false
		rec, err := r.Next()
		it := &b.recs[b.n]
		b.n++
		it.err = err
		if err != nil {
			var serr *source.Error
			if !errors.As(err, &serr) || serr.Final {
				pl.send() // the last batch: the error ends the input
				return
			}
		}
		queued := pl.filled.Load() - pl.taken.Load()
		if err == nil {
			// The CRCs and the hash only when the engine has enough
			// to do meanwhile; when it is about to run dry, it does
			// them itself (the reader is the slower one then: large
			// frames, whose CRCs and copies cost more than their
			// tracking).
			pl.hold(b, it, &rec, queued >= pipeAhead)
		}
		// A full batch goes; so does a partial one when the engine has
		// nothing left (the first batch, stretches of large frames).
		if b.n == pipeBatch || len(b.data) >= pipeBytes || queued == 0 && b.n >= pipeHungry {
			if !pl.send() {
				return
			}
			b = nil
		}
	}
}

// hold copies rec into b (the reader's bytes are its own again at its
// next Next) and computes its pre-decoded values into it.
func (pl *pipeline) hold(b *pipeBatchBuf, it *pipeRec, rec *source.Record, ahead bool) {
	it.number = rec.Number
	it.lostBefore = rec.LostBefore
	it.ts = rec.CI.Timestamp
	it.caplen, it.length = rec.CI.CaptureLength, rec.CI.Length
	it.iface = rec.CI.InterfaceIndex
	it.linkType = rec.LinkType
	it.start = int32(len(b.data))
	b.data = append(b.data, rec.Data...)
	it.end = int32(len(b.data))
	it.cstart = int32(len(b.comments))
	for _, c := range rec.Comments {
		start := len(b.cdata)
		b.cdata = append(b.cdata, c...)
		b.comments = append(b.comments, b.cdata[start:len(b.cdata):len(b.cdata)])
	}
	it.cend = int32(len(b.comments))
	if !ahead {
		it.pre = preDecoded{} // the engine computes it all
		return
	}
	p := &pl.scratch
	p.LinkType, p.CaptureLength, p.Length = rec.LinkType, rec.CI.CaptureLength, rec.CI.Length
	pl.dec.Decode(p, rec.Data)
	it.pre = preDecoded{done: true, icrc: p.ICRC, vcrc: p.VCRC}
	if p.Has(roce.LayerTypeBTH) && p.BTH.OpCode.IsRequest() {
		// What classifyRequest hashes (histHash); Acks and Read
		// Responses are not hashed.
		it.pre.hash, it.pre.hashed = packetHash(&p.BTH), true
	}
	if p.Has(layers.LayerTypeTCP) {
		// The IPv4 and TCP checksums (iwarp.go discards a segment that
		// fails them): the first pass over a segment's octets, ~6% of
		// the engine's CPU on siw-nfs3 ×20, where the reader waits
		// three quarters of the time.
		it.pre.tcpSum, it.pre.tcpSummed = segmentChecksum(p), true
	}
}

// decodePre is Decode with the CRC verdicts, the request hash and the TCP
// checksums computed ahead (by the pipeline's reading goroutine, from the
// same bytes).
func (d *Decoder) decodePre(p *Packet, data []byte, pre *preDecoded) {
	if !pre.done {
		d.Decode(p, data)
		return
	}
	d.pre = pre
	d.Decode(p, data)
	d.pre = nil
	p.hash, p.hashed = pre.hash, pre.hashed
	p.tcpSum, p.tcpSummed = pre.tcpSum, pre.tcpSummed
}

// requestHash is packetHash of p's BTH: the one the pipeline computed
// ahead, if it did.
func requestHash(p *Packet) uint64 {
	if p.hashed {
		return p.hash
	}
	return packetHash(&p.BTH)
}

// tcpChecksum is segmentChecksum of p's TCP segment: the one the pipeline
// computed ahead, if it did.
func tcpChecksum(p *Packet) CRCStatus {
	if p.tcpSummed {
		return p.tcpSum
	}
	return segmentChecksum(p)
}
