package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

func newExchangesCmd(g *globalFlags) *cobra.Command {
	var (
		in     inputs
		wide   bool
		format string
		conn   int
		ulp    string
		max    int
	)
	cmd := &cobra.Command{
		Use:   "exchanges [FILE|DIR|GLOB]...",
		Short: "List the requests and responses of every upper-layer protocol: key, name, status, packets, latency, RDMA bytes",
		Long: `exchanges reads a capture and prints one line per exchange — a request and
its response — of every upper-layer protocol the engine knows (today
RPC-over-RDMA, "rpcordma": an RPC Call and its Reply): the protocol, the
connection, the key that pairs request and response (the XID as 0x%08x for
rpcordma), the direction of the request, what it asked for, the response's
status, the request's and the response's packets, the latency, the bytes
moved by the RDMA Reads and Writes attached to the request, and the STag a
Send With Invalidate invalidated. An exchange whose response (or request)
is not in the capture has none ("response_packet": null in JSON) and says
why in "outcome". transactions is RPC-over-RDMA's own, more detailed view
of the same exchanges.

Exchanges are kept as they end, in a compact form; --max bounds how many
(the count of those left out is reported). Past 4096 of them, they are
sorted in runs written to an unlinked temporary file ($TMPDIR), so memory
stays flat on captures of any length; the output is the same. They are
listed in the order of their requests' packets (of the response's for a
response without its request).

Several captures (files, directories searched recursively, globs, -r) are
read --jobs at a time and listed one after the other in the order given;
--max bounds each capture's list. With --format json and more than one
capture the output is a JSON array of the one-capture documents.

--format jsonl streams instead: each exchange is written as one JSON object
on a line (the JSON document's exchange, with the capture's name in
"file") the moment it ends, so nothing is kept and a live pipe is listed as
it is read. Lines come in the order exchanges end, not of their requests.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			if format != "table" && format != "json" && format != "jsonl" {
				return usageErr("--format must be table, json or jsonl, not %q", format)
			}
			f := report.ExchFilter{Connection: conn, ULP: ulp}
			if format == "jsonl" {
				return streamExchanges(cmd, g, names, max, f)
			}
			g.concurrent = min(in.jobs, len(names))
			work := func(i int) docResult[*report.ExchangeList] {
				list := report.NewExchangeList(displayName(names[i]), max, f)
				eng, runErr := runEngine(cmd, g, names[i], engineRun{opts: dissect.Options{Exchange: list.Add, ForgetReleased: true}})
				if eng == nil {
					_ = list.Close()
					return docResult[*report.ExchangeList]{runErr: runErr}
				}
				if runErr == errInterrupted {
					list.Errors = append(list.Errors, fmt.Sprintf("%s after %s", errInterrupted, report.Plural(int(eng.Stats.Packets), "packet")))
					runErr = nil
				}
				if runErr != nil {
					list.Errors = append(list.Errors, runErr.Error())
				}
				return docResult[*report.ExchangeList]{list, true, warnText(eng), runErr}
			}
			return writeDocuments(cmd, names, in.jobs, format, g.layout(cmd, wide), work, func(i int, err error) *report.ExchangeList {
				l := report.NewExchangeList(names[i], max, f)
				l.Errors = []string{err.Error()}
				return l
			})
		},
	}
	in.bind(cmd)
	bindWide(cmd, &wide)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json, or jsonl (one line per exchange, written as it ends)")
	cmd.Flags().IntVar(&conn, "connection", 0, "only this connection (its ID, as analyze numbers them)")
	cmd.Flags().StringVar(&ulp, "ulp", "", "only this upper-layer protocol (rpcordma)")
	cmd.Flags().IntVar(&max, "max", report.DefaultMaxExchanges, "keep at most this many exchanges")
	return cmd
}

// streamExchanges is --format jsonl: the captures one after the other,
// each exchange written as it ends, flushed whenever the input would
// block. An unreadable capture is said on standard error and the others
// are read; an interrupted one ends the listing.
func streamExchanges(cmd *cobra.Command, g *globalFlags, names []string, max int, f report.ExchFilter) error {
	stderr := cmd.ErrOrStderr()
	var errs []error
	for _, name := range names {
		s := report.NewExchangeStream(cmd.OutOrStdout(), displayName(name), max, f)
		eng, runErr := runEngine(cmd, g, name, engineRun{opts: dissect.Options{Exchange: s.Add, ForgetReleased: true},
			each: func(*dissect.Packet) error { return s.Err() }, flush: s.Flush})
		if err := s.Flush(); err != nil {
			return err
		}
		if eng != nil {
			fmt.Fprint(stderr, warnText(eng))
		}
		if n := s.Omitted(); n > 0 {
			fmt.Fprintf(stderr, "rdmashark: %s: %d more exchanges past --max %d not listed\n", s.File, n, max)
		}
		if runErr == errInterrupted {
			n := uint64(0)
			if eng != nil {
				n = eng.Stats.Packets
			}
			fmt.Fprintf(stderr, "rdmashark: %s: %s after %s\n", s.File, errInterrupted, report.Plural(int(n), "packet"))
			break
		}
		if runErr != nil && len(names) > 1 {
			fmt.Fprintln(stderr, "rdmashark:", unwrapExit(runErr))
		}
		errs = append(errs, runErr)
	}
	if len(names) > 1 {
		if bad := countErrs(errs); bad > 0 {
			return multiNote(exitUsage, bad, len(names))
		}
		return nil
	}
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
