package smbdirect

import (
	"errors"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	smbd "github.com/rdmashark/rdmashark/smbdirect"
)

// FieldTable is SMB Direct's part of the field registry
// (fields.RegisterTable): tshark 4.0's smb_direct.* fields and the smb2.*
// fields of the SMB2 header and RDMA channel this package decodes, named,
// typed and printed as its packet-smb-direct.c and packet-smb2.c do, read
// from the Send records the session keeps per packet (dissect.Packet.ULP).
// They repeat per Send ("smb_direct" instances); the smb2.* fields of a
// compound chain repeat per SMB2 message, on the Send that completed it.
// Checked value for value against tshark on rxe-smbdirect.pcap
// (fields_test.go).
func FieldTable() *fields.Table {
	t := &fields.Table{}
	t.Group("smb_direct", "SMB-Direct (SMB RDMA Transport)")
	t.Group("smb2", "SMB2 (Server Message Block Protocol version 2)")
	t.Instances("smb_direct", sendCount)
	u := func(v uint64) fields.Value { return fields.Value{U: v} }
	req := func(name, label string, ft fields.FieldType, b fields.Base, get func(n *smbd.NegotiateRequest) uint64, resp func(n *smbd.NegotiateResponse) uint64) *fields.Field {
		return sendField("smb_direct", name, label, ft, b, func(r *Send, emit func(fields.Value)) {
			switch {
			case r.Kind == KindNegotiateRequest && get != nil:
				emit(u(get(&r.NegReq)))
			case r.Kind == KindNegotiateResponse && resp != nil:
				emit(u(resp(&r.NegResp)))
			}
		})
	}
	dt := func(name, label string, ft fields.FieldType, b fields.Base, get func(d *smbd.DataTransfer) uint64) *fields.Field {
		return sendField("smb_direct", name, label, ft, b, func(r *Send, emit func(fields.Value)) {
			if r.Kind == KindData && !errors.Is(r.Err, smbd.ErrTruncated) {
				emit(u(get(&r.Data)))
			}
		})
	}
	// The SMB2 fields, once per SMB2 message of the Send.
	s2 := func(name, label string, ft fields.FieldType, b fields.Base, get func(x *SMB2, emit func(fields.Value))) *fields.Field {
		return sendField("smb2", name, label, ft, b, func(r *Send, emit func(fields.Value)) {
			for i := range r.SMB2 {
				get(&r.SMB2[i], emit)
			}
		})
	}
	desc := func(name, label string, ft fields.FieldType, b fields.Base, get func(d smbd.BufferDescriptor) uint64) *fields.Field {
		return s2(name, label, ft, b, func(x *SMB2, emit func(fields.Value)) {
			if x.Header.Response() || x.Err != nil {
				return
			}
			if c := x.Header.Command; c == smbd.Read || c == smbd.Write {
				for i := 0; i < x.RW.ChannelInfo.Len(); i++ {
					emit(u(get(x.RW.ChannelInfo.At(i))))
				}
			}
		})
	}
	t.Register(
		req("smb_direct.version.min", "MinVersion", fields.FTUint16, fields.BaseHex,
			func(n *smbd.NegotiateRequest) uint64 { return uint64(n.MinVersion) }, func(n *smbd.NegotiateResponse) uint64 { return uint64(n.MinVersion) }),
		req("smb_direct.version.max", "MaxVersion", fields.FTUint16, fields.BaseHex,
			func(n *smbd.NegotiateRequest) uint64 { return uint64(n.MaxVersion) }, func(n *smbd.NegotiateResponse) uint64 { return uint64(n.MaxVersion) }),
		req("smb_direct.version.negotiated", "NegotiatedVersion", fields.FTUint16, fields.BaseHex,
			nil, func(n *smbd.NegotiateResponse) uint64 { return uint64(n.NegotiatedVersion) }),
		sendField("smb_direct", "smb_direct.credits.requested", "CreditsRequested", fields.FTUint16, fields.BaseDec, func(r *Send, emit func(fields.Value)) {
			switch r.Kind {
			case KindNegotiateRequest:
				emit(u(uint64(r.NegReq.CreditsRequested)))
			case KindNegotiateResponse:
				emit(u(uint64(r.NegResp.CreditsRequested)))
			case KindData:
				if r.Length >= smbd.DataTransferHeaderLen {
					emit(u(uint64(r.Data.CreditsRequested)))
				}
			}
		}),
		sendField("smb_direct", "smb_direct.credits.granted", "CreditsGranted", fields.FTUint16, fields.BaseDec, func(r *Send, emit func(fields.Value)) {
			switch r.Kind {
			case KindNegotiateResponse:
				emit(u(uint64(r.NegResp.CreditsGranted)))
			case KindData:
				if r.Length >= smbd.DataTransferHeaderLen {
					emit(u(uint64(r.Data.CreditsGranted)))
				}
			}
		}),
		req("smb_direct.status", "Status", fields.FTUint32, fields.BaseHex, nil, func(n *smbd.NegotiateResponse) uint64 { return uint64(n.Status) }),
		req("smb_direct.max_read_write_size", "MaxReadWriteSize", fields.FTUint32, fields.BaseDec,
			nil, func(n *smbd.NegotiateResponse) uint64 { return uint64(n.MaxReadWriteSize) }),
		req("smb_direct.preferred_send_size", "PreferredSendSize", fields.FTUint32, fields.BaseDec,
			func(n *smbd.NegotiateRequest) uint64 { return uint64(n.PreferredSendSize) },
			func(n *smbd.NegotiateResponse) uint64 { return uint64(n.PreferredSendSize) }),
		req("smb_direct.max_receive_size", "MaxReceiveSize", fields.FTUint32, fields.BaseDec,
			func(n *smbd.NegotiateRequest) uint64 { return uint64(n.MaxReceiveSize) },
			func(n *smbd.NegotiateResponse) uint64 { return uint64(n.MaxReceiveSize) }),
		req("smb_direct.max_fragmented_size", "MaxFragmentedSize", fields.FTUint32, fields.BaseDec,
			func(n *smbd.NegotiateRequest) uint64 { return uint64(n.MaxFragmentedSize) },
			func(n *smbd.NegotiateResponse) uint64 { return uint64(n.MaxFragmentedSize) }),
		dt("smb_direct.flags", "Flags", fields.FTUint16, fields.BaseHex, func(d *smbd.DataTransfer) uint64 { return uint64(d.Flags) }),
		dt("smb_direct.flags.response_requested", "ResponseRequested", fields.FTBoolean, fields.BaseNone,
			func(d *smbd.DataTransfer) uint64 { return uint64(d.Flags & smbd.FlagResponseRequested) }),
		dt("smb_direct.remaining_length", "RemainingLength", fields.FTUint32, fields.BaseDec,
			func(d *smbd.DataTransfer) uint64 { return uint64(d.RemainingDataLength) }),
		dt("smb_direct.data_offset", "DataOffset", fields.FTUint32, fields.BaseDec, func(d *smbd.DataTransfer) uint64 { return uint64(d.DataOffset) }),
		dt("smb_direct.data_length", "DataLength", fields.FTUint32, fields.BaseDec, func(d *smbd.DataTransfer) uint64 { return uint64(d.DataLength) }),
		s2("smb2.cmd", "Command", fields.FTUint16, fields.BaseDec, func(x *SMB2, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(x.Header.Command), Text: x.Header.Command.String()})
		}),
		s2("smb2.credit.charge", "Credit Charge", fields.FTUint16, fields.BaseDec, func(x *SMB2, emit func(fields.Value)) {
			emit(u(uint64(x.Header.CreditCharge)))
		}),
		s2("smb2.nt_status", "NT Status", fields.FTUint32, fields.BaseHex, func(x *SMB2, emit func(fields.Value)) {
			if x.Header.Response() {
				emit(fields.Value{U: uint64(x.Header.Status), Text: x.Header.Status.String()})
			}
		}),
		s2("smb2.flags.response", "Response", fields.FTBoolean, fields.BaseNone, func(x *SMB2, emit func(fields.Value)) {
			emit(u(uint64(x.Header.Flags & smbd.FlagServerToRedir)))
		}),
		s2("smb2.msg_id", "Message ID", fields.FTUint64, fields.BaseDec, func(x *SMB2, emit func(fields.Value)) {
			emit(u(x.Header.MessageID))
		}),
		s2("smb2.sesid", "Session Id", fields.FTUint64, fields.BaseHex, func(x *SMB2, emit func(fields.Value)) {
			emit(u(x.Header.SessionID))
		}),
		s2("smb2.channel", "Channel", fields.FTUint32, fields.BaseHex, func(x *SMB2, emit func(fields.Value)) {
			if !x.Header.Response() && x.HasChannel {
				emit(fields.Value{U: uint64(x.Channel), Text: x.Channel.String()})
			}
		}),
		desc("smb2.buffer_descriptor.offset", "Offset", fields.FTUint64, fields.BaseDec, func(d smbd.BufferDescriptor) uint64 { return d.Offset }),
		desc("smb2.buffer_descriptor.token", "Token", fields.FTUint32, fields.BaseHex, func(d smbd.BufferDescriptor) uint64 { return uint64(d.Token) }),
		desc("smb2.buffer_descriptor.length", "Length", fields.FTUint32, fields.BaseDec, func(d smbd.BufferDescriptor) uint64 { return uint64(d.Length) }),
	)
	return t
}

func sendAt(p *dissect.Packet, i int) *Send {
	n := 0
	for _, r := range p.ULP {
		if s, ok := r.(*Send); ok {
			if n == i {
				return s
			}
			n++
		}
	}
	return nil
}

func sendCount(p *dissect.Packet) int {
	n := 0
	for _, r := range p.ULP {
		if _, ok := r.(*Send); ok {
			n++
		}
	}
	return n
}

func sendField(parent, name, label string, ft fields.FieldType, b fields.Base, get func(r *Send, emit func(fields.Value))) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: ft, Base: b, Parent: parent, Per: "smb_direct",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := sendAt(p, i); r != nil {
				get(r, emit)
			}
		}}
}

// infoNames are the SMB2 commands as tshark's Info column names them.
var infoNames = [...]string{"Negotiate Protocol", "Session Setup", "Session Logoff", "Tree Connect", "Tree Disconnect",
	"Create", "Close", "Flush", "Read", "Write", "Lock", "Ioctl", "Cancel", "KeepAlive", "Find", "Notify", "GetInfo",
	"SetInfo", "Break"}

// AppendInfo appends what the packet's Sends are to its summary line, as
// tshark's Info column begins: "NegotiateRequest", "NegotiateResponse",
// "DataMessage" for a Send without an SMB2 message (credits only, a
// fragment), else each SMB2 message's command and "Request" or
// "Response" (", Error: STATUS_…" for a status other than success),
// joined by ";" in a compound chain (fields.RegisterInfo). tshark adds
// command details (file names, info levels) this does not.
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	n := 0
	for _, rr := range p.ULP {
		r, ok := rr.(*Send)
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, " | "...)
		}
		n++
		if len(r.SMB2) == 0 {
			dst = append(dst, r.Kind.String()...)
			continue
		}
		for i := range r.SMB2 {
			h := &r.SMB2[i].Header
			if i > 0 {
				dst = append(dst, ';')
			}
			if int(h.Command) < len(infoNames) {
				dst = append(dst, infoNames[h.Command]...)
			} else {
				dst = append(dst, h.Command.String()...)
			}
			if !h.Response() {
				dst = append(dst, " Request"...)
				continue
			}
			dst = append(dst, " Response"...)
			if h.Status != smbd.StatusSuccess {
				dst = append(dst, ", Error: "...)
				dst = append(dst, h.Status.String()...)
			}
		}
	}
	return dst
}
