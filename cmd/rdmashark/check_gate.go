package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
)

// exitNothingToJudge: check's gate found too little in the captures to
// judge (no RDMA connection, no RPC-over-RDMA, every rule not evaluated,
// no connection set-up, or fewer connections or transactions than
// --min-connections/--min-transactions demand).
const exitNothingToJudge = 3

// gateFlags are check's gate assertions beside the rules (report/gate.go).
type gateFlags struct {
	allowEmpty         bool
	minConns, minTxns  int
	expectRemoteInv    string
	minInlineThreshold int
}

func (g *gateFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&g.allowEmpty, "allow-empty", false, "pass captures that give nothing to judge (no RDMA connection, no RPC-over-RDMA, every rule not evaluated, no connection set-up) instead of exiting 3")
	f.IntVar(&g.minConns, "min-connections", 0, "gate: demand at least N RDMA connections over all captures (exit 3 if fewer)")
	f.IntVar(&g.minTxns, "min-transactions", 0, "gate: demand at least N RPC transactions (Calls answered by their Reply) over all captures (exit 3 if fewer)")
	f.StringVar(&g.expectRemoteInv, "expect-remote-invalidation", "", "gate: demand that every RPC-over-RDMA connection negotiated remote invalidation (yes) or did not (no) (exit 1 if not)")
	f.IntVar(&g.minInlineThreshold, "min-inline-threshold", 0, "gate: demand inline thresholds of at least N octets both ways on every RPC-over-RDMA connection (exit 1 if not)")
}

func (g *gateFlags) options() (report.GateOptions, error) {
	o := report.GateOptions{AllowEmpty: g.allowEmpty, MinConnections: g.minConns,
		MinTransactions: g.minTxns, MinInlineThreshold: g.minInlineThreshold}
	if g.minConns < 0 || g.minTxns < 0 || g.minInlineThreshold < 0 {
		return o, usageErr("--min-connections, --min-transactions and --min-inline-threshold take a number ≥ 0")
	}
	switch strings.ToLower(g.expectRemoteInv) {
	case "":
	case "yes", "true", "y":
		t := true
		o.ExpectRemoteInvalidation = &t
	case "no", "false", "n":
		f := false
		o.ExpectRemoteInvalidation = &f
	default:
		return o, usageErr("--expect-remote-invalidation must be yes or no, not %q", g.expectRemoteInv)
	}
	return o, nil
}

// gateExit is check's exit status: 2 when a capture could not be read, 1
// when findings at or above --fail-on were found (not when only writing a
// baseline) or an expectation failed, 3 when the captures gave too little
// to judge, 0 otherwise.
func gateExit(rep *report.CheckReport) error {
	s := &rep.Summary
	if s.Unreadable > 0 || rep.FailOnDamage && s.Incomplete > 0 {
		return &exitError{exitUsage, errors.New("")}
	}
	if s.AtOrAboveFailOn > 0 && !rep.FindingsDoNotFail {
		return &exitError{exitFindings, errors.New("")}
	}
	evidence := false
	for _, g := range rep.Gate {
		if g.Status != report.GateFailed {
			continue
		}
		if !g.Evidence {
			return &exitError{exitFindings, errors.New("")}
		}
		evidence = true
	}
	if evidence {
		return &exitError{exitNothingToJudge, errors.New("")}
	}
	return nil
}

// locateRecords reads the capture again for where the findings' packets
// that SARIF points to are in the file (regions; report.SARIFPackets).
// findings walks the findings (CheckFile.EachFinding). It gives nothing
// for standard input and compressed files (offsets would not be the
// file's), or when the file cannot be read again.
func locateRecords(name string, findings func(func(*check.Finding) error) error) map[int]report.RecordSpan {
	want := map[int]bool{}
	last := 0
	if findings(func(f *check.Finding) error {
		for _, p := range report.SARIFPackets(f) {
			want[p] = true
			last = max(last, p)
		}
		return nil
	}) != nil {
		return nil // the report says why
	}
	if len(want) == 0 || name == "-" {
		return nil
	}
	r, err := source.Open(name)
	if err != nil {
		return nil
	}
	defer r.Close()
	if r.Compressed() {
		return nil
	}
	out := make(map[int]report.RecordSpan, len(want))
	for len(out) < len(want) {
		rec, err := r.Next()
		if err != nil {
			var se *source.Error
			if errors.As(err, &se) && !se.Final {
				continue
			}
			break
		}
		if want[rec.Number] {
			out[rec.Number] = report.RecordSpan{Offset: rec.Offset, Length: rec.Length}
		}
		if rec.Number >= last {
			break
		}
	}
	return out
}
