package oncrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Reason says why an RPC header did not decode; Reason values are errors, so
// errors.Is(err, oncrpc.ErrTruncated) works.
type Reason uint8

const (
	ErrTruncated       Reason = iota + 1 // the message ends before a required field
	ErrBadMsgType                        // msg_type neither CALL nor REPLY
	ErrBadReplyStat                      // reply_stat neither MSG_ACCEPTED nor MSG_DENIED
	ErrBadRejectStat                     // reject_stat neither RPC_MISMATCH nor AUTH_ERROR
	ErrAuthTooLong                       // opaque_auth body longer than 400 bytes (RFC 5531 section 8.2)
	ErrBadAuthSys                        // AUTH_SYS body is not an authsys_parms filling it exactly
	ErrMachineNameLong                   // machinename longer than 255 bytes (RFC 5531 appendix A)
	ErrTooManyGIDs                       // more than 16 gids (RFC 5531 appendix A)
	ErrBadGSSCred                        // RPCSEC_GSS credential body is not an rpc_gss_cred_t filling it exactly
	ErrBadGSSVersion                     // RPCSEC_GSS credential version other than 1 or 2
)

var reasonNames = [...]string{
	ErrTruncated:       "truncated",
	ErrBadMsgType:      "bad msg_type",
	ErrBadReplyStat:    "bad reply_stat",
	ErrBadRejectStat:   "bad reject_stat",
	ErrAuthTooLong:     "opaque_auth body longer than 400 bytes",
	ErrBadAuthSys:      "malformed AUTH_SYS credential",
	ErrMachineNameLong: "AUTH_SYS machinename longer than 255 bytes",
	ErrTooManyGIDs:     "AUTH_SYS with more than 16 gids",
	ErrBadGSSCred:      "malformed RPCSEC_GSS credential",
	ErrBadGSSVersion:   "unknown RPCSEC_GSS version",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

func (r Reason) Error() string { return "oncrpc: " + r.String() }

// DecodeError describes an RPC header that does not parse.
type DecodeError struct {
	Field  string // the XDR field being decoded, as RFC 5531 names it (e.g. "cred.body")
	Offset int    // byte offset from the start of the RPC message
	Reason Reason
	Value  uint32 // the offending value, when there is one
	Need   int    // bytes needed (ErrTruncated)
	Have   int    // bytes left at Offset
}

func (e *DecodeError) Error() string {
	s := fmt.Sprintf("oncrpc: %s at offset %d: %s", e.Field, e.Offset, e.Reason)
	switch e.Reason {
	case ErrTruncated:
		s += fmt.Sprintf(" (need %d bytes, have %d)", e.Need, e.Have)
	case ErrBadMsgType, ErrBadReplyStat, ErrBadRejectStat, ErrAuthTooLong, ErrMachineNameLong, ErrTooManyGIDs, ErrBadGSSVersion:
		s += fmt.Sprintf(" (value %d)", e.Value)
	}
	return s
}

// Unwrap returns the Reason.
func (e *DecodeError) Unwrap() error { return e.Reason }

// OpaqueAuth is opaque_auth (RFC 5531 section 8.2): a flavor and its body,
// which points into the decoded input.
type OpaqueAuth struct {
	Flavor AuthFlavor
	Body   []byte
}

// AuthSys is authsys_parms, the AUTH_SYS credential body (RFC 5531 appendix A).
type AuthSys struct {
	Stamp       uint32
	MachineName []byte // string machinename<255>, pointing into the input
	UID         uint32
	GID         uint32
	GIDs        []uint32 // gids<16>
}

// AppendBinary appends the authsys_parms XDR encoding (a credential body).
func (a *AuthSys) AppendBinary(b []byte) ([]byte, error) {
	if len(a.MachineName) > 255 || len(a.GIDs) > 16 {
		return b, errors.New("oncrpc: AUTH_SYS machinename over 255 bytes or over 16 gids")
	}
	b = binary.BigEndian.AppendUint32(b, a.Stamp)
	b = appendOpaque(b, a.MachineName)
	b = binary.BigEndian.AppendUint32(b, a.UID)
	b = binary.BigEndian.AppendUint32(b, a.GID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(a.GIDs)))
	for _, g := range a.GIDs {
		b = binary.BigEndian.AppendUint32(b, g)
	}
	return b, nil
}

// GSSCred is the RPCSEC_GSS credential body, rpc_gss_cred_t (RFC 2203
// section 5; version 2 of RFC 5403 has the same layout).
type GSSCred struct {
	Version uint32     // RPCSEC_GSS_VERS_1 or _2
	Proc    GSSProc    // gss_proc
	Seq     uint32     // seq_num
	Service GSSService // service
	Handle  []byte     // opaque handle<>, the context handle, pointing into the input
}

// AppendBinary appends the rpc_gss_cred_t XDR encoding (a credential body).
func (g *GSSCred) AppendBinary(b []byte) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, g.Version)
	b = binary.BigEndian.AppendUint32(b, uint32(g.Proc))
	b = binary.BigEndian.AppendUint32(b, g.Seq)
	b = binary.BigEndian.AppendUint32(b, uint32(g.Service))
	return appendOpaque(b, g.Handle), nil
}

// Header is an ONC RPC message header (RFC 5531 section 9, struct rpc_msg):
// the call_body or the reply_body up to the procedure's arguments or results.
// Reuse one Header across messages.
type Header struct {
	XID     uint32
	MsgType MsgType // mtype

	// CALL (call_body).
	RPCVers uint32  // rpcvers: 2 (not enforced: a checker can flag others)
	Prog    Program // prog
	Vers    uint32  // vers: program version
	Proc    uint32  // proc
	Cred    OpaqueAuth
	// Verf is the call's verifier, or the accepted reply's verifier.
	Verf OpaqueAuth
	// AuthSys is decoded when Cred.Flavor is AUTH_SYS; GSS when it is RPCSEC_GSS.
	AuthSys AuthSys
	GSS     GSSCred

	// REPLY (reply_body).
	ReplyStat  ReplyStat  // stat
	AcceptStat AcceptStat // accepted_reply reply_data stat (MSG_ACCEPTED)
	RejectStat RejectStat // rejected_reply stat (MSG_DENIED)
	AuthStat   AuthStat   // rejected_reply AUTH_ERROR stat
	// MismatchLow/High: the supported range in PROG_MISMATCH (program versions)
	// and RPC_MISMATCH (RPC versions).
	MismatchLow  uint32
	MismatchHigh uint32

	// HeaderLen is the header's length: for a call, and for an accepted reply
	// with SUCCESS, the offset where the procedure's arguments or results start.
	HeaderLen int

	gids     [16]uint32
	contents []byte
	payload  []byte
}

// Contents returns the header bytes; Payload the bytes after them (the
// procedure's arguments or results).
func (h *Header) Contents() []byte { return h.contents }
func (h *Header) Payload() []byte  { return h.payload }

// HasBody tells whether arguments or results follow the header: always for a
// call, and for an accepted reply with SUCCESS.
func (h *Header) HasBody() bool {
	return h.MsgType == Call || (h.MsgType == Reply && h.ReplyStat == MsgAccepted && h.AcceptStat == Success)
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) fail(field string, reason Reason, value uint32, need int) *DecodeError {
	return &DecodeError{Field: field, Offset: r.off, Reason: reason, Value: value, Need: need, Have: len(r.b) - r.off}
}

func (r *reader) u32(field string) (uint32, error) {
	if len(r.b)-r.off < 4 {
		return 0, r.fail(field, ErrTruncated, 0, 4)
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

// opaque reads a variable-length opaque (RFC 4506 section 4.10) of at most max bytes.
func (r *reader) opaque(field string, max uint32, tooLong Reason) ([]byte, error) {
	n, err := r.u32(field)
	if err != nil {
		return nil, err
	}
	if n > max {
		r.off -= 4
		return nil, r.fail(field, tooLong, n, 0)
	}
	padded := int((n + 3) &^ 3)
	if len(r.b)-r.off < padded {
		return nil, r.fail(field, ErrTruncated, 0, padded)
	}
	v := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += padded
	return v, nil
}

// auth reads an opaque_auth; the field names are passed whole so that no
// string is built on the hot path.
func (r *reader) auth(flavorField, bodyField string) (OpaqueAuth, error) {
	f, err := r.u32(flavorField)
	if err != nil {
		return OpaqueAuth{}, err
	}
	body, err := r.opaque(bodyField, MaxAuthBytes, ErrAuthTooLong)
	return OpaqueAuth{Flavor: AuthFlavor(f), Body: body}, err
}

func (h *Header) reset() {
	*h = Header{gids: h.gids}
}

// DecodeFromBytes decodes the RPC header at the start of data. It returns a
// *DecodeError when data is not a valid header; fields decoded before the
// error stay set.
func (h *Header) DecodeFromBytes(data []byte) error {
	h.reset()
	r := reader{b: data}
	var err error
	if h.XID, err = r.u32("xid"); err != nil {
		return err
	}
	mt, err := r.u32("mtype")
	if err != nil {
		return err
	}
	h.MsgType = MsgType(mt)
	switch h.MsgType {
	case Call:
		err = h.decodeCall(&r)
	case Reply:
		err = h.decodeReply(&r)
	default:
		r.off -= 4
		return r.fail("mtype", ErrBadMsgType, mt, 0)
	}
	if err != nil {
		return err
	}
	h.HeaderLen = r.off
	h.contents, h.payload = data[:r.off], data[r.off:]
	return nil
}

func (h *Header) decodeCall(r *reader) error {
	var err error
	if h.RPCVers, err = r.u32("cbody.rpcvers"); err != nil {
		return err
	}
	p, err := r.u32("cbody.prog")
	if err != nil {
		return err
	}
	h.Prog = Program(p)
	if h.Vers, err = r.u32("cbody.vers"); err != nil {
		return err
	}
	if h.Proc, err = r.u32("cbody.proc"); err != nil {
		return err
	}
	credOff := r.off + 8
	if h.Cred, err = r.auth("cbody.cred.flavor", "cbody.cred.body"); err != nil {
		return err
	}
	switch h.Cred.Flavor {
	case AuthSysFlav:
		if err = h.decodeAuthSys(h.Cred.Body, credOff); err != nil {
			return err
		}
	case RPCSecGSS:
		if err = h.decodeGSS(h.Cred.Body, credOff); err != nil {
			return err
		}
	}
	h.Verf, err = r.auth("cbody.verf.flavor", "cbody.verf.body")
	return err
}

// decodeAuthSys decodes authsys_parms from a credential body; base is the
// body's offset in the message, for error offsets.
func (h *Header) decodeAuthSys(body []byte, base int) error {
	r := reader{b: body}
	wrap := func(err error) error {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Offset += base
			if de.Reason == ErrTruncated {
				de.Reason = ErrBadAuthSys
			}
		}
		return err
	}
	a := &h.AuthSys
	var err error
	if a.Stamp, err = r.u32("cred.authsys.stamp"); err != nil {
		return wrap(err)
	}
	if a.MachineName, err = r.opaque("cred.authsys.machinename", 255, ErrMachineNameLong); err != nil {
		return wrap(err)
	}
	if a.UID, err = r.u32("cred.authsys.uid"); err != nil {
		return wrap(err)
	}
	if a.GID, err = r.u32("cred.authsys.gid"); err != nil {
		return wrap(err)
	}
	n, err := r.u32("cred.authsys.gids")
	if err != nil {
		return wrap(err)
	}
	if n > 16 {
		r.off -= 4
		return wrap(r.fail("cred.authsys.gids", ErrTooManyGIDs, n, 0))
	}
	if len(body)-r.off != int(n)*4 {
		return wrap(r.fail("cred.authsys.gids", ErrBadAuthSys, n, int(n)*4))
	}
	for i := range int(n) {
		h.gids[i] = binary.BigEndian.Uint32(body[r.off+4*i:])
	}
	a.GIDs = h.gids[:n:n]
	return nil
}

// decodeGSS decodes rpc_gss_cred_t from a credential body.
func (h *Header) decodeGSS(body []byte, base int) error {
	r := reader{b: body}
	wrap := func(err error) error {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Offset += base
			if de.Reason == ErrTruncated {
				de.Reason = ErrBadGSSCred
			}
		}
		return err
	}
	g := &h.GSS
	var err error
	if g.Version, err = r.u32("cred.gss.version"); err != nil {
		return wrap(err)
	}
	if g.Version != GSSVers1 && g.Version != GSSVers2 {
		r.off -= 4
		return wrap(r.fail("cred.gss.version", ErrBadGSSVersion, g.Version, 0))
	}
	v, err := r.u32("cred.gss.gss_proc")
	if err != nil {
		return wrap(err)
	}
	g.Proc = GSSProc(v)
	if g.Seq, err = r.u32("cred.gss.seq_num"); err != nil {
		return wrap(err)
	}
	if v, err = r.u32("cred.gss.service"); err != nil {
		return wrap(err)
	}
	g.Service = GSSService(v)
	if g.Handle, err = r.opaque("cred.gss.handle", MaxAuthBytes, ErrBadGSSCred); err != nil {
		return wrap(err)
	}
	if r.off != len(body) {
		return wrap(r.fail("cred.gss", ErrBadGSSCred, 0, 0))
	}
	return nil
}

func (h *Header) decodeReply(r *reader) error {
	v, err := r.u32("rbody.stat")
	if err != nil {
		return err
	}
	h.ReplyStat = ReplyStat(v)
	switch h.ReplyStat {
	case MsgAccepted:
		if h.Verf, err = r.auth("areply.verf.flavor", "areply.verf.body"); err != nil {
			return err
		}
		if v, err = r.u32("areply.stat"); err != nil {
			return err
		}
		h.AcceptStat = AcceptStat(v)
		if h.AcceptStat == ProgMismatch {
			return h.mismatch(r, "areply.mismatch_info.low", "areply.mismatch_info.high")
		}
		return nil // SUCCESS: results follow; others: void
	case MsgDenied:
		if v, err = r.u32("rreply.stat"); err != nil {
			return err
		}
		h.RejectStat = RejectStat(v)
		switch h.RejectStat {
		case RPCMismatch:
			return h.mismatch(r, "rreply.mismatch_info.low", "rreply.mismatch_info.high")
		case AuthError:
			if v, err = r.u32("rreply.auth_stat"); err != nil {
				return err
			}
			h.AuthStat = AuthStat(v)
			return nil
		}
		r.off -= 4
		return r.fail("rreply.stat", ErrBadRejectStat, v, 0)
	}
	r.off -= 4
	return r.fail("rbody.stat", ErrBadReplyStat, v, 0)
}

func (h *Header) mismatch(r *reader, lowField, highField string) error {
	var err error
	if h.MismatchLow, err = r.u32(lowField); err != nil {
		return err
	}
	h.MismatchHigh, err = r.u32(highField)
	return err
}

func appendOpaque(b, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	for i := len(data); i%4 != 0; i++ {
		b = append(b, 0)
	}
	return b
}

func appendAuth(b []byte, a OpaqueAuth) ([]byte, error) {
	if len(a.Body) > MaxAuthBytes {
		return b, errors.New("oncrpc: opaque_auth body over 400 bytes")
	}
	b = binary.BigEndian.AppendUint32(b, uint32(a.Flavor))
	return appendOpaque(b, a.Body), nil
}

// AppendBinary appends the header's XDR encoding to b (encoding.BinaryAppender).
// Cred.Body is written as set: build it with AuthSys.AppendBinary or
// GSSCred.AppendBinary. Arguments and results are not included.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, h.XID)
	b = binary.BigEndian.AppendUint32(b, uint32(h.MsgType))
	var err error
	switch h.MsgType {
	case Call:
		b = binary.BigEndian.AppendUint32(b, h.RPCVers)
		b = binary.BigEndian.AppendUint32(b, uint32(h.Prog))
		b = binary.BigEndian.AppendUint32(b, h.Vers)
		b = binary.BigEndian.AppendUint32(b, h.Proc)
		if b, err = appendAuth(b, h.Cred); err != nil {
			return b, err
		}
		return appendAuth(b, h.Verf)
	case Reply:
		b = binary.BigEndian.AppendUint32(b, uint32(h.ReplyStat))
		switch h.ReplyStat {
		case MsgAccepted:
			if b, err = appendAuth(b, h.Verf); err != nil {
				return b, err
			}
			b = binary.BigEndian.AppendUint32(b, uint32(h.AcceptStat))
			if h.AcceptStat == ProgMismatch {
				b = binary.BigEndian.AppendUint32(b, h.MismatchLow)
				b = binary.BigEndian.AppendUint32(b, h.MismatchHigh)
			}
			return b, nil
		case MsgDenied:
			b = binary.BigEndian.AppendUint32(b, uint32(h.RejectStat))
			switch h.RejectStat {
			case RPCMismatch:
				b = binary.BigEndian.AppendUint32(b, h.MismatchLow)
				return binary.BigEndian.AppendUint32(b, h.MismatchHigh), nil
			case AuthError:
				return binary.BigEndian.AppendUint32(b, uint32(h.AuthStat)), nil
			}
			return b, errors.New("oncrpc: cannot encode reject_stat " + h.RejectStat.String())
		}
		return b, errors.New("oncrpc: cannot encode reply_stat " + h.ReplyStat.String())
	}
	return b, errors.New("oncrpc: cannot encode msg_type " + h.MsgType.String())
}

// MarshalBinary returns the header's XDR encoding (encoding.BinaryMarshaler).
func (h *Header) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }
