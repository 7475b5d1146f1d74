package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Connection release and path migration messages: DREQ, DREP, LAP, APR
// (IBA Vol 1 12.6.10-12.6.13; Linux's Tables 112, 113, 115, 116). Offsets
// are into the 232-byte MAD data area.

// CMDREQ is the DisconnectRequest message (IBA Vol 1 12.6.10).
type CMDREQ struct {
	layers.BaseLayer
	LocalCommID  uint32 // 0
	RemoteCommID uint32 // 4
	RemoteQPN    uint32 // 8, 24 bits: the remote QPN or EECN; 11 reserved
	PrivateData  []byte // 12, 220 bytes
}

// LayerType returns LayerTypeCMDREQ.
func (m *CMDREQ) LayerType() gopacket.LayerType { return LayerTypeCMDREQ }

// CanDecode returns LayerTypeCMDREQ.
func (m *CMDREQ) CanDecode() gopacket.LayerClass { return LayerTypeCMDREQ }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMDREQ) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMDREQ) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes a DREQ from the 232-byte MAD data area.
func (m *CMDREQ) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("DREQ", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.RemoteQPN = cmGet24(d[8:11])
	m.PrivateData = d[12:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the DREQ.
func (m *CMDREQ) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	cmPut24(d[8:11], m.RemoteQPN)
	return cmPutPrivateData("DREQ", d, 12, m.PrivateData)
}

func decodeCMDREQ(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMDREQ{}, data, p)
}

// CMDREP is the DisconnectReply message (IBA Vol 1 12.6.11).
type CMDREP struct {
	layers.BaseLayer
	LocalCommID  uint32 // 0
	RemoteCommID uint32 // 4
	PrivateData  []byte // 8, 224 bytes
}

// LayerType returns LayerTypeCMDREP.
func (m *CMDREP) LayerType() gopacket.LayerType { return LayerTypeCMDREP }

// CanDecode returns LayerTypeCMDREP.
func (m *CMDREP) CanDecode() gopacket.LayerClass { return LayerTypeCMDREP }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMDREP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMDREP) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes a DREP from the 232-byte MAD data area.
func (m *CMDREP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("DREP", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.PrivateData = d[8:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the DREP.
func (m *CMDREP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	return cmPutPrivateData("DREP", d, 8, m.PrivateData)
}

func decodeCMDREP(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMDREP{}, data, p)
}

// CMLAP is the LoadAlternatePath message (IBA Vol 1 12.6.12).
type CMLAP struct {
	layers.BaseLayer
	LocalCommID  uint32 // 0
	RemoteCommID uint32 // 4; 8-11 reserved
	RemoteQPN    uint32 // 12, 24 bits: the remote QPN or EECN
	// RemoteCMResponseTimeout is byte 15 bits 7-3; 16-19 are reserved.
	RemoteCMResponseTimeout uint8
	AlternatePath           CMPath // 20-63, in the LAP's own field order
	PrivateData             []byte // 64, 168 bytes
}

// LayerType returns LayerTypeCMLAP.
func (m *CMLAP) LayerType() gopacket.LayerType { return LayerTypeCMLAP }

// CanDecode returns LayerTypeCMLAP.
func (m *CMLAP) CanDecode() gopacket.LayerClass { return LayerTypeCMLAP }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMLAP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMLAP) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes a LAP from the 232-byte MAD data area.
func (m *CMLAP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("LAP", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.RemoteQPN = cmGet24(d[12:15])
	m.RemoteCMResponseTimeout = d[15] >> 3
	m.AlternatePath.decodeLAPPath(d[20:64])
	m.PrivateData = d[64:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the LAP.
func (m *CMLAP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	cmPut24(d[12:15], m.RemoteQPN)
	d[15] = (m.RemoteCMResponseTimeout & 0x1f) << 3
	m.AlternatePath.encodeLAPPath(d[20:64])
	return cmPutPrivateData("LAP", d, 64, m.PrivateData)
}

func decodeCMLAP(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMLAP{}, data, p)
}

// APStatus is the APR's AP Status (IBA Vol 1 12.6.13, the table of AP
// status values; numbering as Linux enum ib_cm_apr_status).
type APStatus uint8

// AP status values.
const (
	APSuccess             APStatus = 0 // alternate path loaded
	APInvalidCommID       APStatus = 1
	APUnsupported         APStatus = 2
	APRejected            APStatus = 3
	APRedirect            APStatus = 4 // Additional Information: ClassPortInfo
	APIsCurrent           APStatus = 5
	APInvalidQPN          APStatus = 6
	APInvalidLID          APStatus = 7
	APInvalidGID          APStatus = 8
	APInvalidFlowLabel    APStatus = 9
	APInvalidTrafficClass APStatus = 10
	APInvalidHopLimit     APStatus = 11
	APInvalidPacketRate   APStatus = 12
	APInvalidSL           APStatus = 13
)

var apStatusNames = [...]string{
	APSuccess:             "Alternate path loaded",
	APInvalidCommID:       "Invalid Communication ID",
	APUnsupported:         "Option not supported",
	APRejected:            "Rejected by consumer",
	APRedirect:            "Port and CM redirection",
	APIsCurrent:           "Alternate path is the current path",
	APInvalidQPN:          "Invalid QPN/EECN",
	APInvalidLID:          "Invalid alternate LID",
	APInvalidGID:          "Invalid alternate GID",
	APInvalidFlowLabel:    "Invalid alternate flow label",
	APInvalidTrafficClass: "Invalid alternate traffic class",
	APInvalidHopLimit:     "Invalid alternate hop limit",
	APInvalidPacketRate:   "Invalid alternate packet rate",
	APInvalidSL:           "Invalid alternate SL",
}

func (s APStatus) String() string {
	if int(s) < len(apStatusNames) {
		return apStatusNames[s]
	}
	return fmt.Sprintf("APStatus(%d)", uint8(s))
}

// CMAPR is the AlternatePathResponse message (IBA Vol 1 12.6.13).
type CMAPR struct {
	layers.BaseLayer
	LocalCommID                 uint32   // 0
	RemoteCommID                uint32   // 4
	AdditionalInformationLength uint8    // 8
	APStatus                    APStatus // 9; 10-11 reserved
	// AdditionalInformation (12, 72-byte field) is cut to
	// AdditionalInformationLength bytes; it points into the decoded data.
	AdditionalInformation []byte
	PrivateData           []byte // 84, 148 bytes
}

// LayerType returns LayerTypeCMAPR.
func (m *CMAPR) LayerType() gopacket.LayerType { return LayerTypeCMAPR }

// CanDecode returns LayerTypeCMAPR.
func (m *CMAPR) CanDecode() gopacket.LayerClass { return LayerTypeCMAPR }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMAPR) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMAPR) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes an APR from the 232-byte MAD data area. An
// AdditionalInformationLength beyond the 72-byte field is an error.
func (m *CMAPR) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("APR", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.AdditionalInformationLength = d[8]
	m.APStatus = APStatus(d[9])
	if m.AdditionalInformationLength > CMInfoLength {
		return fmt.Errorf("roce: CM APR: Additional Information Length %d exceeds the %d-byte field (IBA Vol 1 12.6.13): %w", m.AdditionalInformationLength, CMInfoLength, ErrBadLength)
	}
	m.AdditionalInformation = d[12 : 12+int(m.AdditionalInformationLength)]
	m.PrivateData = d[84:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the APR. With
// opts.FixLengths, AdditionalInformationLength is set to
// len(AdditionalInformation).
func (m *CMAPR) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	n, err := cmPutInfo("APR", d[12:84], m.AdditionalInformation, m.AdditionalInformationLength, opts.FixLengths)
	if err != nil {
		return err
	}
	d[8] = n
	d[9] = uint8(m.APStatus)
	return cmPutPrivateData("APR", d, 84, m.PrivateData)
}

func decodeCMAPR(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMAPR{}, data, p)
}
