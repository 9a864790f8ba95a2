package upgrade_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
)

var ctx = context.Background()

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var (
	versionLine = regexp.MustCompile(`(?m)^-- version (\d+)$`)
	// touchesRealmsOrUsers finds a migration that changes the tables the
	// older database's rows are written to with this binary's store.
	touchesRealmsOrUsers = regexp.MustCompile(`(?i)\b(ALTER|CREATE|DROP)\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?(realms|users)\b`)
)

// olderSchema cuts schema before its last versions: the schema of an older
// binary, at version base. base is the newest version before the last
// from which the migrations leave the realms and users tables alone, so
// that this binary's store writes their rows at base (today the one
// before the last).
func olderSchema(t *testing.T, schema string) (older string, base int) {
	t.Helper()
	var versions []int
	for _, m := range versionLine.FindAllStringSubmatch(schema, -1) {
		v, _ := strconv.Atoi(m[1])
		versions = append(versions, v)
	}
	if len(versions) < 2 {
		t.Fatal("the schema has fewer than two versions")
	}
	for i := len(versions) - 1; i > 0; i-- {
		cut := strings.Index(schema, fmt.Sprintf("-- version %d\n", versions[i]))
		if !touchesRealmsOrUsers.MatchString(schema[cut:]) {
			return schema[:cut], versions[i-1]
		}
	}
	t.Fatal("every migration touches the realms or users table")
	return "", 0
}

// olderDatabase makes a SQLite database at an older schema version, as
// its binary left it: a realm, acme, with a few users, and the bootstrap
// admin API key's hash (apptest.APIKey's).
func olderDatabase(t *testing.T, users int) (path string, base int) {
	t.Helper()
	older, base := olderSchema(t, apptest.Schema(t))
	path = filepath.Join(t.TempDir(), "idenplane.db")
	st, err := store.Open(ctx, store.Config{Path: path, Schema: older, MasterKey: apptest.MasterKey()})
	if err != nil {
		t.Fatalf("open the older database: %v", err)
	}
	defer st.Close()
	fillOlder(t, st, users)
	return path, base
}

func fillOlder(t *testing.T, st *store.Store, users int) {
	t.Helper()
	realm := &store.Realm{ID: "7d1c0a3e-0000-4000-8000-000000000001", Name: "acme", DisplayName: "Acme", Enabled: true,
		AccessTokenLifespan: 300, RefreshTokenLifespan: 1800, OfflineTokenLifespan: 2592000, PasswordMinLength: 8,
		CreatedAt: 1_767_225_600_000}
	if err := st.CreateRealm(ctx, realm); err != nil {
		t.Fatalf("create realm: %v", err)
	}
	for i := range users {
		u := &store.User{ID: fmt.Sprintf("7d1c0a3e-0000-4000-8000-1%011d", i), RealmID: realm.ID,
			Username: fmt.Sprintf("user%03d", i), Email: fmt.Sprintf("user%03d@acme.test", i),
			FirstName: "First", LastName: strings.Repeat("Last", 8), Enabled: true, CreatedAt: 1_767_225_600_000}
		if err := st.CreateUser(ctx, u); err != nil {
			t.Fatalf("create user: %v", err)
		}
	}
	h := sha256.Sum256([]byte(apptest.APIKey))
	if err := st.SetAdminAPIKeyHash(ctx, h[:]); err != nil {
		t.Fatalf("store the admin API key: %v", err)
	}
}

// openStore opens path with this binary's schema, marked in use as serve
// opens it; deferred: without migrating (--upgrade=manual).
func openStore(t *testing.T, path string, deferred bool) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, store.Config{Path: path, Schema: apptest.Schema(t), MasterKey: apptest.MasterKey(),
		Lock: true, DeferMigrations: deferred})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// corruptTable overwrites the second half of the root page of a table of
// the SQLite file at path, where its cells are: integrity_check then
// finds the b-tree damaged. The file must not be open.
func corruptTable(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = $1", table).Scan(&root); err != nil {
		t.Fatalf("root page of %s: %v", table, err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(pageSize/2)), (root-1)*pageSize+pageSize/2); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies a closed database file.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tableRows reads every row of every table of a SQLite file, each row a
// line of its values, sorted: two files hold the same data when their
// maps are equal.
func tableRows(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatalf("%s: read %s: %v", path, table, err)
		}
		cols, _ := rows.Columns()
		lines := []string{}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%#v", vals))
		}
		rows.Close()
		slices.Sort(lines)
		out[table] = lines
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
