package iwarp

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// This file reads the real siw captures and the tshark 4.0 reference fields
// (testdata/gen-tshark.sh) the decoders are checked against.

const pcapDir = "../../testdata/pcaps"

var siwCaptures = []string{
	"siw-rping", "siw-rping-any-sll", "siw-ib_send_bw", "siw-ib_read_bw",
	"siw-nfs3", "siw-nfs41", "siw-nfs42-small",
}

// segment is one TCP segment of a capture.
type segment struct {
	frame    int // 1-based, as tshark numbers frames
	src, dst uint16
	srcIP    string
	dstIP    string
	seq      uint32
	payload  []byte
}

func (s segment) dir() string { return fmt.Sprintf("%s:%d>%s:%d", s.srcIP, s.src, s.dstIP, s.dst) }

var segmentCache = map[string][]segment{}

func readSegments(t testing.TB, name string) []segment {
	t.Helper()
	if s, ok := segmentCache[name]; ok {
		return s
	}
	link, frames := pcaptest.Read(t, filepath.Join(pcapDir, name+".pcap"))
	var out []segment
	for i, f := range frames {
		p := gopacket.NewPacket(f.Data, link, gopacket.Default)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			continue
		}
		out = append(out, segment{frame: i + 1, src: uint16(tcp.SrcPort), dst: uint16(tcp.DstPort),
			srcIP: ip.SrcIP.String(), dstIP: ip.DstIP.String(), seq: tcp.Seq, payload: tcp.Payload})
	}
	segmentCache[name] = out
	return out
}

func segmentByFrame(segs []segment, frame int) (segment, bool) {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].frame >= frame })
	if i < len(segs) && segs[i].frame == frame {
		return segs[i], true
	}
	return segment{}, false
}

// tsharkTable is a tshark -T fields -E header=y table.
type tsharkTable struct {
	header []string
	rows   []map[string]string
}

func readTshark(t testing.TB, file string) tsharkTable {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("tshark reference: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(file, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r = gz
	}
	var tab tsharkTable
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if tab.header == nil {
			tab.header = cols
			continue
		}
		row := map[string]string{}
		for i, h := range tab.header {
			if i < len(cols) {
				row[h] = cols[i]
			}
		}
		tab.rows = append(tab.rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tab
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("tshark value %q: %v", s, err)
	}
	return n
}

// The formatting below is how tshark -T fields prints each field (checked on
// the captures): FT_BOOLEAN as 0/1, BASE_HEX integers as 0x and the field's
// width in hex digits, BASE_DEC in decimal, FT_BYTES as plain hex.

func tsBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
func tsHex8(v uint8) string   { return fmt.Sprintf("0x%02x", v) }
func tsHex32(v uint32) string { return fmt.Sprintf("0x%08x", v) }
func tsHex64(v uint64) string { return fmt.Sprintf("0x%016x", v) }
func tsDec(v uint64) string   { return strconv.FormatUint(v, 10) }
func tsBytes(b []byte) string { return hex.EncodeToString(b) }

// tsharkFPDUFields lists the iwarp_mpa/iwarp_ddp/iwarp_rdma fields tshark
// shows for one FPDU, with tshark's formatting; fields tshark leaves out for
// this kind of FPDU are absent.
func tsharkFPDUFields(m *MPA, d *DDP, r *RDMAP) map[string]string {
	f := map[string]string{
		"iwarp_mpa.ulpdulength": tsDec(uint64(m.ULPDULength)),
		"iwarp_mpa.crc":         tsHex32(m.CRC),
		"iwarp_ddp.tagged_flag": tsBool(d.T),
		"iwarp_ddp.last_flag":   tsBool(d.L),
		"iwarp_ddp.rsvd":        tsHex8(d.Rsvd),
		"iwarp_ddp.dv":          tsDec(uint64(d.DV)),
		"iwarp_rdma.version":    tsDec(uint64(r.RV)),
		"iwarp_rdma.rsv":        tsHex8(r.Rsv),
		"iwarp_rdma.opcode":     tsHex8(uint8(r.Opcode)),
	}
	if len(m.Pad) > 0 {
		f["iwarp_mpa.pad"] = tsBytes(m.Pad)
	}
	if d.T {
		f["iwarp_ddp.stag"] = tsHex32(d.STag)
		f["iwarp_ddp.tagged_offset"] = tsHex64(d.TO)
	} else {
		f["iwarp_ddp.rsvdulp"] = tsBytes(d.RsvdULP[:])
		f["iwarp_ddp.qn"] = tsDec(uint64(d.QN))
		f["iwarp_ddp.msn"] = tsDec(uint64(d.MSN))
		f["iwarp_ddp.mo"] = tsDec(uint64(d.MO))
	}
	switch r.Opcode {
	case OpSend, OpSendWithSE, OpRDMAReadRequest, OpTerminate:
		f["iwarp_rdma.reserved"] = tsBytes(d.RsvdULP[1:5])
	case OpSendWithInvalidate, OpSendWithSEAndInvalidate:
		f["iwarp_rdma.inval_stag"] = tsDec(uint64(r.InvalidateSTag))
	}
	if r.Opcode == OpRDMAReadRequest {
		q := r.ReadRequest
		f["iwarp_rdma.sinkstag"] = tsHex32(q.SinkSTag)
		f["iwarp_rdma.sinkto"] = tsHex64(q.SinkTaggedOffset)
		f["iwarp_rdma.rdmardsz"] = tsDec(uint64(q.RDMAReadMessageSize))
		f["iwarp_rdma.srcstag"] = tsHex32(q.SourceSTag)
		f["iwarp_rdma.srcto"] = tsHex64(q.SourceTaggedOffset)
	}
	return f
}

var fpduFieldNames = []string{
	"iwarp_mpa.ulpdulength", "iwarp_mpa.pad", "iwarp_mpa.crc",
	"iwarp_ddp.tagged_flag", "iwarp_ddp.last_flag", "iwarp_ddp.rsvd", "iwarp_ddp.dv", "iwarp_ddp.rsvdulp",
	"iwarp_ddp.stag", "iwarp_ddp.tagged_offset", "iwarp_ddp.qn", "iwarp_ddp.msn", "iwarp_ddp.mo",
	"iwarp_rdma.version", "iwarp_rdma.rsv", "iwarp_rdma.opcode", "iwarp_rdma.reserved", "iwarp_rdma.inval_stag",
	"iwarp_rdma.sinkstag", "iwarp_rdma.sinkto", "iwarp_rdma.rdmardsz", "iwarp_rdma.srcstag", "iwarp_rdma.srcto",
}

// joinFields joins per-FPDU field maps the way tshark -E occurrence=a -E
// aggregator=, does: every occurrence of a field, in order, comma separated.
func joinFields(per []map[string]string) map[string]string {
	out := map[string]string{}
	for _, name := range fpduFieldNames {
		var vals []string
		for _, m := range per {
			if v, ok := m[name]; ok {
				vals = append(vals, v)
			}
		}
		out[name] = strings.Join(vals, ",")
	}
	return out
}

// streamPiece is the part of a TCP segment that extends a byte stream.
type streamPiece struct {
	frame int
	seq   uint32
	data  []byte
}

// halfStream is one direction of a TCP connection carrying MPA: the MPA
// Request or Reply, then FPDUs.
type halfStream struct {
	dir      string
	reqRep   MPAReqRep
	reqFrame int
	fpduSeq  uint32        // sequence number of the first FPDU octet
	pieces   []streamPiece // FPDU-mode octets in order, retransmissions removed
}

// mpaStreams cuts a capture into the MPA half-connections. It is not TCP
// reassembly: the captures are complete and in order, so it only drops
// octets already seen (retransmissions) and fails on a hole.
func mpaStreams(t testing.TB, name string) []*halfStream {
	t.Helper()
	byDir := map[string]*halfStream{}
	next := map[string]uint32{}
	var order []*halfStream
	for _, s := range readSegments(t, name) {
		if len(s.payload) == 0 {
			continue
		}
		h := byDir[s.dir()]
		if h == nil {
			if !IsMPAKey(s.payload) {
				continue
			}
			h = &halfStream{dir: s.dir(), reqFrame: s.frame}
			if err := h.reqRep.DecodeFromBytes(s.payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s frame %d: %v", name, s.frame, err)
			}
			h.fpduSeq = s.seq + uint32(h.reqRep.Len())
			byDir[s.dir()] = h
			next[s.dir()] = h.fpduSeq
			order = append(order, h)
			if rest := s.payload[h.reqRep.Len():]; len(rest) > 0 {
				h.pieces = append(h.pieces, streamPiece{s.frame, h.fpduSeq, rest})
				next[s.dir()] += uint32(len(rest))
			}
			continue
		}
		exp := next[s.dir()]
		d := int32(s.seq - exp)
		switch {
		case d > 0:
			t.Fatalf("%s frame %d: %d octets missing in %s", name, s.frame, d, s.dir())
		case int(-d) >= len(s.payload):
			continue // retransmission
		}
		p := s.payload[-d:]
		h.pieces = append(h.pieces, streamPiece{s.frame, exp, p})
		next[s.dir()] = exp + uint32(len(p))
	}
	return order
}

// frameOf returns the frame carrying the stream octet at seq.
func (h *halfStream) frameOf(seq uint32) int {
	i := sort.Search(len(h.pieces), func(i int) bool {
		return int32(h.pieces[i].seq+uint32(len(h.pieces[i].data))-seq) > 0
	})
	if i == len(h.pieces) {
		return -1
	}
	return h.pieces[i].frame
}

// bytes returns the whole FPDU-mode stream.
func (h *halfStream) bytes() []byte {
	var b []byte
	for _, p := range h.pieces {
		b = append(b, p.data...)
	}
	return b
}

// framerConfig returns the framer configuration of the half-stream (siw:
// no markers, no CRC, checked by TestNegotiatedFraming).
func (h *halfStream) framerConfig() FramerConfig {
	return FramerConfig{Seq: h.fpduSeq, MarkerSeq: h.fpduSeq}
}
