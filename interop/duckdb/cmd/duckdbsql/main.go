// Command duckdbsql runs SQL in an in-memory DuckDB and prints the rows as
// a table: the queries of the README's Parquet section, runnable where no
// duckdb command is installed. It is part of the interop/duckdb module,
// the only one that uses cgo.
//
//	go -C interop/duckdb run ./cmd/duckdbsql "SELECT count(*) FROM 'out/packets/**/*.parquet'"
package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	query := strings.Join(os.Args[1:], " ")
	if query == "" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "duckdbsql:", err)
			os.Exit(2)
		}
		query = string(b)
	}
	if err := run(query, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "duckdbsql:", err)
		os.Exit(1)
	}
}

func run(query string, w io.Writer) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		cells := make([]string, len(cols))
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
				cells[i] = "NULL"
			case []byte:
				cells[i] = string(x)
			default:
				cells[i] = fmt.Sprint(x)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return tw.Flush()
}
