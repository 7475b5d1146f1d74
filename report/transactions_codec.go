package report

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The runs of the external sort (transactions_spill.go) hold transactions
// in a compact binary form instead of JSON lines: encoding/json's decoder
// (reflection, a token scanner, a new string for every name) cost ~8 µs a
// transaction, read twice by the table, and was half of `transactions`'
// CPU on a capture that spills. The form is private to one process and
// one temporary file, so it has no version: integers as varints, strings
// as a length and bytes, and every pointer and slice with a tag telling
// nil from present (nil from empty for slices), so that a transaction
// reads back exactly as it was written — TestTxnCodecRoundTrip fills every
// field of Transaction by reflection and compares, so a field added to
// Transaction and not here fails it.

// Slice and pointer tags.
const (
	tagNil  = 0
	tagSome = 1
)

type txnEncoder struct {
	w   *bufio.Writer
	buf []byte
}

func (e *txnEncoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *txnEncoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *txnEncoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}
func (e *txnEncoder) flag(b bool) {
	if b {
		e.buf = append(e.buf, tagSome)
	} else {
		e.buf = append(e.buf, tagNil)
	}
}

// sliceLen writes a slice's tag and length: 0 for nil, 1+len otherwise.
func (e *txnEncoder) sliceLen(isNil bool, n int) {
	if isNil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

func (e *txnEncoder) optU32(p *uint32) {
	e.flag(p != nil)
	if p != nil {
		e.uvarint(uint64(*p))
	}
}

// encode appends t to the writer; it returns how many bytes it wrote.
func (e *txnEncoder) encode(t *Transaction) (int, error) {
	e.buf = e.appendTxn(e.buf[:0], t)
	return e.w.Write(e.buf)
}

// appendTxn appends t's record to b (TransactionPack keeps it in memory).
func (e *txnEncoder) appendTxn(b []byte, t *Transaction) []byte {
	e.buf = b
	e.uvarint(uint64(t.XID))
	e.varint(int64(t.Connection))
	e.str(t.Direction)
	e.optU32(t.Program)
	e.str(t.ProgramName)
	e.optU32(t.Version)
	e.optU32(t.Procedure)
	e.str(t.ProcedureName)
	e.sliceLen(t.Operations == nil, len(t.Operations))
	for _, op := range t.Operations {
		e.str(op)
	}
	e.side(t.Call)
	e.side(t.Reply)
	e.uvarint(t.RDMA.ReadBytes)
	e.uvarint(t.RDMA.WriteBytes)
	e.flag(t.InvalidatedSTag != nil)
	if t.InvalidatedSTag != nil {
		e.uvarint(uint64(*t.InvalidatedSTag))
	}
	e.flag(t.LatencyUS != nil)
	if t.LatencyUS != nil {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(*t.LatencyUS))
	}
	e.str(t.Outcome)
	e.flag(t.FHHash != nil)
	if t.FHHash != nil {
		e.uvarint(uint64(*t.FHHash))
	}
	e.str(t.Name)
	e.flag(t.ReplyFHHash != nil)
	if t.ReplyFHHash != nil {
		e.uvarint(uint64(*t.ReplyFHHash))
	}
	return e.buf
}

func (e *txnEncoder) side(s *TxnSide) {
	e.flag(s != nil)
	if s == nil {
		return
	}
	e.sliceLen(s.Packets == nil, len(s.Packets))
	for _, p := range s.Packets {
		e.varint(int64(p))
	}
	e.str(s.RDMAProc)
	e.uvarint(uint64(s.RDMAVers))
	e.uvarint(uint64(s.Credits))
	e.sliceLen(s.Chunks == nil, len(s.Chunks))
	for i := range s.Chunks {
		c := &s.Chunks[i]
		e.str(c.Kind)
		e.optU32(c.Position)
		e.sliceLen(c.Segments == nil, len(c.Segments))
		for j := range c.Segments {
			sg := &c.Segments[j]
			e.uvarint(uint64(sg.Handle))
			e.uvarint(uint64(sg.Length))
			e.uvarint(uint64(sg.Offset))
			e.sliceLen(sg.RDMAOps == nil, len(sg.RDMAOps))
			for _, op := range sg.RDMAOps {
				e.str(op.Kind)
				e.varint(int64(op.FirstPacket))
				e.varint(int64(op.LastPacket))
				e.uvarint(uint64(op.Offset))
				e.uvarint(uint64(op.Length))
				e.flag(op.Complete)
			}
		}
	}
	e.varint(int64(s.InlineBytes))
	e.varint(int64(s.RPCBytes))
	e.flag(s.Rebuilt)
	e.str(s.Status)
}

// txnDecoder reads what txnEncoder wrote. The strings it reads are few
// distinct names (directions, outcomes, procedures, chunk kinds), so it
// keeps one copy of each instead of a new string per transaction.
type txnDecoder struct {
	r       *bufio.Reader
	err     error
	strs    map[string]string
	scratch []byte
}

var errTxnCorrupt = errors.New("corrupt record")

func (d *txnDecoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *txnDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *txnDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *txnDecoder) u32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail(errTxnCorrupt)
	}
	return uint32(v)
}

func (d *txnDecoder) flag() bool {
	if d.err != nil {
		return false
	}
	b, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
		return false
	}
	if b > tagSome {
		d.fail(errTxnCorrupt)
	}
	return b == tagSome
}

func (d *txnDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return ""
	}
	if n > 1<<20 {
		d.fail(errTxnCorrupt)
		return ""
	}
	if cap(d.scratch) < int(n) {
		d.scratch = make([]byte, n)
	}
	b := d.scratch[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return ""
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.strs) < 4096 {
		d.strs[s] = s
	}
	return s
}

// sliceLen reads a slice's tag and length: -1 for nil.
func (d *txnDecoder) sliceLen() int {
	v := d.uvarint()
	if d.err != nil || v == 0 {
		return -1
	}
	if v-1 > 1<<24 {
		d.fail(errTxnCorrupt)
		return -1
	}
	return int(v - 1)
}

func (d *txnDecoder) optU32() *uint32 {
	if !d.flag() {
		return nil
	}
	v := d.u32()
	return &v
}

// decode reads the next transaction into t; io.EOF when the run is read
// to its end (at a record's boundary).
func (d *txnDecoder) decode(t *Transaction) error {
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	if _, err := d.r.Peek(1); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return fmt.Errorf("transactions: reading back a temporary file: %w", err)
	}
	*t = Transaction{}
	t.XID = Hex32(d.u32())
	t.Connection = int(d.varint())
	t.Direction = d.str()
	t.Program = d.optU32()
	t.ProgramName = d.str()
	t.Version = d.optU32()
	t.Procedure = d.optU32()
	t.ProcedureName = d.str()
	if n := d.sliceLen(); n >= 0 {
		t.Operations = make([]string, n)
		for i := range t.Operations {
			t.Operations[i] = d.str()
		}
	}
	t.Call = d.side()
	t.Reply = d.side()
	t.RDMA.ReadBytes = d.uvarint()
	t.RDMA.WriteBytes = d.uvarint()
	if d.flag() {
		s := Hex32(d.u32())
		t.InvalidatedSTag = &s
	}
	if d.flag() {
		var b [8]byte
		if _, err := io.ReadFull(d.r, b[:]); err != nil {
			d.fail(err)
		}
		us := math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
		t.LatencyUS = &us
	}
	t.Outcome = d.str()
	if d.flag() {
		h := Hex32(d.u32())
		t.FHHash = &h
	}
	t.Name = d.str()
	if d.flag() {
		h := Hex32(d.u32())
		t.ReplyFHHash = &h
	}
	if d.err != nil {
		return fmt.Errorf("transactions: reading back a temporary file: %w", d.err)
	}
	return nil
}

func (d *txnDecoder) side() *TxnSide {
	if !d.flag() {
		return nil
	}
	s := &TxnSide{}
	if n := d.sliceLen(); n >= 0 {
		s.Packets = make([]int, n)
		for i := range s.Packets {
			s.Packets[i] = int(d.varint())
		}
	}
	s.RDMAProc = d.str()
	s.RDMAVers = d.u32()
	s.Credits = d.u32()
	if n := d.sliceLen(); n >= 0 {
		s.Chunks = make([]TxnChunk, n)
		for i := range s.Chunks {
			c := &s.Chunks[i]
			c.Kind = d.str()
			c.Position = d.optU32()
			if n := d.sliceLen(); n >= 0 {
				c.Segments = make([]TxnSegment, n)
				for j := range c.Segments {
					sg := &c.Segments[j]
					sg.Handle = Hex32(d.u32())
					sg.Length = d.u32()
					sg.Offset = Hex64(d.uvarint())
					if n := d.sliceLen(); n >= 0 {
						sg.RDMAOps = make([]TxnRDMAOp, n)
						for k := range sg.RDMAOps {
							op := &sg.RDMAOps[k]
							op.Kind = d.str()
							op.FirstPacket = int(d.varint())
							op.LastPacket = int(d.varint())
							op.Offset = Hex64(d.uvarint())
							op.Length = d.u32()
							op.Complete = d.flag()
						}
					}
				}
			}
			if d.err != nil {
				return s
			}
		}
	}
	s.InlineBytes = int(d.varint())
	s.RPCBytes = int(d.varint())
	s.Rebuilt = d.flag()
	s.Status = d.str()
	return s
}
