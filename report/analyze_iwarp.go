package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
)

// IWARPConnection is an iWARP connection's MPA negotiation (RFC 5044
// section 7.1, RFC 6581) and framing record in the Analysis document.
type IWARPConnection struct {
	// Negotiated: both the MPA Request and the Reply are in the capture,
	// so Markers and CRC are what they negotiated; otherwise they are null.
	Negotiated bool `json:"negotiated"`
	// MidStream: the connection was picked up without (all of) its MPA
	// exchange, at a segment that starts with an FPDU.
	MidStream bool `json:"mid_stream"`
	// Revision is each side's MPA revision (1: RFC 5044, 2: RFC 6581);
	// null for a side whose frame is not in the capture.
	Revision struct {
		Client *int `json:"client"`
		Server *int `json:"server"`
	} `json:"revision"`
	// Markers and CRC say whether each direction's FPDUs carry markers and
	// a CRC32c (iwarp.Negotiate).
	Markers *DirBool `json:"markers"`
	CRC     *DirBool `json:"crc"`
	// Flags are the M, C and R flags each side sent.
	Flags struct {
		Client *MPAFlags `json:"client"`
		Server *MPAFlags `json:"server"`
	} `json:"flags"`
	// IRDORD is the RFC 6581 IRD/ORD each side offered, or the legacy
	// IRD/ORD header of [MS-SMBD] 6.1 (legacy: true); null without either.
	IRDORD struct {
		Client *IRDORD `json:"client"`
		Server *IRDORD `json:"server"`
	} `json:"ird_ord"`
	FPDUs            DirCount `json:"fpdus"`
	CRCErrors        DirCount `json:"crc_errors"`
	MalformedFPDUs   DirCount `json:"malformed_fpdus"`
	LostSync         DirCount `json:"lost_sync"`
	Resyncs          DirCount `json:"resyncs"`
	GapOctets        DirCount `json:"gap_octets"`
	DiscardedOctets  DirCount `json:"discarded_octets"`
	Sends            DirCount `json:"sends"`
	SendsDropped     DirCount `json:"sends_dropped"`
	Terminates       DirCount `json:"terminates"`
	RDMAWrites       DirCount `json:"rdma_writes"`
	RDMAReads        DirCount `json:"rdma_read_requests"`
	OpsIncomplete    DirCount `json:"rdma_ops_incomplete"`
	UnmatchedReplies DirCount `json:"unmatched_read_responses"`
	// UnansweredReads: RDMA Read Requests sent that no Read Response
	// answered (dissect.IWARPCounters.UnansweredReads).
	UnansweredReads DirCount `json:"unanswered_read_requests"`
}

// DirBool is a yes/no per direction.
type DirBool struct {
	ClientToServer bool `json:"client_to_server"`
	ServerToClient bool `json:"server_to_client"`
}

// DirCount is a count per direction.
type DirCount struct {
	ClientToServer uint64 `json:"client_to_server"`
	ServerToClient uint64 `json:"server_to_client"`
}

// MPAFlags are the flags of one side's MPA Request or Reply.
type MPAFlags struct {
	Packet   int  `json:"packet"`
	Markers  bool `json:"markers"`
	CRC      bool `json:"crc"`
	Rejected bool `json:"rejected"`
	Enhanced bool `json:"enhanced"`
}

// IRDORD is one side's RFC 6581 Enhanced RDMA Connection Establishment
// Data.
type IRDORD struct {
	IRD        int  `json:"ird"`
	ORD        int  `json:"ord"`
	PeerToPeer bool `json:"peer_to_peer"`
	RTRSend    bool `json:"rtr_send"`
	RTRWrite   bool `json:"rtr_write"`
	RTRRead    bool `json:"rtr_read"`
	// Legacy: the depths are the legacy IRD/ORD header of [MS-SMBD] 6.1
	// (MPA revision 1 on port 5445), not RFC 6581's; LittleEndian when the
	// sender wrote them in that byte order.
	Legacy       bool `json:"legacy,omitempty"`
	LittleEndian bool `json:"little_endian,omitempty"`
}

func dirCount(c *dissect.IWARPInfo, get func(x *dissect.IWARPCounters) uint64) DirCount {
	return DirCount{get(&c.Dir[0]), get(&c.Dir[1])}
}

func iwarpConnection(c *dissect.Connection) *IWARPConnection {
	in := c.IWARP
	if c.Transport != dissect.TransportIWARP || in == nil {
		return nil
	}
	out := &IWARPConnection{Negotiated: in.Negotiated, MidStream: in.MidStream}
	if in.Negotiated {
		out.Markers = &DirBool{in.Framing[0].Markers, in.Framing[1].Markers}
		out.CRC = &DirBool{in.Framing[0].CRC, in.Framing[1].CRC}
	}
	revs := [2]**int{&out.Revision.Client, &out.Revision.Server}
	flags := [2]**MPAFlags{&out.Flags.Client, &out.Flags.Server}
	irdord := [2]**IRDORD{&out.IRDORD.Client, &out.IRDORD.Server}
	for i := range in.MPA {
		m := &in.MPA[i]
		if !m.Seen {
			continue
		}
		r := int(m.Revision)
		*revs[i] = &r
		*flags[i] = &MPAFlags{Packet: m.Packet, Markers: m.Markers, CRC: m.CRC, Rejected: m.Rejected, Enhanced: m.Enhanced}
		if m.HasIRDORD {
			*irdord[i] = &IRDORD{IRD: int(m.IRD), ORD: int(m.ORD), PeerToPeer: m.PeerToPeer,
				RTRSend: m.RTRSend, RTRWrite: m.RTRWrite, RTRRead: m.RTRRead}
		}
		if l := m.Legacy; l != nil {
			*irdord[i] = &IRDORD{IRD: int(l.IRD), ORD: int(l.ORD), Legacy: true, LittleEndian: l.LittleEndian}
		}
	}
	out.FPDUs = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.FPDUs })
	out.CRCErrors = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.CRCErrors })
	out.MalformedFPDUs = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Malformed })
	out.LostSync = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.LostSync })
	out.Resyncs = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Resyncs })
	out.GapOctets = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.GapOctets })
	out.DiscardedOctets = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Discarded })
	out.Sends = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Messages })
	out.SendsDropped = dirCount(in, func(x *dissect.IWARPCounters) uint64 {
		return x.Reassembly.TooLong + x.Reassembly.Evicted + x.Reassembly.Gaps
	})
	out.Terminates = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Terminates })
	out.RDMAWrites = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Writes })
	out.RDMAReads = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.Reads })
	out.OpsIncomplete = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.OpsIncomplete })
	out.UnmatchedReplies = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.UnmatchedResponses })
	out.UnansweredReads = dirCount(in, func(x *dissect.IWARPCounters) uint64 { return x.UnansweredReads })
	return out
}

// iwarpRow is c's row of the iWARP table, nil when c is no iWARP
// connection.
func iwarpRow(c *Connection) []string {
	iw := c.IWARP
	if iw == nil {
		return nil
	}
	return []string{
		strconv.Itoa(c.ID),
		optInt(iw.Revision.Client) + " / " + optInt(iw.Revision.Server),
		dirBoolText(iw.Markers, iw.MidStream), dirBoolText(iw.CRC, iw.MidStream),
		irdOrdText(iw.IRDORD.Client), irdOrdText(iw.IRDORD.Server),
		dirCountText(iw.FPDUs), dirCountText(iw.CRCErrors),
		dirCountText(iw.LostSync), dirCountText(iw.GapOctets),
		dirCountText(iw.UnansweredReads), dirCountText(iw.UnmatchedReplies),
	}
}

// iwarpHeader heads the iWARP table.
var iwarpHeader = []string{"ID", "MPA rev. C / S", "Markers", "CRC32c", "Client IRD/ORD", "Server IRD/ORD",
	"FPDUs", "CRC errors", "Lost sync", "Missing octets", "Reads unanswered", "Read resp. unmatched"}

// writeIWARPTable prints the iWARP connections' MPA negotiation and
// framing record, if any (rows from iwarpRow).
func writeIWARPTable(w io.Writer, rows *rowTable) error {
	if rows.len() == 0 {
		return nil
	}
	fmt.Fprintln(w, "\niWARP: MPA negotiation (RFC 5044, RFC 6581) and framing, C→S / S→C:")
	return rows.render(w, houseStyle...)
}

func optInt(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dirBoolText(d *DirBool, guessed bool) string {
	if d == nil {
		if guessed {
			return "not negotiated in capture"
		}
		return "unknown"
	}
	return yesNo(d.ClientToServer) + " / " + yesNo(d.ServerToClient)
}

func irdOrdText(x *IRDORD) string {
	if x == nil {
		return "-"
	}
	s := fmt.Sprintf("%d / %d", x.IRD, x.ORD)
	if x.PeerToPeer {
		s += " p2p"
	}
	if x.Legacy {
		s += " (legacy)"
	}
	return s
}

func dirCountText(d DirCount) string { return slashText(d.ClientToServer, d.ServerToClient) }
