package diff

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/srp"
)

// ulpSRP is the SRP plug-in's name (ulp/srp, which diff may not import).
const ulpSRP = "srp"

// srpPD decodes SRP's login from one side's set-up private data (cons,
// the consumer's): the client's SRP_LOGIN_REQ — the IU itself in an
// InfiniBand CM REQ, Linux's RDMA/CM layout (struct srp_login_req_rdma)
// in an RDMA/CM REQ or MPA Request — and the server's SRP_LOGIN_RSP, or
// its SRP_LOGIN_REJ when the set-up was refused (an MPA reject; a CM
// REJ's is srpReject's). Names as the rdmashark.srp.login.* fields. The
// tag and the port identifiers are left out: identities, like addresses,
// not negotiation.
func srpPD(neg func(string, any), side string, d int, conn *dissect.Connection, cons []byte) {
	if d == 0 {
		var l srp.LoginRequest
		var err error
		if conn.Transport == dissect.TransportIWARP || pvtdata.ServiceID(conn.ServiceID).IsIP() {
			err = l.DecodeRDMACM(cons)
		} else {
			err = l.DecodeFromBytes(cons)
		}
		if err != nil {
			neg(side+".srp", err.Error())
			return
		}
		neg(side+".srp.req_it_iu_len", l.RequestedMaxITIULength)
		neg(side+".srp.req_buf_fmt", l.RequiredBufferFormats.String())
		neg(side+".srp.req_flags", fmt.Sprintf("0x%02x (%s)", uint8(l.Flags), l.Flags))
		neg(side+".srp.imm_data_offset", l.ImmediateDataOffset)
		return
	}
	if conn.State == dissect.StateRejected {
		srpReject(neg, side, cons)
		return
	}
	var r srp.LoginResponse
	if err := r.DecodeFromBytes(cons); err != nil || r.Opcode != srp.OpLoginRsp {
		neg(side+".srp", "not an SRP_LOGIN_RSP")
		return
	}
	neg(side+".srp.req_lim_delta", r.RequestLimitDelta)
	neg(side+".srp.max_it_iu_len", r.MaxITIULength)
	neg(side+".srp.max_ti_iu_len", r.MaxTIIULength)
	neg(side+".srp.sup_buf_fmt", r.SupportedBufferFormats.String())
	neg(side+".srp.rsp_flags", fmt.Sprintf("0x%02x (%s)", uint8(r.Flags), r.Flags))
}

// srpReject decodes an SRP_LOGIN_REJ (SRP-2): its REASON and SUPPORTED
// BUFFER FORMATS.
func srpReject(neg func(string, any), side string, b []byte) {
	var j srp.LoginReject
	if j.DecodeFromBytes(b) != nil || j.Opcode != srp.OpLoginRej {
		neg(side+".srp.login_rej", "none")
		return
	}
	neg(side+".srp.login_rej.reason", fmt.Sprintf("0x%08x (%s)", uint32(j.Reason), j.Reason))
	neg(side+".srp.login_rej.sup_buf_fmt", j.SupportedBufferFormats.String())
}
