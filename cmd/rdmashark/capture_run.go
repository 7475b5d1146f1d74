package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/outfile"
	"github.com/rdmashark/rdmashark/source/live"
)

// Where the ring's reader runs (--reader): in a capture process of its own
// (readerProcess), as dumpcap runs beside tshark, or in this process
// beside the analysis (readerInProcess). docs/live-capture.md, "The reader
// in a process of its own", has why and the measurements.
const (
	readerProcess   = "process"
	readerInProcess = "in-process"
)

// captureSetup is what a capture opens and how it runs: the flags, once
// checked. A capture process gets it as JSON.
type captureSetup struct {
	Interface      string        `json:"interface"`
	Filter         string        `json:"filter"`
	SnapLen        int           `json:"snaplen"`
	Promiscuous    bool          `json:"promiscuous"`
	BufferKiB      int           `json:"buffer_kib"`
	Count          int           `json:"count"`
	Duration       time.Duration `json:"duration"`
	Write          string        `json:"write"`
	RingFileSize   int64         `json:"ring_file_size"`
	RingDuration   time.Duration `json:"ring_duration"`
	RingFiles      int           `json:"ring_files"`
	ReaderPriority int           `json:"reader_priority"`
	HandoffBlocks  int           `json:"handoff_blocks"`
	Start          time.Time     `json:"start"`

	filter live.Filter
}

func (s *captureSetup) ring() ringOptions {
	return ringOptions{fileSize: s.RingFileSize, duration: s.RingDuration, files: s.RingFiles}
}

// captureRun is a capture that runs: its reader in this process
// (inProcessCapture) or in a capture process (childCapture). runCapture
// reads the frames from source() with the engine until io.EOF, calls
// EngineDone, Wait, then finish for the counters and the -w files.
type captureRun interface {
	// ringSize is the ring's size in bytes and blocks.
	ringSize() (bytes, blocks int)
	// begin starts reading the ring (a capture process already reads it).
	begin(ctx context.Context)
	source() live.Source
	PriorityErr() error
	// Losses are the places where frames were lost so far.
	Losses() []live.Loss
	// Stats are the kernel's counters so far.
	Stats() (live.Stats, error)
	EngineDone()
	Wait() live.CaptureResult
	// finish, after Wait: the kernel's counters at the end, the error of
	// closing the -w file(s) (the statistics block written), and the
	// ring buffer's files kept.
	finish() (stats live.Stats, statsErr, closeErr error, files []string)
	// close releases what is left (deferred: also after an early error).
	close()
}

// startCaptureRun opens the capture as s says, its reader in a capture
// process (reader "process") or in this one ("in-process"). A capture
// process needs Linux and, for -w -, a standard output it can share
// (stdout an *os.File); without them the reader runs in this process.
func startCaptureRun(ctx context.Context, s *captureSetup, reader string, stdout, stderr io.Writer) (captureRun, error) {
	if reader == readerProcess && readerProcessAvailable && mayCapture() {
		out, _ := stdout.(*os.File)
		errf, _ := stderr.(*os.File)
		if !isStdout(s.Write) || out != nil {
			if !isStdout(s.Write) {
				out = nil
			}
			return startCaptureChild(ctx, s, out, errf)
		}
	}
	c, err := openCapture(s)
	if err != nil {
		return nil, err
	}
	return &inProcessCapture{capturedFiles: c, s: s}, nil
}

// capturedFiles are a capture's interface and -w writer, open.
type capturedFiles struct {
	h      *live.Handle
	save   *live.Saver
	file   *os.File
	files  *live.FileRing
	writer live.FrameWriter
}

// openCapture opens the interface and the -w file or ring buffer as s
// says. Every error is one the user fixes (exit status 2).
func openCapture(s *captureSetup) (*capturedFiles, error) {
	h, err := live.Open(live.Config{
		Interface:   s.Interface,
		Filter:      s.filter,
		SnapLen:     s.SnapLen,
		Promiscuous: s.Promiscuous,
		BufferSize:  s.BufferKiB * 1024,
	})
	if err != nil {
		return nil, err
	}
	c := &capturedFiles{h: h}
	saverInfo := live.SaverInfo{Interface: s.Interface, Filter: s.filter.String(), SnapLen: s.SnapLen, LinkType: h.LinkType(), Start: s.Start}
	switch ring := s.ring(); {
	case ring.on():
		c.files, err = live.NewFileRing(live.FileRingConfig{
			Path: s.Write, FileSize: ring.fileSize, Duration: ring.duration, Files: ring.files, Info: saverInfo,
			Stats: func() live.Stats { st, _ := h.Stats(); return st },
		})
		if err != nil {
			h.Close()
			return nil, err
		}
		c.writer = c.files
	case s.Write != "":
		// Written in place, not through internal/outfile's temporary
		// file: the file must be readable while the capture runs and
		// keep every flushed packet when the capture is killed
		// (TestCaptureSignals). A live capture has no input to destroy.
		if c.file, err = openCaptureFile(s.Write); err != nil {
			h.Close()
			return nil, err
		}
		c.save, err = live.NewSaver(outfile.NewWholeWrites(c.file), saverInfo)
		if err != nil {
			c.file.Close()
			h.Close()
			return nil, fmt.Errorf("%s: %w", s.Write, err)
		}
		c.writer = c.save
	}
	return c, nil
}

// closeWriter writes the statistics block and closes the -w file(s).
func (c *capturedFiles) closeWriter(stats *live.Stats) error {
	switch {
	case c.save != nil:
		err := c.save.Close(stats)
		if cerr := c.file.Close(); err == nil {
			err = cerr
		}
		return err
	case c.files != nil:
		return c.files.Close()
	}
	return nil
}

func (c *capturedFiles) fileNames() []string {
	if c.files == nil {
		return nil
	}
	return c.files.Files()
}

func (c *capturedFiles) close() {
	if c.file != nil {
		c.file.Close()
	}
	c.h.Close()
}

// inProcessCapture reads the ring on a goroutine of this process
// (live.Capture), beside the analysis.
type inProcessCapture struct {
	*capturedFiles
	s      *captureSetup
	cp     *live.Capture
	gcWas  int
	gcDone bool
}

func (c *inProcessCapture) ringSize() (int, int) { return c.h.RingSize() }

func (c *inProcessCapture) begin(ctx context.Context) {
	if c.s.ReaderPriority > 0 && os.Getenv("GOGC") == "" {
		// Each garbage collection stops the reader too, for as long as
		// the slowest thread of the process takes to stop (on a busy
		// machine up to a quarter of a second was measured): a quarter
		// as many of them. The heap stays under --max-buffered's
		// memory limit (memlimit.go), which the collector keeps.
		c.gcWas, c.gcDone = debug.SetGCPercent(readerPriorityGOGC), true
	}
	c.cp = live.StartCapture(ctx, c.h, live.CaptureConfig{Count: c.s.Count, Duration: c.s.Duration, Writer: c.writer, ReaderPriority: c.s.ReaderPriority, EngineBlocks: c.s.HandoffBlocks})
}

func (c *inProcessCapture) source() live.Source        { return c.cp }
func (c *inProcessCapture) PriorityErr() error         { return c.cp.PriorityErr() }
func (c *inProcessCapture) Losses() []live.Loss        { return c.cp.Losses() }
func (c *inProcessCapture) Stats() (live.Stats, error) { return c.h.Stats() }
func (c *inProcessCapture) EngineDone()                { c.cp.EngineDone() }
func (c *inProcessCapture) Wait() live.CaptureResult   { return c.cp.Wait() }
func (c *inProcessCapture) finish() (live.Stats, error, error, []string) {
	stats, statsErr := c.h.Stats()
	closeErr := c.closeWriter(&stats)
	return stats, statsErr, closeErr, c.fileNames()
}

func (c *inProcessCapture) close() {
	if c.cp != nil {
		c.cp.EngineDone()
		c.cp.Wait()
	}
	c.capturedFiles.close()
	if c.gcDone {
		debug.SetGCPercent(c.gcWas)
	}
}

// The capture process. rdmashark runs itself (/proc/self/exe) with
// captureChildArg and the setup as JSON; the capture process opens the
// interface and the -w file(s), reads the ring, applies the stop
// conditions and writes the file(s) exactly as the in-process reader does
// (it is a live.Capture), and sends the frames to the analysing process
// through a pipe as the frame stream (live.Stream: pcapng, each frame with
// its number and the losses before it), never waiting for it: when the
// pipe and the engine buffers are full, blocks go to the file only and are
// counted as not analysed, as in-process. The analysing process's garbage
// collections and its goroutines no longer stop or delay the reader; the
// capture process allocates nothing per frame.
//
// Descriptors: 0, a pipe the analysing process closes to stop the
// capture (or that closes when it dies); 3, the control pipe (childMsg, a
// JSON line each); 4, the frame stream. The capture process also stops on
// SIGINT and SIGTERM, and gets SIGTERM when its parent dies.
const captureChildArg = "__capture-process"

// childMsg is one line of the control pipe, capture process to analyser.
type childMsg struct {
	// Ready: the capture runs (the answer to the start); Error: it could
	// not start (the message the user gets, exit status 2).
	Ready *childReady `json:"ready,omitempty"`
	Error string      `json:"error,omitempty"`
	// Losses found since the last message, and the counters so far
	// (about every live.DefaultTick).
	Losses []live.Loss `json:"losses,omitempty"`
	Stats  *live.Stats `json:"stats,omitempty"`
	// End: the last message, once every frame was sent and the file
	// closed.
	End *childEnd `json:"end,omitempty"`
}

type childReady struct {
	RingBytes   int    `json:"ring_bytes"`
	RingBlocks  int    `json:"ring_blocks"`
	PriorityErr string `json:"priority_error,omitempty"`
}

type childEnd struct {
	Stop     live.StopReason `json:"stop"`
	Frames   uint64          `json:"frames"`
	Err      string          `json:"error,omitempty"`
	WriteErr string          `json:"write_error,omitempty"`
	Stats    live.Stats      `json:"stats"`
	StatsErr string          `json:"stats_error,omitempty"`
	CloseErr string          `json:"close_error,omitempty"`
	Losses   []live.Loss     `json:"losses,omitempty"`
	Files    []string        `json:"files,omitempty"`
}

func errOf(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runCaptureChild is the capture process (args: the setup as JSON). Its
// outcome goes to the control pipe; the exit status says only whether it
// could speak.
func runCaptureChild(args []string) int {
	ctl := os.NewFile(3, "control")
	data := os.NewFile(4, "frames")
	if ctl == nil || data == nil || len(args) != 1 {
		fmt.Fprintln(os.Stderr, "rdmashark: the capture process is started by rdmashark capture")
		return exitUsage
	}
	var mu sync.Mutex
	enc := json.NewEncoder(ctl)
	send := func(m childMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
	}
	fail := func(err error) int {
		send(childMsg{Error: err.Error()})
		return exitUsage
	}
	var s captureSetup
	if err := json.Unmarshal([]byte(args[0]), &s); err != nil {
		return fail(fmt.Errorf("capture process: %v", err))
	}
	var err error
	if s.filter, err = live.ParseFilter(s.Filter); err != nil {
		return fail(fmt.Errorf("-f: %v", err))
	}
	// Stopped by the analysing process (standard input closes, also
	// when it dies) or by a signal; later signals change nothing, the
	// analysing process decides.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
	}()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	c, err := openCapture(&s)
	if err != nil {
		return fail(err)
	}
	defer c.close()
	if s.ReaderPriority > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(readerPriorityGOGC)
	}
	cp := live.StartCapture(ctx, c.h, live.CaptureConfig{Count: s.Count, Duration: s.Duration, Writer: c.writer, ReaderPriority: s.ReaderPriority, EngineBlocks: s.HandoffBlocks})
	bytes, blocks := c.h.RingSize()
	send(childMsg{Ready: &childReady{RingBytes: bytes, RingBlocks: blocks, PriorityErr: errString(cp.PriorityErr())}})

	// The counters and new losses about every tick, for the analysing
	// process's messages and --summary.
	tickDone := make(chan struct{})
	tickStop := make(chan struct{})
	go func() {
		defer close(tickDone)
		t := time.NewTicker(live.DefaultTick)
		defer t.Stop()
		sent := 0
		for {
			select {
			case <-tickStop:
				return
			case <-t.C:
			}
			m := childMsg{}
			if st, err := c.h.Stats(); err == nil {
				m.Stats = &st
			}
			if l := cp.Losses(); len(l) > sent {
				m.Losses = l[sent:]
				sent = len(l)
			}
			send(m)
		}
	}()
	_ = cp.Stream(data, s.SnapLen) // a failed write: the analyser stopped reading
	data.Close()
	cr := cp.Wait()
	close(tickStop)
	<-tickDone
	stats, statsErr := c.h.Stats()
	closeErr := c.closeWriter(&stats)
	send(childMsg{End: &childEnd{
		Stop: cr.Stop, Frames: cr.Frames, Err: errString(cr.Err), WriteErr: errString(cr.WriteErr),
		Stats: stats, StatsErr: errString(statsErr), CloseErr: errString(closeErr),
		Losses: cp.Losses(), Files: c.fileNames(),
	}})
	ctl.Close()
	return exitOK
}

// childCapture is the analysing process's side of a capture process.
type childCapture struct {
	cmd   *exec.Cmd
	stopW *os.File // the capture process's standard input: closed to stop
	dataR *os.File
	src   *live.StreamSource
	ready childReady

	mu     sync.Mutex
	losses []live.Loss
	stats  live.Stats

	end      *childEnd
	endCh    chan struct{} // the control pipe ended
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	doneOnce sync.Once
	stopWake func() bool
}

// startCaptureChild starts the capture process and waits until it
// captures (nil) or says why it cannot (the error the user gets). stdout
// is the capture process's standard output (-w -), stderr its standard
// error (nil: none).
func startCaptureChild(ctx context.Context, s *captureSetup, stdout, stderr *os.File) (*childCapture, error) {
	arg, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	ctlR, ctlW := pipe()
	dataR, dataW := pipe()
	stopR, stopW := pipe()
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("starting the capture process: %w", err)
	}
	growPipe(dataW)
	cmd := exec.Command("/proc/self/exe", captureChildArg, string(arg))
	cmd.Stdin = stopR
	cmd.ExtraFiles = []*os.File{ctlW, dataW}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting the capture process: %w", err)
	}
	ctlW.Close()
	dataW.Close()
	stopR.Close()
	c := &childCapture{cmd: cmd, stopW: stopW, dataR: dataR, endCh: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	first := make(chan childMsg, 1)
	go c.control(ctlR, first)
	m, ok := <-first
	switch {
	case !ok:
		c.Stop()
		<-c.exited
		dataR.Close()
		return nil, fmt.Errorf("the capture process ended before it captured: %v", c.waitErr)
	case m.Ready == nil:
		c.Stop()
		<-c.exited
		dataR.Close()
		return nil, errors.New(m.Error)
	}
	c.ready = *m.Ready
	c.src = live.NewStreamSource(dataR, layers.LinkTypeEthernet, c.endOfStream)
	c.stopWake = context.AfterFunc(ctx, c.Stop)
	return c, nil
}

// control reads the control pipe: the first message goes to first, the
// losses and counters after it into c, until the end.
func (c *childCapture) control(r *os.File, first chan<- childMsg) {
	defer r.Close()
	defer close(c.endCh)
	dec := json.NewDecoder(r)
	started := false
	for {
		var m childMsg
		if err := dec.Decode(&m); err != nil {
			if !started {
				close(first)
			}
			return
		}
		if !started {
			started = true
			first <- m
			close(first)
			if m.Ready == nil {
				return
			}
			continue
		}
		c.mu.Lock()
		c.losses = append(c.losses, m.Losses...)
		if m.Stats != nil {
			c.stats = *m.Stats
		}
		if m.End != nil {
			c.end = m.End
			c.losses = m.End.Losses
			c.stats = m.End.Stats
		}
		c.mu.Unlock()
		if m.End != nil {
			return
		}
	}
}

// endOfStream waits for the capture process's last word once the frame
// stream ended.
func (c *childCapture) endOfStream() (live.StopReason, error) {
	<-c.endCh
	if c.end == nil {
		<-c.exited
		return live.StopError, c.lostErr()
	}
	return c.end.Stop, errOf(c.end.Err)
}

func (c *childCapture) lostErr() error {
	return fmt.Errorf("the capture process ended without its report (%v)", c.waitErr)
}

func (c *childCapture) ringSize() (int, int)  { return c.ready.RingBytes, c.ready.RingBlocks }
func (c *childCapture) begin(context.Context) {}
func (c *childCapture) source() live.Source   { return c.src }
func (c *childCapture) PriorityErr() error    { return errOf(c.ready.PriorityErr) }

func (c *childCapture) Losses() []live.Loss {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]live.Loss(nil), c.losses...)
}

func (c *childCapture) Stats() (live.Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats, nil
}

// Stop asks the capture process to stop: it sends the frames it has, then
// its last word.
func (c *childCapture) Stop() {
	c.stopOnce.Do(func() { c.stopW.Close() })
}

// EngineDone: the analysis reads no more; a capture process still sending
// frames gets an error and writes the file alone.
func (c *childCapture) EngineDone() {
	c.doneOnce.Do(func() { c.dataR.Close() })
}

func (c *childCapture) Wait() live.CaptureResult {
	c.Stop()
	<-c.endCh
	<-c.exited
	if c.stopWake != nil {
		c.stopWake()
	}
	if c.end == nil {
		return live.CaptureResult{Stop: live.StopError, Err: c.lostErr()}
	}
	return live.CaptureResult{Stop: c.end.Stop, Frames: c.end.Frames, Err: errOf(c.end.Err), WriteErr: errOf(c.end.WriteErr)}
}

func (c *childCapture) finish() (live.Stats, error, error, []string) {
	if c.end == nil {
		return live.Stats{}, c.lostErr(), nil, nil
	}
	return c.end.Stats, errOf(c.end.StatsErr), errOf(c.end.CloseErr), c.end.Files
}

func (c *childCapture) close() {
	c.EngineDone()
	c.Stop()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}
