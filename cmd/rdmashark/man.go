package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd writes a manual page per command, made by cobra's doc
// generator from the command tree itself (the same text as --help), so the
// pages cannot drift from the flags.
func newManCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "man",
		Short: "Write the manual pages (rdmashark.1, rdmashark-analyze.1, …) into a directory",
		Long: `man writes one troff manual page per command into --dir (created if need
be), from the same command tree --help reads: rdmashark.1 and
rdmashark-COMMAND.1. Install them where man looks:

  rdmashark man --dir /usr/local/share/man/man1`,
		Example: "  rdmashark man --dir ./man1 && man ./man1/rdmashark-check.1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			// A fixed date keeps the pages reproducible (SOURCE_DATE_EPOCH
			// sets another, as reproducible builds do).
			date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if sde := os.Getenv("SOURCE_DATE_EPOCH"); sde != "" {
				sec, err := strconv.ParseInt(sde, 10, 64)
				if err != nil {
					return fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", sde)
				}
				date = time.Unix(sec, 0).UTC()
			}
			h := &doc.GenManHeader{Title: "RDMASHARK", Section: "1", Source: "rdmashark " + versionString(), Manual: "rdmashark manual", Date: &date}
			if err := doc.GenManTree(root, h, dir); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", ".", "directory to write the pages into")
	return cmd
}
