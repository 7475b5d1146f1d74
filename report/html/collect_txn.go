package html

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/report"
)

// Transaction records a finished RPC-over-RDMA transaction, as
// `transactions --format json` converts it (report.ConvertTransaction of
// what rpcordma.OnTransaction hands out: the command converts it, so that
// this package reads no plug-in's types): into its procedure's latency and
// chunk-usage statistics, and into its connection's diagram while the
// connection has fewer than MaxDetail, else into the connection's folded
// count of its signature.
func (c *Collector) Transaction(x *report.Transaction) {
	c.addProc(x)
	cd := c.connByID(x.Connection)
	if cd == nil {
		return
	}
	cd.dropEvents()
	// Its ladder draws the transactions: the neutral one's records go.
	cd.exch, cd.sends = nil, nil
	if cd.txns.Len() < c.opts.MaxDetail {
		cd.txns.Add(x)
		return
	}
	cd.txnsOmitted++
	sig := Signature(x, nil)
	if _, ok := cd.omittedSigs[sig]; !ok && len(cd.omittedSigs) >= maxSignatures {
		sig = "other"
	}
	if _, ok := cd.omittedSigs[sig]; !ok {
		cd.sigOrder = append(cd.sigOrder, sig)
	}
	cd.omittedSigs[sig]++
}

// Chunk usage classes of a Call (the chunk-usage chart).
var ChunkClasses = []string{"inline", "read", "write", "reply", "call"}

// ChunkUsage returns the classes of a transaction's Call: "inline" when it
// provided no chunk, else each kind of chunk it provided ("read", "write",
// "reply", version 2 "call"); nil without a Call.
func ChunkUsage(x *report.Transaction) []string {
	if x.Call == nil {
		return nil
	}
	var out []string
	for _, cl := range ChunkClasses[1:] {
		for _, ch := range x.Call.Chunks {
			if ch.Kind == cl {
				out = append(out, cl)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []string{"inline"}
	}
	return out
}

// nfs4Setup are the COMPOUND operations that set up the one that names the
// request (RFC 8881 section 2.10.6, section 16).
var nfs4Setup = []string{"SEQUENCE", "PUTFH", "PUTROOTFH", "PUTPUBFH", "SAVEFH", "RESTOREFH", "GETFH", "GETATTR"}

// ProcedureKey names a transaction's procedure for the charts: program,
// version and procedure ("NFS v3 READ"); an NFSv4 COMPOUND by its first
// operation that is not SEQUENCE, a file handle operation or GETATTR
// ("NFS v4 READ"), or its last operation when it has no other.
func ProcedureKey(x *report.Transaction) string {
	if x.Procedure == nil {
		return "(unknown)"
	}
	prog := x.ProgramName
	if prog == "" {
		prog = strconv.FormatUint(uint64(*x.Program), 10)
	}
	name := x.ProcedureName
	if name == "" {
		name = strconv.FormatUint(uint64(*x.Procedure), 10)
	}
	if n := len(x.Operations); n > 0 {
		name = x.Operations[n-1]
		for _, op := range x.Operations {
			if !slices.Contains(nfs4Setup, op) {
				name = op
				break
			}
		}
	}
	s := fmt.Sprintf("%s v%d %s", prog, *x.Version, name)
	if x.Direction == "backchannel" {
		s += " (callback)"
	}
	return s
}

// Signature is what folds repeated exchanges together: the procedure, how
// its Call moved its data, how the Reply came (Send With Invalidate or
// not, and its status), its outcome, and the rules that found something
// in it.
func Signature(x *report.Transaction, rules []string) string {
	var b strings.Builder
	b.WriteString(ProcedureKey(x))
	switch u := ChunkUsage(x); {
	case u == nil:
	case u[0] == "inline":
		b.WriteString(" inline")
	default:
		b.WriteString(" by ")
		for i, k := range u {
			if i > 0 {
				b.WriteString(" + ")
			}
			b.WriteString(chunkTitle(k))
		}
	}
	if x.InvalidatedSTag != nil {
		b.WriteString(", Send With Invalidate")
	}
	if x.Reply != nil && x.Reply.Status != "" && x.Reply.Status != "SUCCESS" {
		b.WriteString(", " + x.Reply.Status)
	}
	if x.Outcome != "replied" {
		b.WriteString(", " + x.Outcome)
	}
	if len(rules) > 0 {
		b.WriteString(" [" + strings.Join(rules, ", ") + "]")
	}
	return b.String()
}

func chunkTitle(kind string) string {
	switch kind {
	case "read":
		return "Read chunk"
	case "write":
		return "Write chunk"
	case "reply":
		return "Reply chunk"
	case "call":
		return "Call chunk"
	}
	return kind
}

// procStats are one procedure's latencies and chunk usage.
type procStats struct {
	key string
	// seen counts latencies offered; lat holds them all, or a uniform
	// sample of LatencySample once there were more.
	seen  uint64
	lat   []float64
	usage map[string]uint64
	calls uint64
}

func (c *Collector) addProc(x *report.Transaction) {
	key := ProcedureKey(x)
	ps := c.procs[key]
	if ps == nil {
		if len(c.procs) >= maxProcedures {
			key = "(other procedures)"
			ps = c.procs[key]
		}
		if ps == nil {
			ps = &procStats{key: key, usage: map[string]uint64{}}
			c.procs[key] = ps
			c.procOrder = append(c.procOrder, key)
		}
	}
	if u := ChunkUsage(x); u != nil {
		ps.calls++
		for _, k := range u {
			ps.usage[k]++
		}
	}
	if x.LatencyUS == nil {
		return
	}
	ps.seen++
	if len(ps.lat) < c.opts.LatencySample {
		ps.lat = append(ps.lat, *x.LatencyUS)
		return
	}
	// Reservoir sampling (Algorithm R).
	if j := c.rng.Uint64N(ps.seen); j < uint64(len(ps.lat)) {
		ps.lat[j] = *x.LatencyUS
	}
}
