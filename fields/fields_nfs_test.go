package fields

import (
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestMainOps checks nfs.main_opcode's choice against what tshark 4.0.17
// printed for two-operation COMPOUNDs built for the purpose (RPC over TCP
// to port 2049; the operation after CLOSE, ACCESS, GETATTR or PUTFH), and
// the COMPOUNDs of the real captures.
func TestMainOps(t *testing.T) {
	for _, tc := range []struct {
		ops  []nfs.Opnum4
		want []nfs.Opnum4
	}{
		{[]nfs.Opnum4{nfs.OP_CLOSE, nfs.OP_ACCESS}, []nfs.Opnum4{nfs.OP_CLOSE}},
		{[]nfs.Opnum4{nfs.OP_ACCESS, nfs.OP_NVERIFY}, []nfs.Opnum4{nfs.OP_ACCESS, nfs.OP_NVERIFY}},
		{[]nfs.Opnum4{nfs.OP_GETATTR, nfs.OP_PUTROOTFH}, []nfs.Opnum4{nfs.OP_GETATTR, nfs.OP_PUTROOTFH}},
		{[]nfs.Opnum4{nfs.OP_PUTFH, nfs.OP_SAVEFH}, []nfs.Opnum4{nfs.OP_PUTFH, nfs.OP_SAVEFH}},
		{[]nfs.Opnum4{nfs.OP_PUTFH, nfs.OP_GET_DIR_DELEGATION}, []nfs.Opnum4{nfs.OP_PUTFH}},
		{[]nfs.Opnum4{nfs.OP_CLOSE, nfs.OP_ILLEGAL}, []nfs.Opnum4{nfs.OP_ILLEGAL}},
		{[]nfs.Opnum4{nfs.OP_GETATTR, nfs.OP_VERIFY}, []nfs.Opnum4{nfs.OP_VERIFY}},
		// rxe-nfs41 frames 44, 80 and 122.
		{[]nfs.Opnum4{nfs.OP_SEQUENCE, nfs.OP_PUTROOTFH, nfs.OP_GETFH, nfs.OP_GETATTR}, []nfs.Opnum4{nfs.OP_PUTROOTFH, nfs.OP_GETATTR}},
		{[]nfs.Opnum4{nfs.OP_SEQUENCE, nfs.OP_PUTFH, nfs.OP_LOOKUP, nfs.OP_GETFH, nfs.OP_GETATTR}, []nfs.Opnum4{nfs.OP_LOOKUP}},
		{[]nfs.Opnum4{nfs.OP_SEQUENCE, nfs.OP_PUTFH, nfs.OP_GETATTR, nfs.OP_CLOSE}, []nfs.Opnum4{nfs.OP_CLOSE}},
		{nil, nil},
	} {
		codes := make([]uint32, len(tc.ops))
		for i, o := range tc.ops {
			codes[i] = uint32(o)
		}
		var got []nfs.Opnum4
		mainOps(codes, func(op uint32) { got = append(got, nfs.Opnum4(op)) })
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: main %v, tshark %v", tc.ops, got, tc.want)
		}
	}
}

// TestPerInstanceGroups: every field of the protocols that repeat per FPDU
// or per RPC-over-RDMA message says so (Field.Per), so that -V and -T json
// can show each FPDU or message apart; and a per-instance field's Get is
// its instances' values in order.
func TestPerInstanceGroups(t *testing.T) {
	kinds := map[string]string{"iwarp_ddp": "fpdu", "iwarp_rdma": "fpdu", "rpcordma": "rpc", "rpc": "rpc",
		"nfs": "rpc", "mount": "rpc", "nfsacl": "rpc"}
	n := 0
	for _, f := range Registry.All() {
		k, ok := kinds[f.Parent]
		if !ok {
			continue
		}
		n++
		if f.Per != k || f.At == nil {
			t.Errorf("%s (%s): Per %q, At set %v; want %q", f.Name, f.Parent, f.Per, f.At != nil, k)
		}
	}
	if n < 80 {
		t.Errorf("only %d fields in the per-instance protocols", n)
	}
	p := &dissect.Packet{}
	recs := []rpcordma.RPCRecord{{HasRPC: true}, {HasRPC: true}}
	recs[0].RPC.XID, recs[1].RPC.XID = 1, 2
	rpcordma.SetRecords(p, recs)
	f, _ := Registry.Lookup("rpc.xid")
	if got := f.Values(p, nil); len(got) != 2 || got[0] != "0x00000001" || got[1] != "0x00000002" {
		t.Errorf("rpc.xid of two messages: %v", got)
	}
}
