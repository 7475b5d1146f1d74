package rpcrdma

import (
	"github.com/rdmashark/rdmashark/internal/zerotest"
	"reflect"
	"slices"
	"testing"
)

// TestULBInfoResetClearsEveryField: Reset, which assigns field by field,
// leaves every field of ULBInfo as the zero value would be, but for the
// slices, which keep their backing arrays (length 0, capacity kept): a
// field added to ULBInfo and forgotten in Reset fails here.
func TestULBInfoResetClearsEveryField(t *testing.T) {
	var u ULBInfo
	checkReset(t, reflect.ValueOf(&u).Elem(), u.Reset)
}

// TestULBQueryResetClearsEveryField: the same of ULBQuery.Reset.
func TestULBQueryResetClearsEveryField(t *testing.T) {
	var q ULBQuery
	checkReset(t, reflect.ValueOf(&q).Elem(), q.Reset, "Body") // the caller's: not kept
}

// checkReset fills every field of v, calls reset and checks every field
// zero but the slices, emptied with their capacity kept (the slices named
// in dropped nil).
func checkReset(t *testing.T, v reflect.Value, reset func(), dropped ...string) {
	t.Helper()
	zerotest.Fill(t, v)
	caps := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			t.Fatalf("field %s still zero", v.Type().Field(i).Name)
		}
		if f.Kind() == reflect.Slice {
			caps[v.Type().Field(i).Name] = f.Cap()
		}
	}
	reset()
	for i := 0; i < v.NumField(); i++ {
		name, f := v.Type().Field(i).Name, v.Field(i)
		if f.Kind() == reflect.Slice && !slices.Contains(dropped, name) {
			if f.Len() != 0 || f.Cap() != caps[name] {
				t.Errorf("field %s: len %d cap %d after Reset, want 0 and %d", name, f.Len(), f.Cap(), caps[name])
			}
			continue
		}
		if !f.IsZero() {
			t.Errorf("field %s: %v after Reset, want zero", name, f.Interface())
		}
	}
}
