package rpcordma

import (
	"github.com/rdmashark/rdmashark/internal/zerotest"
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// TestClearKeepClearsEveryField: newRecord's clearKeep zeroes every field
// of RPCRecord but the three whose storage it keeps, so that a field
// added to RPCRecord and forgotten there fails here.
func TestClearKeepClearsEveryField(t *testing.T) {
	keep := map[string]bool{"Header": true, "RPC": true, "ULP": true}
	var r RPCRecord
	v := reflect.ValueOf(&r).Elem()
	for i := 0; i < v.NumField(); i++ {
		zerotest.Fill(t, v.Field(i))
		if v.Field(i).IsZero() {
			t.Fatalf("field %s still zero", v.Type().Field(i).Name)
		}
	}
	r.clearKeep()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if zero := v.Field(i).IsZero(); zero == keep[name] {
			t.Errorf("field %s: zero %v after clearKeep, want %v", name, zero, !keep[name])
		}
	}
}

// TestTxnResetClearsEveryField: newTxn's reset empties every slice of a
// Transaction and of its two RPCSides keeping its storage, zeroes every
// other field and numbers it, so that a field added to either and
// forgotten in reset fails here.
func TestTxnResetClearsEveryField(t *testing.T) {
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.Type() == reflect.TypeFor[RPCSide]() {
				fill(f)
				continue
			}
			zerotest.Fill(t, f)
			if f.IsZero() {
				t.Fatalf("field %s still zero", v.Type().Field(i).Name)
			}
		}
	}
	var check func(v reflect.Value, path string)
	check = func(v reflect.Value, path string) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			switch {
			case f.Type() == reflect.TypeFor[RPCSide]():
				check(f, name+".")
			case name == "seq":
				if f.Uint() != 7 {
					t.Errorf("seq %d after reset(7)", f.Uint())
				}
			case f.Kind() == reflect.Slice && f.Cap() == 1:
				if f.Len() != 0 {
					t.Errorf("field %s: len %d after reset, want 0", name, f.Len())
				}
			case !f.IsZero():
				t.Errorf("field %s not zero after reset", name)
			}
		}
	}
	var txn Transaction
	v := reflect.ValueOf(&txn).Elem()
	fill(v)
	txn.reset(7)
	check(v, "")
}

// TestAddSegmentSetsEveryField: addSegment reusing a slot sets every field
// of the Segment from the transport header's, empties Ops keeping its
// storage and zeroes the rest, so that a field added to Segment and
// forgotten there fails here.
func TestAddSegmentSetsEveryField(t *testing.T) {
	ch := &Chunk{Segments: make([]Segment, 1)}
	v := reflect.ValueOf(&ch.Segments[0]).Elem()
	for i := 0; i < v.NumField(); i++ {
		zerotest.Fill(t, v.Field(i))
	}
	ch.Segments = ch.Segments[:0]
	ch.addSegment(rpcrdma.Segment{Handle: 2, Length: 3, Offset: 4}, 5)
	got := ch.Segments[0]
	if got.Handle != 2 || got.Length != 3 || got.Offset != 4 || got.Position != 5 || len(got.Ops) != 0 || cap(got.Ops) != 1 {
		t.Errorf("addSegment: %+v", got)
	}
	got.Handle, got.Length, got.Offset, got.Position, got.Ops = 0, 0, 0, 0, nil
	if !reflect.ValueOf(got).IsZero() {
		t.Errorf("addSegment left fields set: %+v", got)
	}
}
