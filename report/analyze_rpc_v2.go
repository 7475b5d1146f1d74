package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
)

// RPC-over-RDMA version 2 in the analysis (draft-ietf-nfsv4-rpcrdma-
// version-two-07): the inline thresholds its Transport Properties set,
// which replace RFC 8797's on a connection where version 2 is in effect.

// V2Transport is a version 2 connection's inline thresholds and the
// Transport Properties each peer published.
type V2Transport struct {
	// InlineThreshold is the thresholds at the end of the capture: 4096
	// each way without properties ("default"), else each direction's the
	// smaller of its sender's SBSIZ and its receiver's RBSIZ
	// ("transport properties").
	InlineThreshold Thresholds `json:"inline_threshold"`
	Source          string     `json:"source"`
	Client          *V2Side    `json:"client_properties,omitempty"`
	Server          *V2Side    `json:"server_properties,omitempty"`
}

// V2Side is what one peer published in its CONNPROP messages (values in
// force: the defaults for what it did not publish).
type V2Side struct {
	Messages    int    `json:"connprop_messages"`
	FirstPacket int    `json:"first_packet"`
	FinalPacket int    `json:"final_packet,omitempty"`
	SBSIZ       uint32 `json:"max_send_size"`
	RBSIZ       uint32 `json:"receive_buffer_size"`
	RSSIZ       uint32 `json:"max_segment_size"`
	RCSIZ       uint32 `json:"max_segment_count"`
	BRS         string `json:"reverse_direction"`
	HostAuth    *int   `json:"host_auth_octets,omitempty"`
	// Published names the properties the peer sent (the others are
	// defaults).
	Published []string `json:"published"`
	Unknown   int      `json:"unknown_properties,omitempty"`
	BadValues int      `json:"bad_values,omitempty"`
	FirstBad  string   `json:"first_bad_value,omitempty"`
}

// useV2Thresholds puts a version 2 connection's thresholds in the place of
// RFC 8797's, which version 2 does not use (draft-07 "Inline Threshold").
func useV2Thresholds(out *Connection, c *dissect.Connection) {
	if out.RPC == nil || out.RPC.V2 == nil {
		return
	}
	t := out.RPC.V2.InlineThreshold
	out.InlineThreshold = &t
}

// v2Row is c's row of the version 2 table, nil when c has none.
func v2Row(c *Connection) []string {
	if c.RPC == nil || c.RPC.V2 == nil {
		return nil
	}
	v := c.RPC.V2
	return []string{strconv.Itoa(c.ID), strconv.Itoa(v.InlineThreshold.ClientToServer), strconv.Itoa(v.InlineThreshold.ServerToClient),
		v.Source, v2SideText(v.Client), v2SideText(v.Server)}
}

func v2SideText(s *V2Side) string {
	if s == nil {
		return "none (defaults)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SBSIZ %d RBSIZ %d RSSIZ %d RCSIZ %d %s", s.SBSIZ, s.RBSIZ, s.RSSIZ, s.RCSIZ, s.BRS)
	if s.HostAuth != nil {
		fmt.Fprintf(&b, " HOSTAUTH %d octets", *s.HostAuth)
	}
	if s.BadValues > 0 {
		fmt.Fprintf(&b, "; %d bad values (%s)", s.BadValues, s.FirstBad)
	}
	return b.String()
}

// v2Header heads the version 2 table.
var v2Header = []string{"ID", "C→S inline", "S→C inline", "From", "Client properties", "Server properties"}

// writeV2Table prints the version 2 connections' thresholds, if any.
func writeV2Table(w io.Writer, rows *rowTable) error {
	if rows.len() == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRPC-over-RDMA version 2 inline thresholds (draft-07: 4096 without Transport Properties; else sender's SBSIZ, receiver's RBSIZ):")
	return rows.render(w, houseStyle...)
}
