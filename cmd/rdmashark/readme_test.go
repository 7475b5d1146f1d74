package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's tour and the pages under docs/ show real runs. A fenced
// ```console block after an example mark holds `$ COMMAND` lines, each
// followed by what that command writes to standard output, run from the
// repository's root (in fact from a scratch directory whose testdata is the
// repository's, so files an example writes land nowhere that matters):
//
//	<!-- example -->                 run every command; the block must show
//	                                 exactly what each writes
//	<!-- example excerpt -->         run every command; each shown line must
//	                                 be one of the lines it writes, in order
//	                                 (lines of only "…" or "..." stand for
//	                                 the lines left out)
//	<!-- example skip: REASON -->    not run (it needs root, a live interface,
//	                                 the network or files not in the
//	                                 repository): each rdmashark command's
//	                                 subcommand, flags and argument count are
//	                                 checked, nothing more
//
// A command is `rdmashark ARGS`, run in this process; blanks separate words,
// single and double quotes group, an unquoted word with * ? or [ is expanded
// as the shell would, and "# ..." is a comment. It may end in `2>&1` (the
// block then shows standard error too, and the command may fail) and be
// followed by `| FILTER ...`, which sh runs over its output (skipped, with
// the reason, when a filter's program is not installed). A command that does
// not start with rdmashark (an `ls` of what export wrote) is run by sh.
// These tests fail when a page differs from the tool; RDMASHARK_UPDATE_README=1
// rewrites the exact examples' outputs from real runs (then read the diff
// before committing it: an output that looks wrong is a bug, not an update).

const exampleMark = "<!-- example"

type exampleKind int

const (
	exampleExact exampleKind = iota
	exampleExcerpt
	exampleSkip
)

func (k exampleKind) String() string {
	switch k {
	case exampleExact:
		return "example"
	case exampleExcerpt:
		return "excerpt"
	}
	return "skip"
}

// docExample is one marked block.
type docExample struct {
	kind   exampleKind
	reason string // why a skipped example is not run
	mark   int    // the mark's line index
	cmds   []exampleCmd
}

// exampleCmd is one `$ ` line of a block and the lines shown after it.
type exampleCmd struct {
	line        int    // the `$ ` line's index
	text        string // after "$ "
	first, last int    // the shown output lines: [first, last)
}

// parseExamples finds the example blocks of a page's lines.
func parseExamples(name string, lines []string) ([]docExample, error) {
	var out []docExample
	for i := 0; i < len(lines); i++ {
		mark := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(mark, exampleMark) {
			continue
		}
		ex := docExample{mark: i}
		inner, ok := strings.CutSuffix(strings.TrimPrefix(mark, exampleMark), "-->")
		inner = strings.TrimSpace(inner)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s:%d: an example mark ends with -->", name, i+1)
		case inner == "":
			ex.kind = exampleExact
		case inner == "excerpt":
			ex.kind = exampleExcerpt
		case strings.HasPrefix(inner, "skip:") && strings.TrimSpace(inner[len("skip:"):]) != "":
			ex.kind = exampleSkip
			ex.reason = strings.TrimSpace(inner[len("skip:"):])
		default:
			return nil, fmt.Errorf("%s:%d: unknown example mark %q (example, example excerpt, example skip: REASON)", name, i+1, mark)
		}
		if i+2 >= len(lines) || lines[i+1] != "```console" || !isPrompt(lines[i+2], ex.kind) {
			return nil, fmt.Errorf("%s:%d: %s must be followed by a ```console block starting with a `$ ` line (or `# ` where it is not run)", name, i+1, mark)
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			if isPrompt(lines[end], ex.kind) {
				if n := len(ex.cmds); n > 0 {
					ex.cmds[n-1].last = end
				}
				c := exampleCmd{line: end, text: lines[end][2:]}
				// A quote left open continues the command on the next
				// lines, as the shell reads it.
				for openQuote(c.text) && end+1 < len(lines) && lines[end+1] != "```" {
					end++
					c.text += "\n" + lines[end]
				}
				c.first = end + 1
				ex.cmds = append(ex.cmds, c)
			}
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: example block not closed", name, i+2)
		}
		ex.cmds[len(ex.cmds)-1].last = end
		out = append(out, ex)
		i = end
	}
	return out, nil
}

// isPrompt reports whether a block's line is a command: `$ COMMAND`, or in
// an example that is not run also root's `# COMMAND` (output lines such as
// capture --list's "#  INTERFACE" have a blank after the "# ").
func isPrompt(line string, kind exampleKind) bool {
	if len(line) < 3 || line[1] != ' ' || line[2] == ' ' {
		return false
	}
	return line[0] == '$' || (line[0] == '#' && kind == exampleSkip)
}

// openQuote reports whether s ends inside a quote.
func openQuote(s string) bool {
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		}
	}
	return quote != 0
}

// shellCommand is a command line split as the examples use the shell.
type shellCommand struct {
	words   []string // the first stage's words, globs not yet expanded
	globbed []bool   // words[i] is an unquoted word with a glob character
	stderr  bool     // the first stage ends in 2>&1
	filter  string   // what follows the first unquoted |, for sh
}

// splitCommand splits a command line as a POSIX shell would for the words
// the pages use.
func splitCommand(s string) (shellCommand, error) {
	var c shellCommand
	var cur strings.Builder
	in, glob := false, false
	var quote rune
	flush := func() {
		if in {
			c.words = append(c.words, cur.String())
			c.globbed = append(c.globbed, glob)
		}
		cur.Reset()
		in, glob = false, false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote = r
			in = true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !in:
			flush()
			return c, c.check(s)
		case r == '|':
			flush()
			c.filter = strings.TrimSpace(string(rs[i+1:]))
			if c.filter == "" {
				return c, fmt.Errorf("%q: | without a filter", s)
			}
			return c, c.check(s)
		case r == '2' && !in && strings.HasPrefix(string(rs[i:]), "2>&1") &&
			(i+4 == len(rs) || rs[i+4] == ' ' || rs[i+4] == '|'):
			c.stderr = true
			i += 3
		case strings.ContainsRune(";&<>$`\\", r):
			return c, fmt.Errorf("example uses shell syntax %q: keep examples to rdmashark arguments, 2>&1 and | filters", r)
		default:
			if strings.ContainsRune("*?[", r) {
				glob = true
			}
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return c, fmt.Errorf("unterminated quote in %q", s)
	}
	flush()
	return c, c.check(s)
}

func (c shellCommand) check(s string) error {
	if len(c.words) == 0 {
		return fmt.Errorf("%q: no command", s)
	}
	return nil
}

// splitExampleArgs splits an rdmashark command line's arguments (no
// filters) as the shell would.
func splitExampleArgs(s string) ([]string, error) {
	c, err := splitCommand("rdmashark " + s)
	if err != nil {
		return nil, err
	}
	if c.filter != "" || c.stderr {
		return nil, fmt.Errorf("%q: a filter or a redirection where plain rdmashark arguments are expected", s)
	}
	return c.words[1:], nil
}

// expand returns the first stage's words with globs expanded from the
// working directory, as sh expands them (a pattern that matches nothing
// stays as it is).
func (c shellCommand) expand() []string {
	var out []string
	for i, w := range c.words {
		if c.globbed[i] {
			if m, _ := filepath.Glob(w); len(m) > 0 {
				out = append(out, m...)
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// exampleRunner runs examples from a scratch directory whose testdata is the
// repository's.
type exampleRunner struct {
	dir string
	env []string // for sh
}

func newExampleRunner(t *testing.T, root string) *exampleRunner {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	// The width the examples are shown at, whatever terminal runs the test.
	t.Setenv("COLUMNS", "100")
	t.Setenv("NO_COLOR", "1")
	return &exampleRunner{dir: dir, env: append(os.Environ(), "COLUMNS=100", "NO_COLOR=1")}
}

// run runs one command line and returns its output lines; skip is set when
// it cannot be run here (a filter's program missing).
func (r *exampleRunner) run(text string) (out []string, skip string, err error) {
	c, err := splitCommand(text)
	if err != nil {
		return nil, "", err
	}
	var stdout, stderr bytes.Buffer
	if c.words[0] != "rdmashark" {
		if c.stderr || c.filter != "" {
			return nil, "", fmt.Errorf("%q: only rdmashark commands take 2>&1 or filters here", text)
		}
		cmd := exec.Command("sh", "-c", text)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.dir, r.env, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, "", fmt.Errorf("%s: %v (%s)", text, err, stderr.String())
		}
		return outputLines(stdout.String()), "", nil
	}
	for f := c.filter; f != ""; {
		stage, err := splitCommand(f)
		if err != nil {
			break // sh reads it; a mistake shows when it runs
		}
		if _, err := exec.LookPath(stage.words[0]); err != nil {
			return nil, stage.words[0] + " is not installed", nil
		}
		f = stage.filter
	}
	var errw io.Writer = &stderr
	if c.stderr {
		errw = &stdout
	}
	code := run(c.expand()[1:], bytes.NewReader(nil), &stdout, errw)
	if code == exitUsage && !c.stderr {
		return nil, "", fmt.Errorf("exit status %d: %s", code, stderr.String())
	}
	text = stdout.String()
	if c.filter != "" {
		var fout, ferr bytes.Buffer
		cmd := exec.Command("sh", "-c", c.filter)
		cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = r.dir, r.env, strings.NewReader(text), &fout, &ferr
		if err := cmd.Run(); err != nil && fout.Len() == 0 {
			return nil, "", fmt.Errorf("| %s: %v (%s)", c.filter, err, ferr.String())
		}
		text = fout.String()
	}
	return outputLines(text), "", nil
}

func outputLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// validateExample checks a command it does not run: its rdmashark stage
// (the first command line may pipe into it, or run it under another program
// such as setpriv) names a subcommand, with flags that subcommand takes and
// as many arguments as it accepts.
func validateExample(text string) error {
	i := strings.Index(" "+text, " rdmashark ")
	if i < 0 {
		return nil // not an rdmashark command: nothing to check
	}
	c, err := splitCommand(text[i:])
	if err != nil {
		return err
	}
	root := newRoot()
	args := bareTshark(root, c.words[1:])
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			return err
		}
	}
	return nil
}

// isGap is a shown line standing for lines an excerpt leaves out.
func isGap(s string) bool {
	s = strings.TrimSpace(s)
	return s == "…" || s == "..."
}

// checkExamples runs (or validates) a page's examples. It returns the
// page's lines with the exact examples' outputs replaced by what the
// commands wrote, and how many commands it ran, matched and skipped.
func checkExamples(t *testing.T, r *exampleRunner, name string, lines []string, examples []docExample) (updated []string, ran, skipped int) {
	t.Helper()
	var b []string
	prev := 0
	for _, ex := range examples {
		for _, c := range ex.cmds {
			shown := lines[c.first:c.last]
			where := fmt.Sprintf("%s:%d", name, c.line+1)
			if ex.kind == exampleSkip {
				if err := validateExample(c.text); err != nil {
					t.Errorf("%s: %s (%s, not run: %s): %v", where, c.text, ex.kind, ex.reason, err)
				}
				skipped++
				continue
			}
			got, skip, err := r.run(c.text)
			if err != nil {
				t.Errorf("%s: %s: %v", where, c.text, err)
				continue
			}
			if skip != "" {
				t.Logf("%s: %s: not run: %s", where, c.text, skip)
				skipped++
				continue
			}
			ran++
			switch ex.kind {
			case exampleExact:
				if os.Getenv("RDMASHARK_UPDATE_README") != "1" && strings.Join(shown, "\n") != strings.Join(got, "\n") {
					t.Errorf("%s: %s: the page shows\n%s\nbut it writes\n%s\n(RDMASHARK_UPDATE_README=1 go test ./cmd/rdmashark -run 'TestREADMEExamples|TestDocsExamples' rewrites it)",
						where, c.text, strings.Join(shown, "\n"), strings.Join(got, "\n"))
				}
				b = append(b, lines[prev:c.first]...)
				b = append(b, got...)
				prev = c.last
			case exampleExcerpt:
				k := 0
				for _, s := range shown {
					if isGap(s) {
						continue
					}
					for k < len(got) && strings.TrimRight(got[k], " ") != strings.TrimRight(s, " ") {
						k++
					}
					if k == len(got) {
						t.Errorf("%s: %s: the excerpt shows a line the command does not write (or not in this order):\n%s\nit writes\n%s", where, c.text, s, strings.Join(got, "\n"))
						break
					}
					k++
				}
			}
		}
	}
	b = append(b, lines[prev:]...)
	return b, ran, skipped
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// checkPage checks one page's examples and rewrites it under
// RDMASHARK_UPDATE_README=1; it returns the number of examples run and
// skipped.
func checkPage(t *testing.T, r *exampleRunner, root, rel string, atLeast int) (ran, skipped int) {
	t.Helper()
	path := filepath.Join(root, rel)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	examples, err := parseExamples(rel, lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < atLeast {
		t.Fatalf("%s has %d examples; it shows at least %d", rel, len(examples), atLeast)
	}
	updated, ran, skipped := checkExamples(t, r, rel, lines, examples)
	if os.Getenv("RDMASHARK_UPDATE_README") != "1" {
		return ran, skipped
	}
	if s := strings.Join(updated, "\n"); s != string(raw) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s rewritten", rel)
	}
	return ran, skipped
}

func TestREADMEExamples(t *testing.T) {
	root := repoRoot(t)
	r := newExampleRunner(t, root)
	ran, skipped := checkPage(t, r, root, "README.md", 4)
	t.Logf("README.md: %d commands run, %d not run", ran, skipped)
}

// TestDocsExamples checks the examples of every page under docs/.
func TestDocsExamples(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	r := newExampleRunner(t, root)
	var ran, skipped, total int
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		a, s := checkPage(t, r, root, rel, 0)
		ran += a
		skipped += s
		if a+s > 0 {
			total++
		}
	}
	t.Logf("docs: %d commands run, %d not run, on %d pages", ran, skipped, total)
	if ran < 30 {
		t.Errorf("docs run %d example commands; they showed at least 30 when this test was written", ran)
	}
}

func TestSplitExampleArgs(t *testing.T) {
	got, err := splitExampleArgs(`dissect -r a.pcap -Y 'nfs && rpc.xid == 0x1' -c 4`)
	if err != nil || strings.Join(got, "|") != "dissect|-r|a.pcap|-Y|nfs && rpc.xid == 0x1|-c|4" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := splitExampleArgs(`analyze x | head`); err == nil {
		t.Fatal("a pipe was accepted")
	}
	c, err := splitCommand(`rdmashark capture -i eth0 -f "tcp 20049,tcp 7174"    # rping`)
	if err != nil || strings.Join(c.words, "|") != `rdmashark|capture|-i|eth0|-f|tcp 20049,tcp 7174` {
		t.Fatalf("got %q, %v", c.words, err)
	}
	c, err = splitCommand(`rdmashark dissect -r x.pcap -Y 'a = 1' 2>&1 | head -2`)
	if err != nil || !c.stderr || c.filter != "head -2" || len(c.words) != 6 {
		t.Fatalf("got %+v, %v", c, err)
	}
	c, err = splitCommand(`rdmashark check testdata/pcaps/*.pcap 'x/*.pcap'`)
	if err != nil || !c.globbed[2] || c.globbed[3] {
		t.Fatalf("got %+v, %v", c, err)
	}
	if _, err := splitCommand(`rdmashark analyze x > y`); err == nil {
		t.Fatal("a redirection was accepted")
	}
}

func TestValidateExample(t *testing.T) {
	for _, ok := range []string{
		`rdmashark capture -i eth0 -f "tcp 18515"`,
		`tcpdump -i eth0 -U -w - 'udp port 4791' | rdmashark transactions --format jsonl - | jq -c .`,
		`rdmashark -r x.pcap -c 3`,
	} {
		if err := validateExample(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`rdmashark analyse x.pcap`,
		`rdmashark analyze --no-such-flag x.pcap`,
		`rdmashark dissect a.pcap b.pcap`,
	} {
		if err := validateExample(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
