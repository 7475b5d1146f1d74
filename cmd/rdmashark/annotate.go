package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/source"
)

// findingComments maps each packet number to the comments that name the
// findings it shows: "rdmashark RULE (severity, connection N, xid 0x...):
// message [reference]". findings walks the findings (CheckFile.EachFinding).
func findingComments(findings func(func(*check.Finding) error) error) (map[int][]string, error) {
	out := map[int][]string{}
	err := findings(func(f *check.Finding) error {
		c := fmt.Sprintf("rdmashark %s (%s", f.Rule, f.Severity)
		if f.Connection > 0 {
			c += fmt.Sprintf(", connection %d", f.Connection)
		}
		if f.XID != nil {
			c += fmt.Sprintf(", xid 0x%08x", *f.XID)
		}
		c += "): " + f.Message
		if f.Reference != "" {
			c += " [" + f.Reference + "]"
		}
		for _, n := range f.Packets {
			out[n] = append(out[n], c)
		}
		return nil
	})
	return out, err
}

// annotateInput refuses, before anything is read, the inputs --annotate
// cannot read twice (issue 29 point 3): more than one capture, standard
// input, a FIFO, a terminal or another device — whose second read would
// wait for ever. A compressed file is read twice: it is opened again.
func annotateInput(names []string) error {
	if len(names) != 1 {
		return usageErr("--annotate needs exactly one capture file (it is read twice)")
	}
	if names[0] == "-" {
		return usageErr("--annotate cannot read standard input: the capture is read twice (save it to a file first)")
	}
	if fi, err := os.Stat(names[0]); err == nil && !fi.Mode().IsRegular() {
		return usageErr("--annotate: %s is not a regular file (a FIFO or a device cannot be read twice): save the capture to a file first", printable(names[0]))
	}
	return nil
}

// annotateCapture reads the capture in again and writes every record of it
// to out ("-": standard output) as pcapng, with the comments of its packet
// number as opt_comments: check --annotate. One interface per input
// interface, as dissect -w writes. A signal stops it (errInterrupted); the
// output is then discarded.
func annotateCapture(cmd *cobra.Command, in, out string, comments map[int][]string) error {
	r, err := source.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	sink, err := newPcapSink(out, cmd.OutOrStdout(), in)
	if err != nil {
		return err
	}
	sink.setInput(r)
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ifaces := map[ifaceKey]int{}
	for {
		if ctx.Err() != nil {
			sink.Abort()
			return errInterrupted
		}
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var serr *source.Error
			if errors.As(err, &serr) && !serr.Final {
				continue // a damaged record: check reported it already
			}
			sink.Abort()
			return err
		}
		k := ifaceKey{rec.CI.InterfaceIndex, rec.LinkType}
		id, ok := ifaces[k]
		if !ok {
			if id, err = sink.w.AddInterface(sink.outInterface(k.iface, k.linkType)); err != nil {
				sink.Abort()
				return fmt.Errorf("%s: %w", out, err)
			}
			ifaces[k] = id
		}
		// The record's own comments first, then the findings'.
		cs := comments[rec.Number]
		if len(rec.Comments) > 0 {
			cs = append(appendComments(nil, rec.Comments), cs...)
		}
		if err := sink.w.WritePacket(id, rec.CI.Timestamp, rec.Data, rec.CI.Length, cs...); err != nil {
			sink.Abort()
			return fmt.Errorf("%s: record %d: %w", out, rec.Number, err)
		}
	}
	return sink.Close()
}
