// Package zerotest helps the tests that hold a reset written field by
// field (per-message state reused instead of reallocated) to the rule that
// it clears every field: Fill makes a value non-zero everywhere, so that a
// field added later and forgotten by the reset is found still set.
package zerotest

import (
	"errors"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// Fill makes v and every field of it non-zero, recursively, unexported
// fields too: numbers 1, booleans true, strings "x", slices one element
// (itself filled) with a capacity of one, maps empty but made, pointers a
// fresh zero value, interfaces an error, times time.Unix(5, 0). Functions,
// channels and unsafe pointers are left as they are.
func Fill(tb testing.TB, v reflect.Value) {
	tb.Helper()
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		Fill(tb, s.Index(0))
		v.Set(s)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Interface:
		v.Set(reflect.ValueOf(errFill))
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			Fill(tb, v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(5, 0)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			Fill(tb, v.Field(i))
		}
	}
}

var errFill = errors.New("zerotest: filled")
