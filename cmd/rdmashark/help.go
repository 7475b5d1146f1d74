package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmashark/rdmashark/report"
)

// helpWidth is the width --help is wrapped to, set as a help is written.
var helpWidth = report.DefaultWidth

// wrapHelp has every command's --help fit the terminal (outWidth): the
// flags' usage wrapped by pflag beside their names, every other line
// wider than the width broken at spaces.
func wrapHelp(root *cobra.Command) {
	cobra.AddTemplateFunc("flagUsagesWrapped", func(fs *pflag.FlagSet) string {
		return fs.FlagUsagesWrapped(helpWidth)
	})
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, "{{.LocalFlags.FlagUsages", "{{flagUsagesWrapped .LocalFlags")
	t = strings.ReplaceAll(t, "{{.InheritedFlags.FlagUsages", "{{flagUsagesWrapped .InheritedFlags")
	root.SetUsageTemplate(t)
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		w, _ := outWidth(c)
		helpWidth = w
		out := c.OutOrStdout()
		ww := report.NewWrapWriter(out, w)
		ww.Indent, ww.Hang = 2, true
		c.SetOut(ww)
		help(c, args)
		_ = ww.Flush()
		c.SetOut(out)
	})
}
