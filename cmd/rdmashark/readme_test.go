package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's tour shows real runs: every fenced ```console block after an
// `<!-- example -->` line holds one `$ rdmashark ARGS` line and the output
// that command writes to standard output, run from the repository's root.
// This test runs each and fails when the output differs, so the README
// cannot drift from the tool. RDMASHARK_UPDATE_README=1 rewrites the
// outputs from real runs (then read the diff before committing it).

const exampleMark = "<!-- example -->"

type readmeExample struct {
	args        []string
	first, last int // the block's output lines: [first, last)
}

// readmeExamples finds the example blocks of text's lines.
func readmeExamples(t *testing.T, lines []string) []readmeExample {
	var out []readmeExample
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != exampleMark {
			continue
		}
		if i+2 >= len(lines) || lines[i+1] != "```console" || !strings.HasPrefix(lines[i+2], "$ rdmashark ") {
			t.Fatalf("README.md:%d: %s must be followed by a ```console block starting with `$ rdmashark `", i+1, exampleMark)
		}
		args, err := splitExampleArgs(strings.TrimPrefix(lines[i+2], "$ rdmashark "))
		if err != nil {
			t.Fatalf("README.md:%d: %v", i+3, err)
		}
		end := i + 3
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("README.md:%d: example block not closed", i+2)
		}
		out = append(out, readmeExample{args: args, first: i + 3, last: end})
		i = end
	}
	return out
}

// splitExampleArgs splits a command line as a POSIX shell would for the
// words a README uses: blanks separate, single quotes group.
func splitExampleArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			in = true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune("|;&<>$`\"*?", r) && !quoted:
			return nil, fmt.Errorf("example uses shell syntax %q: keep examples to plain rdmashark arguments", r)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if in {
		args = append(args, cur.String())
	}
	return args, nil
}

func TestREADMEExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	examples := readmeExamples(t, lines)
	if len(examples) < 4 {
		t.Fatalf("README.md has %d examples; the tour shows at least 4", len(examples))
	}
	t.Chdir(root)
	// The width the examples are shown at, whatever terminal runs the test.
	t.Setenv("COLUMNS", "100")
	t.Setenv("NO_COLOR", "1")
	update := os.Getenv("RDMASHARK_UPDATE_README") == "1"
	outs := make([][]string, len(examples))
	for k, ex := range examples {
		var stdout, stderr bytes.Buffer
		run(ex.args, bytes.NewReader(nil), &stdout, &stderr)
		got := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
		if stdout.Len() == 0 {
			t.Errorf("README.md:%d: rdmashark %s wrote nothing (stderr: %s)", ex.first, strings.Join(ex.args, " "), stderr.String())
			continue
		}
		outs[k] = got
		want := lines[ex.first:ex.last]
		if !update && strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("README.md:%d: rdmashark %s: the README shows\n%s\nbut it writes\n%s\n(RDMASHARK_UPDATE_README=1 go test ./cmd/rdmashark -run TestREADMEExamples rewrites it)",
				ex.first, strings.Join(ex.args, " "), strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	if !update || t.Failed() {
		return
	}
	var b strings.Builder
	prev := 0
	for k, ex := range examples {
		b.WriteString(strings.Join(lines[prev:ex.first], "\n"))
		b.WriteString("\n")
		b.WriteString(strings.Join(outs[k], "\n"))
		b.WriteString("\n")
		prev = ex.last
	}
	b.WriteString(strings.Join(lines[prev:], "\n"))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
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
}
