// Command synthetic writes the synthetic captures of testdata/pcaps/synthetic
// and their README, built by internal/synth. Run it from the module root:
//
//	go run ./testdata/synthetic
//
// The captures are committed; dissect's TestSyntheticCorpusIsReproducible
// checks that this program would write the same bytes.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rdmashark/rdmashark/internal/synth"
)

func main() {
	if err := write(); err != nil {
		fmt.Fprintln(os.Stderr, "synthetic:", err)
		os.Exit(1)
	}
}

func write() error {
	files, err := synth.Corpus()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(synth.CorpusDir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(synth.CorpusDir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(synth.CorpusDir, "README.md"), synth.README(files), 0o644)
}
