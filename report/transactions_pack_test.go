package report

import (
	"errors"
	"math/rand"
	"reflect"
	"testing"
)

// TestTransactionPack: every transaction added reads back deeply equal,
// in order (nil and empty slices apart: fillRandom makes both), each
// decoded afresh; an error of fn stops the walk and is returned.
func TestTransactionPack(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	var in []Transaction
	var p TransactionPack
	if err := p.Each(func(*Transaction) error { return errors.New("called on an empty pack") }); err != nil {
		t.Fatal(err)
	}
	for range 500 {
		var x Transaction
		fillRandom(reflect.ValueOf(&x).Elem(), rng)
		in = append(in, x)
		p.Add(&x)
	}
	if p.Len() != len(in) {
		t.Fatalf("Len %d, added %d", p.Len(), len(in))
	}
	var out []Transaction
	if err := p.Each(func(x *Transaction) error { out = append(out, *x); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read back %d of %d", len(out), len(in))
	}
	for i := range in {
		if !reflect.DeepEqual(out[i], in[i]) {
			t.Fatalf("transaction %d differs:\n got %+v\nwant %+v", i, out[i], in[i])
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := p.Each(func(*Transaction) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Each after fn failed: %v, %d calls", err, n)
	}
}
