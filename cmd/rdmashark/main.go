// Command rdmashark dissects and analyses RDMA packet captures: RoCE,
// InfiniBand and iWARP, their connection set-up and private data, and the
// RPC-over-RDMA traffic they carry.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/dissect"
)

// Exit statuses (docs/architecture.md, "Output contracts").
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2 // unreadable input or bad flags
)

// exitError carries an exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == captureChildArg {
		return runCaptureChild(args[1:]) // capture_run.go
	}
	ctx, stop := interruptContext(context.Background())
	defer stop()
	return runContext(ctx, args, stdin, stdout, stderr)
}

// runContext is run with a context whose end stands for a signal.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot()
	args = bareTshark(root, args) // rdmashark -r FILE: dissect (tshark_flags.go)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "rdmashark:", errText(ee.err))
			if s := suggest(root, args, ee.err.Error()); s != "" {
				fmt.Fprintln(stderr, "rdmashark:", s)
			}
		}
		return ee.code
	}
	// cobra's own flag and argument errors.
	fmt.Fprintln(stderr, "rdmashark:", errText(err))
	if s := suggest(root, args, err.Error()); s != "" {
		fmt.Fprintln(stderr, "rdmashark:", s)
	}
	return exitUsage
}

// DefaultIdleTimeout is --idle-timeout's default, the same for files,
// standard input and live capture so that their analyses agree: longer
// than a connection stays quiet while it is in use (NFSv4 renews its lease
// within its 90 s default; Linux's RPC client itself disconnects a
// transport idle for 5 minutes), short enough that an endless stream lets
// go of connections whose close was never captured (docs/streaming.md).
const DefaultIdleTimeout = 10 * time.Minute

// globalFlags are the flags every subcommand shares.
type globalFlags struct {
	rocePort       uint16
	maxConnections int
	maxBuffered    byteSize
	idleTimeout    time.Duration
	pipeline       string
	// concurrent is how many captures the command reads at once (--jobs,
	// at most the captures given); 0 or 1 for one.
	concurrent int
	// term: --color and -q (term.go).
	term termFlags
}

// check rejects limits that cannot be meant: 0 or less used to fall back
// silently to the default (issue 13).
func (g *globalFlags) check() error {
	if g.maxBuffered <= 0 {
		return usageErr("--max-buffered must be positive (got %d)", int64(g.maxBuffered))
	}
	if g.maxConnections <= 0 {
		return usageErr("--max-connections must be positive (got %d)", g.maxConnections)
	}
	if g.idleTimeout < 0 {
		return usageErr("--idle-timeout must not be negative (0: never)")
	}
	if err := g.term.check(); err != nil {
		return err
	}
	setMemoryLimit(int64(g.maxBuffered), g.maxConnections)
	return nil
}

// engineOptions sets the options the global flags choose.
func (g *globalFlags) engineOptions(opts *dissect.Options) {
	opts.RoCEPort = g.rocePort
	opts.MaxConnections = g.maxConnections
	opts.MaxBufferedBytes = int(g.maxBuffered)
	opts.IdleTimeout = g.idleTimeout
	// The upper-layer protocols, fresh for each engine (ulps.go).
	opts.ULPs = newULPs()
	opts.Pipeline, _ = dissect.ParsePipelineMode(g.pipeline) // checked in PersistentPreRunE
	if opts.Pipeline == dissect.PipelineAuto && g.concurrent > 1 && 2*g.concurrent > runtime.GOMAXPROCS(0) {
		// Several captures read at once keep the CPUs busy already: the
		// pipeline's second goroutine would only add its overhead.
		opts.Pipeline = dissect.PipelineOff
	}
}

func newRoot() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "rdmashark",
		Short: "Dissect and analyse RDMA packet captures (RoCE, InfiniBand, iWARP, RPC-over-RDMA)",
		Long: `rdmashark reads pcap and pcapng captures of RDMA traffic — RoCEv2, RoCEv1,
native InfiniBand, iWARP — and tells what each connection negotiated (RFC 8797
private data, inline thresholds, remote invalidation) and what every packet is.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("rdmashark {{.Version}}\n")
	root.PersistentFlags().Uint16Var(&g.rocePort, "roce-port", dissect.DefaultRoCEPort, "UDP destination port that carries RoCEv2")
	root.PersistentFlags().IntVar(&g.maxConnections, "max-connections", dissect.DefaultMaxConnections,
		"connections tracked at once, live ones and the summaries of closed ones (a full table forgets the oldest closed summary; must be positive)")
	g.maxBuffered = dissect.DefaultMaxBufferedBytes
	root.PersistentFlags().Var(&g.maxBuffered, "max-buffered",
		"bytes all reassembly buffers and open exchanges (1 KiB each) may hold together (bytes, or 64MiB, 1GiB...; must be positive); past it the largest message or RDMA operation in progress is handed up truncated and the oldest open request given up. It also sets the Go runtime's memory limit: peak RSS stays within it + 48MiB + 12KiB per --max-connections (docs/streaming.md)")
	root.PersistentFlags().DurationVar(&g.idleTimeout, "idle-timeout", DefaultIdleTimeout,
		"release a connection that saw no packet for this long in capture time, as if it had closed (0: never)")
	root.PersistentFlags().StringVar(&g.pipeline, "pipeline", "auto",
		"read the capture and verify its CRCs on a goroutine of their own, ahead of the connection engine: auto, on or off; the output is the same. auto (the default) is on when Go may use more than one CPU, the capture is a regular file and no other capture is read at the same time (--jobs): measured, two CPUs then read a capture ~25% faster than one, for ~12% more CPU time (docs/speed.md)")
	g.term.bind(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if _, err := dissect.ParsePipelineMode(g.pipeline); err != nil {
			return usageErr("--pipeline: %v", err)
		}
		return g.check()
	}
	root.AddCommand(newDissectCmd(g), newAnalyzeCmd(g), newCaptureCmd(g), newTransactionsCmd(g), newExchangesCmd(g), newStatsCmd(g), newCheckCmd(g), newRulesCmd(), newVersionCmd(), newManCmd(), newReportCmd(g), newExportCmd(g), newDiffCmd(g))
	registerCompletions(root)
	addExamples(root)
	wrapHelp(root)
	return root
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rdmashark's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "rdmashark", versionString())
		},
	}
}
