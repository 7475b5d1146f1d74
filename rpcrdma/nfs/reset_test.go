package nfs

import (
	"github.com/rdmashark/rdmashark/internal/zerotest"
	"reflect"
	"testing"
)

// composedReset is Info.reset as it was written before it assigned field
// by field — one composite literal of the whole Info, keeping the slices'
// storage (and now ValueMode) — the reference the test holds it to.
func composedReset(in *Info, prog, vers, proc uint32, call, cb bool, body []byte, red *Reduction) {
	ops, items, cbd := in.Ops[:0], in.Items[:0], in.CBDetails[:0]
	vals, arena := in.Values[:0], in.Arena[:0]
	*in = Info{Prog: Program(prog), Vers: vers, Proc: proc, Call: call, Callback: cb, Ops: ops, Items: items, CBDetails: cbd,
		Values: vals, Arena: arena, ValueMode: in.ValueMode}
	var r *Reduction
	if red != nil {
		in.red = *red
		r = &in.red
	}
	in.d = decoder{b: body, info: in, red: r, curOp: -1, vals: in.ValueMode}
	if in.ValueMode == ValuesNone {
		in.d.skipEnd = len(body)
	}
}

// TestInfoResetClearsEveryField: reset, which assigns field by field,
// leaves an Info whose every field was set exactly as the composite
// literal it replaced would, with and without a Reduction, so that a field
// added to Info or decoder and forgotten in reset fails here.
func TestInfoResetClearsEveryField(t *testing.T) {
	body := []byte{0, 0, 0, 1}
	for _, red := range []*Reduction{nil, {HeaderLen: 7, ReadPositions: []uint32{9}, Auto: true}} {
		for _, mode := range []ValueMode{ValuesAll, ValuesObject, ValuesNone} {
			var got, want Info
			zerotest.Fill(t, reflect.ValueOf(&got).Elem())
			zerotest.Fill(t, reflect.ValueOf(&want).Elem())
			got.ValueMode, want.ValueMode = mode, mode
			got.reset(100003, 3, 6, true, false, body, red)
			composedReset(&want, 100003, 3, 6, true, false, body, red)
			if !reflect.DeepEqual(&got, &want) {
				t.Errorf("reduction %v, mode %d: reset left\n%+v\nwant\n%+v", red != nil, mode, got, want)
			}
			if got.d.info != &got || (red != nil && got.d.red != &got.red) {
				t.Errorf("reduction %v, mode %d: the decoder points elsewhere", red != nil, mode)
			}
		}
	}
}
