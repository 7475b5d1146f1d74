package synth

import (
	"github.com/rdmashark/rdmashark/layers/roce"
)

// DefaultPKey is the default partition key (IBA Vol 1 10.9.1.2: 0xFFFF,
// full membership of the default partition), which rxe uses.
const DefaultPKey = 0xFFFF

// BTH returns a Base Transport Header with op, destination QP and PSN, the
// default P_Key and nothing else set; set the extended headers' value
// fields of the result for the opcodes that carry them.
func BTH(op roce.OpCode, destQP, psn uint32) roce.BTH {
	return roce.BTH{OpCode: op, PKey: DefaultPKey, DestQP: destQP & 0xFFFFFF, PSN: psn & 0xFFFFFF}
}

// Send returns an RC (or UC, XRC: any transport's) SEND opcode's BTH with
// the AckReq bit set on the packets that end a message, as rxe sets it.
func Send(op roce.OpCode, destQP, psn uint32) roce.BTH {
	h := BTH(op, destQP, psn)
	h.AckReq = op.IsLast() || op.IsOnly()
	return h
}

// Write returns an RDMA WRITE (FIRST or ONLY carry the RETH: remote
// address, R_Key and the whole message's DMA length, IBA Vol 1 9.3.3).
func Write(op roce.OpCode, destQP, psn uint32, va uint64, rkey, dmaLen uint32) roce.BTH {
	h := Send(op, destQP, psn)
	h.RETH = roce.RETH{VA: va, RKey: rkey, DMALen: dmaLen}
	return h
}

// ReadRequest returns an RC RDMA READ Request (RETH, no payload).
func ReadRequest(destQP, psn uint32, va uint64, rkey, dmaLen uint32) roce.BTH {
	h := BTH(roce.OpRCRDMAReadRequest, destQP, psn)
	h.AckReq = true
	h.RETH = roce.RETH{VA: va, RKey: rkey, DMALen: dmaLen}
	return h
}

// ReadResponse returns an RC RDMA READ Response packet; FIRST, LAST and
// ONLY carry an AETH (IBA Vol 1 9.3.5), MIDDLE none.
func ReadResponse(op roce.OpCode, destQP, psn, msn uint32) roce.BTH {
	h := BTH(op, destQP, psn)
	h.AETH = roce.AETH{Syndrome: roce.Syndrome(roce.CreditCodeInvalid), MSN: msn & 0xFFFFFF}
	return h
}

// Ack returns an RC ACKNOWLEDGE with the given AETH syndrome (an ACK, RNR
// NAK or NAK; see ACKSyndrome, RNRNAKSyndrome and NAKSyndrome).
func Ack(destQP, psn, msn uint32, syn roce.Syndrome) roce.BTH {
	h := BTH(roce.OpRCAcknowledge, destQP, psn)
	h.AETH = roce.AETH{Syndrome: syn, MSN: msn & 0xFFFFFF}
	return h
}

// ACKSyndrome is an ACK with credit count code credits (bits 6-5 00, IBA
// Vol 1 9.3.5; 0x1F = invalid).
func ACKSyndrome(credits uint8) roce.Syndrome { return roce.Syndrome(credits & 0x1F) }

// RNRNAKSyndrome is an RNR NAK with RNR timer code timer (bits 6-5 01,
// Table 45).
func RNRNAKSyndrome(timer uint8) roce.Syndrome { return roce.Syndrome(0x20 | timer&0x1F) }

// NAKSyndrome is a NAK with the given code (bits 6-5 11).
func NAKSyndrome(code roce.NAKCode) roce.Syndrome { return roce.Syndrome(0x60 | uint8(code)&0x1F) }

// CompareSwap returns an RC ATOMIC CmpSwap request (AtomicETH, IBA Vol 1
// 9.3.4).
func CompareSwap(destQP, psn uint32, va uint64, rkey uint32, swap, cmp uint64) roce.BTH {
	h := BTH(roce.OpRCCompareSwap, destQP, psn)
	h.AckReq = true
	h.AtomicETH = roce.AtomicETH{VA: va, RKey: rkey, SwapDt: swap, CmpDt: cmp}
	return h
}

// FetchAdd returns an RC ATOMIC FetchAdd request.
func FetchAdd(destQP, psn uint32, va uint64, rkey uint32, add uint64) roce.BTH {
	h := BTH(roce.OpRCFetchAdd, destQP, psn)
	h.AckReq = true
	h.AtomicETH = roce.AtomicETH{VA: va, RKey: rkey, SwapDt: add}
	return h
}

// AtomicAck returns an RC ATOMIC ACKNOWLEDGE (AETH and AtomicAckETH, IBA
// Vol 1 9.3.6) carrying the original remote data.
func AtomicAck(destQP, psn, msn uint32, orig uint64) roce.BTH {
	h := BTH(roce.OpRCAtomicAcknowledge, destQP, psn)
	h.AETH = roce.AETH{Syndrome: ACKSyndrome(roce.CreditCodeInvalid), MSN: msn & 0xFFFFFF}
	h.AtomicAckETH = roce.AtomicAckETH{OrigRemDt: orig}
	return h
}

// CNP returns a RoCEv2 Congestion Notification Packet (opcode 0x81, Annex
// A17.9.2): sent to the QP whose traffic was marked, BECN set, PSN 0, 16
// reserved bytes.
func CNP(destQP uint32) roce.BTH {
	h := BTH(roce.OpCNP, destQP, 0)
	h.BECN = true
	return h
}

// UDSend returns a UD SEND_ONLY (DETH with Q_Key and source QP, IBA Vol 1
// 9.3.2).
func UDSend(destQP, psn, qkey, srcQP uint32) roce.BTH {
	h := BTH(roce.OpUDSendOnly, destQP, psn)
	h.DETH = roce.DETH{QKey: qkey, SrcQP: srcQP & 0xFFFFFF}
	return h
}

// XRCSend returns an XRC SEND (XRCETH naming the destination XRC SRQ,
// Annex A14).
func XRCSend(op roce.OpCode, destQP, psn, srq uint32) roce.BTH {
	h := Send(op, destQP, psn)
	h.XRCETH = roce.XRCETH{XRCSRQ: srq & 0xFFFFFF}
	return h
}
