package dissect_test

import (
	"encoding/binary"
	"fmt"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// fuzzLinkTypes is what the first byte of a fuzz input selects
// (pipeline_fuzz_test.go).
var fuzzLinkTypes = dissect.FuzzLinkTypes

func linkSelector(lt layers.LinkType) byte {
	for i, l := range fuzzLinkTypes {
		if l == lt {
			return byte(i)
		}
	}
	panic(fmt.Sprintf("link type %d not in fuzzLinkTypes", lt))
}

// fuzzSeeds picks packets of every real capture (public/ included) and of
// the synthetic corpus: for each (link type, protocol, opcode or CM
// attribute) the first two, so that plain go test runs every kind of
// packet the captures hold without running all 40000 of them.
func fuzzSeeds(t testing.TB) [][]capPacket {
	t.Helper()
	files := realCaptures(t)
	corpus, err := synth.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range corpus {
		files = append(files, filepath.Join("..", synth.CorpusDir, f.Name))
	}
	var out [][]capPacket
	for _, file := range files {
		var d dissect.Decoder
		d.RoCEPort = dissect.DefaultRoCEPort
		var p dissect.Packet
		seen := map[string]int{}
		var picked []capPacket
		for _, cp := range loadCapture(t, file) {
			p.LinkType = cp.lt
			d.Decode(&p, cp.data)
			key := fmt.Sprint(cp.lt, dissect.Classify(&p), p.BTH.OpCode, p.CM.Attr, p.Err != nil)
			if seen[key] < 2 {
				seen[key]++
				picked = append(picked, cp)
			}
		}
		out = append(out, picked)
	}
	return out
}

// decodeChecked decodes data as link type lt and checks what must hold of
// any packet: no panic (in the decoder, the summary and every field's Get),
// CRC verdicts consistent with the values carried and computed.
func decodeChecked(t *testing.T, d *dissect.Decoder, p *dissect.Packet, lt layers.LinkType, data []byte) {
	p.LinkType = lt
	p.CaptureLength, p.Length = len(data), len(data)
	d.Decode(p, data)
	_ = fields.Info(p)
	_ = fields.Source(p)
	_ = fields.Destination(p)
	_ = fields.Protocol(p)
	for _, f := range fields.Registry.All() {
		f.Get(p, func(v fields.Value) { _ = f.Format(v); _ = f.Display(v) })
	}
	for _, c := range []dissect.CRCCheck{p.ICRC, p.VCRC} {
		if (c.Status == dissect.CRCGood && c.Carried != c.Computed) || (c.Status == dissect.CRCBad && c.Carried == c.Computed) {
			t.Fatalf("inconsistent CRC check %+v", c)
		}
	}
	if p.ICRC.Status != dissect.CRCNotApplicable && !p.Has(roce.LayerTypeBTH) {
		t.Fatalf("ICRC verdict %v without a BTH", p.ICRC.Status)
	}
	if p.Has(roce.LayerTypeBTH) && len(p.BTH.Payload) > len(data) {
		t.Fatalf("payload of %d bytes from %d bytes of input", len(p.BTH.Payload), len(data))
	}
}

// FuzzDecode feeds Decoder.Decode one frame of the link type its first
// byte selects.
func FuzzDecode(f *testing.F) {
	for _, file := range fuzzSeeds(f) {
		for _, cp := range file {
			f.Add(append([]byte{linkSelector(cp.lt)}, cp.data...))
		}
	}
	var d dissect.Decoder
	d.RoCEPort = dissect.DefaultRoCEPort
	var p dissect.Packet
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		lt := fuzzLinkTypes[int(in[0])%len(fuzzLinkTypes)]
		decodeChecked(t, &d, &p, lt, in[1:])
		if lt == 0 || lt == 9 {
			if p.Err == nil || len(p.Decoded) != 0 {
				t.Fatalf("link type %d decoded: %v %v", lt, p.Decoded, p.Err)
			}
		}
	})
}

// engineInput encodes packets for FuzzEngine: per packet a link-type
// selector, a 16-bit length and the bytes.
func engineInput(pkts []capPacket) []byte {
	var b []byte
	for _, cp := range pkts {
		n := min(len(cp.data), 0xFFFF)
		b = append(b, linkSelector(cp.lt), byte(n>>8), byte(n))
		b = append(b, cp.data[:n]...)
	}
	return b
}

// fuzzMaxConnections is the connection table's limit in FuzzEngine.
const fuzzMaxConnections = 8

// FuzzEngine runs a sequence of packets through Engine.Process: connection
// tracking, IPoIB-CM, iWARP and reassembly must not panic, the table stays
// within its limit, and what it keeps per connection is bounded.
func FuzzEngine(f *testing.F) {
	for _, file := range fuzzSeeds(f) {
		// The capture's kinds of packet in order, CM set-up first when
		// there is one, then a window of the start.
		f.Add(engineInput(file))
		if len(file) > 12 {
			f.Add(engineInput(file[:12]))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		e := dissect.NewEngine(dissect.Options{MaxConnections: fuzzMaxConnections, ULPs: rpcULPs(nfs.NewBinding())})
		n := 0
		for len(in) >= 3 {
			lt := fuzzLinkTypes[int(in[0])%len(fuzzLinkTypes)]
			l := int(binary.BigEndian.Uint16(in[1:3]))
			in = in[3:]
			l = min(l, len(in))
			data := in[:l]
			in = in[l:]
			n++
			p := &dissect.Packet{Number: n, LinkType: lt, CaptureLength: len(data), Length: len(data)}
			e.Process(p, data)
			// A connection whose roles are not settled yet hands its
			// packets on with no direction (orient.go); every other one
			// gives each a direction.
			if p.Conn != nil && (p.Dir == dissect.DirUnknown) != p.Conn.Unoriented() {
				t.Fatalf("packet %d placed on connection %d: direction %v, unoriented %v", n, p.Conn.ID, p.Dir, p.Conn.Unoriented())
			}
			_ = fields.Info(p)
		}
		if e.Stats.Packets != uint64(n) {
			t.Fatalf("%d packets counted, %d processed", e.Stats.Packets, n)
		}
		var sum uint64
		for _, c := range e.Stats.ICRC {
			sum += c
		}
		if sum != uint64(n) {
			t.Fatalf("ICRC verdicts %v for %d packets", e.Stats.ICRC, n)
		}
		cs := e.Conns.Connections()
		if len(cs) > fuzzMaxConnections {
			t.Fatalf("%d connections, limit %d", len(cs), fuzzMaxConnections)
		}
		for _, c := range cs {
			for i := range c.PrivateData {
				if len(c.PrivateData[i].Bytes) > roce.MADDataLength {
					t.Fatalf("connection %d keeps %d bytes of private data", c.ID, len(c.PrivateData[i].Bytes))
				}
				_ = c.PrivateData[i].Consumer()
				_ = rpcordma.Summary(&c.PrivateData[i])
			}
			if c.Dir[0].Packets+c.Dir[1].Packets > uint64(n) {
				t.Fatalf("connection %d counts %v packets of %d", c.ID, c.Dir, n)
			}
		}
	})
}
