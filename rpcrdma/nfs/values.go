package nfs

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// The values storage engineers look for in an NFS body — file handles,
// names, offsets, counts, stable_how, attributes' sizes and times, NFSv4
// state and session ids — read by the hand-written %hook methods below,
// which the generated walkers call where xdr/nfs3.x and xdr/nfs4.x mark
// them. Each is appended to Info.Values (bytes copied to Info.Arena) in the
// order the body holds them, with its Key. Nothing here allocates once an
// Info has been used: the slices keep their capacity.

// Key says what a value is. The names are Wireshark's display-filter
// names for the same value (package fields prints them under those).
type Key uint16

const (
	KeyNone Key = iota
	// Both versions.
	KeyFH // nfs_fh3 data / nfs_fh4 (RFC 1813 section 2.3.3; RFC 7530 section 4): nfs.fhandle
	// NFSv3 (RFC 1813).
	KeyName3             // diropargs3 name: nfs.name
	KeyReaddirName3      // entry3 name: nfs.readdir.entry3.name
	KeyReaddirplusName3  // entryplus3 name: nfs.readdirplus.entry.name
	KeyOffset3           // READ/WRITE/COMMIT offset: nfs.offset3
	KeyCount3            // READ/WRITE/COMMIT count (and READ3resok, WRITE3resok): nfs.count3
	KeyStable3           // WRITE3args stable: nfs.write.stable
	KeyCommitted3        // WRITE3resok committed: nfs.write.committed
	KeyEOF3              // READ3resok eof: nfs.read.eof
	KeyFattr3Size        // fattr3 size: nfs.fattr3.size
	KeyFattr3Fileid      // fattr3 fileid: nfs.fattr3.fileid
	KeyWccSize           // wcc_attr size: nfs.wcc_attr.size
	KeyAtime3            // fattr3 atime: nfs.atime (U seconds, V nanoseconds)
	KeyMtime3            // fattr3 and wcc_attr mtime: nfs.mtime
	KeyCtime3            // fattr3 and wcc_attr ctime: nfs.ctime
	KeyComponent4        // component4 (LOOKUP, CREATE, REMOVE, RENAME, OPEN...): nfs.pathname.component
	KeyEntryName4        // entry4 name (READDIR): nfs.name
	KeyOffset4           // READ/WRITE/COMMIT offset: nfs.offset4
	KeyCount4            // READ/COMMIT args count, WRITE4resok count: nfs.count4
	KeyStableHow4        // WRITE4args stable, WRITE4resok committed: nfs.stable_how4
	KeyEOF4              // READ4resok eof: nfs.eof
	KeyStateid4          // stateid4, 16 bytes: nfs.stateid
	KeySeqid4            // seqid4 and sequenceid4: nfs.seqid
	KeySessionID4        // sessionid4: nfs.session_id4
	KeySlotID4           // SEQUENCE sa_slotid, sr_slotid: nfs.slotid
	KeyHighSlotID4       // SEQUENCE sa_highest_slotid, sr_highest_slotid: nfs.high_slotid
	KeyTargetHighSlotID4 // SEQUENCE sr_target_highest_slotid: nfs.target_high_slotid
	KeyClientID4         // clientid4: nfs.clientid
	KeyFattr4Size        // fattr4 size (attribute 4): nfs.fattr4.size
	KeyFattr4Fileid      // fattr4 fileid (20): nfs.fattr4.fileid
	KeyFattr4SpaceUsed   // fattr4 space_used (45): nfs.fattr4.space_used
	KeyNfstime4          // an nfstime4 attribute (47, 49-53, 56, 57; 48 and 54 set to client time): nfs.nfstime4.seconds
	numKeys
)

var keyNames = [...]string{"", "fhandle", "name", "readdir.entry3.name", "readdirplus.entry.name", "offset3", "count3",
	"write.stable", "write.committed", "read.eof", "fattr3.size", "fattr3.fileid", "wcc_attr.size", "atime", "mtime",
	"ctime", "pathname.component", "name", "offset4", "count4", "stable_how4", "eof", "stateid", "seqid",
	"session_id4", "slotid", "high_slotid", "target_high_slotid", "clientid", "fattr4.size", "fattr4.fileid",
	"fattr4.space_used", "nfstime4"}

// String is the key's Wireshark field name without "nfs.".
func (k Key) String() string {
	if int(k) < len(keyNames) && k != KeyNone {
		return keyNames[k]
	}
	return "Key(" + strconv.Itoa(int(k)) + ")"
}

// Bounds on what one Info keeps; past them values are counted in
// ValuesDropped.
const (
	MaxValues     = 8192
	MaxArenaBytes = 256 << 10
)

// FHHash is the hash tshark shows as nfs.fh.hash: the CRC-32 of the file
// handle's bytes (ISO-HDLC, the one of hash/crc32's IEEE table; checked
// against tshark 4.0 on the rxe and siw captures).
func FHHash(fh []byte) uint32 { return crc32.ChecksumIEEE(fh) }

// StateidHash is nfs.stateid.hash: the CRC-16 of the 16 bytes of a
// stateid4 (CRC-16/IBM-SDLC: reflected 0x1021, initial and final 0xffff —
// the CRC Wireshark calls CRC-16 CCITT; checked against tshark 4.0).
func StateidHash(b []byte) uint16 {
	crc := uint16(0xffff)
	for _, c := range b {
		crc ^= uint16(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x8408
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// ValueMode says which values Decode reads into Info.Values.
type ValueMode uint8

const (
	// ValuesAll reads every value (the zero value).
	ValuesAll ValueMode = iota
	// ValuesObject keeps only what Object and the reply's object read —
	// the file handles and the names of KeyName3 and KeyComponent4 — and
	// counts the others against MaxValues and MaxArenaBytes as if they
	// were kept, so that the bounds drop the same values as under
	// ValuesAll and the object is the same.
	ValuesObject
	// ValuesNone reads none: the body is walked (and judged) as under
	// ValuesAll, its values skipped.
	ValuesNone
)

// value appends a numeric value.
func (d *decoder) value(k Key, u uint64, v uint32) {
	in := d.info
	if d.vals != ValuesAll {
		if d.vals == ValuesObject {
			// Counted, not kept: Object reads no number.
			if in.counted >= MaxValues {
				in.ValuesDropped++
			} else {
				in.counted++
			}
		}
		return
	}
	if len(in.Values) >= MaxValues {
		in.ValuesDropped++
		return
	}
	in.Values = append(in.Values, rpcrdma.ULBValue{Key: uint16(k), Op: int16(d.curOp), U: u, V: v})
}

// bytesValue appends a value with bytes, copied to the arena.
func (d *decoder) bytesValue(k Key, b []byte) {
	in := d.info
	switch d.vals {
	case ValuesAll:
		if len(in.Values) >= MaxValues || len(in.Arena)+len(b) > MaxArenaBytes {
			in.ValuesDropped++
			return
		}
	case ValuesObject:
		if in.counted >= MaxValues || in.countedBytes+len(b) > MaxArenaBytes {
			in.ValuesDropped++
			return
		}
		in.counted++
		in.countedBytes += len(b)
		if k != KeyFH && k != KeyName3 && k != KeyComponent4 {
			return
		}
	default:
		return
	}
	off := len(in.Arena)
	in.Arena = append(in.Arena, b...)
	in.Values = append(in.Values, rpcrdma.ULBValue{Key: uint16(k), Op: int16(d.curOp), U: uint64(len(b)),
		Off: uint32(off), Len: uint32(len(b))})
}

// opaqueValue walks an opaque<max> or string<max> and records its bytes.
func (d *decoder) opaqueValue(k Key, max uint32) error {
	if d.vals == ValuesNone {
		return d.opaque(max) // the same walk, and errors, as opaqueBytes
	}
	b, err := d.opaqueBytes(max)
	if err != nil {
		return err
	}
	d.bytesValue(k, b)
	return nil
}

// The numbers' hooks skip what they would read under ValuesNone (up to
// decoder.skipEnd) when it is all there, in a form small enough to be
// inlined into the generated walkers; otherwise their read (which records
// nothing under ValuesNone) walks it and says what is missing.

func (d *decoder) u32Value(k Key) error {
	if d.off+4 <= d.skipEnd {
		d.off += 4
		return nil
	}
	return d.readU32Value(k)
}

func (d *decoder) readU32Value(k Key) error {
	v, err := d.u32()
	if err != nil {
		return err
	}
	d.value(k, uint64(v), 0)
	return nil
}

func (d *decoder) u64() (uint64, error) {
	if d.left() < 8 {
		return 0, d.short(8)
	}
	v := binary.BigEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v, nil
}

func (d *decoder) u64Value(k Key) error {
	if d.off+8 <= d.skipEnd {
		d.off += 8
		return nil
	}
	return d.readU64Value(k)
}

func (d *decoder) readU64Value(k Key) error {
	v, err := d.u64()
	if err != nil {
		return err
	}
	d.value(k, v, 0)
	return nil
}

// time3 walks an nfstime3 (two uint32, RFC 1813 section 2.6).
func (d *decoder) time3(k Key) error {
	if d.off+8 <= d.skipEnd {
		d.off += 8
		return nil
	}
	return d.time(k, false)
}

// time4 walks an nfstime4 (int64 seconds, uint32 nseconds, RFC 7530
// section 3.3.7).
func (d *decoder) time4(k Key) error {
	if d.off+12 <= d.skipEnd {
		d.off += 12
		return nil
	}
	return d.time(k, true)
}

// time reads an nfstime3 or, wide, an nfstime4.
func (d *decoder) time(k Key, wide bool) error {
	var sec uint64
	if wide {
		s, err := d.u64()
		if err != nil {
			return err
		}
		sec = s
	} else {
		s, err := d.u32()
		if err != nil {
			return err
		}
		sec = uint64(s)
	}
	ns, err := d.u32()
	if err != nil {
		return err
	}
	d.value(k, sec, ns)
	return nil
}

// The %hook methods (NFSv3, RFC 1813 section 3.3).

func (d *decoder) fh3() error              { return d.opaqueValue(KeyFH, 64) } // NFS3_FHSIZE
func (d *decoder) name3() error            { return d.opaqueValue(KeyName3, ^uint32(0)) }
func (d *decoder) readdirName3() error     { return d.opaqueValue(KeyReaddirName3, ^uint32(0)) }
func (d *decoder) readdirplusName3() error { return d.opaqueValue(KeyReaddirplusName3, ^uint32(0)) }
func (d *decoder) offset3() error          { return d.u64Value(KeyOffset3) }
func (d *decoder) count3() error           { return d.u32Value(KeyCount3) }
func (d *decoder) stable3() error          { return d.u32Value(KeyStable3) }
func (d *decoder) committed3() error       { return d.u32Value(KeyCommitted3) }
func (d *decoder) fattr3Size() error       { return d.u64Value(KeyFattr3Size) }
func (d *decoder) fattr3Fileid() error     { return d.u64Value(KeyFattr3Fileid) }
func (d *decoder) wccSize() error          { return d.u64Value(KeyWccSize) }
func (d *decoder) atime3() error           { return d.time3(KeyAtime3) }
func (d *decoder) mtime3() error           { return d.time3(KeyMtime3) }
func (d *decoder) ctime3() error           { return d.time3(KeyCtime3) }

func (d *decoder) eof3() error {
	b, err := d.boolean()
	if err != nil {
		return err
	}
	d.value(KeyEOF3, b2u(b), 0)
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// NFSv4.x (RFC 7530, RFC 8881).

func (d *decoder) fh4() error         { return d.opaqueValue(KeyFH, 128) } // NFS4_FHSIZE
func (d *decoder) component4() error  { return d.opaqueValue(KeyComponent4, ^uint32(0)) }
func (d *decoder) entryName4() error  { return d.opaqueValue(KeyEntryName4, ^uint32(0)) }
func (d *decoder) offset4() error     { return d.u64Value(KeyOffset4) }
func (d *decoder) count4() error      { return d.u32Value(KeyCount4) }
func (d *decoder) stableHow4() error  { return d.u32Value(KeyStableHow4) }
func (d *decoder) seqid4() error      { return d.u32Value(KeySeqid4) }
func (d *decoder) slotid4() error     { return d.u32Value(KeySlotID4) }
func (d *decoder) highSlotid4() error { return d.u32Value(KeyHighSlotID4) }
func (d *decoder) targetSlotid4() error {
	return d.u32Value(KeyTargetHighSlotID4)
}
func (d *decoder) clientid4() error { return d.u64Value(KeyClientID4) }

func (d *decoder) eof4() error {
	b, err := d.boolean()
	if err != nil {
		return err
	}
	d.value(KeyEOF4, b2u(b), 0)
	return nil
}

// sessionid4 walks opaque sessionid4[NFS4_SESSIONID_SIZE] (16).
func (d *decoder) sessionid4() error {
	if d.left() < 16 {
		return d.short(16)
	}
	d.bytesValue(KeySessionID4, d.b[d.off:d.off+16])
	d.off += 16
	return nil
}

// stateidOther walks stateid4's other[NFS4_OTHER_SIZE] (12) and records
// the whole stateid4: the seqid word just walked and other.
func (d *decoder) stateidOther() error {
	if d.left() < 12 {
		return d.short(12)
	}
	if d.off >= 4 {
		d.bytesValue(KeyStateid4, d.b[d.off-4:d.off+12])
	}
	d.off += 12
	return nil
}

// attrmask4 walks fattr4's attrmask (bitmap4) and keeps its first words
// for attrVals4, which walks the attr_vals that follow it.
func (d *decoder) attrmask4() error {
	n, err := d.count(^uint32(0), 4)
	if err != nil {
		return err
	}
	d.mask = [3]uint32{}
	for i := uint32(0); i < n; i++ {
		w, _ := d.u32() // count checked the bytes
		if i < uint32(len(d.mask)) {
			d.mask[i] = w
		}
	}
	return nil
}

// attrVals4 walks fattr4's attr_vals (attrlist4, an opaque) and reads the
// attributes in it that the mask names, in attribute order (RFC 8881
// section 5.6-5.8; RFC 7530 section 5.5-5.7), up to the first one whose
// encoding it does not know.
func (d *decoder) attrVals4() error {
	if d.vals == ValuesNone {
		// The attributes are read only for their values; their walk
		// stops quietly, so it judges nothing.
		return d.opaque(^uint32(0))
	}
	b, err := d.opaqueBytes(^uint32(0))
	if err != nil {
		return err
	}
	sub := decoder{b: b, info: d.info, curOp: d.curOp, vals: d.vals}
	sub.attrs(d.mask)
	return nil
}

// attrs reads attribute values over d.b; it stops quietly at the end of
// the bytes or at an attribute it cannot walk.
func (d *decoder) attrs(mask [3]uint32) {
	for a := 0; a < 96; a++ {
		if mask[a/32]&(1<<(a%32)) == 0 {
			continue
		}
		if !d.attr(a) {
			return
		}
	}
}

// attr walks attribute a; false when it cannot.
func (d *decoder) attr(a int) bool {
	var err error
	switch a {
	case 1, 2, 5, 6, 7, 9, 10, 11, 13, 14, 15, 16, 17, 18, 25, 26, 28, 29, 33, 34, 35, 46, 65, 66:
		err = d.skip(4) // uint32, bool, enum
	case 3, 21, 22, 23, 27, 30, 31, 38, 39, 40, 42, 43, 44, 55:
		err = d.skip(8) // uint64
	case 8, 60:
		err = d.skip(16) // fsid4, change_policy4
	case 41:
		err = d.skip(8) // specdata4
	case 0:
		err = d.fixedArray(^uint32(0), 4) // supported_attrs: bitmap4
	case 62, 64:
		err = d.fixedArray(^uint32(0), 4) // layouttype4<>
	case 4:
		err = d.u64Value(KeyFattr4Size)
	case 19:
		err = d.fh4()
	case 20:
		err = d.u64Value(KeyFattr4Fileid)
	case 45:
		err = d.u64Value(KeyFattr4SpaceUsed)
	case 47, 49, 50, 51, 52, 53, 56, 57:
		err = d.time4(KeyNfstime4)
	case 48, 54: // settime4: time_how4, and SET_TO_CLIENT_TIME4's nfstime4
		var how uint32
		if how, err = d.u32(); err == nil && how == 1 {
			err = d.time4(KeyNfstime4)
		}
	case 32, 36, 37:
		err = d.opaque(^uint32(0)) // mimetype, owner, owner_group
	case 12:
		err = d.aces()
	case 58, 59: // nfsacl41: aclflag4, nfsace4<>
		if err = d.skip(4); err == nil {
			err = d.aces()
		}
	case 24:
		err = d.fsLocations()
	case 63: // layouthint4: layouttype4, opaque body
		if err = d.skip(4); err == nil {
			err = d.opaque(^uint32(0))
		}
	default:
		return false
	}
	return err == nil
}

// aces walks nfsace4<>: type, flag, access_mask, who (utf8str_mixed).
func (d *decoder) aces() error {
	n, err := d.count(^uint32(0), 16)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := d.skip(12); err != nil {
			return err
		}
		if err := d.opaque(^uint32(0)); err != nil {
			return err
		}
	}
	return nil
}

// pathname4 walks component4<>.
func (d *decoder) pathname4() error {
	n, err := d.count(^uint32(0), 4)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := d.opaque(^uint32(0)); err != nil {
			return err
		}
	}
	return nil
}

// fsLocations walks fs_locations4: fs_root (pathname4) and
// fs_location4<> (server utf8str_cis<>, rootpath pathname4).
func (d *decoder) fsLocations() error {
	if err := d.pathname4(); err != nil {
		return err
	}
	n, err := d.count(^uint32(0), 8)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := d.pathname4(); err != nil { // server<>: same shape
			return err
		}
		if err := d.pathname4(); err != nil {
			return err
		}
	}
	return nil
}

// Object says what the body's procedure acts on: the hash of its file
// handle (NFSv3: the first in the arguments, the object or directory;
// NFSv4: the last, the current file handle a PUTFH set for the operations
// after it) and the first name (NFSv3 diropargs3, NFSv4 component4), at
// offsets in Arena.
func (in *Info) Object() rpcrdma.ULBObject {
	var o rpcrdma.ULBObject
	v4 := in.Vers == 4 || in.Callback
	for _, v := range in.Values {
		switch Key(v.Key) {
		case KeyFH:
			if !o.HasFH || v4 {
				end := uint64(v.Off) + uint64(v.Len)
				if end <= uint64(len(in.Arena)) {
					o.HasFH, o.FHHash = true, FHHash(in.Arena[v.Off:end])
				}
			}
		case KeyName3, KeyComponent4:
			if o.NameLen == 0 {
				o.NameOff, o.NameLen = v.Off, v.Len
			}
		}
	}
	return o
}

// nfstime4 walks an nfstime4 outside fattr4 (EXCHANGE_ID's nii_date).
func (d *decoder) nfstime4() error { return d.time4(KeyNfstime4) }

// replyObject is what a Reply says of the object its Call named: the
// handle of the file a LOOKUP, CREATE, MKDIR, SYMLINK or MKNOD (NFSv3:
// the first handle of the results) found or made, or, in NFSv4, the
// handle the last GETFH returned. Other results name no handle.
func (in *Info) replyObject() rpcrdma.ULBObject {
	var o rpcrdma.ULBObject
	if in.Prog != ProgNFS || in.Callback {
		return o
	}
	for _, v := range in.Values {
		if Key(v.Key) != KeyFH {
			continue
		}
		switch {
		case in.Vers == 3 && !o.HasFH:
			switch in.Proc {
			case 3, 8, 9, 10, 11: // LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD
			default:
				return o
			}
		case in.Vers == 4:
			if v.Op < 0 || int(v.Op) >= len(in.Ops) || in.Ops[v.Op].Code != OP_GETFH {
				continue
			}
		default:
			continue
		}
		end := uint64(v.Off) + uint64(v.Len)
		if end <= uint64(len(in.Arena)) {
			o.HasFH, o.FHHash = true, FHHash(in.Arena[v.Off:end])
		}
	}
	return o
}
