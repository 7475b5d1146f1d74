package roce

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
)

// The Communication Manager's attributes (the CM attribute table, IBA Vol 1
// 16.7.3 in Release 1.1 numbering; messages in 12.6 and 12.11), one
// gopacket layer each. A CM MAD's AttributeID chooses the
// layer that decodes its 232 bytes of data (see MAD.NextLayerType).
var (
	LayerTypeClassPortInfo = gopacket.RegisterLayerType(1731, gopacket.LayerTypeMetadata{Name: "ClassPortInfo", Decoder: gopacket.DecodeFunc(decodeClassPortInfo)})
	LayerTypeCMREQ         = gopacket.RegisterLayerType(1732, gopacket.LayerTypeMetadata{Name: "CMREQ", Decoder: gopacket.DecodeFunc(decodeCMREQ)})
	LayerTypeCMMRA         = gopacket.RegisterLayerType(1733, gopacket.LayerTypeMetadata{Name: "CMMRA", Decoder: gopacket.DecodeFunc(decodeCMMRA)})
	LayerTypeCMREJ         = gopacket.RegisterLayerType(1734, gopacket.LayerTypeMetadata{Name: "CMREJ", Decoder: gopacket.DecodeFunc(decodeCMREJ)})
	LayerTypeCMREP         = gopacket.RegisterLayerType(1735, gopacket.LayerTypeMetadata{Name: "CMREP", Decoder: gopacket.DecodeFunc(decodeCMREP)})
	LayerTypeCMRTU         = gopacket.RegisterLayerType(1736, gopacket.LayerTypeMetadata{Name: "CMRTU", Decoder: gopacket.DecodeFunc(decodeCMRTU)})
	LayerTypeCMDREQ        = gopacket.RegisterLayerType(1737, gopacket.LayerTypeMetadata{Name: "CMDREQ", Decoder: gopacket.DecodeFunc(decodeCMDREQ)})
	LayerTypeCMDREP        = gopacket.RegisterLayerType(1738, gopacket.LayerTypeMetadata{Name: "CMDREP", Decoder: gopacket.DecodeFunc(decodeCMDREP)})
	LayerTypeCMSIDRREQ     = gopacket.RegisterLayerType(1739, gopacket.LayerTypeMetadata{Name: "CMSIDRREQ", Decoder: gopacket.DecodeFunc(decodeCMSIDRREQ)})
	LayerTypeCMSIDRREP     = gopacket.RegisterLayerType(1740, gopacket.LayerTypeMetadata{Name: "CMSIDRREP", Decoder: gopacket.DecodeFunc(decodeCMSIDRREP)})
	LayerTypeCMLAP         = gopacket.RegisterLayerType(1741, gopacket.LayerTypeMetadata{Name: "CMLAP", Decoder: gopacket.DecodeFunc(decodeCMLAP)})
	LayerTypeCMAPR         = gopacket.RegisterLayerType(1742, gopacket.LayerTypeMetadata{Name: "CMAPR", Decoder: gopacket.DecodeFunc(decodeCMAPR)})
)

// CMAttributeID is the AttributeID of a CM MAD (the CM attribute table;
// ClassPortInfo is the common attribute of IBA Vol 1 13.4.8.1).
type CMAttributeID uint16

// CM attributes, with the IBA names.
const (
	CMAttrClassPortInfo         CMAttributeID = 0x0001
	CMAttrConnectRequest        CMAttributeID = 0x0010 // REQ
	CMAttrMsgRcptAck            CMAttributeID = 0x0011 // MRA
	CMAttrConnectReject         CMAttributeID = 0x0012 // REJ
	CMAttrConnectReply          CMAttributeID = 0x0013 // REP
	CMAttrReadyToUse            CMAttributeID = 0x0014 // RTU
	CMAttrDisconnectRequest     CMAttributeID = 0x0015 // DREQ
	CMAttrDisconnectReply       CMAttributeID = 0x0016 // DREP
	CMAttrServiceIDResReq       CMAttributeID = 0x0017 // SIDR_REQ
	CMAttrServiceIDResReqResp   CMAttributeID = 0x0018 // SIDR_REP
	CMAttrLoadAlternatePath     CMAttributeID = 0x0019 // LAP
	CMAttrAlternatePathResponse CMAttributeID = 0x001a // APR
)

func (a CMAttributeID) String() string {
	switch a {
	case CMAttrClassPortInfo:
		return "ClassPortInfo"
	case CMAttrConnectRequest:
		return "ConnectRequest"
	case CMAttrMsgRcptAck:
		return "MsgRcptAck"
	case CMAttrConnectReject:
		return "ConnectReject"
	case CMAttrConnectReply:
		return "ConnectReply"
	case CMAttrReadyToUse:
		return "ReadyToUse"
	case CMAttrDisconnectRequest:
		return "DisconnectRequest"
	case CMAttrDisconnectReply:
		return "DisconnectReply"
	case CMAttrServiceIDResReq:
		return "ServiceIDResReq"
	case CMAttrServiceIDResReqResp:
		return "ServiceIDResReqResp"
	case CMAttrLoadAlternatePath:
		return "LoadAlternatePath"
	case CMAttrAlternatePathResponse:
		return "AlternatePathResponse"
	}
	return fmt.Sprintf("CMAttribute(0x%04x)", uint16(a))
}

// Short returns the message's abbreviation (REQ, REP, ...) as IBA Vol 1
// 12.6 uses it, or String for ClassPortInfo and unknown attributes.
func (a CMAttributeID) Short() string {
	switch a {
	case CMAttrConnectRequest:
		return "REQ"
	case CMAttrMsgRcptAck:
		return "MRA"
	case CMAttrConnectReject:
		return "REJ"
	case CMAttrConnectReply:
		return "REP"
	case CMAttrReadyToUse:
		return "RTU"
	case CMAttrDisconnectRequest:
		return "DREQ"
	case CMAttrDisconnectReply:
		return "DREP"
	case CMAttrServiceIDResReq:
		return "SIDR_REQ"
	case CMAttrServiceIDResReqResp:
		return "SIDR_REP"
	case CMAttrLoadAlternatePath:
		return "LAP"
	case CMAttrAlternatePathResponse:
		return "APR"
	}
	return a.String()
}

// cmAttributeLayerType maps a CM AttributeID to its layer, or LayerTypeZero.
func cmAttributeLayerType(a CMAttributeID) gopacket.LayerType {
	switch a {
	case CMAttrClassPortInfo:
		return LayerTypeClassPortInfo
	case CMAttrConnectRequest:
		return LayerTypeCMREQ
	case CMAttrMsgRcptAck:
		return LayerTypeCMMRA
	case CMAttrConnectReject:
		return LayerTypeCMREJ
	case CMAttrConnectReply:
		return LayerTypeCMREP
	case CMAttrReadyToUse:
		return LayerTypeCMRTU
	case CMAttrDisconnectRequest:
		return LayerTypeCMDREQ
	case CMAttrDisconnectReply:
		return LayerTypeCMDREP
	case CMAttrServiceIDResReq:
		return LayerTypeCMSIDRREQ
	case CMAttrServiceIDResReqResp:
		return LayerTypeCMSIDRREP
	case CMAttrLoadAlternatePath:
		return LayerTypeCMLAP
	case CMAttrAlternatePathResponse:
		return LayerTypeCMAPR
	}
	return gopacket.LayerTypeZero
}

// CMConnMessage is implemented by the CM messages that belong to one
// connection (IBA Vol 1 12.6): REQ, MRA, REJ, REP, RTU, DREQ, DREP, LAP and
// APR. A connection tracker keys on the pair of communication IDs.
type CMConnMessage interface {
	gopacket.Layer
	// CommIDs returns the sender's Local Communication ID and the Remote
	// Communication ID. Remote is 0 in a REQ, which precedes it; a REJ
	// sent before its sender chose a communication ID has local 0.
	CommIDs() (local, remote uint32)
}

// CMTimeout converts the 5-bit timeout encoding of the CM response
// timeouts, MRA ServiceTimeout, TargetACKDelay and LocalACKTimeout,
// 4.096 µs × 2^v (IBA Vol 1 12.6.5, 9.7.6.1.3), to a duration. LocalACKTimeout
// 0 means "infinite"; callers that care check for it.
func CMTimeout(v uint8) time.Duration {
	return time.Duration(4096) << (v & 0x1f) * time.Nanosecond
}

// TransportServiceType is the REQ's 2-bit Transport Service Type
// (IBA Vol 1 12.6.5).
type TransportServiceType uint8

// Transport service types (IBA Vol 1 12.6.5; 3 selects the Extended
// Transport Type, IBA Vol 1 Annex A14 XRC).
const (
	TransportServiceRC       TransportServiceType = 0
	TransportServiceUC       TransportServiceType = 1
	TransportServiceRD       TransportServiceType = 2
	TransportServiceExtended TransportServiceType = 3
)

func (t TransportServiceType) String() string {
	switch t {
	case TransportServiceRC:
		return "RC"
	case TransportServiceUC:
		return "UC"
	case TransportServiceRD:
		return "RD"
	case TransportServiceExtended:
		return "Extended"
	}
	return fmt.Sprintf("TransportServiceType(%d)", uint8(t))
}

// ExtendedTransportType is the REQ's 3-bit Extended Transport Type, used
// when TransportServiceType is 3 (IBA Vol 1 Annex A14).
type ExtendedTransportType uint8

// Extended transport types.
const (
	ExtendedTransportNone ExtendedTransportType = 0
	ExtendedTransportXRC  ExtendedTransportType = 1
)

func (t ExtendedTransportType) String() string {
	switch t {
	case ExtendedTransportNone:
		return "none"
	case ExtendedTransportXRC:
		return "XRC"
	}
	return fmt.Sprintf("ExtendedTransportType(%d)", uint8(t))
}

// PathMTU is the 4-bit MTU code of the REQ's Path Packet Payload MTU
// (IBA Vol 1 12.6.5; the codes of PortInfo NeighborMTU, 14.2.5.6).
type PathMTU uint8

// MTU codes.
const (
	MTU256  PathMTU = 1
	MTU512  PathMTU = 2
	MTU1024 PathMTU = 3
	MTU2048 PathMTU = 4
	MTU4096 PathMTU = 5
)

// Bytes returns the MTU in bytes, or 0 for a reserved code.
func (m PathMTU) Bytes() int {
	if m >= MTU256 && m <= MTU4096 {
		return 128 << m
	}
	return 0
}

func (m PathMTU) String() string {
	if n := m.Bytes(); n != 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("PathMTU(%d)", uint8(m))
}

// PacketRate is the 6-bit rate code of a CM path (IBA Vol 1 12.6.5,
// encoded as the PathRecord Rate of 15.2.5.16; codes above 10 were added by
// later releases and are named as Linux enum ib_rate names them).
type PacketRate uint8

var packetRateNames = [...]string{
	2: "2.5 Gb/s", 3: "10 Gb/s", 4: "30 Gb/s", 5: "5 Gb/s", 6: "20 Gb/s",
	7: "40 Gb/s", 8: "60 Gb/s", 9: "80 Gb/s", 10: "120 Gb/s", 11: "14 Gb/s",
	12: "56 Gb/s", 13: "112 Gb/s", 14: "168 Gb/s", 15: "25 Gb/s",
	16: "100 Gb/s", 17: "200 Gb/s", 18: "300 Gb/s", 19: "28 Gb/s",
	20: "50 Gb/s", 21: "400 Gb/s", 22: "600 Gb/s",
}

func (r PacketRate) String() string {
	if int(r) < len(packetRateNames) && packetRateNames[r] != "" {
		return packetRateNames[r]
	}
	return fmt.Sprintf("PacketRate(%d)", uint8(r))
}

// CMPath is a path of a REQ (primary and alternate, IBA Vol 1 12.6.5) or of
// a LAP (alternate, 12.6.12). GIDs are in network order; an IPv4 RoCE GID is
// an IPv4-mapped IPv6 address.
type CMPath struct {
	LocalPortLID    uint16
	RemotePortLID   uint16
	LocalPortGID    [16]byte
	RemotePortGID   [16]byte
	FlowLabel       uint32 // 20 bits
	PacketRate      PacketRate
	TrafficClass    uint8
	HopLimit        uint8
	SL              uint8 // 4 bits
	SubnetLocal     bool
	LocalACKTimeout uint8 // 5 bits, 4.096 µs × 2^v
}

// decodeREQPath decodes the 44-byte path block of a REQ (primary at data
// offset 52, alternate at 96; IBA Vol 1 12.6.5):
//
//	0  LocalPortLID (16)     2  RemotePortLID (16)
//	4  LocalPortGID (128)   20  RemotePortGID (128)
//	36 FlowLabel (20) Reserved (6) PacketRate (6)
//	40 TrafficClass (8)     41  HopLimit (8)
//	42 SL (4) SubnetLocal (1) Reserved (3)
//	43 LocalACKTimeout (5) Reserved (3)   [alternate: bit 5 is SAP Supported]
func (p *CMPath) decodeREQPath(b []byte) {
	p.LocalPortLID = binary.BigEndian.Uint16(b[0:2])
	p.RemotePortLID = binary.BigEndian.Uint16(b[2:4])
	copy(p.LocalPortGID[:], b[4:20])
	copy(p.RemotePortGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:40])
	p.FlowLabel = w >> 12
	p.PacketRate = PacketRate(w & 0x3f)
	p.TrafficClass = b[40]
	p.HopLimit = b[41]
	p.SL = b[42] >> 4
	p.SubnetLocal = b[42]&0x08 != 0
	p.LocalACKTimeout = b[43] >> 3
}

func (p *CMPath) encodeREQPath(b []byte) {
	binary.BigEndian.PutUint16(b[0:2], p.LocalPortLID)
	binary.BigEndian.PutUint16(b[2:4], p.RemotePortLID)
	copy(b[4:20], p.LocalPortGID[:])
	copy(b[20:36], p.RemotePortGID[:])
	binary.BigEndian.PutUint32(b[36:40], (p.FlowLabel&0xfffff)<<12|uint32(p.PacketRate&0x3f))
	b[40] = p.TrafficClass
	b[41] = p.HopLimit
	b[42] = (p.SL&0xf)<<4 | cmBit(p.SubnetLocal, 3)
	b[43] = (p.LocalACKTimeout & 0x1f) << 3
}

// decodeLAPPath decodes the 44-byte alternate path of a LAP (data offset
// 20; IBA Vol 1 12.6.12), whose order after the GIDs differs from a REQ's:
//
//	0  LocalPortLID (16)     2  RemotePortLID (16)
//	4  LocalPortGID (128)   20  RemotePortGID (128)
//	36 FlowLabel (20) Reserved (4) TrafficClass (8)
//	40 HopLimit (8)         41  Reserved (2) PacketRate (6)
//	42 SL (4) SubnetLocal (1) Reserved (3)
//	43 LocalACKTimeout (5) Reserved (3)
func (p *CMPath) decodeLAPPath(b []byte) {
	p.LocalPortLID = binary.BigEndian.Uint16(b[0:2])
	p.RemotePortLID = binary.BigEndian.Uint16(b[2:4])
	copy(p.LocalPortGID[:], b[4:20])
	copy(p.RemotePortGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:40])
	p.FlowLabel = w >> 12
	p.TrafficClass = uint8(w)
	p.HopLimit = b[40]
	p.PacketRate = PacketRate(b[41] & 0x3f)
	p.SL = b[42] >> 4
	p.SubnetLocal = b[42]&0x08 != 0
	p.LocalACKTimeout = b[43] >> 3
}

func (p *CMPath) encodeLAPPath(b []byte) {
	binary.BigEndian.PutUint16(b[0:2], p.LocalPortLID)
	binary.BigEndian.PutUint16(b[2:4], p.RemotePortLID)
	copy(b[4:20], p.LocalPortGID[:])
	copy(b[20:36], p.RemotePortGID[:])
	binary.BigEndian.PutUint32(b[36:40], (p.FlowLabel&0xfffff)<<12|uint32(p.TrafficClass))
	b[40] = p.HopLimit
	b[41] = uint8(p.PacketRate & 0x3f)
	b[42] = (p.SL&0xf)<<4 | cmBit(p.SubnetLocal, 3)
	b[43] = (p.LocalACKTimeout & 0x1f) << 3
}

// Helpers shared by the CM layers.

func cmBit(v bool, bit uint) byte {
	if v {
		return 1 << bit
	}
	return 0
}

func cmGet24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func cmPut24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// cmData checks that data holds the 232-byte MAD data area of a CM
// attribute and returns it.
func cmData(name string, data []byte, df gopacket.DecodeFeedback) ([]byte, error) {
	if len(data) < MADDataLength {
		df.SetTruncated()
		return nil, fmt.Errorf("roce: CM %s: %d bytes of MAD data, need %d (IBA Vol 1 13.4.3): %w", name, len(data), MADDataLength, ErrTooShort)
	}
	return data[:MADDataLength], nil
}

// cmPrepend reserves and zeroes the 232-byte MAD data area for a CM
// attribute being serialised.
func cmPrepend(b gopacket.SerializeBuffer) ([]byte, error) {
	d, err := b.PrependBytes(MADDataLength)
	if err != nil {
		return nil, err
	}
	clear(d)
	return d, nil
}

// cmPutPrivateData copies pd into the private-data field at d[off:], which is
// max bytes long; the rest stays zero.
func cmPutPrivateData(name string, d []byte, off int, pd []byte) error {
	if max := MADDataLength - off; len(pd) > max {
		return fmt.Errorf("roce: CM %s: %d bytes of private data, the field holds %d (IBA Vol 1 12.6)", name, len(pd), max)
	}
	copy(d[off:], pd)
	return nil
}

// cmPutInfo copies a variable-length information field (REJ ARI, APR and
// SIDR_REP Additional Information, 72 bytes each) and returns the length to
// write in its length field: the declared length, or len(info) when
// fixLengths is set.
func cmPutInfo(name string, d []byte, info []byte, declared uint8, fixLengths bool) (uint8, error) {
	if len(info) > len(d) {
		return 0, fmt.Errorf("roce: CM %s: %d bytes of additional information, the field holds %d", name, len(info), len(d))
	}
	copy(d, info)
	if fixLengths {
		return uint8(len(info)), nil
	}
	return declared, nil
}

// cmDecodeLayer runs a CM attribute's DecodeFromBytes for gopacket's
// decoder chain: a CM attribute is the last layer of its packet.
func cmDecodeLayer(l interface {
	gopacket.Layer
	DecodeFromBytes([]byte, gopacket.DecodeFeedback) error
}, data []byte, p gopacket.PacketBuilder) error {
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return nil
}
