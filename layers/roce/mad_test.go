package roce

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
)

// madHeader builds a MAD: the 24-byte common header of IBA Vol 1 13.4.3
// followed by data padded with zeros to 232 bytes.
func madHeader(hdr [24]byte, data []byte) []byte {
	b := make([]byte, MADLength)
	copy(b, hdr[:])
	copy(b[MADHeaderLength:], data)
	return b
}

func TestMADHandBuilt(t *testing.T) {
	b := madHeader([24]byte{
		0x01,       // 0 BaseVersion
		0x03,       // 1 MgmtClass: SubnAdm
		0x02,       // 2 ClassVersion
		0x92,       // 3 R=1, Method 0x12: GetTableResp
		0x00, 0x1c, // 4 Status: invalid-field code 7 in bits 2-4
		0x12, 0x34, // 6 ClassSpecific
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // 8 TransactionID
		0x00, 0x35, // 16 AttributeID: PathRecord
		0x00, 0x00, // 18 Reserved
		0xde, 0xad, 0xbe, 0xef, // 20 AttributeModifier
	}, []byte{0xaa})
	var m MAD
	if err := m.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	want := MAD{
		BaseVersion: 1, MgmtClass: MgmtClassSubnAdm, ClassVersion: 2, R: true,
		Method: MethodGetTableResp, Status: 0x001c, ClassSpecific: 0x1234,
		TransactionID: 0x0102030405060708, AttributeID: 0x0035, AttributeModifier: 0xdeadbeef,
	}
	want.Contents, want.Payload = b[:24], b[24:]
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
	if len(m.Payload) != 232 || m.Payload[0] != 0xaa {
		t.Errorf("payload %d bytes starting %x", len(m.Payload), m.Payload[:1])
	}
	if m.Status.InvalidField() != MADInvalidAttributeValue || m.Status.Busy() || m.Status.RedirectRequired() {
		t.Errorf("status %v", m.Status)
	}
	if m.IsCM() || m.NextLayerType() != gopacket.LayerTypePayload {
		t.Errorf("SubnAdm MAD: IsCM %v next %v", m.IsCM(), m.NextLayerType())
	}
	if got := m.Method.String(); got != "GetTableResp" {
		t.Errorf("method %q", got)
	}
	out := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(out, gopacket.SerializeOptions{}, &m, gopacket.Payload(m.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), b) {
		t.Errorf("round trip:\n% x\n% x", out.Bytes(), b)
	}
}

// TestMADRealSMP checks the directed-route SMPs of the native InfiniBand
// capture (SubnGet/SubnGetResp(SMInfo), tshark frames 1 and 2).
func TestMADRealSMP(t *testing.T) {
	mads := cmMADsInCapture(t, "public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap")
	for _, c := range []struct {
		frame  int
		method MADMethod
		r      bool
	}{{1, MethodGet, false}, {2, MethodGetResp, true}} {
		var m MAD
		if err := m.DecodeFromBytes(cmFindMAD(t, mads, mads[0].file, c.frame), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		// tshark: Management Class 0x81, Class Specific 0x0102 (hop
		// pointer 1, hop count 2), Attribute ID 0x0020 (SMInfo).
		if m.MgmtClass != MgmtClassSubnDirectedRoute || m.Method != c.method || m.R != c.r ||
			m.ClassSpecific != 0x0102 || m.AttributeID != 0x0020 {
			t.Errorf("frame %d: %+v", c.frame, m)
		}
		if m.MgmtClass.String() != "SubnMgt (directed route)" || m.NextLayerType() != gopacket.LayerTypePayload {
			t.Errorf("frame %d: class %v next %v", c.frame, m.MgmtClass, m.NextLayerType())
		}
	}
}

func TestMADTruncated(t *testing.T) {
	real := cmRealREQ(t)
	for _, n := range []int{0, 1, 23, 24, 255} {
		var m MAD
		df := &truncFeedback{}
		if err := m.DecodeFromBytes(real[:n], df); !errors.Is(err, ErrTooShort) || !df.truncated {
			t.Errorf("%d bytes: err %v truncated %v", n, err, df.truncated)
		}
	}
	// A gopacket packet with a short MAD has an error layer, no panic.
	p := gopacket.NewPacket(real[:100], LayerTypeMAD, gopacket.Default)
	if p.ErrorLayer() == nil {
		t.Error("no error layer for a 100-byte MAD")
	}
}

type truncFeedback struct{ truncated bool }

func (f *truncFeedback) SetTruncated() { f.truncated = true }

func TestMADNextLayerType(t *testing.T) {
	want := map[CMAttributeID]gopacket.LayerType{
		0x0001: LayerTypeClassPortInfo, 0x0010: LayerTypeCMREQ, 0x0011: LayerTypeCMMRA,
		0x0012: LayerTypeCMREJ, 0x0013: LayerTypeCMREP, 0x0014: LayerTypeCMRTU,
		0x0015: LayerTypeCMDREQ, 0x0016: LayerTypeCMDREP, 0x0017: LayerTypeCMSIDRREQ,
		0x0018: LayerTypeCMSIDRREP, 0x0019: LayerTypeCMLAP, 0x001a: LayerTypeCMAPR,
		0x0002: gopacket.LayerTypePayload, 0x001b: gopacket.LayerTypePayload, 0x00ff: gopacket.LayerTypePayload,
	}
	for a, lt := range want {
		m := MAD{BaseVersion: 1, MgmtClass: MgmtClassCM, AttributeID: uint16(a)}
		if got := m.NextLayerType(); got != lt {
			t.Errorf("attribute 0x%04x: %v, want %v", uint16(a), got, lt)
		}
	}
	// Same attribute, other class or base version: payload.
	for _, m := range []MAD{
		{BaseVersion: 1, MgmtClass: MgmtClassSubnAdm, AttributeID: 0x0010},
		{BaseVersion: 0x80, MgmtClass: MgmtClassCM, AttributeID: 0x0010},
	} {
		if got := m.NextLayerType(); got != gopacket.LayerTypePayload {
			t.Errorf("%+v: %v", m, got)
		}
	}
	// Layer type numbers are fixed: BTH and other programs name them.
	if LayerTypeMAD != 1730 || LayerTypeClassPortInfo != 1731 || LayerTypeCMAPR != 1742 {
		t.Errorf("layer numbers %d %d %d", LayerTypeMAD, LayerTypeClassPortInfo, LayerTypeCMAPR)
	}
}

func TestMADStrings(t *testing.T) {
	classes := map[MgmtClass]string{
		0x01: "SubnMgt (LID routed)", 0x81: "SubnMgt (directed route)", 0x03: "SubnAdm",
		0x04: "Perf", 0x05: "BM", 0x06: "DevMgt", 0x07: "CM", 0x08: "SNMP",
		0x09: "Vendor range 1 (0x09)", 0x0f: "Vendor range 1 (0x0f)",
		0x30: "Vendor range 2 (0x30)", 0x4f: "Vendor range 2 (0x4f)",
		0x21: "CC", 0x2f: "Application specific (0x2f)", 0x00: "MgmtClass(0x00)", 0x50: "MgmtClass(0x50)",
	}
	for c, s := range classes {
		if c.String() != s {
			t.Errorf("class 0x%02x: %q, want %q", uint8(c), c.String(), s)
		}
	}
	if !MgmtClass(0x0a).IsVendor() || !MgmtClass(0x40).IsVendor() || MgmtClassCM.IsVendor() {
		t.Error("IsVendor")
	}
	// IBA Vol 1 13.4.5 method values; tshark's value strings agree.
	methods := map[MADMethod]string{
		0x01: "Get", 0x02: "Set", 0x81: "GetResp", 0x03: "Send", 0x05: "Trap", 0x06: "Report",
		0x86: "ReportResp", 0x07: "TrapRepress", 0x12: "GetTable", 0x92: "GetTableResp",
		0x13: "GetTraceTable", 0x14: "GetMulti", 0x94: "GetMultiResp", 0x15: "Delete",
		0x95: "DeleteResp", 0x7f: "Method(0x7f)",
	}
	for m, s := range methods {
		if m.String() != s {
			t.Errorf("method 0x%02x: %q, want %q", uint8(m), m.String(), s)
		}
	}
	if !MethodGetResp.IsResponse() || MethodSend.IsResponse() {
		t.Error("IsResponse")
	}
	if s := MADStatus(0x0003).String(); s != "0x0003 busy redirect" {
		t.Errorf("status string %q", s)
	}
	if st := MADStatus(0x7f00); st.ClassSpecific() != 0x7f || st.InvalidField() != MADFieldsValid {
		t.Errorf("class-specific status bits %v", st)
	}
}

func TestMADFixLengths(t *testing.T) {
	m := MAD{BaseVersion: 1, MgmtClass: MgmtClassPerf, ClassVersion: 1, Method: MethodGet, TransactionID: 7}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &m, gopacket.Payload{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b) != MADLength || b[24] != 1 || b[26] != 3 || !bytes.Equal(b[27:], make([]byte, 229)) {
		t.Fatalf("%d bytes: % x", len(b), b)
	}
	var back MAD
	if err := back.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil || back.TransactionID != 7 || back.MgmtClass != MgmtClassPerf {
		t.Errorf("%v %+v", err, back)
	}
}

// cmParser returns a DecodingLayerParser starting at the MAD with every
// layer of this file set, and the layers.
func cmParser() (*gopacket.DecodingLayerParser, *cmLayers) {
	l := &cmLayers{}
	p := gopacket.NewDecodingLayerParser(LayerTypeMAD, &l.mad, &l.cpi, &l.req, &l.mra, &l.rej,
		&l.rep, &l.rtu, &l.dreq, &l.drep, &l.sreq, &l.srep, &l.lap, &l.apr, &l.payload)
	return p, l
}

type cmLayers struct {
	mad     MAD
	cpi     ClassPortInfo
	req     CMREQ
	mra     CMMRA
	rej     CMREJ
	rep     CMREP
	rtu     CMRTU
	dreq    CMDREQ
	drep    CMDREP
	sreq    CMSIDRREQ
	srep    CMSIDRREP
	lap     CMLAP
	apr     CMAPR
	payload gopacket.Payload
}

// layer returns the decoded layer of type t.
func (l *cmLayers) layer(t gopacket.LayerType) gopacket.SerializableLayer {
	switch t {
	case LayerTypeMAD:
		return &l.mad
	case LayerTypeClassPortInfo:
		return &l.cpi
	case LayerTypeCMREQ:
		return &l.req
	case LayerTypeCMMRA:
		return &l.mra
	case LayerTypeCMREJ:
		return &l.rej
	case LayerTypeCMREP:
		return &l.rep
	case LayerTypeCMRTU:
		return &l.rtu
	case LayerTypeCMDREQ:
		return &l.dreq
	case LayerTypeCMDREP:
		return &l.drep
	case LayerTypeCMSIDRREQ:
		return &l.sreq
	case LayerTypeCMSIDRREP:
		return &l.srep
	case LayerTypeCMLAP:
		return &l.lap
	case LayerTypeCMAPR:
		return &l.apr
	case gopacket.LayerTypePayload:
		return &l.payload
	}
	return nil
}

// TestMADRoundTripReal decodes every MAD of the captures with a
// DecodingLayerParser and with gopacket.NewPacket, and serialises it back
// to the identical 256 bytes.
func TestMADRoundTripReal(t *testing.T) {
	parser, l := cmParser()
	var decoded []gopacket.LayerType
	counts := map[gopacket.LayerType]int{}
	for _, c := range cmAllCapturedMADs(t) {
		if err := parser.DecodeLayers(c.mad, &decoded); err != nil {
			t.Fatalf("%s frame %d: %v", c.file, c.frame, err)
		}
		if len(decoded) != 2 || decoded[0] != LayerTypeMAD {
			t.Fatalf("%s frame %d: layers %v", c.file, c.frame, decoded)
		}
		counts[decoded[1]]++
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, l.layer(decoded[0]), l.layer(decoded[1])); err != nil {
			t.Fatalf("%s frame %d: %v", c.file, c.frame, err)
		}
		if !bytes.Equal(buf.Bytes(), c.mad) {
			t.Errorf("%s frame %d (%v): serialised bytes differ:\n% x\n% x", c.file, c.frame, decoded[1], buf.Bytes(), c.mad)
		}
		p := gopacket.NewPacket(c.mad, LayerTypeMAD, gopacket.Default)
		if p.ErrorLayer() != nil {
			t.Errorf("%s frame %d: %v", c.file, c.frame, p.ErrorLayer().Error())
		}
		if ls := p.Layers(); len(ls) != 2 || ls[1].LayerType() != decoded[1] {
			t.Errorf("%s frame %d: NewPacket layers %v", c.file, c.frame, ls)
		}
	}
	// What the captures hold (tshark agrees: see the golden table).
	for lt, min := range map[gopacket.LayerType]int{
		LayerTypeCMREQ: 20, LayerTypeCMREP: 20, LayerTypeCMRTU: 20, LayerTypeCMDREQ: 20,
		LayerTypeCMDREP: 20, gopacket.LayerTypePayload: 8,
	} {
		if counts[lt] < min {
			t.Errorf("%v: %d MADs, expected at least %d", lt, counts[lt], min)
		}
	}
}

// TestMADDecodeAllocs: decoding a real REQ with a DecodingLayerParser
// allocates nothing.
func TestMADDecodeAllocs(t *testing.T) {
	parser, l := cmParser()
	req := cmRealREQ(t)
	decoded := make([]gopacket.LayerType, 0, 4)
	allocs := testing.AllocsPerRun(100, func() {
		if err := parser.DecodeLayers(req, &decoded); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode", allocs)
	}
	if l.req.LocalCommID != 0x59165256 || &l.req.PrivateData[0] != &req[MADHeaderLength+140] {
		t.Error("REQ not decoded in place")
	}
}

func BenchmarkMADDecodeREQ(b *testing.B) {
	parser, _ := cmParser()
	req := cmRealREQ(b)
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if err := parser.DecodeLayers(req, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzMAD decodes arbitrary bytes as a MAD and its CM attribute. Whatever
// decodes must serialise and decode again to the same values.
func FuzzMAD(f *testing.F) {
	for _, c := range cmAllCapturedMADs(f) {
		f.Add(c.mad)
	}
	f.Add(make([]byte, 255))
	f.Fuzz(func(t *testing.T, data []byte) {
		parser, l := cmParser()
		var decoded []gopacket.LayerType
		if err := parser.DecodeLayers(data, &decoded); err != nil {
			var unsupported gopacket.UnsupportedLayerType
			if !errors.As(err, &unsupported) && len(decoded) > 0 && decoded[0] == LayerTypeMAD {
				// A CM attribute refused its data: only the
				// length fields of REJ/APR/SIDR_REP can do that.
				if !l.mad.IsCM() {
					t.Fatalf("non-CM MAD failed after the header: %v", err)
				}
			}
			return
		}
		sl := make([]gopacket.SerializableLayer, len(decoded))
		for i, lt := range decoded {
			sl[i] = l.layer(lt)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, sl...); err != nil {
			t.Fatalf("serialise %v: %v", decoded, err)
		}
		if len(buf.Bytes()) != MADLength {
			t.Fatalf("serialised %d bytes", len(buf.Bytes()))
		}
		parser2, l2 := cmParser()
		var decoded2 []gopacket.LayerType
		if err := parser2.DecodeLayers(buf.Bytes(), &decoded2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(decoded, decoded2) {
			t.Fatalf("layers %v then %v", decoded, decoded2)
		}
		for _, lt := range decoded {
			if a, b := fieldsOnly(l.layer(lt)), fieldsOnly(l2.layer(lt)); !reflect.DeepEqual(a, b) {
				t.Fatalf("%v: %+v\nthen %+v", lt, a, b)
			}
		}
	})
}
