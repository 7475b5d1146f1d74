package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

func newCheckCmd(g *globalFlags) *cobra.Command {
	var (
		failOn, format, baseline, writeBaseline, output string
		annotate                                        string
		conn                                            int
		enable, disable                                 []string
		verbose, failOnDamage, wide                     bool
		in                                              inputs
		gate                                            gateFlags
	)
	cmd := &cobra.Command{
		Use:   "check FILE|DIR|GLOB...",
		Short: "Check captures against the RDMA and RPC-over-RDMA specs; exit 1 on findings (a CI gate)",
		Long: `check runs every conformance rule (rdmashark rules lists them) on each capture
and prints the findings grouped by connection: the rule, severity, packets,
XID, the values that break the rule and the limit they break, and the spec
section. A rule that lacks its evidence on a connection is "not evaluated",
with the reason.

Exit status: 0 when nothing at or above --fail-on (default error) was found,
1 when something was (or a --expect-remote-invalidation/--min-inline-threshold
expectation failed), 2 when an input could not be read or a flag is wrong,
3 when the captures gave nothing to judge: no RDMA connection, no
RPC-over-RDMA traffic, every rule not evaluated, no connection set-up in the
capture, or fewer connections or transactions than --min-connections or
--min-transactions demand. --allow-empty accepts captures that give nothing
to judge. --write-baseline FILE records the findings: they do not fail that
run. Several captures (files, directories searched recursively, globs, -r) are
checked --jobs at a time, each by its own engine, reported in the order given
and their results summed; the gate (GATE-* in every output format) judges
them together. With --fail-on-damage (the default), a capture read only in
part — damaged records skipped, or reading interrupted by Ctrl-C or SIGTERM —
also exits 2; every output format says so (text INCOMPLETE lines, JSON
"incomplete" and per-file "interrupted"/"skipped_records", a JUnit "read
capture whole" test case, a SARIF notification).

--enable/--disable take rule IDs or globs (CHUNK-*), repeated or
comma-separated. --baseline FILE suppresses the findings a previous
--write-baseline FILE recorded (matched on rule, connection endpoints and the
finding's key, not on packet numbers or XIDs), so a gate can start on an
imperfect implementation and be tightened later.

--format text|json|junit|sarif: JUnit XML has one test case per rule per
connection (failure at or above --fail-on, skipped when not evaluated); SARIF
2.1.0 lists the rules with their explanations and one result per finding.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			g.concurrent = min(in.jobs, len(names))
			sev, err := check.ParseSeverity(failOn)
			if err != nil {
				return usageErr("--fail-on: %v", err)
			}
			switch format {
			case "text", "json", "junit", "sarif":
			default:
				return usageErr("--format must be text, json, junit or sarif, not %q", format)
			}
			gateOpts, err := gate.options()
			if err != nil {
				return err
			}
			rules, err := check.Select(enable, disable)
			if err != nil {
				return usageErr("%v", err)
			}
			// An output may be none of the inputs (issue 13): say so
			// before reading anything, not after a long run.
			inputs := append([]string{baseline}, names...)
			for _, o := range []struct{ flag, name string }{{"-o", output}, {"--write-baseline", writeBaseline}, {"--annotate", annotate}} {
				if err := checkOutput(o.name, inputs...); err != nil {
					return usageErr("%s: %v", o.flag, err)
				}
			}
			stdout := output
			if stdout == "" {
				stdout = "-" // the report goes to standard output
			}
			if err := sameOutputs([][2]string{{"-o", stdout}, {"--write-baseline", writeBaseline}, {"--annotate", annotate}}); err != nil {
				return err
			}
			var known *check.Baseline
			if baseline != "" {
				f, err := os.Open(baseline)
				if err != nil {
					return usageErr("--baseline: %v", err)
				}
				known, err = check.ReadBaseline(f)
				f.Close()
				if err != nil {
					return usageErr("--baseline %s: %v", baseline, err)
				}
			}
			if annotate != "" {
				if err := annotateInput(names); err != nil {
					return err
				}
			}
			rep := &report.CheckReport{FailOn: sev, Rules: rules, Version: version, FindingsDoNotFail: writeBaseline != "", FailOnDamage: failOnDamage}
			var seen check.Baseline
			type result struct {
				eng    *dissect.Engine
				res    *check.Result
				spill  *report.CheckSpill
				warn   string
				runErr error
			}
			// Connections released during the read leave memory as they
			// go (report/findings_spill.go), the baseline applied to each;
			// with --connection only that one is read back.
			defer rep.Close()
			work := func(i int) result {
				var opts dissect.Options
				sp := report.NewCheckSpill(known, writeBaseline != "")
				if conn != 0 {
					sp.Only(conn)
				}
				opts.Observer = sp
				runner, each := withChecks(check.Config{Rules: rules}, &opts, nil)
				sp.SetRunner(runner)
				eng, runErr := runEngine(cmd, g, names[i], engineRun{opts: opts, each: each})
				r := result{eng: eng, runErr: runErr, spill: sp}
				if eng != nil {
					r.warn = warnText(eng)
					r.res = runner.Finish(eng.Conns.Connections())
					r.res.NoteLoss(eng.Stats.Dropped, eng.Stats.Skipped)
				}
				return r
			}
			ferr := forEachOrdered(len(names), in.jobs, work, func(i int, r result) error {
				fmt.Fprint(cmd.ErrOrStderr(), r.warn)
				if r.res != nil {
					if writeBaseline != "" {
						// The spilled connections' findings, then the
						// others': the baseline puts them in order.
						if err := r.spill.RecordBaseline(&seen); err != nil {
							return &exitError{exitUsage, fmt.Errorf("--write-baseline: %w", err)}
						}
						seen.Add(r.res)
					}
					if known != nil {
						known.Apply(r.res)
					}
					if conn != 0 && !r.res.Narrow(conn) && r.spill.Len() == 0 {
						return usageErr("--connection %d: no such connection in %s", conn, names[i])
					}
				}
				runErr := r.runErr
				interrupted := false
				if runErr == errInterrupted {
					interrupted, runErr = true, nil
				}
				if runErr != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", errText(runErr))
				}
				cf := r.spill.CheckFile(displayName(names[i]), snapshot(r.eng), r.res, unwrapExit(runErr))
				if annotate != "" && runErr == nil && r.res != nil {
					comments, err := findingComments(cf.EachFinding)
					if err == nil {
						err = annotateCapture(cmd, names[i], annotate, comments)
					}
					if err != nil {
						return &exitError{exitUsage, fmt.Errorf("--annotate: %w", err)}
					}
				}
				cf.Interrupted = interrupted
				if format == "sarif" {
					cf.Records = locateRecords(names[i], cf.EachFinding)
				}
				rep.Add(cf)
				return nil
			})
			if ferr != nil {
				return ferr
			}
			rep.Judge(gateOpts)
			if writeBaseline != "" {
				if err := writeOutput(cmd, writeBaseline, inputs, seen.Write); err != nil {
					return &exitError{exitUsage, fmt.Errorf("--write-baseline: %w", err)}
				}
			}
			write := func(w io.Writer) error {
				switch format {
				case "json":
					return rep.WriteJSON(w)
				case "junit":
					return rep.WriteJUnit(w)
				case "sarif":
					return rep.WriteSARIF(w)
				}
				return rep.WriteText(w, report.TextOptions{Verbose: verbose, Layout: g.fileLayout(cmd, wide, output)})
			}
			if err := writeOutput(cmd, output, inputs, write); err != nil {
				return &exitError{exitUsage, err}
			}
			return gateExit(rep)
		},
	}
	in.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: info, warning or error")
	f.StringArrayVar(&enable, "enable", nil, "run only these rules (IDs or globs such as 'CHUNK-*'; repeatable, comma-separated)")
	f.StringArrayVar(&disable, "disable", nil, "skip these rules (IDs or globs; repeatable, comma-separated)")
	f.StringVar(&baseline, "baseline", "", "suppress the findings listed in this baseline file")
	f.StringVar(&writeBaseline, "write-baseline", "", "write this run's findings to a baseline file (- for standard output)")
	f.StringVar(&format, "format", "text", "output: text, json, junit or sarif")
	f.StringVarP(&output, "output", "o", "", "write the report to this file instead of standard output (- for standard output)")
	f.BoolVarP(&verbose, "verbose", "V", false, "text: list every finding and every rule's status (-V: details, as tshark's)")
	bindVerboseAlias(f, &verbose) // -v, kept for the scripts that use it (tshark_flags.go)
	bindWide(cmd, &wide)
	gate.register(f)
	f.BoolVar(&failOnDamage, "fail-on-damage", true, "exit 2 when a capture was not read whole: damaged records skipped, or reading interrupted by a signal (--fail-on-damage=false: report it, judge the rest)")
	f.IntVar(&conn, "connection", 0, "check only this connection (its ID, as analyze numbers them)")
	f.StringVar(&annotate, "annotate", "", "write the capture to this pcapng file (- for standard output) with each finding as a comment on its packets (tshark -e frame.comment shows them); the capture must be a file that can be read twice")
	return cmd
}

// unwrapExit returns the error inside an exitError.
func unwrapExit(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.err
	}
	return err
}

// withChecks attaches a check runner to engine options and to a per-packet
// callback (each may be nil): the runner observes every message and RDMA
// operation (chained before any Observer already set) and every packet.
// Commands that build their own engine (capture) use it; Finish the runner
// with the engine's connections at the end and hand the result to
// report.Analysis.AddChecks.
func withChecks(cfg check.Config, opts *dissect.Options, each func(*dissect.Packet) error) (*check.Runner, func(*dissect.Packet) error) {
	cfg.Next = opts.Observer
	r := check.NewRunner(cfg)
	opts.Observer = r
	return r, feedChecks(r, each)
}

// feedChecks returns a per-packet callback that hands every packet to the
// runner, then to each.
func feedChecks(r *check.Runner, each func(*dissect.Packet) error) func(*dissect.Packet) error {
	return func(p *dissect.Packet) error {
		r.Packet(p)
		if each != nil {
			return each(p)
		}
		return nil
	}
}
