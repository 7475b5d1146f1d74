package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source/live"
)

// captureOptions are capture's flags.
type captureOptions struct {
	wide       bool
	iface      string
	filter     string
	snaplen    int
	count      int
	duration   time.Duration
	write      string
	summary    bool
	quiet      bool
	format     string
	noPromisc  bool
	bufferKiB  int
	list       bool
	dumpFilter bool
	sysfs      string
	failOn     string
	ring       []string // -b
	stop       []string // -a
	print      bool
	lineBuf    bool
	readerPrio int
	handoff    int // --handoff-blocks (tests)
	reader     string
}

func newCaptureCmd(g *globalFlags) *cobra.Command {
	o := &captureOptions{}
	cmd := &cobra.Command{
		Use:   "capture -i IFACE",
		Short: "Capture RDMA traffic from an interface and analyse it as it arrives",
		Long: `capture reads frames from a network interface (Linux AF_PACKET, no libpcap) and
analyses them as they arrive: one summary line per packet as dissect prints
them, or with --summary the connections table refreshed every second (past
64 closed connections, those whose results left memory are counted rather
than shown); on Ctrl-C, at -c packets or after --duration, the full analyze
report, every connection in it, and the number of packets the kernel
dropped. What it keeps does not grow with the connections that close.

The filter runs in the kernel. By default it keeps RoCEv2 (UDP port 4791, or
--roce-port), RoCEv1 (EtherType 0x8915) and, on iWARP, the TCP ports of the
protocols rdmashark analyses (NFS 20049, NVMe-oF 4420 and 8009, SMB Direct 445
and 5445, iSER 3260), VLAN-tagged or not. -f replaces it with a pcap-filter
expression as tcpdump takes it, compiled to BPF without libpcap:

  -f 'udp port 4791 or tcp port 20049'
  -f 'host 192.0.2.1 and not arp'
  -f 'vlan 100 and udp dst portrange 4791-4792'

(host, net, port, portrange, proto, ether, vlan, less, greater, and/or/not:
give addresses and numbers, names are not resolved), or with the older
comma-separated terms "udp PORT,tcp PORT,ether TYPE", or "all".

capture --list (-D) shows the interfaces and the RDMA devices (rxe, siw,
hardware) bound to each: capture on the netdev of the RDMA device.

Frames arrive in a memory-mapped ring (TPACKET_V3) of -B KiB, 32768 by
default (tcpdump's is 2048). The ring's reader runs in a capture process
of its own (rdmashark runs itself; --reader in-process keeps it in this
one), as dumpcap runs beside tshark, so that the analysis's garbage
collections never stop it: it writes each block's frames to the -w file,
as tcpdump does, copies them for the analysis, which gets them through a
pipe, and gives the block back at once. With -w, an analysis that falls
behind by all its buffers (a quarter of the ring, at least 8 MiB, and
the pipe's 8 MiB) skips blocks: their packets are written but not
analysed, and counted. When the writer (or, without -w, the analysis) falls behind
by the whole ring, the kernel drops frames:
each loss is reported on standard error with its time and the packet it
came before, counted in the report, and written into the pcapng
(Interface Statistics Block, isb_ifdrop).

As dumpcap: -b filesize:N (kB) / -b duration:S / -b files:K write a ring
buffer of pcapng files name_00001_YYYYMMDDhhmmss.pcapng… (each a whole
file; the analysis runs across them), -a duration:S / -a packets:N stop
the capture, -q prints no line per packet, -P (--print) does even with
--format json (to standard error), -l flushes every line.

Opening a packet socket needs CAP_NET_RAW (root). Exit status: 0 when done,
1 when a finding is at or above --fail-on, 2 for bad flags or an interface
that cannot be captured, 3 when no RDMA connection was captured (nothing to
judge, as check says of such a file).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCapture(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.iface, "interface", "i", "", "network interface, or RDMA device (rxe0: its netdev), to capture on (see --list)")
	bindWide(cmd, &o.wide)
	var noResolve bool // tcpdump's and tshark's -n: `capture -ni eth0` as typed for them
	f.BoolVarP(&noResolve, "no-resolve", "n", false, "as tcpdump -n: no name resolution (rdmashark never resolves names: accepted for tcpdump's command lines)")
	f.StringVarP(&o.filter, "filter", "f", "", `frames to keep: a pcap-filter expression as tcpdump takes it ('udp port 4791 or tcp port 20049'), "udp PORT,tcp PORT,ether TYPE" terms, or "all" (default: RoCEv2, RoCEv1, and the analysed protocols' iWARP ports)`)
	f.IntVarP(&o.snaplen, "snapshot-length", "s", live.DefaultSnapLen, "keep at most this many bytes of each frame")
	f.IntVarP(&o.count, "count", "c", 0, "stop after this many packets")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long (e.g. 30s, 5m)")
	f.StringVarP(&o.write, "write", "w", "", "also write the frames to this pcapng file (- for standard output: the rest goes to standard error)")
	f.BoolVar(&o.summary, "summary", false, "instead of a line per packet, show the connections so far, refreshed every second")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no line per packet, only the report at the end")
	f.BoolVarP(&o.print, "print", "P", false, "a summary line per packet, also with --format json (then on standard error)")
	f.BoolVarP(&o.lineBuf, "line-buffered", "l", false, "flush the output after every line")
	f.StringArrayVarP(&o.ring, "ring-buffer", "b", nil, "with -w, a ring buffer of files: filesize:N (kB), duration:S, files:K (repeatable)")
	f.StringArrayVarP(&o.stop, "autostop", "a", nil, "stop after duration:S or packets:N (repeatable)")
	f.StringVar(&o.format, "format", "table", "report at the end: table or json (json prints nothing else on standard output)")
	f.StringVar(&o.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: info, warning or error")
	f.BoolVarP(&o.noPromisc, "no-promiscuous-mode", "p", false, "do not put the interface into promiscuous mode")
	f.IntVarP(&o.bufferKiB, "buffer-size", "B", live.DefaultBufferSize/1024, "memory-mapped ring in KiB (tcpdump's default is 2048); frames beyond it are dropped and counted")
	f.IntVar(&o.readerPrio, "reader-priority", 0, "run the thread that reads the ring at this real-time priority (SCHED_FIFO, 1-99; needs root or CAP_SYS_NICE), so that a busy machine does not keep it from the ring; 0: a normal thread")
	f.StringVar(&o.reader, "reader", readerProcess, `where the ring's reader runs: "process", a capture process of its own that writes the -w file and sends the frames to this one for the analysis (as dumpcap does for tshark), or "in-process", a goroutine beside the analysis`)
	f.BoolVarP(&o.list, "list", "D", false, "list the interfaces and the RDMA devices on each, then exit")
	f.BoolVarP(&o.dumpFilter, "dump-filter", "d", false, "print the filter's BPF program, then exit")
	f.StringVar(&o.sysfs, "sysfs", live.DefaultSysfs, "where sysfs is mounted (for tests)")
	_ = f.MarkHidden("sysfs")
	f.IntVar(&o.handoff, "handoff-blocks", 0, "buffers of a ring block's size between the ring's reader and the writer and analysis (for tests; 0: a quarter of the ring, at least 8 MiB)")
	_ = f.MarkHidden("handoff-blocks")
	return cmd
}

// captureVerdict is check's verdict on a capture: the exit status 1 when
// a finding is at or above failOn, with a line saying so; drops is the
// kernel's drop count — when frames were dropped, a finding's evidence may be
// among them, and the line says that too.
func captureVerdict(out io.Writer, res *check.Result, failOn check.Severity, drops uint64) int {
	n := res.Count(failOn)
	if n == 0 {
		return exitOK
	}
	fmt.Fprintf(out, "check: %d findings at or above %s", n, failOn)
	if drops > 0 {
		fmt.Fprintf(out, " (%d packets were dropped by the kernel: evidence may be missing)", drops)
	}
	fmt.Fprintln(out)
	return exitFindings
}

// readerPriorityGOGC is the collector's GOGC under --reader-priority
// (docs/live-capture.md: with it the flag's runs dropped nothing in 9 of
// 9, where with GOGC=100 they dropped up to 412 frames, same session).
const readerPriorityGOGC = 400

// captureInfo is what capture's JSON has beside the analyze document,
// under "capture" (Analysis.WriteJSONWith).
type captureInfo struct {
	Interface string `json:"interface"`
	Filter    string `json:"filter"`
	SnapLen   int    `json:"snapshot_length"`
	// Packets counts the frames analysed.
	Packets uint64 `json:"packets"`
	// KernelPackets counts the frames the filter kept, KernelDrops those
	// of them the kernel dropped for want of queue space (PACKET_STATISTICS).
	KernelPackets uint64 `json:"kernel_packets"`
	KernelDrops   uint64 `json:"kernel_drops"`
	// Losses places the drops: before which frame, when.
	Losses []captureLoss `json:"losses,omitempty"`
	// NotAnalysed counts the frames written (-w) that the analysis
	// skipped because it had fallen behind by all its buffers.
	NotAnalysed uint64  `json:"not_analysed"`
	RingKiB     int     `json:"ring_kib"`
	Seconds     float64 `json:"seconds"`
	Stop        string  `json:"stopped_by"`
	Written     string  `json:"written,omitempty"`
	// Files are the ring buffer's files kept (-b), oldest first.
	Files []string `json:"files,omitempty"`
}

// captureLoss is a place where frames were lost.
type captureLoss struct {
	// By is "kernel" (dropped: the ring was full; lost between frames
	// before_frame-1 and before_frame) or "analysis" (written but not
	// analysed: frames before_frame to before_frame+dropped-1).
	By          string    `json:"by"`
	BeforeFrame uint64    `json:"before_frame"`
	Time        time.Time `json:"time"`
	Dropped     uint64    `json:"dropped"`
}

func runCapture(cmd *cobra.Command, g *globalFlags, o *captureOptions) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if isStdout(o.write) {
		out = errOut // standard output carries the pcapng (-w -)
	}
	if o.format != "table" && o.format != "json" {
		return usageErr("--format must be table or json, not %q", o.format)
	}
	if o.list {
		return listInterfaces(out, o)
	}
	filter := live.DefaultFilter(g.rocePort, dissect.ULPPorts(newULPs())...)
	if cmd.Flags().Changed("filter") {
		var err error
		if filter, err = live.ParseFilter(o.filter); err != nil {
			return usageErr("-f: %v", err)
		}
	}
	switch {
	case o.snaplen <= 0 || o.snaplen > live.DefaultSnapLen:
		return usageErr("-s must be from 1 to %d", live.DefaultSnapLen)
	case o.count < 0:
		return usageErr("-c must not be negative")
	case o.duration < 0:
		return usageErr("--duration must not be negative")
	case o.bufferKiB <= 0:
		return usageErr("-B must be positive")
	case o.readerPrio < 0 || o.readerPrio > 99:
		return usageErr("--reader-priority must be from 1 to 99 (0: none)")
	case o.reader != readerProcess && o.reader != readerInProcess:
		return usageErr("--reader must be %s or %s, not %q", readerProcess, readerInProcess, o.reader)
	case o.summary && o.quiet:
		return usageErr("--summary and -q do not go together")
	case o.print && (o.quiet || o.summary):
		return usageErr("-P prints a line per packet: not with -q or --summary")
	}
	ring, err := parseRing(o.ring)
	if err != nil {
		return usageErr("%v", err)
	}
	if ring.on() && o.write == "" {
		return usageErr("-b needs -w to name the files")
	}
	autostop, err := parseStop(o.stop)
	if err != nil {
		return usageErr("%v", err)
	}
	count := lowestPositive(o.count, autostop.packets)
	duration := lowestPositive(o.duration, autostop.duration)
	if o.dumpFilter {
		ins, err := filter.Instructions(uint32(o.snaplen))
		if err != nil {
			return usageErr("-f: %v", err)
		}
		fmt.Fprintf(out, "; %s, snapshot length %d\n", filter, o.snaplen)
		for i, in := range ins {
			fmt.Fprintf(out, "(%03d) %v\n", i, in)
		}
		return nil
	}
	if o.iface == "" {
		return usageErr("no interface: give one with -i (rdmashark capture --list shows them)")
	}
	// -i rxe0: an RDMA device name captures on its netdev (rdmadev.go).
	resolved, err := live.ResolveInterface(o.iface, o.sysfs)
	if err != nil {
		return usageErr("-i: %v", err)
	}
	if note := resolved.Note(); note != "" {
		fmt.Fprintln(errOut, "rdmashark:", note)
		o.iface = resolved.Netdev
	}

	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	setup := &captureSetup{
		Interface: o.iface, Filter: filter.String(), SnapLen: o.snaplen, Promiscuous: !o.noPromisc, BufferKiB: o.bufferKiB,
		Count: count, Duration: duration, Write: o.write,
		RingFileSize: ring.fileSize, RingDuration: ring.duration, RingFiles: ring.files,
		ReaderPriority: o.readerPrio, HandoffBlocks: max(o.handoff, 0), Start: time.Now(), filter: filter,
	}
	capRun, err := startCaptureRun(ctx, setup, o.reader, cmd.OutOrStdout(), errOut) // (out is errOut with -w -)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer capRun.close()

	name := "live:" + o.iface
	failOn, err := check.ParseSeverity(o.failOn)
	if err != nil {
		return usageErr("--fail-on: %v", err)
	}
	// The checks see every packet as it arrives, as analyze's do; and as
	// in analyze, a connection the engine releases leaves memory with its
	// results (report/analyze_spill.go), so that a capture that runs for
	// days does not grow with the connections it saw close.
	var opts dissect.Options
	g.engineOptions(&opts)
	spill := report.NewConnSpill()
	opts.Observer = spill
	checks, _ := withChecks(check.Config{}, &opts, nil)
	spill.SetRunner(checks)
	eng := dissect.NewEngine(opts)
	// The ring's reader applies the stop conditions, so that the engine
	// and the writer see the same frames; the engine's loop only counts.
	cfg := live.RunConfig{Count: count}
	var each func(*dissect.Packet) error
	var lines report.PacketWriter
	var ticks []func(time.Time) error
	switch {
	case o.summary:
		// The live table goes to standard output, or beside the JSON to
		// standard error.
		w := out
		if o.format == "json" {
			w = errOut
		}
		sv := &summaryView{w: w, lay: g.layout(cmd, o.wide), tty: isTerminal(w), name: name, eng: eng, stats: capRun.Stats}
		ticks = append(ticks, sv.tick)
	case o.quiet || (o.format == "json" && !o.print):
	default:
		w := out
		if o.format == "json" {
			w = errOut
		}
		lines = report.NewSummaryWriter(w)
		each = lines.WritePacket
		if o.lineBuf {
			each = func(p *dissect.Packet) error {
				if err := lines.WritePacket(p); err != nil {
					return err
				}
				return lines.Flush()
			}
		}
		ticks = append(ticks, func(time.Time) error { return lines.Flush() })
	}
	each = feedChecks(checks, each)
	ringBytes, ringBlocks := capRun.ringSize()
	fmt.Fprintf(errOut, "rdmashark: listening on %s (Ethernet), filter %q, snapshot length %d bytes, ring %d KiB in %d blocks\n",
		o.iface, filter.String(), o.snaplen, ringBytes>>10, ringBlocks)

	capRun.begin(ctx)
	if err := capRun.PriorityErr(); err != nil {
		fmt.Fprintf(errOut, "rdmashark: warning: %v\n", err)
	}
	// Each loss, as it is found, on standard error with its time.
	reported := 0
	reportLosses := func() {
		losses := capRun.Losses()
		for _, l := range losses[reported:] {
			if l.Analysis {
				// Final only once the run of skipped blocks ended;
				// reported when it started.
				fmt.Fprintf(errOut, "rdmashark: %s: the analysis fell behind by all its buffers: from packet %d on, packets are written to the file but not analysed, until it catches up\n",
					l.Time.Format("15:04:05.000000"), l.Before)
				continue
			}
			fmt.Fprintf(errOut, "rdmashark: %s: the kernel dropped %d packets before packet %d (the ring was full)\n",
				l.Time.Format("15:04:05.000000"), l.Dropped, l.Before)
		}
		reported = len(losses)
	}
	ticks = append(ticks, func(time.Time) error { reportLosses(); return nil })
	cfg.Tick = func(now time.Time) error {
		for _, t := range ticks {
			if err := t(now); err != nil {
				return err
			}
		}
		return nil
	}

	// The engine's loop ends when the ring's reader stops (ctx included)
	// and the engine has read what it handed out.
	res, runErr := runLive(context.Background(), capRun.source(), eng, cfg, each)
	capRun.EngineDone()
	cr := capRun.Wait()
	stop() // a second Ctrl-C from here on ends the program at once
	if cr.WriteErr != nil && runErr == nil {
		runErr, res.Stop = cr.WriteErr, live.StopError
	}

	stats, statsErr, closeErr, files := capRun.finish()
	reportLosses()
	if statsErr != nil {
		fmt.Fprintf(errOut, "rdmashark: warning: kernel counters of %s: %v\n", o.iface, statsErr)
	}
	if lines != nil {
		if err := lines.Flush(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if closeErr != nil {
		fmt.Fprintf(errOut, "rdmashark: writing %s: %v\n", o.write, closeErr)
		if runErr == nil {
			runErr = closeErr
		}
	}
	warn(cmd, eng)
	if stats.Drops > 0 {
		fmt.Fprintf(errOut, "rdmashark: warning: %d packets dropped by the kernel: the analysis misses them (a larger -B or a narrower -f helps)\n", stats.Drops)
	}

	a := spill.Analysis(name, eng.Snapshot())
	defer a.Close()
	if runErr != nil {
		a.Errors = append(a.Errors, runErr.Error())
	}
	verdict := checks.Finish(eng.Conns.Connections())
	verdict.NoteLoss(stats.Drops, eng.Stats.Skipped)
	var notAnalysed uint64
	for _, l := range capRun.Losses() {
		if l.Analysis {
			notAnalysed += l.Dropped
		}
	}
	if notAnalysed > 0 {
		verdict.AddCaveat(fmt.Sprintf("%d packets were captured and written but not analysed (the analysis fell behind): findings may be missing or partial", notAnalysed))
	}
	a.AddChecks(verdict)
	info := captureInfo{
		Interface:     o.iface,
		Filter:        filter.String(),
		SnapLen:       o.snaplen,
		Packets:       res.Packets,
		KernelPackets: stats.Packets,
		KernelDrops:   stats.Drops,
		Seconds:       res.End.Sub(res.Start).Seconds(),
		Stop:          res.Stop.String(),
		Written:       o.write,
		RingKiB:       ringBytes >> 10,
		NotAnalysed:   notAnalysed,
	}
	for _, l := range capRun.Losses() {
		by := "kernel"
		if l.Analysis {
			by = "analysis"
		}
		info.Losses = append(info.Losses, captureLoss{By: by, BeforeFrame: l.Before, Time: l.Time, Dropped: l.Dropped})
	}
	if ring.on() {
		info.Files = files
		info.Written = ""
	}
	var werr error
	if o.format == "json" {
		werr = a.WriteJSONWith(out, "capture", info)
	} else {
		if o.summary && !isTerminal(out) {
			fmt.Fprintln(out, "--- final ---")
		}
		werr = a.WriteText(out, g.layout(cmd, o.wide))
		fmt.Fprintf(out, "capture on %s: %d packets in %.1f s (%s); %d packets dropped by the kernel\n",
			o.iface, res.Packets, info.Seconds, info.Stop, stats.Drops)
		if notAnalysed > 0 {
			fmt.Fprintf(out, "%d more packets were written to the file but not analysed: the analysis fell behind\n", notAnalysed)
		}
		switch {
		case ring.on():
			fmt.Fprintf(out, "written to %s\n", strings.Join(info.Files, ", "))
		case o.write != "":
			fmt.Fprintf(out, "written to %s\n", o.write)
		}
	}
	verdictOut := out
	if o.format == "json" {
		verdictOut = errOut
	}
	code := captureVerdict(verdictOut, verdict, failOn, stats.Drops)
	if code == exitOK && !eng.Conns.Seen(1) {
		// check's gate on what was captured: no RDMA connection is
		// nothing to judge (exit 3, as check says of such a file), not a
		// pass.
		fmt.Fprintf(verdictOut, "check: nothing to judge: no RDMA connection in the %s captured (look at -i and -f; capture --list shows the RDMA devices' interfaces)\n", report.Plural(int(res.Packets), "packet"))
		code = exitNothingToJudge
	}
	switch {
	case runErr != nil:
		return &exitError{exitUsage, runErr}
	case werr != nil:
		return werr
	case code != exitOK:
		return &exitError{code, errors.New("")}
	}
	return nil
}

// summaryView re-prints the connections table every second: in place on a
// terminal, one after the other (when something changed) otherwise.
type summaryView struct {
	w       io.Writer
	lay     report.Layout
	tty     bool
	name    string
	eng     *dissect.Engine
	stats   func() (live.Stats, error)
	last    time.Time
	shown   uint64
	drops   uint64
	buf     bytes.Buffer
	started bool
}

func (s *summaryView) tick(now time.Time) error {
	if now.Sub(s.last) < time.Second {
		return nil
	}
	s.last = now
	if st, err := s.stats(); err == nil {
		s.drops = st.Drops
	}
	n := s.eng.Stats.Packets
	if !s.tty && s.started && n == s.shown {
		return nil
	}
	s.started, s.shown = true, n
	s.buf.Reset()
	if s.tty {
		s.buf.WriteString("\x1b[H\x1b[2J") // cursor home, clear screen
	}
	fmt.Fprintf(&s.buf, "--- %s: %d packets, %d dropped by the kernel so far, at %s ---\n",
		strings.TrimPrefix(s.name, "live:"), n, s.drops, now.Format("15:04:05"))
	// The connections whose results the spill took show what is left of
	// them (DropDetail): they are left out here, counted, and in the
	// final report whole.
	snap := s.eng.Snapshot()
	all := snap.Connections
	snap.Connections = slices.DeleteFunc(slices.Clone(all), (*dissect.Connection).DetailDropped)
	if err := report.NewAnalysis(s.name, snap).WriteText(&s.buf, s.lay); err != nil {
		return err
	}
	if n := len(all) - len(snap.Connections); n > 0 {
		fmt.Fprintf(&s.buf, "(%d closed connections not shown: they are in the final report)\n", n)
	}
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// isTerminal tells whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// listDocument is capture --list --format json.
type listDocument struct {
	Interfaces []live.InterfaceInfo `json:"interfaces"`
	// Unbound lists RDMA devices whose netdev is not an interface here
	// (another network namespace, or none).
	Unbound []live.RDMADevice `json:"rdma_devices_without_interface,omitempty"`
}

func listInterfaces(out io.Writer, o *captureOptions) error {
	ifs, unbound, err := live.Interfaces(o.sysfs)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("listing interfaces: %w", err)}
	}
	if o.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(listDocument{ifs, unbound})
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tINTERFACE\tSTATE\tMAC\tADDRESSES\tRDMA")
	rdma := 0
	for n, i := range ifs {
		state := "down"
		switch {
		case i.Carrier:
			state = "up"
		case i.Up:
			state = "up, no carrier"
		}
		mac := i.MAC
		if mac == "" {
			mac = "-"
		}
		addrs := strings.Join(i.Addresses, " ")
		if addrs == "" {
			addrs = "-"
		}
		var devs []string
		for _, d := range i.RDMA {
			// "rxe0 → eth0 (Soft-RoCE)": the RDMA device sends on
			// this netdev.
			name, kind, _ := strings.Cut(rdmaText(d), " ")
			devs = append(devs, strings.TrimSpace(name+" → "+i.Name+" "+kind))
			rdma++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n+1, i.Name, state, mac, addrs, strings.Join(devs, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		if _, err := fmt.Fprintln(out, strings.TrimRight(l, " ")); err != nil {
			return err
		}
	}
	for _, d := range unbound {
		fmt.Fprintf(out, "RDMA device %s has no interface here (another network namespace?)\n", rdmaText(d))
	}
	if rdma == 0 && len(unbound) == 0 {
		fmt.Fprintln(out, "no RDMA devices (nothing in /sys/class/infiniband); Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE; soft-iWARP: rdma link add siw0 type siw netdev IFACE")
	}
	return nil
}

func rdmaText(d live.RDMADevice) string {
	var what []string
	switch d.Driver {
	case "rxe":
		what = append(what, "Soft-RoCE")
	case "siw":
		what = append(what, "soft-iWARP")
	case "":
	default:
		what = append(what, d.Driver)
	}
	if d.Transport != "" && d.Driver != "rxe" && d.Driver != "siw" {
		what = append(what, d.Transport)
	}
	if len(what) == 0 {
		return d.Name
	}
	return d.Name + " (" + strings.Join(what, ", ") + ")"
}

// runLive reads frames from src into eng through the engine's own loop
// (Engine.Run over live.Records), numbering them from 1 and timing them from
// the first, as for a file, until ctx ends, cfg.Count frames were read or
// cfg.Duration passed: those stops return a nil error. A failing source
// (the interface went down), each, Tick or Save stop it with their error.
// Everything read before the stop stays in eng, and the engine's input ends
// (Engine.Finish: the messages, RDMA operations and transactions still open
// are handed on) before runLive returns, whatever stopped it.
func runLive(ctx context.Context, src live.Source, eng *dissect.Engine, cfg live.RunConfig, each func(*dissect.Packet) error) (live.Result, error) {
	rs := live.NewRecords(ctx, src, cfg)
	defer rs.Close()
	err := eng.Run(rs, each)
	res := rs.Result()
	if err != nil {
		res.Stop = live.StopError // each failed, or the source
	}
	return res, err
}
