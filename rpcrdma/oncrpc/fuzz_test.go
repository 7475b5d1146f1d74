package oncrpc_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/internal/capture"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// realRPC returns the RPC messages (cut to 256 bytes) of a capture's RDMA_MSG
// Sends, one per distinct program/procedure/type.
func realRPC(t testing.TB, name string) [][]byte {
	pkts, err := capture.ReadPcap(filepath.Join("..", "..", "testdata", "pcaps", name+".pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var rh rpcrdma.Header
	var h oncrpc.Header
	seen := map[[4]uint32]bool{}
	var out [][]byte
	for _, s := range capture.Sends(pkts) {
		if rh.DecodeFromBytes(s.Payload) != nil || rh.Proc != rpcrdma.RDMAMsg || h.DecodeFromBytes(rh.Payload()) != nil {
			continue
		}
		k := [4]uint32{uint32(h.MsgType), uint32(h.Prog), h.Proc, uint32(h.AcceptStat)}
		if seen[k] {
			continue
		}
		seen[k] = true
		p := rh.Payload()
		if len(p) > 256 {
			p = p[:256]
		}
		out = append(out, bytes.Clone(p))
	}
	return out
}

// FuzzRPC: no input panics; what decodes re-encodes to a header of the same
// length that decodes to the same encoding again (opaque padding is not
// checked on decode, so the first round may differ in pad bytes only).
func FuzzRPC(f *testing.F) {
	for _, name := range []string{"rxe-nfs3", "siw-nfs41"} {
		for _, s := range realRPC(f, name) {
			f.Add(s)
		}
	}
	f.Add(hx(f, authSysCall))
	f.Add(hx(f, `00000042 00000000 00000002 000186a3 00000004 00000001 00000006 0000001c
		00000001 00000000 00000007 00000002 00000005 aabbccdd ee000000 00000006 00000004 11223344`))
	f.Add(hx(f, `00000001 00000001 00000001 00000001 0000000d`))
	f.Add(hx(f, `00000001 00000001 00000000 00000000 00000000 00000002 00000002 00000004`))
	var h, h2 oncrpc.Header
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := h.DecodeFromBytes(data); err != nil {
			return
		}
		if h.HeaderLen > len(data) || len(h.Cred.Body) > oncrpc.MaxAuthBytes || len(h.AuthSys.GIDs) > 16 {
			t.Fatalf("header %+v", h)
		}
		b, err := h.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != h.HeaderLen {
			t.Fatalf("re-encoded %d bytes, header %d", len(b), h.HeaderLen)
		}
		if err := h2.DecodeFromBytes(b); err != nil {
			t.Fatalf("re-encoded header does not decode: %v", err)
		}
		b2, _ := h2.AppendBinary(nil)
		if !bytes.Equal(b, b2) {
			t.Fatalf("second round %x, first %x", b2, b)
		}
		if h.Cred.Flavor == oncrpc.AuthSysFlav {
			body, err := h.AuthSys.AppendBinary(nil)
			if err != nil || len(body) != len(h.Cred.Body) {
				t.Fatalf("AUTH_SYS re-encodes to %d bytes, body %d: %v", len(body), len(h.Cred.Body), err)
			}
		}
	})
}

func BenchmarkDecodeRPC(b *testing.B) {
	msgs := realRPC(b, "rxe-nfs3")
	var h oncrpc.Header
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := h.DecodeFromBytes(msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeAllocs(t *testing.T) {
	msgs := realRPC(t, "rxe-nfs3")
	var h oncrpc.Header
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		_ = h.DecodeFromBytes(msgs[i%len(msgs)])
		i++
	}); n != 0 {
		t.Errorf("%v allocations per decode", n)
	}
}
