package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Rules of the Upper-Layer Binding (RFC 8267): which data items may move by
// chunk, how NFSv4 pairs Write chunks with results, and XDR roundup. The
// engine's Upper-Layer Binding (rpcrdma.UpperLayerBinding; NFS's is
// rpcrdma/nfs) walked the arguments and results and located the
// DDP-eligible items (RPCRecord.ULP); these rules read what it found.

// ulbCall is what the ULB rules learn from a Call's inline arguments.
type ulbCall struct {
	info     *rpcrdma.ULBInfo
	skip     check.Reason // why the Call could not be judged
	readLike int          // operations with a DDP-eligible result
	nfs4     bool
	// vers and proc, or the callback program cbProg when callback, name
	// the Call in a finding (name): formatted only then, not for every
	// Call (it was ~0.5% of analyze's time on an NFS capture).
	vers, proc, cbProg uint32
	callback           bool
}

// name is the Call's name in a finding: "NFS v3 WRITE", "NFS v4 COMPOUND
// (SEQUENCE PUTFH READ)", "callback program 1073741824".
func (u *ulbCall) name() string {
	if u.callback {
		return fmt.Sprintf("callback program %d", u.cbProg)
	}
	return ulbName(u.info, u.vers, u.proc)
}

// callULB reads what the binding said of the Call's arguments.
func callULB(c *check.Conn, m *Msg) *ulbCall {
	u := &connOf(c).run.ulb
	*u = ulbCall{info: &m.Rec.ULP}
	in := u.info
	switch {
	case m.Chunks() == nil || !m.HasRPC:
		u.skip = check.ReasonCallUnknown
		return u
	case m.Dir == dissect.DirServerToClient && c.ServicePort == NFSRDMAPort:
		// An NFSv4.1 backchannel Call: RFC 8267 section 5.5 gives the
		// callback program no DDP-eligible item.
		u.callback, u.cbProg = true, uint32(m.RPC.Prog)
		return u
	case in.Protocol == "":
		u.skip = check.ReasonNoULB
		return u
	case in.Err != nil:
		u.skip = check.ReasonCallUnknown
		if m.Truncated {
			u.skip = check.ReasonSnapLen
		}
		return u
	}
	u.vers, u.proc = m.RPC.Vers, m.RPC.Proc
	for _, op := range in.Operations {
		if op == "READ" || op == "READLINK" {
			u.readLike++
		}
	}
	if !in.Compound && in.Protocol == "NFS" && (in.Procedure == "READ" || in.Procedure == "READLINK") {
		u.readLike = 1
	}
	u.nfs4 = in.Compound
	return u
}

func ulbName(in *rpcrdma.ULBInfo, vers, proc uint32) string {
	name := fmt.Sprintf("%s v%d %s", in.Protocol, vers, in.Procedure)
	if in.Procedure == "" {
		name = fmt.Sprintf("%s v%d procedure %d", in.Protocol, vers, proc)
	}
	if in.Compound && len(in.Operations) > 0 {
		name += " ("
		for i, op := range in.Operations {
			if i > 0 {
				name += " "
			}
			name += op
		}
		name += ")"
	}
	return name
}

// checkDDPEligible: CHUNK-DDP-ELIGIBLE (RFC 8166 section 3.4.1; RFC 8267
// sections 3, 4.2, 5.1, 5.5).
func checkDDPEligible(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindCall {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	var reads []uint32
	for _, rc := range ch.ReadChunks {
		if rc.Position != 0 {
			reads = append(reads, rc.Position)
		}
	}
	writes := 0
	for _, w := range ch.WriteList {
		if len(w.Segments) > 0 {
			writes++
		}
	}
	if len(reads) == 0 && writes == 0 {
		return // nothing moved by direct data placement
	}
	u := callULB(c, m)
	if u.skip != check.ReasonNone {
		c.Skip(u.skip)
		return
	}
	c.Checked()
	for _, p := range reads {
		ok := false
		for _, it := range u.info.Items {
			if !it.Result && it.Reduced && uint32(m.RPC.HeaderLen+it.Offset) == p {
				ok = true
			}
		}
		if !ok {
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: u.info.Procedure + " read chunk", Message: fmt.Sprintf(
				"%s Call XID 0x%08x has a Read chunk at position %d, where the arguments hold no DDP-eligible item", u.name(), m.Common.XID, p)})
		}
	}
	if writes > u.readLike && !u.nfs4 {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: u.info.Procedure + " write chunks", Message: fmt.Sprintf(
			"%s Call XID 0x%08x provides %d Write chunks; the procedure has %d DDP-eligible results", u.name(), m.Common.XID, writes, u.readLike)})
	}
}

// progNFS is the NFS program number (RFC 1813, RFC 7530).
const progNFS = 100003

// checkNFS4Pairing: CHUNK-NFS4-PAIRING (RFC 8267 section 5.4.1).
func checkNFS4Pairing(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	ch := m.Chunks()
	if ch == nil {
		return
	}
	switch m.Kind {
	case KindCall:
		if m.HasRPC && (uint32(m.RPC.Prog) != progNFS || m.RPC.Vers != 4) {
			return
		}
		writes := 0
		for _, w := range ch.WriteList {
			if len(w.Segments) > 0 {
				writes++
			}
		}
		if writes == 0 {
			return
		}
		u := callULB(c, m)
		if u.skip != check.ReasonNone {
			c.Skip(u.skip)
			return
		}
		if !u.nfs4 {
			return
		}
		c.Checked()
		if len(ch.WriteList) > u.readLike {
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "more chunks than READ operations", Message: fmt.Sprintf(
				"%s Call XID 0x%08x provides %d Write chunks for %d READ/READLINK operations: the extra chunks pair with nothing",
				u.name(), m.Common.XID, len(ch.WriteList), u.readLike)})
		}
	case KindReply:
		k := m.Call
		if k == nil || !k.HasProc || k.Prog != progNFS || k.ProgVers != 4 || len(ch.WriteList) == 0 {
			return
		}
		in, ok := replyULB(c, m)
		if !ok {
			return
		}
		c.Checked()
		n := 0
		for _, it := range in.Items {
			if !it.Result {
				continue
			}
			if n < len(ch.WriteList) && len(ch.WriteList[n].Segments) > 0 {
				w := ch.WriteList[n].Length()
				if w != uint64(it.Length) && w != uint64(it.Length+3)&^3 {
					op := "?"
					if it.Op >= 0 && it.Op < len(in.Operations) {
						op = fmt.Sprintf("#%d %s", it.Op+1, in.Operations[it.Op])
					}
					report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "chunk and result differ", Message: fmt.Sprintf(
						"Reply to XID 0x%08x: Write chunk %d reports %d bytes written, but the READ-like result it pairs with (operation %s) holds %d bytes",
						m.Common.XID, n, w, op, it.Length)})
				}
			}
			n++
		}
	}
}

// replyULB reads what the binding said of an accepted Reply's results,
// reduced by its Write list.
func replyULB(c *check.Conn, m *Msg) (*rpcrdma.ULBInfo, bool) {
	if !m.HasRPC || !m.RPC.HasBody() {
		return nil, false
	}
	in := &m.Rec.ULP
	switch {
	case in.Protocol == "":
		c.Skip(check.ReasonNoULB)
		return nil, false
	case in.Err != nil:
		if m.Truncated {
			c.Skip(check.ReasonSnapLen)
		} else {
			c.Skip(check.ReasonCallUnknown)
		}
		return nil, false
	}
	return in, true
}

// checkRoundup: CHUNK-ROUNDUP (RFC 8166 sections 3.4.5.2, 3.4.6.2: XDR
// roundup padding of a DDP-eligible item does not move in its chunk, and a
// responder does not write it into a Write chunk).
func checkRoundup(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	ch := m.Chunks()
	if ch == nil {
		return
	}
	switch m.Kind {
	case KindCall:
		hasReads := false
		for _, rc := range ch.ReadChunks {
			hasReads = hasReads || rc.Position != 0
		}
		if !hasReads {
			return
		}
		u := callULB(c, m)
		if u.skip != check.ReasonNone {
			c.Skip(u.skip)
			return
		}
		for _, it := range u.info.Items {
			if it.Result || !it.Reduced {
				continue
			}
			for _, rc := range ch.ReadChunks {
				if rc.Position != uint32(m.RPC.HeaderLen+it.Offset) {
					continue
				}
				c.Checked()
				if l := rc.Length(); l > uint64(it.Length) {
					report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: it.Name, Message: fmt.Sprintf(
						"%s Call XID 0x%08x: the Read chunk at position %d moves %d bytes for a %d-byte %s: XDR roundup padding moved inside the chunk",
						u.name(), m.Common.XID, rc.Position, l, it.Length, it.Name)})
				}
			}
		}
	case KindReply:
		k := m.Call
		if k == nil || !k.HasProc || len(ch.WriteList) == 0 {
			return
		}
		if !m.HasRPC || !m.RPC.HasBody() || m.Rec.ULP.Protocol == "" {
			return // no binding knows the program
		}
		in, ok := replyULB(c, m)
		if !ok {
			return
		}
		n := 0
		for _, it := range in.Items {
			if !it.Result {
				continue
			}
			if n < len(ch.WriteList) && len(ch.WriteList[n].Segments) > 0 {
				c.Checked()
				w := ch.WriteList[n].Length()
				if it.Length%4 != 0 && w == uint64(it.Length+3)&^3 {
					report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: it.Name, Message: fmt.Sprintf(
						"Reply to XID 0x%08x: Write chunk %d reports %d bytes written for a %d-byte %s: XDR roundup padding written into the chunk",
						m.Common.XID, n, w, it.Length, it.Name)})
				}
			}
			n++
		}
	}
}
