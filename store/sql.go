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
