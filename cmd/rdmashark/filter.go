package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// compileFilter compiles a -Y display filter; an empty one selects every
// packet. A bad filter is a usage error (exit 2) that names the column of
// the offending token and shows it under a caret, as tshark does. names
// are the field and protocol names the filter looked up (fieldsRead).
func compileFilter(src string) (f *dfilter.Filter[*dissect.Packet], names []string, err error) {
	reg := &namesRegistry{Registry: fields.FilterRegistry(fields.Registry)}
	f, err = dfilter.Compile(src, reg)
	if err == nil {
		return f, reg.names, nil
	}
	var fe *dfilter.Error
	if errors.As(err, &fe) {
		return nil, nil, &exitError{exitUsage, fmt.Errorf("-Y: %v\n%s", fe, indent(fe.Caret()))}
	}
	return nil, nil, usageErr("-Y: %v", err)
}

// namesRegistry is a filter registry that notes the names looked up.
type namesRegistry struct {
	dfilter.Registry[*dissect.Packet]
	names []string
}

func (r *namesRegistry) Lookup(name string) (dfilter.Field[*dissect.Packet], bool) {
	r.names = append(r.names, name)
	return r.Registry.Lookup(name)
}

// fieldsRead is the engine's Options.Fields for a command that reads the
// fields named (-e, and those a -Y filter looked up): a field is read when
// it is one of them or under one (a protocol's name: tshark's -e and -Y
// take them too). Nil when names is empty: no field but the summary line.
func fieldsRead(names ...[]string) func(string) bool {
	set := map[string]bool{}
	for _, ns := range names {
		for _, n := range ns {
			set[n] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	return func(name string) bool {
		for n := range set {
			if name == n || strings.HasPrefix(name, n+".") {
				return true
			}
		}
		return false
	}
}

func indent(s string) string {
	out := "    "
	for _, c := range s {
		out += string(c)
		if c == '\n' {
			out += "    "
		}
	}
	return out
}
