package roce

import (
	"fmt"
	"strings"
)

// OpCode is the BTH OpCode field (IBA Vol 1 §9.2, Table 38 "OpCode field").
// Bits 7-5 select the transport service (RC, UC, RD, UD, CNP, XRC), bits
// 4-0 the operation.
type OpCode uint8

// Transport is the service type carried in bits 7-5 of an OpCode
// (IBA Vol 1 §9.2, Table 38).
type Transport uint8

// Transport services, the value of OpCode bits 7-5.
const (
	TransportRC           Transport = 0 // 000: Reliable Connection
	TransportUC           Transport = 1 // 001: Unreliable Connection
	TransportRD           Transport = 2 // 010: Reliable Datagram
	TransportUD           Transport = 3 // 011: Unreliable Datagram
	TransportCNP          Transport = 4 // 100: Congestion Notification (Annex A10; RoCEv2 Annex A17.9)
	TransportXRC          Transport = 5 // 101: Extended Reliable Connection (Annex A14)
	TransportReserved     Transport = 6 // 110: reserved
	TransportManufacturer Transport = 7 // 111: manufacturer specific
)

var transportNames = [8]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "reserved", "manufacturer"}

func (t Transport) String() string {
	if int(t) < len(transportNames) {
		return transportNames[t]
	}
	return fmt.Sprintf("Transport(%d)", uint8(t))
}

// OpCode values. RC 0x00-0x1F (§9.2 Table 38; FLUSH and ATOMIC_WRITE from
// IBTA Vol 1 Release 1.5), UC 0x20-0x3F, RD 0x40-0x5F, UD 0x60-0x7F,
// CNP 0x80/0x81, XRC 0xA0-0xBF (Annex A14, same operation numbers as RC).
const (
	OpRCSendFirst                   OpCode = 0x00
	OpRCSendMiddle                  OpCode = 0x01
	OpRCSendLast                    OpCode = 0x02
	OpRCSendLastWithImmediate       OpCode = 0x03
	OpRCSendOnly                    OpCode = 0x04
	OpRCSendOnlyWithImmediate       OpCode = 0x05
	OpRCRDMAWriteFirst              OpCode = 0x06
	OpRCRDMAWriteMiddle             OpCode = 0x07
	OpRCRDMAWriteLast               OpCode = 0x08
	OpRCRDMAWriteLastWithImmediate  OpCode = 0x09
	OpRCRDMAWriteOnly               OpCode = 0x0A
	OpRCRDMAWriteOnlyWithImmediate  OpCode = 0x0B
	OpRCRDMAReadRequest             OpCode = 0x0C
	OpRCRDMAReadResponseFirst       OpCode = 0x0D
	OpRCRDMAReadResponseMiddle      OpCode = 0x0E
	OpRCRDMAReadResponseLast        OpCode = 0x0F
	OpRCRDMAReadResponseOnly        OpCode = 0x10
	OpRCAcknowledge                 OpCode = 0x11
	OpRCAtomicAcknowledge           OpCode = 0x12
	OpRCCompareSwap                 OpCode = 0x13
	OpRCFetchAdd                    OpCode = 0x14
	OpRCSendLastWithInvalidate      OpCode = 0x16
	OpRCSendOnlyWithInvalidate      OpCode = 0x17
	OpRCFlush                       OpCode = 0x1C
	OpRCAtomicWrite                 OpCode = 0x1D
	OpUCSendFirst                   OpCode = 0x20
	OpUCSendMiddle                  OpCode = 0x21
	OpUCSendLast                    OpCode = 0x22
	OpUCSendLastWithImmediate       OpCode = 0x23
	OpUCSendOnly                    OpCode = 0x24
	OpUCSendOnlyWithImmediate       OpCode = 0x25
	OpUCRDMAWriteFirst              OpCode = 0x26
	OpUCRDMAWriteMiddle             OpCode = 0x27
	OpUCRDMAWriteLast               OpCode = 0x28
	OpUCRDMAWriteLastWithImmediate  OpCode = 0x29
	OpUCRDMAWriteOnly               OpCode = 0x2A
	OpUCRDMAWriteOnlyWithImmediate  OpCode = 0x2B
	OpRDSendFirst                   OpCode = 0x40
	OpRDSendMiddle                  OpCode = 0x41
	OpRDSendLast                    OpCode = 0x42
	OpRDSendLastWithImmediate       OpCode = 0x43
	OpRDSendOnly                    OpCode = 0x44
	OpRDSendOnlyWithImmediate       OpCode = 0x45
	OpRDRDMAWriteFirst              OpCode = 0x46
	OpRDRDMAWriteMiddle             OpCode = 0x47
	OpRDRDMAWriteLast               OpCode = 0x48
	OpRDRDMAWriteLastWithImmediate  OpCode = 0x49
	OpRDRDMAWriteOnly               OpCode = 0x4A
	OpRDRDMAWriteOnlyWithImmediate  OpCode = 0x4B
	OpRDRDMAReadRequest             OpCode = 0x4C
	OpRDRDMAReadResponseFirst       OpCode = 0x4D
	OpRDRDMAReadResponseMiddle      OpCode = 0x4E
	OpRDRDMAReadResponseLast        OpCode = 0x4F
	OpRDRDMAReadResponseOnly        OpCode = 0x50
	OpRDAcknowledge                 OpCode = 0x51
	OpRDAtomicAcknowledge           OpCode = 0x52
	OpRDCompareSwap                 OpCode = 0x53
	OpRDFetchAdd                    OpCode = 0x54
	OpRDResync                      OpCode = 0x55
	OpRDFlush                       OpCode = 0x5C
	OpRDAtomicWrite                 OpCode = 0x5D
	OpUDSendOnly                    OpCode = 0x64
	OpUDSendOnlyWithImmediate       OpCode = 0x65
	OpIBCNP                         OpCode = 0x80 // native IB congestion notification (Annex A10)
	OpCNP                           OpCode = 0x81 // RoCEv2 congestion notification (Annex A17.9.2)
	OpXRCSendFirst                  OpCode = 0xA0
	OpXRCSendMiddle                 OpCode = 0xA1
	OpXRCSendLast                   OpCode = 0xA2
	OpXRCSendLastWithImmediate      OpCode = 0xA3
	OpXRCSendOnly                   OpCode = 0xA4
	OpXRCSendOnlyWithImmediate      OpCode = 0xA5
	OpXRCRDMAWriteFirst             OpCode = 0xA6
	OpXRCRDMAWriteMiddle            OpCode = 0xA7
	OpXRCRDMAWriteLast              OpCode = 0xA8
	OpXRCRDMAWriteLastWithImmediate OpCode = 0xA9
	OpXRCRDMAWriteOnly              OpCode = 0xAA
	OpXRCRDMAWriteOnlyWithImmediate OpCode = 0xAB
	OpXRCRDMAReadRequest            OpCode = 0xAC
	OpXRCRDMAReadResponseFirst      OpCode = 0xAD
	OpXRCRDMAReadResponseMiddle     OpCode = 0xAE
	OpXRCRDMAReadResponseLast       OpCode = 0xAF
	OpXRCRDMAReadResponseOnly       OpCode = 0xB0
	OpXRCAcknowledge                OpCode = 0xB1
	OpXRCAtomicAcknowledge          OpCode = 0xB2
	OpXRCCompareSwap                OpCode = 0xB3
	OpXRCFetchAdd                   OpCode = 0xB4
	OpXRCSendLastWithInvalidate     OpCode = 0xB6
	OpXRCSendOnlyWithInvalidate     OpCode = 0xB7
	OpXRCFlush                      OpCode = 0xBC
	OpXRCAtomicWrite                OpCode = 0xBD
	opcodeTransportShift                   = 5
	opcodeOperationMask                    = 0x1F
	opcodeTransportMask                    = 0xE0
)

// ExtHeaders is a set of extended transport headers (IBA Vol 1 §9.3), as
// implied by an OpCode and as found by BTH decoding.
type ExtHeaders uint16

// Extended transport headers, in the order they follow the BTH on the wire
// (IBA Vol 1 §9.2, Figure "packet header layout"; XRCETH Annex A14; FETH
// IBTA 1.5 RDMA FLUSH).
const (
	ExtRDETH        ExtHeaders = 1 << iota // Reliable Datagram ETH, 4 bytes (§9.3.1)
	ExtDETH                                // Datagram ETH, 8 bytes (§9.3.2)
	ExtXRCETH                              // XRC ETH, 4 bytes (Annex A14)
	ExtFETH                                // FLUSH ETH, 4 bytes (IBTA 1.5)
	ExtRETH                                // RDMA ETH, 16 bytes (§9.3.3)
	ExtAtomicETH                           // Atomic ETH, 28 bytes (§9.3.4)
	ExtAETH                                // ACK ETH, 4 bytes (§9.3.5)
	ExtAtomicAckETH                        // Atomic ACK ETH, 8 bytes (§9.3.6)
	ExtImmDt                               // Immediate data, 4 bytes (§9.3.7)
	ExtIETH                                // Invalidate ETH, 4 bytes (§9.3.8)
	ExtCNP                                 // RoCEv2 CNP body: 16 reserved bytes (Annex A17.9.2)
	extLast
)

// extInfo lists every extended header in wire order with its length.
var extInfo = [...]struct {
	ext  ExtHeaders
	name string
	len  int
}{
	{ExtRDETH, "RDETH", 4},
	{ExtDETH, "DETH", 8},
	{ExtXRCETH, "XRCETH", 4},
	{ExtFETH, "FETH", 4},
	{ExtRETH, "RETH", 16},
	{ExtAtomicETH, "AtomicETH", 28},
	{ExtAETH, "AETH", 4},
	{ExtAtomicAckETH, "AtomicAckETH", 8},
	{ExtImmDt, "ImmDt", 4},
	{ExtIETH, "IETH", 4},
	{ExtCNP, "CNP", 16},
}

// Has reports whether every header of x is in the set.
func (e ExtHeaders) Has(x ExtHeaders) bool { return e&x == x && x != 0 }

// Len is the total wire length in bytes of the headers in the set.
func (e ExtHeaders) Len() int {
	n := 0
	for _, i := range extInfo {
		if e&i.ext != 0 {
			n += i.len
		}
	}
	return n
}

// String lists the headers, e.g. "RETH|ImmDt"; the empty set is "none".
func (e ExtHeaders) String() string {
	if e == 0 {
		return "none"
	}
	var sb strings.Builder
	for _, i := range extInfo {
		if e&i.ext != 0 {
			if sb.Len() > 0 {
				sb.WriteByte('|')
			}
			sb.WriteString(i.name)
		}
	}
	if rest := e &^ (extLast - 1); rest != 0 {
		if sb.Len() > 0 {
			sb.WriteByte('|')
		}
		fmt.Fprintf(&sb, "0x%x", uint16(rest))
	}
	return sb.String()
}

// opKind classifies an operation; opPos says where a packet sits in its
// message (IBA Vol 1 §9.4 and §9.5: first/middle/last/only).
type opKind uint8

const (
	kindNone opKind = iota
	kindSend
	kindWrite
	kindReadRequest
	kindReadResponse
	kindAck
	kindAtomicAck
	kindAtomic // CmpSwap, FetchAdd
	kindResync
	kindFlush
	kindAtomicWrite
	kindCNP
)

type opPos uint8

const (
	posNone opPos = iota
	posFirst
	posMiddle
	posLast
	posOnly
)

type opFlags uint8

const (
	flagImm   opFlags = 1 << iota // carries ImmDt
	flagInval                     // carries IETH (send with invalidate)
)

// opInfo describes one operation (OpCode bits 4-0).
type opInfo struct {
	name  string
	kind  opKind
	pos   opPos
	flags opFlags
	ext   ExtHeaders // extended headers besides the per-transport ones
}

// operations is the operation half (bits 4-0) of Table 38, shared by RC,
// UC, RD and XRC; which of them a transport allows is in transportOps.
var operations = [32]opInfo{
	0x00: {"SEND_FIRST", kindSend, posFirst, 0, 0},
	0x01: {"SEND_MIDDLE", kindSend, posMiddle, 0, 0},
	0x02: {"SEND_LAST", kindSend, posLast, 0, 0},
	0x03: {"SEND_LAST_WITH_IMMEDIATE", kindSend, posLast, flagImm, ExtImmDt},
	0x04: {"SEND_ONLY", kindSend, posOnly, 0, 0},
	0x05: {"SEND_ONLY_WITH_IMMEDIATE", kindSend, posOnly, flagImm, ExtImmDt},
	0x06: {"RDMA_WRITE_FIRST", kindWrite, posFirst, 0, ExtRETH},
	0x07: {"RDMA_WRITE_MIDDLE", kindWrite, posMiddle, 0, 0},
	0x08: {"RDMA_WRITE_LAST", kindWrite, posLast, 0, 0},
	0x09: {"RDMA_WRITE_LAST_WITH_IMMEDIATE", kindWrite, posLast, flagImm, ExtImmDt},
	0x0A: {"RDMA_WRITE_ONLY", kindWrite, posOnly, 0, ExtRETH},
	0x0B: {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", kindWrite, posOnly, flagImm, ExtRETH | ExtImmDt},
	0x0C: {"RDMA_READ_REQUEST", kindReadRequest, posOnly, 0, ExtRETH},
	0x0D: {"RDMA_READ_RESPONSE_FIRST", kindReadResponse, posFirst, 0, ExtAETH},
	0x0E: {"RDMA_READ_RESPONSE_MIDDLE", kindReadResponse, posMiddle, 0, 0},
	0x0F: {"RDMA_READ_RESPONSE_LAST", kindReadResponse, posLast, 0, ExtAETH},
	0x10: {"RDMA_READ_RESPONSE_ONLY", kindReadResponse, posOnly, 0, ExtAETH},
	0x11: {"ACKNOWLEDGE", kindAck, posOnly, 0, ExtAETH},
	0x12: {"ATOMIC_ACKNOWLEDGE", kindAtomicAck, posOnly, 0, ExtAETH | ExtAtomicAckETH},
	0x13: {"COMPARE_SWAP", kindAtomic, posOnly, 0, ExtAtomicETH},
	0x14: {"FETCH_ADD", kindAtomic, posOnly, 0, ExtAtomicETH},
	0x15: {"RESYNC", kindResync, posOnly, 0, 0},
	0x16: {"SEND_LAST_WITH_INVALIDATE", kindSend, posLast, flagInval, ExtIETH},
	0x17: {"SEND_ONLY_WITH_INVALIDATE", kindSend, posOnly, flagInval, ExtIETH},
	0x1C: {"FLUSH", kindFlush, posOnly, 0, ExtFETH | ExtRETH},
	0x1D: {"ATOMIC_WRITE", kindAtomicWrite, posOnly, 0, ExtRETH},
}

// transportOps says, per transport, which operations exist (bit n set =
// operation n defined) and which extended headers every request or every
// response of that transport adds:
//   - RD requests carry RDETH and DETH, RD responses RDETH (§9.2, Table 38);
//   - UD packets carry DETH (§9.2, Table 38);
//   - XRC requests carry XRCETH, XRC responses do not (Annex A14).
var transportOps = [8]struct {
	ops      uint32
	request  ExtHeaders
	response ExtHeaders
}{
	TransportRC:  {ops: 0x301FFFFF | 1<<0x16 | 1<<0x17},
	TransportUC:  {ops: 0x00000FFF},
	TransportRD:  {ops: 0x303FFFFF, request: ExtRDETH | ExtDETH, response: ExtRDETH},
	TransportUD:  {ops: 1<<0x04 | 1<<0x05, request: ExtDETH},
	TransportXRC: {ops: 0x301FFFFF | 1<<0x16 | 1<<0x17, request: ExtXRCETH},
}

// opTable is the whole of Table 38 as data, built once from operations and
// transportOps.
var opTable = func() (t [256]struct {
	valid bool
	info  opInfo
	ext   ExtHeaders
}) {
	for code := 0; code < 256; code++ {
		tr := Transport(code >> opcodeTransportShift)
		op := code & opcodeOperationMask
		to := transportOps[tr]
		if to.ops&(1<<op) == 0 {
			continue
		}
		info := operations[op]
		ext := info.ext
		switch info.kind {
		case kindReadResponse, kindAck, kindAtomicAck:
			ext |= to.response
		default:
			ext |= to.request
		}
		t[code].valid, t[code].info, t[code].ext = true, info, ext
	}
	// CNP: 0x80 is the native IB CNP of Annex A10 (BTH only); 0x81 the
	// RoCEv2 CNP of Annex A17.9.2 (BTH, 16 reserved bytes, ICRC).
	t[OpIBCNP].valid, t[OpIBCNP].info = true, opInfo{name: "IB_CNP", kind: kindCNP, pos: posOnly}
	t[OpCNP].valid, t[OpCNP].info, t[OpCNP].ext = true, opInfo{name: "CNP", kind: kindCNP, pos: posOnly}, ExtCNP
	return t
}()

// Transport returns the service type in bits 7-5.
func (o OpCode) Transport() Transport { return Transport(o >> opcodeTransportShift) }

// Valid reports whether the opcode is defined by the specification
// (reserved and manufacturer-specific opcodes are not).
func (o OpCode) Valid() bool { return opTable[o].valid }

// ExtHeaders returns the extended headers that follow the BTH for this
// opcode, zero for undefined opcodes.
func (o OpCode) ExtHeaders() ExtHeaders { return opTable[o].ext }

// HeaderLen is the length of BTH plus the extended headers the opcode
// implies.
func (o OpCode) HeaderLen() int { return BTHLen + opTable[o].ext.Len() }

// Name is the operation name without transport, e.g. "SEND_ONLY"; empty for
// undefined opcodes.
func (o OpCode) Name() string { return opTable[o].info.name }

// String returns e.g. "RC SEND_ONLY", "UD SEND_ONLY_WITH_IMMEDIATE", "CNP",
// or "0x%02x" for undefined opcodes.
func (o OpCode) String() string { return opNames[o] }

// opNames are the opcodes' names, built once: String runs for every packet
// and must not allocate.
var opNames = func() (n [256]string) {
	for i := range n {
		o := OpCode(i)
		e := &opTable[o]
		switch {
		case !e.valid:
			n[i] = fmt.Sprintf("0x%02x", uint8(o))
		case e.info.kind == kindCNP && o == OpCNP:
			n[i] = "CNP"
		case e.info.kind == kindCNP:
			n[i] = "IB CNP"
		default:
			n[i] = o.Transport().String() + " " + e.info.name
		}
	}
	return n
}()

func (o OpCode) kind() opKind { return opTable[o].info.kind }
func (o OpCode) pos() opPos   { return opTable[o].info.pos }

// IsSend: SEND_* of any transport (including with immediate/invalidate).
func (o OpCode) IsSend() bool { return o.kind() == kindSend }

// IsWrite: RDMA_WRITE_* of any transport.
func (o OpCode) IsWrite() bool { return o.kind() == kindWrite }

// IsReadRequest: RDMA_READ_REQUEST.
func (o OpCode) IsReadRequest() bool { return o.kind() == kindReadRequest }

// IsReadResponse: RDMA_READ_RESPONSE_*.
func (o OpCode) IsReadResponse() bool { return o.kind() == kindReadResponse }

// IsAck: ACKNOWLEDGE (not ATOMIC_ACKNOWLEDGE, see IsAtomicAck).
func (o OpCode) IsAck() bool { return o.kind() == kindAck }

// IsAtomicAck: ATOMIC_ACKNOWLEDGE.
func (o OpCode) IsAtomicAck() bool { return o.kind() == kindAtomicAck }

// IsAtomic: COMPARE_SWAP and FETCH_ADD (see IsAtomicWrite for ATOMIC_WRITE).
func (o OpCode) IsAtomic() bool { return o.kind() == kindAtomic }

// IsAtomicWrite: ATOMIC_WRITE (IBTA 1.5).
func (o OpCode) IsAtomicWrite() bool { return o.kind() == kindAtomicWrite }

// IsFlush: FLUSH (IBTA 1.5).
func (o OpCode) IsFlush() bool { return o.kind() == kindFlush }

// IsResync: RD RESYNC.
func (o OpCode) IsResync() bool { return o.kind() == kindResync }

// IsCNP: a congestion notification packet (0x80 or 0x81).
func (o OpCode) IsCNP() bool { return o.kind() == kindCNP }

// IsResponse: read responses, ACKNOWLEDGE and ATOMIC_ACKNOWLEDGE, the
// packets a responder sends (§9.7.5).
func (o OpCode) IsResponse() bool {
	k := o.kind()
	return k == kindReadResponse || k == kindAck || k == kindAtomicAck
}

// IsRequest: defined opcodes a requester sends (everything but responses
// and CNPs).
func (o OpCode) IsRequest() bool {
	k := o.kind()
	return k != kindNone && k != kindCNP && !o.IsResponse()
}

// IsFirst, IsMiddle, IsLast, IsOnly give the packet's place in a
// multi-packet message (§9.4: "first", "middle", "last", "only").
func (o OpCode) IsFirst() bool  { return o.pos() == posFirst }
func (o OpCode) IsMiddle() bool { return o.pos() == posMiddle }
func (o OpCode) IsLast() bool   { return o.pos() == posLast }
func (o OpCode) IsOnly() bool   { return o.pos() == posOnly }

// HasImmediate: the opcode carries ImmDt.
func (o OpCode) HasImmediate() bool { return opTable[o].info.flags&flagImm != 0 }

// HasInvalidate: the opcode carries IETH (SEND_*_WITH_INVALIDATE).
func (o OpCode) HasInvalidate() bool { return opTable[o].info.flags&flagInval != 0 }
