package dissect

import (
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// pipelineCaptures are every capture of testdata/pcaps: real, lossy,
// mutated (damaged records, truncated files), synthetic encapsulations
// (native IB with its VCRC, RoCEv1, ERF, IPv6, VLAN, SLL) and public ones.
func pipelineCaptures(t *testing.T) []string {
	t.Helper()
	var caps []string
	for _, pat := range []string{"*.pcap*", "lossy/*.pcap*", "mutated/*.pcap*", "synthetic/*.pcap*", "public/*.pcap*"} {
		m, err := filepath.Glob(filepath.Join("..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, m...)
	}
	if len(caps) < 50 {
		t.Fatalf("only %d captures found", len(caps))
	}
	return caps
}

// TestPipelineHandOver: what the pipeline's reading goroutine hands over
// of a record (pipeline.hold: the frame's bytes and comments, the CRC
// verdicts, the request hash, the TCP checksums — or not these, left to
// the engine), decoded by the engine's goroutine (decodePre), makes the
// same Packet as decoding the record in line, field for field, and
// requestHash is then packetHash of its BTH and tcpChecksum the segment's
// segmentChecksum — for every record of every capture. A verdict or hash computed from other bytes, or
// kept from another record, fails it.
func TestPipelineHandOver(t *testing.T) {
	var hashed, crcs, tcp, n int
	for _, name := range pipelineCaptures(t) {
		r, err := source.Open(name)
		if err != nil {
			continue // not a capture the reader opens (mutated headers): nothing to hand over
		}
		pl := &pipeline{dec: Decoder{RoCEPort: DefaultRoCEPort}}
		b := &pipeBatchBuf{}
		var inline, dec Decoder
		inline.RoCEPort, dec.RoCEPort = DefaultRoCEPort, DefaultRoCEPort
		var want, got Packet
		for {
			rec, err := r.Next()
			if err != nil {
				var serr *source.Error
				if errors.As(err, &serr) && !serr.Final {
					continue
				}
				if !errors.Is(err, io.EOF) && !errors.As(err, &serr) {
					t.Fatalf("%s: %v", name, err)
				}
				break
			}
			// Several records per batch, as the pipeline holds them.
			if b.n == 3 {
				b.n, b.data, b.cdata, b.comments = 0, b.data[:0], b.cdata[:0], b.comments[:0]
			}
			it := &b.recs[b.n]
			b.n++
			// Most records with their CRCs and hash computed ahead,
			// some without (the reader leaves them to the engine when
			// it is about to run dry).
			ahead := rec.Number%4 != 0
			pl.hold(b, it, &rec, ahead)

			// Fresh Packets: a reused one keeps the layers of earlier
			// records (valid only when Has says so), whose slices point
			// into bytes overwritten since.
			want, got = Packet{}, Packet{}
			want.Number, want.Timestamp, want.Interface = rec.Number, rec.CI.Timestamp, rec.CI.InterfaceIndex
			want.CaptureLength, want.Length, want.LinkType, want.Comments = rec.CI.CaptureLength, rec.CI.Length, rec.LinkType, rec.Comments
			inline.Decode(&want, rec.Data)

			got.Number, got.Timestamp, got.Interface = it.number, it.ts, it.iface
			got.CaptureLength, got.Length, got.LinkType = it.caplen, it.length, it.linkType
			got.Comments = b.comments[it.cstart:it.cend:it.cend]
			if len(got.Comments) == 0 && want.Comments == nil {
				got.Comments = nil
			}
			dec.decodePre(&got, b.data[it.start:it.end:it.end], &it.pre)

			if got.hashed {
				hashed++
				if h := packetHash(&want.BTH); requestHash(&got) != h {
					t.Errorf("%s packet %d: request hash %x, in line %x", name, rec.Number, requestHash(&got), h)
				}
			} else if ahead && want.Has(roce.LayerTypeBTH) && want.BTH.OpCode.IsRequest() {
				t.Errorf("%s packet %d: %v request not hashed ahead", name, rec.Number, want.BTH.OpCode)
			}
			if want.ICRC.Status != CRCNotApplicable || want.VCRC.Status != CRCNotApplicable {
				crcs++
			}
			if got.tcpSummed {
				tcp++
				if s := segmentChecksum(&want); got.tcpSum != s || tcpChecksum(&got) != s {
					t.Errorf("%s packet %d: TCP checksums %v ahead, %v in line", name, rec.Number, got.tcpSum, s)
				}
			} else if ahead && want.Has(layers.LayerTypeTCP) {
				t.Errorf("%s packet %d: TCP segment not summed ahead", name, rec.Number)
			}
			want.hash, want.hashed = got.hash, got.hashed
			want.tcpSum, want.tcpSummed = got.tcpSum, got.tcpSummed
			if !reflect.DeepEqual(&want, &got) {
				t.Errorf("%s packet %d: handed over and decoded, the packet differs from the one decoded in line in %v",
					name, rec.Number, differentFields(&want, &got))
			}
			n++
		}
		r.Close()
	}
	if hashed < 1000 || crcs < 1000 || tcp < 1000 {
		t.Errorf("%d packets, %d hashed ahead, %d with a CRC, %d TCP segments summed ahead: too few to tell", n, hashed, crcs, tcp)
	}
}

// differentFields names the fields of two Packets that differ.
func differentFields(a, b *Packet) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		if f := va.Type().Field(i); f.IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestPipelineHandOverAllocatesNothing: holding a record in a batch and
// decoding it on the engine's side allocates nothing once the batch's
// buffers have grown (the pipeline's steady state).
func TestPipelineHandOverAllocatesNothing(t *testing.T) {
	r, err := source.Open(filepath.Join("..", "testdata", "pcaps", "rxe-nfs3.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pl := &pipeline{dec: Decoder{RoCEPort: DefaultRoCEPort}}
	b := &pipeBatchBuf{}
	dec := Decoder{RoCEPort: DefaultRoCEPort}
	var p Packet
	measured := 0
	for i := 0; i < 2000; i++ {
		rec, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		once := func() {
			b.n, b.data, b.cdata, b.comments = 0, b.data[:0], b.cdata[:0], b.comments[:0]
			it := &b.recs[0]
			b.n++
			pl.hold(b, it, &rec, true)
			p.LinkType, p.CaptureLength, p.Length = it.linkType, it.caplen, it.length
			dec.decodePre(&p, b.data[it.start:it.end:it.end], &it.pre)
		}
		once()
		if i%50 != 0 {
			continue
		}
		if allocs := testing.AllocsPerRun(10, once); allocs != 0 {
			t.Errorf("packet %d (%v): %v allocations per hand-over", rec.Number, p.BTH.OpCode, allocs)
		}
		measured++
	}
	if measured < 40 {
		t.Fatalf("only %d packets measured", measured)
	}
}
