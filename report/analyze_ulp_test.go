package report

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// fakeULP claims every connection and keeps, as a plug-in does, a
// section of its own in Connection.ULPData: what analyze writes under the
// ULP's name and in its text table, whether the connection stayed in
// memory or went through the spill.
type fakeULP struct{}

type fakeSection struct {
	Sends int `json:"sends"`
	ID    int `json:"id"`
}

func (f *fakeSection) ULPTableHeader() []string { return []string{"Sends"} }
func (f *fakeSection) ULPTableRow() []string    { return []string{strconv.Itoa(f.Sends)} }

type fakeSession struct{ s *fakeSection }

func (fakeULP) Name() string                                                { return "fake-ulp" }
func (fakeULP) Ports() []uint16                                             { return nil }
func (fakeULP) Claim(*dissect.Connection) dissect.Verdict                   { return dissect.Yes }
func (fakeULP) Probe(*dissect.Connection, *dissect.Message) dissect.Verdict { return dissect.Yes }
func (fakeULP) Start(c *dissect.Connection, _ *dissect.Env) dissect.Session {
	s := &fakeSection{ID: c.ID}
	c.ULPData = s
	return &fakeSession{s}
}
func (s *fakeSession) Message(_ *dissect.Packet, m *dissect.Message) { s.s.Sends++ }
func (s *fakeSession) RDMAOp(*dissect.Packet, *dissect.RDMAOp)       {}
func (s *fakeSession) Close()                                        {}

func TestULPSectionSurvivesTheSpill(t *testing.T) {
	after, toFile := spillConnsAfter, spillToFile
	t.Cleanup(func() { spillConnsAfter, spillToFile = after, toFile })
	// NFS, then rping: the NFS connections are released (and spilled)
	// while the rping ones run.
	name := spillCopies(t)[0]
	opts := dissect.Options{ULPs: []dissect.ULP{fakeULP{}}}
	wantT, wantJ, _ := analyzeChecked(t, name, opts, check.Config{}, false)
	var doc struct {
		Connections []struct {
			ID   int          `json:"id"`
			ULP  *string      `json:"ulp"`
			Fake *fakeSection `json:"fake_ulp"`
		} `json:"connections"`
	}
	if err := json.Unmarshal([]byte(wantJ), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Connections) < 3 {
		t.Fatalf("%d connections", len(doc.Connections))
	}
	for _, c := range doc.Connections {
		if c.ULP == nil || *c.ULP != "fake-ulp" || c.Fake == nil || c.Fake.ID != c.ID || c.Fake.Sends == 0 {
			t.Errorf("connection %d: ulp %v, section %+v", c.ID, c.ULP, c.Fake)
		}
	}
	if !strings.Contains(wantT, "fake-ulp, per connection:") || strings.Contains(wantT, "RFC 8797") {
		t.Errorf("table:\n%s", wantT)
	}
	for _, mode := range []struct {
		after  int
		toFile bool
	}{{0, true}, {0, false}} {
		spillConnsAfter, spillToFile = mode.after, mode.toFile
		gotT, gotJ, n := analyzeChecked(t, name, opts, check.Config{}, true)
		if n == 0 {
			t.Fatal("the spill took nothing")
		}
		if gotT != wantT || gotJ != wantJ {
			t.Errorf("spill %+v: the document differs\n%s\n%s", mode, gotT, gotJ)
		}
	}
}
