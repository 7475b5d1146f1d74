package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// checkFile runs every rule on a capture, as `rdmashark check` does.
func checkFile(t *testing.T, name string) CheckFile {
	t.Helper()
	return checkFileWith(t, name, nil)
}

// checkFileWith is checkFile with the result changed by edit before the
// file is built.
func checkFileWith(t *testing.T, name string, edit func(*check.Result)) CheckFile {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := check.NewRunner(check.Config{})
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), nil))
	if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	res := run.Finish(eng.Conns.Connections())
	if edit != nil {
		edit(res)
	}
	return NewCheckFile(name, eng.Snapshot(), res, nil)
}

// sampleReport checks real and mutated captures chosen to give every kind
// of test case and result: failures (INV-NOT-NEGOTIATED), findings below
// the gate (info), warnings (a NAK other than a PSN sequence error, made
// from an ACK), not evaluated (rping), a packet outside any connection,
// iWARP, and an unreadable input. (A capture's own loss is information,
// not a warning: docs/loss.md.)
func sampleReport(t *testing.T) *CheckReport {
	rep := &CheckReport{FailOn: check.Error, Rules: check.Rules(), Version: "test"}
	for _, f := range []string{
		"../testdata/pcaps/rxe-nfs3.pcap",
		"../testdata/pcaps/siw-nfs3.pcap",
		"../testdata/pcaps/rxe-rping.pcap",
		"../testdata/pcaps/mutated/rxe-nfs3-conn2--icrc-corrupt.pcap",
		"../testdata/pcaps/mutated/rxe-nfs3-cm--rtu-to-rej.pcap",
		"../testdata/pcaps/mutated/rxe-nfs3-conn2--ack-to-nak.pcap",
	} {
		rep.Add(checkFile(t, f))
	}
	// Caveats: a connection missing a PSN (drop-call lost a request packet),
	// and a capture whose kernel dropped packets and whose reader skipped
	// records (every connection's results).
	rep.Add(checkFile(t, "../testdata/pcaps/mutated/rxe-nfs3-conn2--drop-call.pcap"))
	rep.Add(checkFileWith(t, "../testdata/pcaps/rxe-nfs42-small.pcap", func(r *check.Result) { r.NoteLoss(7, 2) }))
	rep.Add(NewCheckFile("missing & <odd>.pcap", nil, nil, fmt.Errorf("open missing & <odd>.pcap: no such file or directory")))
	return rep
}

func TestSARIFValidates(t *testing.T) {
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := rep.WriteSARIF(&buf); err != nil {
		t.Fatal(err)
	}
	// The caveats: the loss of a whole capture and a connection's missing
	// PSN as notifications of the run, and on each result of the
	// connection concerned.
	var sl struct {
		Runs []struct {
			Invocations []struct {
				Notifications []struct{ Message struct{ Text string } } `json:"toolExecutionNotifications"`
			}
			Results []struct {
				Properties struct{ Caveats []string }
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &sl); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range sl.Runs[0].Invocations[0].Notifications {
		notes = append(notes, n.Message.Text)
	}
	withPSN := 0
	for _, r := range sl.Runs[0].Results {
		if slices.Equal(r.Properties.Caveats, []string{psnCaveat}) {
			withPSN++
		}
	}
	if !slices.Contains(notes, dropCaveat) || !slices.Contains(notes, skipCaveat) || withPSN == 0 ||
		!slices.ContainsFunc(notes, func(s string) bool { return strings.HasSuffix(s, ": "+psnCaveat) }) {
		t.Errorf("SARIF: notifications %q, %d results with the PSN caveat", notes, withPSN)
	}
	c := jsonschema.NewCompiler()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF does not validate against sarif-schema-2.1.0.json: %v", err)
	}
	// The validator does reject what the schema forbids.
	for _, bad := range []struct{ from, to string }{
		{`"level": "note"`, `"level": "notice"`},
		{`"version": "2.1.0"`, `"version": "2.0.0"`},
		{`"ruleId"`, `"ruleID"`},
	} {
		broken, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(buf.String(), bad.from, bad.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(broken) == nil {
			t.Errorf("a SARIF log with %s instead of %s validates", bad.to, bad.from)
		}
	}
	// The schema admits a document without rules or results; check what
	// code-scanning dashboards need is there.
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID   string
						Help struct{ Text string }
					}
				}
			}
			Invocations []struct{ ExecutionSuccessful bool }
			Results     []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Locations []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
					LogicalLocations []struct{ Name string }
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(check.Rules()) {
		t.Errorf("%d rules in tool.driver.rules, want %d", len(run.Tool.Driver.Rules), len(check.Rules()))
	}
	want := 0
	for _, f := range rep.Files {
		want += len(f.Findings)
	}
	if len(run.Results) != want || want == 0 {
		t.Errorf("%d results, want one per finding kept (%d)", len(run.Results), want)
	}
	levels := map[string]int{}
	for _, r := range run.Results {
		levels[r.Level]++
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID || run.Tool.Driver.Rules[r.RuleIndex].Help.Text == "" {
			t.Errorf("result %s: ruleIndex %d names another rule, or the rule has no help", r.RuleID, r.RuleIndex)
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || len(r.Locations[0].LogicalLocations) == 0 {
			t.Errorf("result %s: locations %+v", r.RuleID, r.Locations)
		}
	}
	if levels["error"] == 0 || levels["note"] == 0 || levels["warning"] == 0 {
		t.Errorf("levels %v: the sample should have errors, warnings and notes", levels)
	}
	if run.Invocations[0].ExecutionSuccessful {
		t.Error("an unreadable input must make executionSuccessful false")
	}
}

// There is no XML Schema validator in Go's standard library or a small,
// well-kept Go module, so TestJUnitValidates checks the document against
// what testdata/junit-10.xsd declares, read from the XSD itself: the root is
// a declared element, every element's children are among those its type
// allows, every attribute is declared, required ones are present, and
// SUREFIRE_TIME attributes match its pattern. (Element order inside the
// xs:choice groups this schema uses is free, so it is not checked.)
func TestJUnitValidates(t *testing.T) {
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"caveat: " + psnCaveat, "caveat: " + dropCaveat, "caveat: " + skipCaveat} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JUnit lacks %q", want)
		}
	}
	xsd := loadXSD(t, "testdata/junit-10.xsd")
	root := parseXML(t, buf.Bytes())
	if root.name != "testsuites" {
		t.Fatalf("root element %q is not the schema's testsuites", root.name)
	}
	for _, p := range xsd.problems(root) {
		t.Error(p)
	}
	// The check does reject what the schema forbids.
	for _, bad := range []struct{ from, to string }{
		{`<testcase name=`, `<testcase nom=`},
		{`<skipped message=`, `<skipped reason=`},
		{`time="0">`, `time="zero">`},
		{`<testsuite name=`, `<testsuite color="red" name=`},
	} {
		broken := parseXML(t, []byte(strings.Replace(buf.String(), bad.from, bad.to, 1)))
		if len(xsd.problems(broken)) == 0 {
			t.Errorf("a JUnit document with %s instead of %s passes", bad.to, bad.from)
		}
	}

	// The counts agree with the test cases, and every kind of case is
	// there: failures, skipped (not evaluated), an error (unreadable).
	var tests, failures, errs, skipped int
	for _, s := range root.children {
		var st, sf, se, ss int
		for _, tc := range s.children {
			st++
			for _, c := range tc.children {
				switch c.name {
				case "failure":
					sf++
				case "error":
					se++
				case "skipped":
					ss++
				}
			}
		}
		if s.attrs["tests"] != fmt.Sprint(st) || s.attrs["failures"] != fmt.Sprint(sf) || s.attrs["errors"] != fmt.Sprint(se) || s.attrs["skipped"] != fmt.Sprint(ss) {
			t.Errorf("suite %s: attributes %v, counted %d tests %d failures %d errors %d skipped", s.attrs["name"], s.attrs, st, sf, se, ss)
		}
		tests, failures, errs, skipped = tests+st, failures+sf, errs+se, skipped+ss
	}
	if root.attrs["tests"] != fmt.Sprint(tests) || root.attrs["failures"] != fmt.Sprint(failures) || failures == 0 || errs != 1 || skipped == 0 {
		t.Errorf("testsuites %v: counted %d tests, %d failures, %d errors, %d skipped", root.attrs, tests, failures, errs, skipped)
	}
	// One test case per rule listed for each connection: every rule but
	// those of the RPC-over-RDMA version the connection did not use
	// (check.Rule.Version).
	s := root.children[0]
	want, versioned := 0, 0
	for _, r := range check.Rules() {
		if r.Version != 0 {
			versioned++
		}
	}
	for _, c := range rep.Files[0].Connections {
		want += len(c.Checks)
		if n := len(check.Rules()) - len(c.Checks); n < 0 || n > versioned {
			t.Errorf("connection %d lists %d of %d rules", c.ID, len(c.Checks), len(check.Rules()))
		}
	}
	if len(s.children) != want {
		t.Errorf("%s: %d test cases, want %d (the rules listed for %d connections)", s.attrs["name"], len(s.children), want, len(rep.Files[0].Connections))
	}
}

// problems lists where n breaks the schema.
func (xsd *xsdInfo) problems(n *xmlNode) []string {
	var out []string
	d, ok := xsd.elems[n.name]
	if !ok {
		return []string{fmt.Sprintf("element <%s> is not declared", n.name)}
	}
	for a, v := range n.attrs {
		typ, ok := d.attrs[a]
		if !ok {
			out = append(out, fmt.Sprintf("<%s %s=...>: attribute not declared", n.name, a))
			continue
		}
		if re := xsd.patterns[typ]; re != nil && !re.MatchString(v) {
			out = append(out, fmt.Sprintf("<%s %s=%q> does not match %s", n.name, a, v, typ))
		}
	}
	for a := range d.required {
		if _, ok := n.attrs[a]; !ok {
			out = append(out, fmt.Sprintf("<%s> lacks required attribute %s", n.name, a))
		}
	}
	for _, c := range n.children {
		if !d.children[c.name] {
			out = append(out, fmt.Sprintf("<%s> may not contain <%s>", n.name, c.name))
		}
		out = append(out, xsd.problems(c)...)
	}
	if n.text != "" && !d.mixed && !d.simple {
		out = append(out, fmt.Sprintf("<%s> may not contain text", n.name))
	}
	return out
}

type xsdElem struct {
	attrs         map[string]string // name -> type
	required      map[string]bool
	children      map[string]bool
	mixed, simple bool
}

type xsdInfo struct {
	elems    map[string]*xsdElem
	patterns map[string]*regexp.Regexp
}

// loadXSD reads the element declarations of an XSD that, like junit-10,
// declares elements at the top level with anonymous complex types (or a
// named one, for the rerun elements) whose children are element refs.
func loadXSD(t *testing.T, name string) *xsdInfo {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	type attr struct {
		Name string `xml:"name,attr"`
		Type string `xml:"type,attr"`
		Use  string `xml:"use,attr"`
	}
	type elemRef struct {
		Ref  string `xml:"ref,attr"`
		Name string `xml:"name,attr"`
	}
	type group struct {
		Elements []elemRef `xml:"element"`
		Choices  []group   `xml:"choice"`
	}
	type complexType struct {
		Name     string  `xml:"name,attr"`
		Mixed    bool    `xml:"mixed,attr"`
		Attrs    []attr  `xml:"attribute"`
		Sequence []group `xml:"sequence"`
		Choice   []group `xml:"choice"`
	}
	type element struct {
		Name    string       `xml:"name,attr"`
		Type    string       `xml:"type,attr"`
		Complex *complexType `xml:"complexType"`
	}
	type simpleType struct {
		Name        string `xml:"name,attr"`
		Restriction struct {
			Pattern struct {
				Value string `xml:"value,attr"`
			} `xml:"pattern"`
		} `xml:"restriction"`
	}
	var schema struct {
		Elements []element     `xml:"element"`
		Complex  []complexType `xml:"complexType"`
		Simple   []simpleType  `xml:"simpleType"`
	}
	if err := xml.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	info := &xsdInfo{elems: map[string]*xsdElem{}, patterns: map[string]*regexp.Regexp{}}
	for _, s := range schema.Simple {
		info.patterns[s.Name] = regexp.MustCompile("^(?:" + s.Restriction.Pattern.Value + ")$")
	}
	named := map[string]*complexType{}
	for i := range schema.Complex {
		named[schema.Complex[i].Name] = &schema.Complex[i]
	}
	var refs func(g group, into map[string]bool)
	refs = func(g group, into map[string]bool) {
		for _, e := range g.Elements {
			into[e.Ref+e.Name] = true
		}
		for _, c := range g.Choices {
			refs(c, into)
		}
	}
	for _, e := range schema.Elements {
		d := &xsdElem{attrs: map[string]string{}, required: map[string]bool{}, children: map[string]bool{}}
		ct := e.Complex
		if ct == nil {
			ct = named[e.Type]
		}
		if ct == nil {
			d.simple = true // xs:string
		} else {
			d.mixed = ct.Mixed
			for _, a := range ct.Attrs {
				d.attrs[a.Name] = a.Type
				if a.Use == "required" {
					d.required[a.Name] = true
				}
			}
			for _, g := range append(ct.Sequence, ct.Choice...) {
				refs(g, d.children)
			}
		}
		info.elems[e.Name] = d
	}
	if len(info.elems) < 10 || info.elems["testcase"] == nil || !info.elems["testcase"].required["name"] {
		t.Fatalf("the XSD did not read as expected: %d elements", len(info.elems))
	}
	return info
}

type xmlNode struct {
	name     string
	attrs    map[string]string
	children []*xmlNode
	text     string
}

func parseXML(t *testing.T, b []byte) *xmlNode {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += strings.TrimSpace(string(tk))
			}
		}
	}
	return root
}

func TestCheckReportJSONAndText(t *testing.T) {
	rep := sampleReport(t)
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failed bool
		Files  []struct {
			File        string
			Error       string
			Connections []struct {
				ID     int
				Checks []check.CheckResult
			}
			Findings []map[string]any
		}
		Summary CheckSummary
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Failed || doc.Summary.Unreadable != 1 || doc.Summary.Findings["error"] == 0 {
		t.Errorf("summary %+v failed=%v", doc.Summary, doc.Failed)
	}
	for _, f := range doc.Files {
		for _, fd := range f.Findings {
			for _, k := range []string{"rule", "severity", "connection", "xid", "packets", "message", "reference"} {
				if _, ok := fd[k]; !ok {
					t.Errorf("%s: finding without the contract key %q: %v", f.File, k, fd)
				}
			}
		}
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt, TextOptions{Layout: Layout{Wide: true}}); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{"INV-NOT-NEGOTIATED", "packet 1448, XID 0xbdad315d", "… and 4 more", "could not be read", "fail-on error: FAILED", "ICRC-BAD", "CM-REJ"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	if filepath.Base(rep.Files[0].File) != "rxe-nfs3.pcap" {
		t.Fatal("sample order changed")
	}
	checkCaveats(t, js.Bytes(), out)
}

const (
	psnCaveat  = "1 PSN of this connection is missing from the capture: findings may be missing or partial"
	dropCaveat = "7 packets were dropped by the kernel during this capture: findings may be missing or partial"
	skipCaveat = "2 damaged records were skipped while reading the capture: findings may be missing or partial"
)

// checkCaveats: the JSON carries the PSN caveat on the connections of
// drop-call and icrc-corrupt only, and the loss caveats on the nfs42 file
// and each of its connections; none on the captures without loss; the text
// shows each once per connection or file that has it.
func checkCaveats(t *testing.T, js []byte, text string) {
	t.Helper()
	var doc struct {
		Files []struct {
			File        string
			Caveats     []string
			Connections []struct {
				ID      int
				Caveats []string
			}
		}
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Files {
		base := filepath.Base(f.File)
		for _, c := range f.Connections {
			var want []string
			switch {
			case base == "rxe-nfs3-conn2--drop-call.pcap" && c.ID != 0,
				// The FSINFO Call's only copy has a bad ICRC: a receiver
				// discards it (IBA Vol 1 7.8.1), so its PSN is missing.
				base == "rxe-nfs3-conn2--icrc-corrupt.pcap" && c.ID != 0:
				want = []string{psnCaveat}
			case base == "rxe-nfs42-small.pcap":
				want = []string{dropCaveat, skipCaveat}
			}
			if !slices.Equal(c.Caveats, want) {
				t.Errorf("%s connection %d: caveats %q, want %q", base, c.ID, c.Caveats, want)
			}
		}
		if want := []string(nil); base == "rxe-nfs42-small.pcap" {
			if want = []string{dropCaveat, skipCaveat}; !slices.Equal(f.Caveats, want) || len(f.Connections) == 0 {
				t.Errorf("%s: caveats %q, want %q", base, f.Caveats, want)
			}
		} else if len(f.Caveats) != 0 {
			t.Errorf("%s: caveats %q", base, f.Caveats)
		}
	}
	for want, times := range map[string]int{psnCaveat: 2, dropCaveat: 1, skipCaveat: 1} {
		if n := strings.Count(text, "caveat: "+want); n != times {
			t.Errorf("text shows %q %d times, want %d", want, n, times)
		}
	}
}
