package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/report"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

func newExportCmd(g *globalFlags) *cobra.Command {
	var (
		in                 inputs
		dir, format, label string
		packets, replace   bool
		rowGroup           int
	)
	cmd := &cobra.Command{
		Use:   "export FILE|DIR|GLOB... -o DIR",
		Short: "Write connections, transactions, RDMA operations and findings as Parquet or NDJSON tables for DuckDB, Spark, ClickHouse",
		Long: `export reads captures and writes what analyze, transactions and check find in
them as tables, one directory per table, partitioned by --label:

  DIR/connections/label=LABEL/part-N.parquet
  DIR/transactions/…  DIR/rdma_ops/…  DIR/findings/…  DIR/packets/… (--packets)

Every row carries the capture's name, the label and the keys the tables join
on (connection_id, xid). Columns are typed (timestamps, integers, strings);
the schema's version is in every Parquet file's metadata
(rdmashark.schema_version) and in DIR/_rdmashark_export.json; docs/export.md
lists every column. Rows are written as the engine produces them, in row
groups, so memory does not grow with the capture. Captures are read --jobs at
a time, each into its own part files; exporting again into the same DIR adds
part files, it never overwrites (a warning says so when the label already
holds parts; --replace removes that label's parts first). A part file is written under a temporary
name and renamed when complete: a failed export (a full disk) leaves no
partial part file. A read stopped by Ctrl-C or SIGTERM exports the rows of
the packets read, says so, and exits 0.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := in.names(args)
			if err != nil {
				return err
			}
			g.concurrent = min(in.jobs, len(names))
			f, err := export.ParseFormat(format)
			if err != nil {
				return usageErr("--format: %v", err)
			}
			if dir == "" {
				return usageErr("export needs -o DIR, the directory to write the tables into")
			}
			cfg := export.Config{Dir: dir, Format: f, Label: label, Packets: packets, RowGroupRows: rowGroup, Version: version, Replace: replace}
			first, err := export.Reserve(cfg, len(names))
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("-o %s: %w", dir, err)}
			}
			if first > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "rdmashark: warning: %s already holds %s of label=%s: these captures' rows are added to them (a capture exported twice has its rows twice; --replace writes the label afresh)\n",
					printable(dir), report.Plural(first, "earlier part"), printable(cfg.Label))
			}
			type result struct {
				line   string
				warn   string
				runErr error
			}
			work := func(i int) result {
				// Standard input is <stdin> here as in every other output.
				xc, err := export.NewCapture(cfg, displayName(names[i]), first+i)
				if err != nil {
					return result{runErr: &exitError{exitUsage, err}}
				}
				var opts dissect.Options
				opts.Exchange = xc.Exchange
				opts.Observer = xc.Observer(nil)
				runner, each := withChecks(check.Config{}, &opts, xc.Packet)
				// Released connections' rows leave memory as they go
				// (export/spill.go).
				xc.SetRunner(runner)
				eng, runErr := runEngine(cmd, g, names[i], engineRun{opts: opts, txn: rpcpresent.ExportTransactions(xc), each: each})
				interrupted := runErr == errInterrupted && eng != nil
				if interrupted {
					// The rows of the packets read are written; not a
					// failure (interrupt.go).
					runErr = nil
				}
				if eng == nil {
					_ = xc.Remove()
					return result{runErr: runErr}
				}
				res := runner.Finish(eng.Conns.Connections())
				res.NoteLoss(eng.Stats.Dropped, eng.Stats.Skipped)
				if err := xc.Finish(eng, res); err != nil {
					// No part of a capture whose export failed (a full
					// disk) stays to break a read of the dataset.
					_ = xc.Remove()
					if runErr == nil {
						runErr = &exitError{exitUsage, err}
					}
				}
				rows := xc.Rows()
				var parts []string
				for _, t := range export.Tables {
					if n, ok := rows[t]; ok {
						parts = append(parts, fmt.Sprintf("%s %d", t, n))
					}
				}
				line := fmt.Sprintf("%s: %d packets → %s (part-%d)\n", printable(displayName(names[i])), eng.Stats.Packets, strings.Join(parts, ", "), first+i)
				if interrupted {
					line += fmt.Sprintf("%s: %s after %s\n", printable(names[i]), errInterrupted, report.Plural(int(eng.Stats.Packets), "packet"))
				}
				return result{line, warnText(eng), runErr}
			}
			// A line per capture: wrapped to the width on a terminal (or
			// with COLUMNS set), whole into a pipe or a file, as dissect's.
			stdout := cmd.OutOrStdout()
			if w, fit := outWidth(cmd); fit {
				ww := report.NewWrapWriter(stdout, w)
				defer ww.Flush()
				stdout = ww
			}
			var errs []error
			_ = forEachOrdered(len(names), in.jobs, work, func(i int, r result) error {
				fmt.Fprint(cmd.ErrOrStderr(), r.warn)
				fmt.Fprint(stdout, r.line)
				if r.runErr != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", errText(unwrapExit(r.runErr)))
				}
				errs = append(errs, r.runErr)
				return nil
			})
			if bad := countErrs(errs); bad > 0 {
				return multiNote(exitUsage, bad, len(names))
			}
			return nil
		},
	}
	in.bind(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&dir, "output", "o", "", "directory to write the tables into (created if need be)")
	fl.StringVar(&format, "format", "parquet", "file format: parquet or ndjson")
	fl.BoolVar(&replace, "replace", false, "remove what an earlier export wrote under the same --label before writing (other labels are kept)")
	fl.StringVar(&label, "label", export.DefaultLabel, "label of every row and name of the partition: the host, the run (label=VALUE directories)")
	fl.BoolVar(&packets, "packets", false, "also write the packets table: one row per packet with its summary line")
	fl.IntVar(&rowGroup, "row-group-rows", export.DefaultRowGroupRows, "rows per Parquet row group (what a table holds, compressed, before writing it)")
	return cmd
}
