package diff

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteAssign is the least total cost of assigning each row of a
// rows ≤ cols matrix a distinct column, by trying every assignment.
func bruteAssign(cost [][]float64) float64 {
	best := math.Inf(1)
	used := make([]bool, len(cost[0]))
	var walk func(i int, sum float64)
	walk = func(i int, sum float64) {
		if i == len(cost) {
			best = math.Min(best, sum)
			return
		}
		for j := range used {
			if !used[j] {
				used[j] = true
				walk(i+1, sum+cost[i][j])
				used[j] = false
			}
		}
	}
	walk(0, 0)
	return best
}

// TestAssign: the Hungarian algorithm finds the least total cost that
// trying every assignment finds, on square and rectangular matrices both
// ways, with every column (or row) used at most once.
func TestAssign(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 300 {
		r, c := 1+rng.IntN(6), 1+rng.IntN(6)
		cost := make([][]float64, r)
		for i := range cost {
			cost[i] = make([]float64, c)
			for j := range cost[i] {
				cost[i][j] = float64(rng.IntN(10)) / 4
			}
		}
		got := assign(cost)
		seen := map[int]bool{}
		sum, n := 0.0, 0
		for i, j := range got {
			if j < 0 {
				continue
			}
			if seen[j] {
				t.Fatalf("trial %d: column %d twice", trial, j)
			}
			seen[j] = true
			sum += cost[i][j]
			n++
		}
		if n != min(r, c) {
			t.Fatalf("trial %d: %d pairs of %d×%d", trial, n, r, c)
		}
		want := 0.0
		if r <= c {
			want = bruteAssign(cost)
		} else {
			tr := make([][]float64, c)
			for j := range tr {
				tr[j] = make([]float64, r)
				for i := range r {
					tr[j][i] = cost[i][j]
				}
			}
			want = bruteAssign(tr)
		}
		if math.Abs(sum-want) > 1e-9 {
			t.Errorf("trial %d: %v costs %v, the best %v", trial, got, sum, want)
		}
	}
}

// TestMatchConns: alike connections in set-up order stay in it; a
// missing one leaves the one least like the rest unmatched; a kind never
// meets another.
func TestMatchConns(t *testing.T) {
	c := func(ord int, pkts float64) Conn {
		return Conn{Transport: "roce", ULP: "rpcordma", ServicePort: 20049, Ordinal: ord,
			Negotiation: []Field{{"state", "closed"}},
			Behaviour:   []Metric{{Name: "c2s packets", Kind: KindCount, Value: pkts}}}
	}
	// Same workload, some noise: in order.
	if m := matchConns([]Conn{c(1, 100), c(2, 1000)}, []Conn{c(1, 103), c(2, 990)}); m[0] != 0 || m[1] != 1 {
		t.Errorf("in order: %v", m)
	}
	// Set up the other way round.
	if m := matchConns([]Conn{c(1, 100), c(2, 1000)}, []Conn{c(1, 1010), c(2, 98)}); m[0] != 1 || m[1] != 0 {
		t.Errorf("swapped: %v", m)
	}
	// Indistinguishable: set-up order decides.
	if m := matchConns([]Conn{c(1, 100), c(2, 100)}, []Conn{c(1, 100), c(2, 100)}); m[0] != 0 || m[1] != 1 {
		t.Errorf("alike: %v", m)
	}
	// The first one gone.
	if m := matchConns([]Conn{c(1, 100), c(2, 1000)}, []Conn{c(1, 1000)}); m[0] != -1 || m[1] != 0 {
		t.Errorf("cut: %v", m)
	}
	other := c(1, 100)
	other.ServicePort = 4420
	if m := matchConns([]Conn{c(1, 100)}, []Conn{other}); m[0] != -1 {
		t.Errorf("another kind: %v", m)
	}
}
