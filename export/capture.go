package export

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// Capture writes the tables of one capture. Hook it to the engine: Observer
// as (or before) the engine's Observer, Exchange as Options.Exchange (which
// hands each exchange to the ULPs' Exchange too), the plug-ins' own hooks
// to their tables (RPC-over-RDMA's transactions: its presentation's
// ExportTransactions), Packet from the
// per-packet callback; then Finish with the engine and the check result once the capture is read. Its
// methods are for one goroutine (one engine); several Captures run in
// parallel, each its own part files.
type Capture struct {
	cfg    Config
	common Common
	conns  *table[Connection]
	ops    *table[RDMAOp]
	finds  *table[Finding]
	pkts   *table[Packet] // nil unless Config.Packets
	health *table[TransportHealth]
	ud     *table[UDFlow]
	exchs  *table[Exchange]
	// own are the tables the ULPs registered (RegisterTable), in the
	// order of owned.
	own   []closer
	all   []closer
	err   error // the first write error
	next  dissect.Observer
	spill connSpill
	// opRow and pktRow are the rows a ULP fills (ULP.RDMAOp, ULP.Packet),
	// kept here so that handing them out costs no allocation per row.
	opRow  RDMAOp
	pktRow Packet
}

// NewCapture creates the part files of capture name (as given on the
// command line) with part number part (see Reserve).
func NewCapture(cfg Config, name string, part int) (*Capture, error) {
	cfg.fill()
	c := &Capture{cfg: cfg, common: Common{Capture: name, Label: cfg.Label}}
	initSpill(&c.spill, c.common)
	var err error
	add := func(t closer, e error) {
		if e != nil && err == nil {
			err = e
		}
		if e == nil {
			c.all = append(c.all, t)
		}
	}
	c.conns, err = newTable[Connection](&c.cfg, TableConnections, part, name)
	add(c.conns, err)
	var e error
	for _, s := range owned {
		t, e := s.open(&c.cfg, part, name)
		add(t, e)
		c.own = append(c.own, t)
	}
	c.ops, e = newTable[RDMAOp](&c.cfg, TableRDMAOps, part, name)
	add(c.ops, e)
	c.finds, e = newTable[Finding](&c.cfg, TableFindings, part, name)
	add(c.finds, e)
	c.health, e = newTable[TransportHealth](&c.cfg, TableTransportHealth, part, name)
	add(c.health, e)
	c.ud, e = newTable[UDFlow](&c.cfg, TableUDFlows, part, name)
	add(c.ud, e)
	c.exchs, e = newTable[Exchange](&c.cfg, TableExchanges, part, name)
	add(c.exchs, e)
	if cfg.Packets {
		c.pkts, e = newTable[Packet](&c.cfg, TablePackets, part, name)
		add(c.pkts, e)
	}
	if err != nil {
		c.Remove()
		return nil, err
	}
	return c, nil
}

// Err is the first error writing a row, if any.
func (c *Capture) Err() error { return c.err }

func (c *Capture) note(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}

// Observer returns an Observer that writes every RDMA operation to
// rdma_ops and hands messages and operations on to next (may be nil).
func (c *Capture) Observer(next dissect.Observer) dissect.Observer {
	c.next = next
	return (*observer)(c)
}

type observer Capture

func (o *observer) Message(m *dissect.Message) {
	if o.next != nil {
		o.next.Message(m)
	}
}

func (o *observer) RDMAOp(op *dissect.RDMAOp) {
	c := (*Capture)(o)
	c.rdmaOp(op)
	if o.next != nil {
		o.next.RDMAOp(op)
	}
}

func (o *observer) ConnectionDone(dc *dissect.Connection) {
	if n, ok := o.next.(dissect.ConnObserver); ok {
		n.ConnectionDone(dc)
	}
	o.spill.ConnectionDone(dc)
}

func (o *observer) ConnectionForgotten(dc *dissect.Connection) {
	o.spill.ConnectionForgotten(dc)
	if n, ok := o.next.(dissect.ConnForgetter); ok {
		n.ConnectionForgotten(dc)
	}
}

// SetRunner hands the Capture the check runner whose Observer it is
// (check.Config.Next) and whose result Finish is given. With it, the rows
// of a connection the engine releases — connections, transport_health,
// findings — are built as it is released and kept in a temporary file,
// and the runner and the engine let go of it, so that memory does not
// grow with the connections the capture closes (spill.go). Without it,
// they are built from what the engine and the runner hold at the end.
func (c *Capture) SetRunner(r *check.Runner) { c.spill.SetRunner(r) }

func (c *Capture) rdmaOp(op *dissect.RDMAOp) {
	if op.Conn == nil || c.err != nil {
		return
	}
	row := &c.opRow
	*row = RDMAOp{
		Common:       c.common,
		ConnectionID: int64(op.Conn.ID),
		Kind:         "write",
		Direction:    op.Dir.String(),
		STag:         int64(op.STag),
		Offset:       fmt.Sprintf("0x%016x", op.Offset),
		Length:       int64(op.Length),
		Complete:     op.Complete,
		Packets:      int64(len(op.Packets)),
		StartTime:    op.Start,
		EndTime:      op.End,
	}
	if op.Kind == dissect.RDMARead {
		row.Kind = "read"
	}
	if n := len(op.Packets); n > 0 {
		row.FirstPacket, row.LastPacket = int64(op.Packets[0]), int64(op.Packets[n-1])
	}
	for i := range ulps {
		if f := ulps[i].RDMAOp; f != nil {
			f(op, row)
		}
	}
	c.note(c.ops.add(*row))
}

// Exchange writes one finished exchange of any ULP (Options.Exchange).
func (c *Capture) Exchange(x *dissect.Exchange) {
	if x.Conn == nil || c.err != nil {
		return
	}
	row := Exchange{
		Common:       c.common,
		ConnectionID: int64(x.Conn.ID),
		ULP:          x.ULP,
		Key:          fields.ExchangeKey(x.ULP, x.Key),
		KeyNum:       int64(x.Key),
		Initiator:    x.Initiator.String(),
		Outcome:      x.Outcome.String(),
		ReadBytes:    int64(x.ReadBytes),
		WriteBytes:   int64(x.WriteBytes),
	}
	if x.Name != "" {
		row.Name = String(x.Name)
	}
	if x.Status != "" {
		ok := x.OK
		row.Status, row.OK = String(x.Status), &ok
	}
	if x.RequestPacket != 0 {
		row.RequestPacket, row.RequestTime = Int64(uint64(x.RequestPacket)), Time(x.RequestTime)
	}
	if x.ResponsePacket != 0 {
		row.ResponsePacket, row.ResponseTime = Int64(uint64(x.ResponsePacket)), Time(x.ResponseTime)
	}
	if x.RequestPacket != 0 && x.ResponsePacket != 0 {
		ns := x.Latency.Nanoseconds()
		row.LatencyNS = &ns
	}
	if x.Invalidated {
		row.InvalidatedSTag = Int64(uint64(x.InvalidatedSTag))
	}
	if a := x.Association; a != nil {
		row.AssociationInitiator, row.AssociationTarget, row.AssociationID = String(a.Initiator), String(a.Target), Int64(uint64(a.ID))
	}
	if o := &x.Object; o.HasHandle || o.HasReplyHandle || len(o.Name) > 0 {
		if o.HasHandle {
			row.FHHash = Int64(uint64(o.Handle))
		}
		if len(o.Name) > 0 {
			row.ObjectName = String(string(o.Name))
		}
		if o.HasReplyHandle {
			row.ReplyFHHash = Int64(uint64(o.ReplyHandle))
		}
	}
	c.note(c.exchs.add(row))
	for i := range ulps {
		if f := ulps[i].Exchange; f != nil {
			f(c, x)
		}
	}
}

// Packet writes the packet's summary row (when Config.Packets) and returns
// the first write error, which stops the engine.
func (c *Capture) Packet(p *dissect.Packet) error {
	if c.err != nil {
		return c.err
	}
	if c.pkts == nil {
		return nil
	}
	row := &c.pktRow
	*row = Packet{
		Common:      c.common,
		Number:      int64(p.Number),
		Time:        p.Timestamp,
		RelTime:     p.RelTime.Seconds(),
		Length:      int64(p.Length),
		CapLength:   int64(p.CaptureLength),
		Source:      fields.Source(p),
		Destination: fields.Destination(p),
		Protocol:    fields.Protocol(p),
		Info:        strings.Join(fields.InfoLines(p), "\n"),
	}
	if p.Conn != nil {
		row.ConnectionID = Int64(uint64(p.Conn.ID))
		row.Direction = String(p.Dir.String())
	}
	for i := range ulps {
		if f := ulps[i].Packet; f != nil {
			f(p, row)
		}
	}
	c.note(c.pkts.add(*row))
	return c.err
}

// Finish writes the connections the engine holds and the check result's
// findings, and closes the files. res may be nil (no checks); with
// SetRunner it is that runner's result. The rows of connections the spill
// took are read back in their place: connections and transport_health in
// the engine's order (by connection ID), findings in the result's (the
// packets outside any connection first, then by connection ID).
func (c *Capture) Finish(eng *dissect.Engine, res *check.Result) error {
	defer c.spill.Close()
	c.note(c.spill.Err())
	// The tables the engine filled take no more rows: they are closed
	// before the others are written, so that their column buffers are
	// not held with the others' (each Parquet column holds a page).
	errs := []error{closeAll(append(c.own, c.exchs, c.ops, c.pkts)...)}
	var fs []check.Finding
	if res != nil {
		fs = res.Findings
	}
	findings := map[int]int64{}
	for i := range fs {
		findings[fs[i].Connection]++
	}
	// next writes the result's findings of the connections before id.
	next := func(id int) {
		for ; len(fs) > 0 && fs[0].Connection < id && c.err == nil; fs = fs[1:] {
			c.note(c.finds.add(findingRow(c.common, &fs[0])))
		}
	}
	if eng != nil {
		var conns []*dissect.Connection // those the spill did not take
		for _, dc := range eng.Conns.Connections() {
			if !c.spill.Has(dc) {
				conns = append(conns, dc)
			}
		}
		c.spill.Finish()
		c.note(c.spill.Merge(len(conns), func(i int) int { return conns[i].ID },
			func(i int) error {
				dc := conns[i]
				if next(dc.ID); c.err != nil {
					return c.err
				}
				row := connectionRow(c.common, dc)
				row.Findings = findings[dc.ID]
				c.note(c.conns.add(row))
				for _, h := range healthOf(c.common, dc) {
					c.note(c.health.add(h))
				}
				return nil
			},
			func(rec *connRecord) error {
				if next(int(rec.Conn.ConnectionID)); c.err != nil {
					return c.err
				}
				for i := range rec.Findings {
					c.note(c.finds.add(rec.Findings[i]))
				}
				c.note(c.conns.add(rec.Conn))
				for _, h := range rec.Health {
					c.note(c.health.add(h))
				}
				return nil
			}))
	}
	next(int(^uint(0) >> 1))
	errs = append(errs, closeAll(c.conns, c.health, c.finds))
	if eng != nil {
		c.udRows(eng)
	}
	errs = append(errs, closeAll(c.all...))
	if c.err != nil {
		return c.err
	}
	return errors.Join(errs...)
}

// findingRow is a finding's row.
func findingRow(common Common, f *check.Finding) Finding {
	row := Finding{
		Common:       common,
		ConnectionID: int64(f.Connection),
		Rule:         f.Rule,
		Severity:     f.Severity.String(),
		Message:      f.Message,
		Reference:    f.Reference,
		Packets:      make([]int64, len(f.Packets)),
	}
	if f.XID != nil {
		row.XID = Int64(uint64(*f.XID))
	}
	if n := f.First(); n > 0 {
		row.FirstPacket = Int64(uint64(n))
	}
	for j, n := range f.Packets {
		row.Packets[j] = int64(n)
	}
	return row
}

// Remove closes and deletes the capture's files: nothing could be read.
func (c *Capture) Remove() error {
	var errs []error
	for _, t := range c.all {
		errs = append(errs, t.remove())
	}
	return errors.Join(errs...)
}

func connectionRow(common Common, dc *dissect.Connection) Connection {
	row := Connection{
		Common:        common,
		ConnectionID:  int64(dc.ID),
		Transport:     dc.Transport.String(),
		State:         dc.State.String(),
		Idle:          dc.Idle,
		ClientAddress: dc.Client.Address,
		ServerAddress: dc.Server.Address,
		FirstPacket:   int64(dc.FirstPacket),
		LastPacket:    int64(dc.LastPacket),
		PacketsC2S:    int64(dc.Dir[0].Packets),
		PacketsS2C:    int64(dc.Dir[1].Packets),
		BytesC2S:      int64(dc.Dir[0].Bytes),
		BytesS2C:      int64(dc.Dir[1].Bytes),
	}
	if dc.RejectReason != "" {
		row.RejectReason = String(dc.RejectReason)
	}
	if dc.Transport == dissect.TransportIWARP {
		cp, sp := int32(dc.Client.Port), int32(dc.Server.Port)
		row.ClientPort, row.ServerPort = &cp, &sp
	} else {
		if dc.Client.QPN != 0 {
			row.ClientQPN = Int64(uint64(dc.Client.QPN))
		}
		if dc.Server.QPN != 0 {
			row.ServerQPN = Int64(uint64(dc.Server.QPN))
		}
	}
	if dc.ServicePort != 0 {
		p := int32(dc.ServicePort)
		row.ServicePort = &p
	}
	if dc.ServiceID != 0 {
		row.ServiceID = String(fmt.Sprintf("0x%016x", dc.ServiceID))
	}
	pd := func(s rfc8797.Summary, present *bool, ri **bool, send, recv **int64) {
		*present = s.Present
		if s.Present {
			r := s.RemoteInvalidate
			*ri = &r
			*send, *recv = Int64(uint64(s.SendSize)), Int64(uint64(s.ReceiveSize))
		}
	}
	pd(summary(&dc.PrivateData[0]), &row.ClientPDPresent, &row.ClientRemoteInvalidate, &row.ClientSendSize, &row.ClientReceiveSize)
	pd(summary(&dc.PrivateData[1]), &row.ServerPDPresent, &row.ServerRemoteInvalidate, &row.ServerSendSize, &row.ServerReceiveSize)
	if dc.Negotiated {
		th := rfc8797.NegotiateFramed(dc.PrivateData[0].Bytes, dc.PrivateData[0].Framing, dc.PrivateData[1].Bytes, dc.PrivateData[1].Framing)
		row.InlineThresholdC2S = Int64(uint64(th.ClientToServer))
		row.InlineThresholdS2C = Int64(uint64(th.ServerToClient))
		r := th.RemoteInvalidation
		row.RemoteInvalidationNegotd = &r
	}
	for i := range ulps {
		if f := ulps[i].Connection; f != nil {
			f(dc, &row)
		}
	}
	return row
}

// Rows returns the rows written so far to each table.
func (c *Capture) Rows() map[string]int64 {
	m := map[string]int64{
		TableConnections: c.conns.rows,
		TableRDMAOps:     c.ops.rows,
		TableFindings:    c.finds.rows,
	}
	for i, s := range owned {
		m[s.name] = c.own[i].rowCount()
	}
	if c.health != nil {
		m[TableTransportHealth], m[TableUDFlows] = c.health.rows, c.ud.rows
	}
	if c.exchs != nil {
		m[TableExchanges] = c.exchs.rows
	}
	if c.pkts != nil {
		m[TablePackets] = c.pkts.rows
	}
	return m
}

// summary is one side's RFC 8797 private data as the connections table
// shows it.
func summary(pd *dissect.PrivateData) rfc8797.Summary {
	return rfc8797.Summarize(pd.Seen, pd.Packet, pd.Bytes, pd.Framing)
}
