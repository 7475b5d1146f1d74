package fields

import (
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/pfc"
)

// MAC Control (IEEE 802.3 Annex 31B PAUSE, 802.1Qbb PFC), named and
// typed as Wireshark's macc.* fields: issue 28 ("PAUSE/PFC frames:
// counted by analyze but absent from dissect").

func maccTable() *Table {
	F := new(Table)
	F.Group("macc", "MAC Control")
	has := hasLayer(pfc.LayerTypeMACControl)
	pfcFrame := func(p *dissect.Packet) bool { return has(p) && p.PFC.Opcode == pfc.OpPFC }
	F.Register(
		&Field{Name: "macc.opcode", Label: "Opcode", Type: FTUint16, Base: BaseHex, Parent: "macc",
			Get: when(has, func(p *dissect.Packet) Value { return u(uint64(p.PFC.Opcode)) })},
		&Field{Name: "macc.pause_time", Label: "pause_time", Type: FTUint16, Base: BaseDec, Parent: "macc",
			Get: when(func(p *dissect.Packet) bool { return has(p) && p.PFC.Opcode == pfc.OpPause },
				func(p *dissect.Packet) Value { return u(uint64(p.PFC.Quanta[0])) })},
		&Field{Name: "macc.cbfc.enbv", Label: "CBFC Class Enable Vector", Type: FTUint16, Base: BaseHex, Parent: "macc",
			Get: when(pfcFrame, func(p *dissect.Packet) Value { return u(uint64(p.PFC.ClassEnableVector)) })},
	)
	for i := 0; i < pfc.Priorities; i++ {
		c := "c" + strconv.Itoa(i)
		F.Register(
			&Field{Name: "macc.cbfc.enbv." + c, Label: "C" + strconv.Itoa(i), Type: FTBoolean, Parent: "macc",
				Get: when(pfcFrame, func(p *dissect.Packet) Value { return boolValue(p.PFC.ClassEnableVector&(1<<i) != 0) })},
		)
	}
	for i := 0; i < pfc.Priorities; i++ {
		c := "c" + strconv.Itoa(i)
		F.Register(
			&Field{Name: "macc.cbfc.pause_time." + c, Label: "C" + strconv.Itoa(i) + " pause_time", Type: FTUint16, Base: BaseDec, Parent: "macc",
				Get: when(pfcFrame, func(p *dissect.Packet) Value { return u(uint64(p.PFC.Quanta[i])) })},
		)
	}
	return F
}
