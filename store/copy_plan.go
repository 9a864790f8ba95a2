package store

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// What copy knows of the tables it copies comes from the databases
// themselves, not from a list kept here: a table a later version adds is
// copied as the others are.

// schemaTable is a table as one database describes it.
type schemaTable struct {
	name string
	// columns are those an INSERT gives values to, in the table's order;
	// rowid is not among them.
	columns []schemaColumn
	// rowid: the table keeps an order of insertion of its own, SQLite's
	// rowid or PostgreSQL's rowid identity column (schema_postgres.sql),
	// which lists made within one millisecond are ordered by.
	rowid bool
	// identity are the columns a sequence numbers (PostgreSQL's identity
	// columns, rowid among them): after copied values, the sequence must
	// go on past them.
	identity []string
	refs     []schemaRef // the table's foreign keys
}

type schemaColumn struct {
	name string
	kind valueKind
	pk   int // the column's place in the primary key, from 1; 0 if not in it
}

// schemaRef is a foreign key: columns from of its table reference columns
// to of table; to empty means that table's primary key.
type schemaRef struct {
	table    string
	from, to []string
}

// copyTable is a table as copy reads it from the source and writes it into
// the target.
type copyTable struct {
	name    string
	columns []schemaColumn // the target's, in its order
	rowid   bool           // both databases keep a rowid: it is copied too
	// order is the primary key's columns, or every column of a table
	// without one: the order rows are compared in.
	order []string
	keyed bool // order is the primary key
	// selfRefs are the foreign keys to the table itself: a row is written
	// after the row it references.
	selfRefs []schemaRef
	identity []string // the target's columns numbered by a sequence
}

// notCopied are the tables whose rows are the database's own, not its
// data: the schema's version, which each side keeps itself, and the rows
// SQLite's trigram indexes have yet to take in (text_index.go), which the
// target's triggers list anew as the rows are copied in.
var notCopied = []string{"schema_version", "users_trigrams_pending", "scim_user_values_trigrams_pending"}

// backupKeyTableName is the table only a backup file has (backup.go).
const backupKeyTableName = "backup_master_key"

// planCopy matches the source's tables with the target's and orders them so
// that a table comes after every table it references.
func planCopy(src, dst map[string]*schemaTable) ([]*copyTable, error) {
	for _, name := range slices.Sorted(maps.Keys(src)) {
		if _, ok := dst[name]; ok || slices.Contains(notCopied, name) {
			continue
		}
		if name == backupKeyTableName {
			return nil, fmt.Errorf("the source is a backup file: restore it (idenplane restore), then copy the restored database")
		}
		return nil, fmt.Errorf("the source has a table %s that this version's schema does not", name)
	}
	byName := map[string]*copyTable{}
	for name, d := range dst {
		if slices.Contains(notCopied, name) {
			continue
		}
		s, ok := src[name]
		if !ok {
			return nil, fmt.Errorf("the source has no table %s", name)
		}
		t, err := matchTable(s, d)
		if err != nil {
			return nil, err
		}
		byName[name] = t
	}
	return dependencyOrder(byName, dst)
}

// matchTable checks that both sides have the same columns, of the same
// kinds.
func matchTable(s, d *schemaTable) (*copyTable, error) {
	if len(s.columns) != len(d.columns) {
		return nil, fmt.Errorf("table %s: the source has %d columns, the target %d", d.name, len(s.columns), len(d.columns))
	}
	t := &copyTable{name: d.name, columns: d.columns, rowid: s.rowid && d.rowid, identity: d.identity}
	for _, dc := range d.columns {
		i := slices.IndexFunc(s.columns, func(c schemaColumn) bool { return c.name == dc.name })
		if i < 0 {
			return nil, fmt.Errorf("table %s: the source has no column %s", d.name, dc.name)
		}
		if sc := s.columns[i]; sc.kind != dc.kind {
			return nil, fmt.Errorf("table %s: column %s is %s on the source and %s on the target", d.name, dc.name, sc.kind, dc.kind)
		}
	}
	key := slices.DeleteFunc(slices.Clone(d.columns), func(c schemaColumn) bool { return c.pk == 0 })
	slices.SortFunc(key, func(a, b schemaColumn) int { return cmp.Compare(a.pk, b.pk) })
	t.keyed = len(key) > 0
	if !t.keyed {
		key = d.columns
	}
	for _, c := range key {
		t.order = append(t.order, c.name)
	}
	for _, r := range d.refs {
		if r.table != d.name {
			continue
		}
		if !t.keyed {
			return nil, fmt.Errorf("table %s references itself but has no primary key", d.name)
		}
		if len(r.to) == 0 {
			r.to = t.order
		}
		t.selfRefs = append(t.selfRefs, r)
	}
	return t, nil
}

// dependencyOrder sorts the tables so that each comes after those its
// foreign keys reference (Kahn's algorithm; among tables free to go, by
// name, so that the order is the same on every run).
func dependencyOrder(tables map[string]*copyTable, schema map[string]*schemaTable) ([]*copyTable, error) {
	waitsFor := map[string]map[string]bool{}
	for name := range tables {
		waitsFor[name] = map[string]bool{}
		for _, r := range schema[name].refs {
			if _, ok := tables[r.table]; ok && r.table != name {
				waitsFor[name][r.table] = true
			}
		}
	}
	var out []*copyTable
	for len(waitsFor) > 0 {
		var ready []string
		for name, deps := range waitsFor {
			if len(deps) == 0 {
				ready = append(ready, name)
			}
		}
		if len(ready) == 0 {
			left := make([]string, 0, len(waitsFor))
			for name := range waitsFor {
				left = append(left, name)
			}
			slices.Sort(left)
			return nil, fmt.Errorf("the foreign keys of tables %s reference each other in a cycle", strings.Join(left, ", "))
		}
		slices.Sort(ready)
		for _, name := range ready {
			out = append(out, tables[name])
			delete(waitsFor, name)
		}
		for _, deps := range waitsFor {
			for _, name := range ready {
				delete(deps, name)
			}
		}
	}
	return out, nil
}

// quoteIdent quotes a table's or column's name, as both SQLite and
// PostgreSQL read it: a column may be named after a keyword.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// names are the columns copy reads and writes: rowid first, when copied.
func (t *copyTable) names() []string {
	var out []string
	if t.rowid {
		out = append(out, "rowid")
	}
	for _, c := range t.columns {
		out = append(out, c.name)
	}
	return out
}

// kinds are the kinds of the values of names, in its order.
func (t *copyTable) kinds() []valueKind {
	var out []valueKind
	if t.rowid {
		out = append(out, kindInt)
	}
	for _, c := range t.columns {
		out = append(out, c.kind)
	}
	return out
}

func (t *copyTable) kindOf(column string) valueKind {
	i := slices.IndexFunc(t.columns, func(c schemaColumn) bool { return c.name == column })
	return t.columns[i].kind
}

// columnList is "alias"."a", "alias"."b", … of names; no alias: unqualified.
func columnList(alias string, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = quoteIdent(n)
		if alias != "" {
			parts[i] = alias + "." + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// orderBy orders rows by t.order, text by its bytes, as both SQLite and
// PostgreSQL with the collation bytewise do; NULLs first, as SQLite puts
// them, in a table without a primary key.
func (t *copyTable) orderBy(alias, bytewise string) string {
	parts := make([]string, len(t.order))
	for i, n := range t.order {
		parts[i] = quoteIdent(n)
		if alias != "" {
			parts[i] = alias + "." + parts[i]
		}
		if t.kindOf(n) == kindText {
			parts[i] += " " + bytewise
		}
		if !t.keyed {
			parts[i] += " NULLS FIRST"
		}
	}
	return strings.Join(parts, ", ")
}

// countSQL counts the table's rows.
func (t *copyTable) countSQL() string { return "SELECT count(*) FROM " + quoteIdent(t.name) }

// readSQL reads every row, in t.order: the order rows are compared in.
func (t *copyTable) readSQL(bytewise string) string {
	return "SELECT " + columnList("", t.names()) + " FROM " + quoteIdent(t.name) + " ORDER BY " + t.orderBy("", bytewise)
}

// copySQL reads every row in an order the target takes them in: a row
// after the row of the same table it references. Without such references
// that is readSQL's order. With them, each row's depth, the longest chain
// of references from a row that references nothing (or itself), comes
// first: a row that is part of a cycle has none, is not read, and the
// comparison of the copy finds it missing.
func (t *copyTable) copySQL(bytewise string) string {
	if len(t.selfRefs) == 0 {
		return t.readSQL(bytewise)
	}
	// copy_depth carries the primary key and every column referenced.
	carried := slices.Clone(t.order)
	for _, r := range t.selfRefs {
		for _, c := range r.to {
			if !slices.Contains(carried, c) {
				carried = append(carried, c)
			}
		}
	}
	slot := func(c string) string { return fmt.Sprintf("c%d", slices.Index(carried, c)) }
	slots := make([]string, len(carried))
	for i := range carried {
		slots[i] = fmt.Sprintf("c%d", i)
	}
	var roots, edges []string
	for _, r := range t.selfRefs {
		var unset, self, link, notSelf []string
		for i, from := range r.from {
			unset = append(unset, quoteIdent(from)+" IS NULL")
			self = append(self, quoteIdent(from)+" = "+quoteIdent(r.to[i]))
			link = append(link, "copy_child."+quoteIdent(from)+" = copy_parent."+slot(r.to[i]))
			notSelf = append(notSelf, "copy_child."+quoteIdent(from)+" = copy_child."+quoteIdent(r.to[i]))
		}
		roots = append(roots, "("+strings.Join(unset, " OR ")+" OR ("+strings.Join(self, " AND ")+"))")
		edges = append(edges, "("+strings.Join(link, " AND ")+" AND NOT ("+strings.Join(notSelf, " AND ")+"))")
	}
	keySlots := slots[:len(t.order)]
	var join []string
	for i, c := range t.order {
		join = append(join, "copy_row."+quoteIdent(c)+" = copy_order."+keySlots[i])
	}
	name := quoteIdent(t.name)
	return "WITH RECURSIVE copy_depth (" + strings.Join(slots, ", ") + ", depth) AS (" +
		"SELECT " + columnList("", carried) + ", 0 FROM " + name + " WHERE " + strings.Join(roots, " AND ") +
		" UNION SELECT " + columnList("copy_child", carried) + ", copy_parent.depth + 1 FROM " + name + " copy_child" +
		" JOIN copy_depth copy_parent ON " + strings.Join(edges, " OR ") + ")" +
		" SELECT " + columnList("copy_row", t.names()) + " FROM " + name + " copy_row JOIN (SELECT " + strings.Join(keySlots, ", ") +
		", max(depth) AS depth FROM copy_depth GROUP BY " + strings.Join(keySlots, ", ") + ") copy_order ON " + strings.Join(join, " AND ") +
		" ORDER BY copy_order.depth, " + t.orderBy("copy_row", bytewise)
}

// insertSQL writes rows rows; overriding is what lets values into
// identity columns (PostgreSQL's OVERRIDING SYSTEM VALUE).
func (t *copyTable) insertSQL(rows int, overriding string) string {
	names := t.names()
	var b strings.Builder
	b.WriteString("INSERT INTO " + quoteIdent(t.name) + " (" + columnList("", names) + ")")
	if len(t.identity) > 0 && overriding != "" {
		b.WriteString(" " + overriding)
	}
	b.WriteString(" VALUES ")
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			n++
			fmt.Fprintf(&b, "$%d", n)
		}
		b.WriteByte(')')
	}
	return b.String()
}
