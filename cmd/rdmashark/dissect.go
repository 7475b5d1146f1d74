package main

import (
	"fmt"
	"github.com/spf13/cobra"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
)

func newDissectCmd(g *globalFlags) *cobra.Command {
	var (
		in       input
		verbose  bool
		format   string
		fields   []string
		count    int
		glossary string
		header   bool
		filter   string
		writeTo  string
		fieldOpt []string
		timeFmt  string
		quiet    bool
		hexDump  bool
		ts       tsharkFlags // tshark_flags.go
	)
	cmd := &cobra.Command{
		Use:   "dissect [FILE]",
		Short: "Print every packet: a summary line, the full field tree (-V), JSON, or chosen fields",
		Long: `dissect prints the packets of a capture as tshark does: one summary line per
packet by default; -V for the full field tree; -T json for tshark's JSON array
(jq '.[]._source.layers'), -T ek for tshark's Elasticsearch lines, -T jsonl for
one JSON object per line per packet; -T fields -e NAME ... for tab-separated
values of fields named as Wireshark's display filters name them (rdmashark
dissect -G fields lists them), printed as tshark prints them. rdmashark -r FILE
without a command is rdmashark dissect -r FILE, as tshark; tshark's flags
-n -2 -l -F -O -P -s -v are taken too (docs/tshark.md).

-r - reads standard input (tcpdump -w - | rdmashark dissect -r -) and prints
each packet as soon as it has been read: the output is flushed whenever
rdmashark waits for more input.

-Y FILTER prints only the packets a display filter in Wireshark's language
selects (ip.addr == 192.0.2.0/24 && rpcordma.xid == 0x1234). It is applied
after reassembly, as tshark -2 -Y: every packet is dissected, the filter
chooses what is printed. See docs/display-filters.md.

-w FILE writes the packets selected to FILE as pcapng, with their timestamps
and lengths, instead of printing them: carve one connection or one XID out of
a large capture (rdmashark dissect -r big.pcap -Y 'rpcordma.xid == 0x1234' -w xid.pcapng).`,
		Args: oneCapture("dissect"),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if ts.showVersion {
				fmt.Fprintln(out, "rdmashark", versionString())
				return nil
			}
			if err := ts.check(writeTo); err != nil {
				return err
			}
			if len(ts.only) > 0 && format == "text" {
				verbose = true // -O details as -V does
			}
			if glossary != "" {
				if glossary != "fields" {
					return usageErr("-G takes \"fields\"")
				}
				return report.WriteFieldList(out)
			}
			if cmd.Flags().Changed("count") {
				// As tshark refuses them.
				switch {
				case count == 0:
					return usageErr("the specified packet count is zero")
				case count < 0:
					return usageErr("the specified packet count \"%d\" is a negative number", count)
				}
			}
			if len(fieldOpt) > 0 && format != "fields" {
				return usageErr("-E needs -T fields")
			}
			name, err := in.name(args)
			if err != nil {
				return err
			}
			flt, filterNames, err := compileFilter(filter)
			if err != nil {
				return err
			}
			// The fields the output reads (the engine's Options.Fields):
			// those the filter looks up, -T fields' -e, every one for the
			// trees and JSON; the summary line, -w and -x need none.
			read := fieldsRead(filterNames)
			var (
				pw  report.PacketWriter
				hex *hexWriter
			)
			if hexDump && writeTo == "" && !quiet {
				if format != "text" {
					return usageErr("-x needs the text output (-V or none)")
				}
				hex = newHexWriter(out)
				out = hex.w
			}
			switch {
			case quiet && writeTo == "":
				pw = nopWriter{}
			case hex != nil && !verbose:
				pw = hex
			case writeTo != "":
				sink, err := newPcapSinkAs(writeTo, out, ts.fileFormat == "pcap", name)
				if err != nil {
					return err
				}
				defer sink.Close()
				pw = sink
				if ts.printAlso { // -P: the summary lines too
					sw, err := report.NewSummaryWriterTime(out, timeFmt)
					if err != nil {
						return usageErr("%v", err)
					}
					pw = teeWriter{sink, sw}
				}
			case format == "fields":
				if len(fields) == 0 {
					return usageErr("-T fields needs at least one -e FIELD")
				}
				fo, err := parseFieldOptions(fieldOpt, header)
				if err != nil {
					return err
				}
				if !report.ValidTimeFormat(timeFmt) {
					return usageErr("-t %q: want one of %v", timeFmt, report.TimeFormats)
				}
				fo.TimeFormat = timeFmt // -t applies to _ws.col.Time
				if pw, err = report.NewFieldsWriterOptions(out, fields, fo); err != nil {
					return usageErr("%v", err)
				}
				read = fieldsRead(filterNames, fields)
			case format == "jsonl":
				pw, read = report.NewJSONWriter(out), dissect.AllFields
			case format == "json":
				pw, read = report.NewTsharkJSONWriter(out), dissect.AllFields
			case format == "ek":
				pw, read = report.NewEKWriter(out), dissect.AllFields
			case format == "text" && len(ts.only) > 0:
				pw, read = report.NewVerboseWriterOnly(g.detailOut(cmd, out), ts.only), dissect.AllFields
			case format == "text" && verbose:
				pw, read = report.NewVerboseWriter(g.detailOut(cmd, out)), dissect.AllFields
			case format == "text":
				if pw, err = report.NewSummaryWriterTime(g.summaryOut(cmd, out), timeFmt); err != nil {
					return usageErr("%v", err)
				}
			default:
				return usageErr("-T must be text, json, ek, jsonl or fields, not %q", format)
			}
			if len(fields) > 0 && format != "fields" {
				return usageErr("-e needs -T fields")
			}
			if hex != nil && pw != hex {
				hex.inner, pw = pw, hex
			}
			var opened func(*source.Reader)
			if sink, ok := pw.(*pcapSink); ok {
				opened = sink.setInput
			} else if tee, ok := pw.(teeWriter); ok {
				opened = tee[0].(*pcapSink).setInput
			}
			eng, runErr := runEngine(cmd, g, name, engineRun{opts: dissect.Options{Count: count, ForgetReleased: true, Fields: read},
				each: func(p *dissect.Packet) error {
					if !flt.Match(p) {
						return nil
					}
					if ts.lineBuf { // -l
						if err := pw.WritePacket(p); err != nil {
							return err
						}
						return pw.Flush()
					}
					return pw.WritePacket(p)
				}, flush: pw.Flush, opened: opened})
			if eng != nil {
				warn(cmd, eng)
			}
			if runErr == errInterrupted && eng != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "rdmashark: %s: %v after %s\n", printable(displayName(name)), errInterrupted, report.Plural(int(eng.Stats.Packets), "packet"))
				runErr = nil
			}
			if err := endWriter(pw); err != nil && runErr == nil {
				return err
			}
			if err := pw.Flush(); err != nil && runErr == nil {
				return err
			}
			return runErr
		},
	}
	in.bind(cmd)
	cmd.Flags().BoolVarP(&verbose, "verbose", "V", false, "print every packet's full field tree")
	cmd.Flags().StringVarP(&format, "type", "T", "text", "output: text, json (tshark's array), ek (tshark's Elasticsearch lines), jsonl (one object a line) or fields")
	cmd.Flags().StringArrayVarP(&fields, "field", "e", nil, "field to print with -T fields (repeatable)")
	cmd.Flags().IntVarP(&count, "count", "c", 0, "stop after this many packets")
	cmd.Flags().StringVarP(&glossary, "glossary", "G", "", `"fields": list every field rdmashark knows`)
	cmd.Flags().BoolVar(&header, "header", false, "with -T fields, print the field names first")
	cmd.Flags().StringArrayVarP(&fieldOpt, "fields-option", "E", nil, "with -T fields, as tshark: header=y|n, separator=/t|/s|C, aggregator=,|/s|C, quote=d|s|n, occurrence=f|l|a, bom=y|n (repeatable)")
	cmd.Flags().StringVarP(&timeFmt, "time-format", "t", "r", "time column of the summary lines and _ws.col.Time, as tshark: r, a, ad, adoy, u, ud, udoy, e, d, dd")
	ts.bind(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print no packets (with -w: write them only; the warnings and errors still go to standard error)")
	cmd.Flags().BoolVarP(&hexDump, "hex", "x", false, "after each packet, its bytes in hex and ASCII, as tshark -x")
	cmd.Flags().StringVarP(&writeTo, "write", "w", "", "write the packets the filter selects to this pcapng file (- for standard output) instead of printing them")
	cmd.Flags().StringVarP(&filter, "display-filter", "Y", "", "print only the packets this display filter selects (Wireshark's syntax; docs/display-filters.md)")
	return cmd
}

// oneCapture accepts at most one capture, and says what to do with more
// in words (cobra's own message was "accepts at most 1 arg(s)").
func oneCapture(command string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usageErr("%s reads one capture, not %d (%s): merge them first (mergecap -w all.pcapng %s), or run one %s per capture; analyze, check and transactions take several",
				command, len(args), strings.Join(args, ", "), strings.Join(args, " "), command)
		}
		return nil
	}
}
