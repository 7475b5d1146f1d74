package fields

import (
	"strconv"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// frame.time, the VLAN tag's priority and DEI, and tshark's column fields
// (_ws.col.*). The columns hold rdmashark's summary line: No., Time
// (relative, as tshark's default -t r), Length and the addresses are
// tshark's; Protocol and Info are rdmashark's own words for the packet.

func columnTable() *Table {
	F := new(Table)
	F.Group("_ws.col", "Columns")
	vlan := func(name, label string, t FieldType, b Base, get func(p *dissect.Packet, i int) uint64) *Field {
		return &Field{Name: name, Label: label, Type: t, Base: b, Parent: "vlan",
			Get: func(p *dissect.Packet, emit func(Value)) {
				for i := 0; i < p.NVLAN; i++ {
					if isDot1Q(p, i) {
						emit(u(get(p, i)))
					}
				}
			}}
	}
	col := func(name, label string, get func(p *dissect.Packet, emit func(Value))) *Field {
		return &Field{Name: "_ws.col." + name, Label: label, Type: FTString, Parent: "_ws.col", Hidden: true, Get: get}
	}
	str := func(s string) Value { return Value{S: s} }
	F.Register(
		// FT_ABSOLUTE_TIME printed as tshark prints it, in local time:
		// "Nov 21, 2026 23:29:52.097489000 UTC".
		&Field{Name: "frame.time", Label: "Arrival Time", Type: FTString, Parent: "frame",
			Get: func(p *dissect.Packet, emit func(Value)) {
				emit(str(p.Timestamp.In(time.Local).Format("Jan _2, 2006 15:04:05.000000000 MST")))
			}},
		// IEEE 802.1Q-2018 section 9.6: PCP (3 bits), DEI (1), VID (12).
		vlan("vlan.priority", "Priority", FTUint16, BaseDec, func(p *dissect.Packet, i int) uint64 { return uint64(p.VLAN[i].Priority) }),
		vlan("vlan.dei", "DEI", FTBoolean, BaseNone, func(p *dissect.Packet, i int) uint64 { return b2u(p.VLAN[i].DropEligible) }),

		col("No.", "No.", func(p *dissect.Packet, emit func(Value)) { emit(str(strconv.Itoa(p.Number))) }),
		col("Time", "Time", func(p *dissect.Packet, emit func(Value)) {
			us := p.RelTime.Microseconds()
			emit(str(strconv.FormatInt(us/1e6, 10) + "." + pad6(us%1e6)))
		}),
		col("Source", "Source", func(p *dissect.Packet, emit func(Value)) { emit(str(Source(p))) }),
		col("Destination", "Destination", func(p *dissect.Packet, emit func(Value)) { emit(str(Destination(p))) }),
		col("Protocol", "Protocol", func(p *dissect.Packet, emit func(Value)) { emit(str(Protocol(p))) }),
		col("Length", "Length", func(p *dissect.Packet, emit func(Value)) { emit(str(strconv.Itoa(p.Length))) }),
		col("Info", "Info", func(p *dissect.Packet, emit func(Value)) {
			for _, l := range InfoLines(p) {
				emit(str(l))
			}
		}),
	)
	return F
}

func pad6(v int64) string {
	s := strconv.FormatInt(v, 10)
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}

// isDot1Q reports whether VLAN tag i of p is an 802.1Q C-tag (TPID 0x8100),
// which Wireshark's "vlan" protocol shows; an 802.1ad S-tag (0x88a8) is its
// "ieee8021ad" protocol instead.
func isDot1Q(p *dissect.Packet, i int) bool {
	var tpid layers.EthernetType
	switch {
	case i > 0:
		tpid = p.VLAN[i-1].Type
	case p.Has(layers.LayerTypeEthernet):
		tpid = p.Eth.EthernetType
	case p.Has(layers.LayerTypeLinuxSLL):
		tpid = p.SLL.EthernetType
	case p.Has(layers.LayerTypeLinuxSLL2):
		tpid = layers.EthernetType(p.SLL2.ProtocolType)
	default:
		return true
	}
	return tpid == layers.EthernetTypeDot1Q
}
