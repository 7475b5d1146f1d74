package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// fillRandom sets every field reachable from v by reflection: pointers and
// slices nil, empty or present at random, numbers over their whole range.
// A field added to Transaction is filled too, so a codec that forgets it
// fails TestTxnCodecRoundTrip.
func fillRandom(v reflect.Value, rng *rand.Rand) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillRandom(v.Field(i), rng)
			}
		}
	case reflect.Pointer:
		if rng.Intn(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(p.Elem(), rng)
		v.Set(p)
	case reflect.Slice:
		switch rng.Intn(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+rng.Intn(3), 4)
			for i := 0; i < s.Len(); i++ {
				fillRandom(s.Index(i), rng)
			}
			v.Set(s)
		}
	case reflect.String:
		v.SetString([]string{"", "forward", "READ", "µs ×", "RDMA_MSG", string(make([]byte, 300))}[rng.Intn(6)])
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 1)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, -1, 1, math.MaxInt32, math.MinInt64, rng.Int63()}[rng.Intn(6)])
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		u := []uint64{0, 1, math.MaxUint64, rng.Uint64()}[rng.Intn(4)]
		if bits := 8 * v.Type().Size(); bits < 64 {
			u &= 1<<bits - 1
		}
		v.SetUint(u)
	case reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 0.1, 1e300, rng.Float64() * 1e6}[rng.Intn(5)])
	default:
		panic("fillRandom: " + v.Type().String())
	}
}

// TestTxnCodecRoundTrip: every transaction written to a run reads back
// deeply equal, nil and empty slices apart, and the run ends with io.EOF.
func TestTxnCodecRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	var in []Transaction
	for range 2000 {
		var x Transaction
		fillRandom(reflect.ValueOf(&x).Elem(), rng)
		in = append(in, x)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	enc := txnEncoder{w: w}
	total, lastLen := 0, 0
	for i := range in {
		n, err := enc.encode(&in[i])
		if err != nil {
			t.Fatal(err)
		}
		total, lastLen = total+n, n
	}
	w.Flush()
	if total != buf.Len() {
		t.Fatalf("encode counted %d bytes, wrote %d", total, buf.Len())
	}
	data := buf.Bytes()
	dec := txnDecoder{r: bufio.NewReader(bytes.NewReader(data))}
	for i := range in {
		var got Transaction
		if err := dec.decode(&got); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, in[i]) {
			t.Fatalf("transaction %d:\n got %+v\nwant %+v", i, got, in[i])
		}
	}
	var x Transaction
	if err := dec.decode(&x); err != io.EOF {
		t.Fatalf("after the last: %v, want io.EOF", err)
	}
	// Cut anywhere inside the last record: an error, never a panic or a
	// silent end.
	lastRec := data[len(data)-lastLen:]
	for cut := 1; cut < lastLen; cut++ {
		dec := txnDecoder{r: bufio.NewReader(bytes.NewReader(lastRec[:lastLen-cut]))}
		var err error
		for err == nil {
			err = dec.decode(&x)
		}
		if err == io.EOF {
			t.Fatalf("cut %d bytes short: read to a clean end", cut)
		}
	}
}

// TestHexString: Hex32 and Hex64 print as "0x%08x" and "0x%016x".
func TestHexString(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0x10, 0xbeef, 0x7fffffff, 0xffffffff, 1 << 32, 1<<63 | 5, math.MaxUint64} {
		if got, want := Hex32(v).String(), fmt.Sprintf("0x%08x", uint32(v)); got != want {
			t.Errorf("Hex32(%#x) = %q, want %q", v, got, want)
		}
		if got, want := Hex64(v).String(), fmt.Sprintf("0x%016x", v); got != want {
			t.Errorf("Hex64(%#x) = %q, want %q", v, got, want)
		}
		if b, _ := Hex32(v).MarshalText(); string(b) != Hex32(v).String() {
			t.Errorf("Hex32(%#x).MarshalText = %q", v, b)
		}
		if b, _ := Hex64(v).MarshalText(); string(b) != Hex64(v).String() {
			t.Errorf("Hex64(%#x).MarshalText = %q", v, b)
		}
	}
}
