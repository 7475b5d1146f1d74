package nfs_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// publicFields returns v's exported fields but those named in skip, by
// name, errors as their text, for comparing what two decodes reported.
func publicFields(v reflect.Value, skip ...string) map[string]any {
	out := map[string]any{}
next:
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		for _, s := range skip {
			if f.Name == s {
				continue next
			}
		}
		x := v.Field(i).Interface()
		if err, ok := x.(error); ok {
			x = err.Error()
		} else if x == nil {
			x = "<nil>"
		}
		out[f.Name] = x
	}
	return out
}

// TestValueModes: what the NFS binding reports does not depend on which
// extras the caller wants, but for the extras themselves: on every RPC
// message of the NFS captures (the backchannel's too), whole and cut
// short at several points (the walk's errors), a decode that wants
// neither values nor object reports the same names, operations, items,
// status and error as one that wants both, and no value or object; one
// that wants only the object the same object and name (ValuesObject keeps
// the handles and names only, counting the rest against the bounds); one
// that wants only the values the same values. The Info of each mode
// agrees the same way.
func TestValueModes(t *testing.T) {
	wants := []rpcrdma.ULBWant{rpcrdma.WantValues | rpcrdma.WantObject, rpcrdma.WantObject, rpcrdma.WantValues, 0}
	n, objects, values := 0, 0, 0
	for _, name := range append(nfsCaptures, "rxe-nfs-callback") {
		msgs, _ := messages(t, name)
		// One binding per mode: each hears the whole stream (the
		// callback programs the clients name).
		bs := make([]*nfs.Binding, len(wants))
		for i := range bs {
			bs[i] = nfs.NewBinding()
		}
		calls := callsByXID{}
		for _, m := range msgs {
			h := &m.hdr
			call := h.MsgType == oncrpc.Call
			k, ok := calls.of(h)
			if !ok {
				continue
			}
			if !h.HasBody() {
				continue
			}
			body := h.Payload()
			cuts := []int{len(body), len(body) - 1, len(body) - 6, len(body) / 2}
			for ci, cut := range cuts {
				if cut < 0 {
					continue
				}
				q := rpcrdma.ULBQuery{Reply: !call, Program: k.prog, Version: k.vers, Procedure: k.proc, Known: true,
					Body: body[:cut], Reduced: len(m.reads) > 0 || len(m.writes) > 0, ReadPositions: m.reads,
					HeaderLen: h.HeaderLen}
				for _, w := range m.written {
					q.WriteChunks = append(q.WriteChunks, uint32(w))
				}
				outs := make([]rpcrdma.ULBInfo, len(wants))
				for i, w := range wants {
					q.Want = w
					b := bs[i]
					if ci > 0 {
						// A cut body is not part of the
						// stream (the callback programs
						// named in it are not remembered).
						b = nfs.NewBinding()
					}
					b.Decode(&q, &outs[i])
				}
				where := fmt.Sprintf("%s frame %d (%d/%d/%d call %v, %d of %d bytes)", name, m.frame, k.prog, k.vers, k.proc, call, cut, len(body))
				ref := publicFields(reflect.ValueOf(outs[0]), "Values", "Arena", "ValuesDropped", "Object")
				for i := 1; i < len(wants); i++ {
					got := publicFields(reflect.ValueOf(outs[i]), "Values", "Arena", "ValuesDropped", "Object")
					if !reflect.DeepEqual(got, ref) {
						t.Fatalf("%s: want %b reports\n%v\nwant %b\n%v", where, wants[i], got, wants[0], ref)
					}
				}
				r := &outs[0]
				for i, w := range wants {
					o := &outs[i]
					if w&rpcrdma.WantObject != 0 {
						if o.Object.HasFH != r.Object.HasFH || o.Object.FHHash != r.Object.FHHash || !bytes.Equal(o.ObjectName(), r.ObjectName()) {
							t.Fatalf("%s: want %b: object %+v %q, want %+v %q", where, w, o.Object, o.ObjectName(), r.Object, r.ObjectName())
						}
					} else if o.Object != (rpcrdma.ULBObject{}) {
						t.Fatalf("%s: want %b: object %+v, not asked", where, w, o.Object)
					}
					if w&rpcrdma.WantValues != 0 {
						if !reflect.DeepEqual(o.Values, r.Values) || !bytes.Equal(o.Arena, r.Arena) || o.ValuesDropped != r.ValuesDropped {
							t.Fatalf("%s: want %b: %d values, want %d", where, w, len(o.Values), len(r.Values))
						}
					} else if len(o.Values) > 0 || o.ValuesDropped > 0 || (w&rpcrdma.WantObject == 0 && len(o.Arena) > 0) {
						t.Fatalf("%s: want %b: %d values, %d arena bytes, not asked", where, w, len(o.Values), len(o.Arena))
					}
				}
				n++
				if r.Object.HasFH || r.Object.NameLen > 0 {
					objects++
				}
				if len(r.Values) > 0 {
					values++
				}

				// The Info of each mode, as Decode leaves it.
				var infos [3]nfs.Info
				red := &nfs.Reduction{HeaderLen: h.HeaderLen, ReadPositions: m.reads, WriteChunks: m.writes}
				var errs [3]string
				for i, mode := range []nfs.ValueMode{nfs.ValuesAll, nfs.ValuesObject, nfs.ValuesNone} {
					infos[i].ValueMode = mode
					if err := infos[i].Decode(k.prog, k.vers, k.proc, call, body[:cut], red); err != nil {
						errs[i] = err.Error()
					}
				}
				iref := publicFields(reflect.ValueOf(infos[0]), "Values", "Arena", "ValuesDropped", "ValueMode")
				for i := 1; i < 3; i++ {
					if got := publicFields(reflect.ValueOf(infos[i]), "Values", "Arena", "ValuesDropped", "ValueMode"); !reflect.DeepEqual(got, iref) || errs[i] != errs[0] {
						t.Fatalf("%s: Info under mode %d: %v (%s)\nwant %v (%s)", where, i, got, errs[i], iref, errs[0])
					}
				}
				if len(infos[2].Values) > 0 || len(infos[2].Arena) > 0 {
					t.Fatalf("%s: ValuesNone kept %d values", where, len(infos[2].Values))
				}
				if o, r := infos[1].Object(), infos[0].Object(); o.HasFH != r.HasFH || o.FHHash != r.FHHash ||
					!bytes.Equal(infos[1].Arena[o.NameOff:o.NameOff+o.NameLen], infos[0].Arena[r.NameOff:r.NameOff+r.NameLen]) {
					t.Fatalf("%s: ValuesObject's Object %+v, ValuesAll's %+v", where, o, r)
				}
			}
		}
	}
	// The captures hold objects and values to compare.
	if n < 10000 || objects < 1000 || values < 5000 {
		t.Fatalf("%d bodies, %d with an object, %d with values: too few to tell", n, objects, values)
	}
	t.Logf("%d bodies (whole and cut), %d with an object, %d with values", n, objects, values)
}
