package report

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// tailWriter passes on all but the last three bytes written to it, whatever
// pieces they come in: empty writes, single bytes, pieces shorter than
// what it holds and long ones.
func TestTailWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		data := make([]byte, r.IntN(40))
		for k := range data {
			data[k] = byte('a' + r.IntN(26))
		}
		var out bytes.Buffer
		tw := &tailWriter{w: &out}
		for rest := data; len(rest) > 0 || r.IntN(4) == 0; {
			n := min(len(rest), r.IntN(6))
			if k, err := tw.Write(rest[:n]); k != n || err != nil {
				t.Fatalf("Write of %d bytes: %d, %v", n, k, err)
			}
			rest = rest[n:]
			if len(rest) == 0 {
				break
			}
		}
		cut := max(0, len(data)-3)
		if out.String() != string(data[:cut]) || string(tw.tail[:tw.n]) != string(data[cut:]) {
			t.Fatalf("case %d: %q passed on, %q kept, of %q", i, out.String(), tw.tail[:tw.n], data)
		}
	}
}
