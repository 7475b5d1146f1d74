package report

import (
	"fmt"
	"io"

	"github.com/rdmashark/rdmashark/check"
)

// WriteRulesLayout prints the rule list for `rdmashark rules` fitted to
// the layout's width: one rule a line while it fits, "ID  SEVERITY
// SUMMARY (REFERENCE)", the rest of a long line wrapped under the summary.
// With Wide it is WriteRules' table, each rule on one line however long.
func WriteRulesLayout(w io.Writer, rules []*check.Rule, lay Layout) error {
	if lay.Wide {
		return WriteRules(w, rules)
	}
	idw := len("ID")
	for _, r := range rules {
		idw = max(idw, len(r.ID))
	}
	ww := NewWrapWriter(w, lay.width())
	ww.Indent = idw + 2 + 8 + 1 // under the summary
	fmt.Fprintf(ww, "%-*s  %-8s %s\n", idw, "ID", "SEVERITY", "SUMMARY (REFERENCE)")
	for _, r := range rules {
		mark := ""
		if r.Added {
			mark = " [added]"
		}
		fmt.Fprintf(ww, "%-*s  %-8s %s (%s)%s\n", idw, r.ID, r.Severity, r.Summary, r.Reference, mark)
	}
	return ww.Flush()
}
