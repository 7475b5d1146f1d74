package main

import (
	"strings"

	"github.com/rdmashark/rdmashark/report"
)

// parseFieldOptions reads tshark's -E options (bom=y|n, header=y|n,
// separator=, aggregator=, quote=d|s|n, occurrence=f|l|a); -E may repeat and each may
// hold one option. /t and /s stand for a tab and a space; a separator or
// aggregator longer than one character is cut to its first, as tshark does.
func parseFieldOptions(opts []string, header bool) (report.FieldsOptions, error) {
	o := report.FieldsOptions{Header: header}
	char := func(v string) string {
		switch v {
		case "/t":
			return "\t"
		case "/s":
			return " "
		}
		if len(v) > 1 {
			return v[:1]
		}
		return v
	}
	for _, e := range opts {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			return o, usageErr("-E %q: want NAME=VALUE (bom, header, separator, aggregator, quote, occurrence)", e)
		}
		switch k {
		case "header":
			switch v {
			case "y":
				o.Header = true
			case "n":
				o.Header = false
			default:
				return o, usageErr("-E header=%q: want y or n", v)
			}
		case "separator":
			if v == "" {
				return o, usageErr("-E separator: empty")
			}
			o.Separator = char(v)
		case "aggregator":
			if v == "" {
				return o, usageErr("-E aggregator: empty")
			}
			o.Aggregator = char(v)
		case "quote":
			switch v {
			case "d":
				o.Quote = '"'
			case "s":
				o.Quote = '\''
			case "n":
				o.Quote = 0
			default:
				return o, usageErr("-E quote=%q: want d, s or n", v)
			}
		case "occurrence":
			switch v {
			case "a":
				o.Occurrence = 0
			case "f":
				o.Occurrence = 1
			case "l":
				o.Occurrence = -1
			default:
				return o, usageErr("-E occurrence=%q: want f, l or a", v)
			}
		case "bom":
			switch v {
			case "y":
				o.BOM = true
			case "n":
				o.BOM = false
			default:
				return o, usageErr("-E bom=%q: want y or n", v)
			}
		default:
			return o, usageErr("-E %q: unknown option (bom, header, separator, aggregator, quote, occurrence)", k)
		}
	}
	return o, nil
}
