package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// stats is a subcommand rather than a -z flag of dissect: the statistics
// are written once, at the end, while dissect streams a line per packet;
// stats needs no per-packet presentation (so it reads faster); and its
// JSON document sits with analyze's and transactions' (docs/statistics.md).
// It takes tshark's -z words all the same.

func newStatsCmd(g *globalFlags) *cobra.Command {
	var (
		in     inputs
		format string
		specs  []string
	)
	cmd := &cobra.Command{
		Use:   "stats [-z SPEC]... [FILE|DIR|GLOB]...",
		Short: "Statistics as tshark -z prints them: conversations, io,stat, expert, service response times",
		Long: `stats reads a capture and prints statistics in the spirit of tshark's -z,
as text or (--format json) as one JSON document. -z takes tshark's words
and may be repeated; without -z every statistic is printed:

  -z conv            RDMA conversations: per connection and per queue pair
                     (each direction: the traffic to one side's QP) the
                     packets, bytes, start, duration and bits/s
                     (tshark: conv,tcp / conv,udp)
  -z io,stat,SECS    frames, bytes and bits/s per interval of SECS seconds
                     from the first packet (tshark: io,stat,SECS)
  -z expert          the findings of check counted by severity and rule
                     (tshark: expert)
  -z srt             service response time per upper-layer protocol and
                     request: RPC per program, version and procedure (tshark:
                     rpc,srt), NVMe per opcode, SMB Direct and iSER per
                     command: count, min, avg, max, p50, p99, sum
  -z rpc,srt[,...]   the same as srt (tshark's program and version
                     arguments are accepted and ignored: every program is
                     listed)

Memory is bounded: the tables have limits (65536 connections, 2^20
intervals, 4096 request names) and count what they cut; percentiles come
from a fixed-size histogram, within 3.2% of the exact value.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			if format != "text" && format != "table" && format != "json" {
				return usageErr("--format must be text or json, not %q", format)
			}
			opts, err := parseStatsSpecs(specs)
			if err != nil {
				return err
			}
			g.concurrent = min(in.jobs, len(names))
			work := func(i int) docResult[*report.Stats] {
				st := report.NewStats(displayName(names[i]), opts)
				eopts := dissect.Options{Exchange: st.Exchange, ForgetReleased: true}
				each := func(p *dissect.Packet) error { st.Packet(p); return nil }
				var runner *check.Runner
				if opts.Expert {
					runner, each = withChecks(check.Config{}, &eopts, each)
				}
				eng, runErr := runEngine(cmd, g, names[i], engineRun{opts: eopts, each: each})
				if eng == nil {
					return docResult[*report.Stats]{runErr: runErr}
				}
				if runner != nil {
					st.AddFindings(runner.Finish(eng.Conns.Connections()))
				}
				if runErr == errInterrupted {
					st.Errors = append(st.Errors, fmt.Sprintf("%s after %s", errInterrupted, report.Plural(int(eng.Stats.Packets), "packet")))
					runErr = nil
				}
				if runErr != nil {
					st.Errors = append(st.Errors, runErr.Error())
				}
				st.Finish()
				return docResult[*report.Stats]{st, true, warnText(eng), runErr}
			}
			return writeDocuments(cmd, names, in.jobs, format, g.layout(cmd, false), work, func(i int, err error) *report.Stats {
				st := report.NewStats(names[i], opts)
				st.Errors = []string{err.Error()}
				st.Finish()
				return st
			})
		},
	}
	in.bind(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringArrayVarP(&specs, "statistics", "z", nil, "a statistic: conv, io,stat,SECS, expert, srt or rpc,srt (repeatable; none: all)")
	return cmd
}

// parseStatsSpecs reads the -z words.
func parseStatsSpecs(specs []string) (report.StatsOptions, error) {
	var o report.StatsOptions
	if len(specs) == 0 {
		return report.StatsOptions{Conv: true, IO: true, Expert: true, SRT: true, Interval: time.Second}, nil
	}
	for _, s := range specs {
		f := strings.Split(s, ",")
		switch {
		case f[0] == "conv" && len(f) <= 2:
			o.Conv = true
		case f[0] == "io" && len(f) >= 2 && f[1] == "stat":
			o.IO = true
			o.Interval = time.Second
			if len(f) > 2 && f[2] != "" {
				secs, err := strconv.ParseFloat(f[2], 64)
				if err != nil || secs <= 0 || secs > 1e9 {
					return o, usageErr("-z %s: the interval must be a positive number of seconds", s)
				}
				o.Interval = time.Duration(secs * float64(time.Second))
				if o.Interval <= 0 {
					o.Interval = time.Nanosecond
				}
			}
		case f[0] == "expert" && len(f) <= 2:
			o.Expert = true
		case f[0] == "srt" && len(f) == 1, len(f) >= 2 && f[1] == "srt" && (f[0] == "rpc" || f[0] == "nvme" || f[0] == "smbdirect" || f[0] == "iser"):
			o.SRT = true
		default:
			return o, usageErr("-z %q: unknown statistic (conv, io,stat,SECS, expert, srt, rpc,srt)", s)
		}
	}
	return o, nil
}
