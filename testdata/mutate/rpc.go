package main

import (
	"encoding/binary"
	"fmt"
)

// Where the fields of an RPC-over-RDMA version 1 transport header sit in a
// Send's payload (RFC 8166 section 4.2: xid, vers, credit, proc at 0, 4, 8,
// 12; then, for RDMA_MSG and RDMA_NOMSG, the Read list, the Write list and
// the Reply chunk, XDR optional-data lists).
const (
	offXID    = 0
	offVers   = 4
	offCredit = 8
	offProc   = 12
	offLists  = 16
)

type segField struct {
	list                 string // "read", "write", "reply"
	chunk                int
	at                   int // offset of the segment (read: its position word)
	handle, length, offs int // offsets of the fields
}

type hdrLayout struct {
	readDisc  []int // offsets of the Read list discriminators
	writeDisc []int // offsets of the Write list discriminators (chunk present / end)
	replyDisc int   // offset of the Reply chunk discriminator
	segs      []segField
	end       int // header length: where the RPC message starts
}

// layout walks a version 1 RDMA_MSG/RDMA_NOMSG header.
func layout(p []byte) (hdrLayout, error) {
	var h hdrLayout
	off := offLists
	word := func() (uint32, error) {
		if off+4 > len(p) {
			return 0, fmt.Errorf("header runs past %d bytes", len(p))
		}
		v := binary.BigEndian.Uint32(p[off:])
		off += 4
		return v, nil
	}
	for {
		h.readDisc = append(h.readDisc, off)
		d, err := word()
		if err != nil {
			return h, err
		}
		if d == 0 {
			break
		}
		s := segField{list: "read", at: off, handle: off + 4, length: off + 8, offs: off + 12}
		off += 20
		h.segs = append(h.segs, s)
	}
	for c := 0; ; c++ {
		h.writeDisc = append(h.writeDisc, off)
		d, err := word()
		if err != nil {
			return h, err
		}
		if d == 0 {
			break
		}
		n, err := word()
		if err != nil {
			return h, err
		}
		for i := 0; i < int(n); i++ {
			h.segs = append(h.segs, segField{list: "write", chunk: c, at: off, handle: off, length: off + 4, offs: off + 8})
			off += 16
		}
	}
	h.replyDisc = off
	d, err := word()
	if err != nil {
		return h, err
	}
	if d == 1 {
		n, err := word()
		if err != nil {
			return h, err
		}
		for i := 0; i < int(n); i++ {
			h.segs = append(h.segs, segField{list: "reply", at: off, handle: off, length: off + 4, offs: off + 8})
			off += 16
		}
	}
	h.end = off
	if off > len(p) {
		return h, fmt.Errorf("header runs past %d bytes", len(p))
	}
	return h, nil
}

func (h hdrLayout) seg(list string, i int) segField {
	n := 0
	for _, s := range h.segs {
		if s.list == list {
			if n == i {
				return s
			}
			n++
		}
	}
	panic(fmt.Sprintf("no %s segment %d", list, i))
}

func be32(b []byte, off int) uint32     { return binary.BigEndian.Uint32(b[off:]) }
func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
