package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

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
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
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
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
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
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	Message          *sarifText     `json:"message,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
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
	rules := r.Rules
	if rules == nil {
		rules = check.Rules()
	}
	index := map[string]int{}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "rdmashark", Version: r.Version,
			InformationURI: "https://github.com/rdmashark/rdmashark", Rules: []sarifRule{}}},
		Artifacts: []sarifArtifact{},
		Results:   []sarifResult{},
	}
	for i, ru := range rules {
		index[ru.ID] = i
		help := fmt.Sprintf("%s\n\nReference: %s\nEvidence: %s", ru.Explanation, ru.Reference, ru.Evidence)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: ru.ID, Name: ruleName(ru.ID),
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
		for _, c := range f.Connections {
			for _, note := range ownCaveats(&f, &c) {
				inv.Notifications = append(inv.Notifications, sarifNotification{Level: "warning", Message: sarifText{c.name + ": " + note},
					Locations: []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}}}})
			}
		}
		conns := map[int]*CheckConnection{}
		for ci := range f.Connections {
			conns[f.Connections[ci].ID] = &f.Connections[ci]
		}
		for _, fd := range f.Findings {
			c := conns[fd.Connection]
			connName := fmt.Sprintf("connection %d", fd.Connection)
			if c != nil {
				connName = c.name
			}
			logical := []sarifLogical{{Name: fmt.Sprintf("connection %d", fd.Connection),
				FullyQualifiedName: fmt.Sprintf("%s/connection-%d", uri, fd.Connection), Kind: "object"}}
			if p := fd.First(); p > 0 {
				logical = append(logical, sarifLogical{Name: fmt.Sprintf("packet %d", p),
					FullyQualifiedName: fmt.Sprintf("%s/connection-%d/packet-%d", uri, fd.Connection, p), Kind: "element"})
			}
			props := map[string]any{"connection": fd.Connection, "connectionName": connName, "packets": fd.Packets,
				"reference": fd.Reference, "severity": fd.Severity.String()}
			if fd.XID != nil {
				props["xid"] = fmt.Sprintf("0x%08x", *fd.XID)
			}
			if fd.PacketsOmitted > 0 {
				props["packetsOmitted"] = fd.PacketsOmitted
			}
			if c != nil && len(c.Caveats) > 0 {
				props["caveats"] = c.Caveats
			}
			res := sarifResult{RuleID: fd.Rule, RuleIndex: index[fd.Rule], Level: sarifLevel(fd.Severity),
				Message:             sarifText{where(&fd) + fd.Message},
				Locations:           []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: art}, LogicalLocations: logical}},
				PartialFingerprints: map[string]string{"rdmasharkBaselineKey/v1": fingerprint(c, &fd)},
				Properties:          props}
			if _, ok := index[fd.Rule]; !ok {
				res.RuleIndex = -1
			}
			run.Results = append(run.Results, res)
		}
	}
	run.Invocations = []sarifInvocation{inv}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<stdin>", "a < b" as they are: this is no HTML
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}})
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

// ruleName turns "INV-NOT-NEGOTIATED" into "InvNotNegotiated" (SARIF
// reportingDescriptor.name is an identifier-like name).
func ruleName(id string) string {
	out := make([]byte, 0, len(id))
	up := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '-':
			up = true
			continue
		case up && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case !up && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}
