// Command campaign runs rdmashark on mutated real captures and reports every
// run that crashed, hung, or failed without naming its input: the long
// campaign of issue 13, which anyone can repeat (README, "Fuzzing").
//
//	go run ./internal/campaign                  # 2000 runs
//	go run ./internal/campaign -n 60000 -seed 7 -out /tmp/campaign
//
// Each run takes a capture under testdata/pcaps (or -inputs), mutates it
// (bit flips, a cut, a length field that lies, a copied or deleted chunk,
// header edits and hostile text — escape sequences, newlines, NUL, bytes
// that are not UTF-8, bidi overrides — in the packets' strings with the
// ICRC, MPA CRC and TCP checksum recomputed (headers.go), gzip, zstd or
// lz4 around it, or several of these) and runs one of analyze, check,
// transactions, dissect (-V, -T fields, summary lines), report (the HTML
// page) and export on it, sometimes with small --max-buffered and
// --max-connections.
// A run fails when it exits with a status other than 0, 1 or 2 (or 3 for
// check: nothing to judge), prints a Go panic or fatal error, outlives
// -timeout, exits 2 with an error that does not name the input, or prints
// a raw control byte (anything below 0x20 but newline and tab, DEL) on
// standard output or error. Failing
// inputs are written to -out with the command line, to replay them; the
// exit status is 1 if any run failed.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func main() {
	var (
		n       = flag.Int("n", 2000, "runs")
		seed    = flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to repeat a campaign)")
		inputs  = flag.String("inputs", "testdata/pcaps/*.pcap*", "glob of the captures to mutate")
		out     = flag.String("out", "", "directory for failing inputs (default: a new temporary directory)")
		timeout = flag.Duration("timeout", 60*time.Second, "a run that takes longer is a hang")
		bin     = flag.String("bin", "", "rdmashark binary (default: go build ./cmd/rdmashark)")
	)
	flag.Parse()
	if err := campaign(*n, *seed, *inputs, *out, *timeout, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(1)
	}
}

func campaign(n int, seed uint64, glob, out string, timeout time.Duration, bin string) error {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no captures match %q (run from the repository's root)", glob)
	}
	var caps [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		caps = append(caps, b)
	}
	work, err := os.MkdirTemp("", "rdmashark-campaign-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if out == "" {
		if out, err = os.MkdirTemp("", "rdmashark-campaign-failures-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if bin == "" {
		bin = filepath.Join(work, "rdmashark")
		if b, err := exec.Command("go", "build", "-o", bin, "./cmd/rdmashark").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, b)
		}
	}
	fmt.Printf("campaign: %d runs, seed %d, %d captures, failures to %s\n", n, seed, len(caps), out)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	failed := 0
	start := time.Now()
	for i := range n {
		k := rng.IntN(len(caps))
		data, what := mutate(rng, caps[k])
		name := filepath.Join(work, fmt.Sprintf("in-%d.pcap", i))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
		args := command(rng, name)
		problem := runOne(bin, args, name, timeout)
		os.RemoveAll(name + ".out") // report's page, export's tables
		if problem != "" {
			failed++
			keep := filepath.Join(out, fmt.Sprintf("fail-%d.pcap", i))
			os.WriteFile(keep, data, 0o644)
			line := fmt.Sprintf("%s: %s (from %s, %s)\n  rdmashark %s\n", keep, problem, filepath.Base(files[k]), what,
				strings.ReplaceAll(strings.Join(args, " "), name, keep))
			fmt.Print(line)
			f, _ := os.OpenFile(filepath.Join(out, "failures.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			f.WriteString(line)
			f.Close()
		}
		os.Remove(name)
		if (i+1)%500 == 0 {
			fmt.Printf("campaign: %d runs, %d failed, %s\n", i+1, failed, time.Since(start).Round(time.Second))
		}
	}
	fmt.Printf("campaign: %d runs, %d failed, %s\n", n, failed, time.Since(start).Round(time.Second))
	if failed > 0 {
		return fmt.Errorf("%d runs failed (seed %d); inputs in %s", failed, seed, out)
	}
	return nil
}

// command picks a command line for input name.
func command(rng *rand.Rand, name string) []string {
	var args []string
	switch rng.IntN(6) {
	case 0:
		args = []string{"analyze", "--format", []string{"table", "json"}[rng.IntN(2)]}
	case 1:
		args = []string{"check", "--format", []string{"text", "json", "junit", "sarif"}[rng.IntN(4)]}
	case 2:
		args = []string{"transactions"}
	case 3:
		args = []string{"report", "-o", name + ".out"}
	case 4:
		args = []string{"export", "--format", []string{"parquet", "ndjson"}[rng.IntN(2)], "-o", name + ".out"}
	default:
		args = [][]string{{"dissect", "-V"}, {"dissect"},
			{"dissect", "-T", "fields", "-e", "frame.number", "-e", "rpc.auth.machinename", "-e", "frame.comment", "-e", "_ws.col.Info"}}[rng.IntN(3)]
	}
	if rng.IntN(4) == 0 {
		args = append(args, "--max-buffered", []string{"4KiB", "64KiB", "1MiB"}[rng.IntN(3)])
	}
	if rng.IntN(4) == 0 {
		args = append(args, "--max-connections", []string{"1", "2", "16"}[rng.IntN(3)])
	}
	return append(args, name)
}

// runOne runs rdmashark and says what is wrong with the run, or "".
func runOne(bin string, args []string, name string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Sprintf("hang: still running after %v", timeout)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return "could not run: " + err.Error()
	}
	se := stderr.String()
	switch {
	case strings.Contains(se, "panic:") || strings.Contains(se, "fatal error:") || strings.Contains(se, "goroutine "):
		first, _, _ := strings.Cut(se[strings.Index(se, ":")+1:], "\n")
		return "crash:" + first
	case code == 3 && args[0] == "check":
		// check's gate: nothing to judge (GATE-EVIDENCE, documented).
	case code < 0 || code > 2:
		return fmt.Sprintf("exit status %d", code)
	case code == 2 && !strings.Contains(se, name):
		return "exit 2 without naming the input: " + strings.TrimSpace(se)
	}
	// Text, JSON, XML: no byte of the capture reaches a terminal raw.
	for _, o := range []struct {
		what string
		b    []byte
	}{{"standard output", stdout.Bytes()}, {"standard error", stderr.Bytes()}} {
		if i := rawControl(o.b); i >= 0 {
			return fmt.Sprintf("raw control byte %#02x in %s: %q", o.b[i], o.what, o.b[max(0, i-40):min(len(o.b), i+40)])
		}
	}
	return ""
}

// mutate returns a damaged copy of b and says how it was damaged.
func mutate(rng *rand.Rand, b []byte) ([]byte, string) {
	out := bytes.Clone(b)
	var did []string
	for k := 0; k == 0 || (k < 3 && rng.IntN(2) == 0); k++ {
		switch rng.IntN(8) {
		case 6:
			// Damage the checks cannot drop: the CRCs agree (headers.go).
			if d := editHeaders(rng, out); d != "" {
				did = append(did, d)
			}
		case 7:
			if d := hostileStrings(rng, out); d != "" {
				did = append(did, d)
			}
		case 0:
			n := 1 + rng.IntN(16)
			for range n {
				out[rng.IntN(len(out))] ^= byte(1 << rng.IntN(8))
			}
			did = append(did, fmt.Sprintf("%d bits flipped", n))
		case 1:
			at := rng.IntN(len(out))
			out = out[:at]
			did = append(did, fmt.Sprintf("cut at %d", at))
		case 2:
			if len(out) >= 8 {
				at := rng.IntN(len(out) - 4)
				v := []uint32{0, 1, 0xffff, 0x10000, 0xffffffff, rng.Uint32()}[rng.IntN(6)]
				binary.LittleEndian.PutUint32(out[at:], v)
				did = append(did, fmt.Sprintf("word at %d set to %#x", at, v))
			}
		case 3:
			if len(out) > 64 {
				at, n := rng.IntN(len(out)-32), 1+rng.IntN(32)
				out = append(out[:at:at], append(bytes.Clone(out[at:at+n]), out[at:]...)...)
				did = append(did, fmt.Sprintf("%d bytes at %d doubled", n, at))
			}
		case 4:
			if len(out) > 64 {
				at, n := rng.IntN(len(out)-32), 1+rng.IntN(32)
				out = append(out[:at:at], out[at+n:]...)
				did = append(did, fmt.Sprintf("%d bytes at %d deleted", n, at))
			}
		default:
			kind := []string{"gzipped", "zstd", "lz4"}[rng.IntN(3)]
			out = compress(kind, out)
			if rng.IntN(2) == 0 && len(out) > 8 {
				out = out[:len(out)-1-rng.IntN(8)]
				did = append(did, kind+", end cut")
			} else {
				did = append(did, kind)
			}
		}
		if len(out) == 0 {
			break
		}
	}
	return out, strings.Join(did, ", ")
}

// compress wraps b in a gzip member, a Zstandard frame or an LZ4 frame.
func compress(kind string, b []byte) []byte {
	var z bytes.Buffer
	switch kind {
	case "zstd":
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		defer enc.Close()
		return enc.EncodeAll(b, nil)
	case "lz4":
		w := lz4.NewWriter(&z)
		w.Write(b)
		w.Close()
	default:
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
	}
	return z.Bytes()
}
