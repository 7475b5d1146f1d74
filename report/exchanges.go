package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// ExchangeList is the document of `rdmashark exchanges --format json`: one
// entry per exchange — a request and its response — of every upper-layer
// protocol (dissect.Exchange), in the order of their requests. Its keys
// are a contract: later versions add keys and never rename these.
//
// The list keeps each exchange as it ends in a flat record; past spillAt
// of them they are sorted in runs written to an unlinked temporary file
// and merged when the list is written (exchanges_spill.go), so memory
// stays flat on captures of any length.
type ExchangeList struct {
	File string
	// Omitted counts exchanges that matched the filter but were not kept
	// because the list was full (the --max limit).
	Omitted uint64
	// Errors lists what stopped reading early.
	Errors []string

	recs    []exchRec
	max     int
	filter  ExchFilter
	spill   *exchSpill
	noSpill bool
	// widths are the text table's natural column widths over every
	// record kept, taken as they are added.
	widths [exchColumns]int
	cells  exchCells
}

// Exchange is one exchange as the JSON document and the JSON lines write
// it.
type Exchange struct {
	// ULP is the upper-layer protocol's name ("rpcordma").
	ULP string `json:"ulp"`
	// Connection is the connection's ID, as analyze numbers them.
	Connection int `json:"connection"`
	// Key identifies the exchange on its connection, written as its ULP
	// writes it: the RPC XID as "0x%08x"; decimal for a ULP without a
	// format of its own.
	Key string `json:"key"`
	// Initiator is the direction the request went: "client-to-server" or
	// "server-to-client" (an NFSv4.1 callback).
	Initiator string `json:"initiator"`
	// Name is what the request asked for ("NFS3 READ"); "" when the
	// request is not in the capture.
	Name string `json:"name"`
	// Status names the response's status ("SUCCESS"); null without one.
	// OK is whether it is a success; null without a status.
	Status *string `json:"status"`
	OK     *bool   `json:"ok"`
	// RequestPacket and ResponsePacket are where the request and the
	// response were decoded; null when not in the capture.
	RequestPacket  *int `json:"request_packet"`
	ResponsePacket *int `json:"response_packet"`
	// LatencyNS is the time from the request's Send to the response's in
	// nanoseconds (for rpcordma transactions' latency_us: a Call rebuilt
	// from a Read chunk is decoded later than its Send went); null
	// without both.
	LatencyNS *int64 `json:"latency_ns"`
	// ReadBytes and WriteBytes are what the RDMA Reads and Writes
	// attached to the request's advertised memory moved.
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	// InvalidatedSTag is the STag the response's Send With Invalidate
	// invalidated; null for a plain Send.
	InvalidatedSTag *Hex32 `json:"invalidated_stag"`
	// Outcome: "responded", "no-response" (the capture or the connection
	// ended first), "evicted" (the ULP's bound of open exchanges),
	// "superseded" (a new request with the same key),
	// "response-without-request".
	Outcome string `json:"outcome"`
	// Association is the association of connections the exchange's
	// connection belongs to, when its ULP has one and the capture names
	// it (NVMe/RDMA: the controller: initiator the host NQN, target the
	// subsystem NQN, id the CNTLID); absent otherwise.
	Association *dissect.Association `json:"association,omitempty"`
	// FHHash is the hash of the handle of the object the request acts
	// on, when its ULP can tell (rpcordma: tshark's nfs.fh.hash, as
	// transactions' fh_hash); ObjectName the name it looks up, creates
	// or removes (transactions' name); ReplyFHHash the hash of the handle
	// the response returned for that name (transactions' reply_fh_hash).
	// Absent otherwise.
	FHHash      *Hex32 `json:"fh_hash,omitempty"`
	ObjectName  string `json:"object_name,omitempty"`
	ReplyFHHash *Hex32 `json:"reply_fh_hash,omitempty"`
}

// exchRec is an exchange as the list keeps it: flat, its strings the
// engine's (names and statuses from the ULPs' tables).
type exchRec struct {
	ulp, name, status string
	conn              int
	key               uint64
	init              dissect.Direction
	outcome           dissect.Outcome
	hasStatus, ok     bool
	invalidated       bool
	stag              uint32
	req, resp         int
	latency           int64
	read, write       uint64
	// The association (hasAssoc): initiator, target, id.
	hasAssoc               bool
	assocInit, assocTarget string
	assocID                uint32
	// The object (dissect.ExchangeObject): its handle's hash (hasFH),
	// name ("" none) and the response's handle (hasReplyFH).
	hasFH, hasReplyFH bool
	fh, replyFH       uint32
	objName           string
}

func newExchRec(x *dissect.Exchange) exchRec {
	r := exchRec{ulp: x.ULP, name: x.Name, key: x.Key, init: x.Initiator, outcome: x.Outcome,
		invalidated: x.Invalidated, stag: x.InvalidatedSTag, req: x.RequestPacket, resp: x.ResponsePacket,
		latency: int64(x.Latency), read: x.ReadBytes, write: x.WriteBytes}
	if x.Conn != nil {
		r.conn = x.Conn.ID
	}
	if x.Status != "" {
		r.status, r.hasStatus, r.ok = x.Status, true, x.OK
	}
	if !r.invalidated {
		r.stag = 0
	}
	if a := x.Association; a != nil {
		r.hasAssoc, r.assocInit, r.assocTarget, r.assocID = true, a.Initiator, a.Target, a.ID
	}
	if o := &x.Object; o.HasHandle || o.HasReplyHandle || len(o.Name) > 0 {
		r.hasFH, r.fh, r.hasReplyFH, r.replyFH = o.HasHandle, o.Handle, o.HasReplyHandle, o.ReplyHandle
		r.objName = string(o.Name)
	}
	return r
}

// hasLatency: a latency needs both the request and the response.
func (r *exchRec) hasLatency() bool { return r.req != 0 && r.resp != 0 }

// sortKey orders the list: the request's packet, the response's for a
// response without its request.
func (r *exchRec) sortKey() int {
	if r.req != 0 {
		return r.req
	}
	return r.resp
}

// exchange is r as the JSON document writes it.
func (r *exchRec) exchange() Exchange {
	x := Exchange{ULP: r.ulp, Connection: r.conn, Key: fields.ExchangeKey(r.ulp, r.key), Initiator: r.init.String(),
		Name: r.name, ReadBytes: r.read, WriteBytes: r.write, Outcome: r.outcome.String()}
	if r.hasStatus {
		s, ok := r.status, r.ok
		x.Status, x.OK = &s, &ok
	}
	if r.req != 0 {
		p := r.req
		x.RequestPacket = &p
	}
	if r.resp != 0 {
		p := r.resp
		x.ResponsePacket = &p
	}
	if r.hasLatency() {
		ns := r.latency
		x.LatencyNS = &ns
	}
	if r.invalidated {
		s := Hex32(r.stag)
		x.InvalidatedSTag = &s
	}
	if r.hasAssoc {
		x.Association = &dissect.Association{Initiator: r.assocInit, Target: r.assocTarget, ID: r.assocID}
	}
	if r.hasFH {
		h := Hex32(r.fh)
		x.FHHash = &h
	}
	if r.hasReplyFH {
		h := Hex32(r.replyFH)
		x.ReplyFHHash = &h
	}
	x.ObjectName = r.objName
	return x
}

// ExchFilter selects exchanges; zero values select everything.
type ExchFilter struct {
	Connection int    // connection ID
	ULP        string // ULP name
}

func (f *ExchFilter) matches(x *dissect.Exchange) bool {
	if f.Connection != 0 && (x.Conn == nil || x.Conn.ID != f.Connection) {
		return false
	}
	return f.ULP == "" || f.ULP == x.ULP
}

// DefaultMaxExchanges bounds an ExchangeList unless told otherwise.
const DefaultMaxExchanges = DefaultMaxTransactions

// NewExchangeList returns an empty list that keeps at most max exchanges
// (DefaultMaxExchanges when max <= 0) matching f.
func NewExchangeList(file string, max int, f ExchFilter) *ExchangeList {
	if max <= 0 {
		max = DefaultMaxExchanges
	}
	return &ExchangeList{File: file, max: max, filter: f}
}

// Add keeps a finished exchange (an Options.Exchange callback argument,
// which the engine reuses: it is copied) if it matches the filter and the
// list has room.
func (l *ExchangeList) Add(x *dissect.Exchange) {
	if !l.filter.matches(x) {
		return
	}
	if l.Len() >= l.max {
		l.Omitted++
		return
	}
	r := newExchRec(x)
	l.cells.build(&r)
	for i := range l.widths {
		l.widths[i] = max(l.widths[i], utf8.RuneCount(l.cells.cell(i)))
	}
	l.recs = append(l.recs, r)
	l.maybeSpill()
}

// Len is the number of exchanges kept, in memory and on disk.
func (l *ExchangeList) Len() int {
	n := len(l.recs)
	if l.spill != nil {
		n += l.spill.n
	}
	return n
}

// sortMem orders the records in memory by sortKey, ties in the order they
// ended.
func (l *ExchangeList) sortMem() {
	sort.SliceStable(l.recs, func(i, j int) bool { return l.recs[i].sortKey() < l.recs[j].sortKey() })
}

// Each calls fn with every exchange kept, in the order of their requests
// (ties in the order they ended), each in the same Exchange value, which
// fn must not keep. The first error stops it and is returned.
func (l *ExchangeList) Each(fn func(*Exchange) error) error {
	return l.each(func(r *exchRec) error {
		x := r.exchange()
		return fn(&x)
	})
}

// exchDoc is the JSON document: the exchanges streamed from the list.
type exchDoc struct {
	File      string   `json:"file"`
	Exchanges exchSeq  `json:"exchanges"`
	Omitted   uint64   `json:"omitted,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

type exchSeq struct{ l *ExchangeList }

// streamJSON writes the exchanges one at a time ("[]" for none).
func (q exchSeq) streamJSON(s *jsonStream, prefix string) {
	s.list(prefix, "[]", func(put func(reflect.Value)) error {
		return q.l.Each(func(x *Exchange) error {
			put(reflect.ValueOf(x).Elem())
			return s.err
		})
	})
}

// WriteJSON writes the document, indented, one exchange at a time.
func (l *ExchangeList) WriteJSON(w io.Writer) error {
	if l.spill != nil && l.spill.err != nil {
		return l.spill.err
	}
	return writeJSONStream(w, &exchDoc{File: l.File, Exchanges: exchSeq{l}, Omitted: l.Omitted, Errors: l.Errors})
}

// exchColumns is the number of columns of the text table.
const exchColumns = 12

var exchHeader = [exchColumns]string{"Conn", "ULP", "Key", "Dir", "Name", "Status", "Req", "Resp", "Lat µs", "Read", "Write", "Inv. STag"}

// exchRight are the columns aligned right: the numbers.
var exchRight = [exchColumns]bool{0: true, 6: true, 7: true, 8: true, 9: true, 10: true}

// exchWidth is the terminal the text table fits: wider rows have their
// Name, then their Status, cut (exchShrink).
const exchWidth = 100

// exchShrink are the columns cut to fit exchWidth, in order, each to no
// less than its minimum (nor its header): Name, Status, then both to
// their headers. Numbers are never cut: a row of numbers too wide for
// exchWidth is written whole.
var exchShrink = [...]exchCut{{4, 12}, {5, 8}, {4, 0}, {5, 0}}

// exchCells is one row's cells appended to one reused buffer, ends[i]
// where cell i ends.
type exchCells struct {
	b    []byte
	ends [exchColumns]int
}

func (c *exchCells) cell(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.b[start:c.ends[i]]
}

// build fills the row of r: connection, ULP, key, direction ("c2s",
// "s2c"), name, status (the outcome when there is no status and the
// exchange did not end with its response), the request's and the
// response's packets, the latency in µs with one decimal, the RDMA bytes
// read and written, the invalidated STag; "-" where there is nothing.
func (c *exchCells) build(r *exchRec) {
	b := c.b[:0]
	end := func(i int) { c.ends[i] = len(b) }
	dash := func(b []byte, ok bool, f func([]byte) []byte) []byte {
		if !ok {
			return append(b, '-')
		}
		return f(b)
	}
	b = strconv.AppendInt(b, int64(r.conn), 10)
	end(0)
	b = append(b, r.ulp...)
	end(1)
	b = fields.AppendExchangeKey(b, r.ulp, r.key)
	end(2)
	switch r.init {
	case dissect.DirClientToServer:
		b = append(b, "c2s"...)
	case dissect.DirServerToClient:
		b = append(b, "s2c"...)
	default:
		b = append(b, '?')
	}
	end(3)
	b = dash(b, r.name != "", func(b []byte) []byte { return append(b, r.name...) })
	end(4)
	switch {
	case r.hasStatus:
		b = append(b, r.status...)
	case r.outcome != dissect.Responded:
		b = append(b, r.outcome.String()...)
	default:
		b = append(b, '-')
	}
	end(5)
	b = dash(b, r.req != 0, func(b []byte) []byte { return strconv.AppendInt(b, int64(r.req), 10) })
	end(6)
	b = dash(b, r.resp != 0, func(b []byte) []byte { return strconv.AppendInt(b, int64(r.resp), 10) })
	end(7)
	b = dash(b, r.hasLatency(), func(b []byte) []byte { return strconv.AppendFloat(b, float64(r.latency)/1e3, 'f', 1, 64) })
	end(8)
	b = strconv.AppendUint(b, r.read, 10)
	end(9)
	b = strconv.AppendUint(b, r.write, 10)
	end(10)
	b = dash(b, r.invalidated, func(b []byte) []byte { return fields.AppendHex(b, uint64(r.stag), 8) })
	end(11)
	c.b = b
}

// tableWidths are the text table's column widths: the cells' and the
// headers', the text columns cut until a row fits exchWidth.
func (l *ExchangeList) tableWidths(width int, drop bool) (w [exchColumns]int, keep [exchColumns]bool, dropped []string) {
	total := exchColumns - 1 // one space between columns
	for i, h := range exchHeader {
		w[i] = max(l.widths[i], utf8.RuneCountInString(h))
		total += w[i]
		keep[i] = true
	}
	shrink := func(steps []exchCut) {
		for _, s := range steps {
			if total <= width {
				break
			}
			if cut := min(total-width, w[s.col]-max(s.min, utf8.RuneCountInString(exchHeader[s.col]))); cut > 0 {
				w[s.col] -= cut
				total -= cut
			}
		}
	}
	if !drop {
		shrink(exchShrink[:])
		return w, keep, nil
	}
	// Name and Status to their minimums; then, on a narrow terminal, the
	// least wanted columns go before either is cut further.
	shrink(exchShrink[:2])
	for _, c := range exchDrop {
		if total <= width {
			break
		}
		keep[c] = false
		total -= w[c] + 1
		dropped = append(dropped, exchHeader[c])
	}
	shrink(exchShrink[2:])
	return w, keep, dropped
}

// exchCut is a column exchShrink cuts, and the least it cuts it to.
type exchCut struct{ col, min int }

// exchDrop are the columns left out, in order, when cutting Name and
// Status is not enough for the width (--wide shows them).
var exchDrop = [...]int{11, 3, 10, 9, 1}

// WriteTable writes one line per exchange, in columns that fit a
// 100-column terminal.
func (l *ExchangeList) WriteTable(w io.Writer) error {
	return l.writeTable(w, exchWidth, false)
}

// WriteText writes the table in columns that fit lay's width (the Name and
// Status cut, then the least wanted columns left out), or whole with
// lay.Wide.
func (l *ExchangeList) WriteText(w io.Writer, lay Layout) error {
	if lay.Wide {
		return l.writeTable(w, math.MaxInt, false)
	}
	return l.writeTable(w, lay.width(), true)
}

func (l *ExchangeList) writeTable(w io.Writer, width int, drop bool) error {
	if l.spill != nil && l.spill.err != nil {
		return l.spill.err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "%s: %d exchanges\n", l.File, l.Len())
	var dropped []string
	if l.Len() > 0 {
		var widths [exchColumns]int
		var keep [exchColumns]bool
		widths, keep, dropped = l.tableWidths(width, drop)
		last := 0
		for i, k := range keep {
			if k {
				last = i
			}
		}
		var line []byte
		put := func(i int, cell []byte) {
			if !keep[i] {
				return
			}
			if len(line) > 0 {
				line = append(line, ' ')
			}
			n := utf8.RuneCount(cell)
			if n > widths[i] {
				// Cut to the width, the last column an ellipsis.
				k, cut := 0, 0
				for cut < len(cell) && k < widths[i]-1 {
					_, sz := utf8.DecodeRune(cell[cut:])
					cut += sz
					k++
				}
				cell, n = append(cell[:cut:cut], "…"...), widths[i]
			}
			pad := widths[i] - n
			if exchRight[i] {
				line = appendSpaces(line, pad)
				line = append(line, cell...)
			} else if i < last {
				line = append(line, cell...)
				line = appendSpaces(line, pad)
			} else {
				line = append(line, cell...) // no trailing spaces
			}
		}
		for i, h := range exchHeader {
			put(i, []byte(h))
		}
		bw.Write(append(line, '\n'))
		var c exchCells
		if err := l.each(func(r *exchRec) error {
			c.build(r)
			line = line[:0]
			for i := range exchHeader {
				put(i, c.cell(i))
			}
			_, err := bw.Write(append(line, '\n'))
			return err
		}); err != nil {
			return err
		}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(bw, "(%s not shown at %d columns: --wide shows every column)\n", strings.Join(dropped, ", "), width)
	}
	if l.Omitted > 0 {
		fmt.Fprintf(bw, "%d more exchanges matched but were not kept (--max)\n", l.Omitted)
	}
	for _, e := range l.Errors {
		fmt.Fprintf(bw, "reading stopped early: %s\n", e)
	}
	return bw.Flush()
}

// ExchangeStream is `rdmashark exchanges --format jsonl`: each exchange is
// written the moment it ends, as one JSON object on a line (the
// document's exchange with the capture's name in "file" first), so that
// nothing is kept and a live pipe is listed as it is read. Lines come in
// the order exchanges end, not of their requests.
type ExchangeStream struct {
	File string

	w       *bufio.Writer
	enc     *json.Encoder
	filter  ExchFilter
	max     int
	n       int
	omitted uint64
	err     error
}

type streamedExch struct {
	File string `json:"file"`
	*Exchange
}

// NewExchangeStream returns a stream writing to w the exchanges that
// match f, at most max of them (DefaultMaxExchanges when max <= 0).
func NewExchangeStream(w io.Writer, file string, max int, f ExchFilter) *ExchangeStream {
	if max <= 0 {
		max = DefaultMaxExchanges
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &ExchangeStream{File: file, w: bw, enc: enc, filter: f, max: max}
}

// Add writes a finished exchange if it matches the filter and the limit
// has room. A write error is kept (Err) and stops further writes.
func (s *ExchangeStream) Add(x *dissect.Exchange) {
	if s.err != nil || !s.filter.matches(x) {
		return
	}
	if s.n >= s.max {
		s.omitted++
		return
	}
	s.n++
	r := newExchRec(x)
	e := r.exchange()
	s.err = s.enc.Encode(streamedExch{File: s.File, Exchange: &e})
}

// Flush writes out what is buffered.
func (s *ExchangeStream) Flush() error {
	if s.err != nil {
		return s.err
	}
	s.err = s.w.Flush()
	return s.err
}

// Len is the number of exchanges written.
func (s *ExchangeStream) Len() int { return s.n }

// Omitted counts the matching exchanges past the limit.
func (s *ExchangeStream) Omitted() uint64 { return s.omitted }

// Err is the first write error.
func (s *ExchangeStream) Err() error { return s.err }
