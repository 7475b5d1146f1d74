package rpcrdma_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/internal/capture"
)

// The NFS-over-RDMA captures and the tshark 4.0.17 output for them
// (testdata/gen-tshark.sh makes the .tsv files).
var nfsCaptures = []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small", "siw-nfs3", "siw-nfs41", "siw-nfs42-small"}

func pcapPath(name string) string {
	return filepath.Join("..", "testdata", "pcaps", name+".pcap")
}

func loadSends(t testing.TB, name string) []capture.Send {
	t.Helper()
	pkts, err := capture.ReadPcap(pcapPath(name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return capture.Sends(pkts)
}

// tsharkRows reads a tshark -T fields file: frame number -> columns after it.
func tsharkRows(t testing.TB, file string) map[int][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[int][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatalf("%s: bad line %q", file, sc.Text())
		}
		rows[n] = cols[1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// rpcordma field columns, in gen-tshark.sh order.
var rpcordmaFields = []string{
	"rpcordma.xid", "rpcordma.version", "rpcordma.flow_control", "rpcordma.msg_type",
	"rpcordma.reads_count", "rpcordma.writes_count", "rpcordma.reply_count",
	"rpcordma.segment_count", "rpcordma.position", "rpcordma.rdma_handle",
	"rpcordma.rdma_length", "rpcordma.rdma_offset",
}

// tsharkFields renders a decoded v1 header the way tshark -T fields prints
// the rpcordma fields: xid and handles 0x%08x, offsets 0x%016x, the rest
// decimal; reads_count counts Read list entries (segments), writes_count Write
// chunks, reply_count is 0 or 1; handles, lengths and offsets list the Read
// list, then the Write list, then the Reply chunk.
func tsharkFields(h *rpcrdma.Header, cols [][]string) {
	add := func(i int, s string) { cols[i] = append(cols[i], s) }
	add(0, fmt.Sprintf("0x%08x", h.XID))
	add(1, strconv.FormatUint(uint64(h.Vers), 10))
	add(2, strconv.FormatUint(uint64(h.Credit), 10))
	add(3, strconv.FormatUint(uint64(h.Proc), 10))
	if h.Proc == rpcrdma.RDMADone || h.Proc == rpcrdma.RDMAError {
		return
	}
	add(4, strconv.Itoa(len(h.ReadList)))
	add(5, strconv.Itoa(len(h.WriteList)))
	reply := 0
	if h.HasReplyChunk {
		reply = 1
	}
	add(6, strconv.Itoa(reply))
	seg := func(s rpcrdma.Segment) {
		add(9, fmt.Sprintf("0x%08x", s.Handle))
		add(10, strconv.FormatUint(uint64(s.Length), 10))
		add(11, fmt.Sprintf("0x%016x", s.Offset))
	}
	for _, r := range h.ReadList {
		add(8, strconv.FormatUint(uint64(r.Position), 10))
		seg(r.Segment)
	}
	for _, w := range h.WriteList {
		add(7, strconv.Itoa(len(w.Segments)))
		for _, s := range w.Segments {
			seg(s)
		}
	}
	if h.HasReplyChunk {
		add(7, strconv.Itoa(len(h.ReplyChunk.Segments)))
		for _, s := range h.ReplyChunk.Segments {
			seg(s)
		}
	}
}

// TestRealHeadersAgainstTshark decodes every RDMA Send of the NFS captures
// and compares every rpcordma field with tshark's, frame by frame.
func TestRealHeadersAgainstTshark(t *testing.T) {
	for _, name := range nfsCaptures {
		t.Run(name, func(t *testing.T) {
			sends := loadSends(t, name)
			want := tsharkRows(t, filepath.Join("testdata", name+".rpcordma.tsv"))
			got := map[int][][]string{}
			var h rpcrdma.Header
			stats := map[string]int{}
			for _, s := range sends {
				if err := h.DecodeFromBytes(s.Payload); err != nil {
					t.Errorf("frame %d: %v", s.Frame, err)
					continue
				}
				stats[h.Proc.String()]++
				if len(h.ReadList) > 0 {
					stats["read list"]++
				}
				if len(h.WriteList) > 0 {
					stats["write list"]++
				}
				if h.HasReplyChunk {
					stats["reply chunk"]++
				}
				if s.Invalidate {
					stats["with invalidate"]++
				}
				cols := got[s.Frame]
				if cols == nil {
					cols = make([][]string, len(rpcordmaFields))
					got[s.Frame] = cols
				}
				tsharkFields(&h, cols)
				if h.Proc == rpcrdma.RDMAMsg && len(h.Payload()) >= 4 {
					// The RPC message starts at HeaderLen: its XID repeats rdma_xid.
					if x := uint32(h.Payload()[0])<<24 | uint32(h.Payload()[1])<<16 | uint32(h.Payload()[2])<<8 | uint32(h.Payload()[3]); x != h.XID {
						t.Errorf("frame %d: RPC XID at HeaderLen %d is %#x, rdma_xid %#x", s.Frame, h.HeaderLen, x, h.XID)
					}
				}
			}
			compared := 0
			for frame, w := range want {
				g, ok := got[frame]
				if !ok {
					t.Errorf("frame %d: tshark has RPC-over-RDMA, we decoded no Send", frame)
					continue
				}
				compared++
				for i, f := range rpcordmaFields {
					gs := strings.Join(g[i], ",")
					ws := ""
					if i < len(w) {
						ws = w[i]
					}
					if gs != ws {
						t.Errorf("frame %d %s: got %q, tshark %q", frame, f, gs, ws)
					}
				}
			}
			for frame := range got {
				if _, ok := want[frame]; !ok {
					t.Errorf("frame %d: we decoded a Send tshark does not show as RPC-over-RDMA", frame)
				}
			}
			if compared == 0 {
				t.Fatal("no frame compared")
			}
			t.Logf("%d Sends decoded, %d frames compared field by field with tshark; %v", len(sends), compared, stats)
		})
	}
}
