package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestPipelineSameOutput: decoding on a goroutine of its own (--pipeline
// on) prints exactly what decoding in line does (--pipeline off), exit
// status and standard error included, for every output format of every
// command, on every real capture (the lossy and mutated ones too: damaged
// records, truncated files), read from the file and from standard input.
func TestPipelineSameOutput(t *testing.T) {
	caps := everyCapture(t)
	fields := []string{"dissect", "-T", "fields", "-e", "frame.number", "-e", "frame.time_relative",
		"-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.invariant.crc",
		"-e", "rpcordma.xid", "-e", "iwarp_ddp_rdmap.rdma.opcode"}
	commands := [][]string{
		{"analyze", "--format", "json"},
		{"transactions", "--format", "json"},
		{"check", "--format", "json"},
		fields,
		{"dissect", "-V"},
		{"dissect", "-c", "7"},
	}
	if testing.Short() {
		commands = commands[:1]
	}
	for _, c := range caps {
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range commands {
			for _, stdin := range []bool{false, true} {
				if stdin && args[0] != "dissect" {
					continue
				}
				outs := [2]string{}
				for i, mode := range []string{"off", "on"} {
					a := append([]string{"--pipeline", mode}, args...)
					in := strings.NewReader("")
					if stdin {
						a = append(a, "-r", "-")
						in = strings.NewReader(string(data))
					} else {
						a = append(a, c)
					}
					var out, errb bytes.Buffer
					code := run(a, in, &out, &errb)
					outs[i] = strings.Join([]string{string(rune('0' + code)), out.String(), errb.String()}, "\x00")
				}
				if outs[0] != outs[1] {
					t.Errorf("%s %v (stdin %v): the pipeline's output differs from the sequential one", filepath.Base(c), args, stdin)
				} else if len(outs[0]) < 10 {
					t.Errorf("%s %v: no output", filepath.Base(c), args)
				}
			}
		}
	}
}

// TestPipelineAuto: --pipeline auto (the default) leaves the choice to the
// engine for one capture, and turns the pipeline off when more captures
// are read at once than leave a CPU to spare for a second goroutine each
// (--jobs): the engines keep the CPUs busy already. on and off are kept.
func TestPipelineAuto(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		flag       string
		concurrent int
		want       dissect.PipelineMode
	}{
		{"auto", 0, dissect.PipelineAuto},
		{"auto", 1, dissect.PipelineAuto},
		{"auto", procs/2 + 1, dissect.PipelineOff},
		{"auto", procs + 1, dissect.PipelineOff},
		{"on", procs + 1, dissect.PipelineOn},
		{"off", 1, dissect.PipelineOff},
	} {
		if c.concurrent == procs/2+1 && c.concurrent < 2 {
			continue // one CPU: a single capture is the case above
		}
		g := &globalFlags{pipeline: c.flag, concurrent: c.concurrent}
		var opts dissect.Options
		g.engineOptions(&opts)
		if opts.Pipeline != c.want {
			t.Errorf("--pipeline %s, %d captures at once, GOMAXPROCS %d: %v, want %v", c.flag, c.concurrent, procs, opts.Pipeline, c.want)
		}
	}
	// The default is auto.
	if f := newRoot().PersistentFlags().Lookup("pipeline"); f == nil || f.DefValue != "auto" {
		t.Errorf("--pipeline default: %v", f)
	}
}
