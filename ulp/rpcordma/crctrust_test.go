package rpcordma

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
)

// TestCRCsNeverRightAreNotDiscarded: rxe-nfs3.pcap with the ICRC of every
// RoCE frame the client (192.0.2.2) sent zeroed, as a capture taken where
// the CRCs are not yet filled in would show them. No CRC of the client's
// is ever right, so none of its packets is taken for a corrupted one: the
// engine analyses them as received (the same 2 connections and 618
// transactions as the capture itself, every Call answered) while each one
// still fails its ICRC. The server's packets, whose ICRCs are right, are
// untouched. Discarding every bad-CRC packet would leave the client's side
// empty: no connection set-up, no Calls.
func TestCRCsNeverRightAreNotDiscarded(t *testing.T) {
	name := capturePath("rxe-nfs3.pcap")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(data) != 0xa1b2c3d4 {
		t.Fatalf("%s: not a little-endian microsecond pcap", name)
	}
	zeroed := 0
	for off := 24; off+16 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		frame := data[off+16 : off+16+n]
		if r, ok := pcaptest.ParseRoCEv2(frame); ok && r.ICRCGood() && bytes.Equal(frame[26:30], []byte{192, 0, 2, 2}) {
			clear(frame[n-4:])
			zeroed++
		}
		off += 16 + n
	}
	if zeroed < 1000 {
		t.Fatalf("%d client frames zeroed: too few to tell", zeroed)
	}

	run := func(b []byte) (*testEngine, int, int, int) {
		r, err := source.NewReader(bytes.NewReader(b), "zeroed.pcap")
		if err != nil {
			t.Fatal(err)
		}
		var txns, bad, discarded int
		e := NewEngine(Options{ULP: nfs.NewBinding(), Transaction: func(tx *Transaction) {
			if tx.Call != nil && tx.Reply != nil {
				txns++
			}
		}})
		err = e.Run(r, func(p *dissect.Packet) error {
			if p.CRCFailed() {
				bad++
			}
			if p.CRCDiscarded {
				discarded++
			}
			return nil
		})
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		return e, txns, bad, discarded
	}
	orig, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	eo, wantTxns, _, _ := run(orig)
	ez, txns, bad, discarded := run(data)
	if bad != zeroed || discarded != 0 {
		t.Errorf("%d packets fail their ICRC (want the %d zeroed), %d discarded (want 0)", bad, zeroed, discarded)
	}
	if wantTxns != 618 || txns != wantTxns {
		t.Errorf("%d paired transactions, the capture itself has %d (tshark: 618 Calls over RDMA)", txns, wantTxns)
	}
	if no, nz := len(eo.Conns.Connections()), len(ez.Conns.Connections()); nz != no || no != 2 {
		t.Errorf("%d connections, the capture itself has %d", nz, no)
	}
}
