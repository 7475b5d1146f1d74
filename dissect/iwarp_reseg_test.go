package dissect

import (
	"crypto/sha256"
	"fmt"
	"math/rand"
	"net"
	"sort"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TCP stream reassembly tested by re-segmenting real siw captures: the
// octets of every iWARP TCP stream are cut at new places (every original
// segment split at random points, neighbours merged), sent out of order,
// duplicated and overlapped, and written as new Ethernet/IPv4/TCP frames
// through the engine. The FPDUs decoded, the Sends reassembled and the RDMA
// operations followed must be exactly those of the original capture.

// iwRecord is what one run produced, per connection (client port) and
// direction, in order.
type iwRecord struct {
	fpdus map[[2]int][]string
	msgs  map[[2]int][]string
	ops   map[[2]int][]string
	// spanned counts FPDUs that began in an earlier segment than the one
	// completing them; multi the segments that completed several.
	spanned, multi int
}

func iwRecordRun(t *testing.T, frames []iwFrame) (*Engine, *iwRecord) {
	rec := &iwRecord{fpdus: map[[2]int][]string{}, msgs: map[[2]int][]string{}, ops: map[[2]int][]string{}}
	key := func(c *Connection, d Direction) [2]int { return [2]int{int(c.Client.Port), d.Index()} }
	obs := &iwObserver{
		onMsg: func(m *Message) {
			k := key(m.Conn, m.Dir)
			rec.msgs[k] = append(rec.msgs[k], fmt.Sprintf("%d %x inv=%v/%08x", len(m.Data), sha256.Sum256(m.Data), m.Invalidate, m.InvalidatedSTag))
		},
		onOp: func(op *RDMAOp) {
			k := key(op.Conn, op.Dir)
			rec.ops[k] = append(rec.ops[k], fmt.Sprintf("%v %08x %x %d %v %x", op.Kind, op.STag, op.Offset, op.Length, op.Complete, sha256.Sum256(op.Data)))
		},
	}
	e := newEngine(Options{Observer: obs})
	e.iw = newIWARPEngine(e)
	e.iw.fpduHook = func(c *Connection, dir Direction, f *IWARPFPDU) {
		k := key(c, dir)
		d, r := &f.DDP, &f.RDMAP
		rec.fpdus[k] = append(rec.fpdus[k], fmt.Sprintf("seq=%d len=%d crc=%08x T=%v L=%v stag=%08x to=%x qn=%d msn=%d mo=%d op=%v data=%d err=%v",
			f.Seq, f.ULPDULength, f.CRC, d.T, d.L, d.STag, d.TO, d.QN, d.MSN, d.MO, r.Opcode, f.DataLen, f.Err))
	}
	var p Packet
	for _, f := range frames {
		p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
		p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
		e.Process(&p, f.data)
		if len(p.IWARP.FPDUs) > 1 {
			rec.multi++
		}
		// A packet shows only FPDUs of its own direction and connection.
		for i := range p.IWARP.FPDUs {
			if int32(p.IWARP.FPDUs[i].Seq-p.TCP.Seq) < 0 {
				rec.spanned++
			}
			f := &p.IWARP.FPDUs[i]
			if d := int32(f.Seq - p.TCP.Seq); p.Conn == nil || d < -1<<24 || d > 1<<24 {
				t.Fatalf("packet %d (seq %d, %d octets) shows an FPDU at seq %d", p.Number, p.TCP.Seq, len(p.TCP.Payload), f.Seq)
			}
		}
	}
	e.Finish()
	return e, rec
}

// iwSeg is a piece of one direction of a TCP connection.
type iwSeg struct {
	conn, dir int
	off, n    int // in the direction's stream octets
	time      int // orders pieces across directions
}

// iwDirStream is one direction's stream octets from its MPA frame on.
type iwDirStream struct {
	src, dst     net.IP
	sport, dport uint16
	seq0         uint32 // sequence number of octet 0
	data         []byte
	ends         []int // end offset of each original segment
	times        []int // its frame index
	epochs       []int // how many segments the other direction had sent before it
	mac          [2]net.HardwareAddr
}

// iwStreams cuts the iWARP connections of a capture into their directions'
// octets, as the capture (complete and in order) has them.
func iwStreams(t *testing.T, frames []iwFrame, e *Engine) [][2]*iwDirStream {
	var conns []*Connection
	for _, c := range e.Conns.Connections() {
		if c.Transport == TransportIWARP {
			conns = append(conns, c)
		}
	}
	out := make([][2]*iwDirStream, len(conns))
	for i, f := range frames {
		pk := gopacket.NewPacket(f.data, f.link, gopacket.Default)
		eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip, _ := pk.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pk.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if eth == nil || ip == nil || tcp == nil || len(tcp.Payload) == 0 {
			continue
		}
		for ci, c := range conns {
			d := -1
			switch {
			case uint16(tcp.SrcPort) == c.Client.Port && uint16(tcp.DstPort) == c.Server.Port:
				d = 0
			case uint16(tcp.SrcPort) == c.Server.Port && uint16(tcp.DstPort) == c.Client.Port:
				d = 1
			}
			if d < 0 {
				continue
			}
			s := out[ci][d]
			if s == nil {
				s = &iwDirStream{src: ip.SrcIP, dst: ip.DstIP, sport: uint16(tcp.SrcPort), dport: uint16(tcp.DstPort),
					seq0: tcp.Seq, mac: [2]net.HardwareAddr{eth.SrcMAC, eth.DstMAC}}
				out[ci][d] = s
			}
			off := int(int32(tcp.Seq - s.seq0))
			switch {
			case off > len(s.data):
				t.Fatalf("frame %d: %d octets missing in the original", f.num, off-len(s.data))
			case off+len(tcp.Payload) <= len(s.data):
				continue // a retransmission
			}
			s.data = append(s.data, tcp.Payload[len(s.data)-off:]...)
			s.ends = append(s.ends, len(s.data))
			s.times = append(s.times, i)
			epoch := 0
			if o := out[ci][1-d]; o != nil {
				epoch = len(o.ends)
			}
			s.epochs = append(s.epochs, epoch)
		}
	}
	for i := range out {
		if out[i][0] == nil || out[i][1] == nil {
			t.Fatalf("connection %d: a direction without data", i)
		}
	}
	return out
}

// iwResegment cuts, reorders and duplicates the streams' octets.
func iwResegment(rng *rand.Rand, streams [][2]*iwDirStream) []iwSeg {
	var segs []iwSeg
	for ci := range streams {
		for d, s := range streams[ci] {
			// Split every original segment at up to three random places.
			var cuts []int
			start := 0
			for _, end := range s.ends {
				for k := rng.Intn(4); k > 0 && end-start > 1; k-- {
					// The MPA Request's key stays whole: it is how a
					// connection is recognised (as in Wireshark).
					if c := start + 1 + rng.Intn(end-start-1); d == 1 || c >= 16 {
						cuts = append(cuts, c)
					}
				}
				cuts = append(cuts, end)
				start = end
			}
			sort.Ints(cuts)
			// Merge neighbours.
			off := 0
			for i := 0; i < len(cuts); i++ {
				end := cuts[i]
				// Only octets sent between the same two segments of the
				// other direction are merged: a request and what was
				// sent after its response never share a segment.
				epoch := s.epochs[sort.SearchInts(s.ends, off+1)]
				for i+1 < len(cuts) && rng.Intn(4) == 0 && cuts[i+1]-off < 16000 &&
					s.epochs[sort.SearchInts(s.ends, cuts[i+1])] == epoch {
					i++
					end = cuts[i]
				}
				if end == off {
					continue
				}
				// The piece goes out when its last octet did: never
				// before its sender could have sent it.
				k := sort.SearchInts(s.ends, end)
				segs = append(segs, iwSeg{ci, d, off, end - off, s.times[k]})
				off = end
			}
		}
	}
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].time < segs[j].time })
	first := func(s iwSeg) bool { return s.off == 0 && s.dir == 0 }
	// Reorder: swap neighbours of the same direction, but never move a
	// connection's MPA Request, which is what makes it an iWARP
	// connection. (Swapping across directions could put a response before
	// its request, which no capture shows.)
	for i := 0; i+1 < len(segs); i++ {
		a, b := segs[i], segs[i+1]
		if rng.Intn(3) == 0 && a.conn == b.conn && a.dir == b.dir && !first(a) {
			segs[i], segs[i+1] = b, a
			i++
		}
	}
	// Duplicate: retransmit a recent piece, or a range overlapping two.
	var out []iwSeg
	for i, s := range segs {
		out = append(out, s)
		if i < 3 || rng.Intn(8) != 0 {
			continue
		}
		p := segs[i-1-rng.Intn(3)]
		if p.conn != s.conn || p.dir != s.dir || rng.Intn(2) == 0 {
			out = append(out, p)
			continue
		}
		lo, hi := min(p.off, s.off), max(p.off+p.n, s.off+s.n)
		a := lo + rng.Intn(hi-lo)
		b := a + 1 + rng.Intn(hi-a)
		out = append(out, iwSeg{s.conn, s.dir, a, b - a, s.time})
	}
	return out
}

// iwFrames writes the pieces as Ethernet/IPv4/TCP frames.
func iwSegFrames(t *testing.T, streams [][2]*iwDirStream, segs []iwSeg) []iwFrame {
	var out []iwFrame
	t0 := time.Unix(1700000000, 0)
	buf := gopacket.NewSerializeBuffer()
	for i, g := range segs {
		s := streams[g.conn][g.dir]
		back := streams[g.conn][1-g.dir]
		eth := &layers.Ethernet{SrcMAC: s.mac[0], DstMAC: s.mac[1], EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: s.src, DstIP: s.dst, Flags: layers.IPv4DontFragment}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(s.sport), DstPort: layers.TCPPort(s.dport),
			Seq: s.seq0 + uint32(g.off), Ack: back.seq0, ACK: true, PSH: true, Window: 512}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, tcp, gopacket.Payload(s.data[g.off:g.off+g.n])); err != nil {
			t.Fatal(err)
		}
		data := append([]byte(nil), buf.Bytes()...)
		out = append(out, iwFrame{num: i + 1, link: layers.LinkTypeEthernet, data: data,
			ci: gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(data), Length: len(data)}})
	}
	return out
}

func TestIWARPResegmented(t *testing.T) {
	for _, name := range []string{"siw-rping", "siw-ib_read_bw", "siw-nfs3"} {
		frames := iwReadFrames(t, name+".pcap")
		e0, want := iwRecordRun(t, frames)
		streams := iwStreams(t, frames, e0)
		nf := 0
		for _, l := range want.fpdus {
			nf += len(l)
		}
		if nf == 0 {
			t.Fatalf("%s: no FPDUs in the original", name)
		}
		seeds := []int64{1, 2, 3}
		if testing.Short() {
			seeds = seeds[:1]
		}
		for _, seed := range seeds {
			rng := rand.New(rand.NewSource(seed))
			segs := iwResegment(rng, streams)
			e, got := iwRecordRun(t, iwSegFrames(t, streams, segs))
			for what, pair := range map[string][2]map[[2]int][]string{
				"FPDUs": {want.fpdus, got.fpdus}, "Sends": {want.msgs, got.msgs}, "RDMA operations": {want.ops, got.ops},
			} {
				w, g := pair[0], pair[1]
				if len(w) != len(g) {
					t.Errorf("%s seed %d: %s in %d directions, want %d", name, seed, what, len(g), len(w))
				}
				for k, wl := range w {
					gl := g[k]
					if len(gl) != len(wl) {
						t.Errorf("%s seed %d conn %d dir %d: %d %s, want %d", name, seed, k[0], k[1], len(gl), what, len(wl))
					}
					for i := 0; i < min(len(wl), len(gl)); i++ {
						if wl[i] != gl[i] {
							t.Errorf("%s seed %d conn %d dir %d %s %d:\n got %s\nwant %s", name, seed, k[0], k[1], what, i, gl[i], wl[i])
							break
						}
					}
				}
			}
			reordered := 0
			for _, c := range e.Conns.Connections() {
				in := c.IWARP
				if in == nil {
					t.Fatalf("%s seed %d: non-iWARP connection %d", name, seed, c.ID)
				}
				for d := range in.Dir {
					x := &in.Dir[d]
					if x.LostSync+x.GapOctets+x.Discarded+x.Resyncs != 0 {
						t.Errorf("%s seed %d conn %d dir %d: %+v", name, seed, c.ID, d, *x)
					}
				}
				if !in.Negotiated {
					t.Errorf("%s seed %d conn %d: not negotiated", name, seed, c.ID)
				}
			}
			for i := 1; i < len(segs); i++ {
				a, b := segs[i-1], segs[i]
				if a.conn == b.conn && a.dir == b.dir && b.off < a.off {
					reordered++
				}
			}
			t.Logf("%s seed %d: %d segments (%d out of order or repeated) from %d frames; %d FPDUs, %d split over segments, %d segments with several",
				name, seed, len(segs), reordered, len(frames), nf, got.spanned, got.multi)
			if reordered == 0 || got.spanned == 0 || got.multi == 0 {
				t.Errorf("%s seed %d: the mutation did too little", name, seed)
			}
		}
	}
}
