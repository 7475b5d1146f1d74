package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

func newTransactionsCmd(g *globalFlags) *cobra.Command {
	var (
		in     inputs
		wide   bool
		format string
		conn   int
		xid    string
		proc   string
		max    int
	)
	cmd := &cobra.Command{
		Use:   "transactions [FILE|DIR|GLOB]...",
		Short: "List the RPC transactions of the RPC-over-RDMA connections: Call, Reply, chunks, RDMA Reads and Writes",
		Long: `transactions reads a capture and prints one row per RPC transaction of its
RPC-over-RDMA connections: XID, connection, direction (forward or
backchannel), program, version and procedure, the Call's and the Reply's
packets, rdma_proc and credits, the chunks the Call advertised with the RDMA
Reads and Writes that moved them, the bytes moved by RDMA, the STag a Send
With Invalidate invalidated, and the time from Call to Reply. A Call whose
Reply is not in the capture has no Reply ("reply": null in JSON).

Transactions are kept as they finish, in a compact form; --max bounds how
many (the count of those left out is reported). Past 4096 of them, they are
sorted in runs written to an unlinked temporary file ($TMPDIR), so memory
stays flat on captures of any length; the output is the same. When $TMPDIR
is full, the rest is kept in memory, as analyze, check and report do.

Several captures (files, directories searched recursively, globs, -r) are
read --jobs at a time and listed one after the other in the order given;
--max bounds each capture's list. With --format json and more than one
capture the output is a JSON array of the one-capture documents.

--format jsonl streams instead: each transaction is written as one JSON
object on a line (the JSON document's transaction, with the capture's name
in "file") the moment it ends — its Reply seen, its Call evicted, or the
capture over — so nothing is kept and a live pipe is listed as it is read
(tcpdump -w - ... | rdmashark transactions --format jsonl -). Lines come in
the order transactions end, not of their Calls; captures are read one after
the other; the engine's counters are left to analyze.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			if format != "table" && format != "json" && format != "jsonl" {
				return usageErr("--format must be table, json or jsonl, not %q", format)
			}
			var f report.TxnFilter
			f.Connection = conn
			f.Procedure = proc
			if xid != "" {
				v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(xid), "0x"), 16, 32)
				if err != nil {
					return usageErr("--xid takes a hexadecimal XID such as 0x3cfb4714, not %q", xid)
				}
				x := uint32(v)
				f.XID = &x
			}
			if format == "jsonl" {
				return streamTransactions(cmd, g, names, max, f) // one capture after the other
			}
			g.concurrent = min(in.jobs, len(names))
			work := func(i int) docResult[*report.TransactionList] {
				f := f
				if f.Procedure != "" {
					f.Tally = &report.ProcedureTally{}
				}
				list := report.NewTransactionList(displayName(names[i]), max, f)
				eng, runErr := runTransactions(cmd, g, names[i], list)
				if eng == nil {
					return docResult[*report.TransactionList]{runErr: runErr}
				}
				if runErr == errInterrupted {
					list.Errors = append(list.Errors, fmt.Sprintf("%s after %s", errInterrupted, report.Plural(int(eng.Stats.Packets), "packet")))
					runErr = nil
				}
				if conn != 0 && !eng.Conns.Seen(conn) {
					// As analyze and check: a connection the capture does
					// not have is a mistake in the command, not 0 rows.
					return docResult[*report.TransactionList]{runErr: usageErr("--connection %d: no such connection in %s", conn, names[i])}
				}
				if err := procedureAbsent(f, runErr, names[i]); err != nil {
					return docResult[*report.TransactionList]{runErr: err}
				}
				if runErr != nil {
					list.Errors = append(list.Errors, runErr.Error())
				}
				list.SetCounters(snapshot(eng))
				list.Sort()
				return docResult[*report.TransactionList]{list, true, warnText(eng), runErr}
			}
			return writeDocuments(cmd, names, in.jobs, format, g.layout(cmd, wide), work, func(i int, err error) *report.TransactionList {
				l := report.NewTransactionList(names[i], max, f)
				l.Errors = []string{err.Error()}
				return l
			})
		},
	}
	in.bind(cmd)
	bindWide(cmd, &wide)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json, or jsonl (one line per transaction, written as it ends)")
	cmd.Flags().IntVar(&conn, "connection", 0, "only this connection (its ID, as analyze numbers them)")
	cmd.Flags().StringVar(&xid, "xid", "", "only this XID (hexadecimal)")
	cmd.Flags().StringVar(&proc, "procedure", "", "only this procedure: its number, its name, or an NFSv4 operation")
	cmd.Flags().IntVar(&max, "max", report.DefaultMaxTransactions, "keep at most this many transactions")
	return cmd
}

// runTransactions reads the capture with an engine that hands each finished
// transaction to list (through RPC-over-RDMA's presentation, which
// converts it: the transactions command is the plug-in's own view).
func runTransactions(cmd *cobra.Command, g *globalFlags, name string, list *report.TransactionList) (*dissect.Engine, error) {
	return runEngine(cmd, g, name, engineRun{opts: dissect.Options{ForgetReleased: true}, txn: rpcpresent.ListTransactions(list)})
}

// streamTransactions is --format jsonl: the captures one after the other,
// each transaction written as it ends, flushed whenever the input would
// block. An unreadable capture is said on standard error and the others
// are read; an interrupted one ends the listing.
func streamTransactions(cmd *cobra.Command, g *globalFlags, names []string, max int, f report.TxnFilter) error {
	stderr := cmd.ErrOrStderr()
	var errs []error
	for _, name := range names {
		f := f
		if f.Procedure != "" {
			f.Tally = &report.ProcedureTally{}
		}
		s := report.NewTransactionStream(cmd.OutOrStdout(), displayName(name), max, f)
		// A write error (a closed pipe) stops the read at the next packet.
		eng, runErr := runEngine(cmd, g, name, engineRun{opts: dissect.Options{ForgetReleased: true}, txn: rpcpresent.StreamTransactions(s),
			each: func(*dissect.Packet) error { return s.Err() }, flush: s.Flush})
		if err := s.Flush(); err != nil {
			return err
		}
		if eng != nil {
			fmt.Fprint(stderr, warnText(eng))
			if f.Connection != 0 && runErr == nil && !eng.Conns.Seen(f.Connection) {
				runErr = usageErr("--connection %d: no such connection in %s", f.Connection, name)
			}
			if err := procedureAbsent(f, runErr, name); err != nil {
				runErr = err
			}
		}
		if n := s.Omitted(); n > 0 {
			fmt.Fprintf(stderr, "rdmashark: %s: %d more transactions past --max %d not listed\n", printable(s.File), n, max)
		}
		if runErr == errInterrupted {
			n := uint64(0)
			if eng != nil {
				n = eng.Stats.Packets
			}
			fmt.Fprintf(stderr, "rdmashark: %s: %s after %s\n", printable(s.File), errInterrupted, report.Plural(int(n), "packet"))
			break
		}
		if runErr != nil && len(names) > 1 {
			fmt.Fprintln(stderr, "rdmashark:", errText(unwrapExit(runErr)))
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

// procedureAbsent is the error for a --procedure no transaction of the
// capture had (a typo, or the wrong capture): as for --connection, a
// mistake in the command, not 0 rows. It names the procedures the capture
// had. Nil when something matched, no --procedure was given, or the read
// failed anyway.
func procedureAbsent(f report.TxnFilter, runErr error, name string) error {
	if f.Tally == nil || f.Tally.Matched > 0 || runErr != nil && runErr != errInterrupted {
		return nil
	}
	seen := "none"
	if len(f.Tally.Names) > 0 {
		slices.Sort(f.Tally.Names)
		seen = strings.Join(f.Tally.Names, ", ")
	}
	return usageErr("--procedure %s: no transaction of that procedure in %s (its procedures: %s)", printable(f.Procedure), name, seen)
}
