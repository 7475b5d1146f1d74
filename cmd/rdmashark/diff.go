package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/diff"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

func newDiffCmd(g *globalFlags) *cobra.Command {
	var (
		format string
		all    bool
		failOn []string
		out    string
		wide   bool
		jobs   int
		tol    = diff.DefaultTolerances
	)
	cmd := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "What changed between two captures of the same workload: negotiation, behaviour, findings",
		Long: `diff reads two captures — a known-good BASE and a NEW one of the same
workload — and says what changed on the wire (docs/diff.md).

Connections are matched by their role: transport, upper-layer protocol,
service port (NVMe/RDMA: queue ID), then within that kind by how alike
their negotiation and behaviour are, the order they were set up in
deciding between alike ones; never by addresses or QPNs, which change
between runs. For each pair of connections:
  negotiation  every CM REQ/REP field that is not an identifier, the
               consumer's private data byte for byte and decoded (RFC 8797,
               NVMe/RDMA, iSER), SMB Direct's Negotiate Request and
               Response, iSCSI Login keys, MPA revision, markers, CRC,
               IRD/ORD, inline thresholds, remote invalidation;
  behaviour    transport health (retransmissions, NAKs, RNR, timeouts),
               Sends by packets per message, TCP segment sizes (iWARP),
               RDMA operation sizes, RPC-over-RDMA message kinds and
               credits; and per exchange name (every connection together)
               counts, bytes, chunk and Send With Invalidate use, latency
               p50 and p99;
  findings     rules whose finding count appears, disappears or changes.
Only changes are shown; --all shows every compared item.

Negotiated values change with any difference. Counts change past
--tolerance-count (relative) and --tolerance-count-abs; latency quantiles
past --tolerance-latency (p50) and --tolerance-latency-tail (p99), and
only with --min-samples latencies on both sides and when a significance
test says the move is not noise (p below --alpha: Mann-Whitney U for the
distribution and its p50, whose Hodges-Lehmann shift must also exceed
--tolerance-latency; Fisher's exact test of the tail for the p99). A size
histogram (RDMA operation sizes, TCP segment sizes, packets per Send)
changes when its Mann-Whitney p is below --alpha and its effect at least
--size-effect; a bucket's count past the count tolerance when the
histogram's count did too, or the bucket's share by Fisher's exact test.

BASE and NEW may be directories or globs: their captures are paired by
file name.

Exit status: 0 no change beyond the tolerances, 1 changes found (of the
--fail-on classes), 2 unusable input (a capture that cannot be read in
full, a capture with no counterpart, bad flags).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("diff takes two captures (or directories, or globs): BASE NEW; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErr("--format must be text or json, not %q", format)
			}
			fail := map[diff.Class]bool{}
			for _, c := range failOn {
				for _, c := range strings.Split(c, ",") {
					switch cl := diff.Class(strings.TrimSpace(c)); cl {
					case diff.Negotiation, diff.Behaviour, diff.Findings:
						fail[cl] = true
					default:
						return usageErr("--fail-on takes negotiation, behaviour or findings, not %q", c)
					}
				}
			}
			if tol.Count < 0 || tol.CountAbs < 0 || tol.Latency < 0 || tol.LatencyTail < 0 {
				return usageErr("tolerances must not be negative")
			}
			if !(tol.Alpha > 0 && tol.Alpha <= 1) {
				return usageErr("--alpha must be in (0, 1], not %v", tol.Alpha)
			}
			if !(tol.SizeEffect >= 0 && tol.SizeEffect <= 1) {
				return usageErr("--size-effect must be in [0, 1], not %v", tol.SizeEffect)
			}
			if jobs < 1 {
				return usageErr("--jobs must be at least 1, not %d", jobs)
			}
			pairs, onlyBase, onlyNew, err := diffPairs(args[0], args[1])
			if err != nil {
				return err
			}
			var names []string
			for _, p := range pairs {
				names = append(names, p[0], p[1])
			}
			g.concurrent = min(jobs, len(names))
			doc := &diff.Document{Tolerances: tol, Pairs: []*diff.Pair{}, UnpairedBase: onlyBase, UnpairedNew: onlyNew,
				Changes: map[diff.Class]int{diff.Negotiation: 0, diff.Behaviour: 0, diff.Findings: 0}}
			if doc.UnpairedBase == nil {
				doc.UnpairedBase = []string{}
			}
			if doc.UnpairedNew == nil {
				doc.UnpairedNew = []string{}
			}
			type result struct {
				prof *diff.Profile
				warn string
				err  error
			}
			profiles := make([]result, len(names))
			ferr := forEachOrdered(len(names), jobs, func(i int) result {
				p, warn, err := profileCapture(cmd, g, names[i])
				return result{p, warn, err}
			}, func(i int, r result) error {
				fmt.Fprint(cmd.ErrOrStderr(), r.warn)
				profiles[i] = r
				return nil
			})
			if ferr != nil {
				return ferr
			}
			unusable := len(onlyBase)+len(onlyNew) > 0
			for i, pr := range pairs {
				b, n := profiles[2*i], profiles[2*i+1]
				if b.err != nil || n.err != nil {
					unusable = true
					p := &diff.Pair{Base: displayName(pr[0]), New: displayName(pr[1]), Changes: map[diff.Class]int{}, Rows: []diff.Row{}}
					for _, e := range []error{b.err, n.err} {
						if e != nil {
							p.Errors = append(p.Errors, errText(unwrapExit(e)))
							fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", errText(unwrapExit(e)))
						}
					}
					doc.Pairs = append(doc.Pairs, p)
					continue
				}
				p := diff.NewPair(b.prof, n.prof, tol, all)
				for c, k := range p.Changes {
					doc.Changes[c] += k
				}
				doc.Pairs = append(doc.Pairs, p)
			}
			write := func(w io.Writer) error {
				if format == "json" {
					return doc.WriteJSON(w)
				}
				lay := g.fileLayout(cmd, wide, out)
				return doc.WriteTextLayout(w, printable, diff.TextLayout{Width: lay.Width, Wide: lay.Wide})
			}
			if err := writeOutput(cmd, out, names, write); err != nil {
				return &exitError{exitUsage, err}
			}
			if unusable {
				return &exitError{exitUsage, errors.New("")}
			}
			for c, k := range doc.Changes {
				if k > 0 && (len(fail) == 0 || fail[c]) {
					return &exitError{exitFindings, errors.New("")}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.BoolVar(&all, "all", false, "show every compared item, not only the changes")
	f.StringSliceVar(&failOn, "fail-on", nil, "exit 1 only for changes of these classes: negotiation, behaviour, findings (default: any)")
	f.StringVarP(&out, "output", "o", "", `write the output to this file ("-" standard output)`)
	bindWide(cmd, &wide)
	f.IntVarP(&jobs, "jobs", "j", runtime.GOMAXPROCS(0), "captures read at once, each by its own engine")
	f.Float64Var(&tol.Count, "tolerance-count", tol.Count, "relative tolerance of counts and byte totals (0.10: 10%)")
	f.Float64Var(&tol.CountAbs, "tolerance-count-abs", tol.CountAbs, "absolute slack of counts on top of --tolerance-count")
	f.Float64Var(&tol.Latency, "tolerance-latency", tol.Latency, "relative tolerance of an exchange name's p50 latency")
	f.Float64Var(&tol.LatencyTail, "tolerance-latency-tail", tol.LatencyTail, "relative tolerance of an exchange name's p99 latency")
	f.Uint64Var(&tol.MinSamples, "min-samples", tol.MinSamples, "latencies each capture needs of an exchange name for its quantiles to be compared")
	f.Float64Var(&tol.Alpha, "alpha", tol.Alpha, "significance level of the latency and size tests: a change must also have p below it")
	f.Float64Var(&tol.SizeEffect, "size-effect", tol.SizeEffect, "least rank-biserial effect |P(new>base)-P(new<base)| of a size distribution's change")
	return cmd
}

// profileCapture reads one capture through an engine, its checks and a
// diff.Collector in one pass. A capture read only in part (damaged past
// reading, interrupted) is an error: a diff of part of it would report
// what is missing as changes.
func profileCapture(cmd *cobra.Command, g *globalFlags, name string) (*diff.Profile, string, error) {
	col := diff.NewCollector(displayName(name))
	opts := dissect.Options{Observer: col, Exchange: col.Exchange, ForgetReleased: true}
	runner, each := withChecks(check.Config{}, &opts, col.Packet)
	eng, runErr := runEngine(cmd, g, name, engineRun{opts: opts, each: each})
	if eng == nil {
		return nil, "", runErr
	}
	if runErr == errInterrupted {
		return nil, warnText(eng), fmt.Errorf("%s: %s after %s", printable(displayName(name)), errInterrupted, report.Plural(int(eng.Stats.Packets), "packet"))
	}
	if runErr != nil {
		return nil, warnText(eng), runErr
	}
	res := runner.Finish(eng.Conns.Connections())
	return col.Profile(eng.Conns.Connections(), res, eng.Stats.Packets), warnText(eng), nil
}

// diffPairs pairs BASE's captures with NEW's: two files are one pair;
// a directory or glob on either side is expanded (as analyze expands
// them) and its captures paired with the other side's by file name.
func diffPairs(base, nw string) (pairs [][2]string, onlyBase, onlyNew []string, err error) {
	if isOneFile(base) && isOneFile(nw) {
		return [][2]string{{base, nw}}, nil, nil, nil
	}
	if base == "-" || nw == "-" {
		return nil, nil, nil, usageErr("standard input is one capture: it cannot be paired with a directory or glob")
	}
	expand := func(arg string) (map[string]string, []string, error) {
		in := inputs{jobs: 1}
		names, err := in.names([]string{arg})
		if err != nil {
			return nil, nil, err
		}
		byName := map[string]string{}
		var order []string
		for _, n := range names {
			k := filepath.Base(n)
			if prev, dup := byName[k]; dup {
				return nil, nil, usageErr("%s and %s have the same file name: diff pairs captures by name", printable(prev), printable(n))
			}
			byName[k] = n
			order = append(order, k)
		}
		return byName, order, nil
	}
	b, border, err := expand(base)
	if err != nil {
		return nil, nil, nil, err
	}
	n, norder, err := expand(nw)
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(border)
	sort.Strings(norder)
	for _, k := range border {
		if m, ok := n[k]; ok {
			pairs = append(pairs, [2]string{b[k], m})
		} else {
			onlyBase = append(onlyBase, b[k])
		}
	}
	for _, k := range norder {
		if _, ok := b[k]; !ok {
			onlyNew = append(onlyNew, n[k])
		}
	}
	return pairs, onlyBase, onlyNew, nil
}

// isOneFile: standard input, or a name that is not a directory and not a
// glob that matches (left to the reader, whose error names it).
func isOneFile(name string) bool {
	if name == "-" {
		return true
	}
	if st, err := os.Stat(name); err == nil {
		return !st.IsDir()
	}
	return !strings.ContainsAny(name, "*?[")
}
