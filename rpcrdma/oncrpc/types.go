// Package oncrpc decodes and encodes ONC RPC version 2 message headers
// (RFC 5531): the call header with its credential and verifier, and the reply
// header with its accepted or denied status, up to the offset where the
// procedure's arguments or results start.
//
// Decoding allocates nothing: a Header is reused across messages and its
// opaque and string fields are byte slices into the input, valid until the
// next decode into the same Header and while the input is unchanged. AUTH_SYS
// credentials (RFC 5531 appendix A) and RPCSEC_GSS credential headers
// (RFC 2203 section 5, RFC 5403) are decoded; other flavors are kept opaque.
package oncrpc

import "strconv"

// RPCVersion is the only RPC protocol version RFC 5531 defines (rpcvers).
const RPCVersion = 2

// MaxAuthBytes is the largest opaque_auth body (RFC 5531 section 8.2: body<400>).
const MaxAuthBytes = 400

// MsgType is msg_type (RFC 5531 section 9).
type MsgType uint32

const (
	Call  MsgType = 0 // CALL
	Reply MsgType = 1 // REPLY
)

func (t MsgType) String() string {
	switch t {
	case Call:
		return "CALL"
	case Reply:
		return "REPLY"
	}
	return "MSG_TYPE(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// ReplyStat is reply_stat (RFC 5531 section 9).
type ReplyStat uint32

const (
	MsgAccepted ReplyStat = 0 // MSG_ACCEPTED
	MsgDenied   ReplyStat = 1 // MSG_DENIED
)

func (s ReplyStat) String() string {
	switch s {
	case MsgAccepted:
		return "MSG_ACCEPTED"
	case MsgDenied:
		return "MSG_DENIED"
	}
	return "REPLY_STAT(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// AcceptStat is accept_stat (RFC 5531 section 9).
type AcceptStat uint32

const (
	Success      AcceptStat = 0 // SUCCESS: RPC executed successfully
	ProgUnavail  AcceptStat = 1 // PROG_UNAVAIL: remote hasn't exported the program
	ProgMismatch AcceptStat = 2 // PROG_MISMATCH: remote can't support the version; carries low/high
	ProcUnavail  AcceptStat = 3 // PROC_UNAVAIL: program can't support the procedure
	GarbageArgs  AcceptStat = 4 // GARBAGE_ARGS: procedure can't decode the params
	SystemErr    AcceptStat = 5 // SYSTEM_ERR: e.g. memory allocation failure
)

var acceptNames = [...]string{"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"}

func (s AcceptStat) String() string {
	if int(s) < len(acceptNames) {
		return acceptNames[s]
	}
	return "ACCEPT_STAT(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// RejectStat is reject_stat (RFC 5531 section 9).
type RejectStat uint32

const (
	RPCMismatch RejectStat = 0 // RPC_MISMATCH: rpcvers != 2; carries low/high
	AuthError   RejectStat = 1 // AUTH_ERROR: carries auth_stat
)

func (s RejectStat) String() string {
	switch s {
	case RPCMismatch:
		return "RPC_MISMATCH"
	case AuthError:
		return "AUTH_ERROR"
	}
	return "REJECT_STAT(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// AuthStat is auth_stat (RFC 5531 section 9; 13 and 14 from RFC 2203 section 5.3.3.3).
type AuthStat uint32

const (
	AuthOK               AuthStat = 0
	AuthBadCred          AuthStat = 1
	AuthRejectedCred     AuthStat = 2
	AuthBadVerf          AuthStat = 3
	AuthRejectedVerf     AuthStat = 4
	AuthTooWeak          AuthStat = 5
	AuthInvalidResp      AuthStat = 6
	AuthFailed           AuthStat = 7
	AuthKerbGeneric      AuthStat = 8
	AuthTimeExpire       AuthStat = 9
	AuthTktFile          AuthStat = 10
	AuthDecode           AuthStat = 11
	AuthNetAddr          AuthStat = 12
	RPCSecGSSCredProblem AuthStat = 13
	RPCSecGSSCtxProblem  AuthStat = 14
)

var authStatNames = [...]string{
	"AUTH_OK", "AUTH_BADCRED", "AUTH_REJECTEDCRED", "AUTH_BADVERF", "AUTH_REJECTEDVERF",
	"AUTH_TOOWEAK", "AUTH_INVALIDRESP", "AUTH_FAILED", "AUTH_KERB_GENERIC", "AUTH_TIMEEXPIRE",
	"AUTH_TKT_FILE", "AUTH_DECODE", "AUTH_NET_ADDR", "RPCSEC_GSS_CREDPROBLEM", "RPCSEC_GSS_CTXPROBLEM",
}

func (s AuthStat) String() string {
	if int(s) < len(authStatNames) {
		return authStatNames[s]
	}
	return "AUTH_STAT(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// AuthFlavor is auth_flavor (RFC 5531 sections 8.2 and 13.1).
type AuthFlavor uint32

const (
	AuthNone    AuthFlavor = 0 // AUTH_NONE (AUTH_NULL)
	AuthSysFlav AuthFlavor = 1 // AUTH_SYS (AUTH_UNIX)
	AuthShort   AuthFlavor = 2 // AUTH_SHORT
	AuthDH      AuthFlavor = 3 // AUTH_DH
	AuthKerb    AuthFlavor = 4 // AUTH_KERB (RFC 5531 section 13.1)
	AuthRSA     AuthFlavor = 5 // AUTH_RSA
	RPCSecGSS   AuthFlavor = 6 // RPCSEC_GSS (RFC 2203)
	AuthTLS     AuthFlavor = 7 // AUTH_TLS (RFC 9289)
)

var flavorNames = [...]string{"AUTH_NONE", "AUTH_SYS", "AUTH_SHORT", "AUTH_DH", "AUTH_KERB", "AUTH_RSA", "RPCSEC_GSS", "AUTH_TLS"}

func (f AuthFlavor) String() string {
	if int(f) < len(flavorNames) {
		return flavorNames[f]
	}
	return "AUTH_FLAVOR(" + strconv.FormatUint(uint64(f), 10) + ")"
}

// Program is an ONC RPC program number (RFC 5531 section 13.2 and the IANA
// "RPC Program Numbers" registry).
type Program uint32

const (
	ProgPortmap     Program = 100000     // portmapper / rpcbind (RFC 1833)
	ProgNFS         Program = 100003     // NFS (RFC 1813, RFC 7530, RFC 8881)
	ProgMount       Program = 100005     // MOUNT (RFC 1813 appendix I)
	ProgNLM         Program = 100021     // Network Lock Manager
	ProgNSM         Program = 100024     // Network Status Monitor (status)
	ProgNFSACL      Program = 100227     // NFSACL (Solaris/Linux NFSv3 ACL side protocol)
	ProgNFSCallback Program = 0x40000000 // NFSv4 callback program as Linux chooses it (RFC 8881 section 18.35: client-chosen)
)

func (p Program) String() string {
	switch p {
	case ProgPortmap:
		return "PORTMAP"
	case ProgNFS:
		return "NFS"
	case ProgMount:
		return "MOUNT"
	case ProgNLM:
		return "NLM"
	case ProgNSM:
		return "NSM"
	case ProgNFSACL:
		return "NFSACL"
	case ProgNFSCallback:
		return "NFS_CB"
	}
	return strconv.FormatUint(uint64(p), 10)
}

// GSSProc is rpc_gss_proc_t (RFC 2203 section 5; BIND_CHANNEL from RFC 5403).
type GSSProc uint32

const (
	GSSData         GSSProc = 0 // RPCSEC_GSS_DATA
	GSSInit         GSSProc = 1 // RPCSEC_GSS_INIT
	GSSContinueInit GSSProc = 2 // RPCSEC_GSS_CONTINUE_INIT
	GSSDestroy      GSSProc = 3 // RPCSEC_GSS_DESTROY
	GSSBindChannel  GSSProc = 4 // RPCSEC_GSS_BIND_CHANNEL (RFC 5403, version 2 only)
)

var gssProcNames = [...]string{"RPCSEC_GSS_DATA", "RPCSEC_GSS_INIT", "RPCSEC_GSS_CONTINUE_INIT", "RPCSEC_GSS_DESTROY", "RPCSEC_GSS_BIND_CHANNEL"}

func (p GSSProc) String() string {
	if int(p) < len(gssProcNames) {
		return gssProcNames[p]
	}
	return "RPCSEC_GSS_PROC(" + strconv.FormatUint(uint64(p), 10) + ")"
}

// GSSService is rpc_gss_service_t (RFC 2203 section 5).
type GSSService uint32

const (
	GSSSvcNone      GSSService = 1 // rpc_gss_svc_none
	GSSSvcIntegrity GSSService = 2 // rpc_gss_svc_integrity
	GSSSvcPrivacy   GSSService = 3 // rpc_gss_svc_privacy
)

func (s GSSService) String() string {
	switch s {
	case GSSSvcNone:
		return "rpc_gss_svc_none"
	case GSSSvcIntegrity:
		return "rpc_gss_svc_integrity"
	case GSSSvcPrivacy:
		return "rpc_gss_svc_privacy"
	}
	return "rpc_gss_svc(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// RPCSEC_GSS credential versions (RFC 2203 section 5, RFC 5403 section 2).
const (
	GSSVers1 = 1
	GSSVers2 = 2
)
