package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestBareReadIsDissect: rdmashark -r FILE without a command is dissect, as
// tshark -r FILE; tshark's -n and -2 are accepted.
func TestBareReadIsDissect(t *testing.T) {
	code, bare, errs := runArgs(t, "-n", "-r", rpingPcap, "-2", "-c", "5")
	_, want, _ := runArgs(t, "dissect", "-r", rpingPcap, "-c", "5")
	if code != 0 || bare != want || strings.Count(bare, "\n") != 5 {
		t.Fatalf("exit %d (%s): %q, dissect: %q", code, errs, bare, want)
	}
}

// TestVersionFlags: -v is the version (tshark -v), at the top and on
// dissect; check's details are -V, and its old -v still works.
func TestVersionFlags(t *testing.T) {
	for _, args := range [][]string{{"-v"}, {"dissect", "-v"}} {
		code, out, _ := runArgs(t, args...)
		if code != 0 || !strings.HasPrefix(out, "rdmashark ") {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
	}
	codeV, outV, _ := runArgs(t, "check", "-V", rpingPcap)
	codev, outv, _ := runArgs(t, "check", "-v", rpingPcap)
	code, out, _ := runArgs(t, "check", rpingPcap)
	if codeV != codev || outV != outv || outV == out || len(outV) <= len(out) {
		t.Errorf("check -V (exit %d, %d bytes) and -v (exit %d, %d bytes) differ, or add nothing to check (exit %d, %d bytes)",
			codeV, len(outV), codev, len(outv), code, len(out))
	}
}

// TestTimeFormatColumn: -t applies to _ws.col.Time as to tshark's column
// (values from tshark -r rxe-rping.pcap -t ud|e|d -T fields -e _ws.col.Time).
func TestTimeFormatColumn(t *testing.T) {
	for _, c := range []struct{ format, want string }{
		{"ud", "2026-11-21 23:29:52.097489,2026-11-21 23:29:52.111466,2026-11-21 23:29:52.116147"},
		{"e", "1795303792.097489,1795303792.111466,1795303792.116147"},
		{"d", "0.000000,0.013977,0.004681"},
		{"r", "0.000000,0.013977,0.018658"},
	} {
		code, out, errs := runArgs(t, "-r", rpingPcap, "-c", "3", "-t", c.format, "-T", "fields", "-e", "_ws.col.Time")
		if got := strings.Join(strings.Split(strings.TrimSpace(out), "\n"), ","); code != 0 || got != c.want {
			t.Errorf("-t %s: exit %d (%s): %s, tshark %s", c.format, code, errs, got, c.want)
		}
	}
}

// TestWritePrintAndLineBuffered: -P prints the summary lines while -w
// writes; -l gives the same output; -F pcap writes a pcap tshark's readers
// take (rdmashark reads it back with the same packets).
func TestWritePrintAndLineBuffered(t *testing.T) {
	dir := t.TempDir()
	ng, pc := filepath.Join(dir, "a.pcapng"), filepath.Join(dir, "a.pcap")
	code, printed, errs := runArgs(t, "-r", rpingPcap, "-c", "20", "-w", ng, "-P", "-l")
	_, summary, _ := runArgs(t, "-r", rpingPcap, "-c", "20")
	if code != 0 || printed != summary {
		t.Fatalf("-w -P: exit %d (%s): %q", code, errs, printed)
	}
	if code, _, errs := runArgs(t, "-r", rpingPcap, "-c", "20", "-w", pc, "-F", "pcap"); code != 0 {
		t.Fatalf("-F pcap: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(pc)
	if err != nil || len(b) < 24 || !bytes.Equal(b[:4], []byte{0xd4, 0xc3, 0xb2, 0xa1}) {
		t.Fatalf("-F pcap: not a pcap file: %v % x", err, b[:min(len(b), 4)])
	}
	for _, f := range []string{ng, pc} {
		_, back, _ := runArgs(t, "-r", f)
		if back != summary {
			t.Errorf("%s read back: %q", f, back)
		}
	}
	if code, _, _ := runArgs(t, "-r", rpingPcap, "-w", "-", "-P"); code != exitUsage {
		t.Errorf("-P with -w -: exit %d", code)
	}
	if code, _, _ := runArgs(t, "-r", rpingPcap, "-w", pc, "-F", "erf"); code != exitUsage {
		t.Errorf("-F erf: exit %d", code)
	}
}

// TestOnlyProtocols: -O PROTO details that protocol's fields only, the
// others by their heading, as tshark -O.
func TestOnlyProtocols(t *testing.T) {
	code, out, errs := runArgs(t, "-r", rpingPcap, "-Y", "frame.number == 18", "-O", "infiniband")
	if code != 0 || !strings.Contains(out, "Packet Sequence Number: 16174010") || strings.Contains(out, "Time to Live") ||
		!strings.Contains(out, "Internet Protocol Version 4") {
		t.Errorf("-O infiniband: exit %d (%s):\n%s", code, errs, out)
	}
}

// TestDidYouMean: an unknown flag or field name gets the nearest one.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dissect", "--display-filtre", "ip", rpingPcap}, "did you mean --display-filter?"},
		{[]string{"dissect", "-Y", "infiniband.bth.pns == 1", rpingPcap}, "did you mean infiniband.bth.psn?"},
		{[]string{"dissect", "-T", "fields", "-e", "ip.scr", rpingPcap}, "did you mean ip.src?"},
		{[]string{"analyze", "-Y", "ip", rpingPcap}, "-Y is dissect's --display-filter"},
	} {
		code, _, errs := runArgs(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d: %q, want %q", c.args, code, errs, c.want)
		}
	}
}
