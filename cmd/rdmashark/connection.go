package main

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/report"
)

// --connection ID narrows analyze's and check's reports to one connection
// (its ID as analyze numbers them, as transactions --connection takes it).

// narrowResult keeps connection id's results and findings only; it reports
// whether the connection is there.
func narrowResult(res *check.Result, id int) bool {
	if res == nil {
		return false
	}
	found := false
	conns := res.Connections[:0]
	for _, cr := range res.Connections {
		if cr.ID == id {
			conns = append(conns, cr)
			found = true
		}
	}
	res.Connections = conns
	// A new slice, not res.Findings filtered in place: the connections'
	// findings share its array (check.Runner.Finish).
	var fs []check.Finding
	if res.Findings != nil {
		fs = []check.Finding{}
	}
	for _, f := range res.Findings {
		if f.Connection == id {
			fs = append(fs, f)
		}
	}
	res.Findings = fs
	return found
}

// narrowAnalysis keeps connection id and its findings only; the packet and
// protocol counts stay the capture's. It reports whether the connection is
// there.
func narrowAnalysis(a *report.Analysis, id int) bool {
	found := false
	conns := a.Connections[:0]
	for _, c := range a.Connections {
		if c.ID == id {
			conns = append(conns, c)
			found = true
		}
	}
	a.Connections = conns
	var fs []report.Finding
	if a.Findings != nil {
		fs = []report.Finding{} // a new slice: a.Findings is the check.Result's (AddChecks)
	}
	for _, f := range a.Findings {
		if f.Connection == id {
			fs = append(fs, f)
		}
	}
	a.Findings = fs
	return found
}
