package rpcordma

import (
	"errors"
	"io"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
)

// TestBindingAskedWhatIsRead: the engine asks the Upper-Layer Binding for
// the NFS values only when its caller reads a field that shows them
// (dissect.Options.Fields), and for the object only when somebody hears
// transactions or exchanges; analyze and check, which do neither, get
// neither decoded. On rxe-nfs3 (NFSv3, whose bodies hold handles, names,
// attributes) and rxe-nfs41 (COMPOUNDs).
func TestBindingAskedWhatIsRead(t *testing.T) {
	only := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, m := range names {
				if n == m {
					return true
				}
			}
			return false
		}
	}
	var exchanges, objects int
	cases := []struct {
		name     string
		fields   func(string) bool
		exchange bool
		txn      bool
		want     rpcrdma.ULBWant
	}{
		{name: "analyze, check: nothing read"},
		{name: "dissect -T fields of no NFS value", fields: only("frame.number", "rpc.xid", "nfs.status", "nfs.main_opcode")},
		{name: "dissect -T fields -e nfs.offset3", fields: only("frame.number", "nfs.offset3"), want: rpcrdma.WantValues},
		{name: "dissect -V", fields: dissect.AllFields, want: rpcrdma.WantValues},
		{name: "exchanges", exchange: true, want: rpcrdma.WantObject},
		{name: "transactions", txn: true, want: rpcrdma.WantObject},
		{name: "export", exchange: true, txn: true, want: rpcrdma.WantObject},
		{name: "everything", fields: dissect.AllFields, exchange: true, want: rpcrdma.WantValues | rpcrdma.WantObject},
	}
	for _, capture := range []string{"rxe-nfs3.pcap", "rxe-nfs41.pcap"} {
		for _, c := range cases {
			b := nfs.NewBinding()
			exact, queries := 0, 0
			ulp := New(ULPFunc(func(q *ULPQuery, out *ULPInfo) {
				queries++
				if q.Want&^c.want != 0 {
					t.Fatalf("%s %s: asked %b, want at most %b", capture, c.name, q.Want, c.want)
				}
				if q.Want == c.want {
					exact++
				}
				b.Decode(q, out)
			}), NFSRDMAPort)
			ulps := []dissect.ULP{ulp}
			if c.txn {
				OnTransaction(ulps, func(*Transaction) {})
			}
			opts := dissect.Options{ULPs: ulps, Fields: c.fields}
			if c.exchange {
				opts.Exchange = func(x *dissect.Exchange) {
					exchanges++
					if x.Object.HasHandle {
						objects++
					}
				}
			}
			values := 0
			r, err := source.Open(capturePath(capture))
			if err != nil {
				t.Fatal(err)
			}
			err = dissect.NewEngine(opts).Run(r, func(p *dissect.Packet) error {
				for i := range Records(p) {
					u := &Records(p)[i].ULP
					values += len(u.Values)
					if u.Object != (rpcrdma.ULBObject{}) && c.want&rpcrdma.WantObject == 0 {
						t.Fatalf("%s %s: packet %d: object %+v not asked", capture, c.name, p.Number, u.Object)
					}
				}
				return nil
			})
			r.Close()
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if queries < 100 || exact < queries*9/10 {
				t.Errorf("%s %s: %d queries, %d asked for %b", capture, c.name, queries, exact, c.want)
			}
			if (values > 0) != (c.want&rpcrdma.WantValues != 0) {
				t.Errorf("%s %s: %d values in the records", capture, c.name, values)
			}
		}
	}
	if exchanges == 0 || objects == 0 {
		t.Errorf("%d exchanges, %d with an object", exchanges, objects)
	}
}
