package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

// copyTestTables is a version after the schema's last, as another change
// would add: copy must find its tables by itself. copy_test_runs
// references itself, has a column named after a keyword and one of each
// kind; copy_test_marks has no primary key.
const copyTestTables = `
CREATE TABLE copy_test_runs (
    id        TEXT PRIMARY KEY,
    realm_id  TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    parent_id TEXT REFERENCES copy_test_runs (id),
    "order"   BIGINT NOT NULL,
    done      BOOLEAN NOT NULL,
    payload   BLOB,
    note      TEXT
);
CREATE TABLE copy_test_marks (
    run_id TEXT NOT NULL REFERENCES copy_test_runs (id),
    mark   TEXT NOT NULL
);
`

// copyTestSchemas are schema.sql and schema_postgres.sql, each with
// copyTestTables as its next version; extraPostgres goes at the end of
// PostgreSQL's.
func copyTestSchemas(t *testing.T, extraPostgres string) (lite, pg string) {
	t.Helper()
	lite = storeTestSchema(t)
	b, err := os.ReadFile(filepath.Join("..", "schema_postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	migrations, err := parseMigrations(lite)
	if err != nil {
		t.Fatal(err)
	}
	next := fmt.Sprintf("\n-- version %d\n", migrations[len(migrations)-1].version+1)
	pgTables := strings.NewReplacer("BLOB", "BYTEA", "TEXT", `TEXT COLLATE "C"`).Replace(copyTestTables)
	return lite + next + copyTestTables, string(b) + next + pgTables + extraPostgres
}

// copyTestSource fills a SQLite database with rows of the tables a realm
// spreads over, and of the test's own, in orders that a copy must keep:
// rows that reference rows of their table whose keys sort after theirs,
// SCIM mappings made in one millisecond, values of every kind.
func copyTestSource(t *testing.T, path, schema string) {
	t.Helper()
	s, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testFixture(t, s)
	testBeginTOTP(t, s, "c1", "alice", "totp-secret-alice")
	testSigningKey(t, s, "k1", testRealmID, KeyActive)
	for _, g := range []*Group{
		{ID: "g9", RealmID: testRealmID, Name: "staff", CreatedAt: 1},
		{ID: "g5", RealmID: testRealmID, ParentID: "g9", Name: "ops", CreatedAt: 2},
		{ID: "g1", RealmID: testRealmID, ParentID: "g5", Name: "night", CreatedAt: 3},
	} {
		if err := s.CreateGroup(testCtx, g); err != nil {
			t.Fatal(err)
		}
	}
	for _, sess := range []*Session{
		{ID: "s9", RealmID: testRealmID, UserID: "alice", Kind: SessionSSO, StartedAt: 1, ExpiresAt: 9e12},
		{ID: "s1", RealmID: testRealmID, UserID: "alice", Kind: SessionOAuth, ParentID: "s9", ClientID: "web", StartedAt: 2, ExpiresAt: 9e12},
	} {
		if err := s.CreateSession(testCtx, sess); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []*SCIMMapping{
		{ID: "m3", RealmID: testRealmID, Path: "title", PathKey: "title", Target: "attributes.a", CreatedAt: 5},
		{ID: "m1", RealmID: testRealmID, Path: "nickName", PathKey: "nickname", Target: "attributes.b", CreatedAt: 5},
		{ID: "m2", RealmID: testRealmID, Path: "locale", PathKey: "locale", Target: "attributes.c", CreatedAt: 5},
	} {
		if err := s.CreateSCIMMapping(testCtx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []*LoginEvent{
		{ID: "e1", RealmID: testRealmID, Time: 10, Type: "LOGIN", UserID: "alice", Details: map[string]string{"k": "v"}},
		{ID: "e2", RealmID: testRealmID, Time: 11, Type: "LOGIN_ERROR", Error: "invalid_user_credentials"},
	} {
		if err := s.AddLoginEvent(testCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddAdminEvent(testCtx, &AdminEvent{ID: "a1", RealmID: testRealmID, Time: 12, OperationType: "CREATE",
		ResourceType: "USER", ResourcePath: "users/alice", AuthType: "api-key", Representation: `{"username":"alice"}`}); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][]any{
		{"c", nil, int64(0), true, []byte{0, 0xff}, nil},
		{"b", "c", int64(1) << 62, false, []byte{}, ""},
		{"a", "b", int64(-5), true, nil, "é"},
		{"d", "d", int64(7), false, []byte("x"), "Z"},
		{"E", nil, int64(8), true, nil, "a"},
	} {
		if _, err := s.writerDB.Exec(`INSERT INTO copy_test_runs (id, realm_id, parent_id, "order", done, payload, note)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, r[0], testRealmID, r[1], r[2], r[3], r[4], r[5]); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range [][2]string{{"c", "x"}, {"c", "x"}, {"a", "é"}, {"E", "Y"}} {
		if _, err := s.writerDB.Exec(`INSERT INTO copy_test_marks (run_id, mark) VALUES ($1, $2)`, m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
}

// copyTestRows lists what a copy must keep of a database, read through
// the store where it decrypts or orders.
func copyTestRows(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	realm, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "realm %s smtp %q provider %v\n", realm.ID, realm.SMTPPassword, realm.EmailProviderConfig)
	cred, err := s.PendingCredential(testCtx, testRealmID, "alice", CredentialTOTP)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "totp %s %q\n", cred.ID, cred.Secret)
	mappings, err := s.ListSCIMMappings(testCtx, testRealmID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mappings {
		fmt.Fprintf(&b, "mapping %s\n", m.ID)
	}
	sessions, err := s.ListUserSessions(testCtx, testRealmID, "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range sessions {
		fmt.Fprintf(&b, "session %s parent %q\n", sess.ID, sess.ParentID)
	}
	for _, q := range []string{
		`SELECT id, parent_id, "order", done, payload, note FROM copy_test_runs ORDER BY id`,
		`SELECT run_id, mark FROM copy_test_marks ORDER BY run_id, mark`,
		`SELECT count(*) FROM login_events`,
		`SELECT count(*) FROM admin_events`,
	} {
		rows, err := s.readerDB.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				switch x := v.(type) {
				case nil:
					vals[i] = "NULL"
				case []byte:
					vals[i] = fmt.Sprintf("x'%x'", x)
				case bool: // SQLite's is 0 or 1
					vals[i] = map[bool]int{false: 0, true: 1}[x]
				}
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

func copyTestOpen(t *testing.T, path, lite, pg string) *Store {
	t.Helper()
	s, err := Open(testCtx, Config{Path: path, Schema: lite, PostgresSchema: pg, MasterKey: storeTestKey})
	if err != nil {
		t.Fatalf("open %s: %v", Redact(path), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A database goes from SQLite to PostgreSQL and back whole: the same rows
// in every table (the copies' checksums agree), the same secrets opened
// with the same key, the same orders of lists, and the identity columns
// of PostgreSQL going on after the values copied.
func TestCopySQLiteToPostgresAndBack(t *testing.T) {
	lite, pg := copyTestSchemas(t, "")
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src.db"), filepath.Join(dir, "back.db")
	copyTestSource(t, src, lite)
	url := pgtest.Database(t)

	progress := map[string][]int64{}
	cfg := CopyConfig{From: src, To: url, Schema: lite, PostgresSchema: pg, MasterKey: storeTestKey, BatchSize: 2,
		Progress: func(table string, done, total int64) { progress[table] = append(progress[table], done, total) }}
	there, err := Copy(testCtx, cfg)
	if err != nil {
		t.Fatalf("copy to PostgreSQL: %v", err)
	}
	mustEqual(t, "progress of copy_test_runs", progress["copy_test_runs"], []int64{2, 5, 4, 5, 5, 5})
	if there.Secrets < 3 {
		t.Errorf("the key opened %d secrets, want the SMTP password, provider settings, TOTP and signing key", there.Secrets)
	}
	cfg.From, cfg.To, cfg.Progress = url, back, nil
	home, err := Copy(testCtx, cfg)
	if err != nil {
		t.Fatalf("copy back to SQLite: %v", err)
	}

	if len(there.Tables) != len(home.Tables) {
		t.Fatalf("%d tables there, %d back", len(there.Tables), len(home.Tables))
	}
	counts := map[string]int64{}
	for i, tbl := range there.Tables {
		if home.Tables[i] != tbl {
			t.Errorf("table %v there, %v back", tbl, home.Tables[i])
		}
		counts[tbl.Name] = tbl.Rows
	}
	for table, want := range map[string]int64{"realms": 2, "users": 3, "user_credentials": 1, "realm_groups": 3,
		"user_sessions": 2, "scim_attribute_mappings": 3, "login_events": 2, "admin_events": 1, "copy_test_runs": 5,
		"copy_test_marks": 4, "master_key_check": 1} {
		if counts[table] != want {
			t.Errorf("%s: %d rows copied, want %d", table, counts[table], want)
		}
	}
	names := make([]string, len(there.Tables))
	for i, tbl := range there.Tables {
		names[i] = tbl.Name
	}
	if slices.Contains(names, "schema_version") {
		t.Error("schema_version was copied: each database keeps its own")
	}
	for _, dep := range [][2]string{{"realms", "users"}, {"users", "user_sessions"}, {"copy_test_runs", "copy_test_marks"}} {
		if slices.Index(names, dep[0]) > slices.Index(names, dep[1]) {
			t.Errorf("%s copied after %s, which references it", dep[0], dep[1])
		}
	}

	want := copyTestRows(t, copyTestOpen(t, src, lite, pg))
	pgStore := copyTestOpen(t, url, lite, pg)
	if got := copyTestRows(t, pgStore); got != want {
		t.Errorf("on PostgreSQL:\n%s\nwant:\n%s", got, want)
	}
	if got := copyTestRows(t, copyTestOpen(t, back, lite, pg)); got != want {
		t.Errorf("back on SQLite:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"mapping m3\nmapping m1\nmapping m2\n", `totp c1 "totp-secret-alice"`} {
		if !strings.Contains(want, s) {
			t.Fatalf("the source lacks %q:\n%s", s, want)
		}
	}
	// A mapping made on PostgreSQL after the copy is numbered after
	// the copied ones, so it is listed last.
	if err := pgStore.CreateSCIMMapping(testCtx, &SCIMMapping{ID: "m0", RealmID: testRealmID, Path: "userType",
		PathKey: "usertype", Target: "attributes.d", CreatedAt: 5}); err != nil {
		t.Fatal(err)
	}
	list, err := pgStore.ListSCIMMappings(testCtx, testRealmID)
	if err != nil || len(list) != 4 || list[3].ID != "m0" {
		t.Fatalf("mappings after one made on the copy: %v %v", list, err)
	}
}

// copyTestMustFail runs a copy that must fail with an error that says want.
func copyTestMustFail(t *testing.T, cfg CopyConfig, want string) error {
	t.Helper()
	_, err := Copy(testCtx, cfg)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("copy %s to %s: %v, want an error saying %q", cfg.From, Redact(cfg.To), err, want)
	}
	return err
}

// What copy refuses, it refuses before it writes; what fails halfway
// leaves the target as it was: a file it made is removed, rows it wrote
// into an empty database are deleted.
func TestCopyRefusals(t *testing.T) {
	lite, pg := copyTestSchemas(t, "")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	copyTestSource(t, src, lite)
	cfg := func(to string) CopyConfig {
		return CopyConfig{From: src, To: to, Schema: lite, PostgresSchema: pg, MasterKey: storeTestKey}
	}
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}

	t.Run("a target that is not empty", func(t *testing.T) {
		to := filepath.Join(t.TempDir(), "full.db")
		s := copyTestOpen(t, to, lite, pg)
		mustCreateRealm(t, s, testRealm("33333333-3333-4333-8333-333333333333", "mine", 1))
		err := copyTestMustFail(t, cfg(to), "its table realms has rows")
		if !errors.Is(err, ErrTargetNotEmpty) {
			t.Errorf("error %v is not ErrTargetNotEmpty", err)
		}
		if realms, err := s.ListRealms(testCtx); err != nil || len(realms) != 1 {
			t.Errorf("the target's realms after the refusal: %v %v", realms, err)
		}
	})
	t.Run("an empty target opened with another key", func(t *testing.T) {
		// Not refused: the key check of a database without data says
		// nothing worth keeping.
		to := filepath.Join(t.TempDir(), "other-key.db")
		s, err := Open(testCtx, Config{Path: to, Schema: lite, MasterKey: bytes.Repeat([]byte{7}, MasterKeySize)})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Copy(testCtx, cfg(to)); err != nil {
			t.Fatalf("copy into an empty database opened with another key: %v", err)
		}
		copyTestRows(t, copyTestOpen(t, to, lite, pg))
	})
	t.Run("the same database", func(t *testing.T) {
		c := cfg(src)
		copyTestMustFail(t, c, "the same database")
		c.To = filepath.Join(dir, ".", "src.db")
		copyTestMustFail(t, c, "the same database")
	})
	t.Run("another master key", func(t *testing.T) {
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		c.MasterKey = bytes.Repeat([]byte{7}, MasterKeySize)
		err := copyTestMustFail(t, c, "does not open")
		if !errors.Is(err, ErrWrongMasterKey) || exists(c.To) {
			t.Errorf("error %v; target made: %t", err, exists(c.To))
		}
	})
	t.Run("a source at another version", func(t *testing.T) {
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		migrations, _ := parseMigrations(lite)
		c.Schema = lite + fmt.Sprintf("\n-- version %d\nCREATE TABLE later (id TEXT PRIMARY KEY);\n", migrations[len(migrations)-1].version+1)
		copyTestMustFail(t, c, "schema version")
		if exists(c.To) {
			t.Error("the target was made")
		}
	})
	t.Run("a missing source", func(t *testing.T) {
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		c.From = filepath.Join(dir, "missing.db")
		copyTestMustFail(t, c, "no such file")
		if exists(c.From) {
			t.Error("the missing source was made")
		}
	})
	t.Run("a backup file", func(t *testing.T) {
		s := copyTestOpen(t, src, lite, pg)
		bk := filepath.Join(t.TempDir(), "backup.db")
		sealed, err := SealMasterKey(storeTestKey, []byte("a long passphrase"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Backup(testCtx, bk, sealed); err != nil {
			t.Fatal(err)
		}
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		c.From = bk
		copyTestMustFail(t, c, "restore it")
		if exists(c.To) {
			t.Error("the target was made")
		}
	})
	t.Run("a source in use not in WAL mode", func(t *testing.T) {
		rollback := filepath.Join(t.TempDir(), "rollback.db")
		copyTestSource(t, rollback, lite)
		db, err := sql.Open("sqlite", "file:"+rollback)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("PRAGMA journal_mode = DELETE"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		release, err := lockShared(rollback) // as a server holds it
		if err != nil {
			t.Fatal(err)
		}
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		c.From = rollback
		err = copyTestMustFail(t, c, "not WAL")
		if !errors.Is(err, ErrNoSnapshot) {
			t.Errorf("error %v is not ErrNoSnapshot", err)
		}
		_ = release()
		// Alone, the file is copied.
		if _, err := Copy(testCtx, c); err != nil {
			t.Fatalf("copy of the file no one has open: %v", err)
		}
	})
	t.Run("a failure halfway", func(t *testing.T) {
		// A target that refuses a row of the source.
		strict := lite[:strings.LastIndex(lite, "CREATE TABLE copy_test_marks")] +
			"CREATE TABLE copy_test_marks (run_id TEXT NOT NULL REFERENCES copy_test_runs (id), mark TEXT NOT NULL CHECK (mark <> 'Y'));\n"
		c := cfg(filepath.Join(t.TempDir(), "to.db"))
		c.Schema = strict
		copyTestMustFail(t, c, "table copy_test_marks")
		if exists(c.To) || exists(c.To+"-wal") {
			t.Error("the target file a failed copy made is still there")
		}

		_, strictPG := copyTestSchemas(t, "ALTER TABLE copy_test_marks ADD CHECK (mark <> 'Y');\n")
		c = cfg(pgtest.Database(t))
		c.PostgresSchema = strictPG
		copyTestMustFail(t, c, "table copy_test_marks")
		s, err := Open(testCtx, Config{Path: c.To, PostgresSchema: strictPG, MasterKey: storeTestKey})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = s.readerDB.QueryRow("SELECT (SELECT count(*) FROM realms) + (SELECT count(*) FROM users)").Scan(&n)
		s.Close()
		if err != nil || n != 0 {
			t.Fatalf("%d rows left in the target after a failed copy (%v)", n, err)
		}
		// Emptied, it takes a copy: here, of a source without the row.
		fixed := filepath.Join(t.TempDir(), "fixed.db")
		if _, err := Copy(testCtx, CopyConfig{From: src, To: fixed, Schema: lite, PostgresSchema: pg, MasterKey: storeTestKey}); err != nil {
			t.Fatal(err)
		}
		f, err := Open(testCtx, Config{Path: fixed, Schema: lite, MasterKey: storeTestKey})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.writerDB.Exec("DELETE FROM copy_test_marks WHERE mark = 'Y'")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		c.From = fixed
		if _, err := Copy(testCtx, c); err != nil {
			t.Fatalf("copy into the emptied target: %v", err)
		}
	})
}

// A server goes on writing to the source while it is copied: the copy is
// the source as it was when the copy began, and the writes are not held
// up.
func TestCopyWhileWritten(t *testing.T) {
	lite, pg := copyTestSchemas(t, "")
	dir := t.TempDir()
	src, to := filepath.Join(dir, "src.db"), filepath.Join(dir, "to.db")
	copyTestSource(t, src, lite)
	live := copyTestOpen(t, src, lite, pg)
	writes := 0
	res, err := Copy(testCtx, CopyConfig{From: src, To: to, Schema: lite, PostgresSchema: pg, MasterKey: storeTestKey, BatchSize: 1,
		Progress: func(string, int64, int64) {
			writes++
			if err := live.AddLoginEvent(testCtx, &LoginEvent{ID: fmt.Sprintf("live-%d", writes), RealmID: testRealmID, Time: 20,
				Type: "LOGIN"}); err != nil {
				t.Errorf("a write to the source during the copy: %v", err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var copied int64
	for _, tbl := range res.Tables {
		if tbl.Name == "login_events" {
			copied = tbl.Rows
		}
	}
	var now int64
	if err := live.readerDB.QueryRow("SELECT count(*) FROM login_events").Scan(&now); err != nil {
		t.Fatal(err)
	}
	if copied != 2 || now != int64(2+writes) || writes < 20 {
		t.Fatalf("%d login events copied, %d in the source after %d writes; want the 2 there were when the copy began", copied, now, writes)
	}
}
