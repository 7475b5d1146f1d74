package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/rdmashark/rdmashark", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-25T03:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}}
	if got, want := versionFrom("dev", bi, true), "v0.3.0, revision 0123456789ab+dirty, 2026-11-25T03:00:00Z, go1.26.8"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := versionFrom("1.2.3", bi, true); got != "1.2.3" {
		t.Errorf("-X version: %q", got)
	}
	if got := versionFrom("dev", nil, false); strings.Contains(got, "dev") {
		t.Errorf("no build info: %q", got)
	}
	// The test binary has build info: never "dev".
	if got := versionString(); got == "" || got == "dev" {
		t.Errorf("versionString() = %q", got)
	}
}
