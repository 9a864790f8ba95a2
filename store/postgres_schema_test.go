package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store/pgtest"
)

// schemaShape is what TestPostgresSchemaMatchesSQLite compares of a
// migrated database: its version, and for each table its columns (name,
// type, NOT NULL, primary key), its named indexes (unique, partial), its
// foreign keys and the number of its CHECK constraints.
type schemaShape struct {
	version int
	tables  map[string][]string
}

// postgresOnlyColumns are the columns schema_postgres.sql adds for what
// SQLite gives every table (its header says why).
var postgresOnlyColumns = map[string]string{
	"organization_sso_connections": "rowid", "scim_attribute_mappings": "rowid",
}

// sqliteOnlyTables are schema.sql's FTS5 tables (version 54), each with
// the shadow tables FTS5 keeps its index in: SQLite's way of indexing the substrings SCIM searches, which
// schema_postgres.sql gives to pg_trgm's indexes on the searched columns
// instead (postgresOnlyIndexes). They hold no data of their own
// (triggers list the rows they index, text_index.go moves them in), so
// no other backend needs a counterpart.
var sqliteOnlyTables = append(fts5Tables("users_trigrams", "scim_user_values_trigrams"),
	"users_trigrams_pending", "scim_user_values_trigrams_pending")

// fts5Tables are the FTS5 tables named and their shadow tables.
func fts5Tables(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, n, n+"_config", n+"_data", n+"_docsize", n+"_idx")
	}
	return out
}

// postgresOnlyIndexes are schema_postgres.sql's pg_trgm indexes (version
// 52), the counterpart of sqliteOnlyTables, made where the extension can
// be had, which the test server has.
var postgresOnlyIndexes = []string{"users_username_trigrams", "users_email_trigrams", "users_first_name_fold_trigrams",
	"users_last_name_fold_trigrams", "scim_user_values_fold_trigrams", "scim_user_values_value_trigrams"}

// sqliteTypes maps a SQLite declared type to the PostgreSQL type it stands
// for (docs/storage.md).
var sqliteTypes = map[string]string{"INTEGER": "bigint", "BIGINT": "bigint", "BLOB": "bytea", "TEXT": "text", "BOOLEAN": "boolean"}

// Both schema files, migrated from empty, give the same version, tables,
// columns (types mapped), named indexes, foreign keys and checks.
func TestPostgresSchemaMatchesSQLite(t *testing.T) {
	lite := storeTestOpen(t, filepath.Join(t.TempDir(), "idenplane.db"), storeTestKey)
	pgSchema, err := os.ReadFile(filepath.Join("..", "schema_postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Open(context.Background(), Config{Path: pgtest.Database(t), PostgresSchema: string(pgSchema), MasterKey: storeTestKey})
	if err != nil {
		t.Fatalf("open PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { pg.Close() })

	want, got := sqliteShape(t, lite.writerDB), postgresShape(t, pg.writerDB)
	if want.version != got.version {
		t.Fatalf("schema version: SQLite %d, PostgreSQL %d", want.version, got.version)
	}
	for name, w := range want.tables {
		g, ok := got.tables[name]
		if !ok {
			t.Errorf("table %s: not in schema_postgres.sql", name)
			continue
		}
		if extra, missing := setDiff(g, w), setDiff(w, g); len(extra)+len(missing) > 0 {
			t.Errorf("table %s differs:\n  only on SQLite:     %v\n  only on PostgreSQL: %v", name, missing, extra)
		}
	}
	for name := range got.tables {
		if _, ok := want.tables[name]; !ok {
			t.Errorf("table %s: only in schema_postgres.sql", name)
		}
	}
	// The test server has pg_trgm, so the trigram indexes the shapes
	// leave out are there.
	for _, ix := range postgresOnlyIndexes {
		var n int
		if err := pg.writerDB.QueryRow("SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1", ix).
			Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s: %d on PostgreSQL (%v), want 1", ix, n, err)
		}
	}
}

func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func queryStrings(t *testing.T, db *sql.DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var checkRE = regexp.MustCompile(`(?i)\bCHECK\s*\(`)

func sqliteShape(t *testing.T, db *sql.DB) schemaShape {
	t.Helper()
	shape := schemaShape{tables: map[string][]string{}}
	if err := db.QueryRow("SELECT version FROM schema_version").Scan(&shape.version); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range queryStrings(t, db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
		name, ddl := tbl[0], tbl[1]
		if slices.Contains(sqliteOnlyTables, name) {
			continue
		}
		var items []string
		for _, c := range queryStrings(t, db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info($1)", name) {
			typ, ok := sqliteTypes[strings.ToUpper(c[1])]
			if !ok {
				t.Fatalf("table %s column %s: type %q has no PostgreSQL counterpart in sqliteTypes", name, c[0], c[1])
			}
			notNull := c[2] == "1" || c[3] != "0"
			items = append(items, fmt.Sprintf("column %s %s notnull=%t pk=%t", c[0], typ, notNull, c[3] != "0"))
		}
		for _, ix := range queryStrings(t, db, "SELECT name, \"unique\", partial FROM pragma_index_list($1) WHERE origin = 'c'", name) {
			items = append(items, fmt.Sprintf("index %s unique=%t partial=%t", ix[0], ix[1] == "1", ix[2] == "1"))
		}
		fks := map[string]*[3]string{} // id: from columns, to table(columns), on delete
		for _, fk := range queryStrings(t, db, "SELECT id, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list($1) ORDER BY id, seq", name) {
			f := fks[fk[0]]
			if f == nil {
				f = &[3]string{"", fk[1], strings.ToLower(fk[4])}
				fks[fk[0]] = f
			}
			f[0] += fk[2] + ","
			f[1] += "." + fk[3]
		}
		for _, f := range fks {
			items = append(items, fmt.Sprintf("foreign key (%s) references %s on delete %s", strings.TrimSuffix(f[0], ","), f[1], f[2]))
		}
		items = append(items, fmt.Sprintf("checks %d", len(checkRE.FindAllStringIndex(ddl, -1))))
		shape.tables[name] = items
	}
	return shape
}

func postgresShape(t *testing.T, db *sql.DB) schemaShape {
	t.Helper()
	shape := schemaShape{tables: map[string][]string{}}
	if err := db.QueryRow("SELECT version FROM schema_version").Scan(&shape.version); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range queryStrings(t, db, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()") {
		name := tbl[0]
		pk := map[string]bool{}
		for _, c := range queryStrings(t, db, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
			AND a.attnum = ANY(i.indkey) WHERE i.indrelid = $1::regclass AND i.indisprimary`, name) {
			pk[c[0]] = true
		}
		var items []string
		for _, c := range queryStrings(t, db, `SELECT column_name, data_type, is_nullable FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1`, name) {
			if postgresOnlyColumns[name] == c[0] {
				continue
			}
			items = append(items, fmt.Sprintf("column %s %s notnull=%t pk=%t", c[0], c[1], c[2] == "NO", pk[c[0]]))
		}
		// Named indexes are those of CREATE INDEX: PostgreSQL names a
		// constraint's own index after the constraint (_pkey, _key).
		for _, ix := range queryStrings(t, db, `SELECT c.relname, i.indisunique, i.indpred IS NOT NULL FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid
			WHERE i.indrelid = $1::regclass AND k.oid IS NULL`, name) {
			if slices.Contains(postgresOnlyIndexes, ix[0]) {
				continue
			}
			items = append(items, fmt.Sprintf("index %s unique=%s partial=%s", ix[0], pgBool(ix[1]), pgBool(ix[2])))
		}
		for _, fk := range queryStrings(t, db, `SELECT
				(SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(num, n)
					JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num),
				c.confrelid::regclass::text || (SELECT string_agg('.' || a.attname, '' ORDER BY k.n)
					FROM unnest(c.confkey) WITH ORDINALITY k(num, n)
					JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.num),
				CASE c.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null' WHEN 'd' THEN 'set default'
					WHEN 'r' THEN 'restrict' ELSE 'no action' END
			FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'f'`, name) {
			items = append(items, fmt.Sprintf("foreign key (%s) references %s on delete %s", fk[0], fk[1], fk[2]))
		}
		var checks int
		if err := db.QueryRow("SELECT count(*) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'", name).Scan(&checks); err != nil {
			t.Fatal(err)
		}
		items = append(items, fmt.Sprintf("checks %d", checks))
		shape.tables[name] = items
	}
	return shape
}

func pgBool(s string) string {
	if s == "true" || s == "t" {
		return "true"
	}
	return "false"
}

// The pool's settings reach PostgreSQL: the read pool's size, and a
// statement timeout that cancels a statement running longer.
func TestPostgresPoolSettings(t *testing.T) {
	pgSchema, err := os.ReadFile(filepath.Join("..", "schema_postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Config{Path: pgtest.Database(t), PostgresSchema: string(pgSchema), MasterKey: storeTestKey,
		Readers: 3, StatementTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("open PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if n := s.readerDB.Stats().MaxOpenConnections; n != 3 {
		t.Errorf("read pool of %d connections, want 3", n)
	}
	var timeout string
	if err := s.r.QueryRowContext(testCtx, "SHOW statement_timeout").Scan(&timeout); err != nil || timeout != "200ms" {
		t.Errorf("statement_timeout %q, %v; want 200ms", timeout, err)
	}
	// JIT is off on the server's connections, so that the recursive
	// queries the planner overestimates are not compiled on every run.
	for _, q := range []querier{s.r, s.w} {
		var jit string
		if err := q.QueryRowContext(testCtx, "SHOW jit").Scan(&jit); err != nil || jit != "off" {
			t.Errorf("jit %q, %v; want off", jit, err)
		}
	}
	if _, err := s.w.ExecContext(testCtx, "SELECT pg_sleep(5)"); err == nil || !strings.Contains(err.Error(), "57014") {
		t.Errorf("a statement longer than the timeout: %v, want SQLSTATE 57014 (query_canceled)", err)
	}
	if _, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "x.db"), Schema: storeTestSchema(t),
		MasterKey: storeTestKey, StatementTimeout: time.Second}); err == nil {
		t.Error("a statement timeout on SQLite was accepted")
	}
}
