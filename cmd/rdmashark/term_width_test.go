package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clipperhouse/displaywidth"

	"github.com/rdmashark/rdmashark/diff"
)

// widthCaptures are real captures of every kind the text layouts must fit:
// RoCE and iWARP NFSv3, NFSv4.1, NVMe-oF, and lossy ones (retransmissions,
// gaps, findings on every connection).
var widthCaptures = []string{
	"rxe-nfs3.pcap",
	"siw-nfs3.pcap",
	"rxe-nfs41.pcap",
	"siw-nfs41.pcap",
	"ulp/rxe-nvmeof.pcap",
	"ulp/siw-nvmeof-loss2.pcap",
	"lossy/rxe-nfs3-lossy.pcap",
	"lossy/siw-nfs3-lossy.pcap",
	"lossy/rxe-ib_read_bw-loss5.pcap",
	"lossy/rxe-nfs41-loss3.pcap",
}

// wideLines returns the lines of out wider than width display columns
// (displaywidth, not the layouts' own measure), at most 3.
func wideLines(out string, width int) []string {
	var bad []string
	for i, line := range strings.Split(out, "\n") {
		if n := displaywidth.String(line); n > width && len(bad) < 3 {
			bad = append(bad, fmt.Sprintf("line %d (%d columns): %q", i+1, n, line))
		}
	}
	return bad
}

// runWidth runs rdmashark with args and COLUMNS=width and returns its
// standard output; exit statuses 0 and 1 (findings) are expected.
func runWidth(t *testing.T, width int, args ...string) string {
	t.Helper()
	t.Setenv("COLUMNS", fmt.Sprint(width))
	var out, errb bytes.Buffer
	if rc := run(args, nil, &out, &errb); rc > 1 {
		t.Fatalf("%v: exit %d: %s", args, rc, errb.String())
	}
	return out.String()
}

// TestTextFitsWidth: issue 31's proof. With the width at 100, no line
// analyze, check (-v too), transactions, exchanges or dissect print on the
// real captures is wider than 100 display columns; at 80, none of
// analyze's summary and connection blocks, nor check's lines.
func TestTextFitsWidth(t *testing.T) {
	for _, name := range widthCaptures {
		path := filepath.Join("..", "..", "testdata", "pcaps", name)
		for _, c := range []struct {
			width int
			args  []string
		}{
			{100, []string{"analyze", path}},
			{100, []string{"check", path}},
			{100, []string{"check", "-v", path}},
			{100, []string{"transactions", path}},
			{100, []string{"exchanges", path}},
			{100, []string{"dissect", path}},
			{80, []string{"analyze", path}},
			{80, []string{"check", path}},
		} {
			out := runWidth(t, c.width, c.args...)
			if out == "" {
				t.Errorf("%v: no output", c.args)
			}
			for _, l := range wideLines(out, c.width) {
				t.Errorf("%v at %d columns: %s", c.args[:len(c.args)-1], c.width, l)
			}
		}
	}
}

// TestTextWideIsWider: --wide keeps every column: the same capture's
// transactions have lines wider than 100 columns with it, and the columns
// left out are named without it.
func TestTextWideIsWider(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	fitted := runWidth(t, 80, "transactions", path)
	wide := runWidth(t, 80, "transactions", "--wide", path)
	if len(wideLines(wide, 100)) == 0 {
		t.Error("transactions --wide: no line wider than 100 columns")
	}
	if !strings.Contains(fitted, "--wide shows every column") || !strings.Contains(fitted, "Inv. STag") {
		t.Errorf("fitted transactions do not name the columns left out:\n%s", fitted[:min(len(fitted), 400)])
	}
	// Every transaction has its line either way (its XID first).
	for _, out := range []string{fitted, wide} {
		if n := strings.Count(out, "0x") - strings.Count(out, "0x0000"); n < 618 {
			t.Errorf("%d XIDs, want 618 or more", n)
		}
	}
}

// TestMachineFormatsIgnoreWidth: JSON and the other machine formats are
// the same whatever the width.
func TestMachineFormatsIgnoreWidth(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "siw-nfs3.pcap")
	for _, args := range [][]string{
		{"analyze", "--format", "json", path},
		{"check", "--format", "json", path},
		{"transactions", "--format", "jsonl", path},
		{"dissect", "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info", path},
	} {
		if a, b := runWidth(t, 40, args...), runWidth(t, 300, args...); a != b {
			t.Errorf("%v: output differs between 40 and 300 columns", args)
		}
	}
}

// TestColorFlag: --color always colours check's severities and verdict,
// never and auto into a buffer (no terminal) do not, and NO_COLOR does not
// stop always (https://no-color.org: a flag given for the run wins).
func TestColorFlag(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	t.Setenv("NO_COLOR", "1")
	for _, c := range []struct {
		color string
		want  bool
	}{{"always", true}, {"never", false}, {"auto", false}} {
		out := runWidth(t, 100, "check", "--color", c.color, path)
		if got := strings.Contains(out, "\x1b[1;31merror\x1b[0m"); got != c.want {
			t.Errorf("--color %s: coloured error %v, want %v", c.color, got, c.want)
		}
		if got := strings.Contains(out, "\x1b["); got != c.want {
			t.Errorf("--color %s: escape sequences %v, want %v", c.color, got, c.want)
		}
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"check", "--color", "sometimes", path}, nil, &out, &errb); rc != exitUsage {
		t.Errorf("--color sometimes: exit %d, want %d", rc, exitUsage)
	}
}

// TestHelpFitsWidth: every command's --help is wrapped to the width.
func TestHelpFitsWidth(t *testing.T) {
	root := newRoot()
	for _, c := range append(root.Commands(), root) {
		args := []string{c.Name(), "--help"}
		if c == root {
			args = []string{"--help"}
		}
		out := runWidth(t, 80, args...)
		for _, l := range wideLines(out, 80) {
			t.Errorf("%s --help: %s", c.Name(), l)
		}
	}
}

// TestHelpExamples runs every example of the --help texts that reads a
// bundled capture (those that capture live need an interface and root),
// its outputs written into a temporary directory: each must exit 0 or 1
// (findings) and print something or write its file.
func TestHelpExamples(t *testing.T) {
	tmp := t.TempDir()
	ran := 0
	for cmd, exs := range examples {
		for _, ex := range exs {
			args := shellWords(ex)
			if args[0] != "rdmashark" || cmd == "capture" {
				continue
			}
			args = args[1:]
			wrote := ""
			for i, a := range args {
				switch {
				case strings.HasPrefix(a, "testdata/"):
					args[i] = filepath.Join("..", "..", a)
				case i > 0 && (args[i-1] == "-o" || args[i-1] == "-w"):
					wrote = filepath.Join(tmp, a)
					args[i] = wrote
				}
			}
			var out, errb bytes.Buffer
			if rc := run(args, nil, &out, &errb); rc > 1 {
				t.Errorf("%s: exit %d: %s", ex, rc, errb.String())
				continue
			}
			if wrote == "" && out.Len() == 0 {
				t.Errorf("%s: printed nothing", ex)
			}
			if wrote != "" {
				if _, err := os.Stat(wrote); err != nil {
					t.Errorf("%s: %v", ex, err)
				}
			}
			ran++
		}
	}
	if ran < 20 {
		t.Errorf("%d examples ran, want 20 or more", ran)
	}
}

// shellWords splits a command line at spaces, '…' and "…" quoting a word.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	quote, in := byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestRulesFitWidth: the rule list and a rule's explanation fit 80 and
// 100 columns (the references made the table over 380 columns wide), and
// every rule keeps its line; --wide is the one-line-a-rule table.
func TestRulesFitWidth(t *testing.T) {
	for _, width := range []int{80, 100} {
		out := runWidth(t, width, "rules")
		for _, l := range wideLines(out, width) {
			t.Errorf("rules at %d columns: %s", width, l)
		}
		for _, id := range []string{"PD-FORMAT", "INV-NOT-NEGOTIATED", "SRP-TAG-IN-USE"} {
			if !strings.Contains(out, "\n"+id+" ") {
				t.Errorf("rules at %d columns: no line for %s", width, id)
			}
		}
		for _, l := range wideLines(runWidth(t, width, "rules", "INV-NOT-NEGOTIATED", "CHUNK-*"), width) {
			t.Errorf("rules INV-NOT-NEGOTIATED CHUNK-* at %d columns: %s", width, l)
		}
	}
	if len(wideLines(runWidth(t, 80, "rules", "--wide"), 100)) == 0 {
		t.Error("rules --wide: no line wider than 100 columns")
	}
}

// TestDiffFitsWidth: diff's text of two reruns of one workload
// (testdata/pcaps/reruns) fits 100, 80 and 60 columns, and fitting cuts no
// name and no note: each row's name and note (from --format json) is in
// the text whole, wrapped at most; --wide puts each row on one line, wider
// than 100 columns where the notes are long.
func TestDiffFitsWidth(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "pcaps", "reruns", "rxe-nfs3-a.pcap")
	b := filepath.Join("..", "..", "testdata", "pcaps", "reruns", "rxe-nfs3-b.pcap")
	var doc diff.Document
	if err := json.Unmarshal([]byte(runWidth(t, 100, "diff", "--format", "json", a, b)), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Pairs) != 1 || len(doc.Pairs[0].Rows) < 10 {
		t.Fatalf("%d pairs, want 1 with 10 or more changed rows", len(doc.Pairs))
	}
	words := func(s string) string { return " " + strings.Join(strings.Fields(s), " ") + " " }
	for _, width := range []int{100, 80, 60} {
		out := runWidth(t, width, "diff", a, b)
		for _, l := range wideLines(out, width) {
			t.Errorf("diff at %d columns: %s", width, l)
		}
		text := words(out)
		for _, r := range doc.Pairs[0].Rows {
			if !strings.Contains(text, words(r.Name)) || !strings.Contains(text, words(r.Note)) {
				t.Errorf("diff at %d columns: row %q (note %q) not whole in\n%s", width, r.Name, r.Note, out)
			}
		}
	}
	wide := runWidth(t, 60, "diff", "--wide", a, b)
	if len(wideLines(wide, 100)) == 0 {
		t.Error("diff --wide: no line wider than 100 columns")
	}
	none := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	for _, r := range doc.Pairs[0].Rows {
		if !strings.Contains(wide, r.Name) || !strings.Contains(wide, none(r.Base)+" → "+none(r.New)+"  "+r.Note) {
			t.Errorf("diff --wide: row %q not on one line", r.Name)
		}
	}
}

// TestExportFitsWidth: export's line per capture (file, packets, rows per
// table: 182 columns on an NFS capture) is wrapped to the width when
// COLUMNS is set, and stays one line a capture without it (scripts read
// it).
func TestExportFitsWidth(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	out := runWidth(t, 80, "export", "-o", t.TempDir(), "--format", "ndjson", path)
	for _, l := range wideLines(out, 80) {
		t.Errorf("export at 80 columns: %s", l)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "exchanges 618, nvme_commands 0 (part-0)") || strings.Count(out, "\n") < 2 {
		t.Errorf("export at 80 columns:\n%s", out)
	}
	t.Setenv("COLUMNS", "")
	var whole, errb bytes.Buffer
	if rc := run([]string{"export", "-o", t.TempDir(), "--format", "ndjson", path}, nil, &whole, &errb); rc != 0 {
		t.Fatalf("export: exit %d: %s", rc, errb.String())
	}
	if strings.Count(whole.String(), "\n") != 1 || len(wideLines(whole.String(), 100)) == 0 {
		t.Errorf("export without COLUMNS: not one whole line:\n%s", whole.String())
	}
}

// TestDissectDetailFitsWidth: dissect -V's packet trees (a summary line of
// up to 190 columns under each "Packet N:") fit the width when COLUMNS is
// set, and stay as tshark's, one line a field, without it.
func TestDissectDetailFitsWidth(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	for _, width := range []int{100, 80} {
		out := runWidth(t, width, "dissect", "-V", "-c", "300", path)
		for _, l := range wideLines(out, width) {
			t.Errorf("dissect -V at %d columns: %s", width, l)
		}
	}
	t.Setenv("COLUMNS", "")
	var whole, errb bytes.Buffer
	if rc := run([]string{"dissect", "-V", "-c", "300", path}, nil, &whole, &errb); rc != 0 {
		t.Fatalf("dissect -V: exit %d: %s", rc, errb.String())
	}
	if len(wideLines(whole.String(), 100)) == 0 {
		t.Error("dissect -V without COLUMNS: no line wider than 100 columns (wrapped into a pipe?)")
	}
}
