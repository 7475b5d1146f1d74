package rpcordma_test

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func init() {
	// RPC-over-RDMA's presentation, registered as the command's list of
	// plug-ins does (cmd/rdmashark/ulps.go).
	fields.RegisterTable(rpcordma.FieldTable)
	fields.RegisterInfo(rpcordma.AppendInfo)
	fields.RegisterExchangeKey(rpcordma.Name, rpcordma.AppendKey)
	rpcordma.Present.Info = fields.Info
	rpcordma.Present.Values = func(name string, p *dissect.Packet, dst []string) ([]string, bool) {
		f, ok := fields.Registry.Lookup(name)
		if !ok {
			return dst, false
		}
		return f.Values(p, dst), true
	}
	rpcordma.Present.All = func(p *dissect.Packet) {
		for _, f := range fields.Registry.All() {
			f.Values(p, nil)
		}
	}
}
