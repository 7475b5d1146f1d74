// Command duckq runs SQL with DuckDB (through its Go bindings: cgo) and
// prints the result as an aligned table: a stand-in for the duckdb shell
// where it cannot be installed, used for the README's examples.
//
//	cd export/duckdbtest && go run ./cmd/duckq "SELECT … FROM read_parquet('DIR/transactions/*/*.parquet')"
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: duckq SQL")
		os.Exit(2)
	}
	if err := query(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "duckq:", err)
		os.Exit(1)
	}
}

func query(q string) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	table := [][]string{cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = text(v)
		}
		table = append(table, row)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	width := make([]int, len(cols))
	for _, r := range table {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for k, r := range table {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		fmt.Println(strings.TrimRight(b.String(), " "))
		if k == 0 {
			var sep []string
			for _, w := range width {
				sep = append(sep, strings.Repeat("-", w))
			}
			fmt.Println(strings.Join(sep, "-+-"))
		}
	}
	return nil
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return fmt.Sprintf("%.1f", x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000000")
	case []any:
		var s []string
		for _, e := range x {
			s = append(s, text(e))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	return fmt.Sprint(v)
}
