package html

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/report"
)

// exchLadder adds the neutral ladder of a ULP's connection (collect_exch.go)
// to l and returns its items: each exchange (its request, the RDMA
// operations attached to it drawn in the direction their data moved, its
// response), the Sends no exchange claimed, the operations none explains.
func exchLadder(l *Ladder, ac *report.Connection, cd *connData) []item {
	e := cd.exch
	cli, srv := ac.Client.Address, ac.Server.Address
	l.ULP = e.ulp
	l.Exchanges, l.Ops, l.Unattached, l.ReadBytes, l.WriteBytes = e.total, e.ops, e.unattached, e.read, e.write
	l.Caption = exchCaption(ac, e)
	// The lanes are the requester and the responder when every request
	// went one way.
	switch c2s, s2c := e.inits[dissect.DirClientToServer.Index()], e.inits[dissect.DirServerToClient.Index()]; {
	case c2s > 0 && s2c == 0:
		l.ClientLabel, l.ServerLabel = "requester: "+l.ClientLabel, "responder: "+l.ServerLabel
	case s2c > 0 && c2s == 0:
		l.ClientLabel, l.ServerLabel = "responder: "+l.ClientLabel, "requester: "+l.ServerLabel
	}
	var items []item
	for i := range e.recs {
		x := &e.recs[i]
		it := item{rows: exchRows(ac.ID, i+1, e.ulp, x, cli, srv), sig: exchSignature(x.name, x.invalidated, x.status, x.ok, x.outcome)}
		it.first = it.rows[0].First
		if it.first == 0 {
			it.first = max(x.req, x.resp)
		}
		items = append(items, it)
	}
	if s := cd.sends; s != nil {
		for i := range s.sends {
			if r := &s.sends[i]; !r.claimed {
				row := sendRow(ac.ID, i, r, cli, srv)
				items = append(items, item{first: r.first, rows: []Row{row}, sig: kindTitle(row.Kind) + " " + arrowWords(r.dir)})
			}
		}
		for i := range s.loose {
			o := &s.loose[i]
			row := opRow(ac.ID, o, "", cli, srv)
			row.Title += " · no exchange explains it (" + unattachedText(o.reason) + ")"
			row.Label = clip(row.Title)
			row.Pkts = pktRange(row.First, row.Last)
			row.Anchor = fmt.Sprintf("c%d-o%d", ac.ID, i)
			items = append(items, item{first: row.First, rows: []Row{row},
				sig: opTitle(o.kind) + " of no exchange (" + unattachedText(o.reason) + ") " + arrowWords(dataDir(o))})
		}
	}
	if e.cut > 0 {
		l.OmittedTotal = e.cut
		sigs := slices.Clone(e.cutOrder)
		sort.SliceStable(sigs, func(i, j int) bool { return e.cutSigs[sigs[i]] > e.cutSigs[sigs[j]] })
		for _, s := range sigs {
			l.Omitted = append(l.Omitted, KV{strconv.FormatUint(e.cutSigs[s], 10), s})
		}
	}
	if s := cd.sends; s != nil && s.sendsCut+s.looseCut > 0 {
		l.OmittedTotal += s.sendsCut + s.looseCut
		if s.sendsCut > 0 {
			l.Omitted = append(l.Omitted, KV{strconv.FormatUint(s.sendsCut, 10), "Sends of no exchange drawn (or of exchanges past the limit)"})
		}
		if s.looseCut > 0 {
			l.Omitted = append(l.Omitted, KV{strconv.FormatUint(s.looseCut, 10), "RDMA operations no exchange explains"})
		}
	}
	return items
}

// exchCaption names what the connection is to its ULP: the first column
// of the ULP's table (NVMe/RDMA: the queue's QID) and the association of
// the exchanges (NVMe/RDMA: the controller, its ID with the host and
// subsystem NQNs).
func exchCaption(ac *report.Connection, e *exchData) string {
	s := e.ulp
	if head, row := ac.ULPTable(); len(head) > 0 && len(row) > 0 {
		s += " · " + head[0] + " " + row[0]
	}
	if a := e.assoc; a != nil {
		s += fmt.Sprintf(" · association %d: %s → %s", a.ID, a.Initiator, a.Target)
	}
	return s
}

func arrowWords(d dissect.Direction) string {
	if d == dissect.DirServerToClient {
		return "server → client"
	}
	return "client → server"
}

// dataDir is the direction an operation's data moved: a Write's, or
// against its Read Request.
func dataDir(o *opRec) dissect.Direction {
	if o.kind == dissect.RDMARead {
		return o.dir.Opposite()
	}
	return o.dir
}

func opTitle(k dissect.RDMAOpKind) string { return k.String() }

// unattachedText says why no exchange explains an operation: the
// reason's name, but for UnattachedNoULP (named when RPC was the only
// ULP) what it means on a ULP's connection.
func unattachedText(r dissect.UnattachedReason) string {
	if r == dissect.UnattachedNoULP {
		return "no ULP session saw it"
	}
	return r.String()
}

// opRow draws an RDMA operation from the side its data left.
func opRow(conn int, o *opRec, key, cli, srv string) Row {
	kind := "rdma-write"
	if o.kind == dissect.RDMARead {
		kind = "rdma-read"
	}
	dd := dataDir(o)
	r := Row{Kind: kind, First: o.first, Last: o.last, XID: key, Src: cli, Bytes: uint64(o.length)}
	if dd == dissect.DirServerToClient {
		r.Src = srv
	}
	label := fmt.Sprintf("%s %d B · STag 0x%08x offset 0x%x", opTitle(o.kind), o.length, o.stag, o.offset)
	if !o.complete {
		label += " · incomplete"
	}
	r.Label, r.Title = clip(label), label
	r.arrow(dd == dissect.DirClientToServer)
	return r
}

func sendRow(conn, i int, s *sendRec, cli, srv string) Row {
	r := Row{Kind: "send", First: s.first, Last: s.last, Src: cli, Time: fmt.Sprintf("%.6f s", s.time.Seconds())}
	if s.dir == dissect.DirServerToClient {
		r.Src = srv
	}
	label := fmt.Sprintf("Send %d B", s.length)
	if s.inv {
		r.Kind, r.Inv = "send-inv", true
		label = fmt.Sprintf("Send With Invalidate %d B (STag 0x%08x)", s.length, s.stag)
	}
	r.Label, r.Title = clip(label), label
	r.arrow(s.dir == dissect.DirClientToServer)
	r.Pkts = pktRange(r.First, r.Last)
	r.Anchor = fmt.Sprintf("c%d-s%d", conn, i)
	return r
}

// exchRows draws an exchange: its request, the RDMA operations attached to
// it, its response, in packet order; what the capture lacks as notes.
func exchRows(conn, seq int, ulp string, x *exchRec, cli, srv string) []Row {
	key := fields.ExchangeKey(ulp, x.key)
	fromClient := x.init == dissect.DirClientToServer
	requester, responder := cli, srv
	if !fromClient {
		requester, responder = srv, cli
	}
	name := x.name
	if name == "" {
		name = "request"
	}
	var rows, missing []Row
	if x.req != 0 {
		r := Row{Kind: "request", First: x.reqFirst, Last: x.req, Src: requester, XID: key,
			Time: fmt.Sprintf("%.6f s", x.reqTime.Seconds())}
		label := name + " · " + key
		var sub string
		if x.read > 0 {
			sub = fmt.Sprintf("RDMA Read %d B", x.read)
		}
		if x.write > 0 {
			if sub != "" {
				sub += " · "
			}
			sub += fmt.Sprintf("RDMA Write %d B", x.write)
		}
		r.Label, r.Sub, r.Title = clip(label), clip(sub), label
		if sub != "" {
			r.Title += "\n" + sub
		}
		r.arrow(fromClient)
		rows = append(rows, r)
	} else {
		missing = append(missing, Row{Kind: "missing", Label: "request not in the capture (" + x.outcome.String() + ")", XID: key})
	}
	for i := range x.ops {
		rows = append(rows, opRow(conn, &x.ops[i], key, cli, srv))
	}
	if x.resp != 0 {
		r := Row{Kind: "response", First: x.respFirst, Last: x.resp, Src: responder, XID: key}
		label := name + " response"
		if x.hasStatus {
			label += " · " + x.status
		}
		var sub string
		if x.invalidated {
			r.Inv = true
			sub = fmt.Sprintf("Send With Invalidate of STag 0x%08x", x.stag)
		}
		if x.opsCut > 0 {
			if sub != "" {
				sub += " · "
			}
			sub += fmt.Sprintf("%d more RDMA operations (%d B) not drawn", x.opsCut, x.opsCutBytes)
		}
		r.Label, r.Sub, r.Title = clip(label), clip(sub), label
		if sub != "" {
			r.Title += "\n" + sub
		}
		if x.req != 0 {
			r.Note = latencyText(float64(x.latency.Nanoseconds()) / 1e3)
		}
		r.arrow(!fromClient)
		rows = append(rows, r)
	} else {
		note := "no response in the capture (" + x.outcome.String() + ")"
		if x.opsCut > 0 {
			note += fmt.Sprintf("; %d more RDMA operations (%d B) not drawn", x.opsCut, x.opsCutBytes)
		}
		missing = append(missing, Row{Kind: "missing", Label: note, XID: key})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].First < rows[j].First })
	for i := range rows {
		rows[i].Pkts = pktRange(rows[i].First, rows[i].Last)
		// Unique: several exchanges may share a packet (an SMB2 compound).
		rows[i].Anchor = fmt.Sprintf("c%d-x%d-%d", conn, seq, i)
		rows[i].Exch = seq
	}
	for i := range missing {
		missing[i].MidX = (clientX + serverX) / 2
		missing[i].Exch = seq
		missing[i].Anchor = fmt.Sprintf("c%d-x%d-%d", conn, seq, len(rows)+i)
	}
	return append(rows, missing...)
}
