package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestTreeWritersReuseNothingStale: -V and -T json keep their collector's
// buffers from packet to packet. Every packet of captures with every kind
// of instance (iWARP FPDUs, several RPC messages a packet, lossy streams,
// CM) written by one writer for the whole capture gives, packet by
// packet, what a new writer gives for that packet alone.
func TestTreeWritersReuseNothingStale(t *testing.T) {
	names := []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "siw-rping.pcap", "rxe-rping.pcap", "lossy/siw-nfs3-lossy.pcap", "lossy/siw-ib_write_bw-reorder.pcap", "lossy/rxe-nfs3-lossy.pcap"}
	for _, name := range names {
		path := filepath.Join("..", "testdata", "pcaps", name)
		r, err := source.Open(path)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		var kept, fresh bytes.Buffer
		writers := map[string][2]PacketWriter{}
		mk := map[string]func(*bytes.Buffer) PacketWriter{
			"-V":      func(b *bytes.Buffer) PacketWriter { return NewVerboseWriter(b) },
			"-T json": func(b *bytes.Buffer) PacketWriter { return NewJSONWriter(b) },
		}
		for k, f := range mk {
			writers[k] = [2]PacketWriter{f(&kept), nil}
		}
		e := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), nil))
		packets, instances := 0, 0
		err = e.Run(r, func(p *dissect.Packet) error {
			packets++
			if len(p.IWARP.FPDUs) > 1 || len(rpcordma.Records(p)) > 1 {
				instances++
			}
			for k, w := range writers {
				kept.Reset()
				fresh.Reset()
				if err := w[0].WritePacket(p); err != nil {
					return err
				}
				w[0].Flush()
				nw := mk[k](&fresh)
				if err := nw.WritePacket(p); err != nil {
					return err
				}
				nw.Flush()
				if !bytes.Equal(kept.Bytes(), fresh.Bytes()) {
					t.Fatalf("%s packet %d, %s: the writer that wrote the packets before writes\n%s\na new one\n%s", name, p.Number, k, kept.String(), fresh.String())
				}
			}
			return nil
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d packets, %d with several FPDUs or RPC messages", name, packets, instances)
		if packets == 0 {
			t.Errorf("%s: no packets", name)
		}
	}
}
