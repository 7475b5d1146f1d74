package report

import (
	"fmt"
	"io"
	"strconv"
)

// RPCConnection is a connection's RPC-over-RDMA summary in the Analysis
// document (the plug-in's RPCStats, as its presentation,
// ulp/rpcordma/present, fills it through ULP.Connection). Per-direction
// counts are by the direction the messages — for RDMA bytes, the data —
// went.
type RPCConnection struct {
	// Version is the rdma_vers of the first header decoded (1 or 2; 0 if
	// none decoded); Versions counts headers by version.
	Version  uint32 `json:"version"`
	Versions struct {
		V1    uint64 `json:"v1"`
		V2    uint64 `json:"v2"`
		Other uint64 `json:"other"`
	} `json:"versions"`
	Messages   DirCount `json:"messages"`
	BadHeaders DirCount `json:"bad_headers"`
	// FirstBadHeader says where and why the first header did not decode.
	FirstBadHeader string `json:"first_bad_header,omitempty"`
	// Calls and Replies: forward Calls go client to server, backchannel
	// Calls (NFSv4.1 callbacks) server to client.
	Calls   RPCChannels `json:"calls"`
	Replies RPCChannels `json:"replies"`
	// Errors counts RDMA_ERROR (RDMA2_ERROR) messages; Control version 2
	// GRANT and CONNPROP messages.
	Errors  DirCount `json:"errors"`
	Control DirCount `json:"control"`
	// Credits: the last and the largest rdma_credit each way of the
	// version 1 messages — requested in Calls, granted in Replies (RFC 8166
	// section 3.3.1).
	Credits struct {
		Requested    DirCount `json:"requested"`
		MaxRequested DirCount `json:"max_requested"`
		Granted      DirCount `json:"granted"`
		MaxGranted   DirCount `json:"max_granted"`
	} `json:"credits"`
	// CreditLimits, when version 2 messages were sent: each peer grants
	// the other a running limit in every message (draft-07 "Flow
	// Control": its sent message count plus its advertised credits). Last
	// and Max are the rdma_credit sent each way; Sent counts the version 2
	// messages sent each way, which the other way's limit bounds.
	CreditLimits *CreditLimits `json:"credit_limits,omitempty"`
	// V2, when version 2 messages were sent: the inline thresholds and
	// Transport Properties (analyze_rpc_v2.go).
	V2 *V2Transport `json:"v2_transport,omitempty"`
	// Short: RDMA_MSG without Read or Write chunks (a Reply chunk only
	// provisions the Reply); Chunked: RDMA_MSG with Read or Write chunks;
	// Long: RDMA_NOMSG, the whole message moved by RDMA. Version 2: the
	// *_INLINE/*_MIDDLE and *_EXTERNAL types likewise.
	Short   DirCount `json:"short"`
	Chunked DirCount `json:"chunked"`
	Long    DirCount `json:"long"`
	// Bytes moved each way by Send (transport headers with the inline RPC
	// messages), by RDMA Read and by RDMA Write attached to chunks.
	Bytes struct {
		Send      DirCount `json:"send"`
		RDMARead  DirCount `json:"rdma_read"`
		RDMAWrite DirCount `json:"rdma_write"`
	} `json:"bytes"`
	// Replies sent with Send With Invalidate, and without (RFC 8797
	// section 4.1).
	RepliesWithInvalidate    uint64 `json:"replies_with_invalidate"`
	RepliesWithoutInvalidate uint64 `json:"replies_without_invalidate"`
	// Outstanding: Calls awaiting a Reply when the capture ended (they
	// also count in CallsWithoutReply).
	Outstanding        int    `json:"outstanding"`
	CallsWithoutReply  uint64 `json:"calls_without_reply"`
	RepliesWithoutCall uint64 `json:"replies_without_call"`
	// Evicted: Calls given up at the engine's MaxTransactions limit.
	Evicted uint64 `json:"evicted"`
	// UnattachedRDMAOps: RDMA Reads and Writes that targeted no segment of
	// an outstanding Call.
	UnattachedRDMAOps uint64 `json:"unattached_rdma_ops"`
	// Rebuilt: RPC messages put together from chunks; RebuildIncomplete:
	// those whose chunk data the capture lacks in part.
	Rebuilt           uint64 `json:"rebuilt"`
	RebuildIncomplete uint64 `json:"rebuild_incomplete"`
}

// CreditLimits are a connection's version 2 credit limits.
type CreditLimits struct {
	Last DirCount `json:"last"`
	Max  DirCount `json:"max"`
	Sent DirCount `json:"sent"`
}

// RPCChannels counts per RPC direction.
type RPCChannels struct {
	Forward     uint64 `json:"forward"`
	Backchannel uint64 `json:"backchannel"`
}

// rpcRow is c's row of the RPC-over-RDMA table, nil when c carried none.
func rpcRow(c *Connection) []string {
	r := c.RPC
	if r == nil {
		return nil
	}
	return []string{
		strconv.Itoa(c.ID), strconv.FormatUint(uint64(r.Version), 10),
		slashText(r.Calls.Forward, r.Calls.Backchannel),
		slashText(r.Replies.Forward, r.Replies.Backchannel),
		r.creditCell(),
		pair(r.Short), pair(r.Chunked), pair(r.Long),
		pair(r.Bytes.Send), pair(r.Bytes.RDMARead), pair(r.Bytes.RDMAWrite),
		slashText(r.RepliesWithInvalidate, r.RepliesWithoutInvalidate),
		r.Problems(),
	}
}

// creditCell is the credits column: version 1's largest request and
// grant, or, on a version 2 connection, the last limit each peer granted
// the other.
func (r *RPCConnection) creditCell() string {
	if l := r.CreditLimits; r.Version == 2 && l != nil {
		return fmt.Sprintf("v2 limit %d / %d", l.Last.ClientToServer, l.Last.ServerToClient)
	}
	return slashText(r.Credits.MaxRequested.ClientToServer, r.Credits.MaxGranted.ServerToClient)
}

// rpcHeader heads the RPC-over-RDMA table.
var rpcHeader = []string{"ID", "Vers", "Calls", "Replies", "Credits req / granted", "Short", "Chunked", "Long",
	"Send bytes", "RDMA Read bytes", "RDMA Write bytes", "Replies w/ / w/o inv.", "Problems"}

// writeRPCTable prints the connections' RPC-over-RDMA summary, if any
// (rows from rpcRow).
func writeRPCTable(w io.Writer, rows *rowTable) error {
	if rows.len() == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRPC-over-RDMA (C→S / S→C; calls and replies forward / backchannel):")
	return rows.render(w, houseStyle...)
}

func pair(d DirCount) string { return slashText(d.ClientToServer, d.ServerToClient) }

// slashText is "a / b", as fmt's "%d / %d" writes it (the tables and the
// text have many: fmt takes several times as long).
func slashText(a, b uint64) string {
	var buf [48]byte
	s := strconv.AppendUint(buf[:0], a, 10)
	s = append(s, " / "...)
	return string(strconv.AppendUint(s, b, 10))
}

// Problems lists what went wrong on the connection, or "none".
func (r *RPCConnection) Problems() string {
	var s string
	add := func(n uint64, what string) {
		if n == 0 {
			return
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", n, what)
	}
	add(r.BadHeaders.ClientToServer+r.BadHeaders.ServerToClient, "bad headers")
	add(r.Errors.ClientToServer+r.Errors.ServerToClient, "RDMA_ERROR")
	add(r.CallsWithoutReply, "calls without reply")
	add(r.RepliesWithoutCall, "replies without call")
	add(r.Evicted, "evicted")
	add(r.UnattachedRDMAOps, "unattached RDMA ops")
	add(r.RebuildIncomplete, "incomplete chunk data")
	if s == "" {
		return "none"
	}
	return s
}
