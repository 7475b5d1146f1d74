package present

import (
	"fmt"
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// reportULP is RPC-over-RDMA's part of the text and JSON reports: its
// analyze section ("rpc", with the version 2 transport) and its engine
// counters, the gate's transactions, stats' SRT names and the
// transactions document's form of a transaction.
var reportULP = report.ULP{
	Name:               rpcordma.Name,
	RFC8797:            true,
	Connection:         reportConnection,
	Counters:           reportCounters,
	TxnCounters:        reportTxnCounters,
	Transactions:       reportTransactions,
	SRT:                reportSRT,
	ConvertTransaction: convertAny,
}

// reportConnection fills a connection's "rpc" section; the statistics it
// presents are the connection's ULPData.
func reportConnection(c *dissect.Connection, out *report.Connection) bool {
	out.RPC = rpcConnection(c)
	return rpcordma.Stats(c) != nil
}

func rpcDirs(a [2]uint64) report.DirCount {
	return report.DirCount{ClientToServer: a[0], ServerToClient: a[1]}
}

func rpcDirs32(a [2]uint32) report.DirCount {
	return report.DirCount{ClientToServer: uint64(a[0]), ServerToClient: uint64(a[1])}
}

func rpcConnection(c *dissect.Connection) *report.RPCConnection {
	s := rpcordma.Stats(c)
	if s == nil {
		return nil
	}
	out := &report.RPCConnection{
		Version:                  s.Version,
		Messages:                 rpcDirs(s.Messages),
		BadHeaders:               rpcDirs(s.BadHeaders),
		FirstBadHeader:           s.FirstBadHeader,
		Calls:                    report.RPCChannels{Forward: s.Calls[0], Backchannel: s.Calls[1]},
		Errors:                   rpcDirs(s.Errors),
		Control:                  rpcDirs(s.Control),
		Short:                    rpcDirs(s.Short),
		Chunked:                  rpcDirs(s.Chunked),
		Long:                     rpcDirs(s.Long),
		RepliesWithInvalidate:    s.RepliesWithInvalidate,
		RepliesWithoutInvalidate: s.RepliesWithoutInvalidate,
		Outstanding:              s.Outstanding,
		CallsWithoutReply:        s.CallsWithoutReply,
		RepliesWithoutCall:       s.RepliesWithoutCall,
		Evicted:                  s.Evicted,
		UnattachedRDMAOps:        s.UnattachedOps,
		Rebuilt:                  s.Rebuilt,
		RebuildIncomplete:        s.RebuildIncomplete,
	}
	// A forward Reply goes server to client.
	out.Replies = report.RPCChannels{Forward: s.Replies[1], Backchannel: s.Replies[0]}
	out.Versions.V1, out.Versions.V2, out.Versions.Other = s.Versions[1], s.Versions[2], s.Versions[0]
	out.Credits.Requested = rpcDirs32(s.CreditsRequested)
	out.Credits.MaxRequested = rpcDirs32(s.MaxCreditsRequested)
	out.Credits.Granted = rpcDirs32(s.CreditsGranted)
	out.Credits.MaxGranted = rpcDirs32(s.MaxCreditsGranted)
	if s.Versions[2] > 0 {
		out.CreditLimits = &report.CreditLimits{Last: rpcDirs32(s.CreditLimits), Max: rpcDirs32(s.MaxCreditLimits), Sent: rpcDirs(s.V2Sent)}
	}
	out.V2 = v2Transport(c)
	out.Bytes.Send = rpcDirs(s.SendBytes)
	out.Bytes.RDMARead = rpcDirs(s.ReadBytes)
	out.Bytes.RDMAWrite = rpcDirs(s.WriteBytes)
	return out
}

// v2Transport returns c's version 2 summary, nil when version 2 is not
// the connection's version (none of its messages used it, or it fell back
// to version 1 after RDMA2_ERR_VERS).
func v2Transport(c *dissect.Connection) *report.V2Transport {
	rs := rpcordma.Stats(c)
	if rs == nil || rs.Version != rpcrdma.Version2 || rs.Versions[2] == 0 {
		return nil
	}
	p := rs.V2Props
	out := &report.V2Transport{InlineThreshold: report.Thresholds{ClientToServer: p.Threshold(0), ServerToClient: p.Threshold(1)}, Source: "default"}
	if p.Exchanged() {
		out.Source = "transport properties"
		out.Client, out.Server = v2Side(&p.Sides[0]), v2Side(&p.Sides[1])
	}
	return out
}

func v2Side(s *rpcordma.V2PropSide) *report.V2Side {
	if s.Messages == 0 {
		return nil
	}
	out := &report.V2Side{Messages: s.Messages, FirstPacket: s.FirstPacket, FinalPacket: s.FinalPacket,
		SBSIZ: s.SBSIZ, RBSIZ: s.RBSIZ, RSSIZ: s.RSSIZ, RCSIZ: s.RCSIZ, BRS: s.BRS.String(),
		Published: []string{}, Unknown: s.Unknown, BadValues: s.BadValues, FirstBad: s.FirstBad}
	if s.HostAuth >= 0 {
		n := s.HostAuth
		out.HostAuth = &n
	}
	for id := rpcrdma.PropMaxSendSize; id <= rpcrdma.PropHostAuth; id++ {
		if s.Has(id) {
			out.Published = append(out.Published, id.String())
		}
	}
	return out
}

// ConvertTransaction returns a finished transaction (an
// rpcordma.OnTransaction callback argument) as `transactions --format json`
// writes it (report.ConvertTransaction, for the HTML report, comes here).
func ConvertTransaction(t *rpcordma.Transaction) report.Transaction {
	out := report.Transaction{
		XID: report.Hex32(t.XID), Connection: t.Conn.ID, Direction: t.Direction.String(),
		ProcedureName: t.ProcedureName, Operations: append([]string{}, t.Operations...),
		Outcome: t.Outcome.String(), Name: string(t.Name),
	}
	if t.HasFH {
		h := report.Hex32(t.FHHash)
		out.FHHash = &h
	}
	if t.ReplyHasFH {
		h := report.Hex32(t.ReplyFHHash)
		out.ReplyFHHash = &h
	}
	if t.HasProgram {
		p, v, pr := t.Program, t.Version, t.Procedure
		out.Program, out.Version, out.Procedure = &p, &v, &pr
		if name := oncrpc.Program(p).String(); name != strconv.FormatUint(uint64(p), 10) {
			out.ProgramName = name
		}
	}
	out.RDMA.ReadBytes, out.RDMA.WriteBytes = t.ReadBytes, t.WriteBytes
	if t.Call != nil {
		out.Call = convertSide(t.Call, false)
	}
	if t.Reply != nil {
		out.Reply = convertSide(t.Reply, true)
		if t.Reply.Invalidate {
			s := report.Hex32(t.Reply.InvalidatedSTag)
			out.InvalidatedSTag = &s
		}
		if t.Call != nil {
			us := float64(t.Latency.Nanoseconds()) / 1e3
			out.LatencyUS = &us
		}
	}
	return out
}

func convertSide(s *rpcordma.RPCSide, reply bool) *report.TxnSide {
	out := &report.TxnSide{Packets: append([]int{}, s.Packets...), RDMAProc: s.ProcName(), RDMAVers: s.Vers,
		Credits: s.Credits, Chunks: []report.TxnChunk{}, InlineBytes: s.InlineBytes, RPCBytes: s.RPCBytes, Rebuilt: s.Rebuilt}
	if reply && s.HasStatus {
		if s.ReplyStat != oncrpc.MsgAccepted {
			out.Status = s.ReplyStat.String()
		} else {
			out.Status = s.AcceptStat.String()
		}
	}
	for _, ch := range s.Chunks {
		c := report.TxnChunk{Kind: ch.Kind.String(), Segments: []report.TxnSegment{}}
		if ch.Kind == rpcordma.ChunkRead || ch.Kind == rpcordma.ChunkCall {
			p := ch.Position
			c.Position = &p
		}
		for _, sg := range ch.Segments {
			seg := report.TxnSegment{Handle: report.Hex32(sg.Handle), Length: sg.Length, Offset: report.Hex64(sg.Offset)}
			for _, op := range sg.Ops {
				kind := "write"
				if op.Kind == dissect.RDMARead {
					kind = "read"
				}
				seg.RDMAOps = append(seg.RDMAOps, report.TxnRDMAOp{Kind: kind, FirstPacket: op.FirstPacket, LastPacket: op.LastPacket,
					Offset: report.Hex64(op.Offset), Length: op.Length, Complete: op.Complete})
			}
			c.Segments = append(c.Segments, seg)
		}
		out.Chunks = append(out.Chunks, c)
	}
	return out
}

// reportCounters fills analyze's engine "rpc" counters.
func reportCounters(e *dissect.Snapshot, out *report.EngineCounters) {
	o, c := &e.Ops, rpcordma.Counters(e)
	out.RPC = report.RPCCounters{
		Sends: o.Sends, RDMAReads: o.RDMAReads, RDMAWrites: o.RDMAWrites, RDMAOpsIncomplete: o.RDMAOpsIncomplete,
		// Every Send is on an RPC-over-RDMA connection or not.
		Messages: c.Messages, NotRPC: o.Sends - c.Messages, BadHeaders: c.BadHeaders, RetransmittedSends: c.Duplicates,
		Calls: c.Calls, Replies: c.Replies, Transactions: c.Finished, TransactionsEvicted: c.Evicted,
		TransactionsSuperseded: c.Superseded, CallsWithoutReply: c.NoReply, RepliesWithoutCall: c.ReplyNoCall,
		UnattachedRDMAOps: c.Unattached, UnattachedByReason: map[string]uint64{}, Unattached: []report.UnattachedOp{},
		Rebuilt: c.Rebuilt, RebuiltBad: c.RebuiltBad, RebuildSkipped: c.RebuildSkipped,
		MaxRebuildBytesHeld: c.MaxRebuildBytesHeld,
	}
	for _, u := range c.UnattachedOps {
		out.RPC.UnattachedByReason[u.Reason]++
		out.RPC.Unattached = append(out.RPC.Unattached, report.UnattachedOp{Connection: u.Conn, Kind: u.Kind.String(),
			FirstPacket: u.FirstPacket, LastPacket: u.LastPacket, STag: fmt.Sprintf("0x%08x", u.STag),
			Offset: fmt.Sprintf("0x%016x", u.Offset), Length: u.Length, Reason: u.Reason})
	}
}

// reportTxnCounters fills the RPC layer's counters of the transactions
// document.
func reportTxnCounters(e *dissect.Snapshot, out *report.TxnCounters) {
	c := rpcordma.Counters(e)
	out.RPCMessages, out.BadHeaders, out.Retransmissions = c.Messages, c.BadHeaders, c.Duplicates
	out.TransactionsEvicted, out.UnattachedRDMAOps, out.Rebuilt = c.Evicted, c.Unattached, c.Rebuilt
	out.RebuiltBad, out.RebuildSkipped, out.MaxRebuildBytesHeld = c.RebuiltBad, c.RebuildSkipped, c.MaxRebuildBytesHeld
}

// reportTransactions counts a connection's Replies matched to their Call
// (the gate's RPC transactions).
func reportTransactions(dc *dissect.Connection) (uint64, bool) {
	s := rpcordma.Stats(dc)
	if s == nil {
		return 0, false
	}
	txns := s.Replies[0] + s.Replies[1]
	txns -= min(txns, s.RepliesWithoutCall)
	return txns, true
}

// reportSRT names a transaction as tshark's rpc,srt does (program and
// version, procedure), and an NFSv4 COMPOUND by its main operation.
func reportSRT(x *dissect.Exchange) (report.SRTName, bool) {
	t, _ := x.Detail.(*rpcordma.Transaction)
	if t == nil || !t.HasProgram {
		return report.SRTName{}, false
	}
	n := report.SRTName{Program: oncrpc.Program(t.Program).String() + " v" + strconv.Itoa(int(t.Version)), Procedure: t.Procedure}
	if t.Program == uint32(oncrpc.ProgNFS) && t.Version == 4 && t.Procedure == 1 {
		n.Operation = rpcordma.MainOperation(t.Operations)
	}
	return n, true
}

// txnHead is what the transactions filters read of t.
func txnHead(t *rpcordma.Transaction) report.TxnHead {
	return report.TxnHead{Connection: t.Conn.ID, XID: t.XID, HasProgram: t.HasProgram, Procedure: t.Procedure,
		ProcedureName: t.ProcedureName, Operations: t.Operations}
}

// ListTransactions returns the rpcordma.OnTransaction callback that adds
// each finished transaction to l (`transactions`, text and JSON).
func ListTransactions(l *report.TransactionList) func(*rpcordma.Transaction) {
	return func(t *rpcordma.Transaction) {
		if h := txnHead(t); l.Offer(&h) {
			l.Keep(ConvertTransaction(t))
		}
	}
}

// StreamTransactions returns the rpcordma.OnTransaction callback that
// writes each finished transaction to s (`transactions --format jsonl`).
func StreamTransactions(s *report.TransactionStream) func(*rpcordma.Transaction) {
	return func(t *rpcordma.Transaction) {
		if h := txnHead(t); s.Offer(&h) {
			x := ConvertTransaction(t)
			s.Write(&x)
		}
	}
}

// convertAny is ConvertTransaction for report.ConvertTransaction.
func convertAny(t any) (report.Transaction, bool) {
	x, ok := t.(*rpcordma.Transaction)
	if !ok || x == nil {
		return report.Transaction{}, false
	}
	return ConvertTransaction(x), true
}
