package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Peak RSS under --max-buffered (issue 13 points 1 and 2). Each benchmark
// writes a crafted capture to a temporary file (generated on the fly,
// streamed to disk), runs `rdmashark analyze --max-buffered 64MiB` on it in
// a child process (this test binary, TestMain's childEnv) and reports the
// child's peak resident set (getrusage ru_maxrss, which Linux gives in KiB)
// as peak-RSS-MiB, with the budget and the documented overhead
// (memlimit.go) as limit-MiB. They measure, they assert nothing:
//
//	go test ./cmd/rdmashark -run '^$' -bench BenchmarkPeakRSS -benchtime 1x
//
// docs/streaming.md records the figures.

const rssBudget = 64 << 20

// pcapWriter streams a little-endian microsecond pcap file.
type pcapWriter struct {
	f    *os.File
	w    *bufio.Writer
	t    time.Time
	n    int
	sbuf gopacket.SerializeBuffer
}

func newPcapWriter(tb testing.TB, name string) *pcapWriter {
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], 1) // Ethernet
	w.Write(h[:])
	return &pcapWriter{f: f, w: w, t: time.Unix(1700000000, 0), sbuf: gopacket.NewSerializeBuffer()}
}

func (p *pcapWriter) frame(data []byte) {
	p.n++
	ts := p.t.Add(time.Duration(p.n) * time.Microsecond)
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(h[4:], uint32(ts.Nanosecond()/1000))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(data)))
	p.w.Write(h[:])
	p.w.Write(data)
}

func (p *pcapWriter) roce(tb testing.TB, src, dst synth.Node, h roce.BTH, payload []byte) {
	f, err := synth.Build(synth.Options{Encap: synth.RoCEv2}, src, dst, h, payload)
	if err != nil {
		tb.Fatal(err)
	}
	p.frame(f.Data)
}

// tcp writes a TCP segment from a:ap to b:bp.
func (p *pcapWriter) tcp(tb testing.TB, a, b net.IP, ap, bp uint16, seq, ack uint32, payload []byte) {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: a, DstIP: b}
	t := &layers.TCP{SrcPort: layers.TCPPort(ap), DstPort: layers.TCPPort(bp), Seq: seq, Ack: ack, ACK: true, Window: 65535}
	t.SetNetworkLayerForChecksum(ip)
	if err := gopacket.SerializeLayers(p.sbuf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, t, gopacket.Payload(payload)); err != nil {
		tb.Fatal(err)
	}
	p.frame(p.sbuf.Bytes())
}

func (p *pcapWriter) close(tb testing.TB) {
	if err := p.w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := p.f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// qpNodes spreads QPs over client addresses so that each is its own
// connection (no-setup RoCE connections are keyed by node and QPN).
func qpNode(i int) synth.Node {
	n := synth.Client()
	n.IP = n.IP.Next()
	for range i / 50000 {
		n.IP = n.IP.Next()
	}
	return n
}

// unfinishedSends: qps RC Sends, each a SEND_FIRST and a SEND_MIDDLE of
// 1 KiB, never finished.
func unfinishedSends(tb testing.TB, name string, qps int) {
	p := newPcapWriter(tb, name)
	sv := synth.Server()
	data := pattern(1024)
	for k := range 2 {
		for i := range qps {
			op := roce.OpRCSendFirst
			if k == 1 {
				op = roce.OpRCSendMiddle
			}
			p.roce(tb, qpNode(i), sv, synth.Send(op, uint32(0x100+i%50000), uint32(k)), data)
		}
	}
	p.close(tb)
}

// rpcCall is an RPC-over-RDMA version 1 RDMA_MSG carrying an NFSv3
// GETATTR Call with XID xid (RFC 8166 section 4.3; RFC 5531 section 9;
// RFC 1813 section 3.3.1), no chunks.
func rpcCall(xid uint32) []byte {
	w := func(b []byte, v ...uint32) []byte {
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	b := w(nil, xid, 1, 128, 0, 0, 0, 0)          // rdma_xid, vers 1, credits, RDMA_MSG, no Read/Write list, no Reply chunk
	b = w(b, xid, 0, 2, 100003, 3, 1, 0, 0, 0, 0) // Call: rpcvers 2, NFS v3 GETATTR, AUTH_NONE cred and verf
	return w(b, 8, 0x01020304, 0x05060708)        // the file handle
}

// outstandingCalls: conns QPs (no CM: each a connection of its own,
// recognised as RPC-over-RDMA by its first Call), each sending calls
// Calls that no Reply answers (issue 29: 256 x 4096 peaked at 817-953 MiB
// with --max-buffered 64MiB before open exchanges counted in the budget).
func outstandingCalls(tb testing.TB, name string, conns, calls int) {
	p := newPcapWriter(tb, name)
	sv := synth.Server()
	for k := range calls {
		for i := range conns {
			p.roce(tb, qpNode(i), sv, synth.Send(roce.OpRCSendOnly, uint32(0x100+i%50000), uint32(k)), rpcCall(uint32(i<<16|k)))
		}
	}
	p.close(tb)
}

// outstandingReads: qps QPs each sending reads RDMA Read Requests that no
// response answers (issue 29: a million of them peaked at 291-335 MiB
// before each counted ReadCost in the budget).
func outstandingReads(tb testing.TB, name string, qps, reads int) {
	p := newPcapWriter(tb, name)
	sv := synth.Server()
	for k := range reads {
		for i := range qps {
			p.roce(tb, qpNode(i), sv, synth.ReadRequest(uint32(0x100+i%50000), uint32(k), uint64(k)<<12, 0x77, 4096), nil)
		}
	}
	p.close(tb)
}

// neverEnding: qps QPs, a third with a Send, a third with an RDMA Write
// and a third with an RDMA Read (its responses) that never end: the FIRST
// packet, then rounds of MIDDLEs of 1 KiB, each QP's PSNs consecutive.
func neverEnding(tb testing.TB, name string, qps, rounds int) {
	p := newPcapWriter(tb, name)
	cl, sv := synth.Client(), synth.Server()
	data := pattern(1024)
	for r := range rounds {
		for i := range qps {
			sq, rq, psn := uint32(0x1000+2*i), uint32(0x1001+2*i), uint32(r)
			switch i % 3 {
			case 0:
				op := roce.OpRCSendMiddle
				if r == 0 {
					op = roce.OpRCSendFirst
				}
				p.roce(tb, cl, sv, synth.Send(op, sq, psn), data)
			case 1:
				w := synth.Send(roce.OpRCRDMAWriteMiddle, sq, psn)
				if r == 0 {
					w = synth.Write(roce.OpRCRDMAWriteFirst, sq, psn, 0x20000, 0x55, 1<<30)
				}
				p.roce(tb, cl, sv, w, data)
			case 2:
				op := roce.OpRCRDMAReadResponseMiddle
				if r == 0 {
					p.roce(tb, cl, sv, synth.ReadRequest(sq, 0, 0x10000, 0x77, 1<<30), nil)
					op = roce.OpRCRDMAReadResponseFirst
				}
				p.roce(tb, sv, cl, synth.ReadResponse(op, rq, psn, 0), data)
			}
		}
	}
	p.close(tb)
}

// mpaPair writes the MPA Request and Reply of connection i (no markers, no
// CRC) and returns the sequence numbers that follow each.
func mpaPair(tb testing.TB, p *pcapWriter, i int) (cl, sv net.IP, cport uint16, cseq, sseq uint32) {
	cl = net.IPv4(10, 1, byte(i>>8), byte(i)).To4()
	sv = net.IPv4(10, 2, 0, 1).To4()
	cport = uint16(10000 + i%50000)
	req := append([]byte(iwarp.MPAKeyReq), 0, 1, 0, 0)
	rep := append([]byte(iwarp.MPAKeyRep), 0, 1, 0, 0)
	cseq, sseq = 1000, 500000
	p.tcp(tb, cl, sv, cport, 20049, cseq, sseq, req)
	cseq += uint32(len(req))
	p.tcp(tb, sv, cl, 20049, cport, sseq, cseq, rep)
	sseq += uint32(len(rep))
	return
}

// sendFPDU is an FPDU (no markers, no CRC checked: zero CRC field) that
// carries an untagged RDMA Send of n payload octets (RFC 5044 section 4,
// RFC 5041 section 4.4, RFC 5040 section 4.2).
func sendFPDU(msn uint32, n int) []byte {
	ulpdu := []byte{0x41, 0x40 | byte(iwarp.OpSend)} // DDP L=1 DV=1; RDMAP RV=1 Send
	ulpdu = binary.BigEndian.AppendUint32(ulpdu, 0)
	ulpdu = binary.BigEndian.AppendUint32(ulpdu, 0) // QN 0
	ulpdu = binary.BigEndian.AppendUint32(ulpdu, msn)
	ulpdu = binary.BigEndian.AppendUint32(ulpdu, 0) // MO
	ulpdu = append(ulpdu, pattern(n)...)
	b := binary.BigEndian.AppendUint16(nil, uint16(len(ulpdu)))
	b = append(b, ulpdu...)
	b = append(b, make([]byte, (4-len(b)%4)%4)...)
	return append(b, 0, 0, 0, 0)
}

// partialFPDUs: conns iWARP connections, each with its MPA exchange and
// the first 1400 octets of a 60,000-octet FPDU that never completes.
func partialFPDUs(tb testing.TB, name string, conns int) {
	p := newPcapWriter(tb, name)
	fp := sendFPDU(1, 60000)
	for i := range conns {
		cl, sv, cport, cseq, sseq := mpaPair(tb, p, i)
		p.tcp(tb, cl, sv, cport, 20049, cseq, sseq, fp[:1400])
	}
	p.close(tb)
}

// outOfOrder: conns iWARP connections whose client sends 24 segments of
// 1400 octets after a hole of 1400 it never fills (nor acknowledges).
func outOfOrder(tb testing.TB, name string, conns int) {
	p := newPcapWriter(tb, name)
	var stream []byte
	for m := uint32(1); len(stream) < 26*1400; m++ {
		stream = append(stream, sendFPDU(m, 1300)...)
	}
	for i := range conns {
		cl, sv, cport, cseq, sseq := mpaPair(tb, p, i)
		for k := 1; k < 25; k++ {
			p.tcp(tb, cl, sv, cport, 20049, cseq+uint32(k*1400), sseq, stream[k*1400:(k+1)*1400])
		}
	}
	p.close(tb)
}

// peakRSS runs analyze (table output) on the capture in a child and
// returns its peak RSS in MiB.
func peakRSS(b *testing.B, capture string, extra ...string) float64 {
	args := append([]string{"analyze", "--max-buffered", "64MiB"}, extra...)
	a, _ := json.Marshal(append(args, capture))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(a))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %.2000s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(ru.Maxrss) / 1024
}

// rssBound is the peak RSS docs/streaming.md promises for a budget and a
// connection table: the runtime's memory limit (memlimit.go) plus
// memRSSMargin for what the runtime does not count (the binary's own pages).
func rssBound(budget, maxConns int) float64 {
	return float64(budget+memOverheadFixed+memPerConnection*maxConns+memRSSMargin) / (1 << 20)
}

func benchRSS(b *testing.B, gen func(testing.TB, string), extra ...string) {
	name := filepath.Join(b.TempDir(), "capture.pcap")
	gen(b, name)
	fi, _ := os.Stat(name)
	b.ResetTimer()
	var rss float64
	for range b.N {
		rss = peakRSS(b, name, extra...)
	}
	b.ReportMetric(rss, "peak-RSS-MiB")
	b.ReportMetric(rssBound(rssBudget, 4096), "bound-MiB")
	b.ReportMetric(float64(fi.Size())/(1<<20), "capture-MiB")
}

func BenchmarkPeakRSS(b *testing.B) {
	b.Run("100000-QPs-unfinished-Sends", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { unfinishedSends(tb, n, 100000) })
	})
	b.Run("2000-QPs-never-ending-Send-Write-Read", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { neverEnding(tb, n, 2000, 150) })
	})
	b.Run("20000-iWARP-partial-FPDU", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { partialFPDUs(tb, n, 20000) })
	})
	b.Run("3000-iWARP-out-of-order", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { outOfOrder(tb, n, 3000) })
	})
	b.Run("1M-outstanding-Read-Requests", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { outstandingReads(tb, n, 4096, 256) })
	})
	b.Run("256-connections-4096-outstanding-Calls", func(b *testing.B) {
		benchRSS(b, func(tb testing.TB, n string) { outstandingCalls(tb, n, 256, 4096) })
	})
}
