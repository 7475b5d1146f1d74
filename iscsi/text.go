package iscsi

import "bytes"

// KeyValues is the text of a Login or Text PDU's data segment: key=value
// pairs, each ended by a NUL (RFC 7143 section 6.1). Walk it with Next;
// nothing is allocated.
type KeyValues []byte

// Next returns the first pair of kv and the rest, ok false when kv holds
// no more. A pair without '=' has an empty value (tshark marks it
// invalid); the last pair may lack its NUL. Empty pairs (padding NULs) are
// skipped.
func (kv KeyValues) Next() (key, value []byte, rest KeyValues, ok bool) {
	for len(kv) > 0 {
		var pair []byte
		if i := bytes.IndexByte(kv, 0); i >= 0 {
			pair, kv = kv[:i], kv[i+1:]
		} else {
			pair, kv = kv, nil
		}
		if len(pair) == 0 {
			continue
		}
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			return pair[:i], pair[i+1:], kv, true
		}
		return pair, nil, kv, true
	}
	return nil, nil, nil, false
}

// Pairs returns the number of pairs kv holds.
func (kv KeyValues) Pairs() int {
	n := 0
	for _, _, rest, ok := kv.Next(); ok; _, _, rest, ok = rest.Next() {
		n++
	}
	return n
}

// Lookup returns the value of key in kv (the last one when repeated).
func (kv KeyValues) Lookup(key string) (value []byte, ok bool) {
	for k, v, rest, more := kv.Next(); more; k, v, rest, more = rest.Next() {
		if string(k) == key {
			value, ok = v, true
		}
	}
	return value, ok
}

// Login keys rdmashark negotiates (RFC 7143 section 13, RFC 7145 section
// 6).
const (
	KeySessionType                    = "SessionType"
	KeyHeaderDigest                   = "HeaderDigest"
	KeyDataDigest                     = "DataDigest"
	KeyMaxRecvDataSegmentLength       = "MaxRecvDataSegmentLength"
	KeyFirstBurstLength               = "FirstBurstLength"
	KeyMaxBurstLength                 = "MaxBurstLength"
	KeyImmediateData                  = "ImmediateData"
	KeyInitialR2T                     = "InitialR2T"
	KeyRDMAExtensions                 = "RDMAExtensions"
	KeyInitiatorRecvDataSegmentLength = "InitiatorRecvDataSegmentLength"
	KeyTargetRecvDataSegmentLength    = "TargetRecvDataSegmentLength"
	KeyMaxOutstandingUnexpectedPDUs   = "MaxOutstandingUnexpectedPDUs"
	KeyTargetName                     = "TargetName"
	KeyInitiatorName                  = "InitiatorName"
)

// ParseNumber parses a numerical value (RFC 7143 section 6.1: decimal, or
// hex with 0x), ok false when it is not one or exceeds 32 bits.
func ParseNumber(v []byte) (uint32, bool) {
	if len(v) == 0 {
		return 0, false
	}
	base := uint64(10)
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		base, v = 16, v[2:]
	}
	var n uint64
	for _, c := range v {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		n = n*base + d
		if n > 0xffffffff {
			return 0, false
		}
	}
	return uint32(n), true
}

// ParseBool parses a boolean value, "Yes" or "No".
func ParseBool(v []byte) (yes, ok bool) {
	switch string(v) {
	case "Yes":
		return true, true
	case "No":
		return false, true
	}
	return false, false
}
