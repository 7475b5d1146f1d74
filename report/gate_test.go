package report

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/source"
)

// sarifValidate validates a SARIF log against the OASIS 2.1.0 schema.
func sarifValidate(t *testing.T, b []byte) {
	t.Helper()
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
	if err := c.AddResource(SARIFSchema, doc); err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	sch, err := c.Compile(SARIFSchema)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF does not validate against sarif-schema-2.1.0.json: %v", err)
	}
}

// records reads where every record of a capture is (as cmd/rdmashark does
// for SARIF).
func records(t *testing.T, name string) map[int]RecordSpan {
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[int]RecordSpan{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		out[rec.Number] = RecordSpan{rec.Offset, rec.Length}
	}
	return out
}

// TestSARIFLocationsAndGate: each result's region is the byte range of its
// first packet's pcap record (checked against the file: a 16-byte record
// header whose captured length is the rest, at the offset where counting
// records from byte 24 puts that packet), the connection and XID are
// logical locations, the version is numeric, rules are named by their ID,
// and a failed gate assertion is a rule, an error result and an error
// notification; the log validates.
func TestSARIFLocationsAndGate(t *testing.T) {
	const name = "../testdata/pcaps/rxe-nfs3.pcap"
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// Independent of the reader: the offset of each record by walking
	// the pcap records (little-endian file, 24-byte header).
	offsets := map[int]int64{}
	for off, n := int64(24), 1; off < int64(len(raw)); n++ {
		offsets[n] = off
		off += 16 + int64(binary.LittleEndian.Uint32(raw[off+8:]))
	}
	rep := &CheckReport{FailOn: check.Error, Rules: check.Rules(), Version: "dev"}
	f := checkFile(t, name)
	f.Records = records(t, name)
	rep.Add(f)
	rep.Judge(GateOptions{MinConnections: 3})
	var buf bytes.Buffer
	if err := rep.WriteSARIF(&buf); err != nil {
		t.Fatal(err)
	}
	sarifValidate(t, buf.Bytes())
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Version, SemanticVersion string
					Rules                    []struct{ ID, Name string }
				}
			}
			Invocations []struct {
				ExecutionSuccessful bool
				Notifications       []struct {
					Descriptor *struct{ ID string }
					Level      string
				} `json:"toolExecutionNotifications"`
			}
			Results []struct {
				RuleID     string
				Level      string
				Properties struct {
					Packets []int
					XID     string
				}
				Locations []struct {
					PhysicalLocation struct {
						Region *struct{ ByteOffset, ByteLength int64 }
					}
					LogicalLocations []struct{ Name, Kind string }
				}
				RelatedLocations []struct {
					PhysicalLocation struct {
						Region *struct{ ByteOffset, ByteLength int64 }
					}
					Message struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.Tool.Driver.Version != "0.0.0" || run.Tool.Driver.SemanticVersion != "0.0.0-dev" {
		t.Errorf("version %q, semanticVersion %q", run.Tool.Driver.Version, run.Tool.Driver.SemanticVersion)
	}
	for _, ru := range run.Tool.Driver.Rules {
		if ru.Name != ru.ID {
			t.Errorf("rule %s named %q", ru.ID, ru.Name)
		}
	}
	regionOK := func(p int, off, length int64) bool {
		return offsets[p] == off && off+length <= int64(len(raw)) &&
			int64(binary.LittleEndian.Uint32(raw[off+8:])) == length-16
	}
	withRegion, withXID, related := 0, 0, 0
	gateResult := false
	for _, r := range run.Results {
		if r.RuleID == GateMinConnections {
			gateResult = r.Level == "error"
			continue
		}
		loc := r.Locations[0]
		if len(r.Properties.Packets) > 0 {
			p := r.Properties.Packets[0]
			reg := loc.PhysicalLocation.Region
			if reg == nil || !regionOK(p, reg.ByteOffset, reg.ByteLength) {
				t.Errorf("%s packet %d: region %+v, want the record at %d", r.RuleID, p, reg, offsets[p])
			} else {
				withRegion++
			}
			for _, rl := range r.RelatedLocations {
				var q int
				fmt.Sscanf(rl.Message.Text, "packet %d", &q)
				if reg := rl.PhysicalLocation.Region; reg == nil || !regionOK(q, reg.ByteOffset, reg.ByteLength) {
					t.Errorf("%s related packet %d: region %+v", r.RuleID, q, reg)
				}
				related++
			}
		}
		if r.Properties.XID != "" {
			found := false
			for _, l := range loc.LogicalLocations {
				found = found || (l.Kind == "value" && strings.EqualFold(l.Name, "XID "+r.Properties.XID))
			}
			if !found {
				t.Errorf("%s: XID %s not a logical location: %+v", r.RuleID, r.Properties.XID, loc.LogicalLocations)
			}
			withXID++
		}
		if !strings.HasPrefix(loc.LogicalLocations[0].Name, "connection ") {
			t.Errorf("%s: first logical location %+v", r.RuleID, loc.LogicalLocations[0])
		}
	}
	if withRegion == 0 || withXID == 0 || related == 0 {
		t.Errorf("%d results with a region, %d with an XID, %d related locations", withRegion, withXID, related)
	}
	note := false
	for _, n := range run.Invocations[0].Notifications {
		note = note || (n.Level == "error" && n.Descriptor != nil && n.Descriptor.ID == GateMinConnections)
	}
	if !gateResult || !note || !run.Invocations[0].ExecutionSuccessful {
		t.Errorf("failed gate: result %v, notification %v, executionSuccessful %v", gateResult, note, run.Invocations[0].ExecutionSuccessful)
	}
	n := len(run.Tool.Driver.Rules)
	if n != len(check.Rules())+2 || run.Tool.Driver.Rules[n-1].ID != GateMinConnections || run.Tool.Driver.Rules[n-2].ID != GateEvidence {
		t.Errorf("%d rules, the last %v", n, run.Tool.Driver.Rules[n-2:])
	}
}

func TestSARIFVersion(t *testing.T) {
	for _, tc := range []struct{ in, v, sem string }{
		{"v1.2.3", "1.2.3", "1.2.3"},
		{"0.4.0-rc1", "0.4.0-rc1", "0.4.0-rc1"},
		{"dev", "0.0.0", "0.0.0-dev"},
		{"(devel)", "0.0.0", "0.0.0-devel"},
		{"", "0.0.0", "0.0.0-unknown"},
	} {
		if v, sem := sarifVersion(tc.in); v != tc.v || sem != tc.sem {
			t.Errorf("sarifVersion(%q) = %q, %q", tc.in, v, sem)
		}
	}
}
