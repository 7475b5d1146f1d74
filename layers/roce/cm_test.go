package roce

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
)

// fieldsOnly returns a copy of a decoded layer without its BaseLayer, for
// comparing decoded values.
func fieldsOnly(l gopacket.SerializableLayer) any {
	v := reflect.ValueOf(l)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return l
	}
	c := reflect.New(v.Elem().Type()).Elem()
	c.Set(v.Elem())
	if f := c.FieldByName("BaseLayer"); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
	return c.Interface()
}

// serializeCM serialises one CM layer and returns its 232 bytes.
func serializeCM(t *testing.T, l gopacket.SerializableLayer, fix bool) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := l.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: fix}); err != nil {
		t.Fatalf("%T: %v", l, err)
	}
	if len(buf.Bytes()) != MADDataLength {
		t.Fatalf("%T: %d bytes", l, len(buf.Bytes()))
	}
	return buf.Bytes()
}

// cmBytes returns 232 bytes of MAD data with the given bytes at the given
// offsets.
func cmBytes(at map[int][]byte) []byte {
	d := make([]byte, MADDataLength)
	for off, b := range at {
		copy(d[off:], b)
	}
	return d
}

func fill(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// TestCMREQRealRoCE checks the REQ of rxe-rping.pcap frame 13 beyond
// what tshark shows: typed values, the ECE vendor ID and the private data
// slice.
func TestCMREQRealRoCE(t *testing.T) {
	mad := cmRealREQ(t)
	var r CMREQ
	cmMustDecode(t, &r, mad[MADHeaderLength:])
	if r.TransportServiceType != TransportServiceRC || r.TransportServiceType.String() != "RC" ||
		r.PathPacketPayloadMTU != MTU1024 || r.PathPacketPayloadMTU.String() != "1024" ||
		r.ExtendedTransportType != ExtendedTransportNone || r.VendorID != 0 || r.SAPSupported {
		t.Errorf("%+v", r)
	}
	// RoCEv2 GIDs are IPv4-mapped (IBA Vol 1 Annex A17); the LIDs are the
	// permissive LID 0xffff.
	if a := netip.AddrFrom16(r.PrimaryPath.LocalPortGID); a.String() != "::ffff:192.0.2.2" {
		t.Errorf("local GID %v", a)
	}
	if r.PrimaryPath.LocalPortLID != 0xffff || r.PrimaryPath.HopLimit != 64 || r.PrimaryPath.LocalACKTimeout != 19 {
		t.Errorf("path %+v", r.PrimaryPath)
	}
	if len(r.PrivateData) != CMREQPrivateDataLength || &r.PrivateData[0] != &mad[MADHeaderLength+140] {
		t.Errorf("private data %d bytes, not in place", len(r.PrivateData))
	}
	// RDMA-CM IP private data (Annex A11): version 0, IP version 4, source
	// port 0x82e7 (tshark: IP CM Source Port).
	if r.PrivateData[1] != 0x40 || r.PrivateData[2] != 0x82 || r.PrivateData[3] != 0xe7 {
		t.Errorf("private data starts % x", r.PrivateData[:4])
	}
	if l, rm := r.CommIDs(); l != 0x59165256 || rm != 0 {
		t.Errorf("CommIDs %x %x", l, rm)
	}
	if d := CMTimeout(r.RemoteCMResponseTimeout); d != 4294967296*time.Nanosecond {
		t.Errorf("timeout 20 = %v, want 4.096 µs × 2^20", d)
	}
}

// TestCMREQRealIB checks the IPoIB-CM REQ of the native InfiniBand capture
// (frame 7), whose path has a real packet rate and LIDs.
func TestCMREQRealIB(t *testing.T) {
	mads := cmAllCapturedMADs(t)
	mad := cmFindMAD(t, mads, "public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", 7)
	var r CMREQ
	cmMustDecode(t, &r, mad[MADHeaderLength:])
	p := r.PrimaryPath
	if r.ServiceID != 0x1000000000000404 || !r.SRQ || r.PathPacketPayloadMTU.String() != "2048" ||
		p.LocalPortLID != 4 || p.RemotePortLID != 1 || !p.SubnetLocal || p.PacketRate != 3 || p.PacketRate.String() != "10 Gb/s" {
		t.Errorf("%+v", r)
	}
	if a := netip.AddrFrom16(p.RemotePortGID); a.String() != "fe80::2:c902:20:b4dd" {
		t.Errorf("remote GID %v", a)
	}
}

// TestCMConnectionTracking follows every connection of the captures by
// communication IDs: a REP answers a REQ's LocalCommID, every later
// message names the pair (in either order).
func TestCMConnectionTracking(t *testing.T) {
	parser, l := cmParser()
	var decoded []gopacket.LayerType
	for _, file := range cmCaptureFiles {
		type pair struct{ a, b uint32 }
		reqs := map[uint32]bool{}
		conns := map[pair]bool{}
		n := 0
		for _, c := range cmMADsInCapture(t, file) {
			if err := parser.DecodeLayers(c.mad, &decoded); err != nil {
				t.Fatal(err)
			}
			msg, ok := l.layer(decoded[1]).(CMConnMessage)
			if !ok {
				continue
			}
			local, remote := msg.CommIDs()
			switch decoded[1] {
			case LayerTypeCMREQ:
				reqs[local] = true
			case LayerTypeCMREP:
				if !reqs[remote] {
					t.Errorf("%s frame %d: REP for unknown REQ %08x", file, c.frame, remote)
				}
				conns[pair{remote, local}] = true
			default:
				if !conns[pair{local, remote}] && !conns[pair{remote, local}] {
					t.Errorf("%s frame %d: %v of unknown connection %08x/%08x", file, c.frame, decoded[1], local, remote)
				}
			}
			n++
		}
		if len(conns) == 0 || n < 3 {
			t.Errorf("%s: %d connections from %d messages", file, len(conns), n)
		}
	}
}

// Hand-built messages of the kinds the captures lack. Offsets are the IBA
// Vol 1 12.6 table offsets into the MAD data area.

func TestCMMRAHandBuilt(t *testing.T) {
	d := cmBytes(map[int][]byte{
		0:  {0x11, 0x22, 0x33, 0x44}, // Local Communication ID
		4:  {0x55, 0x66, 0x77, 0x88}, // Remote Communication ID
		8:  {0x80},                   // Message MRAed (2 bits) = 2 (LAP), reserved 6
		9:  {0x13 << 3},              // Service Timeout (5 bits) = 0x13, reserved 3
		10: fill(222, 0xab),          // Private Data, 222 bytes
	})
	var m CMMRA
	cmMustDecode(t, &m, d)
	want := CMMRA{LocalCommID: 0x11223344, RemoteCommID: 0x55667788, MessageMRAed: MRAMessageLAP,
		ServiceTimeout: 0x13, PrivateData: fill(222, 0xab)}
	if !reflect.DeepEqual(fieldsOnly(&m), want) {
		t.Errorf("got %+v", m)
	}
	if m.MessageMRAed.String() != "LAP" {
		t.Errorf("%v", m.MessageMRAed)
	}
	if got := serializeCM(t, &m, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
}

func TestCMREJHandBuilt(t *testing.T) {
	ari := []byte{0x02} // reason 31: the highest supported class version
	d := cmBytes(map[int][]byte{
		0:  {0, 0, 0, 0},             // Local Communication ID (none yet)
		4:  {0xca, 0xfe, 0xba, 0xbe}, // Remote Communication ID
		8:  {0x00},                   // Message REJected = 0 (REQ)
		9:  {1 << 1},                 // Reject Info Length (7 bits) = 1
		10: {0x00, 31},               // Reason = 31
		12: ari,                      // ARI, 72-byte field
		84: fill(148, 0x5a),          // Private Data, 148 bytes
	})
	var m CMREJ
	cmMustDecode(t, &m, d)
	want := CMREJ{RemoteCommID: 0xcafebabe, MessageRejected: RejMessageREQ, RejectInfoLength: 1,
		Reason: RejUnsupportedClassVersion, ARI: ari, PrivateData: fill(148, 0x5a)}
	if !reflect.DeepEqual(fieldsOnly(&m), want) {
		t.Errorf("got %+v", m)
	}
	if v, ok := m.ARIClassVersion(); !ok || v != 2 {
		t.Errorf("ARI class version %d %v", v, ok)
	}
	if got := serializeCM(t, &m, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
	// Consumer reject with a ClassPortInfo-sized ARI, length fixed up.
	m2 := CMREJ{LocalCommID: 1, RemoteCommID: 2, MessageRejected: RejMessageREP, Reason: RejConsumer, ARI: fill(72, 0xee)}
	b := serializeCM(t, &m2, true)
	if b[8] != 0x40 || b[9] != 72<<1 || b[11] != 28 || b[83] != 0xee || b[84] != 0 {
		t.Errorf("serialised % x", b[:90])
	}
	// A Reject Info Length beyond the ARI field is an error, not a panic.
	d[9] = 73 << 1
	if err := m.DecodeFromBytes(d, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) || !strings.Contains(err.Error(), "73") {
		t.Errorf("length 73: %v", err)
	}
}

func TestRejReasonNames(t *testing.T) {
	// IBA Vol 1 12.6.7 reject reasons.
	for r, s := range map[RejReason]string{
		1: "No QP available", 8: "Invalid Service ID", 10: "Stale connection",
		12: "Primary Remote Port GID rejected", 24: "Port and CM Redirection",
		26: "Invalid Path MTU", 28: "Consumer reject", 30: "Duplicate Local Comm ID",
		31: "Unsupported class version", 33: "Invalid Alternate Flow Label",
		35: "Vendor option not supported", 0: "RejReason(0)", 34: "RejReason(34)", 36: "RejReason(36)",
	} {
		if r.String() != s {
			t.Errorf("%d: %q, want %q", uint16(r), r.String(), s)
		}
	}
	for r := RejReason(1); r <= 35; r++ {
		if named := !strings.HasPrefix(r.String(), "RejReason("); named != (r != 34) {
			t.Errorf("reason %d: %q", uint16(r), r.String())
		}
	}
}

func TestCMSIDRHandBuilt(t *testing.T) {
	req := cmBytes(map[int][]byte{
		0:  {0x00, 0x00, 0x12, 0x34},                         // Request ID
		4:  {0xff, 0xff},                                     // Partition Key; 6-7 reserved
		8:  {0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x12, 0xb5}, // Service ID: RDMA-CM UDP port 4789
		16: fill(216, 0x01),                                  // Private Data, 216 bytes
	})
	var q CMSIDRREQ
	cmMustDecode(t, &q, req)
	if !reflect.DeepEqual(fieldsOnly(&q), CMSIDRREQ{RequestID: 0x1234, PartitionKey: 0xffff,
		ServiceID: 0x00000000011112b5, PrivateData: fill(216, 0x01)}) {
		t.Errorf("got %+v", q)
	}
	if got := serializeCM(t, &q, false); !bytes.Equal(got, req) {
		t.Errorf("SIDR_REQ round trip")
	}

	rep := cmBytes(map[int][]byte{
		0:  {0x00, 0x00, 0x12, 0x34}, // Request ID
		4:  {5},                      // Status = 5 (unsupported class version)
		5:  {1},                      // Additional Information Length
		6:  {0x00, 0x02},             // ECE Vendor ID, high 16 bits
		8:  {0x00, 0x00, 0x42},       // QPN (24 bits)
		11: {0xc9},                   // ECE Vendor ID, low 8 bits
		12: {1, 2, 3, 4, 5, 6, 7, 8}, // Service ID
		20: {0x80, 0x01, 0x00, 0x00}, // Q_Key
		24: {0x02},                   // Additional Information, 72-byte field
		96: fill(136, 0x77),          // Private Data, 136 bytes
	})
	var p CMSIDRREP
	cmMustDecode(t, &p, rep)
	if !reflect.DeepEqual(fieldsOnly(&p), CMSIDRREP{RequestID: 0x1234, Status: SIDRUnsupportedVersion,
		AdditionalInformationLength: 1, VendorID: 0x0002c9, QPN: 0x42, ServiceID: 0x0102030405060708,
		QKey: 0x80010000, AdditionalInformation: []byte{2}, PrivateData: fill(136, 0x77)}) {
		t.Errorf("got %+v", p)
	}
	if v, ok := p.ClassVersion(); !ok || v != 2 || p.Status.String() != "Unsupported class version" {
		t.Errorf("class version %d %v %v", v, ok, p.Status)
	}
	if got := serializeCM(t, &p, false); !bytes.Equal(got, rep) {
		t.Errorf("SIDR_REP round trip\n% x\n% x", got, rep)
	}
	rep[5] = 73
	if err := p.DecodeFromBytes(rep, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Error("Additional Information Length 73 accepted")
	}
	if SIDRStatus(0).String() != "Valid QPN" || SIDRStatus(9).String() != "SIDRStatus(9)" {
		t.Error("SIDR status names")
	}
}

func TestCMLAPHandBuilt(t *testing.T) {
	lgid := netip.MustParseAddr("fe80::1").As16()
	rgid := netip.MustParseAddr("fe80::2").As16()
	d := cmBytes(map[int][]byte{
		0:  {0, 0, 0, 1},       // Local Communication ID
		4:  {0, 0, 0, 2},       // Remote Communication ID; 8-11 reserved
		12: {0x00, 0x01, 0x23}, // Remote QPN/EECN
		15: {0x10 << 3},        // Remote CM Response Timeout = 16, reserved 3
		20: {0x00, 0x07},       // Alternate Local Port LID; 16-19 reserved
		22: {0x00, 0x09},       // Alternate Remote Port LID
		24: lgid[:],            // Alternate Local Port GID
		40: rgid[:],            // Alternate Remote Port GID
		56: {0xab, 0xcd, 0xe0}, // Alternate Flow Label 0xabcde, reserved 4 bits
		59: {0xb8},             // Alternate Traffic Class
		60: {0x40},             // Alternate Hop Limit
		61: {0x07},             // reserved 2, Alternate Packet Rate (6) = 7 (40 Gb/s)
		62: {0x38},             // Alternate SL = 3, Subnet Local = 1, reserved 3
		63: {0x0e << 3},        // Alternate Local ACK Timeout = 14, reserved 3
		64: fill(168, 0x33),    // Private Data, 168 bytes
	})
	var m CMLAP
	cmMustDecode(t, &m, d)
	want := CMLAP{LocalCommID: 1, RemoteCommID: 2, RemoteQPN: 0x123, RemoteCMResponseTimeout: 16,
		AlternatePath: CMPath{LocalPortLID: 7, RemotePortLID: 9, LocalPortGID: lgid, RemotePortGID: rgid,
			FlowLabel: 0xabcde, PacketRate: 7, TrafficClass: 0xb8, HopLimit: 0x40, SL: 3,
			SubnetLocal: true, LocalACKTimeout: 14},
		PrivateData: fill(168, 0x33)}
	if !reflect.DeepEqual(fieldsOnly(&m), want) {
		t.Errorf("got  %+v\nwant %+v", fieldsOnly(&m), want)
	}
	if m.AlternatePath.PacketRate.String() != "40 Gb/s" {
		t.Errorf("%v", m.AlternatePath.PacketRate)
	}
	if got := serializeCM(t, &m, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
}

// TestCMREQPathHandBuilt checks the REQ path word order, which differs from
// the LAP's: Flow Label(20) Reserved(6) Packet Rate(6), then Traffic Class.
func TestCMREQPathHandBuilt(t *testing.T) {
	d := cmBytes(map[int][]byte{
		43:  {0x14<<3 | 3<<1 | 1},     // Remote CM Response Timeout 20, TST 3, E2E 1
		50:  {0x5<<4 | 0x8 | 0x6},     // MTU 4096, RDC Exists, RNR Retry Count 6
		51:  {0x8<<4 | 0x8 | 0x1},     // Max CM Retries 8, SRQ, Extended Transport Type 1 (XRC)
		88:  {0xab, 0xcd, 0xe0, 0x10}, // Primary Flow Label 0xabcde, reserved, Packet Rate 16
		92:  {0x12, 0x34},             // Primary Traffic Class, Hop Limit
		132: {0x00, 0x00, 0x10, 0x02}, // Alternate Flow Label 1, Packet Rate 2
		139: {0x0c<<3 | 0x04},         // Alternate Local ACK Timeout 12, SAP Supported
	})
	var r CMREQ
	cmMustDecode(t, &r, d)
	if r.RemoteCMResponseTimeout != 20 || r.TransportServiceType != TransportServiceExtended || !r.EndToEndFlowControl ||
		r.PathPacketPayloadMTU != MTU4096 || !r.RDCExists || r.RNRRetryCount != 6 ||
		r.MaxCMRetries != 8 || !r.SRQ || r.ExtendedTransportType != ExtendedTransportXRC ||
		r.ExtendedTransportType.String() != "XRC" {
		t.Errorf("%+v", r)
	}
	if p := r.PrimaryPath; p.FlowLabel != 0xabcde || p.PacketRate != 16 || p.TrafficClass != 0x12 || p.HopLimit != 0x34 {
		t.Errorf("primary %+v", p)
	}
	if p := r.AlternatePath; p.FlowLabel != 1 || p.PacketRate != 2 || p.LocalACKTimeout != 12 || !r.SAPSupported {
		t.Errorf("alternate %+v SAP %v", p, r.SAPSupported)
	}
	if got := serializeCM(t, &r, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
}

func TestCMAPRHandBuilt(t *testing.T) {
	lid := []byte{0x00, 0x05} // status 7: an acceptable LID
	d := cmBytes(map[int][]byte{
		0:  {0, 0, 0, 2},    // Local Communication ID
		4:  {0, 0, 0, 1},    // Remote Communication ID
		8:  {2},             // Additional Information Length
		9:  {7},             // AP Status = 7 (invalid LID); 10-11 reserved
		12: lid,             // Additional Information, 72-byte field
		84: fill(148, 0x44), // Private Data, 148 bytes
	})
	var m CMAPR
	cmMustDecode(t, &m, d)
	want := CMAPR{LocalCommID: 2, RemoteCommID: 1, AdditionalInformationLength: 2, APStatus: APInvalidLID,
		AdditionalInformation: lid, PrivateData: fill(148, 0x44)}
	if !reflect.DeepEqual(fieldsOnly(&m), want) {
		t.Errorf("got %+v", m)
	}
	if m.APStatus.String() != "Invalid alternate LID" || APSuccess.String() != "Alternate path loaded" || APStatus(14).String() != "APStatus(14)" {
		t.Error("AP status names")
	}
	if got := serializeCM(t, &m, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
	d[8] = 200
	if err := m.DecodeFromBytes(d, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Error("Additional Information Length 200 accepted")
	}
}

func TestClassPortInfoHandBuilt(t *testing.T) {
	rgid := netip.MustParseAddr("fe80::a").As16()
	tgid := netip.MustParseAddr("fe80::b").As16()
	d := cmBytes(map[int][]byte{
		0:  {0x01},                          // BaseVersion
		1:  {0x02},                          // ClassVersion
		2:  {0x01, 0x00},                    // CapabilityMask
		4:  {0x00, 0x00, 0x00, 0x20 | 0x12}, // CapabilityMask2 = 1 (27 bits), RespTimeValue = 18 (5 bits)
		8:  rgid[:],                         // RedirectGID
		24: {0x0a, 0x51, 0x23, 0x45},        // RedirectTC 0x0a, RedirectSL 5, RedirectFL 0x12345
		28: {0x00, 0x0c},                    // RedirectLID
		30: {0xff, 0xff},                    // RedirectP_Key
		32: {0x00, 0x00, 0x00, 0x01},        // Reserved, RedirectQP = 1
		36: {0x80, 0x01, 0x00, 0x00},        // RedirectQ_Key
		40: tgid[:],                         // TrapGID
		56: {0x0b, 0x6f, 0xff, 0xff},        // TrapTC 0x0b, TrapSL 6, TrapFL 0xfffff
		60: {0x00, 0x0d},                    // TrapLID
		62: {0x7f, 0xff},                    // TrapP_Key
		64: {0x40, 0x00, 0x00, 0x02},        // TrapHL 64, TrapQP 2
		68: {0x00, 0x00, 0x00, 0x03},        // TrapQ_Key
	})
	var c ClassPortInfo
	cmMustDecode(t, &c, d)
	want := ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x100, CapabilityMask2: 1,
		RespTimeValue: 18, RedirectGID: rgid, RedirectTC: 0x0a, RedirectSL: 5, RedirectFL: 0x12345,
		RedirectLID: 12, RedirectPKey: 0xffff, RedirectQP: 1, RedirectQKey: 0x80010000,
		TrapGID: tgid, TrapTC: 0x0b, TrapSL: 6, TrapFL: 0xfffff, TrapLID: 13, TrapPKey: 0x7fff,
		TrapHL: 64, TrapQP: 2, TrapQKey: 3}
	if !reflect.DeepEqual(fieldsOnly(&c), want) {
		t.Errorf("got  %+v\nwant %+v", fieldsOnly(&c), want)
	}
	if got := serializeCM(t, &c, false); !bytes.Equal(got, d) {
		t.Errorf("round trip\n% x\n% x", got, d)
	}
	// As a REJ ARI (reason 25, port redirection).
	rej := CMREJ{Reason: RejPortRedirect, ARI: c.AppendTo(nil)}
	var back CMREJ
	cmMustDecode(t, &back, serializeCM(t, &rej, true))
	var c2 ClassPortInfo
	cmMustDecode(t, &c2, back.ARI)
	if !reflect.DeepEqual(fieldsOnly(&c2), want) {
		t.Errorf("from ARI: %+v", fieldsOnly(&c2))
	}
	// Through the MAD: Get(ClassPortInfo) response.
	mad := madHeader([24]byte{1, 0x07, 2, 0x81, 16: 0x00, 17: 0x01}, d)
	p := gopacket.NewPacket(mad, LayerTypeMAD, gopacket.Default)
	if l, ok := p.Layer(LayerTypeClassPortInfo).(*ClassPortInfo); !ok || l.RedirectFL != 0x12345 {
		t.Errorf("packet layers %v", p.Layers())
	}
}

// TestCMDecodeShort: every CM layer refuses fewer than 232 bytes.
func TestCMDecodeShort(t *testing.T) {
	_, l := cmParser()
	for _, lt := range []gopacket.LayerType{LayerTypeCMREQ, LayerTypeCMMRA, LayerTypeCMREJ, LayerTypeCMREP,
		LayerTypeCMRTU, LayerTypeCMDREQ, LayerTypeCMDREP, LayerTypeCMSIDRREQ, LayerTypeCMSIDRREP,
		LayerTypeCMLAP, LayerTypeCMAPR} {
		dl := l.layer(lt).(gopacket.DecodingLayer)
		for _, n := range []int{0, 8, 231} {
			df := &truncFeedback{}
			if err := dl.DecodeFromBytes(make([]byte, n), df); !errors.Is(err, ErrTooShort) || !df.truncated {
				t.Errorf("%v with %d bytes: %v", lt, n, err)
			}
		}
		if err := dl.DecodeFromBytes(make([]byte, 232), gopacket.NilDecodeFeedback); err != nil {
			t.Errorf("%v zero bytes: %v", lt, err)
		}
	}
	var c ClassPortInfo
	if err := c.DecodeFromBytes(make([]byte, 71), &truncFeedback{}); !errors.Is(err, ErrTooShort) {
		t.Error("ClassPortInfo of 71 bytes")
	}
}

// TestCMPrivateDataTooLong: serialising more private data than the field
// holds is an error; shorter private data is padded with zeros.
func TestCMPrivateDataTooLong(t *testing.T) {
	for _, c := range []struct {
		l   gopacket.SerializableLayer
		max int
	}{
		{&CMREQ{}, CMREQPrivateDataLength}, {&CMMRA{}, CMMRAPrivateDataLength},
		{&CMREJ{}, CMREJPrivateDataLength}, {&CMREP{}, CMREPPrivateDataLength},
		{&CMRTU{}, CMRTUPrivateDataLength}, {&CMDREQ{}, CMDREQPrivateDataLength},
		{&CMDREP{}, CMDREPPrivateDataLength}, {&CMLAP{}, CMLAPPrivateDataLength},
		{&CMAPR{}, CMAPRPrivateDataLength}, {&CMSIDRREQ{}, CMSIDRREQPrivateDataLength},
		{&CMSIDRREP{}, CMSIDRREPPrivateDataLength},
	} {
		f := reflect.ValueOf(c.l).Elem().FieldByName("PrivateData")
		f.Set(reflect.ValueOf(fill(c.max+1, 1)))
		if err := c.l.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}); err == nil {
			t.Errorf("%T: %d bytes of private data accepted", c.l, c.max+1)
		}
		f.Set(reflect.ValueOf([]byte{9}))
		b := serializeCM(t, c.l, false)
		if b[MADDataLength-c.max] != 9 || b[MADDataLength-1] != 0 {
			t.Errorf("%T: private data not at offset %d", c.l, MADDataLength-c.max)
		}
	}
}

func TestCMStrings(t *testing.T) {
	if CMAttrConnectRequest.String() != "ConnectRequest" || CMAttrConnectRequest.Short() != "REQ" ||
		CMAttrServiceIDResReqResp.Short() != "SIDR_REP" || CMAttributeID(0x99).String() != "CMAttribute(0x0099)" {
		t.Error("attribute names")
	}
	for m, s := range map[PathMTU]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096", 0: "PathMTU(0)", 6: "PathMTU(6)"} {
		if m.String() != s {
			t.Errorf("MTU %d: %q", m, m.String())
		}
	}
	if PacketRate(2).String() != "2.5 Gb/s" || PacketRate(16).String() != "100 Gb/s" || PacketRate(0).String() != "PacketRate(0)" {
		t.Error("packet rates")
	}
	if FailoverAccepted(2).String() != "rejected: alternate path not possible" || RejMessageOther.String() != "Other" {
		t.Error("REP/REJ names")
	}
	if CMTimeout(0) != 4096*time.Nanosecond || CMTimeout(31) != 4096*time.Nanosecond<<31 {
		t.Error("CMTimeout")
	}
}

// FuzzCM decodes arbitrary 232-byte data areas as each CM attribute; what
// decodes must serialise to bytes that decode to the same values.
func FuzzCM(f *testing.F) {
	for _, c := range cmAllCapturedMADs(f) {
		if c.mad[1] == byte(MgmtClassCM) {
			f.Add(c.mad[17], c.mad[MADHeaderLength:])
		}
	}
	f.Fuzz(func(t *testing.T, attr byte, data []byte) {
		lt := cmAttributeLayerType(CMAttributeID(attr % 0x1b))
		if lt == gopacket.LayerTypeZero {
			lt = LayerTypeCMREQ
		}
		_, l := cmParser()
		dl := l.layer(lt).(gopacket.DecodingLayer)
		if err := dl.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		b := serializeCM(t, l.layer(lt), false)
		_, l2 := cmParser()
		if err := l2.layer(lt).(gopacket.DecodingLayer).DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%v: re-decode: %v", lt, err)
		}
		if a, b := fieldsOnly(l.layer(lt)), fieldsOnly(l2.layer(lt)); !reflect.DeepEqual(a, b) {
			t.Fatalf("%v: %+v\nthen %+v", lt, a, b)
		}
	})
}
