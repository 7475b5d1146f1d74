package nfs

import (
	"encoding/binary"
	"errors"
)

// Sentinel reasons wrapped by *DecodeError.
var (
	ErrTruncated          = errors.New("truncated")
	ErrTooLong            = errors.New("length or count above the XDR maximum")
	ErrBadDiscriminant    = errors.New("union discriminant with no arm")
	ErrBadBool            = errors.New("bool neither 0 nor 1")
	ErrUnknownProgram     = errors.New("unknown RPC program")
	ErrUnknownVersion     = errors.New("unknown program version")
	ErrUnknownProcedure   = errors.New("unknown procedure")
	ErrUnknownOperation   = errors.New("unknown COMPOUND operation: cannot walk past it")
	ErrVersionNotWalkable = errors.New("procedures of this version are named but not decoded")
)

// decoder walks XDR (RFC 4506) over b from off. The generated walkers
// (zz_*.go) are its methods. It never reads past b, never allocates, and
// on failure records where, so that Decode can build one *DecodeError.
type decoder struct {
	b   []byte
	off int

	info        *Info
	red         *Reduction
	vals        ValueMode // info.ValueMode
	skipEnd     int       // len(b) under ValuesNone, else 0: the numbers' hooks skip, not read, before it (values.go)
	curOp       int       // index of the COMPOUND operation being walked, or -1
	resultItems int       // DDP-eligible result items met so far (Write chunk pairing)
	mask        [3]uint32 // the last fattr4 attrmask walked (values.go)

	errType string // innermost XDR type being walked when the error happened
	errOff  int
	errVal  uint32
	errNeed int
}

// reset readies d to walk b for in. Field by field, as Info.reset.
func (d *decoder) reset(b []byte, in *Info, red *Reduction) {
	d.b, d.off, d.info, d.red, d.vals, d.skipEnd = b, 0, in, red, in.ValueMode, 0
	if d.vals == ValuesNone {
		d.skipEnd = len(b)
	}
	d.curOp, d.resultItems, d.mask = -1, 0, [3]uint32{}
	d.errType, d.errOff, d.errVal, d.errNeed = "", 0, 0, 0
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) short(need int) error {
	d.errOff, d.errNeed = d.off, need
	return ErrTruncated
}

func (d *decoder) skip(n int) error {
	if d.left() < n {
		return d.short(n)
	}
	d.off += n
	return nil
}

func (d *decoder) u32() (uint32, error) {
	if d.left() < 4 {
		return 0, d.short(4)
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) peek32() (uint32, bool) {
	if d.left() < 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(d.b[d.off:]), true
}

// boolean reads an XDR bool (RFC 4506 section 4.4): 0 or 1, nothing else.
func (d *decoder) boolean() (bool, error) {
	v, err := d.u32()
	if err != nil {
		return false, err
	}
	if v > 1 {
		d.off -= 4
		d.errOff, d.errVal = d.off, v
		return false, ErrBadBool
	}
	return v == 1, nil
}

func (d *decoder) tooLong(n uint32) error {
	d.off -= 4
	d.errOff, d.errVal = d.off, n
	return ErrTooLong
}

// opaque skips a variable-length opaque or string (RFC 4506 sections 4.10
// and 4.11) of at most max bytes, with its roundup.
func (d *decoder) opaque(max uint32) error {
	n, err := d.u32()
	if err != nil {
		return err
	}
	if n > max {
		return d.tooLong(n)
	}
	return d.skip(pad4(n))
}

// opaqueBytes is opaque returning the bytes (a slice of the input).
func (d *decoder) opaqueBytes(max uint32) ([]byte, error) {
	n, err := d.u32()
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, d.tooLong(n)
	}
	start := d.off
	if err := d.skip(pad4(n)); err != nil {
		return nil, err
	}
	return d.b[start : start+int(n) : start+int(n)], nil
}

// count reads the element count of a variable-length array (RFC 4506
// section 4.13) and checks it against the array's maximum and against the
// bytes left, given the smallest encoding of one element, so that a lying
// count cannot make a walker loop longer than the input allows.
func (d *decoder) count(max uint32, min int) (uint32, error) {
	n, err := d.u32()
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, d.tooLong(n)
	}
	if uint64(n)*uint64(min) > uint64(d.left()) {
		return 0, d.short(int(min64(uint64(n)*uint64(min), 1<<31)))
	}
	return n, nil
}

// fixedArray skips a variable-length array of fixed-size elements.
func (d *decoder) fixedArray(max uint32, size int) error {
	n, err := d.count(max, size)
	if err != nil {
		return err
	}
	d.off += int(n) * size
	return nil
}

func (d *decoder) badDisc(v uint32) error {
	d.errOff, d.errVal = d.off-4, v
	return ErrBadDiscriminant
}

// in records the innermost XDR type of an error on its way up.
func (d *decoder) in(typ string, err error) error {
	if d.errType == "" {
		d.errType = typ
	}
	return err
}

func pad4(n uint32) int { return int((uint64(n) + 3) &^ 3) }

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// ddp walks a DDP-eligible opaque or string and records it as an Item.
// Whether its bytes are present (inline) or were moved to a chunk
// (reduced: RFC 8166 section 3.4.5, only the length word stays and the
// roundup goes too) is decided by the Reduction the caller gave.
func (d *decoder) ddp(kind ItemKind, max uint32) error {
	lenOff := d.off
	n, err := d.u32()
	if err != nil {
		return err
	}
	if n > max {
		return d.tooLong(n)
	}
	it := Item{Kind: kind, Op: d.curOp, LenOffset: lenOff, Offset: d.off, Length: n}
	it.Reduced = d.reduced(&it)
	if kind.IsResult() {
		d.resultItems++
	}
	if !it.Reduced {
		if err := d.skip(pad4(n)); err != nil {
			return err
		}
	}
	in := d.info
	if len(in.Items) < MaxItems {
		in.Items = append(in.Items, it)
	} else {
		in.ItemsDropped++
	}
	return nil
}

func (d *decoder) reduced(it *Item) bool {
	r := d.red
	if r == nil {
		return false
	}
	if it.Kind.IsResult() {
		// RFC 8267 section 5.4.1 (and RFC 8166 section 4.3.2): the Nth
		// Write chunk carries the Nth DDP-eligible result; an empty chunk
		// (no segments) asks for that result inline.
		if i := d.resultItems; i < len(r.WriteChunks) {
			return r.WriteChunks[i] > 0
		}
	} else {
		pos := it.Offset + r.HeaderLen
		for _, p := range r.ReadPositions {
			if p != 0 && int(p) == pos {
				return true
			}
		}
	}
	// Auto: the bytes the length counts are not there, so they went by RDMA.
	return r.Auto && d.left() < pad4(it.Length)
}

// cbProgram walks the callback program number of SETCLIENTID (RFC 7530
// 16.33), CREATE_SESSION (RFC 5661 18.36) and BACKCHANNEL_CTL (18.33): the
// program the server's backchannel Calls will carry.
func (d *decoder) cbProgram() error {
	v, err := d.u32()
	if err != nil {
		return err
	}
	d.info.CBProgram, d.info.HasCBProgram = v, true
	return nil
}
