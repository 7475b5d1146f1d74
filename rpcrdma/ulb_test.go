package rpcrdma

import (
	"errors"
	"reflect"
	"testing"
)

// TestULBInfoResetClearsEveryField: Reset empties every slice of ULBInfo
// keeping its capacity and zeroes every other field, so that a field added
// to ULBInfo and forgotten in Reset fails here.
func TestULBInfoResetClearsEveryField(t *testing.T) {
	var u ULBInfo
	v := reflect.ValueOf(&u).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(1)
		case reflect.Uint32:
			f.SetUint(1)
		case reflect.String:
			f.SetString("x")
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Interface:
			f.Set(reflect.ValueOf(errors.New("x")))
		case reflect.Struct:
			f.Field(0).SetBool(true) // ULBObject.HasFH
		default:
			t.Fatalf("field %s: kind %v not set by this test", v.Type().Field(i).Name, f.Kind())
		}
		if f.IsZero() {
			t.Fatalf("field %s still zero", v.Type().Field(i).Name)
		}
	}
	u.Reset()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() == reflect.Slice {
			if f.Len() != 0 || f.Cap() != 1 {
				t.Errorf("field %s: len %d cap %d after Reset, want 0 and its capacity 1", name, f.Len(), f.Cap())
			}
			continue
		}
		if !f.IsZero() {
			t.Errorf("field %s not zero after Reset", name)
		}
	}
}
