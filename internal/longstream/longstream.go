// Package longstream makes long synthetic captures out of real ones, for the
// tests and benchmarks of streaming (issue 6): a capture repeated N times as
// one pcap stream, produced on the fly by an io.Reader (nothing is written
// to disk, and memory does not grow with N), every repetition shifted so
// that it is a new set of connections and transactions:
//
//   - RoCE (RoCEv2 on UDP 4791): every QPN (BTH DestQP other than QP0/QP1;
//     the CM REQ's and REP's Local QPN, the DREQ's and LAP's Remote QPN),
//     every RC PSN (BTH PSN of packets not on QP1; the CM REQ's and REP's
//     Starting PSN) and every CM Communication ID (Local and Remote, IBA
//     12.6) move by a step per repetition; the ICRC is recomputed
//     (roce.FixICRCv2). rxe sends UDP checksum 0, which stays valid.
//   - iWARP and other TCP: every TCP port but the nfsrdma port 20049 (and
//     the well-known ports below 1024) moves, and sequence and
//     acknowledgement numbers move by a step; the TCP checksum is
//     recomputed.
//   - RPC-over-RDMA XIDs: the rdma_xid of every Send that carries an
//     RPC-over-RDMA header (RFC 8166 section 4.1), the XID of the RPC
//     message inline behind it (RFC 5531 section 9), and the XID that
//     starts an RPC message moved by RDMA (the position-zero Read chunk of
//     a Long Call, the Reply chunk of a Long Reply, RFC 8166 section 3.5):
//     an RDMA Read Response or Write whose data starts with a known XID
//     followed by msg_type CALL or REPLY. On iWARP the Sends are found by
//     framing each direction's TCP stream (MPA without markers, RFC 5044
//     section 4; DDP and RDMAP headers, RFC 5041 4.3-4.4, RFC 5040 4.2), so
//     an XID that TCP splits between segments, or that a retransmission
//     repeats, is moved everywhere it appears.
//   - Timestamps move by the capture's duration plus a second.
//
// Repetition 0 is the capture itself, byte for byte. Only Ethernet
// captures over IPv4 are shifted (the kernel captures of testdata/pcaps);
// other records are repeated unchanged.
package longstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/source"
)

// Steps by which a repetition moves each kind of identifier: repetition k
// moves them by k times the step.
const (
	QPNStep    = 0x40
	PSNStep    = 0x10000
	CommIDStep = 0x1000
	XIDStep    = 0x100000
	PortStep   = 1
	SeqStep    = 0x01000000
	// NFSRDMAPort is not moved: it is the server's port (RFC 8267).
	NFSRDMAPort = nfs.RDMAPort
)

// Capture is a real capture held in memory and prepared for repetition.
type Capture struct {
	Name     string
	LinkType layers.LinkType
	// Span is the time from the first record to the last.
	Span time.Duration
	recs []record
	// Stats say what the preparation found to shift.
	Stats Stats
}

// Stats count the fields a repetition shifts.
type Stats struct {
	Records, RoCE, CM, TCP, XIDs int
}

type record struct {
	ts    time.Time
	orig  int // original length
	data  []byte
	edits []edit
	fix   fixKind
	ip    int // offset of the IPv4 header
	l4    int // offset of the TCP header
}

type fixKind uint8

const (
	fixNone fixKind = iota
	fixICRC
	fixTCP
)

type editKind uint8

const (
	editQPN  editKind = iota + 1 // 24 bits; QP0 and QP1 stay
	editPSN                      // 24 bits
	editComm                     // 32 bits
	editXID                      // one octet of a 32-bit XID: xid holds the value, i the octet
	editPort                     // 16 bits
	editSeq                      // 32 bits
)

type edit struct {
	off  int
	kind editKind
	i    uint8
	xid  uint32
}

// Load reads a capture and prepares it.
func Load(path string) (*Capture, error) {
	r, err := source.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := &Capture{Name: path}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(c.recs) == 0 {
			c.LinkType = rec.LinkType
		} else if rec.LinkType != c.LinkType {
			return nil, fmt.Errorf("%s: record %d: link type %v after %v: one link type only", path, rec.Number, rec.LinkType, c.LinkType)
		}
		c.recs = append(c.recs, record{ts: rec.CI.Timestamp, orig: rec.CI.Length, data: append([]byte(nil), rec.Data...)})
	}
	if len(c.recs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	c.Span = c.recs[len(c.recs)-1].ts.Sub(c.recs[0].ts)
	c.prepare()
	return c, nil
}

// Records returns the number of records of one repetition.
func (c *Capture) Records() int { return len(c.recs) }

// Record returns record i (from 0) of repetition k: its timestamp, its
// original length and its bytes, written into buf (grown as needed).
func (c *Capture) Record(k, i int, buf []byte) (time.Time, int, []byte) {
	r := &c.recs[i]
	buf = append(buf[:0], r.data...)
	if k != 0 {
		for _, e := range r.edits {
			e.apply(buf, k)
		}
		switch r.fix {
		case fixICRC:
			// The packet's own length bounds the ICRC: Ethernet padding
			// after it is left alone.
			_ = fixICRCv2(buf[r.ip:])
		case fixTCP:
			fixTCPChecksum(buf[r.ip:], r.l4-r.ip)
		}
	}
	return r.ts.Add(time.Duration(k) * (c.Span + time.Second)), r.orig, buf
}

func (e edit) apply(b []byte, k int) {
	d := uint32(k)
	switch e.kind {
	case editQPN:
		if v := get24(b[e.off:]); v > 1 {
			put24(b[e.off:], v+d*QPNStep)
		}
	case editPSN:
		put24(b[e.off:], get24(b[e.off:])+d*PSNStep)
	case editComm:
		// A zero Comm ID (a REJ's unknown Remote Comm ID) stays zero.
		if v := binary.BigEndian.Uint32(b[e.off:]); v != 0 {
			binary.BigEndian.PutUint32(b[e.off:], v+d*CommIDStep)
		}
	case editXID:
		var x [4]byte
		binary.BigEndian.PutUint32(x[:], e.xid+d*XIDStep)
		b[e.off] = x[e.i]
	case editPort:
		binary.BigEndian.PutUint16(b[e.off:], shiftPort(binary.BigEndian.Uint16(b[e.off:]), k))
	case editSeq:
		binary.BigEndian.PutUint32(b[e.off:], binary.BigEndian.Uint32(b[e.off:])+d*SeqStep)
	}
}

// shiftPort moves a port of 1024 and above, but NFSRDMAPort, within
// 1024..65535.
func shiftPort(p uint16, k int) uint16 {
	if p < 1024 || p == NFSRDMAPort {
		return p
	}
	const span = 65536 - 1024
	return uint16(1024 + (int(p)-1024+k*PortStep)%span)
}

func get24(b []byte) uint32    { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }
func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// Reader returns a pcap stream (nanosecond timestamps, the capture's link
// type) of n repetitions, produced as it is read.
func (c *Capture) Reader(n int) io.Reader {
	return &reader{c: c, n: n}
}

type reader struct {
	c       *Capture
	n       int
	k, i    int
	started bool
	buf     []byte // the next record's bytes, header included
	pending []byte // what is left of buf to hand out
	scratch []byte
}

const snapLen = 262144

func (r *reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.pending) == 0 {
		if !r.next() {
			return 0, io.EOF
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// next prepares the next piece of the stream: the file header, then one
// record at a time.
func (r *reader) next() bool {
	b := r.buf[:0]
	if !r.started {
		r.started = true
		// pcap file header (pcap draft, section 4): nanosecond magic,
		// version 2.4, snap length, link type.
		b = binary.LittleEndian.AppendUint32(b, 0xa1b23c4d)
		b = binary.LittleEndian.AppendUint16(b, 2)
		b = binary.LittleEndian.AppendUint16(b, 4)
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = binary.LittleEndian.AppendUint32(b, snapLen)
		b = binary.LittleEndian.AppendUint32(b, uint32(r.c.LinkType))
		r.buf, r.pending = b, b
		return true
	}
	if r.k >= r.n {
		return false
	}
	ts, orig, data := r.c.Record(r.k, r.i, r.scratch)
	r.scratch = data
	if r.i++; r.i == len(r.c.recs) {
		r.i, r.k = 0, r.k+1
	}
	// Packet record header: seconds, nanoseconds, captured and original
	// lengths.
	b = binary.LittleEndian.AppendUint32(b, uint32(ts.Unix()))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts.Nanosecond()))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = binary.LittleEndian.AppendUint32(b, uint32(orig))
	b = append(b, data...)
	r.buf, r.pending = b, b
	return true
}
