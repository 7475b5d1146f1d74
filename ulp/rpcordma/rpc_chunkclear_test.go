package rpcordma

import (
	"bytes"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// TestChunkDataReusedBufferReadsZeros: a chunk buffer taken from the
// spares (holding an earlier message's bytes) is cleared lazily; what no
// RDMA operation placed must still read as zeros, wherever the gaps are
// (before, between and after the placed ranges, placed out of order),
// as in a new buffer.
func TestChunkDataReusedBufferReadsZeros(t *testing.T) {
	// One Call starts the connection's session: the state has its Env.
	r := newTxnRig(t, Options{})
	h := rpcrdma.Header{XID: 1, Credit: 8, Proc: rpcrdma.RDMAMsg}
	r.send(c2s, v1msg(t, h, rpcCall(t, 1, oncrpc.ProgNFS, 3, 0, nil)), 0)
	e := r.e.st
	s := e.rpc()
	dirty := bytes.Repeat([]byte{0xAA}, 4096)
	s.bufs = append(s.bufs, dirty)
	tx := s.newTxn()
	tx.call.Chunks = []Chunk{{Kind: ChunkRead, Segments: []Segment{
		{Handle: 1, Length: 1000, Offset: 0x1000},
		{Handle: 2, Length: 1000, Offset: 0x9000},
	}}}
	place := func(si int, off uint64, n int, v byte) {
		e.placeChunkData(tx, 0, si, &dissect.RDMAOp{Offset: off, Data: bytes.Repeat([]byte{v}, n)})
	}
	want := make([]byte, 2000)
	put := func(at, n int, v byte) {
		for i := at; i < at+n; i++ {
			want[i] = v
		}
	}
	place(0, 0x1000+600, 100, 1) // [600,700)
	put(600, 100, 1)
	place(0, 0x1000+100, 50, 2) // [100,150), before the first
	put(100, 50, 2)
	place(1, 0x9000+10, 20, 3) // [1010,1030)
	put(1010, 20, 3)
	if &tx.chunkData[0][:cap(tx.chunkData[0])][0] != &dirty[0] {
		t.Fatal("the spare was not reused: the test tests nothing")
	}
	if got := tx.chunkPrefix(0, 800); !bytes.Equal(got[:800], want[:800]) {
		t.Fatal("the first 800 bytes differ")
	}
	if got := tx.chunkBytes(0); !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("byte %d: %#x, want %#x", i, got[i], want[i])
			}
		}
	}
	place(1, 0x9000+990, 10, 4) // after a read: still placed in place
	put(1990, 10, 4)
	if got := tx.chunkBytes(0); !bytes.Equal(got, want) {
		t.Fatal("after a second placement the buffer differs")
	}
}
