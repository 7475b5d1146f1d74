// Package nfs walks the arguments and results of NFS RPC procedures:
// NFSv3 (RFC 1813), the NFSv4.0/4.1/4.2 COMPOUND and CB_COMPOUND (RFC 7530,
// RFC 5661, RFC 7862, with the XDR of RFC 7531, RFC 5662, RFC 7863 and the
// extended attribute operations of RFC 8276), MOUNT v1/v3 and NFSACL v3.
//
// It names every procedure and every COMPOUND operation, walks each
// operation's arguments or results far enough to reach the next one (and
// the end of the body), reports each result's status, reads what the
// callback operations CB_SEQUENCE, CB_RECALL, CB_GETATTR, CB_NOTIFY and
// CB_LAYOUTRECALL say (Info.CBDetails; callback.go), and locates the
// data items that RFC 8267 makes DDP-eligible, with their XDR byte
// positions in the body — the positions RPC-over-RDMA Read chunks refer to
// and the items Write chunks replace:
//
//	NFSv3 (RFC 8267 section 3):    WRITE3args data, SYMLINK3args symlink_data,
//	                               READ3resok data, READLINK3resok data
//	NFSv4.x (RFC 8267 section 5.1): WRITE4args data, CREATE4args linkdata (NF4LNK),
//	                               READ4resok data, READLINK4resok link
//
// Nothing else is DDP-eligible: not NFSv2 (RFC 8267 section 3 covers it,
// but this package only names v2 procedures), not MOUNT (section 4.1), not
// NFSACL (section 4.2), not the callback program (section 5.5), and not
// the NFSv4.2 operations that move data (READ_PLUS, WRITE_SAME) or
// RFC 8276's xattr values: RFC 8267 section 5.1 says "only" the items
// above, for "all NFS version 4 minor versions", and section 6 says adding
// to the list takes a standards action that has not happened.
//
// A body may be reduced (RFC 8166 section 3.4.5): an RPC-over-RDMA sender
// that moves a DDP-eligible item by a chunk leaves only its length word in
// the Payload stream, without the bytes and without their XDR roundup.
// The caller says which items were moved with a Reduction (the Call's Read
// chunk positions, the Reply's Write chunks), or asks for Auto, which takes
// an item whose bytes run past the end of the body as reduced.
//
// The walkers are generated (go generate; see generate.go) from the XDR in
// xdr/ by internal/xdrgen. Decoding never panics, bounds every loop by the
// bytes present, and allocates nothing once an Info has been used.
package nfs

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Program is an ONC RPC program number (RFC 5531 section 7.3; the numbers
// here are from the RFCs that define the programs).
type Program uint32

const (
	ProgNFS    Program = 100003 // NFS (RFC 1094, RFC 1813, RFC 7530)
	ProgMount  Program = 100005 // MOUNT (RFC 1094 appendix A, RFC 1813 section 5)
	ProgNFSACL Program = 100227 // NFSACL (no RFC; RFC 8267 section 4.2)
	// ProgNFS4CallbackDefault is the callback program number Linux clients
	// choose; any number can be the callback program (RFC 5661 section 18.36).
	ProgNFS4CallbackDefault Program = 0x40000000
)

func (p Program) String() string {
	switch p {
	case ProgNFS:
		return "NFS"
	case ProgMount:
		return "MOUNT"
	case ProgNFSACL:
		return "NFSACL"
	}
	return "Program(" + strconv.FormatUint(uint64(p), 10) + ")"
}

// ItemKind names a DDP-eligible data item (RFC 8267).
type ItemKind uint8

const (
	ItemNone               ItemKind = iota
	ItemNFS3WriteData               // WRITE3args data (RFC 8267 section 3)
	ItemNFS3SymlinkPath             // SYMLINK3args symlink.symlink_data (section 3)
	ItemNFS3ReadData                // READ3resok data (section 3)
	ItemNFS3ReadlinkPath            // READLINK3resok data (section 3)
	ItemNFS4WriteData               // WRITE4args data (section 5.1)
	ItemNFS4CreateLinkdata          // CREATE4args objtype.linkdata, type NF4LNK (section 5.1)
	ItemNFS4ReadData                // READ4resok data (section 5.1)
	ItemNFS4ReadlinkLink            // READLINK4resok link (section 5.1)
)

var itemNames = [...]string{"", "WRITE3args.data", "SYMLINK3args.symlink_data", "READ3resok.data",
	"READLINK3resok.data", "WRITE4args.data", "CREATE4args.linkdata", "READ4resok.data", "READLINK4resok.link"}

func (k ItemKind) String() string {
	if k > ItemNone && int(k) < len(itemNames) {
		return itemNames[k]
	}
	return "ItemKind(" + strconv.Itoa(int(k)) + ")"
}

// IsResult tells whether the item is in results (moved by a Write chunk)
// rather than in arguments (moved by a Read chunk).
func (k ItemKind) IsResult() bool {
	switch k {
	case ItemNFS3ReadData, ItemNFS3ReadlinkPath, ItemNFS4ReadData, ItemNFS4ReadlinkLink:
		return true
	}
	return false
}

// Item is one DDP-eligible data item found in a body. Offsets are from the
// start of the body given to Decode (the procedure's arguments or results).
type Item struct {
	Kind      ItemKind
	Op        int    // index in Info.Ops of the COMPOUND operation holding it; -1 outside a COMPOUND
	LenOffset int    // offset of the item's XDR length word
	Offset    int    // offset of the item's bytes: its XDR position (RFC 8166 section 3.5.3) less the RPC header
	Length    uint32 // the length word: bytes of data
	// Reduced: the bytes (and their roundup) are not in the body; the
	// length word is, and what follows the item starts at Offset.
	Reduced bool
}

// End is the body offset just past the item as it is in the body: past
// the data and its roundup, or Offset when the item was reduced.
func (it Item) End() int {
	if it.Reduced {
		return it.Offset
	}
	return it.Offset + pad4(it.Length)
}

// Data returns the item's bytes from body, or nil when it was reduced.
func (it Item) Data(body []byte) []byte {
	if it.Reduced || it.Offset+int(it.Length) > len(body) {
		return nil
	}
	return body[it.Offset : it.Offset+int(it.Length)]
}

// Op is one operation of a COMPOUND or CB_COMPOUND.
type Op struct {
	Code   Opnum4   // forward channel operation (COMPOUND)
	CBCode CBOpnum4 // callback operation (CB_COMPOUND); Code is 0 then
	// Status is the operation's nfsstat4 (results only: every result
	// starts with it, RFC 5661 section 16.2.3).
	Status Nfsstat4
	Offset int // body offset of the operation's opcode
	End    int // body offset just past its arguments or results
}

// Name is the operation's name without "OP_": "READ", "EXCHANGE_ID",
// "CB_SEQUENCE".
func (o Op) Name() string {
	if o.CBCode != 0 {
		return o.CBCode.String()
	}
	return o.Code.String()
}

// Limits on what one Info records; a body with more is still walked and
// the excess is counted in OpsDropped / ItemsDropped.
const (
	MaxOps   = 256
	MaxItems = 64
)

// Reduction tells Decode which DDP-eligible items of a body were moved
// out of it by RPC-over-RDMA chunks (RFC 8166 section 3.4.5).
type Reduction struct {
	// HeaderLen is the length of the RPC header that precedes the body in
	// the RPC message, to turn Read chunk positions into body offsets.
	HeaderLen int
	// ReadPositions: the XDR positions of the Call's Read chunks, as the
	// transport header carries them (offsets from the start of the RPC
	// message). An argument item whose bytes start at one was reduced.
	// Position zero (a Long Call) reduces nothing.
	ReadPositions []uint32
	// WriteChunks: for a Reply, the number of segments of each Write
	// chunk in Write list order. The Nth DDP-eligible result item met was
	// reduced when WriteChunks[N] > 0 (RFC 8267 section 5.4.1; an empty
	// Write chunk asks for that result inline). Results beyond the list
	// are inline.
	WriteChunks []uint32
	// Auto takes an item whose bytes run past the end of the body as
	// reduced, for items the lists above do not decide. It is a guess:
	// an item followed by other data is taken as inline when that data is
	// at least as long as the item would be.
	Auto bool
}

// Info is what Decode found. Reuse one Info across messages: Decode
// resets it and keeps the capacity of its slices. Tag aliases the body.
type Info struct {
	Prog     Program
	Vers     uint32
	Proc     uint32
	Call     bool
	Callback bool   // decoded as the NFSv4 callback program
	ProcName string // "READ", "COMPOUND", "CB_COMPOUND", "MNT", "GETACL"; "" if unknown

	// Status is the first word of a result that starts with a status:
	// nfsstat3 for NFSv3 and NFSACL, mountstat3 (or an errno for v1) for
	// MOUNT MNT, the COMPOUND's nfsstat4.
	Status    uint32
	HasStatus bool

	// COMPOUND and CB_COMPOUND.
	Tag           []byte
	MinorVersion  uint32 // arguments only
	CallbackIdent uint32 // CB_COMPOUND arguments only
	NumOps        uint32 // the operation count the array declares
	Ops           []Op
	OpsDropped    int

	Items        []Item
	ItemsDropped int

	// CBDetails: what the CB_SEQUENCE, CB_RECALL, CB_GETATTR, CB_NOTIFY
	// and CB_LAYOUTRECALL arguments of a CB_COMPOUND Call say, and a
	// Reply's CB_SEQUENCE4resok; one per operation read, in order.
	CBDetails []CBOpDetail

	// CBProgram is the callback program number a SETCLIENTID,
	// CREATE_SESSION or BACKCHANNEL_CTL in these arguments named: the
	// program of the backchannel Calls to decode with DecodeCallback.
	CBProgram    uint32
	HasCBProgram bool

	// Values are the file handles, names, offsets, counts, attributes and
	// state read from the body, in order (values.go), their bytes in
	// Arena; ValuesDropped counts those past MaxValues or MaxArenaBytes.
	// ValueMode, which the caller sets and Decode keeps, says which are
	// read: all (the zero value), only what Object reads, or none.
	Values        []rpcrdma.ULBValue
	Arena         []byte
	ValuesDropped int
	ValueMode     ValueMode

	// Len is the number of body bytes walked; on success, bytes after it
	// are not part of the procedure's arguments or results.
	Len int

	d   decoder
	red Reduction
	// counted and countedBytes are, under ValuesObject, the values and
	// their bytes ValuesAll would have kept so far: the bounds drop the
	// same values in both modes.
	counted, countedBytes int
}

// Stat3 is Status as an NFSv3 status.
func (in *Info) Stat3() Nfsstat3 { return Nfsstat3(in.Status) }

// Stat4 is Status as an NFSv4 status.
func (in *Info) Stat4() Nfsstat4 { return Nfsstat4(in.Status) }

// IsCompound tells whether the body was a COMPOUND or CB_COMPOUND.
func (in *Info) IsCompound() bool {
	return in.Proc == 1 && ((in.Prog == ProgNFS && in.Vers == 4) || in.Callback)
}

// DecodeError is a body that could not be walked.
type DecodeError struct {
	Prog     Program
	Vers     uint32
	Proc     uint32
	ProcName string
	Call     bool
	Op       int    // index of the COMPOUND operation being walked, or -1
	OpName   string // its name
	Type     string // the innermost XDR type being walked
	Offset   int    // body offset of the problem
	Value    uint32 // the offending value (length, count, discriminant, opcode)
	Need     int    // bytes needed, for ErrTruncated
	Have     int    // bytes left, for ErrTruncated
	Reason   error
}

func (e *DecodeError) Error() string {
	dir := "reply"
	if e.Call {
		dir = "call"
	}
	s := fmt.Sprintf("nfs: %v v%d %s %s", e.Prog, e.Vers, procLabel(e.ProcName, e.Proc), dir)
	if e.Op >= 0 {
		s += fmt.Sprintf(" op %d (%s)", e.Op, e.OpName)
	}
	if e.Type != "" {
		s += " " + e.Type
	}
	s += fmt.Sprintf(" at offset %d: %v", e.Offset, e.Reason)
	switch e.Reason {
	case ErrTruncated:
		s += fmt.Sprintf(": need %d bytes, have %d", e.Need, e.Have)
	case ErrTooLong, ErrBadDiscriminant, ErrBadBool, ErrUnknownOperation:
		s += fmt.Sprintf(": %d", e.Value)
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Reason }

func procLabel(name string, proc uint32) string {
	if name != "" {
		return name
	}
	return "proc " + strconv.FormatUint(uint64(proc), 10)
}

// progVersion and procEntry are the tables the generator writes.
type progVersion struct {
	prog, vers         uint32
	progName, versName string
	procs              []procEntry
	namesOnly          bool // procedures named, bodies not walked
}

type procEntry struct {
	name      string
	args, res func(*decoder) error
}

// Named-only versions: procedure names for NFSv2 (RFC 1094 section 2.2)
// and NFSACL v2, whose bodies this package does not walk.
var namedOnly = []progVersion{
	{prog: 100003, vers: 2, progName: "NFS_PROGRAM", versName: "NFS_VERSION", procs: names(
		"NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE", "WRITE",
		"CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR", "RMDIR", "READDIR", "STATFS"), namesOnly: true},
	{prog: 100227, vers: 2, progName: "NFS_ACL_PROGRAM", versName: "NFS_ACL_V2", procs: names(
		"NULL", "GETACL", "SETACL", "GETATTR", "ACCESS"), namesOnly: true},
}

func names(n ...string) []procEntry {
	p := make([]procEntry, len(n))
	for i, s := range n {
		p[i].name = s
	}
	return p
}

var tables = [][]progVersion{v3_programs, mnt_programs, v4_programs, namedOnly}

// versions are the tables' entries in one list, in the tables' order, and
// knownProgs their program numbers, once each: lookup and Known are asked
// of every message.
var versions, knownProgs = func() ([]*progVersion, []uint32) {
	var vs []*progVersion
	var ps []uint32
	for _, t := range tables {
		for i := range t {
			vs = append(vs, &t[i])
			if !slices.Contains(ps, t[i].prog) {
				ps = append(ps, t[i].prog)
			}
		}
	}
	return vs, ps
}()

func lookup(prog, vers uint32) (pv *progVersion, progKnown bool) {
	for _, v := range versions {
		if v.prog == prog {
			progKnown = true
			if v.vers == vers {
				return v, true
			}
		}
	}
	return nil, progKnown
}

// ProcName returns the name of a procedure ("READ", "COMPOUND", "MNT"),
// or "" when the program, version or procedure is not known here.
func ProcName(prog, vers, proc uint32) string {
	pv, _ := lookup(prog, vers)
	if pv == nil || uint64(proc) >= uint64(len(pv.procs)) {
		return ""
	}
	return pv.procs[proc].name
}

// Known tells whether Decode knows the program.
func Known(prog uint32) bool {
	return slices.Contains(knownProgs, prog)
}

// Decode decodes an RPC Call's arguments (call) or an accepted SUCCESS
// Reply's results (!call) of a procedure of NFS, MOUNT or NFSACL, or of
// the NFSv4 callback program under 0x40000000 (as DecodeCallback). The
// callback program has no fixed number: for another, use DecodeCallback.
// It returns an Info owned by the caller.
func Decode(prog, vers, proc uint32, call bool, body []byte, red *Reduction) (*Info, error) {
	in := new(Info)
	err := in.Decode(prog, vers, proc, call, body, red)
	return in, err
}

// Decode is the allocation-free form of the package function Decode: it
// resets in and fills it. red may be nil (nothing reduced).
func (in *Info) Decode(prog, vers, proc uint32, call bool, body []byte, red *Reduction) error {
	in.reset(prog, vers, proc, call, false, body, red)
	pv, progKnown := lookup(prog, vers)
	if pv == nil {
		if progKnown {
			return in.fail(ErrUnknownVersion)
		}
		return in.fail(ErrUnknownProgram)
	}
	if uint64(proc) >= uint64(len(pv.procs)) || pv.procs[proc].name == "" {
		return in.fail(ErrUnknownProcedure)
	}
	if pv.prog == uint32(ProgNFS4CallbackDefault) {
		// xdr/nfs4.x declares the callback program under the number
		// Linux clients choose: walk it as the callback it is, naming
		// the CB_COMPOUND's operations.
		return in.DecodeCallback(prog, vers, proc, call, body, red)
	}
	e := &pv.procs[proc]
	in.ProcName = e.name
	if pv.prog == uint32(ProgNFS) && pv.vers == 4 && proc == 1 {
		return in.compound(false)
	}
	if pv.namesOnly && proc != 0 {
		return in.fail(ErrVersionNotWalkable)
	}
	fn := e.args
	if !call {
		fn = e.res
		if fn != nil && statusFirst(prog, proc) {
			in.Status, in.HasStatus = in.d.peek32()
		}
	}
	if fn != nil {
		if err := fn(&in.d); err != nil {
			return in.fail(err)
		}
	}
	in.Len = in.d.off
	return nil
}

// statusFirst: the results that start with a status word.
func statusFirst(prog, proc uint32) bool {
	switch Program(prog) {
	case ProgNFS, ProgNFSACL:
		return proc != 0
	case ProgMount:
		return proc == 1
	}
	return false
}

// DecodeCallback decodes the arguments or results of a procedure of the
// NFSv4 callback program (RFC 5661 section 20; RFC 7530 section 16.1):
// CB_NULL or CB_COMPOUND. prog is the program number the client chose;
// vers is 1 (NFSv4.0's callback version; 4.1 and 4.2 use 1 too).
func (in *Info) DecodeCallback(prog, vers, proc uint32, call bool, body []byte, red *Reduction) error {
	in.reset(prog, vers, proc, call, true, body, red)
	if vers != 1 {
		return in.fail(ErrUnknownVersion)
	}
	switch proc {
	case 0:
		in.ProcName = "CB_NULL"
		return nil
	case 1:
		in.ProcName = "CB_COMPOUND"
		return in.compound(true)
	}
	return in.fail(ErrUnknownProcedure)
}

// reset clears in for the next body, keeping its slices' capacity and
// ValueMode. It assigns field by field: the composite literal of the whole
// Info it replaced was built and copied (typedmemmove) for every message,
// ~110 instructions of each. TestInfoResetClearsEveryField fails when a
// field added to Info is not cleared here.
func (in *Info) reset(prog, vers, proc uint32, call, cb bool, body []byte, red *Reduction) {
	in.Prog, in.Vers, in.Proc, in.Call, in.Callback, in.ProcName = Program(prog), vers, proc, call, cb, ""
	in.Status, in.HasStatus = 0, false
	in.Tag, in.MinorVersion, in.CallbackIdent, in.NumOps = nil, 0, 0, 0
	in.Ops, in.OpsDropped = in.Ops[:0], 0
	in.Items, in.ItemsDropped = in.Items[:0], 0
	in.CBDetails = in.CBDetails[:0]
	in.CBProgram, in.HasCBProgram = 0, false
	in.Values, in.Arena, in.ValuesDropped = in.Values[:0], in.Arena[:0], 0
	in.Len = 0
	in.counted, in.countedBytes = 0, 0
	var r *Reduction
	if red != nil {
		in.red = *red
		r = &in.red
	} else {
		in.red = Reduction{}
	}
	in.d.reset(body, in, r)
}

func (in *Info) fail(reason error) error {
	d := &in.d
	e := &DecodeError{Prog: in.Prog, Vers: in.Vers, Proc: in.Proc, ProcName: in.ProcName, Call: in.Call,
		Op: d.curOp, Type: d.errType, Offset: d.errOff, Value: d.errVal, Reason: reason}
	if reason == ErrTruncated {
		e.Need, e.Have = d.errNeed, len(d.b)-d.errOff
	}
	if d.curOp >= 0 && d.curOp < len(in.Ops) {
		e.OpName = in.Ops[d.curOp].Name()
	}
	in.Len = d.off
	return e
}

// compound walks COMPOUND4args/res (RFC 5661 section 16.2) or
// CB_COMPOUND4args/res (section 20.2) operation by operation.
func (in *Info) compound(cb bool) error {
	d := &in.d
	if !in.Call {
		st, err := d.u32()
		if err != nil {
			return in.fail(d.in("COMPOUND4res", err))
		}
		in.Status, in.HasStatus = st, true
	}
	tag, err := d.opaqueBytes(^uint32(0))
	if err != nil {
		return in.fail(d.in("utf8str_cs", err))
	}
	in.Tag = tag
	if in.Call {
		if in.MinorVersion, err = d.u32(); err != nil {
			return in.fail(d.in("COMPOUND4args", err))
		}
		if cb {
			if in.CallbackIdent, err = d.u32(); err != nil {
				return in.fail(d.in("CB_COMPOUND4args", err))
			}
		}
	}
	n, err := d.count(^uint32(0), 4)
	if err != nil {
		return in.fail(d.in("COMPOUND", err))
	}
	in.NumOps = n
	for i := uint32(0); i < n; i++ {
		start := d.off
		code, err := d.u32()
		if err != nil {
			return in.fail(err)
		}
		op := Op{Offset: start}
		if cb {
			op.CBCode = CBOpnum4(code)
		} else {
			op.Code = Opnum4(code)
		}
		var status uint32
		if !in.Call {
			status, _ = d.peek32()
			op.Status = Nfsstat4(status)
		}
		idx := -1
		if len(in.Ops) < MaxOps {
			idx = len(in.Ops)
			in.Ops = append(in.Ops, op)
		} else {
			in.OpsDropped++
		}
		d.curOp = idx
		known := (cb && CBOpnum4(code).Known()) || (!cb && Opnum4(code).Known())
		if !known {
			d.errOff, d.errVal = start, code
			if idx < 0 {
				d.curOp = -1
			}
			return in.fail(ErrUnknownOperation)
		}
		switch {
		case !cb && in.Call:
			err = d.v4_nfs_argop4_arm(code)
		case !cb:
			err = d.v4_nfs_resop4_arm(code)
		case in.Call:
			err = d.v4_nfs_cb_argop4_arm(code)
		default:
			err = d.v4_nfs_cb_resop4_arm(code)
		}
		if err != nil {
			return in.fail(err)
		}
		if idx >= 0 {
			in.Ops[idx].End = d.off
		}
		if cb {
			in.cbDetail(idx, CBOpnum4(code), start, d.off)
		}
	}
	d.curOp = -1
	in.Len = d.off
	return nil
}

// RDMAPort is the port of NFS over RDMA ("nfsrdma", RFC 8267 section 6.1;
// RFC 5666 section 12): the TCP port an iWARP NFS server listens on, and
// the port in the RDMA-CM service ID of RoCE and InfiniBand ones. The other
// packages refer to it; it is defined only here.
const RDMAPort = 20049
