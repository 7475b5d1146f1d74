package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypeMAD is the InfiniBand Management Datagram (IBA Vol 1 13.4.3).
// BTH names it as the layer after the DETH of a UD SEND to QP0 or QP1.
var LayerTypeMAD = gopacket.RegisterLayerType(1730, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMAD)})

// Sizes of a MAD (IBA Vol 1 13.4.1, 13.4.3): every MAD of base version 1 is
// 256 bytes, a 24-byte common header followed by 232 bytes of class data.
const (
	MADLength       = 256
	MADHeaderLength = 24
	MADDataLength   = MADLength - MADHeaderLength // 232
)

// MgmtClass is the MAD header's MgmtClass field (IBA Vol 1 13.4.4, the
// table of management class values).
type MgmtClass uint8

// Management classes (IBA Vol 1 13.4.4). DevAdm, BIS and CC are defined by
// annexes inside the application-specific range; the names follow Linux
// include/rdma/ib_mad.h.
const (
	MgmtClassSubnLIDRouted     MgmtClass = 0x01 // subnet management, LID routed (14.2)
	MgmtClassSubnAdm           MgmtClass = 0x03 // subnet administration (15.2)
	MgmtClassPerf              MgmtClass = 0x04 // performance management (16.1)
	MgmtClassBM                MgmtClass = 0x05 // baseboard management (16.2)
	MgmtClassDevMgt            MgmtClass = 0x06 // device management (16.3)
	MgmtClassCM                MgmtClass = 0x07 // communication management (12)
	MgmtClassSNMP              MgmtClass = 0x08 // SNMP tunneling (16.4)
	MgmtClassDevAdm            MgmtClass = 0x10 // device administration
	MgmtClassBIS               MgmtClass = 0x12 // boot integration services
	MgmtClassCC                MgmtClass = 0x21 // congestion control (Annex A10)
	MgmtClassSubnDirectedRoute MgmtClass = 0x81 // subnet management, directed route (14.2)
)

// IsVendor reports whether c is in one of the vendor-specific ranges,
// 0x09-0x0F (range 1) or 0x30-0x4F (range 2, with OUI) (IBA Vol 1 13.4.4).
func (c MgmtClass) IsVendor() bool {
	return (c >= 0x09 && c <= 0x0f) || (c >= 0x30 && c <= 0x4f)
}

func (c MgmtClass) String() string {
	switch c {
	case MgmtClassSubnLIDRouted:
		return "SubnMgt (LID routed)"
	case MgmtClassSubnDirectedRoute:
		return "SubnMgt (directed route)"
	case MgmtClassSubnAdm:
		return "SubnAdm"
	case MgmtClassPerf:
		return "Perf"
	case MgmtClassBM:
		return "BM"
	case MgmtClassDevMgt:
		return "DevMgt"
	case MgmtClassCM:
		return "CM"
	case MgmtClassSNMP:
		return "SNMP"
	case MgmtClassDevAdm:
		return "DevAdm"
	case MgmtClassBIS:
		return "BIS"
	case MgmtClassCC:
		return "CC"
	}
	switch {
	case c >= 0x09 && c <= 0x0f:
		return fmt.Sprintf("Vendor range 1 (0x%02x)", uint8(c))
	case c >= 0x30 && c <= 0x4f:
		return fmt.Sprintf("Vendor range 2 (0x%02x)", uint8(c))
	case c >= 0x10 && c <= 0x2f:
		return fmt.Sprintf("Application specific (0x%02x)", uint8(c))
	}
	return fmt.Sprintf("MgmtClass(0x%02x)", uint8(c))
}

// MADMethod is the whole Method byte of the MAD header: the R (response)
// bit and the 7-bit method, numbered as IBA Vol 1 13.4.5 numbers them
// (GetResp is 0x81, Get with R set).
type MADMethod uint8

// Common methods (IBA Vol 1 13.4.5) and the subnet administration methods
// (IBA Vol 1 15.2.2).
const (
	MethodGet           MADMethod = 0x01
	MethodSet           MADMethod = 0x02
	MethodSend          MADMethod = 0x03
	MethodTrap          MADMethod = 0x05
	MethodReport        MADMethod = 0x06
	MethodTrapRepress   MADMethod = 0x07
	MethodGetTable      MADMethod = 0x12
	MethodGetTraceTable MADMethod = 0x13
	MethodGetMulti      MADMethod = 0x14
	MethodDelete        MADMethod = 0x15
	MethodGetResp       MADMethod = 0x81
	MethodReportResp    MADMethod = 0x86
	MethodGetTableResp  MADMethod = 0x92
	MethodGetMultiResp  MADMethod = 0x94
	MethodDeleteResp    MADMethod = 0x95
)

// IsResponse reports whether the R bit (bit 7) is set.
func (m MADMethod) IsResponse() bool { return m&0x80 != 0 }

func (m MADMethod) String() string {
	switch m {
	case MethodGet:
		return "Get"
	case MethodSet:
		return "Set"
	case MethodSend:
		return "Send"
	case MethodTrap:
		return "Trap"
	case MethodReport:
		return "Report"
	case MethodTrapRepress:
		return "TrapRepress"
	case MethodGetTable:
		return "GetTable"
	case MethodGetTraceTable:
		return "GetTraceTable"
	case MethodGetMulti:
		return "GetMulti"
	case MethodDelete:
		return "Delete"
	case MethodGetResp:
		return "GetResp"
	case MethodReportResp:
		return "ReportResp"
	case MethodGetTableResp:
		return "GetTableResp"
	case MethodGetMultiResp:
		return "GetMultiResp"
	case MethodDeleteResp:
		return "DeleteResp"
	}
	return fmt.Sprintf("Method(0x%02x)", uint8(m))
}

// MADStatus is the MAD header's 16-bit Status field (IBA Vol 1 13.4.7):
// bit 0 busy, bit 1 redirect required, bits 2-4 the invalid-field code,
// bits 8-14 class specific (bit 0 is the least significant). Directed-route
// SMPs use bit 15 as the D bit (IBA Vol 1 14.2.1.2).
type MADStatus uint16

// MADInvalidField is the code in bits 2-4 of MADStatus (IBA Vol 1 13.4.7).
type MADInvalidField uint8

// Invalid-field codes (IBA Vol 1 13.4.7).
const (
	MADFieldsValid                MADInvalidField = 0
	MADBadVersion                 MADInvalidField = 1
	MADMethodUnsupported          MADInvalidField = 2
	MADMethodAttributeUnsupported MADInvalidField = 3
	MADInvalidAttributeValue      MADInvalidField = 7
)

func (f MADInvalidField) String() string {
	switch f {
	case MADFieldsValid:
		return "no invalid fields"
	case MADBadVersion:
		return "bad version"
	case MADMethodUnsupported:
		return "method not supported"
	case MADMethodAttributeUnsupported:
		return "method/attribute combination not supported"
	case MADInvalidAttributeValue:
		return "invalid value in attribute or attribute modifier"
	}
	return fmt.Sprintf("reserved invalid-field code %d", uint8(f))
}

// Busy reports bit 0: the responder was busy and discarded the request.
func (s MADStatus) Busy() bool { return s&0x0001 != 0 }

// RedirectRequired reports bit 1: the requester must redirect (the
// response carries a ClassPortInfo).
func (s MADStatus) RedirectRequired() bool { return s&0x0002 != 0 }

// InvalidField returns the code in bits 2-4.
func (s MADStatus) InvalidField() MADInvalidField { return MADInvalidField(s >> 2 & 0x7) }

// ClassSpecific returns bits 8-14.
func (s MADStatus) ClassSpecific() uint8 { return uint8(s >> 8 & 0x7f) }

func (s MADStatus) String() string {
	if s == 0 {
		return "success"
	}
	str := fmt.Sprintf("0x%04x", uint16(s))
	if s.Busy() {
		str += " busy"
	}
	if s.RedirectRequired() {
		str += " redirect"
	}
	if f := s.InvalidField(); f != MADFieldsValid {
		str += " " + f.String()
	}
	return str
}

// MAD is the common MAD header of a Management Datagram (IBA Vol 1 13.4.3)
// followed by its 232 bytes of class data, which are the layer's payload.
//
// The MAD is exactly 256 bytes (IBA Vol 1 13.4.1); DecodeFromBytes takes
// the first 256 bytes of its input and ignores the rest (an ICRC left by a
// caller, for instance).
type MAD struct {
	layers.BaseLayer
	BaseVersion  uint8     // byte 0: 1 for IBA MADs
	MgmtClass    MgmtClass // byte 1
	ClassVersion uint8     // byte 2: 2 for the CM of IBA 1.2 and later
	// R is bit 7 of byte 3, the response bit. Decoding sets it from the
	// Method byte; serialising ORs it into Method.
	R bool
	// Method is the whole of byte 3, R bit included, so that GetResp is
	// MethodGetResp (0x81) as in IBA Vol 1 13.4.5.
	Method            MADMethod
	Status            MADStatus // bytes 4-5
	ClassSpecific     uint16    // bytes 6-7
	TransactionID     uint64    // bytes 8-15
	AttributeID       uint16    // bytes 16-17; bytes 18-19 are reserved
	AttributeModifier uint32    // bytes 20-23
}

// LayerType returns LayerTypeMAD.
func (m *MAD) LayerType() gopacket.LayerType { return LayerTypeMAD }

// CanDecode returns LayerTypeMAD.
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }

// IsCM reports whether the MAD belongs to the Communication Manager class.
func (m *MAD) IsCM() bool { return m.MgmtClass == MgmtClassCM }

// CMAttribute returns the AttributeID as a CM attribute; meaningful only
// when IsCM.
func (m *MAD) CMAttribute() CMAttributeID { return CMAttributeID(m.AttributeID) }

// NextLayerType returns, for a CM MAD of base version 1, the layer of its
// attribute (ClassPortInfo, CMREQ, ...): the AttributeID chooses the layer
// as DHCP option types do. Anything else is gopacket.LayerTypePayload.
func (m *MAD) NextLayerType() gopacket.LayerType {
	if m.MgmtClass == MgmtClassCM && m.BaseVersion == 1 {
		if t := cmAttributeLayerType(CMAttributeID(m.AttributeID)); t != gopacket.LayerTypeZero {
			return t
		}
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the 24-byte common header of data and sets the
// payload to the 232 bytes of class data. It does not copy data.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MADLength {
		df.SetTruncated()
		return fmt.Errorf("roce: MAD: %d bytes, a MAD is %d bytes (IBA Vol 1 13.4.1): %w", len(data), MADLength, ErrTooShort)
	}
	m.BaseVersion = data[0]
	m.MgmtClass = MgmtClass(data[1])
	m.ClassVersion = data[2]
	m.Method = MADMethod(data[3])
	m.R = data[3]&0x80 != 0
	m.Status = MADStatus(binary.BigEndian.Uint16(data[4:6]))
	m.ClassSpecific = binary.BigEndian.Uint16(data[6:8])
	m.TransactionID = binary.BigEndian.Uint64(data[8:16])
	m.AttributeID = binary.BigEndian.Uint16(data[16:18])
	m.AttributeModifier = binary.BigEndian.Uint32(data[20:24])
	m.Contents = data[:MADHeaderLength]
	m.Payload = data[MADHeaderLength:MADLength]
	return nil
}

// SerializeTo prepends the 24-byte common header. With opts.FixLengths, a
// payload shorter than 232 bytes is padded with zeros to make a 256-byte
// MAD.
func (m *MAD) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		if n := len(b.Bytes()); n < MADDataLength {
			pad, err := b.AppendBytes(MADDataLength - n)
			if err != nil {
				return err
			}
			clear(pad)
		}
	}
	h, err := b.PrependBytes(MADHeaderLength)
	if err != nil {
		return err
	}
	h[0] = m.BaseVersion
	h[1] = byte(m.MgmtClass)
	h[2] = m.ClassVersion
	h[3] = byte(m.Method)
	if m.R {
		h[3] |= 0x80
	}
	binary.BigEndian.PutUint16(h[4:6], uint16(m.Status))
	binary.BigEndian.PutUint16(h[6:8], m.ClassSpecific)
	binary.BigEndian.PutUint64(h[8:16], m.TransactionID)
	binary.BigEndian.PutUint16(h[16:18], m.AttributeID)
	h[18], h[19] = 0, 0
	binary.BigEndian.PutUint32(h[20:24], m.AttributeModifier)
	return nil
}

func decodeMAD(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return p.NextDecoder(m.NextLayerType())
}
