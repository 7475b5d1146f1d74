package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// hostile is what the AUTH_SYS machine name "client" of rxe-nfs3 becomes
// in evilNFS3: an escape sequence that clears the screen, a newline and a
// byte that is not UTF-8 — six bytes, as "client".
const hostile = "\x1b[2J\n\xff"

// evilNFS3 writes rxe-nfs3 with every "client" (the AUTH_SYS machine
// name) replaced by hostile and the ICRCs recomputed, so that the damage
// reaches RPC, under a file name that holds an escape sequence and a
// newline itself.
func evilNFS3(t *testing.T) (dir, name string) {
	t.Helper()
	data, err := os.ReadFile(nfs3Pcap)
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, off := range pcapRecords(t, data) {
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		frame := data[off+16 : off+16+n]
		if !bytes.Contains(frame, []byte("client")) || len(frame) < 14 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
			continue
		}
		copy(frame, bytes.ReplaceAll(frame, []byte("client"), []byte(hostile)))
		if roce.FixICRCv2(frame[14:]) == nil {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no frame of rxe-nfs3 names the machine \"client\"")
	}
	dir = t.TempDir()
	name = filepath.Join(dir, "evil\x1b]0;pwned\x07\n.pcap")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, name
}

// TestCaptureTextEscaped (issue 29 point 9): bytes from the capture (an
// AUTH_SYS machine name) and the capture's file name reach no text output
// raw — escape sequences, newlines, bytes that are not UTF-8 are escaped
// as tshark escapes them — and a newline cannot forge a -T fields row.
func TestCaptureTextEscaped(t *testing.T) {
	dir, name := evilNFS3(t)
	code, out, errs := runCmd(t, "dissect", "-T", "fields", "-e", "frame.number", "-e", "rpc.auth.machinename", name)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	_, ref, _ := runCmd(t, "dissect", "-T", "fields", "-e", "frame.number", nfs3Pcap)
	if got, want := strings.Count(out, "\n"), strings.Count(ref, "\n"); got != want {
		t.Errorf("-T fields printed %d lines for %d packets", got, want)
	}
	if !strings.Contains(out, "\t"+`\x1b[2J\n\xff`+"\n") {
		t.Errorf("-T fields: no escaped machine name in\n%.500s", out)
	}
	for _, args := range [][]string{
		{"dissect", "-V", name},
		{"dissect", name},
		{"dissect", "-T", "fields", "-e", "rpc.auth.machinename", "-E", "occurrence=a", "-E", "quote=d", name},
		{"analyze", name},
		{"check", name},
		{"transactions", name},
		{"transactions", "--format", "jsonl", name},
		{"export", "-o", filepath.Join(dir, "x"), name},
		{"analyze", filepath.Join(dir, "missing\x1b[6n")},
	} {
		code, out, errs := runCmd(t, args...)
		if code == 2 && args[1] != filepath.Join(dir, "missing\x1b[6n") {
			t.Errorf("%q: exit 2 %s", args, errs)
		}
		for _, s := range []string{out, errs} {
			if i := strings.IndexAny(s, "\x1b\x07\xff"); i >= 0 {
				t.Errorf("%q: a raw control byte in the output: %q", args, s[max(0, i-40):min(len(s), i+40)])
			}
		}
		// The summary lines show no machine name; JSON escapes as JSON.
		if args[0]+args[1] != "dissect"+name && args[1] != "--format" && !strings.Contains(out+errs, `\x1b`) {
			t.Errorf("%q: nothing escaped in the output", args)
		}
	}
	// -V names the machine, escaped.
	if _, out, _ := runCmd(t, "dissect", "-V", name); !strings.Contains(out, `Machine Name: \x1b[2J\n\xff`) {
		i := strings.Index(out, "Machine")
		t.Errorf("-V: %q", out[max(i, 0):min(len(out), max(i, 0)+60)])
	}
}
