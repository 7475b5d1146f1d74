package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// benchCapture is the capture the CLI benchmarks read: $RDMASHARK_BENCH_FILE
// (bench/run.sh builds large ones under /tmp), else rxe-nfs3.pcap.
func benchCapture(b *testing.B) (string, int64) {
	name := os.Getenv("RDMASHARK_BENCH_FILE")
	if name == "" {
		name = filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Skip(err)
	}
	return name, st.Size()
}

// benchCLI runs one command line per op over the bench capture, its output
// discarded; MB/s is of the capture file.
func benchCLI(b *testing.B, args ...string) {
	name, size := benchCapture(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if code := run(append(args, name), nil, io.Discard, io.Discard); code > exitFindings {
			b.Fatalf("%v: exit status %d", args, code)
		}
	}
}

func BenchmarkCLIAnalyze(b *testing.B)      { benchCLI(b, "analyze") }
func BenchmarkCLIAnalyzeJSON(b *testing.B)  { benchCLI(b, "analyze", "--format", "json") }
func BenchmarkCLICheck(b *testing.B)        { benchCLI(b, "check") }
func BenchmarkCLITransactions(b *testing.B) { benchCLI(b, "transactions") }
func BenchmarkCLITransactionsJSON(b *testing.B) {
	benchCLI(b, "transactions", "--format", "json")
}
func BenchmarkCLIDissectText(b *testing.B) { benchCLI(b, "dissect") }
func BenchmarkCLIDissectFields(b *testing.B) {
	benchCLI(b, "dissect", "-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.opcode",
		"-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn", "-e", "infiniband.invariant.crc")
}
func BenchmarkCLIDissectVerbose(b *testing.B) { benchCLI(b, "dissect", "-V") }
func BenchmarkCLIDissectJSON(b *testing.B)    { benchCLI(b, "dissect", "-T", "jsonl") }

// The same with decoding in line, on one goroutine (--pipeline off).
func BenchmarkCLIAnalyzeSequential(b *testing.B) { benchCLI(b, "--pipeline", "off", "analyze") }
func BenchmarkCLICheckSequential(b *testing.B)   { benchCLI(b, "--pipeline", "off", "check") }
func BenchmarkCLIDissectFieldsSequential(b *testing.B) {
	benchCLI(b, "--pipeline", "off", "dissect", "-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.opcode",
		"-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn", "-e", "infiniband.invariant.crc")
}

// The same with the reading on a goroutine of its own (--pipeline on).
func BenchmarkCLIAnalyzePipeline(b *testing.B) { benchCLI(b, "--pipeline", "on", "analyze") }
func BenchmarkCLICheckPipeline(b *testing.B)   { benchCLI(b, "--pipeline", "on", "check") }

// BenchmarkCLIReport writes the HTML report (to a file under the
// benchmark's temporary directory).
func BenchmarkCLIReport(b *testing.B) {
	benchCLI(b, "report", "-o", filepath.Join(b.TempDir(), "report.html"))
}
