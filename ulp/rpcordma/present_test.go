package rpcordma

import "github.com/rdmashark/rdmashark/dissect"

// Present is the presentation (package fields: the summary line and the
// field table) as rpcordma's internal tests see it. fields imports rpcordma,
// so these tests cannot import it; present_hook_test.go (package
// rpcordma_test, in the same test binary) fills Present in from fields.
var Present struct {
	// Info is the packet's summary line (fields.Info).
	Info func(p *dissect.Packet) string
	// Values appends the -T fields form of field name's occurrences in p
	// to dst; ok is false for a field that is not registered.
	Values func(name string, p *dissect.Packet, dst []string) (out []string, ok bool)
	// All formats every occurrence of every field of p (for the fuzzers:
	// it must not panic).
	All func(p *dissect.Packet)
}

func summary(p *dissect.Packet) string { return Present.Info(p) }
