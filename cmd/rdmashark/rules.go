package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/report"
)

func newRulesCmd() *cobra.Command {
	var format string
	var wide bool
	cmd := &cobra.Command{
		Use:   "rules [ID|GLOB...]",
		Short: "List the conformance rules, or explain one",
		Long: `rules lists every conformance rule rdmashark checks: its ID (what --enable,
--disable and baselines name), severity, the spec section it enforces, and a
summary. With IDs (or globs such as 'CHUNK-*') it prints each rule's
explanation. --format json prints the table as data; --format markdown as a
Markdown table for documentation.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := check.Rules()
			if len(args) > 0 {
				var err error
				if rules, err = check.Select(args, nil); err != nil {
					return usageErr("%v", err)
				}
			}
			out := cmd.OutOrStdout()
			switch format {
			case "text":
				if len(args) == 0 {
					w, _ := outWidth(cmd)
					return report.WriteRulesLayout(out, rules, report.Layout{Width: w, Wide: wide})
				}
				ruleOut := out
				var ww *report.WrapWriter
				if !wide {
					w, _ := outWidth(cmd)
					ww = report.NewWrapWriter(out, w)
					ruleOut = ww
				}
				for i, r := range rules {
					if i > 0 {
						fmt.Fprintln(ruleOut, strings.Repeat("-", 72))
					}
					if err := report.WriteRule(ruleOut, r); err != nil {
						return err
					}
				}
				if ww != nil {
					return ww.Flush()
				}
				return nil
			case "json":
				type row struct {
					ID          string         `json:"id"`
					Severity    check.Severity `json:"severity"`
					Reference   string         `json:"reference"`
					Summary     string         `json:"summary"`
					Explanation string         `json:"explanation"`
					Evidence    string         `json:"evidence"`
					Added       bool           `json:"added"`
					Waits       string         `json:"waits,omitempty"`
				}
				rows := []row{}
				for _, r := range rules {
					rows = append(rows, row{r.ID, r.Severity, r.Reference, r.Summary, r.Explanation, r.Evidence, r.Added, r.Waits})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"rules": rows})
			case "markdown":
				fmt.Fprintln(out, "| ID | severity | reference | rule |")
				fmt.Fprintln(out, "|---|---|---|---|")
				for _, r := range rules {
					s := r.Summary
					if r.Added {
						s += " (added)"
					}
					fmt.Fprintf(out, "| %s | %s | %s | %s |\n", r.ID, r.Severity, r.Reference, strings.ReplaceAll(s, "|", `\|`))
				}
				return nil
			}
			return usageErr("--format must be text, json or markdown, not %q", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output: text, json or markdown")
	bindWide(cmd, &wide)
	return cmd
}
