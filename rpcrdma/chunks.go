package rpcrdma

import "encoding/binary"

// DefaultMaxSegments is the segment cap a decoder uses when its MaxSegments is 0;
// the same number caps the Write chunks of one Write list.
// It bounds the work and memory one header can cost; real headers carry a few
// segments (a 1024-byte inline threshold has room for at most 62).
const DefaultMaxSegments = 1024

// Segment is an RDMA segment: one registered memory region of the Requester
// (RFC 8166 section 3.4.3, XDR xdr_rdma_segment; draft-07 rpcrdma2_segment).
// Handle is the STag / R_Key, Offset the region's virtual address.
type Segment struct {
	Handle uint32 // rdma_handle
	Length uint32 // rdma_length
	Offset uint64 // rdma_offset
}

// ReadSegment is one Read list entry: a segment plus the XDR position in the
// RPC Call's Payload stream where its data belongs (RFC 8166 section 3.4.5,
// XDR xdr_read_chunk; draft-07 rpcrdma2_read_segment).
type ReadSegment struct {
	Position uint32 // rdma_position
	Segment
}

// ReadChunk is a Read chunk: the Read list segments that share one Position,
// in list order (RFC 8166 section 3.4.5: "a Read chunk is a list of Read
// segments that have the same Position value"). Position 0 carries a whole
// RPC Call (a Long Call).
type ReadChunk struct {
	Position uint32
	Segments []Segment
}

// Length returns the sum of the chunk's segment lengths.
func (c ReadChunk) Length() uint64 { return sumLengths(c.Segments) }

// WriteChunk is a Write chunk or the Reply chunk: a counted array of segments
// (RFC 8166 sections 3.4.6 and 4.3.2-4.3.3, XDR xdr_write_chunk; draft-07
// rpcrdma2_write_chunk).
type WriteChunk struct {
	Segments []Segment // rdma_target
}

// Length returns the sum of the chunk's segment lengths.
func (c WriteChunk) Length() uint64 { return sumLengths(c.Segments) }

func sumLengths(segs []Segment) uint64 {
	var n uint64
	for _, s := range segs {
		n += uint64(s.Length)
	}
	return n
}

// ChunkLists holds the three chunk lists that RDMA_MSG, RDMA_NOMSG and RDMA_MSGP
// carry (RFC 8166 section 4.3, XDR rpc_rdma_header), and that the version 2
// CALL/REPLY header types carry in their own combinations.
type ChunkLists struct {
	// ReadList is the Read list in wire order (rdma_reads).
	ReadList []ReadSegment
	// ReadChunks groups ReadList by Position, chunks in order of first
	// appearance, segments in list order. Decoders fill it; encoders ignore it.
	ReadChunks []ReadChunk
	// WriteList is the Write list (rdma_writes), one entry per Write chunk.
	WriteList []WriteChunk
	// HasReplyChunk tells whether the Reply chunk is present (its optional-data
	// discriminator was 1); ReplyChunk is meaningful only then.
	HasReplyChunk bool
	ReplyChunk    WriteChunk

	// Backing storage reused across decodes.
	readSegs  []Segment // ReadChunks' segments, grouped
	writeSegs []Segment // WriteList's and ReplyChunk's segments
	spans     []span    // WriteList chunk boundaries in writeSegs
}

type span struct{ start, end int }

func (c *ChunkLists) reset() {
	c.ReadList = c.ReadList[:0]
	c.ReadChunks = c.ReadChunks[:0]
	c.WriteList = c.WriteList[:0]
	c.HasReplyChunk = false
	c.ReplyChunk = WriteChunk{}
	c.readSegs = c.readSegs[:0]
	c.writeSegs = c.writeSegs[:0]
	c.spans = c.spans[:0]
}

// SegmentCount returns the number of segments in all three lists.
func (c *ChunkLists) SegmentCount() int {
	n := len(c.ReadList)
	for _, w := range c.WriteList {
		n += len(w.Segments)
	}
	if c.HasReplyChunk {
		n += len(c.ReplyChunk.Segments)
	}
	return n
}

// decoder reads XDR words from a transport header and builds DecodeErrors
// with context.
type decoder struct {
	b     []byte
	off   int
	vers  uint32
	typ   uint32
	max   int // segment cap
	nsegs int // segments decoded so far
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) fail(part Part, chunk, seg int, r Reason, value uint32, need int) *DecodeError {
	return &DecodeError{
		Vers: d.vers, Type: d.typ, Part: part, Chunk: chunk, Segment: seg,
		Offset: d.off, Reason: r, Value: value, Need: need, Have: d.left(),
	}
}

// u32 reads one XDR unsigned int.
func (d *decoder) u32(part Part, chunk, seg int) (uint32, error) {
	if d.left() < 4 {
		return 0, d.fail(part, chunk, seg, ErrTruncated, 0, 4)
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

// disc reads an optional-data discriminator (XDR bool: 0 or 1).
func (d *decoder) disc(part Part, chunk int) (bool, error) {
	v, err := d.u32(part, chunk, -1)
	if err != nil {
		return false, err
	}
	switch v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	d.off -= 4
	return false, d.fail(part, chunk, -1, ErrBadDiscriminator, v, 0)
}

func (d *decoder) segment(b []byte) Segment {
	return Segment{
		Handle: binary.BigEndian.Uint32(b),
		Length: binary.BigEndian.Uint32(b[4:]),
		Offset: binary.BigEndian.Uint64(b[8:]),
	}
}

// readList decodes an XDR read list (xdr_read_list / rpcrdma2_read_list) into
// *dst. The list ends at a 0 discriminator; every entry consumes 24 bytes, so a
// list without its terminator stops at the end of the input.
func (d *decoder) readList(part Part, dst *[]ReadSegment) error {
	for i := 0; ; i++ {
		more, err := d.disc(part, i)
		if err != nil || !more {
			return err
		}
		if d.left() < 20 {
			return d.fail(part, i, -1, ErrTruncated, 0, 20)
		}
		if d.nsegs >= d.max {
			return d.fail(part, i, -1, ErrTooManySegments, uint32(d.max), 0)
		}
		d.nsegs++
		b := d.b[d.off:]
		*dst = append(*dst, ReadSegment{Position: binary.BigEndian.Uint32(b), Segment: d.segment(b[4:])})
		d.off += 20
	}
}

// writeChunk decodes one counted array of segments (xdr_write_chunk) into
// c.writeSegs and returns its span.
func (d *decoder) writeChunk(c *ChunkLists, part Part, chunk int) (span, error) {
	n, err := d.u32(part, chunk, -1)
	if err != nil {
		return span{}, err
	}
	if uint64(n)*16 > uint64(d.left()) {
		return span{}, d.fail(part, chunk, -1, ErrCountTooLarge, n, int(min(uint64(n)*16, 1<<31)))
	}
	if d.nsegs+int(n) > d.max {
		return span{}, d.fail(part, chunk, int(d.max-d.nsegs), ErrTooManySegments, uint32(d.max), 0)
	}
	d.nsegs += int(n)
	s := span{start: len(c.writeSegs)}
	for i := 0; i < int(n); i++ {
		c.writeSegs = append(c.writeSegs, d.segment(d.b[d.off:]))
		d.off += 16
	}
	s.end = len(c.writeSegs)
	return s, nil
}

// writeList decodes an XDR write list (xdr_write_list / rpcrdma2_write_list).
func (d *decoder) writeList(c *ChunkLists, part Part) error {
	for i := 0; ; i++ {
		more, err := d.disc(part, i)
		if err != nil || !more {
			return err
		}
		if i >= d.max {
			return d.fail(part, i, -1, ErrTooManyChunks, uint32(d.max), 0)
		}
		s, err := d.writeChunk(c, part, i)
		if err != nil {
			return err
		}
		c.spans = append(c.spans, s)
	}
}

// replyChunk decodes an optional Write chunk (xdr_write_chunk *rdma_reply).
func (d *decoder) replyChunk(c *ChunkLists, part Part) (span, error) {
	present, err := d.disc(part, -1)
	if err != nil || !present {
		return span{}, err
	}
	c.HasReplyChunk = true
	return d.writeChunk(c, part, -1)
}

// chunkLists decodes the read list, write list and reply chunk in the order
// of rpc_rdma_header, and links the derived slices.
func (d *decoder) chunkLists(c *ChunkLists) error {
	if err := d.readList(PartReadList, &c.ReadList); err != nil {
		return err
	}
	if err := d.writeList(c, PartWriteList); err != nil {
		return err
	}
	rs, err := d.replyChunk(c, PartReplyChunk)
	if err != nil {
		return err
	}
	c.link(rs)
	return nil
}

// link points WriteList and ReplyChunk into writeSegs (after all appends,
// so no slice refers to a stale backing array) and groups the Read list.
func (c *ChunkLists) link(reply span) {
	for _, s := range c.spans {
		c.WriteList = append(c.WriteList, WriteChunk{Segments: c.writeSegs[s.start:s.end:s.end]})
	}
	if c.HasReplyChunk {
		c.ReplyChunk = WriteChunk{Segments: c.writeSegs[reply.start:reply.end:reply.end]}
	}
	c.groupReads()
}

// groupReads fills ReadChunks from ReadList: one chunk per distinct Position,
// in order of first appearance, segments in list order (RFC 8166 section
// 3.4.5). Quadratic in the list length, which MaxSegments bounds; real lists
// hold one or two positions.
func (c *ChunkLists) groupReads() {
	// Grow once so that no sub-slice handed out below goes stale.
	if cap(c.readSegs) < len(c.ReadList) {
		c.readSegs = make([]Segment, 0, len(c.ReadList))
	}
	for i, rs := range c.ReadList {
		seen := false
		for _, r := range c.ReadList[:i] {
			if r.Position == rs.Position {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		start := len(c.readSegs)
		for _, r := range c.ReadList[i:] {
			if r.Position == rs.Position {
				c.readSegs = append(c.readSegs, r.Segment)
			}
		}
		end := len(c.readSegs)
		c.ReadChunks = append(c.ReadChunks, ReadChunk{Position: rs.Position, Segments: c.readSegs[start:end:end]})
	}
}

// Encoding.

func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

func appendSegment(b []byte, s Segment) []byte {
	b = binary.BigEndian.AppendUint32(b, s.Handle)
	b = binary.BigEndian.AppendUint32(b, s.Length)
	return binary.BigEndian.AppendUint64(b, s.Offset)
}

func appendReadList(b []byte, l []ReadSegment) []byte {
	for _, r := range l {
		b = appendU32(b, 1)
		b = appendU32(b, r.Position)
		b = appendSegment(b, r.Segment)
	}
	return appendU32(b, 0)
}

func appendWriteChunk(b []byte, w WriteChunk) []byte {
	b = appendU32(b, uint32(len(w.Segments)))
	for _, s := range w.Segments {
		b = appendSegment(b, s)
	}
	return b
}

func appendWriteList(b []byte, l []WriteChunk) []byte {
	for _, w := range l {
		b = appendU32(b, 1)
		b = appendWriteChunk(b, w)
	}
	return appendU32(b, 0)
}

func appendReplyChunk(b []byte, present bool, w WriteChunk) []byte {
	if !present {
		return appendU32(b, 0)
	}
	return appendWriteChunk(appendU32(b, 1), w)
}

// appendChunkLists encodes rpc_rdma_header: read list, write list, reply chunk.
func (c *ChunkLists) appendChunkLists(b []byte) []byte {
	b = appendReadList(b, c.ReadList)
	b = appendWriteList(b, c.WriteList)
	return appendReplyChunk(b, c.HasReplyChunk, c.ReplyChunk)
}
