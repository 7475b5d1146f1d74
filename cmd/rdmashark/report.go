package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	htmlreport "github.com/rdmashark/rdmashark/report/html"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func newReportCmd(g *globalFlags) *cobra.Command {
	var (
		in      input
		output  string
		opts    htmlreport.Options
		maxConn int
	)
	cmd := &cobra.Command{
		Use:   "report [FILE] -o report.html",
		Short: "Write a self-contained HTML report: overview, a ladder diagram per connection, charts, findings",
		Long: `report reads a capture once and writes one HTML file that opens offline in any
browser (its CSS, SVG and script are inline; it fetches nothing):

  - an overview: the capture, its connections, what each negotiated (RFC 8797
    private data, inline thresholds, remote invalidation, CM and MPA
    parameters) and the checks' verdict;
  - per connection a ladder (sequence) diagram: the CM or MPA exchange, each
    RPC Call and Reply with its chunk lists, the RDMA Reads and Writes that
    moved each chunk, Send With Invalidate marked, findings pinned to their
    packets; packet numbers are Wireshark's. Repeated exchanges fold
    ("205 × NFS v3 READDIR by Reply chunk") and expand on click. The other
    upper-layer protocols (NVMe/RDMA: one per queue, SMB Direct, iSER, SRP)
    get each request, the RDMA operations attached to it and its response,
    as rdmashark exchanges lists them;
  - charts: throughput over time per direction, RPC latency per procedure
    (distribution, p50, p99), chunk usage per procedure;
  - the findings, linked to their arrows, and the rules' explanations.

It is built from the same documents as analyze --format json, transactions
--format json and check. Memory stays bounded: each connection draws at most
--max-detail transactions (or exchanges, or RDMA messages), the rest are
counted by kind and in the charts, and the page says so.

Exit status: 0 when the page was written (the checks' verdict is on the page;
check is the CI gate), 2 when the capture could not be read or the file not
written; a capture damaged part-way is reported as far as it was read and
exits 2. A read stopped by Ctrl-C or SIGTERM is reported as far as it went,
the page says so, and exits 0.`,
		Args: oneCapture("report"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := in.name(args)
			if err != nil {
				return err
			}
			if output == "" && isTerminal(cmd.OutOrStdout()) {
				// A page of HTML is no reading on a terminal: write it
				// beside the working directory as NAME.html, and say so.
				output = reportFileName(name)
				fmt.Fprintf(cmd.ErrOrStderr(), "rdmashark: standard output is a terminal: writing the report to %s (-o - writes it there anyway)\n", output)
			}
			if err := checkOutput(output, name); err != nil {
				return usageErr("-o: %v", err)
			}
			opts.MaxConnections = maxConn
			col := htmlreport.NewCollector(opts)
			// Connections released during the read leave memory as they
			// go, as for analyze (report/analyze_spill.go); the page reads
			// them back as it writes them.
			spill := report.NewConnSpill()
			// The collector hears the RDMA operations, Sends and
			// exchanges its ladders draw (report/html collect_exch.go).
			eopts := dissect.Options{Observer: col.Observe(spill), Exchange: col.Exchange}
			checks, each := withChecks(check.Config{}, &eopts, func(p *dissect.Packet) error {
				col.Packet(p)
				return nil
			})
			spill.SetRunner(checks)
			eng, runErr := runEngine(cmd, g, name, engineRun{opts: eopts, txn: func(t *rpcordma.Transaction) {
				// Converted here: report/html reads no plug-in's types.
				x := report.ConvertTransaction(t)
				col.Transaction(&x)
			}, each: each})
			if eng == nil {
				spill.Close()
				return runErr
			}
			a := spill.Analysis(displayName(name), snapshot(eng))
			defer a.Close()
			res := checks.Finish(eng.Conns.Connections())
			res.NoteLoss(eng.Stats.Dropped, eng.Stats.Skipped)
			// The page's verdict is check's on the same capture (its
			// default --fail-on error, --fail-on-damage and gate): a
			// capture check calls nothing to judge is no green PASS.
			verdict := &report.CheckReport{FailOn: check.Error, Rules: check.Rules(), FailOnDamage: true}
			verdict.Add(report.NewCheckFile(displayName(name), eng.Snapshot(), res, nil))
			verdict.Judge(report.GateOptions{})
			a.AddChecks(res)
			if runErr == errInterrupted {
				// Reported as such and not a failure, as for analyze
				// (interrupt.go).
				a.Interrupted, runErr = true, nil
				a.Errors = append(a.Errors, fmt.Sprintf("%s after %s", errInterrupted, report.Plural(int(eng.Stats.Packets), "packet")))
			}
			if runErr != nil {
				a.Errors = append(a.Errors, runErr.Error())
			}
			warn(cmd, eng)
			page, err := htmlreport.Build(a, col)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			page.SetCheck(verdict.Failed, verdict.Summary.NothingToJudge, gateReason(verdict))
			write := func(w io.Writer) error { return page.Write(w) }
			if err := writeOutput(cmd, output, []string{name}, write); err != nil {
				return &exitError{exitUsage, fmt.Errorf("-o %s: %w", output, err)}
			}
			return runErr
		},
	}
	in.bind(cmd)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "write the HTML report to this file, - for standard output (default: standard output, or NAME.html when it is a terminal)")
	f.IntVar(&opts.MaxDetail, "max-detail", htmlreport.DefaultMaxDetail,
		"RPC transactions, or exchanges of another ULP (RDMA messages on connections without one), drawn per connection; the rest are counted")
	f.IntVar(&maxConn, "max-diagrams", htmlreport.DefaultMaxConnections, "connections that get a diagram (the overview lists every connection)")
	f.IntVar(&opts.LatencySample, "latency-sample", htmlreport.DefaultLatencySample,
		"latencies kept per procedure for the distribution and percentiles (past it, a uniform sample)")
	return cmd
}

// gateReason says why check's verdict on rep is not a pass: the first
// failed gate assertion's message, else the count of findings at or
// above --fail-on.
func gateReason(rep *report.CheckReport) string {
	for _, g := range rep.Gate {
		if g.Status == report.GateFailed {
			return g.ID + ": " + g.Message
		}
	}
	if n := rep.Summary.AtOrAboveFailOn; n > 0 {
		return fmt.Sprintf("%d findings at or above error", n)
	}
	return ""
}

// reportFileName is the file report writes to when standard output is a
// terminal: the capture's base name with .html for its extensions
// (rxe-nfs3.pcap.gz: rxe-nfs3.html), "stdin.html" for standard input.
func reportFileName(capture string) string {
	base := filepath.Base(capture)
	if capture == "-" || capture == "" {
		base = "stdin"
	}
	for _, ext := range []string{".gz", ".zst", ".xz", ".bz2", ".lz4", ".pcapng", ".pcap", ".cap", ".erf"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".html"
}
