package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/report"
)

// termFlags are the flags that fit the text output to the terminal
// (docs/terminal.md): --color for every command, --wide for those whose
// tables choose their columns by the width.
type termFlags struct {
	color string
	quiet bool
}

// bind registers --color and -q on the root, for every subcommand.
func (t *termFlags) bind(root *cobra.Command) {
	root.PersistentFlags().StringVar(&t.color, "color", "auto",
		"colour severities, verdicts and retransmissions: auto (when standard output is a terminal and NO_COLOR is not set), always or never")
	root.PersistentFlags().BoolVarP(&t.quiet, "quiet", "q", false,
		"no progress on standard error (shown only when it is a terminal and the input a file that takes a while)")
}

// check rejects a --color that is none of its words.
func (t *termFlags) check() error {
	switch t.color {
	case "auto", "always", "never":
		return nil
	}
	return usageErr("--color must be auto, always or never, not %q", t.color)
}

// bindWide registers --wide on a command whose text tables fit the width.
func bindWide(cmd *cobra.Command, wide *bool) {
	cmd.Flags().BoolVar(wide, "wide", false,
		"text: every column and every line whole, as wide as they are, instead of fitted to the terminal's width (docs/terminal.md)")
}

// outWidth is the width the text output of cmd fits: the terminal's when
// standard output is one, else COLUMNS, else report.DefaultWidth (80).
// fromEnv says whether a terminal or COLUMNS gave it.
func outWidth(cmd *cobra.Command) (width int, fromEnv bool) {
	if f, ok := cmd.OutOrStdout().(*os.File); ok {
		if tty, w := terminalWidth(f); tty && w > 0 {
			return w, true
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n, true
	}
	return report.DefaultWidth, false
}

// isTTY reports whether w is a terminal (a TIOCGWINSZ answers; a
// character device such as /dev/null is none).
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	tty, _ := terminalWidth(f)
	return tty
}

// useColor says whether cmd's standard output gets colours: always with
// --color always, never with never; with auto when it is a terminal,
// NO_COLOR (https://no-color.org) is unset or empty and TERM is not
// "dumb". --color always wins over NO_COLOR, as no-color.org asks of a
// flag given for one run.
func (g *globalFlags) useColor(cmd *cobra.Command) bool {
	switch g.term.color {
	case "always":
		return true
	case "never":
		return false
	}
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTTY(cmd.OutOrStdout())
}

// layout is how cmd's text report fits the terminal.
func (g *globalFlags) layout(cmd *cobra.Command, wide bool) report.Layout {
	w, _ := outWidth(cmd)
	return report.Layout{Width: w, Wide: wide, Color: g.useColor(cmd)}
}

// fileLayout is layout for a report written to output (-o): standard
// output's when output is "" or "-", else a file's: COLUMNS or the
// default width, and colour only with --color always.
func (g *globalFlags) fileLayout(cmd *cobra.Command, wide bool, output string) report.Layout {
	if output == "" || output == "-" {
		return g.layout(cmd, wide)
	}
	lay := report.Layout{Width: report.DefaultWidth, Wide: wide, Color: g.term.color == "always"}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		lay.Width = n
	}
	return lay
}

// summaryOut is where dissect's summary lines go: to a terminal (or with
// COLUMNS set), each line wider than the width is wrapped, at the " | "
// between layers first, its continuation indented; with colour, the
// marks of retransmissions and damage are coloured. Into a pipe or a file
// without COLUMNS, the lines go as they are, one a packet, as tshark's.
func (g *globalFlags) summaryOut(cmd *cobra.Command, out io.Writer) io.Writer {
	color := g.useColor(cmd)
	w, fit := outWidth(cmd)
	if !color && !fit {
		return out
	}
	if color {
		out = &markPainter{w: out}
	}
	if !fit {
		w = math.MaxInt // whole lines to the painter, none wrapped
	}
	ww := report.NewWrapWriter(out, w)
	// Continuations start at column 9, under the time of a frame number
	// of up to 5 digits (fields.SummaryLine pads it to 5), whatever the
	// number's own width.
	ww.Column, ww.Prefer = 9, " | "
	return ww
}

// detailOut is where dissect -V's (and -O's) packet trees go: on a
// terminal (or with COLUMNS set) a line wider than the width is broken at
// spaces, its continuation under its own indentation plus 4; into a pipe or
// a file the lines go as they are, as tshark's.
func (g *globalFlags) detailOut(cmd *cobra.Command, out io.Writer) io.Writer {
	w, fit := outWidth(cmd)
	if !fit {
		return out
	}
	return report.NewWrapWriter(out, w)
}

// markPainter colours the bracketed marks of dissect's summary lines:
// retransmissions, duplicates and reordering yellow, damage red.
type markPainter struct {
	w   io.Writer
	buf []byte
}

var (
	yellowMarks = []string{"[Retransmission]", "[retransmission]", "[Duplicate]", "[Dup ACK]", "[Out-Of-Order]", "[Re-issued Read]", "[gap: "}
	redMarks    = []string{"[ICRC bad]", "[VCRC bad]", "[bad header: ", "[malformed: "}
)

func (m *markPainter) Write(p []byte) (int, error) {
	n := len(p)
	if bytes.IndexByte(p, '[') < 0 {
		return m.w.Write(p)
	}
	m.buf = m.buf[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '[')
		if i < 0 {
			m.buf = append(m.buf, p...)
			break
		}
		m.buf = append(m.buf, p[:i]...)
		p = p[i:]
		end := bytes.IndexByte(p, ']')
		if end < 0 || bytes.IndexByte(p[:end], '\n') >= 0 {
			m.buf = append(m.buf, p[0])
			p = p[1:]
			continue
		}
		mark := p[:end+1]
		color := ""
		for _, s := range yellowMarks {
			if bytes.HasPrefix(mark, []byte(s)) {
				color = "\x1b[33m"
			}
		}
		for _, s := range redMarks {
			if bytes.HasPrefix(mark, []byte(s)) {
				color = "\x1b[1;31m"
			}
		}
		if color != "" {
			m.buf = append(m.buf, color...)
			m.buf = append(m.buf, mark...)
			m.buf = append(m.buf, "\x1b[0m"...)
		} else {
			m.buf = append(m.buf, mark...)
		}
		p = p[end+1:]
	}
	if _, err := m.w.Write(m.buf); err != nil {
		return 0, err
	}
	return n, nil
}
