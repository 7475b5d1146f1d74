package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/report"
)

// inputs are the captures a command that reads several of them takes
// (analyze, check, transactions, export): -r FILE (repeatable) and the
// positional arguments, each a file, a directory (searched recursively for
// captures) or a glob; "-" is standard input. --jobs bounds how many are
// read at once.
type inputs struct {
	read []string
	jobs int
}

func (in *inputs) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVarP(&in.read, "read", "r", nil,
		`capture file, directory or glob to read ("-" for standard input; repeatable, and arguments add more)`)
	f.IntVarP(&in.jobs, "jobs", "j", runtime.GOMAXPROCS(0),
		"captures read at once, each by its own engine within its own memory bounds; the default is the CPUs Go may use (GOMAXPROCS)")
}

// captureExts are the file name endings a directory is searched for: the
// capture formats, plain or compressed (gzip, Zstandard, LZ4).
var captureExts = func() []string {
	var exts []string
	for _, c := range []string{"", ".gz", ".zst", ".lz4"} {
		for _, f := range []string{".pcap", ".pcapng", ".cap", ".erf"} {
			exts = append(exts, f+c)
		}
	}
	return exts
}()

func isCaptureName(name string) bool {
	name = strings.ToLower(name)
	for _, e := range captureExts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// names expands -r and the arguments into the list of captures, in the
// order given: a directory contributes the capture files under it
// (captureExts, recursively, in lexical order), a glob its matches (sorted,
// as filepath.Glob returns them). A file named twice is read once.
func (in *inputs) names(args []string) ([]string, error) {
	if in.jobs < 1 {
		return nil, usageErr("--jobs must be at least 1, not %d", in.jobs)
	}
	given := append(slices.Clone(in.read), args...)
	if len(given) == 0 {
		return nil, usageErr("no capture file: give files, directories or globs as arguments or with -r (\"-\" reads standard input)")
	}
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, g := range given {
		if g == "-" {
			add(g)
			continue
		}
		st, err := os.Stat(g)
		switch {
		case err == nil && st.IsDir():
			found, err := walkCaptures(g)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			if len(found) == 0 {
				return nil, usageErr("%s: no capture files in the directory (looked for %s)", g, strings.Join(captureExts, ", "))
			}
			for _, n := range found {
				add(n)
			}
		case err == nil:
			add(g)
		case strings.ContainsAny(g, "*?["):
			matches, gerr := filepath.Glob(g)
			if gerr != nil {
				return nil, usageErr("%s: %v", g, gerr)
			}
			if len(matches) == 0 {
				return nil, usageErr("%s: no file matches", g)
			}
			for _, m := range matches {
				if st, err := os.Stat(m); err == nil && st.IsDir() {
					found, err := walkCaptures(m)
					if err != nil {
						return nil, usageErr("%v", err)
					}
					for _, n := range found {
						add(n)
					}
					continue
				}
				add(m)
			}
		default:
			// Left to the reader, whose error names the file.
			add(g)
		}
	}
	if len(out) == 0 {
		return nil, usageErr("no capture file in %s", strings.Join(given, " "))
	}
	return out, nil
}

func walkCaptures(dir string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isCaptureName(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	return found, err
}

// forEachOrdered runs work(i) for i in [0, n) on at most jobs goroutines
// and hands the results to emit in index order, each as soon as it and all
// before it are done, on the calling goroutine: output comes out in input
// order whatever order the work finishes in. At most 2×jobs results are in
// flight or waiting, so a slow first capture does not pile up the others'
// results. An emit error stops handing out new work and is returned once
// the work under way has finished.
func forEachOrdered[R any](n, jobs int, work func(i int) R, emit func(i int, r R) error) error {
	if jobs < 1 {
		jobs = 1
	}
	if jobs > n {
		jobs = n
	}
	window := 2 * jobs
	type done struct {
		i int
		r R
	}
	next := make(chan int)
	results := make(chan done, window)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results <- done{i, work(i)}
			}
		}()
	}
	pending := map[int]R{}
	issued, emitted := 0, 0
	var err error
	for emitted < n {
		// Hand out work while the window has room.
		for err == nil && issued < n && issued-emitted < window {
			select {
			case next <- issued:
				issued++
				continue
			case d := <-results:
				pending[d.i] = d.r
			}
		}
		if err != nil && emitted >= issued {
			break
		}
		if r, ok := pending[emitted]; ok {
			delete(pending, emitted)
			if err == nil {
				err = emit(emitted, r)
			}
			emitted++
			continue
		}
		d := <-results
		pending[d.i] = d.r
	}
	close(next)
	wg.Wait()
	return err
}

// multiNote is the error a command returns after it has printed the
// errors of several captures one by one: only the exit status is left.
func multiNote(code int, failed, total int) error {
	return &exitError{code, fmt.Errorf("%d of %d captures could not be read in full", failed, total)}
}

func countErrs(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

// document is one capture's report, written as an element of a JSON array
// or as a table.
type document interface {
	WriteJSON(io.Writer) error
	WriteText(io.Writer, report.Layout) error
}

// docResult is what a command's work on one capture gives writeDocuments:
// the document (nil when the capture could not be read), the warnings to
// print before it, and the run's error.
type docResult[D document] struct {
	doc    D
	ok     bool
	warn   string
	runErr error
}

// writeDocuments runs work on every capture, --jobs at a time, and writes
// each one's document in input order: one document as it is, several as a
// JSON array of the one-capture documents or as tables one after another.
// An unreadable capture among several is said on standard error and keeps
// its place with failed's document. A document that has a Close method
// (a transaction list's temporary file) is closed once written. The error
// is the single capture's, or exitUsage naming how many of several failed.
func writeDocuments[D document](cmd *cobra.Command, names []string, jobs int, format string, lay report.Layout,
	work func(i int) docResult[D], failed func(i int, err error) D) error {
	out := cmd.OutOrStdout()
	many := len(names) > 1
	var errs []error
	if many && format == "json" {
		fmt.Fprint(out, "[\n")
	}
	werr := forEachOrdered(len(names), jobs, work, func(i int, r docResult[D]) error {
		fmt.Fprint(cmd.ErrOrStderr(), r.warn)
		errs = append(errs, r.runErr)
		if !r.ok {
			if !many {
				return nil
			}
			// Unreadable: said on standard error; the JSON array keeps
			// its place with the file and the error.
			fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", errText(unwrapExit(r.runErr)))
			r.doc = failed(i, unwrapExit(r.runErr))
		} else if many && r.runErr != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "rdmashark:", errText(unwrapExit(r.runErr)))
		}
		if c, ok := any(r.doc).(interface{ Close() error }); ok {
			defer c.Close()
		}
		if format == "json" {
			if many && i > 0 {
				fmt.Fprint(out, ",\n")
			}
			return r.doc.WriteJSON(out)
		}
		if many && i > 0 {
			fmt.Fprintln(out)
		}
		return r.doc.WriteText(out, lay)
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
}
