package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/report"
)

// tshark's flags that dissect takes as tshark takes them (issue 31;
// docs/tshark.md has the table of every flag and what it does here).
type tsharkFlags struct {
	noResolve   bool     // -n: rdmashark never resolves names
	twoPass     bool     // -2: dissect always filters after reassembly
	lineBuf     bool     // -l: flush after every packet
	fileFormat  string   // -F: pcapng (default) or pcap for -w
	only        []string // -O: the protocols -V details
	printAlso   bool     // -P: summary lines on standard output while writing -w
	snaplen     int      // -s: live capture only, as in tshark
	showVersion bool     // -v: the version, as tshark -v
}

func (t *tsharkFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVarP(&t.noResolve, "no-resolve", "n", false, "as tshark -n: no name resolution (rdmashark never resolves names: accepted for tshark's command lines)")
	f.BoolVarP(&t.twoPass, "two-pass", "2", false, "as tshark -2 (dissect always applies -Y after reassembly, as tshark's second pass: accepted for tshark's command lines)")
	f.BoolVarP(&t.lineBuf, "line-buffered", "l", false, "flush the output after every packet, as tshark -l")
	f.StringVarP(&t.fileFormat, "file-format", "F", "pcapng", "format of the -w file: pcapng or pcap, as tshark -F")
	f.StringSliceVarP(&t.only, "only-protocols", "O", nil, "as tshark -O PROTO[,PROTO]: like -V, with the fields of these protocols only (the others by their heading)")
	f.BoolVarP(&t.printAlso, "print", "P", false, "with -w FILE, print the summary lines too, as tshark -P")
	f.IntVarP(&t.snaplen, "snapshot-length", "s", 0, "as tshark -s, it applies to live capture only (rdmashark capture -s): accepted and ignored when reading a file")
	f.BoolVarP(&t.showVersion, "version", "v", false, "print rdmashark's version, as tshark -v")
}

// check validates the flags that take values.
func (t *tsharkFlags) check(writeTo string) error {
	switch t.fileFormat {
	case "pcapng", "pcap":
	default:
		return usageErr("-F %q: rdmashark writes pcapng or pcap", t.fileFormat)
	}
	if t.printAlso && writeTo == "-" {
		return usageErr("-P with -w -: the summary lines and the capture would share standard output")
	}
	return nil
}

// teeWriter hands every packet to each of its writers (-P with -w).
type teeWriter []report.PacketWriter

func (t teeWriter) WritePacket(p *dissect.Packet) error {
	for _, w := range t {
		if err := w.WritePacket(p); err != nil {
			return err
		}
	}
	return nil
}

func (t teeWriter) Flush() error {
	var first error
	for _, w := range t {
		if err := w.Flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ender is a writer that closes its output after the last packet (-T
// json's array).
type ender interface{ End() error }

// endWriter ends pw's output if it has an end (the tee's members too).
func endWriter(pw report.PacketWriter) error {
	switch w := pw.(type) {
	case ender:
		return w.End()
	case teeWriter:
		for _, m := range w {
			if err := endWriter(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// bareTshark turns `rdmashark -r FILE ...` (no subcommand, flags first, as
// tshark is typed) into `rdmashark dissect -r FILE ...`.
func bareTshark(root *cobra.Command, args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || args[0] == "-" {
		return args
	}
	switch args[0] {
	case "-h", "--help", "--version", "-v":
		return args
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		for _, c := range root.Commands() {
			if a == c.Name() || slices.Contains(c.Aliases, a) {
				return args // a subcommand is named: cobra finds it
			}
		}
	}
	if strings.HasPrefix(args[0], "--") {
		name, _, _ := strings.Cut(args[0][2:], "=")
		if root.PersistentFlags().Lookup(name) != nil && len(args) == 1 {
			return args
		}
	}
	return append([]string{"dissect"}, args...)
}

// Did-you-mean for flags and field names.

var (
	unknownLong  = regexp.MustCompile(`^unknown flag: --([^ ]+)$`)
	unknownShort = regexp.MustCompile(`^unknown shorthand flag: '(.)' in -`)
	unknownField = regexp.MustCompile(`"([^"]+)" is neither a field nor a protocol name|unknown field "([^"]+)"`)
)

// suggest returns " (did you mean ...?)" for an error naming an unknown
// flag of the command args run, or an unknown field, or "".
func suggest(root *cobra.Command, args []string, msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	if m := unknownLong.FindStringSubmatch(line); m != nil {
		cmd := commandOf(root, args)
		var names []string
		visit := func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		}
		cmd.Flags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(visit)
		if best := closest(m[1], names); best != "" {
			return "did you mean --" + best + "?"
		}
		return ""
	}
	if m := unknownShort.FindStringSubmatch(line); m != nil {
		cmd := commandOf(root, args)
		// A tshark flag on a command that has no such flag: say which
		// command has it.
		if cmd != root {
			for _, c := range root.Commands() {
				if f := c.Flags().ShorthandLookup(m[1]); f != nil && c != cmd {
					return fmt.Sprintf("-%s is %s's --%s (%s); %s --help lists %s's flags", m[1], c.Name(), f.Name, firstLine(f.Usage), cmd.CommandPath(), cmd.Name())
				}
			}
		}
		return ""
	}
	if m := unknownField.FindStringSubmatch(line); m != nil {
		name := m[1] + m[2]
		var names []string
		for _, f := range fields.Registry.All() {
			names = append(names, f.Name)
		}
		// Protocols too: the prefixes of field names.
		for _, n := range slices.Clone(names) {
			if p, _, ok := strings.Cut(n, "."); ok {
				names = append(names, p)
			}
		}
		for _, p := range []string{"arp", "icmp", "icmpv6", "data", "frame", "_ws.expert"} {
			names = append(names, p)
		}
		if best := closest(name, names); best != "" {
			return "did you mean " + best + "?"
		}
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 60 {
		l = l[:57] + "..."
	}
	return l
}

// commandOf is the command args run (root when none is named).
func commandOf(root *cobra.Command, args []string) *cobra.Command {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return root
	}
	return cmd
}

// closest returns the candidate nearest to s by edit distance, if near
// enough to be a typo (at most a third of its length, and at least 1), or
// one that s is a prefix or suffix part of.
func closest(s string, candidates []string) string {
	sort.Strings(candidates)
	best, bestD := "", 1<<30
	limit := max(len(s)/3, 1)
	for _, c := range candidates {
		if c == s {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= limit {
		return best
	}
	// A field name's last part typed alone ("psn" for infiniband.bth.psn).
	for _, c := range candidates {
		if strings.HasSuffix(c, "."+s) {
			return c
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// bindVerboseAlias adds -v as a hidden second name of a --verbose flag that
// now answers to -V, tshark's letter for details (-v is tshark's version):
// check -v is in scripts and documents, and keeps working.
func bindVerboseAlias(f *pflag.FlagSet, verbose *bool) {
	f.BoolVarP(verbose, "verbose-v", "v", false, "same as -V (kept for existing scripts)")
	_ = f.MarkHidden("verbose-v")
}
