package fields_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEngineDoesNotImportPresentation holds the import rule of
// DEVELOPERS.md "Who may import whom": the engine (dissect, non-test files)
// imports neither this package nor the display-filter language, nor report
// or cmd.
func TestEngineDoesNotImportPresentation(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "dissect", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dissect sources found: %v", err)
	}
	const mod = "github.com/rdmashark/rdmashark/"
	forbidden := []string{mod + "fields", mod + "dfilter", mod + "report", mod + "cmd", mod + "check"}
	n := 0
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, is := range af.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d dissect sources parsed", n)
	}
}
