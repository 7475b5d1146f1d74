package rpcordma

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
)

// pairedOn counts, per connection ID, the transactions with both their
// Call and their Reply in the capture at path.
func pairedOn(t *testing.T, path string) (map[int]int, *testEngine) {
	t.Helper()
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	paired := map[int]int{}
	e := NewEngine(Options{ULP: nfs.NewBinding(), Transaction: func(tx *Transaction) {
		if tx.Call != nil && tx.Reply != nil {
			paired[tx.Conn.ID]++
		}
	}})
	if err := e.Run(r, func(*dissect.Packet) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return paired, e
}

// TestLostREPDoesNotSplitTheConnection: a capture that lost the CM REP of
// a connection (here rxe-nfs41's second, packet 1961, the REP with the
// server's QPN 0x12; tshark: infiniband.mad.attributeid == 0x0013) took
// the client's requests, sent to that QPN, for a connection of their own
// without set-up, and the server's Replies for the REQ's connection: no
// Call met its Reply, and every chunk looked unadvertised. The client's
// first request names the QPN the REP carried.
func TestLostREPDoesNotSplitTheConnection(t *testing.T) {
	src := capturePath("rxe-nfs41.pcap")
	lt, frames := pcaptest.Read(t, src)
	path := filepath.Join(t.TempDir(), "no-rep.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(262144, lt); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if fr.Num == 1961 {
			continue
		}
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	whole, _ := pairedOn(t, src)
	cut, e := pairedOn(t, path)
	conns := e.Conns.Connections()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2 (the REP's loss splits none)", len(conns))
	}
	c := conns[1]
	if !c.REPLost || c.Server.QPN != 0x12 || c.Client.QPN != 0x12 {
		t.Errorf("connection 2: REPLost %v, QPNs client 0x%x server 0x%x; want the REP lost, both 0x12", c.REPLost, c.Client.QPN, c.Server.QPN)
	}
	if conns[0].REPLost {
		t.Error("connection 1 has its REP")
	}
	if whole[2] == 0 || cut[2] != whole[2] || cut[1] != whole[1] {
		t.Errorf("paired transactions per connection: %v without the REP, %v with it", cut, whole)
	}
}
