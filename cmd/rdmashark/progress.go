package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/report"
)

// progressDelay is how long a read runs before its progress is shown: a
// capture read in less prints none.
const progressDelay = time.Second

// progress shows, on a terminal's standard error, how far the read of a
// regular file has come: bytes of the file read and its size, packets,
// the rate and the time left, redrawn in place a few times a second and
// erased when the read ends.
type progress struct {
	w       io.Writer
	f       *os.File // whose offset is how far the read has come
	name    string
	size    int64
	width   int
	start   time.Time
	packets atomic.Uint64
	stop    chan struct{}
	done    sync.WaitGroup
	shown   bool
}

// wantProgress says whether cmd shows progress: its standard error is a
// terminal, -q (the root's, or dissect's and capture's own) was not
// given, and the progress line mixes with nothing: standard output is a
// file, or it is the terminal and the command prints only at the end
// (not dissect). Into a pipe (a pager, less, reads the terminal too)
// nothing is shown.
func wantProgress(cmd *cobra.Command) bool {
	if f := cmd.Flags().Lookup("quiet"); f != nil && f.Value.String() == "true" {
		return false
	}
	if !isTTY(cmd.ErrOrStderr()) {
		return false
	}
	out, ok := cmd.OutOrStdout().(*os.File)
	if !ok {
		return false
	}
	if isTTY(out) {
		return cmd.Name() != "dissect"
	}
	fi, err := out.Stat()
	return err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeCharDevice != 0)
}

// openProgress opens the regular file name for reading with its progress
// shown on cmd's standard error, when wantProgress; f is nil otherwise
// (the caller opens it as it would).
func openProgress(cmd *cobra.Command, name string) (f *os.File, p *progress) {
	if !wantProgress(cmd) {
		return nil, nil
	}
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil
	}
	return f, startProgress(cmd.ErrOrStderr(), f, name)
}

// startProgress starts showing the read of f (named name) on w, or
// returns nil when f is no regular file or is empty.
func startProgress(w io.Writer, f *os.File, name string) *progress {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil
	}
	width := report.DefaultWidth
	if ef, ok := w.(*os.File); ok {
		if _, n := terminalWidth(ef); n > 0 {
			width = n
		}
	}
	p := &progress{w: w, f: f, name: name, size: fi.Size(), width: width, start: time.Now(), stop: make(chan struct{})}
	p.done.Add(1)
	go p.run()
	return p
}

// packet counts one packet read (safe to call on a nil progress).
func (p *progress) packet() {
	if p != nil {
		p.packets.Add(1)
	}
}

// end stops the display and erases its line.
func (p *progress) end() {
	if p == nil {
		return
	}
	close(p.stop)
	p.done.Wait()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func (p *progress) run() {
	defer p.done.Done()
	select {
	case <-p.stop:
		return
	case <-time.After(progressDelay):
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		p.draw()
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

// draw writes the line: "NAME: 1.2 GiB of 4.0 GiB (30%), 812345 packets,
// 95.1 MiB/s, 0:31 left".
func (p *progress) draw() {
	off, err := p.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return
	}
	off = min(off, p.size)
	el := time.Since(p.start).Seconds()
	rate := float64(off) / max(el, 1e-3)
	figures := fmt.Sprintf(": %s of %s (%d%%), %d packets, %s/s", sizeText(float64(off)), sizeText(float64(p.size)),
		off*100/p.size, p.packets.Load(), sizeText(rate))
	if rate > 0 && off < p.size {
		left := time.Duration(float64(p.size-off) / rate * float64(time.Second)).Round(time.Second)
		figures += fmt.Sprintf(", %d:%02d left", int(left.Minutes()), int(left.Seconds())%60)
	}
	// The figures matter more than the name: a name too long for the
	// line keeps its end.
	name := []rune(printable(p.name))
	if room := p.width - 1 - report.TextWidth(figures); len(name) > room {
		name = append([]rune("…"), name[len(name)-max(room-1, 0):]...)
	}
	line := []rune(string(name) + figures)
	if len(line) >= p.width {
		// A line that wrapped could not be redrawn in place.
		line = line[:max(p.width-1, 0)]
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", string(line))
	p.shown = true
}

// sizeText is a byte count in binary units, one decimal.
func sizeText(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
