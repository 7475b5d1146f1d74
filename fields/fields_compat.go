package fields

import (
	"encoding/binary"
	"net/netip"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// Fields under the names tshark users type, for values rdmashark also
// shows under its own names: the RDMA-CM IP header of a CM REQ
// (infiniband.cm.req.ip_cm.*, IBA Annex A11.4 "IP CM Request Message",
// Linux's struct cma_hdr; pvtdata.CMAHeader has the layout), and the
// AtomicETH's VA and R_Key, which tshark reports as infiniband.reth.va and
// infiniband.reth.r_key (fields_ib.go registers them for both headers).

// ipCM returns the CM REQ's private data when it starts with the RDMA-CM IP
// header: as tshark, when the service ID is in the IP range (Annex A11.2.2,
// 0x0000000001xxxxxx) and the private data holds the 36 octets.
func ipCM(p *dissect.Packet) []byte {
	if p.CM.Attr != roce.LayerTypeCMREQ || !pvtdata.ServiceID(p.CM.REQ.ServiceID).IsIP() {
		return nil
	}
	if b := p.CM.REQ.PrivateData; len(b) >= pvtdata.CMAHeaderLen {
		return b
	}
	return nil
}

func compatTable() *Table {
	F := new(Table)
	const C = "infiniband.cm"
	cm := func(name, label string, t FieldType, b Base, get func(h []byte) (Value, bool)) *Field {
		return &Field{Name: "infiniband.cm.req.ip_cm." + name, Label: label, Type: t, Base: b, Parent: C,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if h := ipCM(p); h != nil {
					if v, ok := get(h); ok {
						emit(v)
					}
				}
			}}
	}
	one := func(v uint64) (Value, bool) { return Value{U: v}, true }
	addr4 := func(b []byte) (Value, bool) { return Value{Addr: netip.AddrFrom4([4]byte(b))}, true }
	addr6 := func(b []byte) (Value, bool) { return Value{Addr: netip.AddrFrom16([16]byte(b))}, true }
	F.Register(
		// The RETH itself: present on RDMA Read and Write requests only,
		// not on atomics, although infiniband.reth.va is (as in tshark).
		// Both headers are FT_BYTES in tshark 4.0: their octets, laid out
		// as IBA Vol 1 9.3.3 (RETH: VA 64, R_Key 32, DMA Length 32 bits)
		// and 9.3.4 (AtomicETH: VA 64, R_Key 32, Swap/Add Data 64,
		// Compare Data 64 bits) say.
		&Field{Name: "infiniband.reth", Label: "RDMA Extended Transport Header", Type: FTBytes, Parent: "infiniband.reth", Hidden: true,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Has(roce.LayerTypeBTH) && p.BTH.Ext.Has(roce.ExtRETH) {
					r := &p.BTH.RETH
					b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), r.VA)
					b = binary.BigEndian.AppendUint32(b, r.RKey)
					emit(Value{B: binary.BigEndian.AppendUint32(b, r.DMALen)})
				}
			}},
		&Field{Name: "infiniband.atomiceth", Label: "Atomic Extended Transport Header", Type: FTBytes, Parent: "infiniband.atomiceth", Hidden: true,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Has(roce.LayerTypeBTH) && p.BTH.Ext.Has(roce.ExtAtomicETH) {
					a := &p.BTH.AtomicETH
					b := binary.BigEndian.AppendUint64(make([]byte, 0, 28), a.VA)
					b = binary.BigEndian.AppendUint32(b, a.RKey)
					b = binary.BigEndian.AppendUint64(b, a.SwapDt)
					emit(Value{B: binary.BigEndian.AppendUint64(b, a.CmpDt)})
				}
			}},
		cm("majv", "IP CM Major Version", FTUint8, BaseHex, func(h []byte) (Value, bool) { return one(uint64(h[0] >> 4)) }),
		cm("minv", "IP CM Minor Version", FTUint8, BaseHex, func(h []byte) (Value, bool) { return one(uint64(h[0] & 0x0f)) }),
		cm("ipv", "IP CM IP Version", FTUint8, BaseHex, func(h []byte) (Value, bool) { return one(uint64(h[1] >> 4)) }),
		cm("reserved", "IP CM Reserved", FTUint8, BaseHex, func(h []byte) (Value, bool) { return one(uint64(h[1] & 0x0f)) }),
		cm("sport", "IP CM Source Port", FTUint16, BaseHex, func(h []byte) (Value, bool) {
			return one(uint64(binary.BigEndian.Uint16(h[2:4])))
		}),
		// IPv4 addresses are the last 4 octets of each 16-octet address.
		cm("sip4", "IP CM Source IP", FTIPv4, BaseNone, func(h []byte) (Value, bool) {
			if h[1]>>4 != 4 {
				return Value{}, false
			}
			return addr4(h[16:20])
		}),
		cm("dip4", "IP CM Destination IP", FTIPv4, BaseNone, func(h []byte) (Value, bool) {
			if h[1]>>4 != 4 {
				return Value{}, false
			}
			return addr4(h[32:36])
		}),
		cm("sip6", "IP CM Source IP", FTIPv6, BaseNone, func(h []byte) (Value, bool) {
			if h[1]>>4 != 6 {
				return Value{}, false
			}
			return addr6(h[4:20])
		}),
		cm("dip6", "IP CM Destination IP", FTIPv6, BaseNone, func(h []byte) (Value, bool) {
			if h[1]>>4 != 6 {
				return Value{}, false
			}
			return addr6(h[20:36])
		}),
		cm("private", "IP CM Consumer PrivateData", FTBytes, BaseNone, func(h []byte) (Value, bool) {
			return Value{B: h[pvtdata.CMAHeaderLen:]}, true
		}),
	)
	return F
}
