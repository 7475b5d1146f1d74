package diff

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// Class is what a change is about; --fail-on selects classes.
type Class string

const (
	Negotiation Class = "negotiation"
	Behaviour   Class = "behaviour"
	Findings    Class = "findings"
)

// Tolerances say how far a behaviour figure may move before it is a
// change. Negotiated values and findings have none: any difference is a
// change (a finding count moves with the count tolerance, though: it
// counts events, as behaviour does).
type Tolerances struct {
	// Count is the relative tolerance of counts and byte totals, and
	// CountAbs an absolute slack on top: a count is changed when
	// |new-base| > max(CountAbs, Count×max(base,new)).
	Count    float64 `json:"count"`
	CountAbs float64 `json:"count_abs"`
	// Latency and LatencyTail are the relative tolerances of the p50
	// and the p99 latency of an exchange name: changed when
	// |new-base| > tolerance×base, compared only when both captures have
	// MinSamples latencies of it (fewer say nothing of a quantile), and
	// only when the difference is also more than twice the sketch's
	// accuracy (±1%).
	Latency     float64 `json:"latency"`
	LatencyTail float64 `json:"latency_tail"`
	MinSamples  uint64  `json:"min_samples"`
	// Alpha is the significance level of the tests on latency
	// distributions (docs/diff.md): a latency change must be unlikely as
	// noise — p < Alpha — on top of exceeding its tolerance. The
	// distribution as a whole changes when its Mann-Whitney U test gives
	// p < Alpha and its Hodges-Lehmann shift exceeds Latency (the
	// minimum effect: a huge capture makes a 1% shift significant, not a
	// change); the p50 when it moved past Latency and the same test gives
	// p < Alpha; the p99 when it moved past LatencyTail and Fisher's
	// exact test of the shares beyond the lower p99 gives p < Alpha.
	Alpha float64 `json:"alpha"`
	// SizeEffect is the minimum effect of a size distribution's change:
	// it changes when its Mann-Whitney U test gives p < Alpha and its
	// rank-biserial correlation |P(new > base) − P(new < base)| is at
	// least SizeEffect. A
	// bucket's count that moves past the count tolerance is a change when
	// its histogram's count did too, or else when its share of the
	// histogram moved by Fisher's exact test at Alpha.
	SizeEffect float64 `json:"size_effect"`
}

// DefaultTolerances: counts within 10% or 2, p50 within 20%, p99 within
// 50% (a tail moves more between runs than the median), quantiles from at
// least 20 samples, latency changes significant at 1%.
var DefaultTolerances = Tolerances{Count: 0.10, CountAbs: 2, Latency: 0.20, LatencyTail: 0.50, MinSamples: 20, Alpha: 0.01, SizeEffect: 0.1}

// Row is one compared item: a negotiated field, a behaviour figure, a
// rule's finding count, a connection or exchange name present on one side
// only.
type Row struct {
	Class Class `json:"class"`
	// Scope is what the item belongs to: "connection ROLE",
	// "exchange ULP NAME", "capture".
	Scope string `json:"scope"`
	Name  string `json:"name"`
	// Base and New are the values as text, "" when absent on that side.
	Base string `json:"base"`
	New  string `json:"new"`
	// Changed: a difference beyond the tolerances.
	Changed bool `json:"changed"`
	// Note says how the difference compares with its tolerance, or why
	// the item was not compared ("3 samples: fewer than 20").
	Note string `json:"note,omitempty"`
}

// Compare compares two profiles: every item of either, in order
// (negotiation, behaviour, findings; connections in their base order,
// then those only the new capture has). It is pure.
func Compare(base, nw *Profile, tol Tolerances) []Row {
	var rows []Row
	// Connections by kind, then similarity and set-up order (match.go).
	type pair struct{ b, n *Conn }
	var pairs []pair
	match := matchConns(base.Connections, nw.Connections)
	matched := make([]bool, len(nw.Connections))
	for i := range base.Connections {
		p := pair{b: &base.Connections[i]}
		if j := match[i]; j >= 0 {
			p.n = &nw.Connections[j]
			matched[j] = true
		}
		pairs = append(pairs, p)
	}
	for j := range nw.Connections {
		if !matched[j] {
			pairs = append(pairs, pair{nil, &nw.Connections[j]})
		}
	}
	var beh []Row
	for _, p := range pairs {
		switch {
		case p.n == nil:
			rows = append(rows, Row{Class: Negotiation, Scope: "connection " + p.b.Role, Name: "connection",
				Base: "id " + strconv.Itoa(p.b.ID), Changed: true, Note: "not in the new capture"})
			continue
		case p.b == nil:
			rows = append(rows, Row{Class: Negotiation, Scope: "connection " + p.n.Role, Name: "connection",
				New: "id " + strconv.Itoa(p.n.ID), Changed: true, Note: "not in the base capture"})
			continue
		}
		scope := "connection " + p.b.Role
		if p.n.Ordinal != p.b.Ordinal {
			// Matched by similarity, not in set-up order.
			scope += " (new #" + strconv.Itoa(p.n.Ordinal) + ")"
		}
		rows = append(rows, compareFields(scope, p.b.Negotiation, p.n.Negotiation)...)
		beh = append(beh, compareMetrics(scope, p.b.Behaviour, p.n.Behaviour, tol)...)
	}
	// Exchanges by ULP and name.
	type ekey struct{ ulp, name string }
	nx := map[ekey]*Exchanges{}
	for i := range nw.Exchanges {
		nx[ekey{nw.Exchanges[i].ULP, nw.Exchanges[i].Name}] = &nw.Exchanges[i]
	}
	bx := map[ekey]bool{}
	empty := func(src []Metric) []Metric {
		out := make([]Metric, len(src))
		for i, m := range src {
			out[i] = Metric{Name: m.Name, Kind: m.Kind}
		}
		return out
	}
	for i := range base.Exchanges {
		b := &base.Exchanges[i]
		k := ekey{b.ULP, b.Name}
		bx[k] = true
		scope := "exchange " + b.ULP + " " + b.Name
		n := nx[k]
		if n == nil {
			beh = append(beh, compareMetrics(scope, b.Metrics, empty(b.Metrics), tol)...)
			continue
		}
		beh = append(beh, compareMetrics(scope, b.Metrics, n.Metrics, tol)...)
	}
	for i := range nw.Exchanges {
		n := &nw.Exchanges[i]
		if !bx[ekey{n.ULP, n.Name}] {
			beh = append(beh, compareMetrics("exchange "+n.ULP+" "+n.Name, empty(n.Metrics), n.Metrics, tol)...)
		}
	}
	// What the profiles left out past their bounds.
	var cuts []Metric
	var ncuts []Metric
	for _, c := range []struct {
		name string
		b, n uint64
	}{{"connections not profiled (past MaxConnections)", base.ConnectionsCut, nw.ConnectionsCut},
		{"exchanges under (other names) (past MaxExchangeNames)", base.NamesCut, nw.NamesCut}} {
		if c.b != 0 || c.n != 0 {
			cuts = append(cuts, Metric{Name: c.name, Kind: KindCount, Value: float64(c.b)})
			ncuts = append(ncuts, Metric{Name: c.name, Kind: KindCount, Value: float64(c.n)})
		}
	}
	beh = append(beh, compareMetrics("capture", cuts, ncuts, tol)...)
	rows = append(rows, beh...)
	// Findings by rule.
	rules := map[string]bool{}
	for r := range base.Findings {
		rules[r] = true
	}
	for r := range nw.Findings {
		rules[r] = true
	}
	names := make([]string, 0, len(rules))
	for r := range rules {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		b, n := base.Findings[r], nw.Findings[r]
		row := Row{Class: Findings, Scope: "capture", Name: r, Base: strconv.Itoa(b), New: strconv.Itoa(n)}
		switch {
		case b == 0:
			row.Changed, row.Note = true, "appears"
		case n == 0:
			row.Changed, row.Note = true, "disappears"
		default:
			row.Changed, row.Note = countChanged(float64(b), float64(n), tol)
		}
		rows = append(rows, row)
	}
	return rows
}

// Changes returns the rows that are changes.
func Changes(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Changed {
			out = append(out, r)
		}
	}
	return out
}

// compareFields compares negotiated values by name, in the base's order
// then the new capture's names the base lacks.
func compareFields(scope string, b, n []Field) []Row {
	nv := map[string]string{}
	for _, f := range n {
		nv[f.Name] = f.Value
	}
	seen := map[string]bool{}
	var rows []Row
	for _, f := range b {
		seen[f.Name] = true
		v, ok := nv[f.Name]
		r := Row{Class: Negotiation, Scope: scope, Name: f.Name, Base: f.Value, New: v}
		switch {
		case !ok:
			r.Changed, r.Note = true, "not in the new capture"
		case v != f.Value:
			r.Changed = true
		}
		rows = append(rows, r)
	}
	for _, f := range n {
		if !seen[f.Name] {
			rows = append(rows, Row{Class: Negotiation, Scope: scope, Name: f.Name, New: f.Value, Changed: true, Note: "not in the base capture"})
		}
	}
	return rows
}

func compareMetrics(scope string, b, n []Metric, tol Tolerances) []Row {
	nm := map[string]Metric{}
	for _, m := range n {
		nm[m.Name] = m
	}
	seen := map[string]bool{}
	var rows []Row
	// Size distributions first: their verdicts rule their buckets.
	type famVerdict struct {
		total       bool    // the count changed past the count tolerance
		nBase, nNew float64 // the counts
	}
	fams := map[string]famVerdict{}
	bm := map[string]Metric{}
	for _, m := range b {
		bm[m.Name] = m
	}
	famOf := func(name string, kind Kind) {
		if kind != KindSizeDist {
			return
		}
		if _, done := fams[name]; done {
			return
		}
		x, y := bm[name], nm[name]
		total, _ := countChanged(x.Value, y.Value, tol)
		fams[name] = famVerdict{total, x.Value, y.Value}
	}
	for _, m := range b {
		famOf(m.Name, m.Kind)
	}
	for _, m := range n {
		famOf(m.Name, m.Kind)
	}
	add := func(bm, xm Metric) {
		r := Row{Class: Behaviour, Scope: scope, Name: bm.Name, Base: formatMetric(bm), New: formatMetric(xm)}
		kind := bm.Kind
		switch kind {
		case KindExact:
			r.Changed = bm.Value != xm.Value
		case KindLatencyP50, KindLatencyP99:
			t := tol.Latency
			if kind == KindLatencyP99 {
				t = tol.LatencyTail
			}
			r.Changed, r.Note = latencyChanged(bm, xm, t, tol.MinSamples)
			if r.Changed && len(bm.Bins) > 0 && len(xm.Bins) > 0 {
				r.Changed, r.Note = significant(bm, xm, kind, tol.Alpha, r.Note)
			}
		case KindLatencyDist:
			r.Changed, r.Note = distributionChanged(bm, xm, tol)
		case KindSizeDist:
			// The count's change shows in its buckets' rows.
			r.Changed, r.Note = sizeDistChanged(bm, xm, tol)
		default:
			r.Changed, r.Note = countChanged(bm.Value, xm.Value, tol)
			fam := bm.Family
			if fam == "" {
				fam = xm.Family
			}
			// A bucket of a histogram whose count did not change: a
			// change when its share did, by Fisher's exact test.
			if v, ok := fams[fam]; ok && r.Changed && !v.total {
				p := fisherExact(uint64(bm.Value), uint64(v.nBase), uint64(xm.Value), uint64(v.nNew))
				r.Note += "; share " + formatMetric(bm) + "/" + strconv.FormatFloat(v.nBase, 'f', -1, 64) + " → " +
					formatMetric(xm) + "/" + strconv.FormatFloat(v.nNew, 'f', -1, 64) + ", Fisher p=" + formatP(p)
				if p >= tol.Alpha {
					r.Changed, r.Note = false, r.Note+" ≥ "+strconv.FormatFloat(tol.Alpha, 'g', -1, 64)+": noise"
				}
			}
		}
		rows = append(rows, r)
	}
	// A profile keeps only the counts that are not zero: one missing on
	// a side is 0 there.
	for _, m := range b {
		seen[m.Name] = true
		x, ok := nm[m.Name]
		if !ok {
			x = Metric{Name: m.Name, Kind: m.Kind}
		}
		add(m, x)
	}
	for _, m := range n {
		if !seen[m.Name] {
			add(Metric{Name: m.Name, Kind: m.Kind}, m)
		}
	}
	return rows
}

// countChanged applies the count tolerance.
func countChanged(b, n float64, tol Tolerances) (bool, string) {
	if b == n {
		return false, ""
	}
	d := math.Abs(n - b)
	limit := math.Max(tol.CountAbs, tol.Count*math.Max(b, n))
	note := ""
	if b > 0 {
		note = signedPercent((n-b)/b) + " "
	}
	lim := strconv.FormatFloat(math.Round(limit*10)/10, 'f', -1, 64)
	if d > limit {
		return true, note + "(tolerance ±" + lim + ")"
	}
	return false, note + "within tolerance ±" + lim
}

func latencyChanged(b, n Metric, t float64, min uint64) (bool, string) {
	if b.Samples < min || n.Samples < min {
		if b.Samples == 0 && n.Samples == 0 {
			return false, ""
		}
		return false, "not compared: " + strconv.FormatUint(b.Samples, 10) + " → " +
			strconv.FormatUint(n.Samples, 10) + " samples, fewer than " + strconv.FormatUint(min, 10)
	}
	if b.Value == n.Value {
		return false, ""
	}
	rel := (n.Value - b.Value) / b.Value
	if b.Value == 0 {
		rel = math.Inf(1)
	}
	note := signedPercent(rel)
	if math.Abs(rel) > t && math.Abs(rel) > 4*sketchAlpha {
		return true, note + " (tolerance " + strconv.FormatFloat(t*100, 'f', -1, 64) + "%)"
	}
	return false, note + " within tolerance " + strconv.FormatFloat(t*100, 'f', -1, 64) + "%"
}

// significant tells whether a quantile's move past its tolerance is
// also unlikely as noise: the p50's by the Mann-Whitney U test, the p99's
// by Fisher's exact test of the shares beyond the lower of the two p99s.
func significant(b, n Metric, kind Kind, alpha float64, note string) (bool, string) {
	var p float64
	var test string
	if kind == KindLatencyP99 {
		var x1, x2 uint64
		p, x1, x2 = tailTest(b.Bins, n.Bins, 0.99)
		test = "Fisher " + strconv.FormatUint(x1, 10) + "/" + strconv.FormatUint(b.Samples, 10) + " vs " +
			strconv.FormatUint(x2, 10) + "/" + strconv.FormatUint(n.Samples, 10) + " beyond"
	} else {
		p = mannWhitney(b.Bins, n.Bins).P
		test = "Mann-Whitney"
	}
	note += "; " + test + " p=" + formatP(p)
	if p < alpha {
		return true, note
	}
	return false, note + " ≥ " + strconv.FormatFloat(alpha, 'g', -1, 64) + ": noise"
}

// distributionChanged compares two exchange names' latencies as a whole:
// a change when the Mann-Whitney U test gives p < Alpha and the
// Hodges-Lehmann shift (the median ratio new/base over every pair of
// latencies) exceeds the Latency tolerance.
func distributionChanged(b, n Metric, tol Tolerances) (bool, string) {
	if b.Samples < tol.MinSamples || n.Samples < tol.MinSamples {
		if b.Samples == 0 && n.Samples == 0 {
			return false, ""
		}
		return false, "not compared: " + strconv.FormatUint(b.Samples, 10) + " → " +
			strconv.FormatUint(n.Samples, 10) + " samples, fewer than " + strconv.FormatUint(tol.MinSamples, 10)
	}
	mw := mannWhitney(b.Bins, n.Bins)
	shift, ok := hodgesLehmann(b.Bins, n.Bins)
	if !ok {
		return false, ""
	}
	ratio := math.Exp(shift * sketchLogGamma)
	note := "shift " + signedPercent(ratio-1) + ", Mann-Whitney p=" + formatP(mw.P)
	big := math.Abs(math.Log(ratio)) > math.Log(1+tol.Latency)
	sig := mw.P < tol.Alpha
	switch {
	case big && sig:
		return true, note
	case !sig:
		return false, note + " ≥ " + strconv.FormatFloat(tol.Alpha, 'g', -1, 64) + ": noise"
	}
	return false, note + ": within " + strconv.FormatFloat(tol.Latency*100, 'f', -1, 64) + "%"
}

// sizeDistChanged compares two size histograms as a whole: a change
// when the Mann-Whitney U test gives p < Alpha and the rank-biserial
// effect is at least SizeEffect; compared with MinSamples on each side.
func sizeDistChanged(b, n Metric, tol Tolerances) (bool, string) {
	if b.Samples < tol.MinSamples || n.Samples < tol.MinSamples {
		if b.Samples == 0 && n.Samples == 0 {
			return false, ""
		}
		return false, "not compared: " + strconv.FormatUint(b.Samples, 10) + " → " +
			strconv.FormatUint(n.Samples, 10) + ", fewer than " + strconv.FormatUint(tol.MinSamples, 10)
	}
	mw := mannWhitney(b.Bins, n.Bins)
	note := "effect " + strconv.FormatFloat(mw.Effect, 'f', 2, 64) + ", Mann-Whitney p=" + formatP(mw.P)
	switch {
	case mw.P >= tol.Alpha:
		return false, note + " ≥ " + strconv.FormatFloat(tol.Alpha, 'g', -1, 64) + ": noise"
	case math.Abs(mw.Effect) < tol.SizeEffect:
		return false, note + ": effect below " + strconv.FormatFloat(tol.SizeEffect, 'g', -1, 64)
	}
	return true, note
}

// formatP writes a p-value with 2 significant digits.
func formatP(p float64) string {
	if p < 1e-300 {
		return "<1e-300"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func signedPercent(f float64) string {
	if math.IsInf(f, 0) {
		return "+∞%"
	}
	s := strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
	if f >= 0 {
		s = "+" + s
	}
	return s
}

func formatMetric(m Metric) string {
	switch m.Kind {
	case KindLatencyDist:
		if m.Samples == 0 {
			return "-"
		}
		return strconv.FormatUint(m.Samples, 10) + " latencies"
	case KindSizeDist:
		if m.Samples == 0 {
			return "-"
		}
		return strconv.FormatUint(m.Samples, 10) + " in " + strconv.Itoa(len(m.Bins)) + " buckets"
	case KindLatencyP50, KindLatencyP99:
		if m.Samples == 0 {
			return "-"
		}
		return fmtDuration(time.Duration(m.Value))
	}
	return strconv.FormatFloat(m.Value, 'f', -1, 64)
}
