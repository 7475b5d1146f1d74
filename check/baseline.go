package check

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// A baseline lists known findings, so that a CI gate can be adopted on an
// implementation that is not yet conforming and tightened later: findings
// that match an entry are suppressed (`check --baseline FILE`), new ones
// still fail the gate. `check --write-baseline FILE` writes one from a run.
//
// What a baseline matches on is what stays the same when the same test runs
// again: the rule, the connection's transport, the client and server
// addresses and the server's service port, and the finding's Key (the rule's
// description of what it found without packet numbers, XIDs, STags, QPNs,
// PSNs or connection IDs — e.g. "server R=0" for INV-NOT-NEGOTIATED). Every
// one of those a finding has must equal the entry's, except that an empty
// field (or a zero service port) in an entry matches anything: edit a
// baseline to widen it, e.g. drop the addresses when the test's addresses
// change from run to run. How many times a finding occurs is not matched:
// timing changes it between runs. A rule and connection whose kept findings
// are all suppressed has its omitted ones (past the per-rule bound)
// suppressed too.

// BaselineFormat names the file format.
const BaselineFormat = "rdmashark-baseline/1"

// BaselineEntry is one known finding.
type BaselineEntry struct {
	Rule        string `json:"rule"`
	Transport   string `json:"transport,omitempty"`
	Client      string `json:"client,omitempty"`
	Server      string `json:"server,omitempty"`
	ServicePort uint16 `json:"service_port,omitempty"`
	Key         string `json:"key,omitempty"`
	// Count and Example say what the run that wrote the entry found;
	// they are not matched.
	Count   int    `json:"count,omitempty"`
	Example string `json:"example,omitempty"`
	// first is where Example was found: the file (the Add it came with),
	// the connection's ID, the finding's place in its findings. The
	// entries are listed in that order before they are sorted, and the
	// example is the first finding, however the connections came
	// (AddFindings: check's spill reads them back after the others).
	first [3]int
}

// Baseline is a set of known findings.
type Baseline struct {
	Format  string          `json:"format"`
	Entries []BaselineEntry `json:"entries"`
	// file counts the Adds: the files recorded.
	file int
}

// ReadBaseline reads a baseline file.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	var b Baseline
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if b.Format != BaselineFormat {
		return nil, fmt.Errorf("baseline: format %q, want %q", b.Format, BaselineFormat)
	}
	for i, e := range b.Entries {
		if _, ok := Lookup(e.Rule); !ok {
			return nil, fmt.Errorf("baseline: entry %d: unknown rule %q", i, e.Rule)
		}
	}
	return &b, nil
}

// Write writes the baseline as indented JSON.
func (b *Baseline) Write(w io.Writer) error {
	if b.Format == "" {
		b.Format = BaselineFormat
	}
	if b.Entries == nil {
		b.Entries = []BaselineEntry{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

func entryOf(cr *ConnResult, f *Finding) BaselineEntry {
	return BaselineEntry{Rule: f.Rule, Transport: cr.Transport, Client: cr.Client.Address,
		Server: cr.Server.Address, ServicePort: cr.ServicePort, Key: f.Key}
}

func (e *BaselineEntry) matches(x BaselineEntry) bool {
	return e.Rule == x.Rule &&
		(e.Transport == "" || e.Transport == x.Transport) &&
		(e.Client == "" || e.Client == x.Client) &&
		(e.Server == "" || e.Server == x.Server) &&
		(e.ServicePort == 0 || e.ServicePort == x.ServicePort) &&
		(e.Key == "" || e.Key == x.Key)
}

// Add records every finding of res, one entry per distinct rule,
// connection endpoints and key; res is the next file's result (together
// with what Merge took of it before).
func (b *Baseline) Add(res *Result) {
	b.Format = BaselineFormat
	for _, cr := range res.Connections {
		b.AddConn(cr)
	}
	b.file++
	b.sort()
}

// AddConn records the findings of one connection of the next file's
// result, in any order of the connections: one check reports itself
// (Runner.TakeDone). Add, or sort, puts the entries in order.
func (b *Baseline) AddConn(cr *ConnResult) {
	b.AddFindings(cr.ID, cr.Transport, cr.Client.Address, cr.Server.Address, cr.ServicePort, cr.findings)
}

// AddFindings records the findings of connection id of the next file's
// result, with its transport, endpoints and service port (AddConn of a
// result read back from a report).
func (b *Baseline) AddFindings(id int, transport, client, server string, servicePort uint16, findings []Finding) {
	b.Format = BaselineFormat
	for i := range findings {
		f := &findings[i]
		x := BaselineEntry{Rule: f.Rule, Transport: transport, Client: client, Server: server, ServicePort: servicePort,
			Key: f.Key, Count: 1, Example: f.Message, first: [3]int{b.file, id, i}}
		b.add(x)
	}
}

// add adds an entry's count to the one of the same finding, the earlier
// example kept, or appends it.
func (b *Baseline) add(x BaselineEntry) {
	for j := range b.Entries {
		if e := &b.Entries[j]; e.Rule == x.Rule && e.Transport == x.Transport && e.Client == x.Client &&
			e.Server == x.Server && e.ServicePort == x.ServicePort && e.Key == x.Key {
			e.Count += x.Count
			if less(x.first, e.first) {
				e.first, e.Example = x.first, x.Example
			}
			return
		}
	}
	b.Entries = append(b.Entries, x)
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// sort lists the entries by rule, server, client and key, those alike in
// the order they were first found.
func (b *Baseline) sort() {
	sort.SliceStable(b.Entries, func(i, j int) bool { return less(b.Entries[i].first, b.Entries[j].first) })
	sort.SliceStable(b.Entries, func(i, j int) bool {
		a, c := &b.Entries[i], &b.Entries[j]
		if a.Rule != c.Rule {
			return a.Rule < c.Rule
		}
		if a.Server != c.Server {
			return a.Server < c.Server
		}
		if a.Client != c.Client {
			return a.Client < c.Client
		}
		return a.Key < c.Key
	})
}

// Apply removes the findings of res that the baseline lists, updates the
// connections' check results, and returns how many findings it suppressed.
func (b *Baseline) Apply(res *Result) int {
	total := 0
	for _, cr := range res.Connections {
		total += b.ApplyConn(cr)
	}
	// The kept findings move down over the old ones in res's array,
	// which they share (Runner.Finish).
	res.collectFindings(res.Findings[:0])
	res.Suppressed += total
	return total
}

// ApplyConn is Apply on one connection's result, one the caller reports
// itself (Runner.TakeDone): it removes the findings the baseline lists,
// updates the connection's check results, and returns how many findings
// it suppressed, which the caller adds to the file's count. A Baseline
// is only read: connections may be applied to from several goroutines.
func (b *Baseline) ApplyConn(cr *ConnResult) int {
	total := 0
	kept := cr.findings[:0]
	gone := map[string]int{}
	left := map[string]int{}
	for _, f := range cr.findings {
		x := entryOf(cr, &f)
		hit := false
		for i := range b.Entries {
			if b.Entries[i].matches(x) {
				hit = true
				break
			}
		}
		if hit {
			gone[f.Rule]++
			continue
		}
		left[f.Rule]++
		kept = append(kept, f)
	}
	cr.findings = kept
	for i := range cr.Checks {
		ch := &cr.Checks[i]
		n := gone[ch.Rule]
		if n == 0 {
			continue
		}
		if left[ch.Rule] == 0 {
			n += ch.Omitted // all kept ones matched: the omitted ones are the same kind
			ch.Omitted = 0
		}
		ch.Findings -= n
		ch.Suppressed += n
		total += n
		ch.Worst = 0
		for _, f := range kept {
			if f.Rule == ch.Rule {
				ch.Worst = max(ch.Worst, f.Severity)
			}
		}
		if ch.Findings == 0 {
			ch.Status = StatusPassed
		}
	}
	return total
}
