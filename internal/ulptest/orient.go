package ulptest

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Oriented checks that ulps (fresh ones for each run) orient the
// connections of the RoCEv2 capture name when its set-up is cut out
// (issue 28, dissect/orient.go). The capture is cut twice with
// pcaptest.WithoutSetUp — its CM MADs and every frame before an RC
// Acknowledge, the first one the server sent and the first one the
// client sent — so that its first connection's first packet tells
// neither side's role and the engine's guess (the first packet's sender
// is the client) is once wrong and once right. In each cut, every
// connection must have the client the whole capture's set-up names (the
// CM REQ's sender, as tshark shows it); where the guess was wrong, the
// first connection's roles must have been told by a packet its ULP read
// (Connection.RolesToldBy), not guessed. (Where the guess was right, a
// Send no ULP can read — SMB Direct's empty Data Transfer Message, sent
// by either side — may settle it before a packet tells: still right.)
// It returns the cut captures' engines, the server-first cut's first.
func Oriented(t *testing.T, name string, ulps func() []dissect.ULP) []*dissect.Engine {
	t.Helper()
	whole, _, _ := Run(t, name, ulps()...)
	clientOf := map[[2]string]string{} // by the two addresses, in order
	for _, c := range whole.Conns.Connections() {
		if c.State == dissect.StateNoSetup || c.Transport != dissect.TransportRoCE {
			t.Fatalf("%s: connection %d: %s %s; want RoCE with its set-up", name, c.ID, c.Transport, c.State)
		}
		for _, k := range [][2]string{{c.Client.Address, c.Server.Address}, {c.Server.Address, c.Client.Address}} {
			if was, ok := clientOf[k]; ok && was != c.Client.Address {
				t.Fatalf("%s: connections between %v have clients %s and %s", name, k, was, c.Client.Address)
			}
			clientOf[k] = c.Client.Address
		}
	}
	// The first RC Acknowledge each side sent (opcode 0x11, IBA Vol 1
	// 9.2.1), read by hand.
	_, frames := pcaptest.Read(t, Path(name))
	var firstACK [2]int // by the sender: [0] the client, [1] the server
	for _, fr := range frames {
		r, ok := pcaptest.ParseRoCEv2(fr.Data)
		if !ok || r.OpCode != 0x11 {
			continue
		}
		for k, client := range clientOf {
			if k[0] != r.Src.String() {
				continue
			}
			i := 1
			if client == k[0] {
				i = 0
			}
			if firstACK[i] == 0 {
				firstACK[i] = fr.Num
			}
		}
	}
	var out []*dissect.Engine
	for _, i := range []int{1, 0} {
		if firstACK[i] == 0 {
			t.Fatalf("%s: no RC Acknowledge from the %s", name, []string{"client", "server"}[i])
		}
		path, kept := pcaptest.WithoutSetUp(t, Path(name), firstACK[i]-1, nil)
		e, _, _ := Run(t, path, ulps()...)
		conns := e.Conns.Connections()
		if len(conns) == 0 {
			t.Fatalf("%s from frame %d: no connection", name, firstACK[i])
		}
		for _, c := range conns {
			want := clientOf[[2]string{c.Client.Address, c.Server.Address}]
			first := kept[c.FirstPacket-1]
			switch {
			case c.State != dissect.StateNoSetup:
				t.Errorf("%s from frame %d: connection %d (frame %d of the capture on): %s; want no-setup", name, firstACK[i], c.ID, first, c.State)
			case c.Client.Address != want:
				t.Errorf("%s from frame %d: connection %d (frame %d of the capture on): client %s; want %s (the CM REQ's sender)", name, firstACK[i], c.ID, first, c.Client.Address, want)
			case i == 1 && c.ID == conns[0].ID && (c.RolesToldBy == 0 || c.RolesGuessed):
				t.Errorf("%s from frame %d: connection %d (frame %d of the capture on): roles guessed; want told by a packet", name, firstACK[i], c.ID, first)
			}
		}
		// The per-direction counters moved with the roles: what the
		// connections count from their clients is every RC packet the
		// cut holds from a client's address, read by hand.
		keptSet := map[int]bool{}
		for _, n := range kept {
			keptSet[n] = true
		}
		var fromClients, counted uint64
		for _, fr := range frames {
			if r, ok := pcaptest.ParseRoCEv2(fr.Data); ok && keptSet[fr.Num] && r.RC() {
				for k, client := range clientOf {
					if k[0] == r.Src.String() && client == k[0] {
						fromClients++
					}
				}
			}
		}
		for _, c := range conns {
			counted += c.Dir[dissect.DirClientToServer.Index()].Packets
		}
		if counted != fromClients {
			t.Errorf("%s from frame %d: the connections count %d packets from their clients; the cut holds %d RC packets from them", name, firstACK[i], counted, fromClients)
		}
		if c := conns[0]; kept[c.FirstPacket-1] != firstACK[i] {
			t.Errorf("%s from frame %d: the first connection starts at frame %d of the capture", name, firstACK[i], kept[c.FirstPacket-1])
		}
		out = append(out, e)
	}
	return out
}

// FuzzSender fuzzes o's Sender (dissect.Orienter) with an opcode and a
// payload, seeded from every RC packet of the RoCEv2 capture name (its
// opcode and what follows its extension headers): no input may panic, and the answer is
// one of the three sides.
func FuzzSender(f *testing.F, name string, o dissect.Orienter) {
	ops, payloads := senderInputs(f, name)
	for i := range ops {
		f.Add(byte(ops[i]), payloads[i])
	}
	f.Fuzz(func(t *testing.T, op byte, payload []byte) {
		switch s := o.Sender(roce.OpCode(op), payload); s {
		case dissect.SideUnknown, dissect.SideClient, dissect.SideServer:
		default:
			t.Fatalf("Sender(%#x, %d octets) = %d", op, len(payload), s)
		}
	})
}

// SenderAllocates fails t when o's Sender allocates on any RC packet of
// the RoCEv2 capture name that starts a Send: the engine asks it of those
// packets of every connection whose set-up the capture lacks until one
// tells, on the per-packet path, which allocates nothing (it orients RDMA
// Reads and Writes itself and asks of nothing else).
func SenderAllocates(t *testing.T, name string, o dissect.Orienter) {
	t.Helper()
	all, allPayloads := senderInputs(t, name)
	var ops []roce.OpCode
	var payloads [][]byte
	for i, op := range all {
		if op.IsSend() && (op.IsFirst() || op.IsOnly()) {
			ops, payloads = append(ops, op), append(payloads, allPayloads[i])
		}
	}
	if len(ops) == 0 {
		t.Fatalf("%s: no RC packet starts a Send", name)
	}
	if n := testing.AllocsPerRun(3, func() {
		for i := range ops {
			o.Sender(ops[i], payloads[i])
		}
	}); n != 0 {
		t.Errorf("%s: Sender allocates %v times over %d Sends", name, n, len(ops))
	}
}

// senderInputs are what the engine asks an Orienter of each RC packet of
// the capture name: its opcode and what follows its extension headers
// (dissect's decoder reads them).
func senderInputs(t testing.TB, name string) ([]roce.OpCode, [][]byte) {
	_, frames := pcaptest.Read(t, Path(name))
	d := &dissect.Decoder{RoCEPort: dissect.DefaultRoCEPort}
	p := new(dissect.Packet)
	var ops []roce.OpCode
	var payloads [][]byte
	for _, fr := range frames {
		*p = dissect.Packet{Number: fr.Num, LinkType: layersEthernet, CaptureLength: len(fr.Data), Length: fr.CI.Length}
		d.Decode(p, fr.Data)
		if !p.Has(roce.LayerTypeBTH) || p.CM.Attr != 0 {
			continue
		}
		switch p.BTH.OpCode.Transport() {
		case roce.TransportRC, roce.TransportUC, roce.TransportXRC:
			ops = append(ops, p.BTH.OpCode)
			payloads = append(payloads, append([]byte(nil), p.BTH.Payload...))
		}
	}
	return ops, payloads
}

// layersEthernet is the link type of the ULP captures (Ethernet, RoCEv2).
const layersEthernet = layers.LinkTypeEthernet
