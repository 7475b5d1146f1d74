package rpcordma

import (
	"errors"
	"fmt"
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Transport header rules (RFC 8166 sections 4.1-4.5; draft-ietf-nfsv4-
// rpcrdma-version-two-07 for version 2) and credits (RFC 8166 section 3.3.1).

// prefixOK marks the rule checked when the header's prefix decoded, and
// records why not otherwise.
func prefixOK(c *check.Conn, m *Msg) bool {
	if !m.HasPrefix {
		if m.Truncated {
			c.Skip(check.ReasonSnapLen)
		} else {
			c.Skip(check.ReasonUndecodable)
		}
		return false
	}
	return true
}

func decodeReason(err error) rpcrdma.Reason {
	if err == nil {
		// Before errors.As: its target escapes, and would be allocated
		// for every message.
		return 0
	}
	var de *rpcrdma.DecodeError
	if errors.As(err, &de) {
		return de.Reason
	}
	return 0
}

// checkHdrVersion: HDR-VERSION (RFC 8166 sections 4.2.2 and 4.5; draft-07).
func checkHdrVersion(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !prefixOK(c, m) {
		return
	}
	c.Checked()
	v := m.Common.Vers
	d := m.Dir.Index()
	if v == rpcrdma.Version1 {
		connOf(c).v1Sent[d] = true
	}
	// ERR_VERS has the same XDR in every version (RFC 8166 section 4;
	// draft-07 RDMA2_ERR_VERS): it may come in the refused request's
	// version.
	errVers := m.HdrErr == nil && m.Proc() == rpcrdma.RDMAError &&
		(v != rpcrdma.Version2 && m.Hdr.V1.Err == rpcrdma.ErrVers || v == rpcrdma.Version2 && m.Hdr.V2.Err == rpcrdma.Err2Vers)
	// A Call of an unsupported version must be answered by ERR_VERS.
	answered := false
	if callPkt, ok := connOf(c).badVers[1-d].take(m.Common.XID); ok {
		answered = true
		if !errVers && v != rpcrdma.Version2 {
			report(c, check.Finding{XID: xidp(m.Common.XID), Packets: append([]int{callPkt}, m.Packets...), Key: "not ERR_VERS",
				Message: fmt.Sprintf("the Call with XID 0x%08x (packet %d) had an unsupported rdma_vers; it was answered by a %s instead of RDMA_ERROR/ERR_VERS",
					m.Common.XID, callPkt, describe(m))})
		}
	}
	if v != rpcrdma.Version1 && v != rpcrdma.Version2 {
		if answered && errVers {
			return // refuses the Call's version in that version
		}
		if len(m.Packets) > 0 {
			connOf(c).badVers[d].add(m.Common.XID, m.Packets[len(m.Packets)-1])
		}
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: fmt.Sprintf("vers %d", v),
			Message: fmt.Sprintf("transport header from the %s has rdma_vers %d; RPC-over-RDMA knows versions 1 and 2", sideOf(m.Dir), v)})
		return
	}
	if v == rpcrdma.Version1 && m.Proc() == rpcrdma.RDMAError && m.HdrErr == nil && m.Hdr.V1.Err == rpcrdma.ErrVers {
		lo, hi := m.Hdr.V1.VersLow, m.Hdr.V1.VersHigh
		switch {
		case lo > hi:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "ERR_VERS range",
				Message: fmt.Sprintf("ERR_VERS offers the empty range rdma_vers_low %d > rdma_vers_high %d", lo, hi)})
		case connOf(c).v1Sent[d] && (lo > 1 || hi < 1):
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "ERR_VERS range",
				Message: fmt.Sprintf("ERR_VERS offers versions %d..%d, but the %s speaks version 1 on this connection", lo, hi, sideOf(m.Dir))})
		}
	}
}

// checkHdrProc: HDR-PROC (RFC 8166 sections 4.2.4, 4.6).
func checkHdrProc(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !prefixOK(c, m) {
		return
	}
	switch m.Common.Vers {
	case rpcrdma.Version1:
		c.Checked()
		switch p := m.Proc(); {
		case p > rpcrdma.RDMAError:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: fmt.Sprintf("proc %d", uint32(p)),
				Message: fmt.Sprintf("rdma_proc %d from the %s is not a version 1 procedure (RDMA_MSG..RDMA_ERROR are 0..4)", uint32(p), sideOf(m.Dir))})
		case p == rpcrdma.RDMAMsgp || p == rpcrdma.RDMADone:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: p.String(), Severity: check.Warning,
				Message: fmt.Sprintf("%s from the %s: RFC 8166 section 4.6 says it is no longer to be used", p, sideOf(m.Dir))})
		}
	case rpcrdma.Version2:
		c.Checked()
		if t := rpcrdma.HType(m.Common.Type); !t.Known() {
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: fmt.Sprintf("htype %d", uint32(t)),
				Message: fmt.Sprintf("rdma_htype %d from the %s is not a version 2 header type", uint32(t), sideOf(m.Dir))})
		}
	}
}

// checkHdrTruncated: HDR-TRUNCATED (RFC 8166 section 4.3: the chunk lists
// are part of the header that the Send carries).
func checkHdrTruncated(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !m.HasPrefix && !m.Truncated && m.Length < rpcrdma.PrefixLen && c.Connection.ULP == Name {
		// A whole Send shorter than the prefix (rdma_xid, rdma_vers,
		// rdma_credit, rdma_proc/htype) on a connection carrying
		// RPC-over-RDMA: no version's header fits (issue 27).
		c.Checked()
		report(c, check.Finding{Packets: m.Packets, Key: "short prefix", Message: fmt.Sprintf(
			"the %s's %d-byte Send is shorter than the %d-byte transport header prefix every RPC-over-RDMA version starts with", sideOf(m.Dir), m.Length, rpcrdma.PrefixLen)})
		return
	}
	if !prefixOK(c, m) {
		return
	}
	if !knownVersion(m) {
		return
	}
	r := decodeReason(m.HdrErr)
	if m.Truncated && (r == rpcrdma.ErrTruncated || r == rpcrdma.ErrCountTooLarge) {
		c.Skip(check.ReasonSnapLen)
		return
	}
	c.Checked()
	if r == rpcrdma.ErrTruncated || r == rpcrdma.ErrCountTooLarge {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: r.String(),
			Message: fmt.Sprintf("the transport header runs past the end of the %d-byte Send: %v", m.Length, m.HdrErr)})
	}
}

func knownVersion(m *Msg) bool {
	return m.Common.Vers == rpcrdma.Version1 || m.Common.Vers == rpcrdma.Version2
}

// checkHdrMalformed: HDR-MALFORMED (RFC 8166 section 4.3 XDR; RFC 4506
// section 4.19: optional-data discriminators are 0 or 1).
func checkHdrMalformed(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !prefixOK(c, m) || !knownVersion(m) {
		return
	}
	c.Checked()
	switch r := decodeReason(m.HdrErr); r {
	case rpcrdma.ErrBadDiscriminator, rpcrdma.ErrUnknownErrCode, rpcrdma.ErrBadPropertyValue:
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: r.String(),
			Message: fmt.Sprintf("the transport header from the %s is not valid XDR: %v", sideOf(m.Dir), m.HdrErr)})
	}
}

// checkHdrXID: HDR-XID-MISMATCH (RFC 8166 section 4.2.1: rdma_xid "MUST be
// the same as the XID in the RPC message").
func checkHdrXID(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !m.HasRPCXID {
		return
	}
	c.Checked()
	if m.RPCXID != m.Common.XID {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets,
			Message: fmt.Sprintf("rdma_xid 0x%08x differs from the XID 0x%08x of the RPC message it carries", m.Common.XID, m.RPCXID)})
	}
}

// checkHdrError: HDR-ERROR (RFC 8166 section 4.5): a responder answered a
// Call with RDMA_ERROR.
func checkHdrError(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !prefixOK(c, m) {
		return
	}
	c.Checked()
	if m.Kind != KindError || m.HdrErr != nil {
		return
	}
	code := "?"
	switch m.Common.Vers {
	case rpcrdma.Version1:
		code = m.Hdr.V1.Err.String()
	case rpcrdma.Version2:
		code = m.Hdr.V2.Err.String()
	}
	call := "whose Call is not in the capture"
	pk := m.Packets
	if k := m.Call; k != nil {
		call = fmt.Sprintf("answering the Call in packet %d", k.Packets[len(k.Packets)-1])
		pk = append([]int{k.Packets[len(k.Packets)-1]}, pk...)
	}
	report(c, check.Finding{XID: xidOf(m), Packets: pk, Key: code,
		Message: fmt.Sprintf("RDMA_ERROR %s from the %s, %s", code, sideOf(m.Dir), call)})
}

// checkCreditZero: CREDIT-ZERO (RFC 8166 section 3.3.1: a credit limit of
// zero leaves the requester unable to send).
func checkCreditZero(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	// Version 2 credits are a running limit, and a grant "MAY be zero"
	// (draft-07 "Asynchronous Credit Grants").
	if m.Kind != KindReply && m.Kind != KindError || m.Common.Vers != rpcrdma.Version1 {
		return
	}
	c.Checked()
	if m.Common.Credit == 0 {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets,
			Message: fmt.Sprintf("%s from the %s grants 0 credits: the requester may send no further Call", describe(m), sideOf(m.Dir))})
	}
}

// checkCreditOverrun: CREDIT-OVERRUN (RFC 8166 section 3.3.1: a requester
// "MUST NOT send more than" the credit limit granted).
func checkCreditOverrun(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindCall || m.Common.Vers != rpcrdma.Version1 {
		return
	}
	// The engine counts the Calls outstanding and the grants (RPCStats).
	d := m.Dir.Index()
	rs := Stats(c.Connection)
	switch {
	case rs == nil:
		return
	case rs.Evicted > 0:
		c.Skip(check.ReasonMidTransaction)
		return
	case rs.Grants[1-d] == 0:
		return // no version 1 limit granted yet in the capture
	}
	c.Checked()
	n, granted := m.Rec.Outstanding, rs.CreditsGranted[1-d]
	if n <= int(granted) {
		connOf(c).overrunNow[d] = false
		return
	}
	if connOf(c).overrunNow[d] {
		return
	}
	connOf(c).overrunNow[d] = true
	report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
		"the %s has %d Calls outstanding with this one; the last credit limit granted was %d", sideOf(m.Dir), n, granted)})
}
