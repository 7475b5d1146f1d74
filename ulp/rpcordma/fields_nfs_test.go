package rpcordma

import (
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
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

// TestPerInstanceGroups: every field of the protocols that repeat per FPDU
// or per RPC-over-RDMA message says so (Field.Per), so that -V and -T json
// can show each FPDU or message apart; and a per-instance field's Get is
// its instances' values in order. (The registry holds RPC-over-RDMA's
// table as the command registers it: present_hook_test.go.)
func TestPerInstanceGroups(t *testing.T) {
	kinds := map[string]string{"iwarp_ddp": "fpdu", "iwarp_rdma": "fpdu", "rpcordma": "rpc", "rpc": "rpc",
		"nfs": "rpc", "mount": "rpc", "nfsacl": "rpc"}
	n := 0
	for _, f := range fields.Registry.All() {
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
	recs := []RPCRecord{{HasRPC: true}, {HasRPC: true}}
	recs[0].RPC.XID, recs[1].RPC.XID = 1, 2
	SetRecords(p, recs)
	f, _ := fields.Registry.Lookup("rpc.xid")
	if got := f.Values(p, nil); len(got) != 2 || got[0] != "0x00000001" || got[1] != "0x00000002" {
		t.Errorf("rpc.xid of two messages: %v", got)
	}
}

// TestFieldsAppendFormat: for every value of RPC-over-RDMA's fields on
// every packet of a RoCE and an iWARP NFS capture, AppendFormat appends
// exactly what Format returns, and AppendDisplay what Display returns
// (fields' TestAppendFormatIsFormat, for the fields this table adds).
func TestFieldsAppendFormat(t *testing.T) {
	set := fields.NewFieldSet(FieldTable)
	n := 0
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs41.pcap"} {
		runCapture(t, name, Options{}, func(p *dissect.Packet) {
			for _, f := range set.All() {
				f.Get(p, func(v fields.Value) {
					n++
					if got, want := f.AppendFormat([]byte("x|"), v), f.Format(v); string(got) != "x|"+want {
						t.Fatalf("%s packet %d %s: AppendFormat %q, Format %q", name, p.Number, f.Name, got, want)
					}
					if got, want := f.AppendDisplay([]byte("x|"), v), f.Display(v); string(got) != "x|"+want {
						t.Fatalf("%s packet %d %s: AppendDisplay %q, Display %q", name, p.Number, f.Name, got, want)
					}
				})
			}
		})
	}
	if n < 10000 {
		t.Errorf("only %d values compared", n)
	}
}

// TestValueNames: a display filter reads the names of RPC-over-RDMA's and
// RPC's values as tshark 4.0's do (fields' table from `tshark -G values`;
// the values are the specs': RFC 8166 section 4.2.1 for RDMA_NOMSG = 1,
// RFC 5531 section 9 for Reply = 1), and every field of the table that
// has names is a field this table registers.
func TestValueNames(t *testing.T) {
	reg := fields.FilterRegistry(fields.Registry)
	p := &dissect.Packet{}
	recs := []RPCRecord{{HasHeader: true, PrefixOK: true, HasRPC: true}}
	recs[0].Common.Vers, recs[0].Header.Vers = 1, 1
	recs[0].Common.Type, recs[0].Header.V1.Proc = 1, 1
	recs[0].RPC.MsgType = 1
	SetRecords(p, recs)
	for _, c := range []struct {
		src   string
		match bool
	}{
		{"rpcordma.msg_type == RDMA_NOMSG", true},
		{`rpcordma.msg_type == "rdma_nomsg"`, true},
		{"rpcordma.msg_type == RDMA_MSG", false},
		{"rpc.msgtyp == Reply", true},
	} {
		f, err := dfilter.Compile(c.src, reg)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if f.Match(p) != c.match {
			t.Errorf("%s: match %v", c.src, !c.match)
		}
	}
	if _, err := dfilter.Compile("rpc.msgtyp == Repl", reg); err == nil {
		t.Error("rpc.msgtyp == Repl compiles")
	}
}
