package rpcordma

import (
	"sync"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
)

// The NFS fields storage engineers look for — file handles and their
// hash, names, offsets and counts of READ, WRITE and COMMIT, stable_how,
// attributes' sizes and times, NFSv4 stateids, seqids, session ids and
// slots — under Wireshark 4.0's names and printed as tshark prints them,
// from the values the NFS decoder read (RPCRecord.ULP.Values, keyed by
// nfs.Key; rpcrdma/nfs/values.go). Each field lists its values in the
// order the body holds them, as tshark's tree does; the golden test
// (cmd/rdmashark/golden_nfs_more_test.go) compares them with tshark's on
// the NFS captures.

// nfsValues calls f with each value of r's body under one of keys.
func nfsValues(r *RPCRecord, f func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue), keys ...nfs.Key) {
	u := &r.ULP
	for _, v := range u.Values {
		for _, k := range keys {
			if nfs.Key(v.Key) == k {
				f(u, v)
				break
			}
		}
	}
}

// nfsValueField is a field with one value per value of the keys: get
// makes the field's value from the decoder's.
func nfsValueField(name, label string, t fields.FieldType, b fields.Base, get func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value, keys ...nfs.Key) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: t, Base: b, Parent: "nfs", Per: "rpc", NoPresence: true,
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := rpcAt(p, i); r != nil {
				nfsValues(r, func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) { emit(get(u, v)) }, keys...)
			}
		}}
}

func valU(_ *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value { return fields.Value{U: v.U} }
func valV(_ *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value { return fields.Value{U: uint64(v.V)} }
func valBytes(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
	return fields.Value{B: u.ValueBytes(v)}
}
func valString(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
	return fields.Value{S: string(u.ValueBytes(v))}
}

// valTime prints an nfstime3 as tshark prints an FT_ABSOLUTE_TIME: in
// local time, "Nov 21, 2026 23:30:26.863999908 UTC" (as frame.time).
func valTime(_ *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
	t := time.Unix(int64(v.U), int64(v.V)).In(time.Local)
	return fields.Value{S: t.Format("Jan _2, 2006 15:04:05.000000000 MST")}
}

// stableHowNames are stable_how's (RFC 1813 section 3.3.7) and
// stable_how4's (RFC 8881 section 18.32.1) names.
var stableHowNames = [...]string{"UNSTABLE", "DATA_SYNC", "FILE_SYNC"}

func valStable(_ *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
	out := fields.Value{U: v.U}
	if v.U < uint64(len(stableHowNames)) {
		out.Text = stableHowNames[v.U]
		if v.Key == uint16(nfs.KeyStableHow4) {
			out.Text += "4"
		}
	}
	return out
}

// nfsItemLength is a field with the length word of the DDP-eligible items
// of one kind: nfs.read.data_length and nfs.write.data_length are those
// of READ4resok and WRITE4args data.
func nfsItemLength(name, label string, kind nfs.ItemKind) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: fields.FTUint32, Base: fields.BaseDec, Parent: "nfs", Per: "rpc", NoPresence: true,
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			r := rpcAt(p, i)
			if r == nil {
				return
			}
			for _, it := range r.ULP.Items {
				if it.Name == kind.String() {
					emit(fields.Value{U: uint64(it.Length)})
				}
			}
		}}
}

// nfsMoreTable's value fields occur on NFSACL and MOUNT messages too (a
// GETACL's file handle, MNT's), where tshark shows them without the nfs
// protocol: they do not make "nfs" present (Field.NoPresence); the
// procedure fields of every NFS message do.
func nfsMoreTable(F *fields.Table) {
	stateid := func(f func(b []byte) fields.Value) func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
		return func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
			b := u.ValueBytes(v)
			if len(b) != 16 {
				return fields.Value{}
			}
			return f(b)
		}
	}
	F.Register(
		// File handles (RFC 1813 section 2.3.3, RFC 8881 section 4): the
		// bytes, their length and tshark's CRC-32 of them.
		nfsValueField("nfs.fhandle", "FileHandle", fields.FTBytes, fields.BaseNone, valBytes, nfs.KeyFH),
		nfsValueField("nfs.fh.length", "length", fields.FTUint32, fields.BaseDec, valU, nfs.KeyFH),
		nfsValueField("nfs.fh.hash", "hash (CRC-32)", fields.FTUint32, fields.BaseHex, func(u *rpcrdma.ULBInfo, v rpcrdma.ULBValue) fields.Value {
			return fields.Value{U: uint64(nfs.FHHash(u.ValueBytes(v)))}
		}, nfs.KeyFH),
		// Names: NFSv3 diropargs3 (LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD,
		// REMOVE, RMDIR, RENAME, LINK) and NFSv4 READDIR entries.
		nfsValueField("nfs.name", "Name", fields.FTString, fields.BaseNone, valString, nfs.KeyName3, nfs.KeyEntryName4),
		nfsValueField("nfs.readdir.entry3.name", "Name", fields.FTString, fields.BaseNone, valString, nfs.KeyReaddirName3),
		nfsValueField("nfs.readdirplus.entry.name", "Name", fields.FTString, fields.BaseNone, valString, nfs.KeyReaddirplusName3),
		nfsValueField("nfs.pathname.component", "Name", fields.FTString, fields.BaseNone, valString, nfs.KeyComponent4),
		// NFSv3 READ, WRITE, COMMIT (RFC 1813 sections 3.3.6, 3.3.7, 3.3.21).
		nfsValueField("nfs.offset3", "offset", fields.FTUint64, fields.BaseDec, valU, nfs.KeyOffset3),
		nfsValueField("nfs.count3", "count", fields.FTUint32, fields.BaseDec, valU, nfs.KeyCount3),
		nfsValueField("nfs.write.stable", "Stable", fields.FTUint32, fields.BaseDec, valStable, nfs.KeyStable3),
		nfsValueField("nfs.write.committed", "Committed", fields.FTUint32, fields.BaseDec, valStable, nfs.KeyCommitted3),
		nfsValueField("nfs.read.eof", "EOF", fields.FTBoolean, fields.BaseNone, valU, nfs.KeyEOF3),
		// NFSv3 attributes (RFC 1813 section 2.6).
		nfsValueField("nfs.fattr3.size", "size", fields.FTUint64, fields.BaseDec, valU, nfs.KeyFattr3Size),
		nfsValueField("nfs.fattr3.fileid", "fileid", fields.FTUint64, fields.BaseDec, valU, nfs.KeyFattr3Fileid),
		nfsValueField("nfs.wcc_attr.size", "size", fields.FTUint64, fields.BaseDec, valU, nfs.KeyWccSize),
		nfsValueField("nfs.atime", "atime", fields.FTString, fields.BaseNone, valTime, nfs.KeyAtime3),
		nfsValueField("nfs.atime.sec", "seconds", fields.FTUint32, fields.BaseDec, valU, nfs.KeyAtime3),
		nfsValueField("nfs.atime.nsec", "nano seconds", fields.FTUint32, fields.BaseDec, valV, nfs.KeyAtime3),
		nfsValueField("nfs.mtime", "mtime", fields.FTString, fields.BaseNone, valTime, nfs.KeyMtime3),
		nfsValueField("nfs.mtime.sec", "seconds", fields.FTUint32, fields.BaseDec, valU, nfs.KeyMtime3),
		nfsValueField("nfs.mtime.nsec", "nano seconds", fields.FTUint32, fields.BaseDec, valV, nfs.KeyMtime3),
		nfsValueField("nfs.ctime", "ctime", fields.FTString, fields.BaseNone, valTime, nfs.KeyCtime3),
		nfsValueField("nfs.ctime.sec", "seconds", fields.FTUint32, fields.BaseDec, valU, nfs.KeyCtime3),
		nfsValueField("nfs.ctime.nsec", "nano seconds", fields.FTUint32, fields.BaseDec, valV, nfs.KeyCtime3),
		// NFSv4 READ, WRITE, COMMIT (RFC 8881 sections 18.22, 18.32, 18.3).
		nfsValueField("nfs.offset4", "offset", fields.FTUint64, fields.BaseDec, valU, nfs.KeyOffset4),
		nfsValueField("nfs.count4", "count", fields.FTUint32, fields.BaseDec, valU, nfs.KeyCount4),
		nfsValueField("nfs.stable_how4", "stable_how4", fields.FTUint32, fields.BaseDec, valStable, nfs.KeyStableHow4),
		nfsValueField("nfs.eof", "eof", fields.FTUint32, fields.BaseDec, valU, nfs.KeyEOF4),
		nfsItemLength("nfs.read.data_length", "Read length", nfs.ItemNFS4ReadData),
		nfsItemLength("nfs.write.data_length", "Write length", nfs.ItemNFS4WriteData),
		// NFSv4 state (RFC 8881 sections 8.2, 2.10.6): stateid4 with
		// tshark's CRC-16 of it and CRC-32 of its other part.
		nfsValueField("nfs.stateid", "StateID", fields.FTBytes, fields.BaseNone, valBytes, nfs.KeyStateid4),
		nfsValueField("nfs.stateid.hash", "StateID Hash", fields.FTUint16, fields.BaseHex, stateid(func(b []byte) fields.Value {
			return fields.Value{U: uint64(nfs.StateidHash(b))}
		}), nfs.KeyStateid4),
		nfsValueField("nfs.stateid.seqid", "StateID seqid", fields.FTUint32, fields.BaseDec, stateid(func(b []byte) fields.Value {
			return fields.Value{U: uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])}
		}), nfs.KeyStateid4),
		nfsValueField("nfs.stateid.other", "StateID Other", fields.FTBytes, fields.BaseNone, stateid(func(b []byte) fields.Value {
			return fields.Value{B: b[4:]}
		}), nfs.KeyStateid4),
		nfsValueField("nfs.stateid.other_hash", "StateID Other hash", fields.FTUint32, fields.BaseHex, stateid(func(b []byte) fields.Value {
			return fields.Value{U: uint64(nfs.FHHash(b[4:]))}
		}), nfs.KeyStateid4),
		nfsValueField("nfs.seqid", "seqid", fields.FTUint32, fields.BaseHex, valU, nfs.KeySeqid4),
		nfsValueField("nfs.session_id4", "sessionid", fields.FTBytes, fields.BaseNone, valBytes, nfs.KeySessionID4),
		nfsValueField("nfs.slotid", "slot id", fields.FTUint32, fields.BaseDec, valU, nfs.KeySlotID4),
		nfsValueField("nfs.high_slotid", "high slot id", fields.FTUint32, fields.BaseDec, valU, nfs.KeyHighSlotID4),
		nfsValueField("nfs.target_high_slotid", "target high slot id", fields.FTUint32, fields.BaseDec, valU, nfs.KeyTargetHighSlotID4),
		nfsValueField("nfs.clientid", "clientid", fields.FTUint64, fields.BaseHex, valU, nfs.KeyClientID4),
		// NFSv4 attributes (RFC 8881 section 5.8).
		nfsValueField("nfs.fattr4.size", "size", fields.FTUint64, fields.BaseDec, valU, nfs.KeyFattr4Size),
		nfsValueField("nfs.fattr4.fileid", "fileid", fields.FTUint64, fields.BaseDec, valU, nfs.KeyFattr4Fileid),
		nfsValueField("nfs.fattr4.space_used", "space_used", fields.FTUint64, fields.BaseDec, valU, nfs.KeyFattr4SpaceUsed),
		nfsValueField("nfs.nfstime4.seconds", "seconds", fields.FTUint64, fields.BaseDec, valU, nfs.KeyNfstime4),
		nfsValueField("nfs.nfstime4.nseconds", "nseconds", fields.FTUint32, fields.BaseDec, valV, nfs.KeyNfstime4),
	)
}

// valueFieldNames are the names of nfsMoreTable's fields: those that show
// the NFS decoder's values (RPCRecord.ULP.Values), and the two of items'
// lengths, which need none but are few.
var valueFieldNames = sync.OnceValue(func() []string {
	set := fields.NewFieldSet(func() *fields.Table {
		t := new(fields.Table)
		nfsMoreTable(t)
		return t
	})
	var names []string
	for _, f := range set.All() {
		names = append(names, f.Name)
	}
	return names
})

// readsValues tells whether a caller that reads the fields wanted names
// (dissect.Env.Fields; nil: none) reads one that shows the NFS values: the
// engine then asks the binding for them (Engine.setWant).
func readsValues(wanted func(name string) bool) bool {
	if wanted == nil {
		return false
	}
	for _, n := range valueFieldNames() {
		if wanted(n) {
			return true
		}
	}
	return false
}

var (
	opCodesOnce sync.Once
	opCodes     map[string]uint32
)

// MainOperation names the first of an NFSv4 COMPOUND's most significant
// operations, given their names ("SEQUENCE", "PUTFH", "READ"): the first
// value tshark 4.0 shows as nfs.main_opcode (nfs4OpTier). "" when there
// are none.
func MainOperation(names []string) string {
	opCodesOnce.Do(func() {
		opCodes = map[string]uint32{}
		for c := uint32(0); c < 100; c++ {
			if nfs.Opnum4(c).Known() {
				opCodes[nfs.Opnum4(c).String()] = c
			}
		}
		opCodes[nfs.OP_ILLEGAL.String()] = uint32(nfs.OP_ILLEGAL)
	})
	best, main := 6, ""
	for _, n := range names {
		c, ok := opCodes[n]
		if !ok {
			continue
		}
		if t := nfs4OpTier(c); t < best {
			best, main = t, n
		}
	}
	return main
}
