package synth

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// File is one synthetic capture of the corpus.
type File struct {
	Name string
	// Link says the file's link type(s) and format, Description what it
	// holds; both go to the README.
	Link, Description string
	Data              []byte
	Packets           int
	// BadICRC, BadVCRC and Cut are the numbers of the frames built with a
	// corrupted ICRC or VCRC, or cut by a snap length.
	BadICRC, BadVCRC, Cut []int
}

// CorpusDir is where the corpus lives, from the module root.
const CorpusDir = "testdata/pcaps/synthetic"

// NFSService is the service ID RDMA-CM uses for NFS over RDMA: the TCP port
// space and port 20049 (RFC 5666 section 12; Linux cma_get_service_id).
var NFSService = uint64(pvtdata.ServiceIDFor(pvtdata.PortSpaceTCP, 20049))

// Corpus builds the synthetic captures committed under CorpusDir: the
// encapsulations, link types and CM exchanges the real captures lack.
// It is deterministic: the same bytes every time.
func Corpus() ([]File, error) {
	builders := []func() (File, error){
		corpusIPv6QinQ, corpusIPv4CM, corpusNoCM, corpusRoCEv1, corpusNativeIB,
		corpusERF, corpusSLL, corpusEthSLL2, corpusRawIP,
	}
	var files []File
	for i, b := range builders {
		f, err := b()
		if err != nil {
			return nil, fmt.Errorf("synth: corpus file %d: %w", i+1, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// corpusStart is the time of the corpus's first frame.
var corpusStart = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func newSeq(o Options) *Sequence {
	return &Sequence{Options: o, Start: corpusStart, Step: 250 * time.Microsecond}
}

// pattern returns n bytes counting up from seed.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// message is RPCRDMAMessage for arguments known to be valid.
func message(s *Sequence, v, resv uint8, r bool, send, recv int) []byte {
	m, err := RPCRDMAMessage(v, resv, r, send, recv)
	if err != nil && s.Err == nil {
		s.Err = err
	}
	return m
}

// reqPD is REQ private data: the RDMA-CM IP header (IPv4 or IPv6 by the
// nodes) with srcPort, then msg at octet 36 (where Linux's xprtrdma client
// puts it, right after the header).
func reqPD(s *Sequence, c, sv Node, srcPort uint16, msg []byte) []byte {
	h := &pvtdata.CMAHeader{Version: pvtdata.CMAVersion, IPVersion: 4, SrcPort: srcPort, SrcAddr: c.IP, DstAddr: sv.IP}
	if c.IP.Is6() {
		h.IPVersion = 6
	}
	pd, err := PrivateData(roce.CMREQPrivateDataLength, h, pvtdata.CMAHeaderLen, msg)
	if err != nil && s.Err == nil {
		s.Err = err
	}
	return pd
}

// repPD is REP private data with msg at octet 0 (Linux's server).
func repPD(s *Sequence, msg []byte) []byte {
	pd, err := PrivateData(roce.CMREPPrivateDataLength, nil, 0, msg)
	if err != nil && s.Err == nil {
		s.Err = err
	}
	return pd
}

func finish(s *Sequence, name, link, desc string, write func(*bytes.Buffer, []Frame) error) (File, error) {
	if s.Err != nil {
		return File{}, fmt.Errorf("%s: %w", name, s.Err)
	}
	var b bytes.Buffer
	if err := write(&b, s.Frames); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	return File{Name: name, Link: link, Description: desc, Data: b.Bytes(), Packets: len(s.Frames),
		BadICRC: s.BadICRC, BadVCRC: s.BadVCRC, Cut: s.Cut}, nil
}

func pcapWriter(lt layers.LinkType, o PcapOptions) func(*bytes.Buffer, []Frame) error {
	return func(b *bytes.Buffer, fs []Frame) error { return WritePcap(b, lt, fs, o) }
}

func pcapngWriter(ifaces ...Interface) func(*bytes.Buffer, []Frame) error {
	return func(b *bytes.Buffer, fs []Frame) error { return WritePcapNG(b, ifaces, fs) }
}

// IPv6QinQ is the connection of rocev2-ipv6-qinq.pcap: RFC 8797 messages
// with both R bits set and different sizes each way.
func IPv6QinQ() Conn {
	return Conn{Client: ClientV6(), Server: ServerV6(), ClientCommID: 0x11111111, ServerCommID: 0x22222222,
		ClientQPN: 0x11, ServerQPN: 0x12, ClientPSN: 1000, ServerPSN: 5000, ServiceID: NFSService}
}

func corpusIPv6QinQ() (File, error) {
	s := newSeq(Options{Encap: RoCEv2, VLANs: []uint16{100, 200}, TClass: 0x02, FlowLabel: 0x12345})
	c := IPv6QinQ()
	c.ClientPD = reqPD(s, c.Client, c.Server, 40000, message(s, 1, 0, true, 8192, 4096))
	c.ServerPD = repPD(s, message(s, 1, 0, true, 2048, 16384))
	cl, sv := c.Client, c.Server
	s.CM(cl, sv, 1, c.REQ())
	s.CM(sv, cl, 1, c.REP())
	s.CM(cl, sv, 2, c.RTU())
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, c.ServerQPN, 1000), pattern(100, 1))
	s.Packet(sv, cl, Ack(c.ClientQPN, 1000, 1, ACKSyndrome(5)), nil)
	s.Packet(cl, sv, Write(roce.OpRCRDMAWriteFirst, c.ServerQPN, 1001, 0x7f0000001000, 0x1234, 3072), pattern(1024, 2))
	s.Packet(cl, sv, Send(roce.OpRCRDMAWriteMiddle, c.ServerQPN, 1002), pattern(1024, 3))
	s.Packet(cl, sv, Send(roce.OpRCRDMAWriteLast, c.ServerQPN, 1003), pattern(1024, 4))
	s.Packet(sv, cl, Ack(c.ClientQPN, 1003, 2, ACKSyndrome(5)), nil)
	s.Packet(cl, sv, ReadRequest(c.ServerQPN, 1004, 0x7f0000002000, 0x5678, 1500), nil)
	s.Packet(sv, cl, ReadResponse(roce.OpRCRDMAReadResponseFirst, c.ClientQPN, 1004, 2), pattern(1024, 5))
	s.Packet(sv, cl, ReadResponse(roce.OpRCRDMAReadResponseLast, c.ClientQPN, 1005, 3), pattern(476, 6))
	s.Packet(cl, sv, CompareSwap(c.ServerQPN, 1006, 0x7f0000003000, 0x9abc, 1, 0), nil)
	s.Packet(sv, cl, AtomicAck(c.ClientQPN, 1006, 4, 0), nil)
	s.Packet(cl, sv, FetchAdd(c.ServerQPN, 1007, 0x7f0000003008, 0x9abc, 10), nil)
	s.Packet(sv, cl, AtomicAck(c.ClientQPN, 1007, 5, 41), nil)
	inv := Send(roce.OpRCSendOnlyWithInvalidate, c.ClientQPN, 5000)
	inv.IETH.RKey = 0x1234
	s.Packet(sv, cl, inv, pattern(40, 7))
	s.Packet(cl, sv, Ack(c.ServerQPN, 5000, 0, RNRNAKSyndrome(14)), nil)
	s.Packet(sv, cl, inv, pattern(40, 7))
	s.Packet(cl, sv, Ack(c.ServerQPN, 5000, 1, ACKSyndrome(3)), nil)
	imm := Send(roce.OpRCSendOnlyWithImmediate, c.ServerQPN, 1009)
	imm.ImmDt.Data = 0xdeadbeef
	s.Packet(cl, sv, imm, pattern(8, 8))
	s.Packet(sv, cl, Ack(c.ClientQPN, 1008, 5, NAKSyndrome(roce.NAKPSNSequenceError)), nil)
	s.CM(cl, sv, 3, c.DREQ(false))
	s.CM(sv, cl, 3, c.DREP(false))
	return finish(s, "rocev2-ipv6-qinq.pcap", "Ethernet (1), pcap µs little-endian",
		"RoCEv2 over IPv6 in two VLAN tags (802.1ad S-tag 100, 802.1Q C-tag 200), traffic class 0x02 and flow label 0x12345 "+
			"(masked by the ICRC). One RC connection to NFS port 20049: CM REQ (RDMA-CM IPv6 header, RFC 8797 v1 R=1 "+
			"send 8192 receive 4096 at offset 36), REP (v1 R=1 send 2048 receive 16384 at offset 0), RTU; SEND, RDMA WRITE "+
			"FIRST/MIDDLE/LAST, RDMA READ request and responses, CmpSwap and FetchAdd with ATOMIC ACKNOWLEDGE, SEND with "+
			"Invalidate, RNR NAK, SEND with Immediate, NAK (PSN sequence error); DREQ/DREP. Thresholds: client-to-server "+
			"min(8192,16384)=8192, server-to-client min(2048,4096)=2048, remote invalidation allowed.",
		pcapWriter(LinkEthernet, PcapOptions{}))
}

// Connections of rocev2-ipv4-vlan-cm.pcapng.
func CMConnA() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0xA0000001, ServerCommID: 0xA0000002,
		ClientQPN: 0x21, ServerQPN: 0x22, ClientPSN: 100, ServerPSN: 200, ServiceID: NFSService}
}

// CMConnB is refused with a REJ.
func CMConnB() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0xB0000001, ServerCommID: 0xB0000002,
		ClientQPN: 0x31, ServerQPN: 0x32, ClientPSN: 300, ServiceID: NFSService}
}

// CMConnC never gets an answer.
func CMConnC() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0xC0000001, ClientQPN: 0x41, ClientPSN: 400,
		ServiceID: uint64(pvtdata.ServiceIDFor(pvtdata.PortSpaceTCP, 4420))}
}

// CMConnD's REQ carries an RFC 8797 message of unknown version 2.
func CMConnD() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0xD0000001, ServerCommID: 0xD0000002,
		ClientQPN: 0x51, ServerQPN: 0x52, ClientPSN: 500, ServerPSN: 600, ServiceID: NFSService}
}

// CMConnE's REQ has reserved flag bits set.
func CMConnE() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0xE0000001, ServerCommID: 0xE0000002,
		ClientQPN: 0x61, ServerQPN: 0x62, ClientPSN: 700, ServerPSN: 800, ServiceID: NFSService}
}

func corpusIPv4CM() (File, error) {
	s := newSeq(Options{Encap: RoCEv2, VLANs: []uint16{10}})
	cl, sv := Client(), Server()

	a := CMConnA()
	a.ClientPD = reqPD(s, cl, sv, 35010, message(s, 1, 0, true, 4096, 4096))
	a.ServerPD = repPD(s, message(s, 1, 0, false, 4096, 4096))
	s.CM(cl, sv, 0x100, a.REQ())
	s.CM(cl, sv, 0x100, a.REQ()) // retransmitted: same Comm ID and TID
	s.CM(sv, cl, 0x100, a.MRA(roce.MRAMessageREQ, 20))
	s.CM(sv, cl, 0x100, a.REP())
	s.CM(cl, sv, 0x101, a.RTU())
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, a.ServerQPN, 100), pattern(64, 1))
	s.Packet(sv, cl, Ack(a.ClientQPN, 100, 1, ACKSyndrome(4)), nil)
	s.Packet(sv, cl, CNP(a.ClientQPN), make([]byte, 16))
	s.Packet(sv, cl, CNP(0x999), make([]byte, 16))
	s.CM(cl, sv, 0x102, a.LAP())
	s.CM(sv, cl, 0x102, a.APR(roce.APSuccess))

	b := CMConnB()
	b.ClientPD = reqPD(s, cl, sv, 35011, message(s, 1, 0, true, 4096, 4096))
	s.CM(cl, sv, 0x200, b.REQ())
	s.CM(sv, cl, 0x200, b.REJ(roce.RejConsumer, nil, nil))

	c := CMConnC()
	c.ClientPD = reqPD(s, cl, sv, 35012, message(s, 1, 0, true, 4096, 4096))
	s.CM(cl, sv, 0x300, c.REQ())

	d := CMConnD()
	d.ClientPD = reqPD(s, cl, sv, 35013, message(s, 2, 0, true, 8192, 8192))
	d.ServerPD = repPD(s, message(s, 1, 0, true, 4096, 4096))
	s.CM(cl, sv, 0x400, d.REQ())
	s.CM(sv, cl, 0x400, d.REP())
	s.CM(cl, sv, 0x401, d.RTU())

	e := CMConnE()
	e.ClientPD = reqPD(s, cl, sv, 35014, message(s, 1, 0x55, true, 8192, 2048))
	e.ServerPD = repPD(s, message(s, 1, 0, true, 4096, 4096))
	s.CM(cl, sv, 0x500, e.REQ())
	s.CM(sv, cl, 0x500, e.REP())
	s.CM(cl, sv, 0x501, e.RTU())

	s.CM(cl, sv, 0x600, SIDRREQ(0x600, 0x1000000000000abc, nil))
	s.CM(sv, cl, 0x600, SIDRREP(0x600, roce.SIDRSuccess, 0x1000000000000abc, 0x71, 0x11111111))
	s.Packet(cl, sv, UDSend(0x71, 1, 0x11111111, 0x72), pattern(32, 9))

	s.CM(cl, sv, 0x103, a.DREQ(false))
	s.CM(sv, cl, 0x103, a.DREP(false))
	return finish(s, "rocev2-ipv4-vlan-cm.pcapng", "Ethernet (1), pcapng",
		"RoCEv2 over IPv4 in one 802.1Q tag (VLAN 10): the CM exchanges the real captures lack. Connection A "+
			"(Comm IDs 0xa0000001/0xa0000002, QPNs 0x21/0x22): REQ, the same REQ retransmitted, MRA, REP, RTU, SEND and "+
			"ACK, a CNP to QP 0x21 and one to the unknown QP 0x999, LAP/APR, and at the end DREQ/DREP. B: REQ refused "+
			"by REJ reason 28 (Consumer reject). C: REQ to port 4420 never answered. D: REQ whose RFC 8797 message has "+
			"version 2 (unknown: defaults apply), REP, RTU. E: REQ whose message has the reserved flag bits 0x55 set "+
			"(to be ignored, RFC 8797 section 4), REP, RTU. SIDR_REQ/SIDR_REP and a UD SEND to the QP they resolve.",
		pcapngWriter(Interface{LinkType: LinkEthernet, SnapLen: 262144, Name: "eth0"}))
}

func corpusNoCM() (File, error) {
	s := newSeq(Options{Encap: RoCEv2})
	cl, sv := Client(), Server()
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x22, 10), pattern(48, 1))
	s.Packet(sv, cl, Ack(0x33, 10, 1, ACKSyndrome(31)), nil)
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x22, 11), pattern(48, 2), WithCorruptICRC)
	s.Packet(sv, cl, Ack(0x33, 11, 2, ACKSyndrome(31)), nil)
	s.Packet(cl, sv, Write(roce.OpRCRDMAWriteOnly, 0x22, 12, 0x1000, 0xabcd, 1000), pattern(1000, 3), WithSnap(128))
	s.Packet(sv, cl, Ack(0x33, 12, 3, ACKSyndrome(31)), nil)
	s.Packet(cl, sv, XRCSend(roce.OpXRCSendOnly, 0x44, 20, 0x55), pattern(16, 4))
	xack := Ack(0x66, 20, 1, ACKSyndrome(31))
	xack.OpCode = roce.OpXRCAcknowledge
	s.Packet(sv, cl, xack, nil)
	s.Packet(cl, sv, Send(roce.OpUCSendOnly, 0x77, 30), pattern(24, 5))
	return finish(s, "rocev2-nocm-xrc.pcap", "Ethernet (1), pcap ns big-endian",
		"RoCEv2 over IPv4 with no CM exchange: RC SEND_ONLY to QP 0x22 and ACKs to QP 0x33 (one connection, set-up "+
			"not seen); frame 3 with a corrupted ICRC; frame 5, an RDMA WRITE_ONLY of 1000 bytes, cut at 128 bytes by the "+
			"snap length (ICRC not verifiable); XRC SEND_ONLY (XRCETH SRQ 0x55) and XRC ACKNOWLEDGE; a UC SEND_ONLY.",
		pcapWriter(LinkEthernet, PcapOptions{Nanosecond: true, BigEndian: true}))
}

// RoCEv1Conn is the connection of rocev1.pcap.
func RoCEv1Conn() Conn {
	return Conn{Client: ClientGID(), Server: ServerGID(), ClientCommID: 0x01010101, ServerCommID: 0x02020202,
		ClientQPN: 0x61, ServerQPN: 0x62, ClientPSN: 0x10, ServerPSN: 0x20, ServiceID: NFSService}
}

func corpusRoCEv1() (File, error) {
	s := newSeq(Options{Encap: RoCEv1, TClass: 0x20, FlowLabel: 0xabcde})
	c := RoCEv1Conn()
	c.ClientPD = reqPD(s, c.Client, c.Server, 35020, message(s, 1, 0, true, 1024, 1024))
	c.ServerPD = repPD(s, message(s, 1, 0, true, 1024, 1024))
	cl, sv := c.Client, c.Server
	s.CM(cl, sv, 1, c.REQ())
	s.CM(sv, cl, 1, c.REP())
	s.CM(cl, sv, 2, c.RTU())
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, c.ServerQPN, 0x10), pattern(200, 1))
	s.Packet(sv, cl, Ack(c.ClientQPN, 0x10, 1, ACKSyndrome(2)), nil)
	s.CM(cl, sv, 3, c.DREQ(false))
	s.CM(sv, cl, 3, c.DREP(false))
	return finish(s, "rocev1.pcap", "Ethernet (1), pcap µs little-endian",
		"RoCEv1: EtherType 0x8915, GRH with link-local GIDs fe80::5054:ff:fe00:202 (client) and ...:201 (server), "+
			"traffic class 0x20, flow label 0xabcde. CM REQ/REP/RTU (v1 R=1 1024/1024 both sides), SEND, ACK, DREQ/DREP.",
		pcapWriter(LinkEthernet, PcapOptions{}))
}

// NativeIBConn is the connection of ib-native.pcap (LIDs 2 and 1).
func NativeIBConn() Conn {
	return Conn{Client: Client(), Server: Server(), ClientCommID: 0x0E000001, ServerCommID: 0x0E000002,
		ClientQPN: 0x71, ServerQPN: 0x72, ClientPSN: 7, ServerPSN: 9, ServiceID: NFSService, Native: true}
}

func corpusNativeIB() (File, error) {
	s := newSeq(Options{LinkType: LinkInfiniBand, Encap: IBLocal, SL: 0, VL: 0})
	c := NativeIBConn()
	c.ClientPD = reqPD(s, c.Client, c.Server, 35030, message(s, 1, 0, false, 2048, 2048))
	c.ServerPD = repPD(s, message(s, 1, 0, true, 8192, 1024))
	cl, sv := c.Client, c.Server
	s.CM(cl, sv, 1, c.REQ())
	s.CM(sv, cl, 1, c.REP())
	s.CM(cl, sv, 2, c.RTU())
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, c.ServerQPN, 7), pattern(20, 1))
	s.Packet(sv, cl, Ack(c.ClientQPN, 7, 1, ACKSyndrome(8)), nil)
	global := func(o *Options) { o.Encap = IBGlobal }
	s.Packet(cl.WithIP("fe80::2"), sv.WithIP("fe80::1"), Send(roce.OpRCSendOnly, 0x81, 1), pattern(12, 2), global)
	s.Packet(sv.WithIP("fe80::1"), cl.WithIP("fe80::2"), Ack(0x82, 1, 1, ACKSyndrome(8)), nil, global)
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, c.ServerQPN, 8), pattern(20, 3), WithCorruptVCRC)
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, c.ServerQPN, 9), pattern(20, 4), WithCorruptICRC)
	s.CM(cl, sv, 3, c.DREQ(false))
	s.CM(sv, cl, 3, c.DREP(false))
	return finish(s, "ib-native.pcap", "InfiniBand (247), pcap µs little-endian",
		"Native InfiniBand from the LRH, with VCRC. LRH only (LID 2 → LID 1): CM REQ (v1 R=0 2048/2048), REP (v1 R=1 "+
			"send 8192 receive 1024), RTU, SEND, ACK — thresholds client-to-server min(2048,1024)=1024, server-to-client "+
			"min(8192,2048)=2048, no remote invalidation; LRH+GRH (GIDs fe80::2 and fe80::1): SEND to QP 0x81 and ACK "+
			"to QP 0x82 without set-up; frame 8 with a corrupted VCRC, frame 9 with a corrupted ICRC (VCRC good); DREQ/DREP.",
		pcapWriter(LinkInfiniBand, PcapOptions{}))
}

func corpusERF() (File, error) {
	s := newSeq(Options{LinkType: LinkERF, Encap: IBLocal})
	cl, sv := Client(), Server()
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x91, 1), pattern(32, 1))
	s.Packet(sv, cl, Ack(0x92, 1, 1, ACKSyndrome(6)), nil)
	s.Packet(cl.WithIP("fe80::2"), sv.WithIP("fe80::1"), Send(roce.OpRCSendOnly, 0x93, 1), pattern(32, 2),
		func(o *Options) { o.Encap = IBGlobal })
	if f, err := ERFRecord(erf.TypeInfiniBandLink, FlowControlPacket(0, 0, 0x123, 0x456)); err != nil {
		s.Err = err
	} else {
		s.Frame(f)
	}
	eth := func(o *Options) { o.Encap, o.ERFType, o.VLANs = RoCEv2, erf.TypeEth, []uint16{7} }
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x94, 1), pattern(32, 3), eth)
	s.Packet(sv, cl, Ack(0x95, 1, 1, ACKSyndrome(6)), nil, eth)
	return finish(s, "erf.pcap", "ERF (197), pcap µs little-endian",
		"ERF records as ibdump and DAG cards write them: type 21 (InfiniBand) with LRH-only SEND to QP 0x91 and ACK, "+
			"type 21 with LRH+GRH SEND to QP 0x93, type 25 (InfiniBand link) carrying a flow control packet (FCTBS 0x123, "+
			"FCCL 0x456), type 2 (Ethernet) with RoCEv2 over IPv4 in VLAN 7: SEND to QP 0x94 and ACK.",
		pcapWriter(LinkERF, PcapOptions{}))
}

func corpusSLL() (File, error) {
	s := newSeq(Options{LinkType: LinkSLL, Encap: RoCEv2, Outgoing: true})
	cl, sv := Client(), Server()
	in := func(o *Options) { o.Outgoing = false }
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0xA1, 1), pattern(56, 1))
	s.Packet(sv, cl, Ack(0xA2, 1, 1, ACKSyndrome(6)), nil, in)
	v1 := func(o *Options) { o.Encap = RoCEv1 }
	s.Packet(ClientGID(), ServerGID(), Send(roce.OpRCSendOnly, 0xA3, 1), pattern(56, 2), v1)
	return finish(s, "sll.pcap", "Linux SLL (113), pcap µs little-endian",
		"tcpdump -i any style (Linux cooked v1): RoCEv2 over IPv4 SEND to QP 0xa1 (outgoing) and ACK to QP 0xa2 "+
			"(incoming); a RoCEv1 SEND to QP 0xa3.",
		pcapWriter(LinkSLL, PcapOptions{}))
}

func corpusEthSLL2() (File, error) {
	s := newSeq(Options{Encap: RoCEv2})
	cl, sv := Client(), Server()
	sll2 := func(o *Options) { o.LinkType = LinkSLL2 }
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x22, 1), pattern(40, 1))
	s.Interface = 1
	s.Packet(sv, cl, Ack(0x33, 1, 1, ACKSyndrome(6)), nil, sll2)
	s.Packet(ClientV6(), ServerV6(), Send(roce.OpRCSendOnly, 0x44, 1), pattern(40, 2), sll2)
	s.Interface = 0
	s.Packet(ServerV6(), ClientV6(), Ack(0x55, 1, 1, ACKSyndrome(6)), nil)
	return finish(s, "eth-sll2.pcapng", "pcapng: interface 0 Ethernet (1), interface 1 Linux SLL2 (276)",
		"Two interfaces of different link types in one file: IPv4 SEND to QP 0x22 on Ethernet and its ACK to QP 0x33 on "+
			"SLL2 (one connection seen on two interfaces); IPv6 SEND to QP 0x44 on SLL2 and its ACK to QP 0x55 on Ethernet.",
		pcapngWriter(Interface{LinkType: LinkEthernet, Name: "eth0"}, Interface{LinkType: LinkSLL2, Name: "any"}))
}

func corpusRawIP() (File, error) {
	s := newSeq(Options{Encap: RoCEv2, LinkType: LinkRaw})
	cl, sv := Client(), Server()
	s.Packet(cl, sv, Send(roce.OpRCSendOnly, 0x22, 1), pattern(40, 1))
	s.Packet(ClientV6(), ServerV6(), Send(roce.OpRCSendOnly, 0x44, 1), pattern(40, 2))
	s.Interface = 1
	s.Packet(sv, cl, Ack(0x33, 1, 1, ACKSyndrome(6)), nil, func(o *Options) { o.LinkType = LinkIPv4 })
	s.Interface = 2
	s.Packet(ServerV6(), ClientV6(), Ack(0x55, 1, 1, ACKSyndrome(6)), nil, func(o *Options) { o.LinkType = LinkIPv6 })
	return finish(s, "raw-ip.pcapng", "pcapng: RAW (101), IPV4 (228), IPV6 (229)",
		"Raw IP link types: on RAW an IPv4 SEND to QP 0x22 and an IPv6 SEND to QP 0x44; on IPV4 the ACK to QP 0x33; "+
			"on IPV6 the ACK to QP 0x55.",
		pcapngWriter(Interface{LinkType: LinkRaw}, Interface{LinkType: LinkIPv4}, Interface{LinkType: LinkIPv6}))
}

// README is the README of the corpus directory.
func README(files []File) []byte {
	var b strings.Builder
	b.WriteString("# Synthetic captures\n\n")
	b.WriteString("Built by `go run ./testdata/synthetic` (internal/synth) from the layers' SerializeTo, with every\n")
	b.WriteString("ICRC and VCRC computed (roce.FixICRCv2/v1/IB, FixVCRC) unless a file says a frame was damaged on\n")
	b.WriteString("purpose. They cover what the real captures lack: IPv6, VLAN tags, RoCEv1, native InfiniBand, ERF,\n")
	b.WriteString("SLL/SLL2, raw IP, XRC, CNP, atomics, NAKs and CM MRA/REJ/LAP/APR/SIDR. Do not edit them by hand:\n")
	b.WriteString("dissect's TestSyntheticCorpusIsReproducible fails when they differ from what the generator builds.\n\n")
	b.WriteString("tshark 4.0.17 reads them all but ib-native.pcap (it does not know link type 247 in pcap files; the same\n")
	b.WriteString("LRH packets in ERF records, erf.pcap, it reads). Where it differs from the bytes: it shows CNP and XRC\n")
	b.WriteString("opcodes as unknown, calls the 6-byte flow control packet of the ERF type 25 record malformed (it reads\n")
	b.WriteString("the link packet as an LRH for its summary columns), and marks the frame cut by the snap length malformed.\n")
	b.WriteString("It shows ICRCs without verifying them; dissect's tests check every ICRC and VCRC against an\n")
	b.WriteString("independent implementation of IBA 7.8 that is itself checked against the real captures.\n\n")
	b.WriteString("| file | link type | packets | what it holds |\n|---|---|---|---|\n")
	for _, f := range files {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", f.Name, f.Link, f.Packets, f.Description)
	}
	return []byte(b.String())
}
