// Command v2corpus wraps the RPC-over-RDMA version 2 messages of the
// independent encoder (encoder/, rpcgen output of the draft's XDR) into
// real Soft-RoCE NFS connections: the CM REQ, REP and RTU of a connection
// of a real capture (the first; the second for a fallback to version 1),
// copied byte for byte, then the encoder's
// Sends (split at the path MTU the REQ names), the server's RDMA Reads and
// Writes, each acknowledged, on that connection's QPs, with PSNs starting
// where the CM says and every ICRC computed. Run from the module root:
//
//	make -C testdata/v2corpus/encoder
//	go run ./testdata/v2corpus valid
//	go run ./testdata/v2corpus forbidden
//
// It writes testdata/pcaps/v2/rxe-nfs3-v2-NAME.pcap and, next to this
// file, NAME.labels: the frame number of the last packet of each labelled
// Send, tab, its label (what the check tests look for findings at).
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
)

const base = "testdata/pcaps/rxe-nfs3.pcap"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: v2corpus valid|forbidden")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "v2corpus:", err)
		os.Exit(1)
	}
}

// cmFrames are a real connection's set-up.
type cmFrames struct {
	frames            [3]synth.Frame // REQ, REP, RTU as captured
	client, server    synth.Node
	clientQP, srvQP   uint32
	reqPSN, repPSN    uint32
	mtu               int
	firstC, firstS    uint32 // the first RC request PSN each side sent in the real capture
	hasFirstC, hasFrS bool
}

func readCM(path string, nth int) (*cmFrames, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, err
	}
	cm := &cmFrames{}
	got := 0
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if eth == nil || ip == nil {
			continue
		}
		node := func(mac net.HardwareAddr, a net.IP) synth.Node {
			addr, _ := netip.AddrFromSlice(a.To4())
			return synth.Node{MAC: append(net.HardwareAddr(nil), mac...), IP: addr}
		}
		frame := synth.Frame{LinkType: layers.LinkTypeEthernet, Data: append([]byte(nil), data...), Length: ci.Length, Time: ci.Timestamp}
		switch {
		case got == 0 && p.Layer(roce.LayerTypeCMREQ) != nil && nth > 0:
			nth-- // an earlier connection's
		case got == 0 && p.Layer(roce.LayerTypeCMREQ) != nil:
			req := p.Layer(roce.LayerTypeCMREQ).(*roce.CMREQ)
			cm.frames[0], cm.client, cm.server = frame, node(eth.SrcMAC, ip.SrcIP), node(eth.DstMAC, ip.DstIP)
			cm.clientQP, cm.reqPSN, cm.mtu = req.LocalQPN, req.StartingPSN, req.PathPacketPayloadMTU.Bytes()
			got++
		case got == 1 && p.Layer(roce.LayerTypeCMREP) != nil:
			rep := p.Layer(roce.LayerTypeCMREP).(*roce.CMREP)
			cm.frames[1], cm.srvQP, cm.repPSN = frame, rep.LocalQPN, rep.StartingPSN
			got++
		case got == 2 && p.Layer(roce.LayerTypeCMRTU) != nil:
			cm.frames[2] = frame
			got++
		case got == 3:
			bth, _ := p.Layer(roce.LayerTypeBTH).(*roce.BTH)
			if bth == nil || bth.OpCode.IsResponse() || bth.OpCode == roce.OpRCAcknowledge {
				continue
			}
			src, _ := netip.AddrFromSlice(ip.SrcIP.To4())
			switch {
			case src == cm.client.IP && bth.DestQP == cm.srvQP && !cm.hasFirstC:
				cm.firstC, cm.hasFirstC = bth.PSN, true
			case src == cm.server.IP && bth.DestQP == cm.clientQP && !cm.hasFrS:
				cm.firstS, cm.hasFrS = bth.PSN, true
			}
		}
		if cm.hasFirstC && cm.hasFrS {
			break
		}
	}
	if got < 3 {
		return nil, fmt.Errorf("%s: no CM REQ, REP and RTU", path)
	}
	return cm, nil
}

// conn is one connection the encoder's records go on.
type conn struct {
	cm  *cmFrames
	psn [2]uint32 // next request PSN of the client, the server
	msn [2]uint32 // the responder's MSN of each side's requests
}

// newConn takes the nth connection of the base capture. Each side's
// requests start at the PSN its peer's CM message names (IBA Vol 1
// 12.6.5, 12.6.8): the client's at the REP's Starting PSN, the server's
// at the REQ's — as the real capture's first requests show.
func newConn(nth int) (*conn, error) {
	cm, err := readCM(base, nth)
	if err != nil {
		return nil, err
	}
	if (cm.hasFirstC && cm.firstC != cm.repPSN) || (cm.hasFrS && cm.firstS != cm.reqPSN) {
		return nil, fmt.Errorf("%s: the first requests' PSNs 0x%06x/0x%06x are not the CM's 0x%06x/0x%06x", base, cm.firstC, cm.firstS, cm.repPSN, cm.reqPSN)
	}
	return &conn{cm: cm, psn: [2]uint32{cm.repPSN, cm.reqPSN}}, nil
}

// rig lays the encoder's records on the connections.
type rig struct {
	s      *synth.Sequence
	*conn  // the current connection
	conns  map[int]*conn
	labels bytes.Buffer
	label  string
}

func (r *rig) ends(fromClient bool) (src, dst synth.Node, dqp, sqp uint32, i int) {
	if fromClient {
		return r.cm.client, r.cm.server, r.cm.srvQP, r.cm.clientQP, 0
	}
	return r.cm.server, r.cm.client, r.cm.clientQP, r.cm.srvQP, 1
}

// send posts msg as SEND_FIRST/MIDDLE/LAST (or ONLY) packets of at most
// the path MTU, With Invalidate of inv when inv != 0, acknowledged once.
func (r *rig) send(fromClient bool, msg []byte, inv uint32) {
	src, dst, dqp, sqp, i := r.ends(fromClient)
	mtu := r.cm.mtu
	n := (len(msg) + mtu - 1) / mtu
	for k := 0; k < n; k++ {
		part := msg[k*mtu : min(len(msg), (k+1)*mtu)]
		var op roce.OpCode
		switch {
		case n == 1 && inv != 0:
			op = roce.OpRCSendOnlyWithInvalidate
		case n == 1:
			op = roce.OpRCSendOnly
		case k == 0:
			op = roce.OpRCSendFirst
		case k < n-1:
			op = roce.OpRCSendMiddle
		case inv != 0:
			op = roce.OpRCSendLastWithInvalidate
		default:
			op = roce.OpRCSendLast
		}
		h := synth.Send(op, dqp, r.psn[i])
		if op == roce.OpRCSendOnlyWithInvalidate || op == roce.OpRCSendLastWithInvalidate {
			h.IETH.RKey = inv
		}
		r.s.Packet(src, dst, h, part)
		r.psn[i]++
	}
	if r.label != "" {
		fmt.Fprintf(&r.labels, "%d\t%s\n", len(r.s.Frames), r.label)
		r.label = ""
	}
	r.msn[i]++
	r.s.Packet(dst, src, synth.Ack(sqp, r.psn[i]-1, r.msn[i], synth.ACKSyndrome(31)), nil)
}

// read has the server RDMA Read len(data) octets at (stag, va) of the
// client; the client answers with the data.
func (r *rig) read(stag uint32, va uint64, data []byte) {
	mtu := r.cm.mtu
	n := max(1, (len(data)+mtu-1)/mtu)
	r.s.Packet(r.cm.server, r.cm.client, synth.ReadRequest(r.cm.clientQP, r.psn[1], va, stag, uint32(len(data))), nil)
	r.msn[1]++
	for k := 0; k < n; k++ {
		var op roce.OpCode
		switch {
		case n == 1:
			op = roce.OpRCRDMAReadResponseOnly
		case k == 0:
			op = roce.OpRCRDMAReadResponseFirst
		case k < n-1:
			op = roce.OpRCRDMAReadResponseMiddle
		default:
			op = roce.OpRCRDMAReadResponseLast
		}
		h := synth.ReadResponse(op, r.cm.srvQP, r.psn[1]+uint32(k), r.msn[1])
		if op == roce.OpRCRDMAReadResponseMiddle {
			h.AETH = roce.AETH{}
		}
		r.s.Packet(r.cm.client, r.cm.server, h, data[k*mtu:min(len(data), (k+1)*mtu)])
	}
	r.psn[1] += uint32(n)
}

// write has the server RDMA Write data at (stag, va) of the client.
func (r *rig) write(stag uint32, va uint64, data []byte) {
	mtu := r.cm.mtu
	n := max(1, (len(data)+mtu-1)/mtu)
	for k := 0; k < n; k++ {
		var h roce.BTH
		switch {
		case n == 1:
			h = synth.Write(roce.OpRCRDMAWriteOnly, r.cm.clientQP, r.psn[1], va, stag, uint32(len(data)))
		case k == 0:
			h = synth.Write(roce.OpRCRDMAWriteFirst, r.cm.clientQP, r.psn[1], va, stag, uint32(len(data)))
		case k < n-1:
			h = synth.Send(roce.OpRCRDMAWriteMiddle, r.cm.clientQP, r.psn[1])
		default:
			h = synth.Send(roce.OpRCRDMAWriteLast, r.cm.clientQP, r.psn[1])
		}
		r.s.Packet(r.cm.server, r.cm.client, h, data[k*mtu:min(len(data), (k+1)*mtu)])
		r.psn[1]++
	}
	r.msn[1]++
	r.s.Packet(r.cm.client, r.cm.server, synth.Ack(r.cm.srvQP, r.psn[1]-1, r.msn[1], synth.ACKSyndrome(31)), nil)
}

// play reads the encoder's script (encoder/enc.c describes it).
func (r *rig) play(script []byte) error {
	b := script
	u32 := func() uint32 { v := binary.BigEndian.Uint32(b); b = b[4:]; return v }
	for len(b) > 0 {
		kind := b[0]
		b = b[1:]
		switch kind {
		case 'C':
			// Switch to connection b[0] of the base capture; its CM
			// exchange goes in front of its first record.
			i := int(b[0])
			b = b[1:]
			c := r.conns[i]
			if c == nil {
				var err error
				if c, err = newConn(i); err != nil {
					return err
				}
				r.conns[i] = c
				for _, f := range c.cm.frames {
					r.s.Frame(f)
				}
			}
			r.conn = c
		case 'L':
			n := u32()
			r.label, b = string(b[:n]), b[n:]
		case 'M':
			fromClient := b[0] == 'c'
			b = b[1:]
			inv, n := u32(), u32()
			msg := b[:n]
			b = b[n:]
			r.send(fromClient, msg, inv)
		case 'R', 'W':
			stag := u32()
			va := uint64(u32())<<32 | uint64(u32())
			n := u32()
			data := b[:n]
			b = b[n:]
			if kind == 'R' {
				r.read(stag, va, data)
			} else {
				r.write(stag, va, data)
			}
		default:
			return fmt.Errorf("script: record type %q", kind)
		}
	}
	return r.s.Err
}

func run(name string) error {
	first, err := newConn(0)
	if err != nil {
		return err
	}
	r := &rig{conn: first, conns: map[int]*conn{0: first}}
	r.s = &synth.Sequence{Options: synth.Options{Encap: synth.RoCEv2}, Start: first.cm.frames[2].Time.Add(time.Millisecond), Step: 10 * time.Microsecond}
	script, err := exec.Command("testdata/v2corpus/encoder/enc", name).Output()
	if err != nil {
		return fmt.Errorf("encoder: %w", err)
	}
	if err := r.play(script); err != nil {
		return err
	}
	frames := append([]synth.Frame{first.cm.frames[0], first.cm.frames[1], first.cm.frames[2]}, r.s.Frames...)
	var out bytes.Buffer
	if err := synth.WritePcap(&out, synth.LinkEthernet, frames, synth.PcapOptions{}); err != nil {
		return err
	}
	dir := "testdata/pcaps/v2"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "rxe-nfs3-v2-"+name+".pcap"), out.Bytes(), 0o644); err != nil {
		return err
	}
	// The labels count the three CM frames in front.
	var labels bytes.Buffer
	for _, line := range bytes.SplitAfter(r.labels.Bytes(), []byte("\n")) {
		var n int
		var l string
		if _, err := fmt.Sscanf(string(line), "%d\t", &n); err != nil {
			continue
		}
		l = string(bytes.TrimSpace(line[bytes.IndexByte(line, '\t')+1:]))
		fmt.Fprintf(&labels, "%d\t%s\n", n+3, l)
	}
	return os.WriteFile(filepath.Join("testdata/v2corpus", name+".labels"), labels.Bytes(), 0o644)
}
