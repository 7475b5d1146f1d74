package export_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/rdmashark/rdmashark/export"
)

// docType is how docs/export.md names a Parquet column's type.
func docType(f parquet.Field) string {
	if !f.Leaf() {
		// A LIST: group (LIST) { repeated group list { element } }.
		el := f.Fields()[0]
		for !el.Leaf() {
			el = el.Fields()[0]
		}
		return "LIST<" + docType(el) + ">"
	}
	lt := ""
	if l := f.Type().LogicalType(); l != nil {
		lt = l.String()
	}
	var t string
	switch {
	case strings.HasPrefix(lt, "STRING"):
		t = "STRING"
	case strings.HasPrefix(lt, "TIMESTAMP"):
		t = "TIMESTAMP"
	case strings.HasPrefix(lt, "INT(32"):
		t = "INT32"
	case strings.HasPrefix(lt, "INT(64"):
		t = "INT64"
	default:
		t = strings.ToUpper(f.Type().Kind().String())
	}
	if f.Optional() {
		t += " NULL"
	}
	return t
}

var docRow = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([A-Z0-9<> ]+) \\|")

// docs/export.md documents every table and every column, in the order the
// files hold them, with the Parquet type the code writes: a column added
// without its documentation, or renamed, fails here.
func TestDocsMatchSchema(t *testing.T) {
	b, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string][]string{}
	var table string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## `") {
			table = strings.SplitN(line[4:], "`", 2)[0]
			continue
		}
		if m := docRow.FindStringSubmatch(line); m != nil && table != "" {
			doc[table] = append(doc[table], m[1]+" "+m[2])
		}
	}
	schemas := map[string]any{
		export.TableConnections:  export.Connection{},
		export.TableTransactions: export.Transaction{},
		export.TableRDMAOps:      export.RDMAOp{},
		export.TableFindings:     export.Finding{},
		export.TablePackets:      export.Packet{},
	}
	for _, name := range export.Tables {
		var code []string
		for _, f := range parquet.SchemaOf(schemas[name]).Fields() {
			code = append(code, f.Name()+" "+docType(f))
		}
		if got, want := strings.Join(doc[name], "\n"), strings.Join(code, "\n"); got != want {
			t.Errorf("table %s: docs/export.md lists\n%s\nthe code writes\n%s", name, got, want)
		}
	}
	if len(doc) != len(export.Tables) {
		t.Errorf("docs/export.md documents %d tables, the code writes %d", len(doc), len(export.Tables))
	}
}
