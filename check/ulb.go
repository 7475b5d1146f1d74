package check

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
)

// Rules of the Upper-Layer Binding (RFC 8267): which data items may move by
// chunk, how NFSv4 pairs Write chunks with results, and XDR roundup. The
// NFS arguments and results are walked with rpcrdma/nfs, which locates the
// DDP-eligible items.

// ulbCall is what the ULB rules learn from a Call's inline arguments.
type ulbCall struct {
	info     nfs.Info
	body     []byte
	skip     Reason // why the Call could not be judged
	name     string // "NFSv3 WRITE", "NFSv4 COMPOUND (SEQUENCE PUTFH READ)"
	readLike int    // operations with a DDP-eligible result
	nfs4     bool
}

// decodeCall walks the Call's arguments, once per message for all rules.
func (c *Conn) decodeCall(m *Msg) *ulbCall {
	u := &c.r.ulb
	if c.r.ulbFor == c.r.msgSeq {
		return u
	}
	c.r.ulbFor = c.r.msgSeq
	*u = ulbCall{info: u.info}
	ch := m.Chunks()
	switch {
	case ch == nil || !m.HasRPC:
		u.skip = ReasonCallUnknown
		return u
	case m.Dir == dissect.DirServerToClient && c.ServicePort == NFSRDMAPort:
		// An NFSv4.1 backchannel Call: RFC 8267 section 5.5 gives the
		// callback program no DDP-eligible item.
		u.name = fmt.Sprintf("callback program %d", m.RPC.Prog)
		return u
	case !nfs.Known(uint32(m.RPC.Prog)):
		u.skip = ReasonNoULB
		return u
	}
	var pos []uint32
	for _, rc := range ch.ReadChunks {
		if rc.Position != 0 {
			pos = append(pos, rc.Position)
		}
	}
	u.body = m.RPC.Payload()
	err := u.info.Decode(uint32(m.RPC.Prog), m.RPC.Vers, m.RPC.Proc, true, u.body,
		&nfs.Reduction{HeaderLen: m.RPC.HeaderLen, ReadPositions: pos})
	if err != nil {
		u.skip = ReasonCallUnknown
		if m.Truncated {
			u.skip = ReasonSnapLen
		}
		return u
	}
	u.name = procName(&u.info)
	for _, op := range u.info.Ops {
		if op.Code == nfs.OP_READ || op.Code == nfs.OP_READLINK {
			u.readLike++
		}
	}
	switch u.info.ProcName {
	case "READ", "READLINK":
		if !u.info.IsCompound() && u.info.Prog == nfs.ProgNFS {
			u.readLike = 1
		}
	}
	u.nfs4 = u.info.IsCompound()
	return u
}

func procName(in *nfs.Info) string {
	name := fmt.Sprintf("%s v%d %s", progName(in.Prog), in.Vers, in.ProcName)
	if in.ProcName == "" {
		name = fmt.Sprintf("%s v%d procedure %d", progName(in.Prog), in.Vers, in.Proc)
	}
	if in.IsCompound() && len(in.Ops) > 0 {
		name += " ("
		for i, op := range in.Ops {
			if i > 0 {
				name += " "
			}
			name += op.Name()
		}
		name += ")"
	}
	return name
}

func progName(p nfs.Program) string {
	switch p {
	case nfs.ProgNFS:
		return "NFS"
	}
	return p.String()
}

// checkDDPEligible: CHUNK-DDP-ELIGIBLE (RFC 8166 section 3.4.1; RFC 8267
// sections 3, 4.2, 5.1, 5.5).
func checkDDPEligible(c *Conn, m *Msg) {
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
	u := c.decodeCall(m)
	if u.skip != ReasonNone {
		c.Skip(u.skip)
		return
	}
	c.Checked()
	for _, p := range reads {
		ok := false
		for _, it := range u.info.Items {
			if !it.Kind.IsResult() && it.Reduced && uint32(m.RPC.HeaderLen+it.Offset) == p {
				ok = true
			}
		}
		if !ok {
			c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: u.info.ProcName + " read chunk", Message: fmt.Sprintf(
				"%s Call XID 0x%08x has a Read chunk at position %d, where the arguments hold no DDP-eligible item", u.name, m.Common.XID, p)})
		}
	}
	if writes > u.readLike && !u.nfs4 {
		c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: u.info.ProcName + " write chunks", Message: fmt.Sprintf(
			"%s Call XID 0x%08x provides %d Write chunks; the procedure has %d DDP-eligible results", u.name, m.Common.XID, writes, u.readLike)})
	}
}

// checkNFS4Pairing: CHUNK-NFS4-PAIRING (RFC 8267 section 5.4.1).
func checkNFS4Pairing(c *Conn, m *Msg) {
	ch := m.Chunks()
	if ch == nil {
		return
	}
	switch m.Kind {
	case KindCall:
		if m.HasRPC && (uint32(m.RPC.Prog) != uint32(nfs.ProgNFS) || m.RPC.Vers != 4) {
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
		u := c.decodeCall(m)
		if u.skip != ReasonNone {
			c.Skip(u.skip)
			return
		}
		if !u.nfs4 {
			return
		}
		c.Checked()
		if len(ch.WriteList) > u.readLike {
			c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: "more chunks than READ operations", Message: fmt.Sprintf(
				"%s Call XID 0x%08x provides %d Write chunks for %d READ/READLINK operations: the extra chunks pair with nothing",
				u.name, m.Common.XID, len(ch.WriteList), u.readLike)})
		}
	case KindReply:
		k := m.Call
		if k == nil || !k.HasProc || k.Prog != uint32(nfs.ProgNFS) || k.ProgVers != 4 || len(ch.WriteList) == 0 {
			return
		}
		in, ok := c.decodeReply(m, k)
		if !ok {
			return
		}
		c.Checked()
		n := 0
		for _, it := range in.Items {
			if !it.Kind.IsResult() {
				continue
			}
			if n < len(ch.WriteList) && len(ch.WriteList[n].Segments) > 0 {
				w := ch.WriteList[n].Length()
				if w != uint64(it.Length) && w != uint64(it.Length+3)&^3 {
					op := "?"
					if it.Op >= 0 && it.Op < len(in.Ops) {
						op = fmt.Sprintf("#%d %s", it.Op+1, in.Ops[it.Op].Name())
					}
					c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: "chunk and result differ", Message: fmt.Sprintf(
						"Reply to XID 0x%08x: Write chunk %d reports %d bytes written, but the READ-like result it pairs with (operation %s) holds %d bytes",
						m.Common.XID, n, w, op, it.Length)})
				}
			}
			n++
		}
	}
}

// decodeReply walks an accepted Reply's results with its Write list as the
// reduction.
func (c *Conn) decodeReply(m *Msg, k *Call) (*nfs.Info, bool) {
	if !m.HasRPC || !m.RPC.HasBody() {
		return nil, false
	}
	ch := m.Chunks()
	red := &nfs.Reduction{}
	for _, w := range ch.WriteList {
		red.WriteChunks = append(red.WriteChunks, uint32(len(w.Segments)))
	}
	in := &c.r.ulbReply
	if err := in.Decode(k.Prog, k.ProgVers, k.ProcNum, false, m.RPC.Payload(), red); err != nil {
		if m.Truncated {
			c.Skip(ReasonSnapLen)
		} else {
			c.Skip(ReasonCallUnknown)
		}
		return nil, false
	}
	return in, true
}

// checkRoundup: CHUNK-ROUNDUP (RFC 8166 sections 3.4.5.2, 3.4.6.2: XDR
// roundup padding of a DDP-eligible item does not move in its chunk, and a
// responder does not write it into a Write chunk).
func checkRoundup(c *Conn, m *Msg) {
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
		u := c.decodeCall(m)
		if u.skip != ReasonNone {
			c.Skip(u.skip)
			return
		}
		for _, it := range u.info.Items {
			if it.Kind.IsResult() || !it.Reduced {
				continue
			}
			for _, rc := range ch.ReadChunks {
				if rc.Position != uint32(m.RPC.HeaderLen+it.Offset) {
					continue
				}
				c.Checked()
				if l := rc.Length(); l > uint64(it.Length) {
					c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: it.Kind.String(), Message: fmt.Sprintf(
						"%s Call XID 0x%08x: the Read chunk at position %d moves %d bytes for a %d-byte %s: XDR roundup padding moved inside the chunk",
						u.name, m.Common.XID, rc.Position, l, it.Length, it.Kind)})
				}
			}
		}
	case KindReply:
		k := m.Call
		if k == nil || !k.HasProc || len(ch.WriteList) == 0 || !nfs.Known(k.Prog) {
			return
		}
		in, ok := c.decodeReply(m, k)
		if !ok {
			return
		}
		n := 0
		for _, it := range in.Items {
			if !it.Kind.IsResult() {
				continue
			}
			if n < len(ch.WriteList) && len(ch.WriteList[n].Segments) > 0 {
				c.Checked()
				w := ch.WriteList[n].Length()
				if it.Length%4 != 0 && w == uint64(it.Length+3)&^3 {
					c.Report(Finding{XID: xidOf(m), Packets: m.Packets, Key: it.Kind.String(), Message: fmt.Sprintf(
						"Reply to XID 0x%08x: Write chunk %d reports %d bytes written for a %d-byte %s: XDR roundup padding written into the chunk",
						m.Common.XID, n, w, it.Length, it.Kind)})
				}
			}
			n++
		}
	}
}
