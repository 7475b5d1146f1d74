package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/rdmashark/rdmashark/check"
)

// JUnit XML as Jenkins, GitLab and GitHub test reporters read it (the
// "junit-10" schema of Jenkins' xunit plugin, report/testdata/junit-10.xsd):
// one <testsuite> per capture, one <testcase> per rule and connection. A
// rule with findings at or above --fail-on is a <failure>; one that could
// not be evaluated is <skipped> with the reason; findings below --fail-on
// go to <system-out> of a passing test case. A capture that could not be
// read adds a test case with an <error>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	File     string      `xml:"file,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func (r *CheckReport) WriteJUnit(w io.Writer) error {
	if r.err != nil {
		return r.err
	}
	doc := junitSuites{Name: "rdmashark check", Time: "0"}
	rules := ruleFindings{}
	for _, f := range r.Files {
		s := junitSuite{Name: artifactName(f.File), Time: "0", File: artifactName(f.File)}
		if f.Error != "" {
			s.Cases = append(s.Cases, junitCase{Name: "read capture", Classname: s.Name, Time: "0",
				Error: &junitMessage{Message: f.Error, Type: "unreadable"}})
			s.Errors++
		}
		if note := f.incompleteNote(); note != "" {
			// The input was not read whole (check --fail-on-damage).
			tc := junitCase{Name: "read capture whole", Classname: s.Name, Time: "0"}
			if r.FailOnDamage {
				tc.Failure = &junitMessage{Message: "incomplete input: " + note, Type: "incomplete"}
				s.Failures++
			} else {
				tc.SystemOut = "incomplete input (--fail-on-damage=false): " + note
			}
			s.Cases = append(s.Cases, tc)
		}
		err := f.eachConn(func(c *CheckConnection, fs []check.Finding) error {
			rules.reset(fs)
			class := fmt.Sprintf("%s: %s", s.Name, stableName(c))
			for _, ch := range c.Checks {
				tc := junitCase{Name: ch.Rule, Classname: class, Time: "0"}
				var lines []string
				for _, i := range rules.of(ch.Rule) {
					fd := &fs[i]
					lines = append(lines, fmt.Sprintf("%s %s%s", fd.Severity, where(fd), fd.Message))
				}
				if ch.Omitted > 0 {
					lines = append(lines, fmt.Sprintf("… and %d more", ch.Omitted))
				}
				switch {
				case ch.Status == check.StatusNotEvaluated:
					tc.Skipped = &junitMessage{Message: "not evaluated: " + ch.Reason}
					s.Skipped++
				case ch.Findings > 0 && ch.Worst >= r.FailOn:
					ru, _ := check.Lookup(ch.Rule)
					msg := fmt.Sprintf("%d %s finding(s): %s", ch.Findings, ch.Worst, ru.Summary)
					tc.Failure = &junitMessage{Message: msg, Type: ch.Worst.String(),
						Text: strings.Join(lines, "\n") + "\n\n" + ru.Reference}
					s.Failures++
				case ch.Findings > 0:
					tc.SystemOut = strings.Join(lines, "\n")
				}
				if len(c.Caveats) > 0 {
					// A passing or failing verdict that may rest on
					// incomplete evidence says so.
					notes := "caveat: " + strings.Join(c.Caveats, "\ncaveat: ")
					if tc.SystemOut != "" {
						notes = tc.SystemOut + "\n" + notes
					}
					tc.SystemOut = notes
				}
				s.Cases = append(s.Cases, tc)
			}
			return nil
		})
		if err != nil {
			return err
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	if gs, ok := r.junitGate(); ok {
		doc.Tests += gs.Tests
		doc.Failures += gs.Failures
		doc.Suites = append(doc.Suites, gs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// stableName names a connection by what stays the same from run to run of
// a test (its ID, addresses and service port; not QPNs or state), so test
// reporters can follow a test case's history.
func stableName(c *CheckConnection) string {
	if c.ID == 0 {
		return "packets outside any connection"
	}
	port := ""
	if c.ServicePort != nil {
		port = fmt.Sprintf(":%d", *c.ServicePort)
	}
	return fmt.Sprintf("connection %d %s %s → %s%s", c.ID, c.Transport, c.Client.Address, c.Server.Address, port)
}
