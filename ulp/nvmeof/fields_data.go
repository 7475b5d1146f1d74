package nvmeof

import (
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/nvme"
)

// The fields of the data admin commands return (Identify, Get Log Page),
// under tshark 4.0's names (nvme.cmd.identify.ctrl.*, .ns.*, .nslist.*,
// nvme.cmd.get_logpage.*, nvme.data), on the RDMA Write packets that
// carried the data (the DataRecords the session filed, data.go): each
// packet shows the fields it holds whole, at their place in the structure
// (nvme's layouts), as tshark decodes each RDMA Write packet at its offset
// in the transfer. Where tshark decodes a structure at the wrong place
// the fields follow the specification (KD-NVME-DATA in
// testdata/KNOWN-DIFFERENCES.md, docs/nvme.md).

type dataFieldType struct {
	label string
	ft    fields.FieldType
	base  fields.Base
}

// dataStruct is one data structure: its layout, the records that carry
// it, and where in a record's structure its entries start.
type dataStruct struct {
	prefix string
	items  []nvme.Item
	// of reports whether the record carries the structure.
	of func(r *DataRecord) bool
	// entries calls fn with the structure octet each entry the packet
	// shows starts at (the structure's own start: 0).
	entries func(r *DataRecord, fn func(base int))
	// gates: items under a group shown only when the group's octets are
	// all in the packet (tshark adds a group's items with the group);
	// group: the structure's items all are, the group at its own place
	// (the power state descriptors in octets 2048-3071).
	gates map[string]string
	group *nvme.Item
}

func whole(r *DataRecord, fn func(base int)) { fn(0) }

func identifyOf(cns nvme.CNS) func(r *DataRecord) bool {
	return func(r *DataRecord) bool { return r.OPC == nvme.AdminIdentify && r.CNS == cns }
}

func logOf(lid nvme.LogPageID) func(r *DataRecord) bool {
	return func(r *DataRecord) bool { return r.OPC == nvme.AdminGetLogPage && r.LID == lid }
}

// eachData calls fn for the DataRecords of p.
func eachData(p *dissect.Packet, fn func(r *DataRecord)) {
	for _, x := range p.ULP {
		if r, ok := x.(*DataRecord); ok {
			fn(r)
		}
	}
}

func dataType(name string) dataFieldType {
	t, ok := dataFieldTypes[name]
	if !ok {
		panic("nvmeof: no type for " + name) // a table out of step: caught by any test
	}
	return t
}

// dataField makes the field of one item of ds.
func dataField(ds *dataStruct, it *nvme.Item) *fields.Field {
	name := ds.prefix + it.Name
	t := dataType(name)
	var gate *nvme.Item
	for pre, g := range ds.gates {
		if strings.HasPrefix(it.Name, pre) {
			for i := range ds.items {
				if ds.items[i].Name == g {
					gate = &ds.items[i]
				}
			}
		}
	}
	return &fields.Field{Name: name, Label: t.label, Type: t.ft, Base: t.base, Parent: "nvme",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			eachData(p, func(r *DataRecord) {
				if !ds.of(r) {
					return
				}
				ds.entries(r, func(base int) {
					// An item of a group shows with its group, on the
					// packet that completes the group.
					switch {
					case gate != nil && !(joinedIn(r, base, gate) && it.In(r.Joined, int(r.JoinedAt)-base)):
					case ds.group != nil && !(joinedIn(r, 0, ds.group) && it.In(r.Joined, int(r.JoinedAt)-base)):
					case gate == nil && ds.group == nil && !joinedIn(r, base, it):
					default:
						emitItem(it, r.Joined, int(r.JoinedAt)-base, emit)
					}
				})
			})
		}}
}

// joinedIn reports whether the item (at base in the structure; nil: none)
// is whole in r.Joined and ends in r's packet: an item of the packets
// before shows on the packet that completes it.
func joinedIn(r *DataRecord, base int, it *nvme.Item) bool {
	return it == nil || it.In(r.Joined, int(r.JoinedAt)-base) && uint64(base+it.Off+it.Len) > r.At
}

func emitItem(it *nvme.Item, b []byte, at int, emit func(fields.Value)) {
	switch it.Kind {
	case nvme.ItemUint:
		if v, ok := it.Uint(b, at); ok {
			emit(fields.Value{U: v})
		}
	case nvme.ItemString:
		if v, ok := it.Bytes(b, at); ok {
			emit(fields.Value{S: string(v)})
		}
	default:
		if v, ok := it.Bytes(b, at); ok {
			emit(fields.Value{B: v})
		}
	}
}

// special makes a field of the data whose occurrences get computes.
func special(name string, get func(r *DataRecord, emit func(fields.Value))) *fields.Field {
	t := dataType(name)
	return &fields.Field{Name: name, Label: t.label, Type: t.ft, Base: t.base, Parent: "nvme",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			eachData(p, func(r *DataRecord) { get(r, emit) })
		}}
}

// inPacket returns the octets [off, off+n) of the structure r's packet
// holds from r.At on, cut at the packet's end (nil when it holds none of
// them or starts after off).
func inPacket(r *DataRecord, off, n int) []byte {
	o := off - int(r.At)
	if r.At > uint64(off) || o >= len(r.Data) || n <= 0 {
		return nil
	}
	return r.Data[o:min(len(r.Data), o+n)]
}

func dataFields(t *fields.Table) {
	const (
		idp  = "nvme.cmd.identify."
		logp = "nvme.cmd.get_logpage."
	)
	ctrl := &dataStruct{prefix: idp, items: nvme.IdentifyControllerItems, of: identifyOf(nvme.CNSController), entries: whole,
		gates: map[string]string{"ctrl.ver.": "ctrl.ver", "ctrl.fguid.": "ctrl.fguid", "ctrl.mi.": "ctrl.mi", "ctrl.nvmeof.": "ctrl.nvmeof"}}
	psdsItem := &nvme.Item{Off: nvme.PowerStateDescriptorsOff, Len: 32 * nvme.PowerStateDescriptorLen}
	psd := &dataStruct{prefix: idp, items: nvme.PowerStateDescriptorItems, of: identifyOf(nvme.CNSController), group: psdsItem,
		entries: func(r *DataRecord, fn func(base int)) {
			for i := 0; i < 32; i++ {
				fn(nvme.PowerStateDescriptorsOff + i*nvme.PowerStateDescriptorLen)
			}
		}}
	ctrlVS := &dataStruct{prefix: idp, items: nvme.IdentifyControllerVSItems, of: identifyOf(nvme.CNSController), entries: whole}
	ns := &dataStruct{prefix: idp, items: nvme.IdentifyNamespaceItems, of: identifyOf(nvme.CNSNamespace),
		entries: func(r *DataRecord, fn func(base int)) {
			if r.At == 0 { // tshark decodes the namespace's fields in the data's first packet only
				fn(0)
			}
		}}
	smart := &dataStruct{prefix: logp, items: nvme.SMARTLogItems, of: logOf(nvme.LogSMARTHealth), entries: whole}
	errinf := &dataStruct{prefix: logp, items: nvme.ErrorInformationLogItems, of: logOf(nvme.LogErrorInformation), entries: whole}
	disc := &dataStruct{prefix: logp, items: nvme.DiscoveryLogItems, of: logOf(nvme.LogDiscovery), entries: whole}
	dle := func(items []nvme.Item, trtype uint8) *dataStruct {
		return &dataStruct{prefix: logp, items: items, of: logOf(nvme.LogDiscovery), entries: func(r *DataRecord, fn func(base int)) {
			discoveryEntries(r, func(base int) {
				if trtype == 0 || joinedUint8(r, base) == int(trtype) {
					fn(base)
				}
			})
		}}
	}
	ana := &dataStruct{prefix: logp, items: nvme.ANALogItems, of: logOf(nvme.LogANA), entries: whole}
	anaGrp := &dataStruct{prefix: logp, items: nvme.ANAGroupDescriptorItems, of: logOf(nvme.LogANA), entries: anaGroups}
	cse := &dataStruct{prefix: logp, items: nvme.CommandEffectsItems, of: logOf(nvme.LogCommandsSupported), entries: commandEffects}

	add := func(ds *dataStruct) {
		for i := range ds.items {
			t.Register(dataField(ds, &ds.items[i]))
		}
	}
	add(ctrl)
	add(psd)
	add(ctrlVS)
	add(ns)
	t.Register(
		// The LBA formats: NLBAF+1 of them (0's based) from octet 128 of
		// the first packet.
		special(idp+"ns.lbafs", func(r *DataRecord, emit func(fields.Value)) {
			if ns.of(r) && r.At == 0 && len(r.Data) >= nvme.IdentifyNamespaceLBAFOff+64 {
				emit(fields.Value{S: "1"}) // tshark prints its FT_NONE as 1
			}
		}),
		special(idp+"ns.lbaf", func(r *DataRecord, emit func(fields.Value)) {
			if !ns.of(r) || r.At != 0 || len(r.Data) < 26 {
				return
			}
			it := nvme.Item{Len: 4, Kind: nvme.ItemUint}
			for i := 0; i <= int(r.Data[25]) && i < 64; i++ {
				it.Off = nvme.IdentifyNamespaceLBAFOff + 4*i
				if v, ok := it.Uint(r.Data, 0); ok {
					emit(fields.Value{U: v})
				}
			}
		}),
		// Vendor specific: octets 384-4095, whatever of them the packet
		// holds.
		special(idp+"ns.vs", func(r *DataRecord, emit func(fields.Value)) {
			if !ns.of(r) {
				return
			}
			o := max(0, nvme.IdentifyNamespaceVSOff-int(r.At))
			if o < len(r.Data) {
				emit(fields.Value{B: r.Data[o:]})
			}
		}),
		special(idp+"nslist.nsid", func(r *DataRecord, emit func(fields.Value)) {
			if r.OPC == nvme.AdminIdentify && r.CNS == nvme.CNSActiveNamespaceList {
				nvme.NSIDs(r.Data, int(r.At), func(_ int, id uint32) bool {
					emit(fields.Value{U: uint64(id)})
					return true
				})
			}
		}),
		// The data of every Get Log Page, as the packet carries it.
		special("nvme.data", func(r *DataRecord, emit func(fields.Value)) {
			if r.OPC == nvme.AdminGetLogPage {
				emit(fields.Value{B: r.Data})
			}
		}),
	)
	add(errinf)
	add(smart)
	add(disc)
	t.Register(special(logp+"identify.rcrd", func(r *DataRecord, emit func(fields.Value)) {
		if disc.of(r) {
			discoveryEntries(r, func(base int) {
				if b := inPacket(r, base, nvme.DiscoveryLogEntryLen); b != nil {
					emit(fields.Value{B: b})
				}
			})
		}
	}))
	add(dle(nvme.DiscoveryLogEntryItems, 0))
	add(dle(nvme.DiscoveryLogEntryRDMAItems, uint8(nvme.TransportRDMA)))
	add(dle(nvme.DiscoveryLogEntryTCPItems, uint8(nvme.TransportTCP)))
	t.Register(special(logp+"cmd_and_eff.cs", func(r *DataRecord, emit func(fields.Value)) {
		if cse.of(r) {
			commandEffects(r, func(base int) {
				if b := inPacket(r, base, 4); len(b) == 4 {
					emit(fields.Value{B: b})
				}
			})
		}
	}))
	add(cse)
	add(ana)
	t.Register(special(logp+"ana.grp", func(r *DataRecord, emit func(fields.Value)) {
		if ana.of(r) {
			anaGroups(r, func(base int) {
				if b := inPacket(r, base, anaGroupLen(r, base)); b != nil {
					emit(fields.Value{B: b})
				}
			})
		}
	}))
	add(anaGrp)
	t.Register(special(logp+"ana.grp.nsid", func(r *DataRecord, emit func(fields.Value)) {
		if !ana.of(r) {
			return
		}
		anaGroups(r, func(base int) {
			n := (anaGroupLen(r, base) - nvme.ANAGroupDescriptorLen) / 4
			it := nvme.Item{Len: 4, Kind: nvme.ItemUint}
			for i := 0; i < n; i++ {
				it.Off = base + nvme.ANAGroupDescriptorLen + 4*i
				if v, ok := it.Uint(r.Data, int(r.At)); ok {
					emit(fields.Value{U: v})
				}
			}
		})
	}))
}

// joinedUint8 returns the structure's octet off when r.Joined holds it,
// else -1.
func joinedUint8(r *DataRecord, off int) int {
	if o := off - int(r.JoinedAt); o >= 0 && o < len(r.Joined) {
		return int(r.Joined[o])
	}
	return -1
}

// discoveryEntries calls fn with the start of each Discovery Log Page
// Entry the packet holds octets of: entry i at 1024*(i+1), i below
// NUMREC when the header showed it (entry 0 always, as tshark shows it).
func discoveryEntries(r *DataRecord, fn func(base int)) {
	end := r.At + uint64(len(r.Data))
	first := uint64(0)
	if r.JoinedAt > nvme.DiscoveryLogHeaderLen {
		// From the entry the octets joined to the packet begin in: its
		// items that end in this packet show here.
		first = (r.JoinedAt - nvme.DiscoveryLogHeaderLen) / nvme.DiscoveryLogEntryLen
	}
	for i := first; ; i++ {
		base := nvme.DiscoveryLogHeaderLen + i*nvme.DiscoveryLogEntryLen
		if base >= end || i > 0 && r.NUMRECKnown && r.NUMREC != 0 && i >= r.NUMREC || i >= 1<<20 {
			return
		}
		fn(int(base))
	}
}

// commandEffects calls fn with the start of each Commands Supported and
// Effects data structure (ACS0-ACS255, IOCS0-IOCS255; Base 2.0 5.16.1.6)
// the packet holds whole; the reserved octets 2048-4095 hold none.
func commandEffects(r *DataRecord, fn func(base int)) {
	o := (r.At + 3) &^ 3
	for ; o+4 <= r.At+uint64(len(r.Data)) && o < 2*nvme.CommandEffectsIOCSOff; o += 4 {
		fn(int(o))
	}
}

// anaGroups calls fn with the start of each ANA Group Descriptor (Base
// 2.0 5.16.1.13) of the log page's first packet — the header (octets
// 0-15: NGD, the number of groups) must be in it — whose first 32 octets
// it holds. (tshark follows a descriptor into the next packets; the
// captures' descriptors all fit the first.)
func anaGroups(r *DataRecord, fn func(base int)) {
	if r.At != 0 || len(r.Data) < nvme.ANAHeaderLen {
		return
	}
	ngd := int(r.Data[8]) | int(r.Data[9])<<8
	base := nvme.ANAHeaderLen
	for g := 0; g < ngd && base+nvme.ANAGroupDescriptorLen <= len(r.Data); g++ {
		fn(base)
		base += anaGroupLen(r, base)
	}
}

// anaGroupLen is the length of the ANA Group Descriptor at base: 32
// octets and NNS namespace IDs of 4, cut at the packet's end.
func anaGroupLen(r *DataRecord, base int) int {
	o := base - int(r.At)
	if o < 0 || o+8 > len(r.Data) {
		return nvme.ANAGroupDescriptorLen
	}
	nns := int(r.Data[o+4]) | int(r.Data[o+5])<<8 | int(r.Data[o+6])<<16 | int(r.Data[o+7])<<24
	n := nvme.ANAGroupDescriptorLen + 4*min(nns, 1<<16)
	return min(n, len(r.Data)-o)
}
