package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// input is the capture a command reads: -r FILE, or the one positional
// argument, "-" meaning standard input.
type input struct {
	read string
}

func (in *input) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&in.read, "read", "r", "", `capture file to read ("-" for standard input)`)
}

func (in *input) name(args []string) (string, error) {
	switch {
	case in.read != "" && len(args) > 0:
		return "", usageErr("give the capture either with -r or as an argument, not both")
	case in.read != "":
		return in.read, nil
	case len(args) == 1:
		return args[0], nil
	case len(args) > 1:
		return "", usageErr("one capture file at a time (got %d)", len(args))
	}
	return "", usageErr("no capture file: give one as an argument or with -r (\"-\" reads standard input)")
}

// engineRun is what a command asks of runEngine besides the capture: the
// engine's options (an Observer, limits; the RoCE port and the other
// global flags are added from the flags), each, called with every packet
// (nil: nothing per packet), and for the commands that need them:
//   - flush, for a command that prints as packets come (dissect,
//     transactions --format jsonl). Reading standard input — a pipe from
//     tcpdump -w -, a live stream — it is called each time the engine is
//     about to wait for more input, so that what was printed of the
//     packets so far goes out at once, not when a buffer fills or the
//     input ends. (That is each time the capture reader's buffer runs dry:
//     at most once per read of the input, never once per packet when
//     packets arrive faster than they are printed.) Reading a file, output
//     goes out as its buffer fills.
//   - opened, handed the opened capture before any packet is read:
//     dissect -w reads the input's interfaces (names, snap lengths) from
//     it.
type engineRun struct {
	opts dissect.Options
	// txn hears every RPC-over-RDMA transaction once it is over
	// (rpcordma.OnTransaction).
	txn    func(*rpcordma.Transaction)
	each   func(*dissect.Packet) error
	flush  func() error
	opened func(*source.Reader)
}

// runEngine reads the capture name (a file, "-" for standard input, a
// FIFO) through an engine as run says, stopping at a signal
// (errInterrupted); the engine is returned with what it read even then.
func runEngine(cmd *cobra.Command, g *globalFlags, name string, run engineRun) (*dissect.Engine, error) {
	opts, each, flush, opened := run.opts, run.each, run.flush, run.opened
	var (
		r   *source.Reader
		err error
	)
	// A signal stops the read (interrupt.go): at the next packet, or at
	// once while a read waits on a pipe, FIFO or terminal.
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	perPacket := false // a regular file: stop at the next packet
	var prog *progress
	switch {
	case name == "-":
		var in io.Reader = newCtxReader(ctx, cmd.InOrStdin(), nil)
		if flush != nil {
			// A failed flush is not a read error: the writer keeps its
			// error and reports it with the next packet or at the end.
			opts.BeforeWait = func() { _ = flush() }
		}
		r, err = source.NewReader(in, source.StdinName)
	case waitsForever(name):
		cr := newCtxReader(ctx, nil, func() (io.ReadCloser, error) { return os.Open(name) })
		defer cr.Close()
		r, err = source.NewReader(cr, name)
	default:
		// On a terminal, the read of a file shows its progress on
		// standard error (progress.go).
		if f, p := openProgress(cmd, name); f != nil {
			defer f.Close()
			defer p.end()
			prog = p
			r, err = source.NewReader(f, name)
		} else {
			r, err = source.Open(name)
		}
		perPacket = true
	}
	if errors.Is(err, errInterrupted) {
		return nil, errInterrupted
	}
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	defer r.Close()
	if err := supported(r); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	if opened != nil {
		opened(r)
	}
	g.engineOptions(&opts)
	if run.txn != nil {
		rpcordma.OnTransaction(opts.ULPs, run.txn)
	}
	eng := dissect.NewEngine(opts)
	stopped, release := interruptFlag(ctx)
	defer release()
	step := func(p *dissect.Packet) error {
		// The engine has taken the packet: the command sees it too, so
		// that "after N packets" counts what every output shows.
		prog.packet()
		if each != nil {
			if err := each(p); err != nil {
				return err
			}
		}
		if perPacket && stopped.Load() {
			return errInterrupted
		}
		return nil
	}
	if each != nil && prog == nil && perPacket {
		// A file read without a progress line, the usual case: the same
		// in fewer instructions a packet.
		step = func(p *dissect.Packet) error {
			if err := each(p); err != nil || !stopped.Load() {
				return err
			}
			return errInterrupted
		}
	}
	err = eng.Run(r, step)
	if errors.Is(err, errInterrupted) {
		err = errInterrupted
	}
	if n, first := r.OverSnapLen(); n > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "rdmashark: warning: %s: %d records longer than the capture's snap length, the first packet %d; read as they are\n", printable(r.Name()), n, first)
	}
	if err != nil && err != errInterrupted {
		return eng, &exitError{exitUsage, err}
	}
	return eng, err
}

// displayName is the name a report gives the capture: standard input
// ("-") is source.StdinName there as in errors.
func displayName(name string) string {
	if name == "-" {
		return source.StdinName
	}
	return name
}

func newAnalyzeCmd(g *globalFlags) *cobra.Command {
	var in inputs
	var wide bool
	var format string
	var interval time.Duration
	var conn int
	cmd := &cobra.Command{
		Use:   "analyze [FILE|DIR|GLOB]...",
		Short: "Report the connections of a capture: set-up, private data, negotiated inline thresholds",
		Long: `analyze reads a capture and reports every RDMA connection in it: endpoints and
queue pairs, service port, state, each side's RFC 8797 private data and R bit,
the negotiated client-to-server and server-to-client inline thresholds, and
packets and bytes each way; then the protocol counts.

Several captures (files, directories searched recursively, globs, -r) are
read --jobs at a time, each by its own engine, and reported one after the
other in the order given. With --format json and more than one capture the
output is a JSON array of the one-capture documents, in that order.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			g.concurrent = min(in.jobs, len(names))
			if format != "table" && format != "json" {
				return usageErr("--format must be table or json, not %q", format)
			}
			if interval <= 0 {
				return usageErr("--interval must be positive, not %s", interval)
			}
			work := func(i int) docResult[*report.Analysis] {
				opts := dissect.Options{HealthInterval: interval}
				// Connections released during the read leave memory as
				// they go (report/analyze_spill.go); with --connection
				// only that one is read back.
				spill := report.NewConnSpill()
				if conn != 0 {
					spill.Only(conn)
				}
				opts.Observer = spill
				checks, each := withChecks(check.Config{}, &opts, nil)
				spill.SetRunner(checks)
				eng, runErr := runEngine(cmd, g, names[i], engineRun{opts: opts, each: each})
				if eng == nil {
					spill.Close()
					return docResult[*report.Analysis]{runErr: runErr}
				}
				a := spill.Analysis(displayName(names[i]), snapshot(eng))
				if runErr == errInterrupted {
					// Reported as such; like capture's Ctrl-C, not a failure.
					a.Interrupted, runErr = true, nil
				}
				res := checks.Finish(eng.Conns.Connections())
				res.NoteLoss(eng.Stats.Dropped, eng.Stats.Skipped)
				a.AddChecks(res)
				if conn != 0 && !a.Narrow(conn) {
					return docResult[*report.Analysis]{runErr: usageErr("--connection %d: no such connection in %s", conn, names[i])}
				}
				if runErr != nil {
					a.Errors = append(a.Errors, runErr.Error())
				}
				return docResult[*report.Analysis]{a, true, warnText(eng), runErr}
			}
			return writeDocuments(cmd, names, in.jobs, format, g.layout(cmd, wide), work, func(i int, err error) *report.Analysis {
				return &report.Analysis{File: names[i], Connections: []report.Connection{}, Findings: []report.Finding{},
					Errors: []string{err.Error()}}
			})
		},
	}
	in.bind(cmd)
	bindWide(cmd, &wide)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().DurationVar(&interval, "interval", dissect.DefaultHealthInterval, "throughput interval of the transport health")
	cmd.Flags().IntVar(&conn, "connection", 0, "report only this connection (its ID, as analyze numbers them); packet and protocol counts stay the capture's")
	return cmd
}

// supported fails when none of the capture's link types is one rdmashark
// reads; a pcapng file that mixes supported and unsupported interfaces is
// read, the other interfaces' packets shown as undecoded.
func supported(r *source.Reader) error {
	var first error
	for _, lt := range r.LinkTypes() {
		err := source.Supported(lt)
		if err == nil {
			return nil
		}
		if first == nil {
			first = fmt.Errorf("%s: %w", r.Name(), err)
		}
	}
	return first
}

// warn prints the records skipped without stopping the read.
func warn(cmd *cobra.Command, eng *dissect.Engine) {
	fmt.Fprint(cmd.ErrOrStderr(), warnText(eng))
}

// warnText is what warn prints, for a command that prints it later (after
// the captures read before it in parallel).
func warnText(eng *dissect.Engine) string {
	var b strings.Builder
	for _, w := range eng.Warnings {
		fmt.Fprintln(&b, "rdmashark: warning:", errText(w))
	}
	if n := eng.Stats.Skipped; n > uint64(len(eng.Warnings)) {
		fmt.Fprintf(&b, "rdmashark: warning: %d damaged records skipped in all\n", n)
	}
	return b.String()
}

// snapshot is what the reports take of an engine: its Snapshot, nil when
// there is no engine (the capture did not open).
func snapshot(eng *dissect.Engine) *dissect.Snapshot {
	if eng == nil {
		return nil
	}
	return eng.Snapshot()
}
