package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// createRealmAtOldSchema inserts r into a database migrated only up to an
// older version: only the realm columns that version has.
func createRealmAtOldSchema(t *testing.T, s *Store, r *Realm) {
	t.Helper()
	rows, err := s.r.QueryContext(suiteCtx, "SELECT name FROM pragma_table_info('realms')")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		have = append(have, c)
	}
	rows.Close()
	vals, err := s.realmValues(r)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	var args []any
	for i, c := range splitColumns(realmColumns) {
		if slices.Contains(have, c) {
			cols, args = append(cols, c), append(args, vals[i])
		}
	}
	if _, err := s.w.ExecContext(suiteCtx, "INSERT INTO realms ("+strings.Join(cols, ", ")+", position) VALUES ("+
		placeholders(len(cols))+", 1)", args...); err != nil {
		t.Fatal(err)
	}
}

// openBeforeVersion opens a new database migrated up to the version
// before version; the caller closes it and reopens path at the latest.
func openBeforeVersion(t *testing.T, version int) (before *Store, path string) {
	t.Helper()
	schema := storeTestSchema(t)
	i := strings.Index(schema, fmt.Sprintf("-- version %d\n", version))
	if i < 0 {
		t.Fatalf("schema.sql has no version %d", version)
	}
	path = filepath.Join(t.TempDir(), "idenplane.db")
	before, err := Open(suiteCtx, Config{Path: path, Schema: schema[:i], MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	return before, path
}

// Version 13 leaves the realms that existed before it recording the
// default event types.
func TestEnabledEventTypesMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 13)
	createRealmAtOldSchema(t, before, suiteRealm("r1", "acme", 1000))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	r, err := s.GetRealm(suiteCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.EnabledEventTypes != nil || !r.EventsEnabled {
		t.Fatalf("migrated realm: enabled event types %v, events enabled %t; want the default set, on", r.EnabledEventTypes, r.EventsEnabled)
	}
}

// Version 12 gives the pending logins saved before it an empty amr
// column, which reads as none.
func TestPendingLoginAMRMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 12)
	createRealmAtOldSchema(t, before, &Realm{ID: "r1", Name: "acme", CreatedAt: 1000})
	suiteMustCreateUser(t, before, suiteUser("alice", "r1", "alice", ""))
	if err := before.CreateClient(suiteCtx, &Client{ID: "web", RealmID: "r1", ClientID: "web-app", ClientType: "PUBLIC"}); err != nil {
		t.Fatal(err)
	}
	if err := before.CreateAuthRequest(suiteCtx, &AuthRequest{ID: "ar1", RealmID: "r1", ClientID: "web",
		RedirectURI: "https://app.test/cb", ResponseType: "code", CreatedAt: 1000, ExpiresAt: 1 << 62}); err != nil {
		t.Fatal(err)
	}
	if _, err := before.w.ExecContext(suiteCtx, `INSERT INTO pending_logins (auth_request_id, realm_id, user_id, action,
		browser_hash, remember_me, created_at) VALUES ('ar1', 'r1', 'alice', $1, $2, TRUE, 1000)`,
		ActionUpdatePassword, HashToken("browser")); err != nil {
		t.Fatal(err)
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	got, err := s.GetPendingLogin(suiteCtx, "r1", "ar1")
	if err != nil || got.UserID != "alice" || got.AMR != nil {
		t.Fatalf("pending login saved before version 12: %+v, %v; want alice's, with no amr", got, err)
	}
}
