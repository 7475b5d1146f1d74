package html

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// Ladder geometry (CSS pixels).
const (
	ladderWidth = 1160
	clientX     = 250
	serverX     = 770
	pinX        = 790
	rowBase     = 26
	rowWithSub  = 38
	pinStep     = 14
	maxPins     = 4
	foldMin     = 3
	labelChars  = 74
)

// Ladder is a connection's sequence diagram: blocks of rows, each block
// one SVG, folded blocks inside <details>.
type Ladder struct {
	Width, ClientX, ServerX, MidX int
	ClientLabel, ServerLabel      string
	Blocks                        []Block
	// Arrows counts the arrows drawn (folded ones included).
	Arrows int
	// Omitted lists what the detail limit left out, by signature.
	Omitted      []KV
	OmittedTotal uint64
	Acks         string
	RPC          bool
	// ULP names the ULP whose exchanges the ladder draws (the neutral
	// ladder, ladder_exch.go), "" otherwise; Caption says what the
	// connection is to it. Exchanges, Ops, Unattached, ReadBytes and
	// WriteBytes count every exchange of the connection, drawn or not,
	// the RDMA operations attached to them and those none explains, and
	// the bytes the exchanges moved by RDMA Read and Write, as
	// `exchanges --format json` counts them (the page's data attributes).
	ULP, Caption               string
	Exchanges, Ops, Unattached uint64
	ReadBytes, WriteBytes      uint64
	// Loss explains the loss marks, "" when no arrow has one.
	Loss string
}

// Block is a run of rows drawn as one SVG; a folded block is a run of
// exchanges with the same signature.
type Block struct {
	Fold    bool
	Summary string
	Height  int
	Rows    []Row
}

// Row is one arrow (or, Kind "missing", a note that an arrow is not in
// the capture).
type Row struct {
	Y, LabelY, SubY int
	X1, X2, MidX    int
	LeftToRight     bool
	Kind            string
	Label, Sub      string
	Title           string
	Pkts            string
	Time            string
	Anchor          string
	First, Last     int
	Src             string
	XID             string
	Note            string
	Inv             bool
	Pins            []Pin
	MorePins        int
	// Loss marks the packets of the arrow's sender within its span that
	// the transport analysis flagged (markItems); Retx, Dup, Gaps and
	// GapPSNs count them.
	Loss            string
	Retx, Dup, Gaps int
	GapPSNs         uint64
	// Bytes, on an RDMA operation of the neutral ladder, is its length;
	// Exch numbers the exchange a row of it belongs to (from 1; 0: none).
	Bytes uint64
	Exch  int
}

// Pin is a finding pinned to its packet's arrow.
type Pin struct {
	Y                        int
	Anchor, Rule, Link       string
	Severity, Message, Title string
}

type item struct {
	first int
	rows  []Row
	sig   string
}

func ladder(ac *report.Connection, cd *connData, fs []report.Finding, mine []int, views []FindingView) (Ladder, error) {
	l := Ladder{Width: ladderWidth, ClientX: clientX, ServerX: serverX, MidX: (clientX + serverX) / 2,
		ClientLabel: "client " + endpointText(ac.Client), ServerLabel: "server " + endpointText(ac.Server)}
	cli, srv := ac.Client.Address, ac.Server.Address
	var items []item
	for _, e := range cd.cm {
		items = append(items, item{first: e.First, rows: []Row{eventRow(ac.ID, &e, cli, srv)}})
	}
	l.RPC = isRPC(ac, cd)
	if !l.RPC && cd.exch != nil {
		items = append(items, exchLadder(&l, ac, cd)...)
	} else if l.RPC {
		err := cd.txns.Each(func(x *report.Transaction) error {
			it := item{rows: txnRows(ac.ID, x, cli, srv), sig: Signature(x, nil)}
			it.first = it.rows[0].First
			items = append(items, it)
			return nil
		})
		if err != nil {
			return Ladder{}, fmt.Errorf("connection %d: %w", ac.ID, err)
		}
		if cd.txnsOmitted > 0 {
			l.OmittedTotal = cd.txnsOmitted
			sigs := slices.Clone(cd.sigOrder)
			sort.SliceStable(sigs, func(i, j int) bool { return cd.omittedSigs[sigs[i]] > cd.omittedSigs[sigs[j]] })
			for _, s := range sigs {
				l.Omitted = append(l.Omitted, KV{strconv.FormatUint(cd.omittedSigs[s], 10), s})
			}
		}
	} else {
		for i := range cd.events {
			e := &cd.events[i]
			items = append(items, item{first: e.First, rows: []Row{eventRow(ac.ID, e, cli, srv)}, sig: e.Kind + "|" + e.Dir.String()})
		}
		if cd.eventsOmitted > 0 {
			l.OmittedTotal = cd.eventsOmitted
			kinds := make([]string, 0, len(cd.omittedKinds))
			for k := range cd.omittedKinds {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				l.Omitted = append(l.Omitted, KV{strconv.FormatUint(cd.omittedKinds[k], 10), kindTitle(k)})
			}
		}
	}
	if cd.acks[0]+cd.acks[1] > 0 {
		l.Acks = fmt.Sprintf("%d acknowledgements client→server and %d server→client are counted, not drawn.", cd.acks[0], cd.acks[1])
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].first < items[j].first })
	pinFindings(items, fs, mine, views)
	markItems(items, cd.marks)
	lossy := false
	for i := range items {
		if items[i].sig == "" {
			continue
		}
		var rules []string
		for _, r := range items[i].rows {
			for _, p := range r.Pins {
				rules = appendUnique(rules, p.Rule)
			}
			if r.Loss != "" {
				// Arrows with loss marks do not fold with clean ones.
				rules = appendUnique(rules, "loss")
				lossy = true
			}
		}
		if len(rules) > 0 {
			items[i].sig += " [" + strings.Join(rules, ", ") + "]"
		}
	}
	if lossy || cd.marksCut > 0 {
		l.Loss = "Red under an arrow: the packets of its sender within its span that the transport analysis flagged (rdmashark.analysis: retransmitted, duplicate, after a PSN gap), each under one arrow: where spans overlap, the one that began last."
		if cd.marksCut > 0 {
			l.Loss += fmt.Sprintf(" Past the first %d flagged packets, %d are not marked.", maxLossMarks, cd.marksCut)
		}
	}
	l.Blocks = blocks(items, &l.Arrows)
	return l, nil
}

// isRPC: the connection's diagram draws RPC transactions (otherwise its
// RDMA messages).
func isRPC(ac *report.Connection, cd *connData) bool {
	return cd.txns.Len() > 0 || cd.txnsOmitted > 0 || ac.RPC != nil
}

// ladderNotes are the page's notes on what the connection's diagram does
// not draw (the page lists them before the diagrams: Build takes them
// without drawing the diagram).
func ladderNotes(ac *report.Connection, cd *connData, maxDetail int) []string {
	switch {
	case isRPC(ac, cd) && cd.txnsOmitted > 0:
		return []string{fmt.Sprintf("Connection %d: %d transactions after the first %d are not drawn (report --max-detail); they are counted by kind under its diagram and in the charts.",
			ac.ID, cd.txnsOmitted, maxDetail)}
	case !isRPC(ac, cd) && cd.exch != nil:
		if n := cd.exch.cut; n > 0 {
			return []string{fmt.Sprintf("Connection %d: %d exchanges after the first %d are not drawn (report --max-detail); they are counted by kind under its diagram.",
				ac.ID, n, maxDetail)}
		}
	case !isRPC(ac, cd) && cd.eventsOmitted > 0:
		return []string{fmt.Sprintf("Connection %d: %d RDMA messages after the first %d are not drawn (report --max-detail); they are counted by kind under its diagram and in the throughput chart.",
			ac.ID, cd.eventsOmitted, maxDetail)}
	}
	return nil
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// pinFindings pins each finding of the connection that names packets to
// the first arrow (in diagram order) that carries one of them.
func pinFindings(items []item, fs []report.Finding, mine []int, views []FindingView) {
	for _, fi := range mine {
		f := &fs[fi]
		if len(f.Packets) == 0 {
			continue
		}
	search:
		for i := range items {
			for j := range items[i].rows {
				r := &items[i].rows[j]
				if r.Kind == "missing" {
					continue
				}
				for _, pk := range f.Packets {
					if pk >= r.First && pk <= r.Last {
						v := &views[fi]
						v.Pinned, v.Link = true, "#"+v.Anchor
						if len(r.Pins) >= maxPins {
							r.MorePins++
							// The table still links to the arrow.
							v.Link = "#" + r.Anchor
						} else {
							title := f.Rule + ": " + f.Message + " (" + f.Reference + ")"
							if rule, ok := check.Lookup(f.Rule); ok {
								title += "\n\n" + rule.Summary + "\n" + rule.Explanation
							}
							r.Pins = append(r.Pins, Pin{Anchor: v.Anchor, Rule: f.Rule, Link: v.RuleLink, Severity: v.Severity,
								Message: f.Message, Title: title})
						}
						break search
					}
				}
			}
		}
	}
}

// blocks lays the items out: a run of at least foldMin items with one
// signature folds into one block; the others share plain blocks.
func blocks(items []item, arrows *int) []Block {
	var out []Block
	var plain []Row
	flush := func() {
		if len(plain) > 0 {
			out = append(out, layout(Block{}, plain))
			plain = nil
		}
	}
	for i := 0; i < len(items); {
		j := i + 1
		for items[i].sig != "" && j < len(items) && items[j].sig == items[i].sig {
			j++
		}
		for _, it := range items[i:j] {
			for _, r := range it.rows {
				if r.Kind != "missing" {
					*arrows++
				}
			}
		}
		if j-i >= foldMin {
			flush()
			n := 0
			for _, it := range items[i:j] {
				n += len(it.rows)
			}
			// Rows are ~300 bytes: appending them an item at a time
			// regrew the slice, 8 of the 187 MB `report` allocated at
			// ×20.
			rows := make([]Row, 0, n)
			for _, it := range items[i:j] {
				rows = append(rows, it.rows...)
			}
			sum := fmt.Sprintf("%d × %s (packets %d–%d)", j-i, sigTitle(items[i].sig), items[i].first, lastPacket(items[j-1]))
			out = append(out, layout(Block{Fold: true, Summary: sum}, rows))
		} else {
			for _, it := range items[i:j] {
				plain = append(plain, it.rows...)
			}
		}
		i = j
	}
	flush()
	return out
}

func lastPacket(it item) int {
	last := it.first
	for _, r := range it.rows {
		if r.Last > last {
			last = r.Last
		}
	}
	return last
}

// sigTitle turns a generic event signature ("send|client-to-server") into
// words; transaction signatures are words already.
func sigTitle(sig string) string {
	kind, rest, ok := strings.Cut(sig, "|")
	if !ok {
		return sig
	}
	dir, rules, _ := strings.Cut(rest, " ")
	arrow := "client → server"
	if dir == dissect.DirServerToClient.String() {
		arrow = "server → client"
	}
	s := kindTitle(kind) + " " + arrow
	if rules != "" {
		s += " " + rules
	}
	return s
}

func kindTitle(k string) string {
	switch k {
	case "send":
		return "Send"
	case "send-inv":
		return "Send With Invalidate"
	case "write":
		return "RDMA Write"
	case "read-req":
		return "RDMA Read Request"
	case "read-resp":
		return "RDMA Read Response"
	case "terminate":
		return "Terminate"
	}
	return k
}

// layout places rows top to bottom.
func layout(b Block, rows []Row) Block {
	y := 4
	for i := range rows {
		r := &rows[i]
		h := rowBase
		if r.Sub != "" || r.Loss != "" {
			h = rowWithSub
		}
		if ph := 10 + pinStep*(len(r.Pins)+b01(r.MorePins > 0)); ph > h {
			h = ph
		}
		r.LabelY = y + 13
		r.Y = y + 18
		r.SubY = y + 31
		for k := range r.Pins {
			r.Pins[k].Y = y + 13 + k*pinStep
		}
		y += h
	}
	b.Rows, b.Height = rows, y+4
	return b
}

func clip(s string) string {
	if r := []rune(s); len(r) > labelChars {
		return string(r[:labelChars-1]) + "…"
	}
	return s
}

func pktRange(first, last int) string {
	if last > first {
		return fmt.Sprintf("#%d–%d", first, last)
	}
	return "#" + strconv.Itoa(first)
}

// arrow sets a row's line from the side at from to the other side.
func (r *Row) arrow(fromClient bool) {
	r.MidX = (clientX + serverX) / 2
	r.LeftToRight = fromClient
	if fromClient {
		r.X1, r.X2 = clientX, serverX
	} else {
		r.X1, r.X2 = serverX, clientX
	}
}

func eventRow(conn int, e *Event, cli, srv string) Row {
	r := Row{Kind: e.Kind, First: e.First, Last: e.Last, Src: e.Src, Pkts: pktRange(e.First, e.Last),
		Time: fmt.Sprintf("%.6f s", e.Time.Seconds()), Anchor: fmt.Sprintf("c%d-p%d", conn, e.First), Inv: e.Kind == "send-inv"}
	label := e.Label
	if e.Packets > 1 {
		label += fmt.Sprintf(" (%d packets)", e.Packets)
	}
	r.Label, r.Title = clip(label), fmt.Sprintf("packets %s: %s", r.Pkts, label)
	r.arrow(e.Dir == dissect.DirClientToServer)
	return r
}

func chunkText(chunks []report.TxnChunk) string {
	var parts []string
	for _, c := range chunks {
		var n uint64
		for _, s := range c.Segments {
			n += uint64(s.Length)
		}
		t := chunkTitle(c.Kind)
		if c.Position != nil {
			t += fmt.Sprintf(" @%d", *c.Position)
		}
		segs := "segment"
		if len(c.Segments) != 1 {
			segs += "s"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s, %d B", t, len(c.Segments), segs, n))
	}
	return strings.Join(parts, "; ")
}

func procText(x *report.Transaction) string {
	s := ProcedureKey(x)
	if len(x.Operations) > 1 {
		s += " (" + strings.Join(x.Operations, ",") + ")"
	}
	return s
}

// txnRows draws a transaction: its Call, the RDMA Reads and Writes that
// moved its chunks (the data's direction: a Read chunk from caller to
// callee, Write and Reply chunks back), its Reply, in packet order.
func txnRows(conn int, x *report.Transaction, cli, srv string) []Row {
	forward := x.Direction != "backchannel"
	caller, callee := cli, srv
	if !forward {
		caller, callee = srv, cli
	}
	xid := x.XID.String()
	var rows []Row
	var missing []Row
	if c := x.Call; c != nil && len(c.Packets) > 0 {
		r := Row{Kind: "call", First: c.Packets[0], Last: c.Packets[len(c.Packets)-1], Src: caller, XID: xid}
		label := fmt.Sprintf("%s Call %s xid %s cr=%d", c.RDMAProc, procText(x), xid, c.Credits)
		sub := chunkText(c.Chunks)
		if sub == "" {
			sub = fmt.Sprintf("inline %d B", c.InlineBytes)
		}
		r.Label, r.Sub, r.Title = clip(label), clip(sub), label+"\n"+sub
		r.arrow(forward)
		rows = append(rows, r)
		for _, ch := range c.Chunks {
			for si, sg := range ch.Segments {
				for _, op := range sg.RDMAOps {
					o := Row{Kind: "rdma-" + op.Kind, First: op.FirstPacket, Last: op.LastPacket, XID: xid}
					fromCaller := op.Kind == "read"
					what := "RDMA Write"
					o.Src = callee // the data's sender
					if fromCaller {
						what = "RDMA Read"
						o.Src = caller
					}
					label := fmt.Sprintf("%s %d B · %s seg %d (handle %s)", what, op.Length, chunkTitle(ch.Kind), si+1, sg.Handle)
					if !op.Complete {
						label += " · incomplete"
					}
					o.Label, o.Title = clip(label), label
					o.arrow(fromCaller == forward)
					rows = append(rows, o)
				}
			}
		}
	} else {
		missing = append(missing, Row{Kind: "missing", Label: "Call not in the capture", XID: xid})
	}
	if rp := x.Reply; rp != nil && len(rp.Packets) > 0 {
		r := Row{Kind: "reply", First: rp.Packets[0], Last: rp.Packets[len(rp.Packets)-1], Src: callee, XID: xid}
		label := fmt.Sprintf("%s Reply xid %s cr=%d", rp.RDMAProc, xid, rp.Credits)
		if rp.Status != "" {
			label += " " + rp.Status
		}
		sub := chunkText(rp.Chunks)
		if sub == "" {
			sub = fmt.Sprintf("inline %d B", rp.InlineBytes)
		}
		if x.InvalidatedSTag != nil {
			r.Inv = true
			sub = "Send With Invalidate of STag " + x.InvalidatedSTag.String() + " · " + sub
		}
		r.Label, r.Sub, r.Title = clip(label), clip(sub), label+"\n"+sub
		if x.LatencyUS != nil {
			r.Note = latencyText(*x.LatencyUS)
		}
		r.arrow(!forward)
		rows = append(rows, r)
	} else {
		missing = append(missing, Row{Kind: "missing", Label: "no Reply in the capture (" + x.Outcome + ")", XID: xid})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].First < rows[j].First })
	for i := range rows {
		rows[i].Pkts = pktRange(rows[i].First, rows[i].Last)
		rows[i].Anchor = fmt.Sprintf("c%d-p%d-%s", conn, rows[i].First, rows[i].Kind)
	}
	for i := range missing {
		missing[i].MidX = (clientX + serverX) / 2
	}
	return append(rows, missing...)
}

func latencyText(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.3g s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.3g ms", us/1e3)
	}
	return fmt.Sprintf("%.3g µs", us)
}
