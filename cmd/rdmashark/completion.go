package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/source/live"
)

// registerCompletions adds shell completion of flag values (cobra's
// `rdmashark completion bash|zsh|fish|powershell` scripts call
// `rdmashark __complete …`): field names after -e, output formats,
// severities, rule IDs (--enable/--disable, rules ID), interfaces and RDMA
// devices after capture -i.
func registerCompletions(root *cobra.Command) {
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	reg := func(cmd *cobra.Command, flag string, fn func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) {
		if cmd.Flags().Lookup(flag) != nil {
			_ = cmd.RegisterFlagCompletionFunc(flag, fn)
		}
	}
	severities := fixed("info", "warning", "error")
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "dissect":
			reg(cmd, "field", completeFields)
			reg(cmd, "type", fixed("text\tone line per packet", "json\ttshark's JSON array", "ek\ttshark's Elasticsearch bulk lines", "jsonl\tone object per packet, a line each", "fields\tthe -e fields, tab-separated"))
			reg(cmd, "glossary", fixed("fields\tevery field rdmashark knows"))
		case "analyze":
			reg(cmd, "format", fixed("table", "json"))
		case "transactions":
			reg(cmd, "format", fixed("table", "json", "jsonl\tone line per transaction, written as it ends"))
		case "exchanges":
			reg(cmd, "format", fixed("table", "json", "jsonl\tone line per exchange, written as it ends"))
		case "capture":
			reg(cmd, "format", fixed("table", "json"))
			reg(cmd, "fail-on", severities)
			reg(cmd, "interface", completeInterfaces)
		case "check":
			reg(cmd, "format", fixed("text", "json", "junit\tJUnit XML for test reporters", "sarif\tSARIF 2.1.0 for code scanning"))
			reg(cmd, "fail-on", severities)
			reg(cmd, "enable", completeRules)
			reg(cmd, "disable", completeRules)
			reg(cmd, "expect-remote-invalidation", fixed("yes", "no"))
		case "rules":
			reg(cmd, "format", fixed("text", "json", "markdown"))
			cmd.ValidArgsFunction = completeRules
		}
	}
}

// completeFields offers the field names that start with what was typed,
// each with its label.
func completeFields(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, f := range fields.Registry.Sorted() {
		if strings.HasPrefix(f.Name, toComplete) {
			out = append(out, f.Name+"\t"+f.Label)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeRules offers rule IDs with their summaries; after a comma
// (--enable A,B) it completes the last ID.
func completeRules(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, r := range check.Rules() {
		if strings.HasPrefix(r.ID, strings.ToUpper(last)) {
			out = append(out, head+r.ID+"\t"+r.Summary)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeInterfaces offers the network interfaces and the RDMA devices
// (whose netdev capture -i then uses).
func completeInterfaces(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	sysfs := live.DefaultSysfs
	if f := cmd.Flags().Lookup("sysfs"); f != nil && f.Value.String() != "" {
		sysfs = f.Value.String()
	}
	ifs, unbound, err := live.Interfaces(sysfs)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	add := func(name, desc string) {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, name+"\t"+desc)
		}
	}
	for _, i := range ifs {
		desc := "interface"
		for _, d := range i.RDMA {
			desc += ", carries " + d.Name
		}
		add(i.Name, desc)
		for _, d := range i.RDMA {
			add(d.Name, "RDMA device ("+d.Driver+") on "+i.Name)
		}
	}
	for _, d := range unbound {
		add(d.Name, "RDMA device with no interface here")
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
