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
		verbose                                         bool
	)
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check captures against the RDMA and RPC-over-RDMA specs; exit 1 on findings (a CI gate)",
		Long: `check runs every conformance rule (rdmashark rules lists them) on each capture
and prints the findings grouped by connection: the rule, severity, packets,
XID, the values that break the rule and the limit they break, and the spec
section. A rule that lacks its evidence on a connection is "not evaluated",
with the reason.

Exit status: 0 when nothing at or above --fail-on (default error) was found,
1 when something was, 2 when an input could not be read or a flag is wrong.
Several files are checked one by one and their results summed.

--enable/--disable take rule IDs or globs (CHUNK-*), repeated or
comma-separated. --baseline FILE suppresses the findings a previous
--write-baseline FILE recorded (matched on rule, connection endpoints and the
finding's key, not on packet numbers or XIDs), so a gate can start on an
imperfect implementation and be tightened later.

--format text|json|junit|sarif: JUnit XML has one test case per rule per
connection (failure at or above --fail-on, skipped when not evaluated); SARIF
2.1.0 lists the rules with their explanations and one result per finding.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sev, err := check.ParseSeverity(failOn)
			if err != nil {
				return usageErr("--fail-on: %v", err)
			}
			switch format {
			case "text", "json", "junit", "sarif":
			default:
				return usageErr("--format must be text, json, junit or sarif, not %q", format)
			}
			rules, err := check.Select(enable, disable)
			if err != nil {
				return usageErr("%v", err)
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
			if annotate != "" && (len(args) != 1 || args[0] == "-") {
				return usageErr("--annotate needs exactly one capture file (it is read twice)")
			}
			rep := &report.CheckReport{FailOn: sev, Rules: rules, Version: version}
			var seen check.Baseline
			for _, name := range args {
				var opts dissect.Options
				runner, each := withChecks(check.Config{Rules: rules}, &opts, nil)
				eng, runErr := runEngineOpts(cmd, g, name, opts, each)
				if eng != nil {
					warn(cmd, eng)
				}
				var res *check.Result
				if eng != nil {
					res = runner.Finish(eng.Conns.Connections())
					res.NoteLoss(0, eng.Stats.Skipped)
					if writeBaseline != "" {
						seen.Add(res)
					}
					if known != nil {
						known.Apply(res)
					}
					if conn != 0 && !narrowResult(res, conn) {
						return usageErr("--connection %d: no such connection in %s", conn, name)
					}
				}
				if runErr != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", runErr)
				}
				if annotate != "" && runErr == nil {
					if err := annotateCapture(name, annotate, findingComments(res)); err != nil {
						return &exitError{exitUsage, fmt.Errorf("--annotate: %w", err)}
					}
				}
				rep.Add(report.NewCheckFile(name, eng, res, unwrapExit(runErr)))
			}
			if writeBaseline != "" {
				if err := writeFile(writeBaseline, seen.Write); err != nil {
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
				return rep.WriteText(w, report.TextOptions{Verbose: verbose})
			}
			if output != "" {
				err = writeFile(output, write)
			} else {
				err = write(cmd.OutOrStdout())
			}
			if err != nil {
				return &exitError{exitUsage, err}
			}
			switch {
			case rep.Summary.Unreadable > 0:
				return &exitError{exitUsage, errors.New("")}
			case rep.Summary.AtOrAboveFailOn > 0:
				return &exitError{exitFindings, errors.New("")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: info, warning or error")
	f.StringArrayVar(&enable, "enable", nil, "run only these rules (IDs or globs such as 'CHUNK-*'; repeatable, comma-separated)")
	f.StringArrayVar(&disable, "disable", nil, "skip these rules (IDs or globs; repeatable, comma-separated)")
	f.StringVar(&baseline, "baseline", "", "suppress the findings listed in this baseline file")
	f.StringVar(&writeBaseline, "write-baseline", "", "write this run's findings to a baseline file")
	f.StringVar(&format, "format", "text", "output: text, json, junit or sarif")
	f.StringVarP(&output, "output", "o", "", "write the report to this file instead of standard output")
	f.BoolVarP(&verbose, "verbose", "v", false, "text: list every finding and every rule's status")
	f.IntVar(&conn, "connection", 0, "check only this connection (its ID, as analyze numbers them)")
	f.StringVar(&annotate, "annotate", "", "write the capture to this pcapng file with each finding as a comment on its packets (tshark -e frame.comment shows them)")
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

// writeFile writes a file through fn, reporting a failure to close it.
func writeFile(name string, fn func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
