package store

import (
	"strings"
	"unicode"
)

// summarizeMigration reads a migration's text for an operator about to
// apply it: the comment lines that open it, joined, and a line per
// statement naming what it changes. It only describes: the statements run
// as the schema file has them.
func summarizeMigration(sql string) (about string, changes []string) {
	var comment []string
	for line := range strings.Lines(sql) {
		line = strings.TrimSpace(line)
		text, ok := strings.CutPrefix(line, "--")
		if !ok {
			if line != "" {
				break
			}
			continue
		}
		comment = append(comment, strings.TrimSpace(text))
	}
	for _, st := range splitStatements(sql) {
		if c := describeStatement(st); c != "" {
			changes = append(changes, c)
		}
	}
	return strings.Join(comment, " "), changes
}

// splitStatements cuts SQL at its semicolons, leaving out comments and
// never cutting inside a quoted string or identifier. A comment is dropped
// before its text is read, so an apostrophe in one ("the row's version")
// opens no string.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	var quote byte // the quote character of the string being read; 0 outside
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0:
			cur.WriteByte(c)
			if c == quote {
				quote = 0
			}
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			cur.WriteByte(' ')
		case c == '\'' || c == '"':
			quote = c
			cur.WriteByte(c)
		case c == ';':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// describeStatement names what one statement changes, in lower case:
// "create table x", "alter table x: add column y", "create index i on t",
// "update t"; the first words of a statement of another kind.
func describeStatement(st string) string {
	words := strings.FieldsFunc(st, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == ',' })
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	at := func(i int) string {
		if i < len(words) {
			return strings.Trim(words[i], `"`)
		}
		return ""
	}
	// skip moves past optional words ("unique", "if not exists").
	skip := func(i int, optional ...string) int {
		for _, o := range optional {
			if i < len(lower) && lower[i] == o {
				i++
			}
		}
		return i
	}
	if len(lower) < 2 {
		return strings.ToLower(st)
	}
	switch lower[0] {
	case "create":
		i := skip(1, "unique")
		kind := lower[min(i, len(lower)-1)]
		i = skip(i+1, "if", "not", "exists")
		switch kind {
		case "index":
			name := at(i)
			i = skip(i+1, "on")
			return "create index " + name + " on " + at(i)
		case "table", "view", "trigger":
			return "create " + kind + " " + at(i)
		}
	case "alter":
		if lower[1] != "table" {
			break
		}
		table := at(2)
		rest := lower[3:]
		switch {
		case len(rest) >= 3 && rest[0] == "add" && rest[1] == "column":
			return "alter table " + table + ": add column " + at(5)
		case len(rest) >= 2 && rest[0] == "add":
			return "alter table " + table + ": add column " + at(4)
		case len(rest) >= 3 && rest[0] == "drop" && rest[1] == "column":
			return "alter table " + table + ": drop column " + at(5)
		case len(rest) >= 3 && rest[0] == "rename" && rest[1] == "to":
			return "alter table " + table + ": rename to " + at(5)
		case len(rest) >= 1 && rest[0] == "rename":
			return "alter table " + table + ": " + strings.Join(rest, " ")
		}
		return "alter table " + table
	case "drop":
		i := skip(2, "if", "exists")
		return "drop " + lower[1] + " " + at(i)
	case "insert":
		i := skip(1, "or", "replace", "ignore")
		i = skip(i, "into")
		return "insert into " + at(i)
	case "update":
		return "update " + at(1)
	case "delete":
		return "delete from " + at(skip(1, "from"))
	}
	return strings.Join(lower[:min(3, len(lower))], " ")
}
