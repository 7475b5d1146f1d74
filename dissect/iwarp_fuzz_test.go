package dissect

import (
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// Fuzzing the iWARP engine: TCP segments of one connection in any order,
// with any sequence numbers, flags and octets, seeded with the real siw
// connections and the synthetic ones. Nothing may panic, and the state a
// connection holds stays within its bounds.

// iwFuzzFrame writes an Ethernet/IPv4/TCP frame by hand (the decoder does
// not check TCP checksums).
func iwFuzzFrame(dir int, seq, ack uint32, flags byte, payload []byte) []byte {
	b := make([]byte, 14+20+20, 14+20+20+len(payload))
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+20+len(payload)))
	ip[8], ip[9] = 64, 6
	src, dst := []byte{192, 0, 2, 2}, []byte{192, 0, 2, 1}
	sp, dp := uint16(41000), uint16(IWARPHintPort)
	if dir == 1 {
		src, dst, sp, dp = dst, src, dp, sp
	}
	copy(ip[12:], src)
	copy(ip[16:], dst)
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], sp)
	binary.BigEndian.PutUint16(tcp[2:], dp)
	binary.BigEndian.PutUint32(tcp[4:], seq)
	binary.BigEndian.PutUint32(tcp[8:], ack)
	tcp[12] = 5 << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:], 1024)
	return append(b, payload...)
}

// iwFuzzInput encodes segments as the fuzz target reads them: per segment a
// control octet (bit 0 direction, bit 1 FIN, bit 2 RST, bit 3 SYN, bit 4
// no ACK), a signed 16-bit offset from the direction's next sequence
// number, a 16-bit length, the payload.
type iwFuzzSeg struct {
	ctl     byte
	off     int16
	payload []byte
}

func iwFuzzEncode(segs []iwFuzzSeg) []byte {
	var b []byte
	for _, s := range segs {
		b = append(b, s.ctl)
		b = binary.BigEndian.AppendUint16(b, uint16(s.off))
		b = binary.BigEndian.AppendUint16(b, uint16(len(s.payload)))
		b = append(b, s.payload...)
	}
	return b
}

// iwFuzzSeeds are the siw-rping connection and the synthetic connections,
// as in-order segments.
func iwFuzzSeeds(t testing.TB) [][]byte {
	var out [][]byte
	add := func(frames []iwFrame) {
		var segs []iwFuzzSeg
		var client [2]byte
		for _, f := range frames {
			pk := gopacket.NewPacket(f.data, f.link, gopacket.Default)
			tcp, _ := pk.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if tcp == nil || len(tcp.Payload) == 0 {
				continue
			}
			if client == [2]byte{} {
				binary.BigEndian.PutUint16(client[:], uint16(tcp.SrcPort))
			}
			ctl := byte(0)
			if uint16(tcp.SrcPort) != binary.BigEndian.Uint16(client[:]) {
				ctl = 1
			}
			segs = append(segs, iwFuzzSeg{ctl: ctl, payload: tcp.Payload})
		}
		out = append(out, iwFuzzEncode(segs))
	}
	add(iwReadFrames(t, "siw-rping.pcap"))
	for _, name := range []string{"iwarp-markers-crc", "iwarp-terminate", "iwarp-bad-crc", "iwarp-mpa-v2"} {
		add(iwSynthetic(t)[name])
	}
	return out
}

// iwCheckBounds fails when a stream holds more than its limits allow.
func iwCheckBounds(t *testing.T, e *Engine) {
	if e.iw == nil {
		return
	}
	for _, s := range e.iw.order {
		for h := range s.half {
			hf := &s.half[h]
			if len(hf.pend) > iwarpMaxPending || len(hf.hdr) > iwarp.MPAReqRepHeaderLen+iwarp.MPAMaxPrivateDataLen ||
				len(hf.ahead) > iwarpMaxAhead || len(hf.writes) > iwarpMaxWrites || len(hf.reads) > e.iw.maxReads ||
				hf.framer != nil && hf.framer.Buffered() > iwarp.MaxFPDULen {
				t.Fatalf("stream %d dir %d: pend %d hdr %d ahead %d writes %d reads %d", s.id, h,
					len(hf.pend), len(hf.hdr), len(hf.ahead), len(hf.writes), len(hf.reads))
			}
			for _, op := range append(append([]*iwOp(nil), hf.writes...), hf.reads...) {
				if len(op.data) > e.iw.maxMsg {
					t.Fatalf("stream %d dir %d: operation holds %d octets", s.id, h, len(op.data))
				}
			}
		}
	}
}

func FuzzIWARPStream(f *testing.F) {
	for _, s := range iwFuzzSeeds(f) {
		f.Add(s)
	}
	// Found by the fuzzer: an untagged ULPDU too short for its DDP header
	// once showed the previous FPDU's payload length.
	f.Add([]byte("1\x00\x00\x008\x000AG\x00\x00\x00\x00\x00\x00\x00\x02000000000000000000000000000000000000000000001\x00\x0000\x00\x111000000000000000000000"))
	f.Fuzz(func(t *testing.T, in []byte) {
		e := newEngine(Options{MaxMessageBytes: 1 << 16, Observer: &iwObserver{
			onMsg: func(m *Message) {
				if m.Conn == nil || len(m.Data) > 1<<16 {
					t.Fatalf("message of %d octets", len(m.Data))
				}
			},
			onOp: func(op *RDMAOp) {
				if op.Conn == nil || len(op.Data) > 1<<16 {
					t.Fatalf("operation with %d octets", len(op.Data))
				}
			},
		}})
		var p Packet
		for _, fr := range iwFuzzFrames(in) {
			p.Number, p.Timestamp, p.LinkType = fr.num, fr.ci.Timestamp, fr.link
			p.CaptureLength, p.Length = fr.ci.CaptureLength, fr.ci.Length
			e.Process(&p, fr.data)
			for _, fp := range p.IWARP.FPDUs {
				if int(fp.ULPDULength) > iwarp.MaxFPDULen || fp.DataLen > int(fp.ULPDULength) {
					t.Fatalf("packet %d: FPDU %+v", fr.num, fp)
				}
			}
			_ = summary(&p)
		}
		iwCheckBounds(t, e)
		e.Finish()
	})
}

// FuzzIWARPFrame puts one arbitrary frame into the real siw-rping capture,
// before the frame the input's first octet picks.
func FuzzIWARPFrame(f *testing.F) {
	frames := iwReadFrames(f, "siw-rping.pcap")
	for i, fr := range frames {
		if i >= 18 && i < 40 {
			f.Add(append([]byte{byte(i)}, fr.data...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 1 {
			return
		}
		at := int(in[0]) % len(frames)
		e := newEngine(Options{})
		var p Packet
		for i, fr := range frames {
			if i == at {
				p.Number, p.LinkType, p.CaptureLength, p.Length = 9999, layers.LinkTypeEthernet, len(in)-1, len(in)-1
				e.Process(&p, in[1:])
				_ = summary(&p)
			}
			p.Number, p.Timestamp, p.LinkType = fr.num, fr.ci.Timestamp, fr.link
			p.CaptureLength, p.Length = fr.ci.CaptureLength, fr.ci.Length
			e.Process(&p, fr.data)
			_ = summary(&p)
		}
		iwCheckBounds(t, e)
		e.Finish()
	})
}
