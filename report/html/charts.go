package html

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rdmashark/rdmashark/report"
)

// Chart geometry (CSS pixels).
const (
	chartWidth  = 1160
	chartLeft   = 250 // room for procedure names / axis labels
	chartRight  = 1100
	tputHeight  = 190
	tputTop     = 12
	tputBottom  = 160
	latRowH     = 34
	chunkRowH   = 24
	chartHeader = 24
)

// Tick is an axis label.
type Tick struct {
	X, Y  int
	Label string
}

// ThroughputChart is a connection's traffic over time per direction: one
// Series per direction, each the frame bytes of a time bin. It is built
// from a list of series so that more can be drawn on the same axes: the
// retransmitted bytes of analyze's transport_health (issue 10) are one
// more Series per direction (Class "retx"), appended in throughputChart.
type ThroughputChart struct {
	Width, Height int
	Left, Right   int
	Top, Bottom   int
	// BinUS is the bin width in microseconds.
	BinUS   int64
	BinText string
	Bins    int
	Series  []Series
	XTicks  []Tick
	YTicks  []Tick
	Cols    []Col
	Empty   bool
}

// Series is one line of a chart. Bins holds its values, DataBins the same
// as the space-separated list the page carries in data-bins.
type Series struct {
	Key, Name, Class string
	Points           string
	Total, Packets   uint64
	Bins             []uint64
	DataBins         string
	LegendY          int
}

// Col is a hover column of a time chart: its bin's values in words.
type Col struct {
	X, W  int
	Title string
}

func throughputChart(ac *report.Connection, t *throughput) ThroughputChart {
	ch := ThroughputChart{Width: chartWidth, Height: tputHeight, Left: chartLeft, Right: chartRight, Top: tputTop, Bottom: tputBottom,
		BinUS: t.width.Microseconds(), BinText: t.width.String(), Bins: t.n}
	if t.n == 0 {
		ch.Empty = true
		return ch
	}
	ch.Series = []Series{
		{Key: "c2s", Name: "client → server", Class: "c2s", Bins: slices.Clone(t.bytes[0][:t.n])},
		{Key: "s2c", Name: "server → client", Class: "s2c", Bins: slices.Clone(t.bytes[1][:t.n])},
	}
	ch.Series[0].Packets, ch.Series[1].Packets = sum(t.pkts[0][:t.n]), sum(t.pkts[1][:t.n])
	if ac.TransportHealth != nil {
		ch.Series = append(ch.Series,
			Series{Key: "c2s-retx", Name: "client → server retransmitted", Class: "c2s retx", Bins: slices.Clone(t.retx[0][:t.n]), Packets: sum(t.retxPkts[0][:t.n])},
			Series{Key: "s2c-retx", Name: "server → client retransmitted", Class: "s2c retx", Bins: slices.Clone(t.retx[1][:t.n]), Packets: sum(t.retxPkts[1][:t.n])})
	}
	var max uint64
	for i := range ch.Series {
		s := &ch.Series[i]
		s.Total = sum(s.Bins)
		s.LegendY = tputTop + 8 + 14*i
		var b strings.Builder
		for j, v := range s.Bins {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatUint(v, 10))
			if v > max {
				max = v
			}
		}
		s.DataBins = b.String()
	}
	if max == 0 {
		max = 1
	}
	w := float64(chartRight-chartLeft) / float64(t.n)
	sec := t.width.Seconds()
	yOf := func(v uint64) float64 { return tputBottom - float64(v)/float64(max)*float64(tputBottom-tputTop-20) }
	for i := range ch.Series {
		s := &ch.Series[i]
		var b strings.Builder
		for j, v := range s.Bins {
			x0, x1 := chartLeft+w*float64(j), chartLeft+w*float64(j+1)
			fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", x0, yOf(v), x1, yOf(v))
		}
		s.Points = strings.TrimSpace(b.String())
	}
	for j := 0; j < t.n; j++ {
		var parts []string
		for _, s := range ch.Series {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", s.Name, bytesText(s.Bins[j]), rateText(float64(s.Bins[j])/sec)))
		}
		start := t.start + time.Duration(j)*t.width
		ch.Cols = append(ch.Cols, Col{X: int(chartLeft + w*float64(j)), W: int(math.Ceil(w)),
			Title: fmt.Sprintf("%.6f–%.6f s: %s", start.Seconds(), (start + t.width).Seconds(), strings.Join(parts, ", "))})
	}
	for k := 0; k <= 4; k++ {
		j := t.n * k / 4
		ch.XTicks = append(ch.XTicks, Tick{X: int(chartLeft + w*float64(j)), Y: tputBottom + 16,
			Label: fmt.Sprintf("%.3f s", (t.start + time.Duration(j)*t.width).Seconds())})
	}
	for k := 0; k <= 2; k++ {
		v := max * uint64(k) / 2
		ch.YTicks = append(ch.YTicks, Tick{X: chartLeft - 8, Y: int(yOf(v)) + 4, Label: rateText(float64(v) / sec)})
	}
	return ch
}

func sum(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}

func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func rateText(bps float64) string {
	bits := bps * 8
	switch {
	case bits >= 1e9:
		return fmt.Sprintf("%.2f Gbit/s", bits/1e9)
	case bits >= 1e6:
		return fmt.Sprintf("%.2f Mbit/s", bits/1e6)
	case bits >= 1e3:
		return fmt.Sprintf("%.1f kbit/s", bits/1e3)
	}
	return fmt.Sprintf("%.0f bit/s", bits)
}

// LatencyChart is the distribution of Call-to-Reply latency per procedure
// on a logarithmic axis, with p50 and p99 marked.
type LatencyChart struct {
	Width, Height int
	Left, Right   int
	Rows          []LatRow
	Ticks         []Tick
	Sampled       bool
}

// LatRow is one procedure's distribution. Count is the replies it had,
// Kept those the percentiles come from (all of them unless Sampled).
type LatRow struct {
	Proc               string
	Y, Mid             int
	Count              uint64
	Kept               int
	Sampled            bool
	P50, P99           float64
	P50Text, P99Text   string
	P50X, P99X         int
	Bars               []Bar
	DataP50, DataP99   string
	DataCount, DataMin string
	DataMax            string
}

// Bar is a histogram bar.
type Bar struct {
	X, Y, W, H int
	Title      string
}

// Percentile is the nearest-rank percentile of sorted values: the
// smallest value with at least p percent of the values at or below it.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

const binsPerDecade = 5

func latencyChart(c *Collector) LatencyChart {
	ch := LatencyChart{Width: chartWidth, Left: chartLeft, Right: chartRight}
	var procs []*procStats
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, k := range c.procOrder {
		ps := c.procs[k]
		if len(ps.lat) == 0 {
			continue
		}
		slices.Sort(ps.lat)
		procs = append(procs, ps)
		lo, hi = math.Min(lo, ps.lat[0]), math.Max(hi, ps.lat[len(ps.lat)-1])
	}
	if len(procs) == 0 {
		return ch
	}
	sort.SliceStable(procs, func(i, j int) bool { return procs[i].seen > procs[j].seen })
	dlo := math.Floor(math.Log10(math.Max(lo, 0.1)))
	dhi := math.Ceil(math.Log10(math.Max(hi, 0.1)))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	span := float64(chartRight - chartLeft)
	xOf := func(us float64) int {
		l := math.Log10(math.Max(us, 0.1))
		return chartLeft + int((l-dlo)/(dhi-dlo)*span)
	}
	nb := int(dhi-dlo) * binsPerDecade
	bw := span / float64(nb)
	y := chartHeader
	for _, ps := range procs {
		r := LatRow{Proc: ps.key, Y: y, Mid: y + latRowH/2, Count: ps.seen, Kept: len(ps.lat), Sampled: uint64(len(ps.lat)) < ps.seen}
		ch.Sampled = ch.Sampled || r.Sampled
		r.P50, r.P99 = Percentile(ps.lat, 50), Percentile(ps.lat, 99)
		r.P50Text, r.P99Text = latencyText(r.P50), latencyText(r.P99)
		r.P50X, r.P99X = xOf(r.P50), xOf(r.P99)
		r.DataP50, r.DataP99 = fmtFloat(r.P50), fmtFloat(r.P99)
		r.DataCount = strconv.FormatUint(ps.seen, 10)
		r.DataMin, r.DataMax = fmtFloat(ps.lat[0]), fmtFloat(ps.lat[len(ps.lat)-1])
		counts := make([]int, nb)
		for _, v := range ps.lat {
			b := int((math.Log10(math.Max(v, 0.1)) - dlo) * binsPerDecade)
			b = min(max(b, 0), nb-1)
			counts[b]++
		}
		top := slices.Max(counts)
		for b, n := range counts {
			if n == 0 {
				continue
			}
			h := max(2, n*(latRowH-8)/top)
			from, to := math.Pow(10, dlo+float64(b)/binsPerDecade), math.Pow(10, dlo+float64(b+1)/binsPerDecade)
			r.Bars = append(r.Bars, Bar{X: chartLeft + int(float64(b)*bw) + 1, Y: y + latRowH - 4 - h, W: max(1, int(bw)-2), H: h,
				Title: fmt.Sprintf("%s: %d replies in %s–%s", ps.key, n, latencyText(from), latencyText(to))})
		}
		ch.Rows = append(ch.Rows, r)
		y += latRowH
	}
	for d := dlo; d <= dhi; d++ {
		ch.Ticks = append(ch.Ticks, Tick{X: xOf(math.Pow(10, d)), Y: y + 14, Label: latencyText(math.Pow(10, d))})
	}
	ch.Height = y + 22
	return ch
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// ChunkChart is how each procedure's Calls moved their data: inline, or
// with Read, Write, Reply (version 2: Call) chunks.
type ChunkChart struct {
	Width, Height int
	Left, Right   int
	Rows          []ChunkRow
	Legend        []Seg
}

// ChunkRow is one procedure: its Calls, and per class a segment of the bar
// (a Call with several kinds of chunk counts in each).
type ChunkRow struct {
	Proc                             string
	Y, TextY                         int
	Calls                            uint64
	Inline, Read, Write, Reply, Call uint64
	Segs                             []Seg
	Text                             string
}

// Seg is a piece of a stacked bar.
type Seg struct {
	X, Y, W int
	Class   string
	Title   string
	Name    string
}

func chunkChart(c *Collector) ChunkChart {
	ch := ChunkChart{Width: chartWidth, Left: chartLeft, Right: chartRight}
	var procs []*procStats
	var most uint64
	for _, k := range c.procOrder {
		ps := c.procs[k]
		if ps.calls == 0 {
			continue
		}
		procs = append(procs, ps)
		var n uint64
		for _, v := range ps.usage {
			n += v
		}
		most = max(most, n)
	}
	if len(procs) == 0 {
		return ch
	}
	sort.SliceStable(procs, func(i, j int) bool { return procs[i].calls > procs[j].calls })
	x := chartLeft
	for _, cl := range ChunkClasses {
		ch.Legend = append(ch.Legend, Seg{X: x, Class: "ck-" + cl, Name: chunkLegend(cl)})
		x += 150
	}
	y := chartHeader
	span := float64(chartRight - chartLeft - 200)
	for _, ps := range procs {
		r := ChunkRow{Proc: ps.key, Y: y, TextY: y + 15, Calls: ps.calls, Inline: ps.usage["inline"], Read: ps.usage["read"],
			Write: ps.usage["write"], Reply: ps.usage["reply"], Call: ps.usage["call"]}
		x := float64(chartLeft)
		var words []string
		for _, cl := range ChunkClasses {
			n := ps.usage[cl]
			if n == 0 {
				continue
			}
			w := float64(n) / float64(most) * span
			r.Segs = append(r.Segs, Seg{X: int(x), Y: y + 3, W: max(1, int(w)), Class: "ck-" + cl,
				Title: fmt.Sprintf("%s: %d of %d Calls %s", ps.key, n, ps.calls, chunkLegend(cl))})
			x += w
			words = append(words, fmt.Sprintf("%d %s", n, cl))
		}
		r.Text = fmt.Sprintf("%d Calls: %s", ps.calls, strings.Join(words, ", "))
		ch.Rows = append(ch.Rows, r)
		y += chunkRowH
	}
	ch.Height = y + 8
	return ch
}

func chunkLegend(cl string) string {
	if cl == "inline" {
		return "inline (no chunk)"
	}
	return "with a " + chunkTitle(cl)
}
