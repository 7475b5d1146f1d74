package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestManPages: `rdmashark man` writes a page for every command a user can
// run, and each page names every flag the command takes (as --name or
// troff's escaped \-\-name), so the pages come from the command tree, not a copy.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if rc := run([]string{"man", "--dir", dir}, bytes.NewReader(nil), &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	root := newRoot()
	var walk func(c *cobra.Command)
	pages := 0
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for %q: %v", c.CommandPath(), err)
			return
		}
		pages++
		page := string(b)
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if !strings.Contains(page, "--"+f.Name) && !strings.Contains(page, `\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)) {
				t.Errorf("%s: the page does not name --%s", name, f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if pages < 12 {
		t.Errorf("%d pages; rdmashark has more commands than that", pages)
	}
}
