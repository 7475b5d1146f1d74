package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"

	"github.com/rdmashark/rdmashark/check"
)

// SARIF 2.1.0 (OASIS, report/testdata/sarif-schema-2.1.0.json), as code
// scanning dashboards read it: one run; every rule in tool.driver.rules with
// its explanation as help text; one result per finding with the rule ID,
// level (error, warning, note), message, and as location the capture file
// (physical) and the connection and packet (logical). partialFingerprints
// carry the baseline key (rule, endpoints, key), so dashboards follow a
// finding across runs the way --baseline does.

// SARIFSchema is the schema URI written in $schema.
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Artifacts   []sarifArtifact   `json:"artifacts"`
	// Results are the gate's; the findings' are written before them as
	// they are made (findings).
	Results  []sarifResult `json:"-"`
	Findings sarifResults  `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	Version         string      `json:"version,omitempty"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor *sarifDescriptorRef `json:"descriptor,omitempty"`
	Level      string              `json:"level"`
	Message    sarifText           `json:"message"`
	Locations  []sarifLocation     `json:"locations,omitempty"`
}

type sarifDescriptorRef struct {
	ID string `json:"id"`
}

type sarifArtifact struct {
	Location sarifArtifactLocation `json:"location"`
	Roles    []string              `json:"roles"`
}

type sarifArtifactLocation struct {
	URI   string `json:"uri"`
	Index *int   `json:"index,omitempty"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	ID               *int           `json:"id,omitempty"`
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	Message          *sarifText     `json:"message,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

// sarifRegion is a packet's record in the capture file, in bytes (SARIF
// 3.30.13: a binary region has byteOffset and byteLength).
type sarifRegion struct {
	ByteOffset int64 `json:"byteOffset"`
	ByteLength int   `json:"byteLength"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

func sarifLevel(s check.Severity) string {
	switch s {
	case check.Error:
		return "error"
	case check.Warning:
		return "warning"
	}
	return "note"
}

// fileURI turns a capture's name into a URI reference.
func fileURI(name string) string {
	return (&url.URL{Path: artifactName(name)}).String()
}

// WriteSARIF writes the report as a SARIF 2.1.0 log.
func (r *CheckReport) WriteSARIF(w io.Writer) error {
	if r.err != nil {
		return r.err
	}
	rules := r.Rules
	if rules == nil {
		rules = check.Rules()
	}
	index := map[string]int{}
	ver, semver := sarifVersion(r.Version)
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "rdmashark", Version: ver, SemanticVersion: semver,
			InformationURI: "https://github.com/rdmashark/rdmashark", Rules: []sarifRule{}}},
		Artifacts: []sarifArtifact{},
		Results:   []sarifResult{},
	}
	for i, ru := range rules {
		index[ru.ID] = i
		help := fmt.Sprintf("%s\n\nReference: %s\nEvidence: %s", ru.Explanation, ru.Reference, ru.Evidence)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			// The name is the rule's ID, as `rdmashark rules` and every
			// other output name it.
			ID: ru.ID, Name: ru.ID,
			ShortDescription:     sarifText{ru.Summary},
			FullDescription:      sarifText{ru.Explanation},
			Help:                 sarifText{help},
			DefaultConfiguration: sarifConfig{sarifLevel(ru.Severity)},
			Properties:           map[string]any{"reference": ru.Reference, "added": ru.Added, "tags": []string{"rdma", "conformance"}},
		})
	}
	inv := sarifInvocation{ExecutionSuccessful: true}
	for fi, f := range r.Files {
		i := fi
		uri := fileURI(f.File)
		run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: uri}, Roles: []string{"analysisTarget"}})
		art := sarifArtifactLocation{URI: uri, Index: &i}
		if f.Error != "" {
			inv.ExecutionSuccessful = false
			inv.Notifications = append(inv.Notifications, sarifNotification{Level: "error", Message: sarifText{f.Error},
				Locations: []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}}}})
		}
		if note := f.incompleteNote(); note != "" {
			// SARIF 3.20.14: executionSuccessful is false when the tool
			// did not run to completion.
			level := "warning"
			if f.Interrupted {
				inv.ExecutionSuccessful = false
			}
			if r.FailOnDamage {
				level = "error"
			}
			inv.Notifications = append(inv.Notifications, sarifNotification{Level: level, Message: sarifText{"incomplete input: " + note},
				Locations: []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}}}})
		}
		for _, note := range f.Caveats {
			inv.Notifications = append(inv.Notifications, sarifNotification{Level: "warning", Message: sarifText{note},
				Locations: []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}}}})
		}
		if err := f.eachConn(func(c *CheckConnection, _ []check.Finding) error {
			for _, note := range ownCaveats(&f, c) {
				inv.Notifications = append(inv.Notifications, sarifNotification{Level: "warning", Message: sarifText{c.name + ": " + note},
					Locations: []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}}}})
			}
			return nil
		}); err != nil {
			return err
		}
	}
	r.sarifGate(&run, &inv)
	run.Invocations = []sarifInvocation{inv}
	run.Findings = sarifResults{r: r, index: index, gate: run.Results}
	// As json.Encoder with SetIndent("", "  ") and SetEscapeHTML(false)
	// would write it ("<stdin>", "a < b" as they are: this is no HTML),
	// one result at a time: a capture of 4,096 connections and 28,000
	// findings held them all, then their encoding (380 MiB peak RSS).
	return writeJSONStream(w, sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifResults writes a run's results: one per finding of every file, made
// as it is written, then the gate's.
type sarifResults struct {
	r     *CheckReport
	index map[string]int
	gate  []sarifResult
}

// streamJSON writes the results as jsonStream writes a slice ([] when
// there is none).
func (q sarifResults) streamJSON(s *jsonStream, prefix string) {
	s.list(prefix, "[]", func(put func(reflect.Value)) error {
		res := func(r *sarifResult) { put(reflect.ValueOf(r).Elem()) }
		if q.r != nil {
			for fi := range q.r.Files {
				if err := q.r.fileResults(fi, q.index, res); err != nil {
					return err
				}
			}
		}
		for i := range q.gate {
			res(&q.gate[i])
		}
		return nil
	})
}

// fileResults makes the result of each finding of file fi in turn.
func (r *CheckReport) fileResults(fi int, index map[string]int, put func(*sarifResult)) error {
	f := &r.Files[fi]
	uri := fileURI(f.File)
	return f.eachConn(func(c *CheckConnection, fs []check.Finding) error {
		for k := range fs {
			f.findingResult(fi, uri, index, c, &fs[k], put)
		}
		return nil
	})
}

// findingResult makes the result of finding fd of connection c of file fi
// (at uri).
func (f *CheckFile) findingResult(fi int, uri string, index map[string]int, c *CheckConnection, fd *check.Finding, put func(*sarifResult)) {
	art := sarifArtifactLocation{URI: uri, Index: &fi}
	connFQN := fmt.Sprintf("%s/connection-%d", uri, fd.Connection)
	logical := []sarifLogical{{Name: fmt.Sprintf("connection %d", fd.Connection), FullyQualifiedName: connFQN, Kind: "object"}}
	if fd.XID != nil {
		logical = append(logical, sarifLogical{Name: fmt.Sprintf("XID 0x%08x", *fd.XID),
			FullyQualifiedName: fmt.Sprintf("%s/xid-0x%08x", connFQN, *fd.XID), Kind: "value"})
	}
	if p := fd.First(); p > 0 {
		logical = append(logical, sarifLogical{Name: fmt.Sprintf("packet %d", p),
			FullyQualifiedName: fmt.Sprintf("%s/packet-%d", connFQN, p), Kind: "element"})
	}
	props := map[string]any{"connection": fd.Connection, "connectionName": c.name, "packets": fd.Packets,
		"reference": fd.Reference, "severity": fd.Severity.String()}
	if fd.XID != nil {
		props["xid"] = fmt.Sprintf("0x%08x", *fd.XID)
	}
	if fd.PacketsOmitted > 0 {
		props["packetsOmitted"] = fd.PacketsOmitted
	}
	if len(c.Caveats) > 0 {
		props["caveats"] = c.Caveats
	}
	loc := sarifLocation{PhysicalLocation: &sarifPhysical{ArtifactLocation: art, Region: f.region(fd.First())}, LogicalLocations: logical}
	res := sarifResult{RuleID: fd.Rule, RuleIndex: index[fd.Rule], Level: sarifLevel(fd.Severity),
		Message:             sarifText{where(fd) + fd.Message},
		Locations:           []sarifLocation{loc},
		PartialFingerprints: map[string]string{"rdmasharkBaselineKey/v1": fingerprint(c, fd)},
		Properties:          props}
	// The finding's other packets, where the capture has them.
	for n, p := range fd.Packets {
		if n == 0 || len(res.RelatedLocations) == maxRelated {
			continue
		}
		if reg := f.region(p); reg != nil {
			id := len(res.RelatedLocations) + 1
			res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: &id,
				PhysicalLocation: &sarifPhysical{ArtifactLocation: art, Region: reg},
				Message:          &sarifText{fmt.Sprintf("packet %d", p)}})
		}
	}
	if _, ok := index[fd.Rule]; !ok {
		res.RuleIndex = -1
	}
	put(&res)
}

// maxRelated bounds a result's related locations (its other packets).
const maxRelated = 16

// SARIFPackets are the packets of f whose records a SARIF result points
// to (CheckFile.Records): the first, and the next maxRelated as related
// locations. Locating only these, not every packet of every finding (up
// to 100 each), keeps what check --format sarif holds small (issue 14);
// should one of them be missing from the file when it is read again, its
// result has one related location fewer.
func SARIFPackets(f *check.Finding) []int {
	return f.Packets[:min(len(f.Packets), 1+maxRelated)]
}

// RecordSpan locates a packet's record in its capture file: the byte
// offset and length of the pcap record (header and data) or pcapng block.
type RecordSpan struct {
	Offset int64
	Length int
}

// region is packet p's record as a SARIF region, nil when unknown.
func (f *CheckFile) region(p int) *sarifRegion {
	sp, ok := f.Records[p]
	if !ok || p <= 0 {
		return nil
	}
	return &sarifRegion{ByteOffset: sp.Offset, ByteLength: sp.Length}
}

// sarifVersion gives SARIF a numeric tool version (toolComponent.version)
// and, when rdmashark's version is a semantic version, semanticVersion:
// "v1.2.3" gives "1.2.3"; a development build ("dev", "(devel)") gives
// "0.0.0" and "0.0.0-dev".
func sarifVersion(v string) (string, string) {
	v = strings.TrimPrefix(v, "v")
	if v != "" && v[0] >= '0' && v[0] <= '9' {
		return v, v
	}
	tag := strings.Map(func(c rune) rune {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '.' {
			return c
		}
		return -1
	}, v)
	if tag == "" {
		tag = "unknown"
	}
	return "0.0.0", "0.0.0-" + tag
}

// fingerprint hashes what a baseline matches on.
func fingerprint(c *CheckConnection, f *check.Finding) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", f.Rule, f.Key)
	if c != nil {
		port := uint16(0)
		if c.ServicePort != nil {
			port = *c.ServicePort
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", c.Transport, c.Client.Address, c.Server.Address, port)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
