package nvme

import (
	"bytes"
	"strings"
	"testing"
)

// TestLayoutsWellFormed: every item of every layout lies inside its
// structure (Identify data 4096 octets, the entries their own size), has
// a length its kind can read, a mask inside its octets, and comes after
// the item before it or shares its octets (a bit field, a sub-field of a
// group): the order the fields show in.
func TestLayoutsWellFormed(t *testing.T) {
	size := map[string]int{"PowerStateDescriptor": PowerStateDescriptorLen, "DiscoveryLogEntry": DiscoveryLogEntryLen,
		"ANAGroupDescriptor": ANAGroupDescriptorLen, "CommandEffects": 4, "ErrorInformation": ErrorInformationEntryLen, "SMART": SMARTLogLen}
	for li, items := range AllLayouts {
		limit := IdentifyDataLen
		for k, n := range size {
			if strings.Contains(layoutName(li), k) {
				limit = n
			}
		}
		if strings.Contains(layoutName(li), "DiscoveryLogEntry") {
			limit = DiscoveryLogEntryLen // RDMA and TCP TSAS too
		}
		for i, it := range items {
			if it.Off < 0 || it.Len <= 0 || it.Off+it.Len > limit {
				t.Errorf("%s: octets %d-%d outside 0-%d", it.Name, it.Off, it.Off+it.Len-1, limit-1)
			}
			if it.Kind == ItemUint && it.Len > 8 || it.Kind == 0 {
				t.Errorf("%s: %s of %d octets", it.Name, it.Kind, it.Len)
			}
			if it.Mask != 0 && it.Len < 8 && it.Mask>>(8*it.Len) != 0 {
				t.Errorf("%s: mask %#x past %d octets", it.Name, it.Mask, it.Len)
			}
			if i > 0 && it.Off < items[i-1].Off && !strings.HasPrefix(it.Name, items[i-1].Name[:strings.LastIndex(items[i-1].Name, ".")+1]) {
				t.Errorf("%s at %d before %s at %d", it.Name, it.Off, items[i-1].Name, items[i-1].Off)
			}
		}
	}
}

func layoutName(i int) string {
	return []string{"IdentifyController", "PowerStateDescriptor", "IdentifyControllerVS", "IdentifyNamespace",
		"SMART", "ErrorInformation", "DiscoveryLog", "DiscoveryLogEntry", "DiscoveryLogEntryRDMA", "DiscoveryLogEntryTCP",
		"ANALog", "ANAGroupDescriptor", "CommandEffects"}[i]
}

// TestLayoutAgreesWithDecoders: on every Identify Controller and Identify
// Namespace the real captures (RoCE and iWARP) transfer, the layout's
// items read what the typed decoders (IdentifyController,
// IdentifyNamespace: written from the specification separately) read, and
// they read it as well from any packet-sized part holding the item.
func TestLayoutAgreesWithDecoders(t *testing.T) {
	item := func(items []Item, name string) *Item {
		for i := range items {
			if items[i].Name == name {
				return &items[i]
			}
		}
		t.Fatalf("no item %s", name)
		return nil
	}
	u := func(items []Item, name string, b []byte) uint64 {
		it := item(items, name)
		// From the part of b a 1024-octet packet would carry.
		at := it.Off / 1024 * 1024
		v, ok := it.Uint(b[at:min(len(b), at+1024)], at)
		if !ok {
			t.Fatalf("%s not in its packet", name)
		}
		return v
	}
	s := func(items []Item, name string, b []byte) []byte {
		v, ok := item(items, name).Bytes(b, 0)
		if !ok {
			t.Fatalf("%s not read", name)
		}
		return v
	}
	ctrls, nss := 0, 0
	for _, c := range []*nvmeCapture{roceCapture(t, "rxe-nvmeof.pcap"), iwarpCapture(t, "siw-nvmeof.pcap")} {
		for _, tr := range c.transfers {
			if !tr.write || tr.qid != 0 || len(tr.data) != IdentifyDataLen {
				continue
			}
			var ic IdentifyController
			if ic.DecodeFromBytes(tr.data) == nil && ic.IOCCSZ != 0 && ic.SQES != 0 {
				ctrls++
				L, b := IdentifyControllerItems, tr.data
				for _, x := range []struct {
					name string
					want uint64
				}{{"ctrl.vid", uint64(ic.VID)}, {"ctrl.ssvid", uint64(ic.SSVID)}, {"ctrl.rab", uint64(ic.RAB)}, {"ctrl.ieee", uint64(ic.IEEE)},
					{"ctrl.cmic", uint64(ic.CMIC)}, {"ctrl.mdts", uint64(ic.MDTS)}, {"ctrl.cntlid", uint64(ic.CNTLID)}, {"ctrl.ver", uint64(ic.VER)},
					{"ctrl.ctratt", uint64(ic.CTRATT)}, {"ctrl.ctratt.tbkas", uint64(ic.CTRATT>>6) & 1}, {"ctrl.cntrltype", uint64(ic.CNTRLTYPE)},
					{"ctrl.kas", uint64(ic.KAS)}, {"ctrl.sqes", uint64(ic.SQES)}, {"ctrl.sqes.mins", uint64(ic.SQES & 0xf)}, {"ctrl.sqes.maxs", uint64(ic.SQES >> 4)},
					{"ctrl.cqes", uint64(ic.CQES)}, {"ctrl.maxcmd", uint64(ic.MAXCMD)}, {"ctrl.nn", uint64(ic.NN)}, {"ctrl.sgls", uint64(ic.SGLS)},
					{"ctrl.sgls.kdbs", uint64(ic.SGLS>>2) & 1}, {"ctrl.nvmeof.ioccsz", uint64(ic.IOCCSZ)}, {"ctrl.nvmeof.iorcsz", uint64(ic.IORCSZ)},
					{"ctrl.nvmeof.icdoff", uint64(ic.ICDOFF)}, {"ctrl.nvmeof.fcatt", uint64(ic.FCATT)}, {"ctrl.nvmeof.msdbd", uint64(ic.MSDBD)},
					{"ctrl.nvmeof.ofcs", uint64(ic.OFCS)}} {
					if got := u(L, x.name, b); got != x.want {
						t.Errorf("%s %v: %s %#x, decoder %#x", c.name, tr.frames, x.name, got, x.want)
					}
				}
				if !bytes.Equal(s(L, "ctrl.sn", b), ic.SN) || !bytes.Equal(s(L, "ctrl.mn", b), ic.MN) ||
					!bytes.Equal(s(L, "ctrl.fr", b), ic.FR) || !bytes.Equal(s(L, "ctrl.subnqn", b), ic.SUBNQN) {
					t.Errorf("%s %v: SN/MN/FR/SUBNQN differ: %q %q %q %q / %q %q %q %q", c.name, tr.frames, s(L, "ctrl.sn", b), s(L, "ctrl.mn", b), s(L, "ctrl.fr", b), s(L, "ctrl.subnqn", b), ic.SN, ic.MN, ic.FR, ic.SUBNQN)
				}
				continue
			}
			var ns IdentifyNamespace
			if ns.DecodeFromBytes(tr.data) == nil && ns.NSZE != 0 && ns.NCAP != 0 && ns.NSZE >= ns.NUSE {
				nss++
				L, b := IdentifyNamespaceItems, tr.data
				for _, x := range []struct {
					name string
					want uint64
				}{{"ns.nsze", ns.NSZE}, {"ns.ncap", ns.NCAP}, {"ns.nuse", ns.NUSE}, {"ns.nlbaf", uint64(ns.NLBAF)}, {"ns.flbas", uint64(ns.FLBAS)}, {"ns.nmic", uint64(ns.NMIC)}} {
					if got := u(L, x.name, b); got != x.want {
						t.Errorf("%s %v: %s %d, decoder %d", c.name, tr.frames, x.name, got, x.want)
					}
				}
				if !bytes.Equal(s(L, "ns.nguid", b), ns.NGUID[:]) || !bytes.Equal(s(L, "ns.eui64", b), ns.EUI64[:]) {
					t.Errorf("%s %v: NGUID/EUI64 differ", c.name, tr.frames)
				}
			}
		}
	}
	if ctrls < 2 || nss < 2 {
		t.Errorf("%d Identify Controller, %d Identify Namespace data checked", ctrls, nss)
	}
}
