package dissect

import (
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
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
