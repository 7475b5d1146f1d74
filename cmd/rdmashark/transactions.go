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
		in     input
		format string
		conn   int
		xid    string
		proc   string
		max    int
	)
	cmd := &cobra.Command{
		Use:   "transactions [FILE]",
		Short: "List the RPC transactions of the RPC-over-RDMA connections: Call, Reply, chunks, RDMA Reads and Writes",
		Long: `transactions reads a capture and prints one row per RPC transaction of its
RPC-over-RDMA connections: XID, connection, direction (forward or
backchannel), program, version and procedure, the Call's and the Reply's
packets, rdma_proc and credits, the chunks the Call advertised with the RDMA
Reads and Writes that moved them, the bytes moved by RDMA, the STag a Send
With Invalidate invalidated, and the time from Call to Reply. A Call whose
Reply is not in the capture has no Reply ("reply": null in JSON).

Transactions are kept as they finish, in a compact form; --max bounds how
many (the count of those left out is reported).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := in.name(args)
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
			list := report.NewTransactionList(displayName(name), max, f)
			eng, runErr := runTransactions(cmd, g, name, list)
			if eng == nil {
				return runErr
			}
			if runErr == errInterrupted {
				list.Errors = append(list.Errors, fmt.Sprintf("%s after %d packets", errInterrupted, eng.Stats.Packets))
				runErr = nil
			}
			if runErr != nil {
				list.Errors = append(list.Errors, runErr.Error())
			}
			warn(cmd, eng)
			list.SetCounters(eng)
			list.Sort()
			out := cmd.OutOrStdout()
			var werr error
			if format == "json" {
				werr = list.WriteJSON(out)
			} else {
				werr = list.WriteTable(out)
			}
			if runErr != nil {
				return runErr
			}
			return werr
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
