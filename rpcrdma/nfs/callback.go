package nfs

import "encoding/binary"

// What the callback operations of a CB_COMPOUND say (RFC 8881 section 20;
// RFC 7530 section 16.2 for NFSv4.0's CB_GETATTR and CB_RECALL), read once
// the generated walker has checked the operation's XDR: the session and
// slot of CB_SEQUENCE, the stateid and file handle of a recall or
// notification, the layout a CB_LAYOUTRECALL takes back.

// StateID is a stateid4 (RFC 8881 section 3.3.12).
type StateID struct {
	Seqid uint32
	Other [12]byte // NFS4_OTHER_SIZE
}

// CBOpDetail is what one callback operation's arguments (in a Call) or
// results (in a Reply) hold, as far as this package reads them. Fields an
// operation does not have stay zero.
type CBOpDetail struct {
	Op int // index of the operation in Info.Ops

	// CB_SEQUENCE (RFC 8881 section 20.9): CB_SEQUENCE4args, or
	// CB_SEQUENCE4resok when the result is NFS4_OK.
	SessionID     [16]byte // sessionid4 (NFS4_SESSIONID_SIZE)
	SequenceID    uint32
	SlotID        uint32
	HighestSlotID uint32
	CacheThis     bool   // arguments only
	RefCallLists  uint32 // arguments only: csa_referring_call_lists entries
	RefCalls      uint32 // arguments only: referring_call4 entries in all lists
	TargetSlotID  uint32 // results only: csr_target_highest_slotid

	// CB_RECALL (20.2), CB_NOTIFY (20.4), CB_LAYOUTRECALL with
	// LAYOUTRECALL4_FILE (20.3), CB_OFFLOAD (RFC 7862 section 16.1).
	StateID    StateID
	HasStateID bool
	// FH is the file handle of CB_GETATTR, CB_RECALL, CB_NOTIFY,
	// CB_PUSH_DELEG, CB_NOTIFY_LOCK, CB_OFFLOAD and a file layout recall;
	// it aliases the body.
	FH       []byte
	Truncate bool // CB_RECALL

	AttrWords uint32 // CB_GETATTR: words of attr_request (bitmap4)
	Changes   uint32 // CB_NOTIFY: notify4 entries

	// CB_LAYOUTRECALL (20.3).
	LayoutType  uint32 // layouttype4
	IOMode      uint32 // layoutiomode4
	Changed     bool
	RecallType  uint32 // layoutrecall_type4: 1 FILE, 2 FSID, 3 ALL
	Offset, Len uint64 // LAYOUTRECALL4_FILE
	FSIDMajor   uint64 // LAYOUTRECALL4_FSID
	FSIDMinor   uint64
}

// xr reads XDR the walker has already checked; it still stops at the end
// of b (ok turns false) rather than trust that.
type xr struct {
	b   []byte
	off int
	ok  bool
}

func (r *xr) u32() uint32 {
	if !r.ok || len(r.b)-r.off < 4 {
		r.ok = false
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *xr) u64() uint64 { return uint64(r.u32())<<32 | uint64(r.u32()) }

func (r *xr) fixed(dst []byte) {
	if !r.ok || len(r.b)-r.off < len(dst) {
		r.ok = false
		return
	}
	r.off += copy(dst, r.b[r.off:])
}

func (r *xr) opaque() []byte {
	n := r.u32()
	if !r.ok || uint64(len(r.b)-r.off) < uint64(pad4(n)) {
		r.ok = false
		return nil
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += pad4(n)
	return s
}

func (r *xr) stateid(s *StateID) {
	s.Seqid = r.u32()
	r.fixed(s.Other[:])
}

// cbDetail reads the details of the callback operation just walked: its
// opcode at start, its arguments or results up to end. It records nothing
// for the operations it does not read, or when Ops was full.
func (in *Info) cbDetail(idx int, code CBOpnum4, start, end int) {
	if idx < 0 {
		return
	}
	switch code {
	case OP_CB_SEQUENCE, OP_CB_RECALL, OP_CB_GETATTR, OP_CB_NOTIFY, OP_CB_LAYOUTRECALL:
	default:
		return
	}
	r := xr{b: in.d.b[:end], off: start + 4, ok: true}
	c := CBOpDetail{Op: idx}
	if !in.Call {
		// Every result starts with its nfsstat4; CB_SEQUENCE's and
		// CB_GETATTR's say more only when it is NFS4_OK.
		if r.u32() != 0 || code != OP_CB_SEQUENCE {
			return
		}
	}
	switch code {
	case OP_CB_SEQUENCE:
		r.fixed(c.SessionID[:])
		c.SequenceID, c.SlotID, c.HighestSlotID = r.u32(), r.u32(), r.u32()
		if in.Call {
			c.CacheThis = r.u32() == 1
			c.RefCallLists = r.u32()
			for i := uint32(0); i < c.RefCallLists && r.ok; i++ {
				r.off += 16 // rcl_sessionid
				n := r.u32()
				c.RefCalls += n
				r.off += 8 * int(n) // referring_call4: sequenceid, slotid
			}
		} else {
			c.TargetSlotID = r.u32()
		}
	case OP_CB_RECALL:
		r.stateid(&c.StateID)
		c.HasStateID = true
		c.Truncate = r.u32() == 1
		c.FH = r.opaque()
	case OP_CB_GETATTR:
		c.FH = r.opaque()
		c.AttrWords = r.u32()
	case OP_CB_NOTIFY:
		r.stateid(&c.StateID)
		c.HasStateID = true
		c.FH = r.opaque()
		c.Changes = r.u32()
	case OP_CB_LAYOUTRECALL:
		c.LayoutType, c.IOMode = r.u32(), r.u32()
		c.Changed = r.u32() == 1
		c.RecallType = r.u32()
		switch c.RecallType {
		case 1: // LAYOUTRECALL4_FILE
			c.FH = r.opaque()
			c.Offset, c.Len = r.u64(), r.u64()
			r.stateid(&c.StateID)
			c.HasStateID = true
		case 2: // LAYOUTRECALL4_FSID
			c.FSIDMajor, c.FSIDMinor = r.u64(), r.u64()
		}
	}
	if !r.ok || r.off > end {
		// The walker accepted what this cannot read: keep nothing
		// rather than half a record.
		return
	}
	in.CBDetails = append(in.CBDetails, c)
}
