package nfs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// realBody is an NFS body from a capture with how to decode it.
type realBody struct {
	prog, vers, proc uint32
	call             bool
	red              nfs.Reduction
	body             []byte
	sig              string
}

// realBodies returns one body of each kind (procedure, direction, first
// bytes of the op list) of the RoCE captures, the backchannel CB_COMPOUNDs
// of rxe-nfs-callback among them (decoded by Info.Decode as program
// 0x40000000, the number Linux's CREATE_SESSION names).
func realBodies(t testing.TB) []realBody {
	t.Helper()
	var out []realBody
	seen := map[string]bool{}
	var in nfs.Info
	for _, name := range []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small", "rxe-nfs-callback"} {
		msgs, _ := messages(t, name)
		calls := callsByXID{}
		for _, m := range msgs {
			h := &m.hdr
			call := h.MsgType == oncrpc.Call
			k, ok := calls.of(h)
			if !ok {
				continue
			}
			if !nfs.Known(k.prog) || !h.HasBody() {
				continue
			}
			rb := realBody{prog: k.prog, vers: k.vers, proc: k.proc, call: call, body: h.Payload(),
				red: nfs.Reduction{HeaderLen: h.HeaderLen, ReadPositions: m.reads, WriteChunks: m.writes}}
			if in.Decode(rb.prog, rb.vers, rb.proc, call, rb.body, &rb.red) != nil {
				continue
			}
			rb.sig = fmt.Sprintf("%d/%d/%d/%v/%d/%d/%d", k.prog, k.vers, k.proc, call, len(in.Items), len(m.reads), len(m.writes))
			for _, op := range in.Ops {
				rb.sig += "," + op.Name()
			}
			if !seen[rb.sig] {
				seen[rb.sig] = true
				out = append(out, rb)
			}
		}
	}
	return out
}

// FuzzDecode feeds arbitrary bodies to every decoder entry point; nothing
// may panic, and what is reported must lie inside the body.
func FuzzDecode(f *testing.F) {
	for _, rb := range realBodies(f) {
		mode := uint8(0)
		if len(rb.red.WriteChunks) > 0 || len(rb.red.ReadPositions) > 0 {
			mode = 1
		}
		f.Add(rb.prog, rb.vers, rb.proc, rb.call, mode, rb.body)
	}
	f.Add(uint32(0x40000000), uint32(1), uint32(1), true, uint8(0), []byte(xdr{}.opaque(nil).u32(1, 0, 1, 11).zeros(32).u32(0)))
	var in nfs.Info
	f.Fuzz(func(t *testing.T, prog, vers, proc uint32, call bool, mode uint8, body []byte) {
		var red *nfs.Reduction
		switch mode % 3 {
		case 1:
			red = &nfs.Reduction{Auto: true}
		case 2:
			red = &nfs.Reduction{WriteChunks: []uint32{1, 0, 1}, ReadPositions: []uint32{uint32(len(body) / 2 &^ 3)}}
		}
		check := func(err error) {
			if in.Len < 0 || in.Len > len(body) {
				t.Fatalf("Len %d of %d", in.Len, len(body))
			}
			for _, it := range in.Items {
				if it.LenOffset < 0 || it.Offset != it.LenOffset+4 || it.End() > len(body) {
					t.Fatalf("item %+v outside body %d", it, len(body))
				}
			}
			for _, op := range in.Ops {
				if op.Offset < 0 || (err == nil && (op.End < op.Offset || op.End > len(body))) {
					t.Fatalf("op %+v outside body %d", op, len(body))
				}
			}
			for _, c := range in.CBDetails {
				if c.Op < 0 || c.Op >= len(in.Ops) || len(c.FH) > 128 {
					t.Fatalf("callback detail %+v: %d ops", c, len(in.Ops))
				}
			}
			if len(in.Values) > nfs.MaxValues || len(in.Arena) > nfs.MaxArenaBytes {
				t.Fatalf("%d values, %d arena bytes: past the bounds", len(in.Values), len(in.Arena))
			}
			for _, v := range in.Values {
				if uint64(v.Off)+uint64(v.Len) > uint64(len(in.Arena)) || v.Key == 0 || v.Key >= uint16(nfs.KeyNfstime4)+1 {
					t.Fatalf("value %+v outside arena %d", v, len(in.Arena))
				}
			}
			if o := in.Object(); uint64(o.NameOff)+uint64(o.NameLen) > uint64(len(in.Arena)) {
				t.Fatalf("object %+v outside arena %d", o, len(in.Arena))
			}
			if err != nil && err.Error() == "" {
				t.Fatal("empty error")
			}
		}
		check(in.Decode(prog, vers, proc, call, body, red))
		check(in.DecodeCallback(prog, 1, proc&1, call, body, red))
	})
}

func benchBody(b *testing.B, want func(rb realBody) bool) realBody {
	b.Helper()
	for _, rb := range realBodies(b) {
		if want(rb) {
			return rb
		}
	}
	b.Skip("no such body in the captures")
	return realBody{}
}

func benchDecode(b *testing.B, rb realBody) {
	var in nfs.Info
	b.ReportAllocs()
	b.SetBytes(int64(len(rb.body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := in.Decode(rb.prog, rb.vers, rb.proc, rb.call, rb.body, &rb.red); err != nil {
			b.Fatal(err)
		}
	}
}

// An NFSv4.1 READ reply whose data went by Write chunk (SEQUENCE PUTFH READ).
func BenchmarkDecodeNFS4ReadReply(b *testing.B) {
	benchDecode(b, benchBody(b, func(rb realBody) bool {
		return rb.vers == 4 && !rb.call && len(rb.red.WriteChunks) > 0
	}))
}

// An NFSv4.2 WRITE call whose data is in a Read chunk (SEQUENCE PUTFH WRITE GETATTR).
func BenchmarkDecodeNFS4WriteCall(b *testing.B) {
	benchDecode(b, benchBody(b, func(rb realBody) bool {
		return rb.vers == 4 && rb.call && len(rb.red.ReadPositions) > 0
	}))
}

// A real backchannel CB_COMPOUND Call (CB_SEQUENCE CB_RECALL), with its
// details read.
func BenchmarkDecodeCBCompoundCall(b *testing.B) {
	benchDecode(b, benchBody(b, func(rb realBody) bool {
		return rb.prog == 0x40000000 && rb.call && rb.proc == 1
	}))
}

// The largest NFSv3 READDIRPLUS reply (a Long Reply rebuilt from its Reply chunk).
func BenchmarkDecodeNFS3ReaddirplusReply(b *testing.B) {
	var best realBody
	for _, rb := range realBodies(b) {
		if rb.prog == 100003 && rb.vers == 3 && rb.proc == 17 && !rb.call && len(rb.body) > len(best.body) {
			best = rb
		}
	}
	if best.body == nil {
		b.Skip("no READDIRPLUS reply")
	}
	benchDecode(b, best)
}

// TestDecodeAllocs: once an Info has been used, decoding allocates nothing,
// the real CB_COMPOUNDs (with their CB_SEQUENCE and CB_RECALL details)
// included.
func TestDecodeAllocs(t *testing.T) {
	bodies := realBodies(t)
	if len(bodies) < 20 {
		t.Fatalf("only %d kinds of real bodies", len(bodies))
	}
	cb := 0
	for _, rb := range bodies {
		if rb.prog == 0x40000000 && strings.Contains(rb.sig, ",CB_SEQUENCE,CB_RECALL") {
			cb++
		}
	}
	if cb != 2 {
		t.Errorf("%d real CB_COMPOUND bodies (Call and Reply of CB_SEQUENCE, CB_RECALL), want 2", cb)
	}
	var in nfs.Info
	for _, rb := range bodies {
		_ = in.Decode(rb.prog, rb.vers, rb.proc, rb.call, rb.body, &rb.red)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for i := range bodies {
			rb := &bodies[i]
			if err := in.Decode(rb.prog, rb.vers, rb.proc, rb.call, rb.body, &rb.red); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass over %d bodies", allocs, len(bodies))
	}
}
