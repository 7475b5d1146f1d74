package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
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

// WriteJUnit writes the report as JUnit XML. The suites' counts come
// first, as attributes, so each file's cases are made twice: once to
// count them, once to write them one at a time (a report of 4,096
// connections and 40-odd rules has 170,000 of them; a file's spilled
// connections are read back each time). The bytes are xml.Encoder's of
// the whole document (TestJUnitStreamMatchesEncoder).
func (r *CheckReport) WriteJUnit(w io.Writer) error {
	if r.err != nil {
		return r.err
	}
	doc := junitSuites{Name: "rdmashark check", Time: "0"}
	for i := range r.Files {
		f := &r.Files[i]
		s := junitSuite{Name: artifactName(f.File), Time: "0", File: artifactName(f.File)}
		if err := r.fileCases(f, s.Name, s.count); err != nil {
			return err
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s) // no cases: written below
	}
	gs, gate := r.junitGate()
	if gate {
		doc.Tests += gs.Tests
		doc.Failures += gs.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: doc.Name}, {Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(doc.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(doc.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(doc.Errors)}, {Name: xml.Name{Local: "time"}, Value: doc.Time}}}
	if err := enc.EncodeToken(root); err != nil {
		return err
	}
	caseStart := xml.StartElement{Name: xml.Name{Local: "testcase"}}
	for i := range r.Files {
		s := &doc.Suites[i]
		start := s.start()
		if err := enc.EncodeToken(start); err != nil {
			return err
		}
		if err := r.fileCases(&r.Files[i], s.Name, func(tc *junitCase) error {
			return enc.EncodeElement(tc, caseStart)
		}); err != nil {
			return err
		}
		if err := enc.EncodeToken(start.End()); err != nil {
			return err
		}
	}
	if gate {
		if err := enc.EncodeElement(gs, xml.StartElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// start is the suite's start tag, with its attributes as xml.Encoder
// writes them of a junitSuite.
func (s *junitSuite) start() xml.StartElement {
	attr := []xml.Attr{{Name: xml.Name{Local: "name"}, Value: s.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(s.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(s.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(s.Errors)},
		{Name: xml.Name{Local: "skipped"}, Value: strconv.Itoa(s.Skipped)},
		{Name: xml.Name{Local: "time"}, Value: s.Time}}
	if s.File != "" {
		attr = append(attr, xml.Attr{Name: xml.Name{Local: "file"}, Value: s.File})
	}
	return xml.StartElement{Name: xml.Name{Local: "testsuite"}, Attr: attr}
}

// count counts a test case in the suite's totals.
func (s *junitSuite) count(tc *junitCase) error {
	s.Tests++
	switch {
	case tc.Error != nil:
		s.Errors++
	case tc.Failure != nil:
		s.Failures++
	case tc.Skipped != nil:
		s.Skipped++
	}
	return nil
}

// fileCases makes the test cases of file f, of suite name, in turn: the
// reading of the capture, then one per connection and rule.
func (r *CheckReport) fileCases(f *CheckFile, name string, put func(*junitCase) error) error {
	if f.Error != "" {
		if err := put(&junitCase{Name: "read capture", Classname: name, Time: "0",
			Error: &junitMessage{Message: f.Error, Type: "unreadable"}}); err != nil {
			return err
		}
	}
	if note := f.incompleteNote(); note != "" {
		// The input was not read whole (check --fail-on-damage).
		tc := junitCase{Name: "read capture whole", Classname: name, Time: "0"}
		if r.FailOnDamage {
			tc.Failure = &junitMessage{Message: "incomplete input: " + note, Type: "incomplete"}
		} else {
			tc.SystemOut = "incomplete input (--fail-on-damage=false): " + note
		}
		if err := put(&tc); err != nil {
			return err
		}
	}
	rules := ruleFindings{}
	return f.eachConn(func(c *CheckConnection, fs []check.Finding) error {
		rules.reset(fs)
		class := fmt.Sprintf("%s: %s", name, stableName(c))
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
			case ch.Findings > 0 && ch.Worst >= r.FailOn:
				ru, _ := check.Lookup(ch.Rule)
				msg := fmt.Sprintf("%d %s finding(s): %s", ch.Findings, ch.Worst, ru.Summary)
				tc.Failure = &junitMessage{Message: msg, Type: ch.Worst.String(),
					Text: strings.Join(lines, "\n") + "\n\n" + ru.Reference}
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
			if err := put(&tc); err != nil {
				return err
			}
		}
		return nil
	})
}

// stableName names a connection by what stays the same from run to run of
// a test (its ID, addresses and service port; not QPNs or state), so test
// reporters can follow a test case's history.
func stableName(c *CheckConnection) string {
	if c.ID == 0 {
		return "packets outside any connection"
	}
	server := c.Server.Address
	if c.ServicePort != nil {
		server = dissect.HostPort(server, *c.ServicePort)
	}
	return fmt.Sprintf("connection %d %s %s → %s", c.ID, c.Transport, c.Client.Address, server)
}
