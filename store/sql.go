package store

import (
	"database/sql"
	"fmt"
	"strings"
)

// placeholders returns "$1, $2, …, $n".
func placeholders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i)
	}
	return b.String()
}

func splitColumns(cols string) []string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

func affectedOne(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// likePattern makes a LIKE pattern matching s anywhere, with LIKE's own
// wildcards in s taken literally (used with ESCAPE '\').
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// prefixColumns qualifies each column of a column list with a table alias.
func prefixColumns(alias, cols string) string {
	parts := splitColumns(cols)
	for i, p := range parts {
		parts[i] = alias + "." + p
	}
	return strings.Join(parts, ", ")
}

// scanJoined scans one row that holds several records side by side, each
// read by its own scan function in the order of the row's columns. Each
// function's one Scan passes its destinations on to the next function's,
// so the row is scanned once with all of them, and each function then
// decodes its own.
func scanJoined(row scanner, scans ...func(scanner) error) error {
	return scans[0](joinedScanner{row: row, rest: scans[1:]})
}

type joinedScanner struct {
	row  scanner
	dest []any
	rest []func(scanner) error
}

func (j joinedScanner) Scan(dest ...any) error {
	all := append(j.dest[:len(j.dest):len(j.dest)], dest...)
	if len(j.rest) == 0 {
		return j.row.Scan(all...)
	}
	return j.rest[0](joinedScanner{row: j.row, dest: all, rest: j.rest[1:]})
}
