package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Service ID Resolution messages, SIDR_REQ and SIDR_REP (IBA Vol 1 12.11;
// Linux's Tables 119, 120). Offsets are into the 232-byte MAD data area.

// CMSIDRREQ is the ServiceIDResReq message (IBA Vol 1 12.11.1).
type CMSIDRREQ struct {
	layers.BaseLayer
	RequestID    uint32 // 0
	PartitionKey uint16 // 4; 6-7 reserved
	ServiceID    uint64 // 8
	PrivateData  []byte // 16, 216 bytes
}

// LayerType returns LayerTypeCMSIDRREQ.
func (m *CMSIDRREQ) LayerType() gopacket.LayerType { return LayerTypeCMSIDRREQ }

// CanDecode returns LayerTypeCMSIDRREQ.
func (m *CMSIDRREQ) CanDecode() gopacket.LayerClass { return LayerTypeCMSIDRREQ }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMSIDRREQ) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a SIDR_REQ from the 232-byte MAD data area.
func (m *CMSIDRREQ) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("SIDR_REQ", data, df)
	if err != nil {
		return err
	}
	m.RequestID = binary.BigEndian.Uint32(d[0:4])
	m.PartitionKey = binary.BigEndian.Uint16(d[4:6])
	m.ServiceID = binary.BigEndian.Uint64(d[8:16])
	m.PrivateData = d[16:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the SIDR_REQ.
func (m *CMSIDRREQ) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.RequestID)
	binary.BigEndian.PutUint16(d[4:6], m.PartitionKey)
	binary.BigEndian.PutUint64(d[8:16], m.ServiceID)
	return cmPutPrivateData("SIDR_REQ", d, 16, m.PrivateData)
}

func decodeCMSIDRREQ(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMSIDRREQ{}, data, p)
}

// SIDRStatus is the SIDR_REP's Status (IBA Vol 1 12.11.2; numbering as
// Linux enum ib_cm_sidr_status).
type SIDRStatus uint8

// SIDR_REP status values.
const (
	SIDRSuccess            SIDRStatus = 0 // QPN and Q_Key valid
	SIDRUnsupported        SIDRStatus = 1 // Service ID not supported
	SIDRReject             SIDRStatus = 2 // rejected by the service provider
	SIDRNoQP               SIDRStatus = 3
	SIDRRedirect           SIDRStatus = 4 // Additional Information: ClassPortInfo
	SIDRUnsupportedVersion SIDRStatus = 5 // Additional Information: highest version
)

var sidrStatusNames = [...]string{
	SIDRSuccess:            "Valid QPN",
	SIDRUnsupported:        "Service ID not supported",
	SIDRReject:             "Rejected by service provider",
	SIDRNoQP:               "No QP available",
	SIDRRedirect:           "Redirect",
	SIDRUnsupportedVersion: "Unsupported class version",
}

func (s SIDRStatus) String() string {
	if int(s) < len(sidrStatusNames) {
		return sidrStatusNames[s]
	}
	return fmt.Sprintf("SIDRStatus(%d)", uint8(s))
}

// CMSIDRREP is the ServiceIDResReqResp message (IBA Vol 1 12.11.2).
type CMSIDRREP struct {
	layers.BaseLayer
	RequestID                   uint32     // 0
	Status                      SIDRStatus // 4
	AdditionalInformationLength uint8      // 5
	// VendorID is the Enhanced Connection Establishment vendor ID (IBA
	// comment 9434, laid out as Linux ibta_vol1_c12.h does): bytes 6-7
	// (high 16 bits) and 11 (low 8 bits).
	VendorID  uint32
	QPN       uint32 // 8, 24 bits
	ServiceID uint64 // 12
	QKey      uint32 // 20
	// AdditionalInformation (24, 72-byte field) is cut to
	// AdditionalInformationLength bytes; it points into the decoded data.
	AdditionalInformation []byte
	PrivateData           []byte // 96, 136 bytes
}

// LayerType returns LayerTypeCMSIDRREP.
func (m *CMSIDRREP) LayerType() gopacket.LayerType { return LayerTypeCMSIDRREP }

// CanDecode returns LayerTypeCMSIDRREP.
func (m *CMSIDRREP) CanDecode() gopacket.LayerClass { return LayerTypeCMSIDRREP }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMSIDRREP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a SIDR_REP from the 232-byte MAD data area. An
// AdditionalInformationLength beyond the 72-byte field is an error.
func (m *CMSIDRREP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("SIDR_REP", data, df)
	if err != nil {
		return err
	}
	m.RequestID = binary.BigEndian.Uint32(d[0:4])
	m.Status = SIDRStatus(d[4])
	m.AdditionalInformationLength = d[5]
	m.VendorID = uint32(binary.BigEndian.Uint16(d[6:8]))<<8 | uint32(d[11])
	m.QPN = cmGet24(d[8:11])
	m.ServiceID = binary.BigEndian.Uint64(d[12:20])
	m.QKey = binary.BigEndian.Uint32(d[20:24])
	if m.AdditionalInformationLength > CMInfoLength {
		return fmt.Errorf("roce: CM SIDR_REP: Additional Information Length %d exceeds the %d-byte field (IBA Vol 1 12.11.2): %w", m.AdditionalInformationLength, CMInfoLength, ErrBadLength)
	}
	m.AdditionalInformation = d[24 : 24+int(m.AdditionalInformationLength)]
	m.PrivateData = d[96:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// ClassVersion returns the highest CM class version the responder
// supports, which a SIDR_REP with status 5 carries in its Additional
// Information.
func (m *CMSIDRREP) ClassVersion() (uint8, bool) {
	if m.Status != SIDRUnsupportedVersion || len(m.AdditionalInformation) < 1 {
		return 0, false
	}
	return m.AdditionalInformation[0], true
}

// SerializeTo prepends the 232-byte MAD data area of the SIDR_REP. With
// opts.FixLengths, AdditionalInformationLength is set to
// len(AdditionalInformation).
func (m *CMSIDRREP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.RequestID)
	d[4] = uint8(m.Status)
	n, err := cmPutInfo("SIDR_REP", d[24:96], m.AdditionalInformation, m.AdditionalInformationLength, opts.FixLengths)
	if err != nil {
		return err
	}
	d[5] = n
	binary.BigEndian.PutUint16(d[6:8], uint16(m.VendorID>>8))
	cmPut24(d[8:11], m.QPN)
	d[11] = byte(m.VendorID)
	binary.BigEndian.PutUint64(d[12:20], m.ServiceID)
	binary.BigEndian.PutUint32(d[20:24], m.QKey)
	return cmPutPrivateData("SIDR_REP", d, 96, m.PrivateData)
}

func decodeCMSIDRREP(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMSIDRREP{}, data, p)
}
