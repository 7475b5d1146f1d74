package main

import (
	"errors"
	"fmt"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// compileFilter compiles a -Y display filter; an empty one selects every
// packet. A bad filter is a usage error (exit 2) that names the column of
// the offending token and shows it under a caret, as tshark does.
func compileFilter(src string) (*dfilter.Filter[*dissect.Packet], error) {
	f, err := dfilter.Compile(src, fields.FilterRegistry(fields.Registry))
	if err == nil {
		return f, nil
	}
	var fe *dfilter.Error
	if errors.As(err, &fe) {
		return nil, &exitError{exitUsage, fmt.Errorf("-Y: %v\n%s", fe, indent(fe.Caret()))}
	}
	return nil, usageErr("-Y: %v", err)
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
