package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

func newTransactionsCmd(g *globalFlags) *cobra.Command {
	var (
		in     inputs
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
stays flat on captures of any length; the output is the same.

Several captures (files, directories searched recursively, globs, -r) are
read --jobs at a time and listed one after the other in the order given;
--max bounds each capture's list. With --format json and more than one
capture the output is a JSON array of the one-capture documents.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			if format != "table" && format != "json" {
				return usageErr("--format must be table or json, not %q", format)
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
			type result struct {
				list   *report.TransactionList
				warn   string
				runErr error
			}
			work := func(i int) result {
				list := report.NewTransactionList(displayName(names[i]), max, f)
				eng, runErr := runTransactions(cmd, g, names[i], list)
				if eng == nil {
					return result{runErr: runErr}
				}
				if runErr == errInterrupted {
					list.Errors = append(list.Errors, fmt.Sprintf("%s after %d packets", errInterrupted, eng.Stats.Packets))
					runErr = nil
				}
				if runErr != nil {
					list.Errors = append(list.Errors, runErr.Error())
				}
				list.SetCounters(snapshot(eng))
				list.Sort()
				return result{list, warnText(eng), runErr}
			}
			out := cmd.OutOrStdout()
			many := len(names) > 1
			var errs []error
			if many && format == "json" {
				fmt.Fprint(out, "[\n")
			}
			werr := forEachOrdered(len(names), in.jobs, work, func(i int, r result) error {
				fmt.Fprint(cmd.ErrOrStderr(), r.warn)
				errs = append(errs, r.runErr)
				if r.list == nil {
					if !many {
						return nil
					}
					fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", unwrapExit(r.runErr))
					r.list = report.NewTransactionList(names[i], max, f)
					r.list.Errors = []string{unwrapExit(r.runErr).Error()}
				} else if many && r.runErr != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", unwrapExit(r.runErr))
				}
				defer r.list.Close() // its temporary file, if any
				if format == "json" {
					if many && i > 0 {
						fmt.Fprint(out, ",\n")
					}
					return r.list.WriteJSON(out)
				}
				if many && i > 0 {
					fmt.Fprintln(out)
				}
				return r.list.WriteTable(out)
			})
			if werr == nil && many && format == "json" {
				_, werr = fmt.Fprint(out, "]\n")
			}
			if werr != nil {
				return werr
			}
			if many {
				if bad := countErrs(errs); bad > 0 {
					return multiNote(exitUsage, bad, len(names))
				}
				return nil
			}
			return errs[0]
		},
	}
	in.bind(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().IntVar(&conn, "connection", 0, "only this connection (its ID, as analyze numbers them)")
	cmd.Flags().StringVar(&xid, "xid", "", "only this XID (hexadecimal)")
	cmd.Flags().StringVar(&proc, "procedure", "", "only this procedure: its number, its name, or an NFSv4 operation")
	cmd.Flags().IntVar(&max, "max", report.DefaultMaxTransactions, "keep at most this many transactions")
	return cmd
}

// runTransactions reads the capture with an engine that hands each finished
// transaction to list.
func runTransactions(cmd *cobra.Command, g *globalFlags, name string, list *report.TransactionList) (*dissect.Engine, error) {
	return runEngineOpts(cmd, g, name, dissect.Options{Transaction: list.Add}, nil)
}
