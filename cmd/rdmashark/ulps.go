package main

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/iser"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
	nvmepresent "github.com/rdmashark/rdmashark/ulp/nvmeof/present"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
	srp "github.com/rdmashark/rdmashark/ulp/srp"
)

// plugin is one upper-layer protocol as the tool registers it: its ULP
// (fresh for each engine) and its conformance rules.
type plugin struct {
	name  string
	new   func() dissect.ULP
	rules func() []*check.Rule
	// key writes the key of the ULP's exchanges (nil: the default).
	key func(dst []byte, key uint64) []byte
	// fields is its part of the field table, info its part of the
	// summary line (nil: none).
	fields func() *fields.Table
	info   func(p *dissect.Packet, dst []byte) []byte
	// hooks are what its rules share (check.Hooks; nil: none).
	hooks func() check.Hooks
	// present registers its presentation's parts of report, export and
	// diff (its ulp/NAME/present package's Register; nil: none).
	present func()
}

// plugins is the tool's one registration list of upper-layer protocols
// (dissect/ulp.go): the engine asks them, in this order, which one each
// connection carries; their ports make the iWARP hint ports and live
// capture's default filter; their rules join check's table. Adding a
// protocol is one line here (docs/architecture.md, "How to add an
// upper-layer protocol").
var plugins = []plugin{
	// RPC-over-RDMA (RFC 8166, RFC 8167, the version 2 draft), its RPC
	// bodies decoded by the NFS binding (RFC 8267) on nfsrdma's port; its
	// presentation fills its parts of report, export (the transactions
	// table) and diff.
	{rpcordma.Name, func() dissect.ULP { return rpcordma.New(nfs.NewBinding(), nfs.RDMAPort) }, rpcordma.Rules, rpcordma.AppendKey, rpcordma.FieldTable, rpcordma.AppendInfo, rpcordma.Hooks, rpcpresent.Register},
	// NVMe over Fabrics on RDMA, ports 4420 and 8009; its presentation
	// writes export's nvme_commands table.
	{nvmeof.Name, func() dissect.ULP { return nvmeof.New() }, nvmeof.Rules, nvmeof.AppendKey, nvmeof.FieldTable, nvmeof.AppendInfo, nil, nvmepresent.Register},
	// SMB Direct ([MS-SMBD], SMB2 over RDMA), ports 445 and 5445.
	{smbdirect.Name, func() dissect.ULP { return smbdirect.New() }, smbdirect.Rules, smbdirect.AppendKey, smbdirect.FieldTable, smbdirect.AppendInfo, nil, nil},
	// iSER (RFC 7145): iSCSI over RDMA, port 3260.
	{iser.Name, func() dissect.ULP { return iser.New() }, iser.Rules, iser.AppendKey, iser.FieldTable, iser.AppendInfo, nil, nil},
	// SRP (T10 SRP, SRP-2): SCSI over RDMA, found by its login in the set-up.
	{srp.Name, func() dissect.ULP { return srp.New() }, srp.Rules, srp.AppendKey, srp.FieldTable, srp.AppendInfo, nil, nil},
}

func init() {
	for _, p := range plugins {
		if p.rules != nil {
			check.Register(p.rules()...)
		}
		if p.hooks != nil {
			check.RegisterHooks(p.hooks())
		}
		if p.key != nil {
			fields.RegisterExchangeKey(p.name, p.key)
		}
		if p.fields != nil {
			fields.RegisterTable(p.fields)
		}
		if p.info != nil {
			fields.RegisterInfo(p.info)
		}
		if p.present != nil {
			// Its parts of report, export and diff (its
			// presentation package registers them with each).
			p.present()
		}
	}
}

// newULPs returns fresh ULPs of every plug-in, one set per engine.
func newULPs() []dissect.ULP {
	out := make([]dissect.ULP, len(plugins))
	for i, p := range plugins {
		out[i] = p.new()
	}
	return out
}
