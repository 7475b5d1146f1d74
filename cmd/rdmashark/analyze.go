package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/dissect/source"
	"github.com/rdmashark/rdmashark/report"
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

// runEngine reads the capture through a new engine. A capture that cannot
// be opened is a usage error; an error part-way is returned with the engine,
// which holds everything read before it.
func runEngine(cmd *cobra.Command, g *globalFlags, name string, count int, each func(*dissect.Packet) error) (*dissect.Engine, error) {
	return runEngineOpts(cmd, g, name, dissect.Options{Count: count}, each)
}

// runEngineOpts is runEngine with engine options (an Observer, limits);
// the RoCE port comes from the flags.
func runEngineOpts(cmd *cobra.Command, g *globalFlags, name string, opts dissect.Options, each func(*dissect.Packet) error) (*dissect.Engine, error) {
	return runEngineFlush(cmd, g, name, opts, each, nil)
}

// runEngineFlush is runEngineOpts for a command that prints as packets come
// (dissect). Reading standard input — a pipe from tcpdump -w -, a live
// stream — flush is called each time the engine is about to wait for more
// input, so that what it printed of the packets so far goes out at once,
// not when a buffer fills or the input ends. (That is each time the capture
// reader's buffer runs dry: at most once per read of the input, never once
// per packet when packets arrive faster than they are printed.) Reading a
// file, output goes out as its buffer fills.
func runEngineFlush(cmd *cobra.Command, g *globalFlags, name string, opts dissect.Options, each func(*dissect.Packet) error, flush func() error) (*dissect.Engine, error) {
	var (
		r   *source.Reader
		err error
	)
	if name == "-" {
		var in io.Reader = cmd.InOrStdin()
		if flush != nil {
			in = flushingReader{in, flush}
		}
		r, err = source.NewReader(in, "<stdin>")
	} else {
		r, err = source.Open(name)
	}
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	defer r.Close()
	if err := supported(r); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	g.engineOptions(&opts)
	eng := dissect.NewEngine(opts)
	if err := eng.Run(r, each); err != nil {
		return eng, &exitError{exitUsage, err}
	}
	return eng, nil
}

func newAnalyzeCmd(g *globalFlags) *cobra.Command {
	var in input
	var format string
	var conn int
	cmd := &cobra.Command{
		Use:   "analyze [FILE]",
		Short: "Report the connections of a capture: set-up, private data, negotiated inline thresholds",
		Long: `analyze reads a capture and reports every RDMA connection in it: endpoints and
queue pairs, service port, state, each side's RFC 8797 private data and R bit,
the negotiated client-to-server and server-to-client inline thresholds, and
packets and bytes each way; then the protocol counts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := in.name(args)
			if err != nil {
				return err
			}
			if format != "table" && format != "json" {
				return usageErr("--format must be table or json, not %q", format)
			}
			var opts dissect.Options
			checks, each := withChecks(check.Config{}, &opts, nil)
			eng, runErr := runEngineOpts(cmd, g, name, opts, each)
			if eng == nil {
				return runErr
			}
			a := report.NewAnalysis(name, eng)
			res := checks.Finish(eng.Conns.Connections())
			res.NoteLoss(0, eng.Stats.Skipped)
			a.AddChecks(res)
			if conn != 0 && !narrowAnalysis(a, conn) {
				return usageErr("--connection %d: no such connection in %s", conn, name)
			}
			if runErr != nil {
				a.Errors = append(a.Errors, runErr.Error())
			}
			warn(cmd, eng)
			out := cmd.OutOrStdout()
			var werr error
			if format == "json" {
				werr = a.WriteJSON(out)
			} else {
				werr = a.WriteTable(out)
			}
			if runErr != nil {
				return runErr
			}
			return werr
		},
	}
	in.bind(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().IntVar(&conn, "connection", 0, "report only this connection (its ID, as analyze numbers them); packet and protocol counts stay the capture's")
	return cmd
}

// flushingReader calls flush before each read of r. The capture reader
// reads only when its buffers hold no more of the input: the engine has
// processed every packet it was given and is about to wait for the next.
// A failed flush is not a read error: the writer keeps its error and
// reports it with the next packet or at the end.
type flushingReader struct {
	r     io.Reader
	flush func() error
}

func (f flushingReader) Read(p []byte) (int, error) {
	_ = f.flush()
	return f.r.Read(p)
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
	for _, w := range eng.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark: warning:", w)
	}
	if n := eng.Stats.Skipped; n > uint64(len(eng.Warnings)) {
		fmt.Fprintf(cmd.ErrOrStderr(), "rdmashark: warning: %d damaged records skipped in all\n", n)
	}
}
