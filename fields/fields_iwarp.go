package fields

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// The iWARP fields: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and RDMAP
// (RFC 5040, RFC 7306), named, typed and printed as Wireshark 4.0's
// packet-iwarp-mpa.c and packet-iwarp-ddp-rdmap.c name them (tshark -G
// fields), so that `dissect -T fields` compares with tshark. The RFC 6581
// enhanced-connection fields tshark 4.0 lacks use the names Wireshark 4.6
// gave them (iwarp_mpa.enhanced_flag, iwarp_mpa.enhanced.*). A packet
// carries each FPDU field once per FPDU it completed, in stream order.

// reqRepField is a field of the MPA Request/Reply a packet completed.
func reqRepField(name, label string, t FieldType, b Base, get func(m *iwarp.MPAReqRep) (Value, bool)) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: "iwarp_mpa",
		Get: func(p *dissect.Packet, emit func(Value)) {
			if p.IWARP.HasReqRep {
				if v, ok := get(&p.IWARP.ReqRep); ok {
					emit(v)
				}
			}
		}}
}

// fpduField is a field of every FPDU a packet completed.
func fpduField(name, label string, t FieldType, b Base, parent string, get func(f *dissect.IWARPFPDU) (Value, bool)) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: parent, Per: "fpdu",
		At: func(p *dissect.Packet, i int, emit func(Value)) {
			if v, ok := get(&p.IWARP.FPDUs[i]); ok {
				emit(v)
			}
		}}
}

// ddpOK tells whether the FPDU's DDP header decoded, rdmapOK its RDMAP
// header too.
func ddpOK(f *dissect.IWARPFPDU) bool   { return f.DDP.DV != 0 }
func rdmapOK(f *dissect.IWARPFPDU) bool { return f.Err == nil }

// ddpField is a DDP header field (present when the header decoded).
func ddpField(name, label string, t FieldType, b Base, when func(f *dissect.IWARPFPDU) bool, get func(d *iwarp.DDP) uint64) *Field {
	return fpduField(name, label, t, b, "iwarp_ddp", func(f *dissect.IWARPFPDU) (Value, bool) {
		if !ddpOK(f) || (when != nil && !when(f)) {
			return Value{}, false
		}
		return u(get(&f.DDP)), true
	})
}

// rdmaField is an RDMAP field present when when(f) (after a good decode).
func rdmaField(name, label string, t FieldType, b Base, when func(f *dissect.IWARPFPDU) bool, get func(f *dissect.IWARPFPDU) Value) *Field {
	return fpduField(name, label, t, b, "iwarp_rdma", func(f *dissect.IWARPFPDU) (Value, bool) {
		if !rdmapOK(f) || (when != nil && !when(f)) {
			return Value{}, false
		}
		return get(f), true
	})
}

func opIs(ops ...iwarp.Opcode) func(f *dissect.IWARPFPDU) bool {
	return func(f *dissect.IWARPFPDU) bool {
		for _, o := range ops {
			if f.RDMAP.Opcode == o {
				return true
			}
		}
		return false
	}
}

func termLayerIs(l iwarp.TermLayer, etypes ...uint8) func(f *dissect.IWARPFPDU) bool {
	return func(f *dissect.IWARPFPDU) bool {
		t := &f.RDMAP.Terminate
		if f.RDMAP.Opcode != iwarp.OpTerminate || t.Layer != l {
			return false
		}
		if len(etypes) == 0 {
			return true
		}
		for _, e := range etypes {
			if t.EType == e {
				return true
			}
		}
		return false
	}
}

func tagged(f *dissect.IWARPFPDU) bool   { return f.DDP.T }
func untagged(f *dissect.IWARPFPDU) bool { return !f.DDP.T }

func iwarpTable() *Table {
	F := new(Table)
	F.Group("iwarp_mpa", "iWARP Marker Protocol data unit Aligned framing")
	F.Group("iwarp_ddp", "iWARP Direct Data Placement")
	F.Group("iwarp_rdma", "iWARP Remote Direct Memory Access Protocol")
	// A segment can complete several FPDUs: their fields repeat per FPDU.
	F.Instances("fpdu", func(p *dissect.Packet) int { return len(p.IWARP.FPDUs) })
	req := func(m *iwarp.MPAReqRep) bool { return m.IsRequest() }
	flag := func(name, label string, get func(m *iwarp.MPAReqRep) bool) *Field {
		return reqRepField(name, label, FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(get(m)), true
		})
	}
	enhanced := func(name, label string, t FieldType, get func(e *iwarp.EnhancedData) uint64) *Field {
		return reqRepField(name, label, t, BaseDec, func(m *iwarp.MPAReqRep) (Value, bool) {
			if !m.HasEnhancedData {
				return Value{}, false
			}
			return u(get(&m.EnhancedData)), true
		})
	}
	F.Register(
		reqRepField("iwarp_mpa.key.req", "ID Req frame", FTBytes, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return Value{B: m.Key[:], Text: "MPA Request"}, req(m)
		}),
		reqRepField("iwarp_mpa.key.rep", "ID Rep frame", FTBytes, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return Value{B: m.Key[:], Text: "MPA Reply"}, !req(m)
		}),
		flag("iwarp_mpa.marker_flag", "Marker flag", func(m *iwarp.MPAReqRep) bool { return m.M }),
		flag("iwarp_mpa.crc_flag", "CRC flag", func(m *iwarp.MPAReqRep) bool { return m.C }),
		flag("iwarp_mpa.rej_flag", "Connection rejected flag", func(m *iwarp.MPAReqRep) bool { return m.R }),
		flag("iwarp_mpa.enhanced_flag", "Enhanced RDMA Connection", func(m *iwarp.MPAReqRep) bool { return m.Enhanced }),
		// Res: the four reserved bits after the Enhanced flag, as
		// Wireshark 4.6 shows them; tshark 4.0 counts the flag in
		// (testdata/KNOWN-DIFFERENCES.md KD-MPA-RES-ENHANCED).
		reqRepField("iwarp_mpa.res", "Reserved", FTUint8, BaseHex, func(m *iwarp.MPAReqRep) (Value, bool) {
			return u(uint64(m.Res)), true
		}),
		reqRepField("iwarp_mpa.rev", "Revision", FTUint8, BaseDec, func(m *iwarp.MPAReqRep) (Value, bool) {
			v := Value{U: uint64(m.Rev)}
			switch m.Rev {
			case iwarp.MPARevision1:
				v.Text = "RFC 5044"
			case iwarp.MPARevision2:
				v.Text = "RFC 6581 enhanced connection establishment"
			}
			return v, true
		}),
		reqRepField("iwarp_mpa.pdlength", "Private data length", FTUint16, BaseDec, func(m *iwarp.MPAReqRep) (Value, bool) {
			return u(uint64(m.PDLength)), true
		}),
		enhanced("iwarp_mpa.enhanced.ird", "Inbound RDMA Read Queue Depth", FTUint16, func(e *iwarp.EnhancedData) uint64 { return uint64(e.IRD) }),
		enhanced("iwarp_mpa.enhanced.ord", "Outbound RDMA Read Queue Depth", FTUint16, func(e *iwarp.EnhancedData) uint64 { return uint64(e.ORD) }),
		reqRepField("iwarp_mpa.enhanced.a", "Control Flag A (peer-to-peer)", FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(m.EnhancedData.A), m.HasEnhancedData
		}),
		reqRepField("iwarp_mpa.enhanced.b", "Control Flag B (zero-length Send RTR)", FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(m.EnhancedData.B), m.HasEnhancedData
		}),
		reqRepField("iwarp_mpa.enhanced.c", "Control Flag C (zero-length RDMA Write RTR)", FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(m.EnhancedData.C), m.HasEnhancedData
		}),
		reqRepField("iwarp_mpa.enhanced.D", "Control Flag D (zero-length RDMA Read RTR)", FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(m.EnhancedData.D), m.HasEnhancedData
		}),
		// The legacy IRD/ORD header of [MS-SMBD] 6.1, Wireshark 4.6's
		// names (iwarp_mpa.legacy.*; broken_le_legacy when little-endian).
		reqRepField("iwarp_mpa.legacy.ird", "Legacy Inbound RDMA Read Queue Depth", FTUint32, BaseDec, func(m *iwarp.MPAReqRep) (Value, bool) {
			return u(uint64(m.LegacyIRDORD.IRD)), m.HasLegacyIRDORD
		}),
		reqRepField("iwarp_mpa.legacy.ord", "Legacy Outbound RDMA Read Queue Depth", FTUint32, BaseDec, func(m *iwarp.MPAReqRep) (Value, bool) {
			return u(uint64(m.LegacyIRDORD.ORD)), m.HasLegacyIRDORD
		}),
		reqRepField("iwarp_mpa.broken_le_legacy", "Broken Little-Endian Legacy IRD/ORD Negotiation", FTBoolean, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return boolValue(true), m.HasLegacyIRDORD && m.LegacyIRDORD.LittleEndian
		}),
		reqRepField("iwarp_mpa.privatedata", "Private data", FTBytes, BaseNone, func(m *iwarp.MPAReqRep) (Value, bool) {
			return Value{B: m.PrivateData}, len(m.PrivateData) > 0
		}),

		fpduField("iwarp_mpa.ulpdulength", "ULPDU length", FTUint16, BaseDec, "iwarp_mpa", func(f *dissect.IWARPFPDU) (Value, bool) {
			return u(uint64(f.ULPDULength)), true
		}),
		fpduField("iwarp_mpa.pad", "Padding", FTBytes, BaseNone, "iwarp_mpa", func(f *dissect.IWARPFPDU) (Value, bool) {
			return Value{B: f.Pad}, len(f.Pad) > 0
		}),
		// As tshark 4.0 does: the CRC field is iwarp_mpa.crc when CRC32c
		// was not negotiated (its value means nothing, RFC 5044 section
		// 4), and iwarp_mpa.crc_check, verified, when it was.
		fpduField("iwarp_mpa.crc", "CRC", FTUint32, BaseHex, "iwarp_mpa", func(f *dissect.IWARPFPDU) (Value, bool) {
			return Value{U: uint64(f.CRC), Text: "CRC32c not negotiated: not checked"}, !f.CRCChecked
		}),
		fpduField("iwarp_mpa.crc_check", "CRC check", FTUint32, BaseHex, "iwarp_mpa", func(f *dissect.IWARPFPDU) (Value, bool) {
			v := Value{U: uint64(f.CRC), Text: "good"}
			if f.CRCBad() {
				v.Text = fmt.Sprintf("bad CRC32c, should be 0x%08x", f.CRCComputed)
			}
			return v, f.CRCChecked
		}),
		&Field{Name: "iwarp_mpa.marker_res", Label: "Marker Reserved", Type: FTUint16, Base: BaseHex, Parent: "iwarp_mpa",
			Per: "fpdu", At: func(p *dissect.Packet, i int, emit func(Value)) {
				for _, m := range p.IWARP.FPDUs[i].Markers {
					emit(u(uint64(m.Reserved)))
				}
			}},
		&Field{Name: "iwarp_mpa.marker_fpduptr", Label: "FPDU back pointer", Type: FTUint16, Base: BaseDec, Parent: "iwarp_mpa",
			Per: "fpdu", At: func(p *dissect.Packet, i int, emit func(Value)) {
				for _, m := range p.IWARP.FPDUs[i].Markers {
					emit(u(uint64(m.FPDUPTR)))
				}
			}},

		ddpField("iwarp_ddp.tagged_flag", "Tagged flag", FTBoolean, BaseNone, nil, func(d *iwarp.DDP) uint64 { return b2u(d.T) }),
		ddpField("iwarp_ddp.last_flag", "Last flag", FTBoolean, BaseNone, nil, func(d *iwarp.DDP) uint64 { return b2u(d.L) }),
		ddpField("iwarp_ddp.rsvd", "Reserved", FTUint8, BaseHex, nil, func(d *iwarp.DDP) uint64 { return uint64(d.Rsvd) }),
		ddpField("iwarp_ddp.dv", "DDP protocol version", FTUint8, BaseDec, nil, func(d *iwarp.DDP) uint64 { return uint64(d.DV) }),
		fpduField("iwarp_ddp.rsvdulp", "Reserved for use by the ULP", FTBytes, BaseNone, "iwarp_ddp", func(f *dissect.IWARPFPDU) (Value, bool) {
			return Value{B: f.DDP.RsvdULP[:]}, ddpOK(f) && !f.DDP.T
		}),
		ddpField("iwarp_ddp.stag", "(Data Sink) Steering Tag", FTUint32, BaseHex, tagged, func(d *iwarp.DDP) uint64 { return uint64(d.STag) }),
		ddpField("iwarp_ddp.tagged_offset", "(Data Sink) Tagged offset", FTUint64, BaseHex, tagged, func(d *iwarp.DDP) uint64 { return d.TO }),
		ddpField("iwarp_ddp.qn", "Queue number", FTUint32, BaseDec, untagged, func(d *iwarp.DDP) uint64 { return uint64(d.QN) }),
		ddpField("iwarp_ddp.msn", "Message sequence number", FTUint32, BaseDec, untagged, func(d *iwarp.DDP) uint64 { return uint64(d.MSN) }),
		ddpField("iwarp_ddp.mo", "Message offset", FTUint32, BaseDec, untagged, func(d *iwarp.DDP) uint64 { return uint64(d.MO) }),

		rdmaField("iwarp_rdma.version", "Version", FTUint8, BaseDec, nil, func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.RV)) }),
		rdmaField("iwarp_rdma.rsv", "Reserved", FTUint8, BaseHex, nil, func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.Rsv)) }),
		rdmaField("iwarp_rdma.opcode", "OpCode", FTUint8, BaseHex, nil, func(f *dissect.IWARPFPDU) Value {
			return Value{U: uint64(f.RDMAP.Opcode), Text: f.RDMAP.Opcode.String()}
		}),
		rdmaField("iwarp_rdma.reserved", "Reserved", FTBytes, BaseNone,
			func(f *dissect.IWARPFPDU) bool { return !f.DDP.T && !f.RDMAP.Opcode.HasInvalidateSTag() },
			func(f *dissect.IWARPFPDU) Value { return Value{B: f.DDP.RsvdULP[1:5]} }),
		rdmaField("iwarp_rdma.inval_stag", "Invalidate STag", FTUint32, BaseDec,
			func(f *dissect.IWARPFPDU) bool { return f.RDMAP.Opcode.HasInvalidateSTag() },
			func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.InvalidateSTag)) }),

		rdmaField("iwarp_rdma.sinkstag", "Data Sink STag", FTUint32, BaseHex, opIs(iwarp.OpRDMAReadRequest),
			func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.ReadRequest.SinkSTag)) }),
		rdmaField("iwarp_rdma.sinkto", "Data Sink Tagged Offset", FTUint64, BaseHex, opIs(iwarp.OpRDMAReadRequest),
			func(f *dissect.IWARPFPDU) Value { return u(f.RDMAP.ReadRequest.SinkTaggedOffset) }),
		rdmaField("iwarp_rdma.rdmardsz", "RDMA Read Message Size", FTUint32, BaseDec, opIs(iwarp.OpRDMAReadRequest),
			func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.ReadRequest.RDMAReadMessageSize)) }),
		rdmaField("iwarp_rdma.srcstag", "Data Source STag", FTUint32, BaseHex, opIs(iwarp.OpRDMAReadRequest),
			func(f *dissect.IWARPFPDU) Value { return u(uint64(f.RDMAP.ReadRequest.SourceSTag)) }),
		rdmaField("iwarp_rdma.srcto", "Data Source Tagged Offset", FTUint64, BaseHex, opIs(iwarp.OpRDMAReadRequest),
			func(f *dissect.IWARPFPDU) Value { return u(f.RDMAP.ReadRequest.SourceTaggedOffset) }),
	)
	term := opIs(iwarp.OpTerminate)
	termU8 := func(name, label string, when func(f *dissect.IWARPFPDU) bool, get func(t *iwarp.Terminate) (uint8, string)) *Field {
		return rdmaField(name, label, FTUint8, BaseHex, when, func(f *dissect.IWARPFPDU) Value {
			v, s := get(&f.RDMAP.Terminate)
			return Value{U: uint64(v), Text: s}
		})
	}
	etype := func(t *iwarp.Terminate) (uint8, string) { return t.EType, t.ETypeString() }
	errcode := func(t *iwarp.Terminate) (uint8, string) { return t.ErrorCode, t.ErrorCodeString() }
	termBool := func(name, label string, get func(t *iwarp.Terminate) bool) *Field {
		return rdmaField(name, label, FTBoolean, BaseNone, term, func(f *dissect.IWARPFPDU) Value { return boolValue(get(&f.RDMAP.Terminate)) })
	}
	termBytes := func(name, label string, get func(t *iwarp.Terminate) ([]byte, bool)) *Field {
		return fpduField(name, label, FTBytes, BaseNone, "iwarp_rdma", func(f *dissect.IWARPFPDU) (Value, bool) {
			if !rdmapOK(f) || !term(f) {
				return Value{}, false
			}
			b, ok := get(&f.RDMAP.Terminate)
			return Value{B: b}, ok
		})
	}
	F.Register(
		termU8("iwarp_rdma.term_layer", "Layer", term, func(t *iwarp.Terminate) (uint8, string) { return uint8(t.Layer), t.Layer.String() }),
		termU8("iwarp_rdma.term_etype_rdma", "Error Types for RDMA layer", termLayerIs(iwarp.TermLayerRDMAP), etype),
		termU8("iwarp_rdma.term_etype_ddp", "Error Types for DDP layer", termLayerIs(iwarp.TermLayerDDP), etype),
		termU8("iwarp_rdma.term_etype_llp", "Error Types for LLP layer", termLayerIs(iwarp.TermLayerLLP), etype),
		termU8("iwarp_rdma.term_errcode_rdma", "Error Code for RDMA layer", termLayerIs(iwarp.TermLayerRDMAP), errcode),
		termU8("iwarp_rdma.term_errcode_ddp_tagged", "Error Code for DDP Tagged Buffer",
			termLayerIs(iwarp.TermLayerDDP, uint8(iwarp.DDPTaggedBuffer)), errcode),
		termU8("iwarp_rdma.term_errcode_ddp_untagged", "Error Code for DDP Untagged Buffer",
			termLayerIs(iwarp.TermLayerDDP, uint8(iwarp.DDPUntaggedBuffer)), errcode),
		termU8("iwarp_rdma.term_errcode", "Error Code",
			termLayerIs(iwarp.TermLayerDDP, uint8(iwarp.DDPLocalCatastrophic), uint8(iwarp.DDPReservedForLLP)), errcode),
		termU8("iwarp_rdma.term_errcode_llp", "Error Code for LLP layer", termLayerIs(iwarp.TermLayerLLP), errcode),
		termBool("iwarp_rdma.term_hdrct_m", "M bit", func(t *iwarp.Terminate) bool { return t.M }),
		termBool("iwarp_rdma.hdrct_d", "D bit", func(t *iwarp.Terminate) bool { return t.D }),
		termBool("iwarp_rdma.hdrct_r", "R bit", func(t *iwarp.Terminate) bool { return t.R }),
		rdmaField("iwarp_rdma.term_rsvd", "Reserved", FTUint16, BaseHex, term, func(f *dissect.IWARPFPDU) Value {
			return u(uint64(f.RDMAP.Terminate.Reserved))
		}),
		termBytes("iwarp_rdma.term_ddp_seg_len", "DDP Segment Length", func(t *iwarp.Terminate) ([]byte, bool) {
			return []byte{byte(t.DDPSegmentLength >> 8), byte(t.DDPSegmentLength)}, t.D
		}),
		termBytes("iwarp_rdma.term_ddp_h", "Terminated DDP Header", func(t *iwarp.Terminate) ([]byte, bool) {
			return t.TerminatedDDPHeader, len(t.TerminatedDDPHeader) > 0
		}),
		termBytes("iwarp_rdma.term_rdma_h", "Terminated RDMA Header", func(t *iwarp.Terminate) ([]byte, bool) {
			return t.TerminatedRDMAHeader, len(t.TerminatedRDMAHeader) > 0
		}),
	)
	atomicReq := opIs(iwarp.OpAtomicRequest)
	atomicRsp := opIs(iwarp.OpAtomicResponse)
	atomic := func(name, label string, t FieldType, b Base, when func(*dissect.IWARPFPDU) bool, get func(r *iwarp.RDMAP) uint64) *Field {
		return rdmaField(name, label, t, b, when, func(f *dissect.IWARPFPDU) Value { return u(get(&f.RDMAP)) })
	}
	F.Register(
		atomic("iwarp_rdma.atomic.reserved", "Reserved", FTUint32, BaseDec, atomicReq, func(r *iwarp.RDMAP) uint64 { return uint64(r.AtomicRequest.Reserved) }),
		rdmaField("iwarp_rdma.atomic.opcode", "OpCode", FTUint32, BaseDec, atomicReq, func(f *dissect.IWARPFPDU) Value {
			a := f.RDMAP.AtomicRequest.AtomicOpcode
			return Value{U: uint64(a), Text: a.String()}
		}),
		atomic("iwarp_rdma.atomic.request_identifier", "Request Identifier", FTUint32, BaseDec, atomicReq, func(r *iwarp.RDMAP) uint64 { return uint64(r.AtomicRequest.RequestIdentifier) }),
		atomic("iwarp_rdma.atomic.remote_stag", "Remote STag", FTUint32, BaseDec, atomicReq, func(r *iwarp.RDMAP) uint64 { return uint64(r.AtomicRequest.RemoteSTag) }),
		atomic("iwarp_rdma.atomic.remote_tagged_offset", "Remote Tagged Offset", FTUint64, BaseDec, atomicReq, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.RemoteTaggedOffset }),
		atomic("iwarp_rdma.atomic.add_data", "Add Data", FTUint64, BaseDec, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode == iwarp.AtomicFetchAdd
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.AddOrSwapData }),
		atomic("iwarp_rdma.atomic.add_mask", "Add Mask", FTUint64, BaseHex, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode == iwarp.AtomicFetchAdd
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.AddOrSwapMask }),
		atomic("iwarp_rdma.atomic.swap_data", "Swap Data", FTUint64, BaseDec, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode != iwarp.AtomicFetchAdd
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.AddOrSwapData }),
		atomic("iwarp_rdma.atomic.swap_mask", "Swap Mask", FTUint64, BaseHex, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode != iwarp.AtomicFetchAdd
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.AddOrSwapMask }),
		atomic("iwarp_rdma.atomic.compare_data", "Compare Data", FTUint64, BaseDec, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode == iwarp.AtomicCompareSwap
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.CompareData }),
		atomic("iwarp_rdma.atomic.compare_mask", "Compare Mask", FTUint64, BaseHex, func(f *dissect.IWARPFPDU) bool {
			return atomicReq(f) && f.RDMAP.AtomicRequest.AtomicOpcode == iwarp.AtomicCompareSwap
		}, func(r *iwarp.RDMAP) uint64 { return r.AtomicRequest.CompareMask }),
		atomic("iwarp_rdma.atomic.original_request_identifier", "Original Request Identifier", FTUint32, BaseDec, atomicRsp, func(r *iwarp.RDMAP) uint64 { return uint64(r.AtomicResponse.OriginalRequestIdentifier) }),
		atomic("iwarp_rdma.atomic.original_remote_data_value", "Original Remote Data Value", FTUint64, BaseDec, atomicRsp, func(r *iwarp.RDMAP) uint64 { return r.AtomicResponse.OriginalRemoteDataValue }),
	)
	F.Register(
		&Field{Name: "rdmashark.iwarp.fpdus", Label: "FPDUs completed by this segment", Type: FTUint32, Base: BaseDec, Parent: "rdmashark",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if n := len(p.IWARP.FPDUs); n > 0 {
					emit(u(uint64(n)))
				}
			}},
		fpduField("rdmashark.iwarp.seq", "FPDU TCP sequence number", FTUint32, BaseDec, "rdmashark", func(f *dissect.IWARPFPDU) (Value, bool) {
			return u(uint64(f.Seq)), true
		}),
		fpduField("rdmashark.iwarp.data_len", "DDP payload length", FTUint32, BaseDec, "rdmashark", func(f *dissect.IWARPFPDU) (Value, bool) {
			return u(uint64(f.DataLen)), ddpOK(f)
		}),
	)
	return F
}
