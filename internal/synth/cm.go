package synth

import (
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// GSI is the General Services Interface: CM MADs go to QP1 with the well
// known Q_Key 0x80010000 (IBA Vol 1 13.5.1, 10.2.4.1).
const (
	GSIQPN  = 1
	GSIQKey = 0x80010000
)

// cmAttribute maps a CM message layer to its MAD AttributeID (IBA Vol 1
// 12.6, 12.11; the CM attribute table).
func cmAttribute(t gopacket.LayerType) (roce.CMAttributeID, bool) {
	switch t {
	case roce.LayerTypeClassPortInfo:
		return roce.CMAttrClassPortInfo, true
	case roce.LayerTypeCMREQ:
		return roce.CMAttrConnectRequest, true
	case roce.LayerTypeCMMRA:
		return roce.CMAttrMsgRcptAck, true
	case roce.LayerTypeCMREJ:
		return roce.CMAttrConnectReject, true
	case roce.LayerTypeCMREP:
		return roce.CMAttrConnectReply, true
	case roce.LayerTypeCMRTU:
		return roce.CMAttrReadyToUse, true
	case roce.LayerTypeCMDREQ:
		return roce.CMAttrDisconnectRequest, true
	case roce.LayerTypeCMDREP:
		return roce.CMAttrDisconnectReply, true
	case roce.LayerTypeCMSIDRREQ:
		return roce.CMAttrServiceIDResReq, true
	case roce.LayerTypeCMSIDRREP:
		return roce.CMAttrServiceIDResReqResp, true
	case roce.LayerTypeCMLAP:
		return roce.CMAttrLoadAlternatePath, true
	case roce.LayerTypeCMAPR:
		return roce.CMAttrAlternatePathResponse, true
	}
	return 0, false
}

// CMMessage is a CM attribute layer of package roce (*roce.CMREQ, ...).
type CMMessage interface {
	gopacket.SerializableLayer
	LayerType() gopacket.LayerType
}

// CM returns the BTH and payload (the 256-byte MAD) of a CM message sent
// as RDMA-CM sends it: a UD SEND_ONLY to QP1 from QP1 with the GSI Q_Key,
// PSN psn, carrying a CM-class MAD (base version 1, class version 2, method
// Send; IBA Vol 1 13.4.3, 12.6) with transaction ID tid.
func CM(tid uint64, psn uint32, msg CMMessage) (roce.BTH, []byte, error) {
	attr, ok := cmAttribute(msg.LayerType())
	if !ok {
		return roce.BTH{}, nil, fmt.Errorf("synth: %v is not a CM attribute", msg.LayerType())
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true}
	mad := &roce.MAD{BaseVersion: 1, MgmtClass: roce.MgmtClassCM, ClassVersion: 2, Method: roce.MethodSend,
		TransactionID: tid, AttributeID: uint16(attr)}
	if err := gopacket.SerializeLayers(buf, opts, mad, msg); err != nil {
		return roce.BTH{}, nil, err
	}
	h := UDSend(GSIQPN, psn, GSIQKey, GSIQPN)
	h.AckReq = true // as rxe sends its CM MADs
	return h, append([]byte(nil), buf.Bytes()...), nil
}

// Conn holds what both sides of one RC connection's CM exchange say, so
// that its messages agree with each other (IBA Vol 1 12.6: communication
// IDs, QPNs and starting PSNs of the REQ and REP).
type Conn struct {
	Client, Server             Node
	ClientCommID, ServerCommID uint32
	ClientQPN, ServerQPN       uint32
	ClientPSN, ServerPSN       uint32
	ServiceID                  uint64
	// ClientPD is the REQ's private data (at most 92 octets), ServerPD the
	// REP's (at most 196).
	ClientPD, ServerPD []byte
	// Transport is the REQ's transport service type (RC by default);
	// XRC uses TransportServiceExtended with ExtendedTransportXRC.
	Transport roce.TransportServiceType
	// Native says the connection runs on native InfiniBand: its paths
	// carry the nodes' LIDs. On RoCE they carry the permissive LID 0xFFFF,
	// as Linux RDMA-CM over rxe sends them (testdata/pcaps/rxe-*).
	Native bool
}

// PermissiveLID is the LID RoCE CM paths carry (IBA Vol 1 7.11.1).
const PermissiveLID = 0xFFFF

func (c *Conn) path() roce.CMPath {
	p := roce.CMPath{LocalPortLID: PermissiveLID, RemotePortLID: PermissiveLID,
		LocalPortGID: c.Client.GID(), RemotePortGID: c.Server.GID(),
		FlowLabel: 0xDDCF, HopLimit: 64, LocalACKTimeout: 19}
	if c.Native {
		p.LocalPortLID, p.RemotePortLID, p.SubnetLocal = c.Client.LID, c.Server.LID, true
	}
	return p
}

// REQ is the client's ConnectRequest (IBA Vol 1 12.6.5), with the values
// Linux RDMA-CM over rxe sends for what Conn does not say.
func (c *Conn) REQ() *roce.CMREQ {
	r := &roce.CMREQ{LocalCommID: c.ClientCommID, ServiceID: c.ServiceID, LocalCADGUID: c.Client.GUID,
		LocalQPN: c.ClientQPN, ResponderResources: 128, RemoteCMResponseTimeout: 20,
		TransportServiceType: c.Transport, StartingPSN: c.ClientPSN, LocalCMResponseTimeout: 20,
		RetryCount: 6, PartitionKey: DefaultPKey, PathPacketPayloadMTU: roce.MTU1024, MaxCMRetries: 15,
		PrimaryPath: c.path(), PrivateData: c.ClientPD}
	if c.Transport == roce.TransportServiceExtended {
		r.ExtendedTransportType = roce.ExtendedTransportXRC
	}
	return r
}

// REP is the server's ConnectReply (IBA Vol 1 12.6.8).
func (c *Conn) REP() *roce.CMREP {
	return &roce.CMREP{LocalCommID: c.ServerCommID, RemoteCommID: c.ClientCommID, LocalQPN: c.ServerQPN,
		StartingPSN: c.ServerPSN, InitiatorDepth: 128, TargetACKDelay: 15, LocalCADGUID: c.Server.GUID,
		PrivateData: c.ServerPD}
}

// RTU is the client's ReadyToUse (IBA Vol 1 12.6.9).
func (c *Conn) RTU() *roce.CMRTU {
	return &roce.CMRTU{LocalCommID: c.ClientCommID, RemoteCommID: c.ServerCommID}
}

// MRA acknowledges a REQ (sent by the server) or a REP (sent by the
// client) that will take long to answer (IBA Vol 1 12.6.6).
func (c *Conn) MRA(what roce.MRAMessage, timeout uint8) *roce.CMMRA {
	m := &roce.CMMRA{MessageMRAed: what, ServiceTimeout: timeout}
	if what == roce.MRAMessageREP {
		m.LocalCommID, m.RemoteCommID = c.ClientCommID, c.ServerCommID
	} else {
		m.LocalCommID, m.RemoteCommID = c.ServerCommID, c.ClientCommID
	}
	return m
}

// REJ is the server's ConnectReject of the REQ with reason (IBA Vol 1
// 12.6.7), carrying ari as Additional Rejection Information.
func (c *Conn) REJ(reason roce.RejReason, ari, pd []byte) *roce.CMREJ {
	return &roce.CMREJ{LocalCommID: c.ServerCommID, RemoteCommID: c.ClientCommID,
		MessageRejected: roce.RejMessageREQ, Reason: reason, ARI: ari, PrivateData: pd}
}

// DREQ is a DisconnectRequest (IBA Vol 1 12.6.10) from the client, or from
// the server when fromServer.
func (c *Conn) DREQ(fromServer bool) *roce.CMDREQ {
	if fromServer {
		return &roce.CMDREQ{LocalCommID: c.ServerCommID, RemoteCommID: c.ClientCommID, RemoteQPN: c.ClientQPN}
	}
	return &roce.CMDREQ{LocalCommID: c.ClientCommID, RemoteCommID: c.ServerCommID, RemoteQPN: c.ServerQPN}
}

// DREP is the DisconnectReply (IBA Vol 1 12.6.11) to a DREQ from the other
// side: sent by the server unless fromClient.
func (c *Conn) DREP(fromClient bool) *roce.CMDREP {
	if fromClient {
		return &roce.CMDREP{LocalCommID: c.ClientCommID, RemoteCommID: c.ServerCommID}
	}
	return &roce.CMDREP{LocalCommID: c.ServerCommID, RemoteCommID: c.ClientCommID}
}

// LAP is the client's LoadAlternatePath (IBA Vol 1 12.6.12).
func (c *Conn) LAP() *roce.CMLAP {
	return &roce.CMLAP{LocalCommID: c.ClientCommID, RemoteCommID: c.ServerCommID, RemoteQPN: c.ServerQPN,
		RemoteCMResponseTimeout: 20, AlternatePath: c.path()}
}

// APR is the server's AlternatePathResponse to a LAP (IBA Vol 1 12.6.13).
func (c *Conn) APR(status roce.APStatus) *roce.CMAPR {
	return &roce.CMAPR{LocalCommID: c.ServerCommID, RemoteCommID: c.ClientCommID, APStatus: status}
}

// SIDRREQ is a ServiceIDResReq (IBA Vol 1 12.11.1).
func SIDRREQ(requestID uint32, serviceID uint64, pd []byte) *roce.CMSIDRREQ {
	return &roce.CMSIDRREQ{RequestID: requestID, PartitionKey: DefaultPKey, ServiceID: serviceID, PrivateData: pd}
}

// SIDRREP is a ServiceIDResReqResp (IBA Vol 1 12.11.2) resolving serviceID
// to the UD QP qpn with Q_Key qkey.
func SIDRREP(requestID uint32, status roce.SIDRStatus, serviceID uint64, qpn, qkey uint32) *roce.CMSIDRREP {
	return &roce.CMSIDRREP{RequestID: requestID, Status: status, QPN: qpn, ServiceID: serviceID, QKey: qkey}
}

// PrivateData lays out n octets of CM private data: the RDMA-CM IP header
// at octet 0 when cma is not nil (the REQ of an RDMA IP CM service ID,
// IBA Annex A11), then msg at octet off, zeros elsewhere. It fails when
// the pieces overlap or do not fit.
func PrivateData(n int, cma *pvtdata.CMAHeader, off int, msg []byte) ([]byte, error) {
	pd := make([]byte, n)
	start := 0
	if cma != nil {
		h, err := cma.AppendBinary(nil)
		if err != nil {
			return nil, err
		}
		if len(h) > n {
			return nil, fmt.Errorf("synth: %d octets of private data cannot hold the %d-octet CMA header", n, len(h))
		}
		copy(pd, h)
		start = len(h)
	}
	if len(msg) > 0 && (off < start || off+len(msg) > n) {
		return nil, fmt.Errorf("synth: a %d-octet message at offset %d does not fit octets %d..%d", len(msg), off, start, n)
	}
	copy(pd[off:], msg)
	return pd, nil
}

// RPCRDMAMessage returns the 8 octets of an RFC 8797 CM private data
// message (Format Identifier 0xf6ab0e18, version, flags, sizes): version
// v, reserved flag bits resv (7 bits), R bit r, and the sizes in octets
// (multiples of 1024 from 1024 to 262144, RFC 8797 section 4.2).
func RPCRDMAMessage(v uint8, resv uint8, r bool, sendBytes, recvBytes int) ([]byte, error) {
	s, ok := rfc8797.EncodeSize(sendBytes)
	if !ok {
		return nil, fmt.Errorf("synth: send size %d cannot be encoded", sendBytes)
	}
	rs, ok := rfc8797.EncodeSize(recvBytes)
	if !ok {
		return nil, fmt.Errorf("synth: receive size %d cannot be encoded", recvBytes)
	}
	m := rfc8797.Message{Version: rfc8797.Version(v), Reserved: resv, RemoteInvalidate: r, SendSize: s, ReceiveSize: rs}
	return m.MarshalBinary()
}
