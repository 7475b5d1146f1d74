package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Connection establishment messages: REQ, MRA, REJ, REP, RTU (IBA Vol 1
// 12.6.5-12.6.9). Offsets in comments are byte offsets into the 232-byte
// MAD data area, as the IBA message-contents tables give them (Linux
// include/rdma/ibta_vol1_c12.h numbers these tables 106-111).

// Private-data sizes (IBA Vol 1 12.6).
const (
	CMREQPrivateDataLength     = 92
	CMMRAPrivateDataLength     = 222
	CMREJPrivateDataLength     = 148
	CMREPPrivateDataLength     = 196
	CMRTUPrivateDataLength     = 224
	CMDREQPrivateDataLength    = 220
	CMDREPPrivateDataLength    = 224
	CMLAPPrivateDataLength     = 168
	CMAPRPrivateDataLength     = 148
	CMSIDRREQPrivateDataLength = 216
	CMSIDRREPPrivateDataLength = 136
	// CMInfoLength is the size of the REJ ARI and of the APR and SIDR_REP
	// Additional Information fields.
	CMInfoLength = 72
)

// CMREQ is the ConnectRequest message (IBA Vol 1 12.6.5, Linux's Table 106).
type CMREQ struct {
	layers.BaseLayer
	LocalCommID uint32 // 0
	// VendorID (5, 24 bits) is the Enhanced Connection Establishment
	// vendor ID (IBA comment 9434, laid out as Linux ibta_vol1_c12.h
	// does); byte 4 is reserved, as 4-7 were before ECE.
	VendorID                uint32
	ServiceID               uint64                // 8
	LocalCADGUID            uint64                // 16; 24-27 reserved
	LocalQKey               uint32                // 28
	LocalQPN                uint32                // 32, 24 bits
	ResponderResources      uint8                 // 35
	LocalEECN               uint32                // 36, 24 bits
	InitiatorDepth          uint8                 // 39
	RemoteEECN              uint32                // 40, 24 bits
	RemoteCMResponseTimeout uint8                 // 43 bits 7-3
	TransportServiceType    TransportServiceType  // 43 bits 2-1
	EndToEndFlowControl     bool                  // 43 bit 0
	StartingPSN             uint32                // 44, 24 bits
	LocalCMResponseTimeout  uint8                 // 47 bits 7-3
	RetryCount              uint8                 // 47 bits 2-0
	PartitionKey            uint16                // 48
	PathPacketPayloadMTU    PathMTU               // 50 bits 7-4
	RDCExists               bool                  // 50 bit 3
	RNRRetryCount           uint8                 // 50 bits 2-0
	MaxCMRetries            uint8                 // 51 bits 7-4
	SRQ                     bool                  // 51 bit 3
	ExtendedTransportType   ExtendedTransportType // 51 bits 2-0
	PrimaryPath             CMPath                // 52-95
	AlternatePath           CMPath                // 96-139
	// SAPSupported is bit 2 of byte 139, after the alternate path's
	// LocalACKTimeout (a later IBA release; named and placed as Linux
	// ibta_vol1_c12.h does).
	SAPSupported bool
	PrivateData  []byte // 140, 92 bytes; points into the decoded data
}

// LayerType returns LayerTypeCMREQ.
func (m *CMREQ) LayerType() gopacket.LayerType { return LayerTypeCMREQ }

// CanDecode returns LayerTypeCMREQ.
func (m *CMREQ) CanDecode() gopacket.LayerClass { return LayerTypeCMREQ }

// NextLayerType returns gopacket.LayerTypeZero: the private data is the
// consumer's (see PrivateData).
func (m *CMREQ) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns LocalCommID and 0.
func (m *CMREQ) CommIDs() (local, remote uint32) { return m.LocalCommID, 0 }

// DecodeFromBytes decodes a REQ from the 232-byte MAD data area.
func (m *CMREQ) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("REQ", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.VendorID = cmGet24(d[5:8])
	m.ServiceID = binary.BigEndian.Uint64(d[8:16])
	m.LocalCADGUID = binary.BigEndian.Uint64(d[16:24])
	m.LocalQKey = binary.BigEndian.Uint32(d[28:32])
	m.LocalQPN = cmGet24(d[32:35])
	m.ResponderResources = d[35]
	m.LocalEECN = cmGet24(d[36:39])
	m.InitiatorDepth = d[39]
	m.RemoteEECN = cmGet24(d[40:43])
	m.RemoteCMResponseTimeout = d[43] >> 3
	m.TransportServiceType = TransportServiceType(d[43] >> 1 & 0x3)
	m.EndToEndFlowControl = d[43]&0x01 != 0
	m.StartingPSN = cmGet24(d[44:47])
	m.LocalCMResponseTimeout = d[47] >> 3
	m.RetryCount = d[47] & 0x7
	m.PartitionKey = binary.BigEndian.Uint16(d[48:50])
	m.PathPacketPayloadMTU = PathMTU(d[50] >> 4)
	m.RDCExists = d[50]&0x08 != 0
	m.RNRRetryCount = d[50] & 0x7
	m.MaxCMRetries = d[51] >> 4
	m.SRQ = d[51]&0x08 != 0
	m.ExtendedTransportType = ExtendedTransportType(d[51] & 0x7)
	m.PrimaryPath.decodeREQPath(d[52:96])
	m.AlternatePath.decodeREQPath(d[96:140])
	m.SAPSupported = d[139]&0x04 != 0
	m.PrivateData = d[140:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the REQ.
func (m *CMREQ) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	cmPut24(d[5:8], m.VendorID)
	binary.BigEndian.PutUint64(d[8:16], m.ServiceID)
	binary.BigEndian.PutUint64(d[16:24], m.LocalCADGUID)
	binary.BigEndian.PutUint32(d[28:32], m.LocalQKey)
	cmPut24(d[32:35], m.LocalQPN)
	d[35] = m.ResponderResources
	cmPut24(d[36:39], m.LocalEECN)
	d[39] = m.InitiatorDepth
	cmPut24(d[40:43], m.RemoteEECN)
	d[43] = (m.RemoteCMResponseTimeout&0x1f)<<3 | uint8(m.TransportServiceType&0x3)<<1 | cmBit(m.EndToEndFlowControl, 0)
	cmPut24(d[44:47], m.StartingPSN)
	d[47] = (m.LocalCMResponseTimeout&0x1f)<<3 | m.RetryCount&0x7
	binary.BigEndian.PutUint16(d[48:50], m.PartitionKey)
	d[50] = uint8(m.PathPacketPayloadMTU&0xf)<<4 | cmBit(m.RDCExists, 3) | m.RNRRetryCount&0x7
	d[51] = (m.MaxCMRetries&0xf)<<4 | cmBit(m.SRQ, 3) | uint8(m.ExtendedTransportType&0x7)
	m.PrimaryPath.encodeREQPath(d[52:96])
	m.AlternatePath.encodeREQPath(d[96:140])
	d[139] |= cmBit(m.SAPSupported, 2)
	return cmPutPrivateData("REQ", d, 140, m.PrivateData)
}

func decodeCMREQ(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMREQ{}, data, p)
}

// MRAMessage is the MRA's MessageMRAed field: which message the MRA
// acknowledges (IBA Vol 1 12.6.6).
type MRAMessage uint8

// Messages an MRA acknowledges.
const (
	MRAMessageREQ MRAMessage = 0
	MRAMessageREP MRAMessage = 1
	MRAMessageLAP MRAMessage = 2
)

func (m MRAMessage) String() string {
	switch m {
	case MRAMessageREQ:
		return "REQ"
	case MRAMessageREP:
		return "REP"
	case MRAMessageLAP:
		return "LAP"
	}
	return fmt.Sprintf("MRAMessage(%d)", uint8(m))
}

// CMMRA is the MsgRcptAck message (IBA Vol 1 12.6.6, Linux's Table 107).
type CMMRA struct {
	layers.BaseLayer
	LocalCommID    uint32     // 0
	RemoteCommID   uint32     // 4
	MessageMRAed   MRAMessage // 8 bits 7-6
	ServiceTimeout uint8      // 9 bits 7-3, 4.096 µs × 2^v
	PrivateData    []byte     // 10, 222 bytes
}

// LayerType returns LayerTypeCMMRA.
func (m *CMMRA) LayerType() gopacket.LayerType { return LayerTypeCMMRA }

// CanDecode returns LayerTypeCMMRA.
func (m *CMMRA) CanDecode() gopacket.LayerClass { return LayerTypeCMMRA }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMMRA) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMMRA) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes an MRA from the 232-byte MAD data area.
func (m *CMMRA) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("MRA", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.MessageMRAed = MRAMessage(d[8] >> 6)
	m.ServiceTimeout = d[9] >> 3
	m.PrivateData = d[10:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the MRA.
func (m *CMMRA) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	d[8] = uint8(m.MessageMRAed&0x3) << 6
	d[9] = (m.ServiceTimeout & 0x1f) << 3
	return cmPutPrivateData("MRA", d, 10, m.PrivateData)
}

func decodeCMMRA(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMMRA{}, data, p)
}

// RejMessage is the REJ's MessageRejected field (IBA Vol 1 12.6.7).
type RejMessage uint8

// Messages a REJ rejects.
const (
	RejMessageREQ   RejMessage = 0
	RejMessageREP   RejMessage = 1
	RejMessageOther RejMessage = 2 // no message, or a message other than REQ/REP
)

func (m RejMessage) String() string {
	switch m {
	case RejMessageREQ:
		return "REQ"
	case RejMessageREP:
		return "REP"
	case RejMessageOther:
		return "Other"
	}
	return fmt.Sprintf("RejMessage(%d)", uint8(m))
}

// RejReason is the REJ's Reason code (IBA Vol 1 12.6.7, the table of
// reject reasons following the REJ message contents; Table 109 in the
// numbering Linux uses). The ARI's content depends on the reason.
type RejReason uint16

// Reject reasons (IBA Vol 1 12.6.7). 34 is unassigned; 35 came with
// Enhanced Connection Establishment (IBA comment 9434).
const (
	RejNoQP                       RejReason = 1
	RejNoEEC                      RejReason = 2
	RejNoResources                RejReason = 3
	RejTimeout                    RejReason = 4 // ARI: the rejecting CM's CA GUID
	RejUnsupportedRequest         RejReason = 5
	RejInvalidCommID              RejReason = 6
	RejInvalidCommInstance        RejReason = 7
	RejInvalidServiceID           RejReason = 8
	RejInvalidTransportType       RejReason = 9
	RejStaleConnection            RejReason = 10
	RejRDCNotExist                RejReason = 11
	RejPrimaryRemoteGID           RejReason = 12 // ARI: an acceptable GID
	RejPrimaryRemoteLID           RejReason = 13 // ARI: an acceptable LID
	RejInvalidPrimarySL           RejReason = 14
	RejInvalidPrimaryTrafficClass RejReason = 15
	RejInvalidPrimaryHopLimit     RejReason = 16
	RejInvalidPrimaryPacketRate   RejReason = 17
	RejAlternateRemoteGID         RejReason = 18
	RejAlternateRemoteLID         RejReason = 19
	RejInvalidAlternateSL         RejReason = 20
	RejInvalidAlternateTC         RejReason = 21
	RejInvalidAlternateHopLimit   RejReason = 22
	RejInvalidAlternatePacketRate RejReason = 23
	RejPortCMRedirect             RejReason = 24 // ARI: ClassPortInfo
	RejPortRedirect               RejReason = 25 // ARI: ClassPortInfo
	RejInvalidPathMTU             RejReason = 26
	RejInsufficientRespResources  RejReason = 27
	RejConsumer                   RejReason = 28
	RejRNRRetryCount              RejReason = 29
	RejDuplicateLocalCommID       RejReason = 30
	RejUnsupportedClassVersion    RejReason = 31 // ARI: highest supported version
	RejInvalidPrimaryFlowLabel    RejReason = 32
	RejInvalidAlternateFlowLabel  RejReason = 33
	RejVendorOptionNotSupported   RejReason = 35
)

var rejReasonNames = [...]string{
	RejNoQP:                       "No QP available",
	RejNoEEC:                      "No EEC available",
	RejNoResources:                "No resources available",
	RejTimeout:                    "Timeout",
	RejUnsupportedRequest:         "Unsupported request",
	RejInvalidCommID:              "Invalid Communication ID",
	RejInvalidCommInstance:        "Invalid Communication Instance",
	RejInvalidServiceID:           "Invalid Service ID",
	RejInvalidTransportType:       "Invalid Transport Service Type",
	RejStaleConnection:            "Stale connection",
	RejRDCNotExist:                "RDC does not exist",
	RejPrimaryRemoteGID:           "Primary Remote Port GID rejected",
	RejPrimaryRemoteLID:           "Primary Remote Port LID rejected",
	RejInvalidPrimarySL:           "Invalid Primary SL",
	RejInvalidPrimaryTrafficClass: "Invalid Primary Traffic Class",
	RejInvalidPrimaryHopLimit:     "Invalid Primary Hop Limit",
	RejInvalidPrimaryPacketRate:   "Invalid Primary Packet Rate",
	RejAlternateRemoteGID:         "Alternate Remote Port GID rejected",
	RejAlternateRemoteLID:         "Alternate Remote Port LID rejected",
	RejInvalidAlternateSL:         "Invalid Alternate SL",
	RejInvalidAlternateTC:         "Invalid Alternate Traffic Class",
	RejInvalidAlternateHopLimit:   "Invalid Alternate Hop Limit",
	RejInvalidAlternatePacketRate: "Invalid Alternate Packet Rate",
	RejPortCMRedirect:             "Port and CM Redirection",
	RejPortRedirect:               "Port Redirection",
	RejInvalidPathMTU:             "Invalid Path MTU",
	RejInsufficientRespResources:  "Insufficient Responder Resources",
	RejConsumer:                   "Consumer reject",
	RejRNRRetryCount:              "RNR Retry Count reject",
	RejDuplicateLocalCommID:       "Duplicate Local Comm ID",
	RejUnsupportedClassVersion:    "Unsupported class version",
	RejInvalidPrimaryFlowLabel:    "Invalid Primary Flow Label",
	RejInvalidAlternateFlowLabel:  "Invalid Alternate Flow Label",
	RejVendorOptionNotSupported:   "Vendor option not supported",
}

func (r RejReason) String() string {
	if int(r) < len(rejReasonNames) && rejReasonNames[r] != "" {
		return rejReasonNames[r]
	}
	return fmt.Sprintf("RejReason(%d)", uint16(r))
}

// CMREJ is the ConnectReject message (IBA Vol 1 12.6.7, Linux's Table 108).
type CMREJ struct {
	layers.BaseLayer
	LocalCommID      uint32     // 0
	RemoteCommID     uint32     // 4
	MessageRejected  RejMessage // 8 bits 7-6
	RejectInfoLength uint8      // 9 bits 7-1: valid bytes of ARI
	Reason           RejReason  // 10
	// ARI is the Additional Rejection Information (12, 72-byte field), cut
	// to RejectInfoLength bytes; it points into the decoded data.
	ARI         []byte
	PrivateData []byte // 84, 148 bytes
}

// LayerType returns LayerTypeCMREJ.
func (m *CMREJ) LayerType() gopacket.LayerType { return LayerTypeCMREJ }

// CanDecode returns LayerTypeCMREJ.
func (m *CMREJ) CanDecode() gopacket.LayerClass { return LayerTypeCMREJ }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMREJ) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMREJ) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes a REJ from the 232-byte MAD data area. A
// RejectInfoLength beyond the 72-byte ARI field is an error.
func (m *CMREJ) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("REJ", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.MessageRejected = RejMessage(d[8] >> 6)
	m.RejectInfoLength = d[9] >> 1
	m.Reason = RejReason(binary.BigEndian.Uint16(d[10:12]))
	if m.RejectInfoLength > CMInfoLength {
		return fmt.Errorf("roce: CM REJ: Reject Info Length %d exceeds the %d-byte ARI field (IBA Vol 1 12.6.7): %w", m.RejectInfoLength, CMInfoLength, ErrBadLength)
	}
	m.ARI = d[12 : 12+int(m.RejectInfoLength)]
	m.PrivateData = d[84:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// ARIClassVersion returns the highest class version the rejecting CM
// supports, carried in the ARI of a reason-31 REJ.
func (m *CMREJ) ARIClassVersion() (uint8, bool) {
	if m.Reason != RejUnsupportedClassVersion || len(m.ARI) < 1 {
		return 0, false
	}
	return m.ARI[0], true
}

// SerializeTo prepends the 232-byte MAD data area of the REJ. With
// opts.FixLengths, RejectInfoLength is set to len(ARI).
func (m *CMREJ) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	d[8] = uint8(m.MessageRejected&0x3) << 6
	n, err := cmPutInfo("REJ", d[12:84], m.ARI, m.RejectInfoLength, opts.FixLengths)
	if err != nil {
		return err
	}
	d[9] = (n & 0x7f) << 1
	binary.BigEndian.PutUint16(d[10:12], uint16(m.Reason))
	return cmPutPrivateData("REJ", d, 84, m.PrivateData)
}

func decodeCMREJ(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMREJ{}, data, p)
}

// FailoverAccepted is the REP's 2-bit Failover Accepted field (IBA Vol 1
// 12.6.8).
type FailoverAccepted uint8

// Failover Accepted values.
const (
	FailoverAccept            FailoverAccepted = 0
	FailoverRejectUnsupported FailoverAccepted = 1 // failover not supported
	FailoverRejectNoAltPath   FailoverAccepted = 2 // alternate path not possible
)

func (f FailoverAccepted) String() string {
	switch f {
	case FailoverAccept:
		return "accepted"
	case FailoverRejectUnsupported:
		return "rejected: failover not supported"
	case FailoverRejectNoAltPath:
		return "rejected: alternate path not possible"
	}
	return fmt.Sprintf("FailoverAccepted(%d)", uint8(f))
}

// CMREP is the ConnectReply message (IBA Vol 1 12.6.8, Linux's Table 110).
type CMREP struct {
	layers.BaseLayer
	LocalCommID  uint32 // 0
	RemoteCommID uint32 // 4
	LocalQKey    uint32 // 8
	LocalQPN     uint32 // 12, 24 bits
	// VendorID is the Enhanced Connection Establishment vendor ID (IBA
	// comment 9434, laid out as Linux ibta_vol1_c12.h does), in three
	// bytes: 15 (high), 19 (middle), 23 (low).
	VendorID            uint32
	LocalEEContext      uint32           // 16, 24 bits
	StartingPSN         uint32           // 20, 24 bits
	ResponderResources  uint8            // 24
	InitiatorDepth      uint8            // 25
	TargetACKDelay      uint8            // 26 bits 7-3
	FailoverAccepted    FailoverAccepted // 26 bits 2-1
	EndToEndFlowControl bool             // 26 bit 0
	RNRRetryCount       uint8            // 27 bits 7-5
	SRQ                 bool             // 27 bit 4; bits 3-0 reserved
	LocalCADGUID        uint64           // 28
	PrivateData         []byte           // 36, 196 bytes
}

// LayerType returns LayerTypeCMREP.
func (m *CMREP) LayerType() gopacket.LayerType { return LayerTypeCMREP }

// CanDecode returns LayerTypeCMREP.
func (m *CMREP) CanDecode() gopacket.LayerClass { return LayerTypeCMREP }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMREP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMREP) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes a REP from the 232-byte MAD data area.
func (m *CMREP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("REP", data, df)
	if err != nil {
		return err
	}
	m.LocalCommID = binary.BigEndian.Uint32(d[0:4])
	m.RemoteCommID = binary.BigEndian.Uint32(d[4:8])
	m.LocalQKey = binary.BigEndian.Uint32(d[8:12])
	m.LocalQPN = cmGet24(d[12:15])
	m.VendorID = uint32(d[15])<<16 | uint32(d[19])<<8 | uint32(d[23])
	m.LocalEEContext = cmGet24(d[16:19])
	m.StartingPSN = cmGet24(d[20:23])
	m.ResponderResources = d[24]
	m.InitiatorDepth = d[25]
	m.TargetACKDelay = d[26] >> 3
	m.FailoverAccepted = FailoverAccepted(d[26] >> 1 & 0x3)
	m.EndToEndFlowControl = d[26]&0x01 != 0
	m.RNRRetryCount = d[27] >> 5
	m.SRQ = d[27]&0x10 != 0
	m.LocalCADGUID = binary.BigEndian.Uint64(d[28:36])
	m.PrivateData = d[36:232]
	m.Contents = d
	m.Payload = nil
	return nil
}

// SerializeTo prepends the 232-byte MAD data area of the REP.
func (m *CMREP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	binary.BigEndian.PutUint32(d[8:12], m.LocalQKey)
	cmPut24(d[12:15], m.LocalQPN)
	d[15] = byte(m.VendorID >> 16)
	cmPut24(d[16:19], m.LocalEEContext)
	d[19] = byte(m.VendorID >> 8)
	cmPut24(d[20:23], m.StartingPSN)
	d[23] = byte(m.VendorID)
	d[24] = m.ResponderResources
	d[25] = m.InitiatorDepth
	d[26] = (m.TargetACKDelay&0x1f)<<3 | uint8(m.FailoverAccepted&0x3)<<1 | cmBit(m.EndToEndFlowControl, 0)
	d[27] = (m.RNRRetryCount&0x7)<<5 | cmBit(m.SRQ, 4)
	binary.BigEndian.PutUint64(d[28:36], m.LocalCADGUID)
	return cmPutPrivateData("REP", d, 36, m.PrivateData)
}

func decodeCMREP(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMREP{}, data, p)
}

// CMRTU is the ReadyToUse message (IBA Vol 1 12.6.9, Linux's Table 111).
type CMRTU struct {
	layers.BaseLayer
	LocalCommID  uint32 // 0
	RemoteCommID uint32 // 4
	PrivateData  []byte // 8, 224 bytes
}

// LayerType returns LayerTypeCMRTU.
func (m *CMRTU) LayerType() gopacket.LayerType { return LayerTypeCMRTU }

// CanDecode returns LayerTypeCMRTU.
func (m *CMRTU) CanDecode() gopacket.LayerClass { return LayerTypeCMRTU }

// NextLayerType returns gopacket.LayerTypeZero.
func (m *CMRTU) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CommIDs returns the local and remote communication IDs.
func (m *CMRTU) CommIDs() (local, remote uint32) { return m.LocalCommID, m.RemoteCommID }

// DecodeFromBytes decodes an RTU from the 232-byte MAD data area.
func (m *CMRTU) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	d, err := cmData("RTU", data, df)
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

// SerializeTo prepends the 232-byte MAD data area of the RTU.
func (m *CMRTU) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d[0:4], m.LocalCommID)
	binary.BigEndian.PutUint32(d[4:8], m.RemoteCommID)
	return cmPutPrivateData("RTU", d, 8, m.PrivateData)
}

func decodeCMRTU(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&CMRTU{}, data, p)
}
