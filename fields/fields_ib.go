package fields

import (
	"net/netip"

	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// The InfiniBand transport, MAD and CM fields, named, typed and printed as
// Wireshark 4.0's packet-infiniband.c names them (tshark -G fields), so that
// `dissect -T fields` output compares with tshark's line by line.

// ib builds a single-valued field of parent that exists when has(p).
func ib(name, label string, t FieldType, b Base, parent string, has func(*dissect.Packet) bool, get func(*dissect.Packet) uint64) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: parent,
		Get: func(p *dissect.Packet, emit func(Value)) {
			if has(p) {
				emit(Value{U: get(p)})
			}
		}}
}

// ibText is ib with a meaning for -V.
func ibText(name, label string, t FieldType, b Base, parent string, has func(*dissect.Packet) bool, get func(*dissect.Packet) (uint64, string)) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: parent,
		Get: func(p *dissect.Packet, emit func(Value)) {
			if has(p) {
				v, s := get(p)
				emit(Value{U: v, Text: s})
			}
		}}
}

func bytesField(name, label, parent string, has func(*dissect.Packet) bool, get func(*dissect.Packet) []byte) *Field {
	return &Field{Name: name, Label: label, Type: FTBytes, Parent: parent,
		Get: func(p *dissect.Packet, emit func(Value)) {
			if has(p) {
				emit(Value{B: get(p)})
			}
		}}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// gidField emits a GID as tshark does for the CM path GIDs: an IPv4-mapped
// GID (RoCEv2 over IPv4) appears under the _ipv4 field as an IPv4 address,
// any other under the plain field as IPv6.
func gidField(name, label string, v4 bool, has func(*dissect.Packet) bool, get func(*dissect.Packet) [16]byte) *Field {
	t := FTIPv6
	if v4 {
		t = FTIPv4
	}
	return &Field{Name: name, Label: label, Type: t, Parent: "infiniband.cm",
		Get: func(p *dissect.Packet, emit func(Value)) {
			if !has(p) {
				return
			}
			a := netip.AddrFrom16(get(p))
			if a.Is4In6() != v4 {
				return
			}
			emit(Value{Addr: a.Unmap()})
		}}
}

func cmIs(t gopacket.LayerType) func(*dissect.Packet) bool {
	return func(p *dissect.Packet) bool { return p.CM.Attr == t }
}

func ibTable() *Table {
	F := new(Table)
	for _, g := range [][2]string{
		{"infiniband.lrh", "Local Route Header"}, {"infiniband.grh", "Global Route Header"},
		{"infiniband.bth", "Base Transport Header"}, {"infiniband.rdeth", "RD Extended Transport Header"},
		{"infiniband.deth", "Datagram Extended Transport Header"}, {"infiniband.xrceth", "XRC Extended Transport Header"},
		{"infiniband.reth", "RDMA Extended Transport Header"}, {"infiniband.atomiceth", "Atomic Extended Transport Header"},
		{"infiniband.aeth", "ACK Extended Transport Header"}, {"infiniband.atomicacketh", "Atomic ACK Extended Transport Header"},
		{"infiniband.immdt", "Immediate Data"}, {"infiniband.ieth", "Invalidate Extended Transport Header"},
		{"infiniband.crc", "CRCs"}, {"infiniband.mad", "MAD Header - Common Management Datagram"},
		{"infiniband.cm", "Communication Manager"},
	} {
		F.Group(g[0], g[1])
	}

	lrh := hasLayer(roce.LayerTypeLRH)
	grh := hasLayer(roce.LayerTypeGRH)
	bth := hasLayer(roce.LayerTypeBTH)
	ext := func(x roce.ExtHeaders) func(*dissect.Packet) bool {
		return func(p *dissect.Packet) bool { return p.Has(roce.LayerTypeBTH) && p.BTH.Ext.Has(x) }
	}
	const L, G, B = "infiniband.lrh", "infiniband.grh", "infiniband.bth"
	rethOrAtomic := func(p *dissect.Packet) bool {
		return p.Has(roce.LayerTypeBTH) && (p.BTH.Ext.Has(roce.ExtRETH) || p.BTH.Ext.Has(roce.ExtAtomicETH))
	}
	F.Register(
		ib("infiniband.lrh.vl", "Virtual Lane", FTUint8, BaseHex, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.VL) }),
		ib("infiniband.lrh.lver", "Link Version", FTUint8, BaseDec, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.LVer) }),
		ib("infiniband.lrh.sl", "Service Level", FTUint8, BaseDec, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.SL) }),
		ibText("infiniband.lrh.lnh", "Link Next Header", FTUint8, BaseHex, L, lrh, func(p *dissect.Packet) (uint64, string) { return uint64(p.LRH.LNH), p.LRH.LNH.String() }),
		ib("infiniband.lrh.dlid", "Destination Local ID", FTUint16, BaseDec, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.DLID) }),
		ib("infiniband.lrh.pktlen", "Packet Length", FTUint16, BaseDec, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.PktLen) }),
		ib("infiniband.lrh.slid", "Source Local ID", FTUint16, BaseDec, L, lrh, func(p *dissect.Packet) uint64 { return uint64(p.LRH.SLID) }),

		ib("infiniband.grh.ipver", "IP Version", FTUint8, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.IPVer) }),
		ib("infiniband.grh.tclass", "Traffic Class", FTUint16, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.TClass) }),
		ib("infiniband.grh.flowlabel", "Flow Label", FTUint32, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.FlowLabel) }),
		ib("infiniband.grh.paylen", "Payload Length", FTUint16, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.PayLen) }),
		ib("infiniband.grh.nxthdr", "Next Header", FTUint8, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.NxtHdr) }),
		ib("infiniband.grh.hoplmt", "Hop Limit", FTUint8, BaseDec, G, grh, func(p *dissect.Packet) uint64 { return uint64(p.GRH.HopLmt) }),
		&Field{Name: "infiniband.grh.sgid", Label: "Source GID", Type: FTIPv6, Parent: G, Get: func(p *dissect.Packet, emit func(Value)) {
			if grh(p) {
				emit(Value{Addr: netip.AddrFrom16(p.GRH.SGID)})
			}
		}},
		&Field{Name: "infiniband.grh.dgid", Label: "Destination GID", Type: FTIPv6, Parent: G, Get: func(p *dissect.Packet, emit func(Value)) {
			if grh(p) {
				emit(Value{Addr: netip.AddrFrom16(p.GRH.DGID)})
			}
		}},

		ibText("infiniband.bth.opcode", "Opcode", FTUint8, BaseDec, B, bth, func(p *dissect.Packet) (uint64, string) { return uint64(p.BTH.OpCode), p.BTH.OpCode.String() }),
		ib("infiniband.bth.se", "Solicited Event", FTBoolean, BaseNone, B, bth, func(p *dissect.Packet) uint64 { return b2u(p.BTH.SE) }),
		ib("infiniband.bth.m", "MigReq", FTBoolean, BaseNone, B, bth, func(p *dissect.Packet) uint64 { return b2u(p.BTH.M) }),
		ib("infiniband.bth.padcnt", "Pad Count", FTUint8, BaseDec, B, bth, func(p *dissect.Packet) uint64 { return uint64(p.BTH.PadCnt) }),
		ib("infiniband.bth.tver", "Header Version", FTUint8, BaseDec, B, bth, func(p *dissect.Packet) uint64 { return uint64(p.BTH.TVer) }),
		ib("infiniband.bth.p_key", "Partition Key", FTUint16, BaseDec, B, bth, func(p *dissect.Packet) uint64 { return uint64(p.BTH.PKey) }),
		ib("rdmashark.bth.fecn", "FECN", FTBoolean, BaseNone, B, bth, func(p *dissect.Packet) uint64 { return b2u(p.BTH.FECN) }),
		ib("rdmashark.bth.becn", "BECN", FTBoolean, BaseNone, B, bth, func(p *dissect.Packet) uint64 { return b2u(p.BTH.BECN) }),
		ib("infiniband.bth.destqp", "Destination Queue Pair", FTUint24, BaseHex, B, bth, func(p *dissect.Packet) uint64 { return uint64(p.BTH.DestQP) }),
		ib("infiniband.bth.a", "Acknowledge Request", FTBoolean, BaseNone, B, bth, func(p *dissect.Packet) uint64 { return b2u(p.BTH.AckReq) }),
		ib("infiniband.bth.psn", "Packet Sequence Number", FTUint24, BaseDec, B, bth, func(p *dissect.Packet) uint64 { return uint64(p.BTH.PSN) }),

		ib("infiniband.rdeth.eecnxt", "E2E Context", FTUint24, BaseDec, "infiniband.rdeth", ext(roce.ExtRDETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.RDETH.EECnxt) }),
		ib("infiniband.deth.q_key", "Queue Key", FTUint64, BaseHex, "infiniband.deth", ext(roce.ExtDETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.DETH.QKey) }),
		ib("infiniband.deth.srcqp", "Source Queue Pair", FTUint32, BaseHex, "infiniband.deth", ext(roce.ExtDETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.DETH.SrcQP) }),
		ib("rdmashark.xrceth.xrcsrq", "XRC Shared Receive Queue", FTUint24, BaseHex, "infiniband.xrceth", ext(roce.ExtXRCETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.XRCETH.XRCSRQ) }),
		// tshark reports the AtomicETH's VA and R_Key under the RETH's names
		// too (fields_compat.go).
		// The -V tree shows them under a RETH only where there is one: an
		// atomic's VA and R_Key are in its AtomicETH group
		// (rdmashark.atomiceth.*).
		inTree(ib("infiniband.reth.va", "Virtual Address", FTUint64, BaseHex, "infiniband.reth", rethOrAtomic, func(p *dissect.Packet) uint64 {
			if p.BTH.Ext.Has(roce.ExtRETH) {
				return p.BTH.RETH.VA
			}
			return p.BTH.AtomicETH.VA
		}), ext(roce.ExtRETH)),
		inTree(ib("infiniband.reth.r_key", "Remote Key", FTUint32, BaseHex, "infiniband.reth", rethOrAtomic, func(p *dissect.Packet) uint64 {
			if p.BTH.Ext.Has(roce.ExtRETH) {
				return uint64(p.BTH.RETH.RKey)
			}
			return uint64(p.BTH.AtomicETH.RKey)
		}), ext(roce.ExtRETH)),
		ib("infiniband.reth.dmalen", "DMA Length", FTUint32, BaseDecHex, "infiniband.reth", ext(roce.ExtRETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.RETH.DMALen) }),
		ib("rdmashark.atomiceth.va", "Virtual Address", FTUint64, BaseHex, "infiniband.atomiceth", ext(roce.ExtAtomicETH), func(p *dissect.Packet) uint64 { return p.BTH.AtomicETH.VA }),
		ib("rdmashark.atomiceth.r_key", "Remote Key", FTUint32, BaseHex, "infiniband.atomiceth", ext(roce.ExtAtomicETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.AtomicETH.RKey) }),
		ib("infiniband.atomiceth.swapdt", "Swap (or Add) Data", FTUint64, BaseDec, "infiniband.atomiceth", ext(roce.ExtAtomicETH), func(p *dissect.Packet) uint64 { return p.BTH.AtomicETH.SwapDt }),
		ib("infiniband.atomiceth.cmpdt", "Compare Data", FTUint64, BaseDec, "infiniband.atomiceth", ext(roce.ExtAtomicETH), func(p *dissect.Packet) uint64 { return p.BTH.AtomicETH.CmpDt }),
		ibText("infiniband.aeth.syndrome", "Syndrome", FTUint8, BaseDec, "infiniband.aeth", ext(roce.ExtAETH), func(p *dissect.Packet) (uint64, string) {
			return uint64(p.BTH.AETH.Syndrome), p.BTH.AETH.Syndrome.String()
		}),
		ib("infiniband.aeth.msn", "Message Sequence Number", FTUint24, BaseDec, "infiniband.aeth", ext(roce.ExtAETH), func(p *dissect.Packet) uint64 { return uint64(p.BTH.AETH.MSN) }),
		ib("infiniband.atomicacketh.origremdt", "Original Remote Data", FTUint64, BaseDec, "infiniband.atomicacketh", ext(roce.ExtAtomicAckETH), func(p *dissect.Packet) uint64 { return p.BTH.AtomicAckETH.OrigRemDt }),
		bytesField("infiniband.immdt", "Immediate Data", "infiniband.immdt", ext(roce.ExtImmDt), func(p *dissect.Packet) []byte { return be32(p.BTH.ImmDt.Data) }),
		bytesField("infiniband.ieth", "RKey", "infiniband.ieth", ext(roce.ExtIETH), func(p *dissect.Packet) []byte { return be32(p.BTH.IETH.RKey) }),

		ibText("infiniband.invariant.crc", "Invariant CRC", FTUint32, BaseHex, "infiniband.crc",
			func(p *dissect.Packet) bool { return bth(p) && p.BTH.HasICRC },
			func(p *dissect.Packet) (uint64, string) { return uint64(p.BTH.ICRC), p.ICRC.Status.String() }),
		ibText("infiniband.variant.crc", "Variant CRC", FTUint16, BaseHex, "infiniband.crc",
			func(p *dissect.Packet) bool { return lrh(p) && p.LRH.HasVCRC },
			func(p *dissect.Packet) (uint64, string) { return uint64(p.LRH.VCRC), p.VCRC.Status.String() }),
		&Field{Name: "rdmashark.icrc.status", Label: "ICRC verdict", Type: FTString, Parent: "infiniband.crc",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.ICRC.Status != dissect.CRCNotApplicable {
					emit(Value{S: p.ICRC.Status.String()})
				}
			}},
		&Field{Name: "rdmashark.icrc.computed", Label: "ICRC computed", Type: FTUint32, Base: BaseHex, Parent: "infiniband.crc",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if s := p.ICRC.Status; s == dissect.CRCGood || s == dissect.CRCBad {
					emit(Value{U: uint64(p.ICRC.Computed)})
				}
			}},
		&Field{Name: "rdmashark.vcrc.status", Label: "VCRC verdict", Type: FTString, Parent: "infiniband.crc",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.VCRC.Status != dissect.CRCNotApplicable {
					emit(Value{S: p.VCRC.Status.String()})
				}
			}},
	)

	mad := hasLayer(roce.LayerTypeMAD)
	const M = "infiniband.mad"
	F.Register(
		ib("infiniband.mad.baseversion", "Base Version", FTUint8, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.BaseVersion) }),
		ibText("infiniband.mad.mgmtclass", "Management Class", FTUint8, BaseHex, M, mad, func(p *dissect.Packet) (uint64, string) {
			return uint64(p.MAD.MgmtClass), p.MAD.MgmtClass.String()
		}),
		ib("infiniband.mad.classversion", "Class Version", FTUint8, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.ClassVersion) }),
		// The method field is the whole octet, R bit included, as tshark's.
		ibText("infiniband.mad.method", "Method", FTUint8, BaseHex, M, mad, func(p *dissect.Packet) (uint64, string) {
			return uint64(p.MAD.Method), p.MAD.Method.String()
		}),
		ib("infiniband.mad.status", "Status", FTUint16, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.Status) }),
		ib("infiniband.mad.classspecific", "Class Specific", FTUint16, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.ClassSpecific) }),
		ib("infiniband.mad.transactionid", "Transaction ID", FTUint64, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return p.MAD.TransactionID }),
		ib("infiniband.mad.attributeid", "Attribute ID", FTUint16, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.AttributeID) }),
		ib("infiniband.mad.attributemodifier", "Attribute Modifier", FTUint32, BaseHex, M, mad, func(p *dissect.Packet) uint64 { return uint64(p.MAD.AttributeModifier) }),
	)

	const C = "infiniband.cm"
	req, rep := cmIs(roce.LayerTypeCMREQ), cmIs(roce.LayerTypeCMREP)
	rtu, rej := cmIs(roce.LayerTypeCMRTU), cmIs(roce.LayerTypeCMREJ)
	dreq, drep := cmIs(roce.LayerTypeCMDREQ), cmIs(roce.LayerTypeCMDREP)
	R := func(p *dissect.Packet) *roce.CMREQ { return &p.CM.REQ }
	P := func(p *dissect.Packet) *roce.CMREP { return &p.CM.REP }
	h8, h16, h24, h32, h64 := FTUint8, FTUint16, FTUint24, FTUint32, FTUint64
	F.Register(
		ib("infiniband.cm.req", "Local Communication ID", h32, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).LocalCommID) }),
		ib("infiniband.cm.req.serviceid", "ServiceID", h64, BaseHex, C, req, func(p *dissect.Packet) uint64 { return R(p).ServiceID }),
		ib("infiniband.cm.req.localcaguid", "Local CA GUID", h64, BaseHex, C, req, func(p *dissect.Packet) uint64 { return R(p).LocalCADGUID }),
		ib("infiniband.cm.req.localqkey", "Local Q_Key", h32, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).LocalQKey) }),
		ib("infiniband.cm.req.localqpn", "Local QPN", h24, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).LocalQPN) }),
		ib("infiniband.cm.req.responderres", "Responder Resources", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).ResponderResources) }),
		ib("infiniband.cm.req.localeecn", "Local EECN", h24, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).LocalEECN) }),
		ib("infiniband.cm.req.initdepth", "Initiator Depth", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).InitiatorDepth) }),
		ib("infiniband.cm.req.remoteeecn", "Remote EECN", h24, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).RemoteEECN) }),
		ib("infiniband.cm.req.remoteresptout", "Remote CM Response Timeout", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).RemoteCMResponseTimeout) }),
		ibText("infiniband.cm.req.transpsvctype", "Transport Service Type", h8, BaseHex, C, req, func(p *dissect.Packet) (uint64, string) {
			return uint64(R(p).TransportServiceType), R(p).TransportServiceType.String()
		}),
		ib("infiniband.cm.req.e2eflowctrl", "End-to-End Flow Control", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return b2u(R(p).EndToEndFlowControl) }),
		ib("infiniband.cm.req.startpsn", "Starting PSN", h24, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).StartingPSN) }),
		ib("infiniband.cm.req.localresptout", "Local CM Response Timeout", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).LocalCMResponseTimeout) }),
		ib("infiniband.cm.req.retrcount", "Retry Count", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).RetryCount) }),
		ib("infiniband.cm.req.pkey", "Partition Key", h16, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PartitionKey) }),
		ibText("infiniband.cm.req.pppmtu", "Path Packet Payload MTU", h8, BaseHex, C, req, func(p *dissect.Packet) (uint64, string) {
			return uint64(R(p).PathPacketPayloadMTU), R(p).PathPacketPayloadMTU.String()
		}),
		ib("infiniband.cm.req.rdcexist", "RDC Exists", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return b2u(R(p).RDCExists) }),
		ib("infiniband.cm.req.rnrretrcount", "RNR Retry Count", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).RNRRetryCount) }),
		ib("infiniband.cm.req.maxcmretr", "Max CM Retries", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).MaxCMRetries) }),
		ib("infiniband.cm.req.srq", "SRQ", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return b2u(R(p).SRQ) }),
		ibText("infiniband.cm.req.ext_transport", "Extended Transport Type", h8, BaseHex, C, req, func(p *dissect.Packet) (uint64, string) {
			return uint64(R(p).ExtendedTransportType), R(p).ExtendedTransportType.String()
		}),
		ib("infiniband.cm.req.prim_locallid", "Primary Local Port LID", h16, BaseDec, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.LocalPortLID) }),
		ib("infiniband.cm.req.prim_remotelid", "Primary Remote Port LID", h16, BaseDec, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.RemotePortLID) }),
		gidField("infiniband.cm.req.prim_localgid", "Primary Local Port GID", false, req, func(p *dissect.Packet) [16]byte { return R(p).PrimaryPath.LocalPortGID }),
		gidField("infiniband.cm.req.prim_remotegid", "Primary Remote Port GID", false, req, func(p *dissect.Packet) [16]byte { return R(p).PrimaryPath.RemotePortGID }),
		gidField("infiniband.cm.req.prim_localgid_ipv4", "Primary Local Port GID (IPv4)", true, req, func(p *dissect.Packet) [16]byte { return R(p).PrimaryPath.LocalPortGID }),
		gidField("infiniband.cm.req.prim_remotegid_ipv4", "Primary Remote Port GID (IPv4)", true, req, func(p *dissect.Packet) [16]byte { return R(p).PrimaryPath.RemotePortGID }),
		ib("infiniband.cm.req.prim_flowlabel", "Primary Flow Label", h32, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.FlowLabel) }),
		ibText("infiniband.cm.req.prim_pktrate", "Primary Packet Rate", h32, BaseHex, C, req, func(p *dissect.Packet) (uint64, string) {
			return uint64(R(p).PrimaryPath.PacketRate), R(p).PrimaryPath.PacketRate.String()
		}),
		ib("infiniband.cm.req.prim_tfcclass", "Primary Traffic Class", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.TrafficClass) }),
		ib("infiniband.cm.req.prim_hoplim", "Primary Hop Limit", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.HopLimit) }),
		ib("infiniband.cm.req.prim_sl", "Primary SL", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.SL) }),
		ib("infiniband.cm.req.prim_subnetlocal", "Primary Subnet Local", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return b2u(R(p).PrimaryPath.SubnetLocal) }),
		ib("infiniband.cm.req.prim_localacktout", "Primary Local ACK Timeout", h8, BaseHex, C, req, func(p *dissect.Packet) uint64 { return uint64(R(p).PrimaryPath.LocalACKTimeout) }),
		bytesField("rdmashark.cm.req.private", "Private Data", C, req, func(p *dissect.Packet) []byte { return R(p).PrivateData }),

		ib("infiniband.cm.rep", "Local Communication ID", h32, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).LocalCommID) }),
		ib("infiniband.cm.rep.remotecommid", "Remote Communication ID", h32, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).RemoteCommID) }),
		ib("infiniband.cm.rep.localqkey", "Local Q_Key", h32, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).LocalQKey) }),
		ib("infiniband.cm.rep.localqpn", "Local QPN", h24, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).LocalQPN) }),
		ib("infiniband.cm.rep.localeecn", "Local EE Context Number", h24, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).LocalEEContext) }),
		ib("infiniband.cm.rep.startpsn", "Starting PSN", h24, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).StartingPSN) }),
		ib("infiniband.cm.rep.respres", "Responder Resources", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).ResponderResources) }),
		ib("infiniband.cm.rep.initdepth", "Initiator Depth", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).InitiatorDepth) }),
		ib("infiniband.cm.rep.tgtackdelay", "Target ACK Delay", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).TargetACKDelay) }),
		ib("infiniband.cm.rep.failoveracc", "Failover Accepted", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).FailoverAccepted) }),
		ib("infiniband.cm.rep.e2eflowctrl", "End-To-End Flow Control", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return b2u(P(p).EndToEndFlowControl) }),
		ib("infiniband.cm.rep.rnrretrcount", "RNR Retry Count", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return uint64(P(p).RNRRetryCount) }),
		ib("infiniband.cm.rep.srq", "SRQ", h8, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return b2u(P(p).SRQ) }),
		ib("infiniband.cm.rep.localcaguid", "Local CA GUID", h64, BaseHex, C, rep, func(p *dissect.Packet) uint64 { return P(p).LocalCADGUID }),
		bytesField("infiniband.cm.rep.private", "Private Data", C, rep, func(p *dissect.Packet) []byte { return P(p).PrivateData }),

		ib("infiniband.cm.rtu.localcommid", "Local Communication ID", h32, BaseHex, C, rtu, func(p *dissect.Packet) uint64 { return uint64(p.CM.RTU.LocalCommID) }),
		ib("infiniband.cm.rtu.remotecommid", "Remote Communication ID", h32, BaseHex, C, rtu, func(p *dissect.Packet) uint64 { return uint64(p.CM.RTU.RemoteCommID) }),

		ib("infiniband.cm.rej.localcommid", "Local Communication ID", h32, BaseHex, C, rej, func(p *dissect.Packet) uint64 { return uint64(p.CM.REJ.LocalCommID) }),
		ib("infiniband.cm.rej.remotecommid", "Remote Communication ID", h32, BaseHex, C, rej, func(p *dissect.Packet) uint64 { return uint64(p.CM.REJ.RemoteCommID) }),
		ibText("infiniband.cm.rej.msgrej", "Message REJected", h8, BaseHex, C, rej, func(p *dissect.Packet) (uint64, string) {
			return uint64(p.CM.REJ.MessageRejected), p.CM.REJ.MessageRejected.String()
		}),
		ib("infiniband.cm.rej.rejinfolen", "Reject Info Length", h8, BaseHex, C, rej, func(p *dissect.Packet) uint64 { return uint64(p.CM.REJ.RejectInfoLength) }),
		ibText("infiniband.cm.rej.reason", "Reason", h16, BaseHex, C, rej, func(p *dissect.Packet) (uint64, string) {
			return uint64(p.CM.REJ.Reason), p.CM.REJ.Reason.String()
		}),
		bytesField("infiniband.cm.rej.ari", "Additional Reject Information", C, rej, func(p *dissect.Packet) []byte { return p.CM.REJ.ARI }),

		ib("infiniband.cm.dreq.localcommid", "Local Communication ID", h32, BaseHex, C, dreq, func(p *dissect.Packet) uint64 { return uint64(p.CM.DREQ.LocalCommID) }),
		ib("infiniband.cm.dreq.remotecommid", "Remote Communication ID", h32, BaseHex, C, dreq, func(p *dissect.Packet) uint64 { return uint64(p.CM.DREQ.RemoteCommID) }),
		// tshark 4.0 files the DREQ's remote QPN under the REQ's name.
		ib("infiniband.cm.req.remoteqpneecn", "Remote QPN/EECN", h24, BaseHex, C, dreq, func(p *dissect.Packet) uint64 { return uint64(p.CM.DREQ.RemoteQPN) }),
		// and names the DREP "drsp".
		ib("infiniband.cm.drsp.localcommid", "Local Communication ID", h32, BaseHex, C, drep, func(p *dissect.Packet) uint64 { return uint64(p.CM.DREP.LocalCommID) }),
		ib("infiniband.cm.drsp.remotecommid", "Remote Communication ID", h32, BaseHex, C, drep, func(p *dissect.Packet) uint64 { return uint64(p.CM.DREP.RemoteCommID) }),
	)
	return F
}

// inTree sets f.InTree.
func inTree(f *Field, in func(*dissect.Packet) bool) *Field {
	f.InTree = in
	return f
}
