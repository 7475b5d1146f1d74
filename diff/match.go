package diff

import (
	"math"
	"sort"
	"strconv"
)

// Connections are matched kind by kind (transport, ULP, service port and,
// for NVMe/RDMA, the queue ID): within a kind, by the assignment of least
// total distance (Hungarian algorithm), the distance of two connections
// being how unlike their negotiation and behaviour are, plus a small
// weight on their set-up order. Two runs of one workload match in set-up
// order; connections set up in another order (NFS mounts racing) still
// meet their counterparts; when one capture has more connections of a
// kind, the ones least like any of the other's are the ones reported as
// appearing or disappearing.

// orderWeight is the weight of the set-up order in the distance: less
// than a difference of behaviour that tells two connections apart, more
// than run-to-run noise of connections that do the same.
const orderWeight = 0.1

// maxAssignment bounds the connections of one kind matched by the
// Hungarian algorithm (O(n³)); a kind with more on a side is matched in
// set-up order.
const maxAssignment = 400

// kind is the role without the ordinal.
func (c *Conn) kind() string {
	k := c.Transport + " " + c.ULP + " :" + strconv.Itoa(int(c.ServicePort))
	if c.Queue != "" {
		k += " " + c.Queue
	}
	return k
}

// distance is how unlike two connections of one kind are, in [0, 2]:
// the share of negotiated fields that differ (or are on one side only)
// plus the mean over behaviour figures of |b−n| / max(b, n).
func distance(b, n *Conn) float64 {
	var neg float64
	nv := make(map[string]string, len(n.Negotiation))
	for _, f := range n.Negotiation {
		nv[f.Name] = f.Value
	}
	union := len(n.Negotiation)
	for _, f := range b.Negotiation {
		v, ok := nv[f.Name]
		if !ok {
			union++
			neg++
		} else if v != f.Value {
			neg++
		}
	}
	// Fields of n that b lacks.
	bn := make(map[string]bool, len(b.Negotiation))
	for _, f := range b.Negotiation {
		bn[f.Name] = true
	}
	for _, f := range n.Negotiation {
		if !bn[f.Name] {
			neg++
		}
	}
	d := 0.0
	if union > 0 {
		d = neg / float64(union)
	}
	nm := make(map[string]float64, len(n.Behaviour))
	for _, m := range n.Behaviour {
		nm[m.Name] = m.Value
	}
	var beh float64
	count := 0
	seen := make(map[string]bool, len(b.Behaviour))
	for _, m := range b.Behaviour {
		seen[m.Name] = true
		beh += relDiff(m.Value, nm[m.Name])
		count++
	}
	for _, m := range n.Behaviour {
		if !seen[m.Name] {
			beh += relDiff(0, m.Value)
			count++
		}
	}
	if count > 0 {
		d += beh / float64(count)
	}
	return d
}

func relDiff(a, b float64) float64 {
	m := math.Max(math.Abs(a), math.Abs(b))
	if m == 0 {
		return 0
	}
	return math.Abs(a-b) / m
}

// matchConns pairs the base's connections with the new capture's:
// pairs[i] is the index in nw of base[i]'s counterpart, -1 for none.
func matchConns(base, nw []Conn) []int {
	out := make([]int, len(base))
	for i := range out {
		out[i] = -1
	}
	type group struct{ b, n []int }
	groups := map[string]*group{}
	var order []string
	get := func(k string) *group {
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		return g
	}
	for i := range base {
		g := get(base[i].kind())
		g.b = append(g.b, i)
	}
	for i := range nw {
		g := get(nw[i].kind())
		g.n = append(g.n, i)
	}
	sort.Strings(order)
	for _, k := range order {
		g := groups[k]
		if len(g.b) == 0 || len(g.n) == 0 {
			continue
		}
		// In set-up order within the kind (the profile's order).
		sort.SliceStable(g.b, func(i, j int) bool { return base[g.b[i]].Ordinal < base[g.b[j]].Ordinal })
		sort.SliceStable(g.n, func(i, j int) bool { return nw[g.n[i]].Ordinal < nw[g.n[j]].Ordinal })
		if len(g.b) == 1 && len(g.n) == 1 {
			out[g.b[0]] = g.n[0]
			continue
		}
		if len(g.b) > maxAssignment || len(g.n) > maxAssignment {
			for i := 0; i < len(g.b) && i < len(g.n); i++ {
				out[g.b[i]] = g.n[i]
			}
			continue
		}
		cost := make([][]float64, len(g.b))
		for i, bi := range g.b {
			cost[i] = make([]float64, len(g.n))
			pb := (float64(i) + 0.5) / float64(len(g.b))
			for j, nj := range g.n {
				pn := (float64(j) + 0.5) / float64(len(g.n))
				cost[i][j] = distance(&base[bi], &nw[nj]) + orderWeight*math.Abs(pb-pn)
			}
		}
		for i, j := range assign(cost) {
			if j >= 0 {
				out[g.b[i]] = g.n[j]
			}
		}
	}
	return out
}

// assign solves the assignment problem on an r×c cost matrix: each row
// gets a distinct column (r ≤ c) or, when r > c, each column a distinct
// row, at the least total cost (Hungarian algorithm with potentials,
// O(r²c)). It returns each row's column, -1 for a row left without one.
// Deterministic: the same matrix gives the same assignment.
func assign(cost [][]float64) []int {
	r := len(cost)
	if r == 0 {
		return nil
	}
	c := len(cost[0])
	if r > c {
		// Transpose: assign columns to rows.
		t := make([][]float64, c)
		for j := range t {
			t[j] = make([]float64, r)
			for i := range r {
				t[j][i] = cost[i][j]
			}
		}
		colRow := assign(t)
		out := make([]int, r)
		for i := range out {
			out[i] = -1
		}
		for j, i := range colRow {
			if i >= 0 {
				out[i] = j
			}
		}
		return out
	}
	// 1-based arrays; p[j] the row given column j.
	u := make([]float64, r+1)
	v := make([]float64, c+1)
	p := make([]int, c+1)
	way := make([]int, c+1)
	for i := 1; i <= r; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, c+1)
		used := make([]bool, c+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta := math.Inf(1)
			j1 := 0
			for j := 1; j <= c; j++ {
				if used[j] {
					continue
				}
				cur := cost[i0-1][j-1] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= c; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
			if j0 == 0 {
				break
			}
		}
	}
	out := make([]int, r)
	for i := range out {
		out[i] = -1
	}
	for j := 1; j <= c; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}
