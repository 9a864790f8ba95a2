package store

import (
	"errors"
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
	rows, err := s.r.QueryContext(testCtx, "SELECT name FROM pragma_table_info('realms')")
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
	if _, err := s.w.ExecContext(testCtx, "INSERT INTO realms ("+strings.Join(cols, ", ")+", position) VALUES ("+
		placeholders(len(cols))+", (SELECT coalesce(max(position), 0) + 1 FROM realms))", args...); err != nil {
		t.Fatal(err)
	}
}

// createUserAtOldSchema inserts u with the columns the database has.
func createUserAtOldSchema(t *testing.T, s *Store, u *User) {
	t.Helper()
	rows, err := s.r.QueryContext(testCtx, "SELECT name FROM pragma_table_info('users')")
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
	var cols []string
	var args []any
	for i, c := range splitColumns(userWriteColumns) {
		if slices.Contains(have, c) {
			cols, args = append(cols, c), append(args, userWriteValues(u)[i])
		}
	}
	if _, err := s.w.ExecContext(testCtx, "INSERT INTO users ("+strings.Join(cols, ", ")+") VALUES ("+
		placeholders(len(cols))+")", args...); err != nil {
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
	before, err := Open(testCtx, Config{Path: path, Schema: schema[:i], MasterKey: storeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	return before, path
}

func TestMigrations(t *testing.T) {
	schema := storeTestSchema(t)

	t.Run("parse rejects bad schemas", func(t *testing.T) {
		for name, bad := range map[string]string{
			"gap":            "-- version 1\nCREATE TABLE a (x INTEGER);\n-- version 3\nCREATE TABLE c (x INTEGER);\n",
			"duplicate":      "-- version 1\nCREATE TABLE a (x INTEGER);\n-- version 1\nCREATE TABLE b (x INTEGER);\n",
			"backwards":      "-- version 1\n-- version 2\n-- version 1\n",
			"not from one":   "-- version 2\nCREATE TABLE a (x INTEGER);\n",
			"bad number":     "-- version one\nCREATE TABLE a (x INTEGER);\n",
			"no versions":    "CREATE TABLE a (x INTEGER);\n",
			"empty":          "",
			"baseline later": "-- version 1\nA;\n-- version 2 (baseline)\nB;\n",
			"baseline gap":   "-- version 4 (baseline)\nA;\n-- version 6\nB;\n",
		} {
			if m, err := parseMigrations(bad); err == nil {
				t.Errorf("%s: parseMigrations accepted it: %+v", name, m)
			}
			if _, err := Open(testCtx, Config{Path: filepath.Join(t.TempDir(), "x.db"), Schema: bad, MasterKey: storeTestKey}); err == nil {
				t.Errorf("%s: Open accepted the schema", name)
			}
		}
	})

	t.Run("parse splits sections", func(t *testing.T) {
		m, err := parseMigrations("-- header\n-- version 1\nA;\n  -- version 2  \nB;\nC;\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m[0].version != 1 || m[0].sql != "A;\n" || m[1].version != 2 || m[1].sql != "B;\nC;\n" {
			t.Fatalf("migrations %+v", m)
		}
	})

	t.Run("parse takes a baseline first", func(t *testing.T) {
		m, err := parseMigrations("-- header\n-- version 44 (baseline)\nA;\n-- version 45\nB;\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m[0].version != 44 || m[0].sql != "A;\n" || m[1].version != 45 || m[1].sql != "B;\n" {
			t.Fatalf("migrations %+v", m)
		}
	})

	migrations, err := parseMigrations(schema)
	if err != nil {
		t.Fatalf("schema.sql: %v", err)
	}
	n := len(migrations)
	t.Run("real schema", func(t *testing.T) {
		if n < 1 {
			t.Fatal("schema.sql has no migrations")
		}
		for i, m := range migrations {
			if m.version != i+1 || strings.TrimSpace(m.sql) == "" {
				t.Fatalf("migration %d: version %d, sql %q", i, m.version, m.sql)
			}
		}
	})

	path := filepath.Join(t.TempDir(), "idenplane.db")
	version := func(s *Store) (int, int) {
		t.Helper()
		var v, rows int
		if err := s.writerDB.QueryRow("SELECT max(version), count(*) FROM schema_version").Scan(&v, &rows); err != nil {
			t.Fatal(err)
		}
		return v, rows
	}

	t.Run("fresh database", func(t *testing.T) {
		s, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, rows := version(s); v != n || rows != 1 {
			t.Fatalf("schema_version %d (%d rows), want %d in one row", v, rows, n)
		}
		mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	})

	t.Run("reopen applies nothing and keeps data", func(t *testing.T) {
		s, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer s.Close()
		if v, rows := version(s); v != n || rows != 1 {
			t.Fatalf("schema_version after reopen %d (%d rows), want %d", v, rows, n)
		}
		got, err := s.GetRealm(testCtx, "acme")
		if err != nil {
			t.Fatalf("data after reopen: %v", err)
		}
		mustEqual(t, "realm after reopen", got, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))
	})

	t.Run("new migration applies alone", func(t *testing.T) {
		next := fmt.Sprintf("%s\n-- version %d\nCREATE TABLE migration_probe (x INTEGER);\nINSERT INTO migration_probe (x) VALUES (7);\n", schema, n+1)
		s, err := Open(testCtx, Config{Path: path, Schema: next, MasterKey: storeTestKey})
		if err != nil {
			t.Fatalf("open with a new migration: %v", err)
		}
		defer s.Close()
		if v, rows := version(s); v != n+1 || rows != 1 {
			t.Fatalf("schema_version %d (%d rows), want %d", v, rows, n+1)
		}
		var x, count int
		if err := s.writerDB.QueryRow("SELECT max(x), count(*) FROM migration_probe").Scan(&x, &count); err != nil || x != 7 || count != 1 {
			t.Fatalf("migration_probe x=%d count=%d (%v), want the one row", x, count, err)
		}
		if _, err := s.GetRealm(testCtx, "acme"); err != nil {
			t.Fatalf("data after migrating: %v", err)
		}
		// Back to N: the database is now newer than the binary.
	})

	t.Run("newer database refused", func(t *testing.T) {
		_, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey})
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("open of a database at version %d with a binary at %d: %v, want an error saying newer", n+1, n, err)
		}
	})

	t.Run("newer by schema_version row", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "newer.db")
		s := storeTestOpen(t, p, storeTestKey)
		if _, err := s.writerDB.Exec("UPDATE schema_version SET version = $1", n+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(testCtx, Config{Path: p, Schema: schema, MasterKey: storeTestKey}); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("open: %v, want an error mentioning newer", err)
		}
	})

	t.Run("failed migration rolls back", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "failed.db")
		storeTestOpen(t, p, storeTestKey).Close()
		broken := fmt.Sprintf("%s\n-- version %d\nCREATE TABLE half_done (x INTEGER);\nTHIS IS NOT SQL;\n", schema, n+1)
		if _, err := Open(testCtx, Config{Path: p, Schema: broken, MasterKey: storeTestKey}); err == nil {
			t.Fatal("a broken migration was applied")
		}
		s := storeTestOpen(t, p, storeTestKey)
		if v, _ := version(s); v != n {
			t.Fatalf("schema_version %d after a failed migration, want %d", v, n)
		}
		var tables int
		if err := s.writerDB.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").Scan(&tables); err != nil || tables != 0 {
			t.Fatalf("half of a failed migration stayed: %d tables (%v)", tables, err)
		}
	})
}

// Version 8 dates the passwords set before it from their users' creation,
// so that a maximum password age applies to them too.
func TestPasswordChangedAtMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 8)
	createRealmAtOldSchema(t, before, testRealm(testRealmID, "acme", 1000))
	withPassword := testUser("alice", testRealmID, "alice", "")
	withPassword.PasswordHash = "$argon2id$old"
	createUserAtOldSchema(t, before, withPassword) // PasswordChangedAt 0: stored as NULL
	dated := testUser("bob", testRealmID, "bob", "")
	dated.PasswordHash, dated.PasswordChangedAt = "$argon2id$old", 1_800_000_000_000
	createUserAtOldSchema(t, before, dated)
	createUserAtOldSchema(t, before, testUser("carol", testRealmID, "carol", ""))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	for id, want := range map[string]int64{"alice": withPassword.CreatedAt, "bob": 1_800_000_000_000, "carol": 0} {
		u, err := s.GetUser(testCtx, testRealmID, id)
		if err != nil || u.PasswordChangedAt != want {
			t.Errorf("%s: %+v %v, want password_changed_at %d", id, u, err, want)
		}
	}
}

// Version 13 leaves the realms that existed before it recording the
// default event types.
func TestEnabledEventTypesMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 13)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	r, err := s.GetRealm(testCtx, "acme")
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
	createUserAtOldSchema(t, before, testUser("alice", "r1", "alice", ""))
	// The columns a client had then: later versions add more.
	if _, err := before.w.ExecContext(testCtx, `INSERT INTO clients (id, realm_id, client_id, name, description, client_type,
		enabled, redirect_uris, web_origins, grant_types, require_consent, backchannel_logout_uri,
		backchannel_logout_session_required, created_at) VALUES ('web', 'r1', 'web-app', '', '', 'PUBLIC', TRUE, '[]', '[]', '[]',
		FALSE, '', FALSE, 0)`); err != nil {
		t.Fatal(err)
	}
	// The columns an auth request had then: later versions add more.
	if _, err := before.w.ExecContext(testCtx, `INSERT INTO auth_requests (id, realm_id, client_id, redirect_uri, scopes,
		state, nonce, response_type, response_mode, code_challenge, code_challenge_method, prompt, login_hint,
		created_at, expires_at) VALUES ('ar1', 'r1', 'web', 'https://app.test/cb', '[]', '', '', 'code', 'query', '', '',
		'[]', '', 1000, $1)`, int64(1)<<62); err != nil {
		t.Fatal(err)
	}
	if _, err := before.w.ExecContext(testCtx, `INSERT INTO pending_logins (auth_request_id, realm_id, user_id, action,
		browser_hash, remember_me, created_at) VALUES ('ar1', 'r1', 'alice', $1, $2, TRUE, 1000)`,
		ActionUpdatePassword, HashToken("browser")); err != nil {
		t.Fatal(err)
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	got, err := s.GetPendingLogin(testCtx, "r1", "ar1")
	if err != nil || got.UserID != "alice" || got.AMR != nil {
		t.Fatalf("pending login saved before version 12: %+v, %v; want alice's, with no amr", got, err)
	}
}

// Every start splits schema.sql into its sections.
func BenchmarkParseMigrations(b *testing.B) {
	schema := storeTestSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMigrations(schema); err != nil {
			b.Fatal(err)
		}
	}
}

// Version 31 keeps what the service providers stored before it had: logout
// messages by HTTP-POST, and signed requests required of those with a
// certificate.
func TestSAMLSPRequestsSignedMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 31)
	createRealmAtOldSchema(t, before, &Realm{ID: "r1", Name: "acme", CreatedAt: 1000})
	for _, sp := range []struct{ id, cert string }{{"with", "PEM"}, {"without", ""}} {
		if _, err := before.w.ExecContext(testCtx, `INSERT INTO saml_service_providers (id, realm_id, entity_id, name, enabled,
			acs_url, slo_url, certificate, encryption_certificate, encrypt_assertions, name_id_format, sign_assertions,
			sign_responses, attribute_statements, idp_initiated, created_at) VALUES ($1, 'r1', $2, 'SP', TRUE,
			'https://sp.test/acs', 'https://sp.test/slo', $3, '', FALSE, 'f', TRUE, TRUE, '{}', FALSE, 1000)`,
			sp.id, "https://"+sp.id+".test", sp.cert); err != nil {
			t.Fatal(err)
		}
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	for id, want := range map[string]bool{"with": true, "without": false} {
		sp, err := s.GetSAMLServiceProvider(testCtx, "r1", id)
		if err != nil {
			t.Fatal(err)
		}
		if sp.RequestsSigned != want || sp.SLOBinding != SLOBindingPOST {
			t.Fatalf("migrated SP %s: requestsSigned %t, sloBinding %q", id, sp.RequestsSigned, sp.SLOBinding)
		}
	}
}

// Version 36 gives the realms made before it no default language and no
// narrowed list: English by default, every language offered.
func TestRealmLocalesMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 36)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	r, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.DefaultLocale != "" || r.SupportedLocales != nil {
		t.Fatalf("migrated realm: default locale %q, supported %v; want none", r.DefaultLocale, r.SupportedLocales)
	}
	r.DefaultLocale, r.SupportedLocales = "fr", []string{"fr", "de"}
	if err := s.UpdateRealm(testCtx, r); err != nil {
		t.Fatal(err)
	}
	if r, err = s.GetRealm(testCtx, "acme"); err != nil || r.DefaultLocale != "fr" || !slices.Equal(r.SupportedLocales, []string{"fr", "de"}) {
		t.Fatalf("realm after update: %+v, %v", r, err)
	}
}

// Version 37 adds the authentication flows: a realm made before it has
// none and no client bound to one, and gets them as any realm does.
func TestAuthFlowsMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 37)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	if flows, err := s.ListAuthFlows(testCtx, "r1"); err != nil || len(flows) != 0 {
		t.Fatalf("flows of a migrated realm: %+v, %v", flows, err)
	}
	if _, err := s.FlowForClient(testCtx, "r1", ClientKindOIDC, "c1", "browser"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a migrated realm's client follows a flow: %v", err)
	}
	f := &AuthFlow{ID: "f1", RealmID: "r1", Alias: "browser", Usage: "browser", Steps: "[]", CreatedAt: 1, UpdatedAt: 1}
	if err := s.CreateAuthFlow(testCtx, f); err != nil {
		t.Fatal(err)
	}
}

// Version 40 gives the realms made before it no terms, and the tables of
// the email code and terms steps, empty.
func TestSignInStepsMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 40)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	createUserAtOldSchema(t, before, &User{ID: "u1", RealmID: "r1", Username: "alice", Enabled: true, CreatedAt: 1000})
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	r, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.TermsText != "" || r.TermsVersion != "" {
		t.Fatalf("migrated realm: terms %q version %q; want none", r.TermsText, r.TermsVersion)
	}
	r.TermsText, r.TermsVersion = "Be kind.", "v1"
	if err := s.UpdateRealm(testCtx, r); err != nil {
		t.Fatal(err)
	}
	if r, err = s.GetRealm(testCtx, "acme"); err != nil || r.TermsText != "Be kind." || r.TermsVersion != "v1" {
		t.Fatalf("realm after update: %+v, %v", r, err)
	}
	if _, err := s.TermsAcceptedAt(testCtx, "r1", "u1", "v1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("terms accepted before any acceptance: %v", err)
	}
	if _, err := s.LiveSignInEmailCode(testCtx, "r1", "f1", 1000); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an email code before any was sent: %v", err)
	}
}

// Version 44 removes the synthetic saml-idp clients; a realm whose
// saml-idp was disabled, which turned its SAML sign-in off, has its
// service providers disabled instead. An administrator's own clients stay.
func TestSAMLClientRemovedMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 44)
	for _, realm := range []struct {
		id, name string
		enabled  bool
	}{{"r1", "off", false}, {"r2", "on", true}} {
		createRealmAtOldSchema(t, before, testRealm(realm.id, realm.name, 1000))
		for _, c := range []struct{ id, clientID, name string }{
			{"saml-" + realm.id, "saml-idp", "SAML identity provider"}, {"own-" + realm.id, "wiki", "Wiki"}} {
			if err := before.CreateClient(testCtx, &Client{ID: c.id, RealmID: realm.id, ClientID: c.clientID, Name: c.name,
				ClientType: "public", Enabled: realm.enabled || c.clientID != "saml-idp", CreatedAt: 1000}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := before.w.ExecContext(testCtx, `INSERT INTO saml_service_providers (id, realm_id, entity_id, name, enabled,
			acs_url, slo_url, certificate, encryption_certificate, encrypt_assertions, name_id_format, sign_assertions,
			sign_responses, attribute_statements, idp_initiated, created_at) VALUES ($1, $2, 'https://sp.test', 'SP', TRUE,
			'https://sp.test/acs', '', '', '', FALSE, 'f', TRUE, TRUE, '{}', FALSE, 1000)`, "sp-"+realm.id, realm.id); err != nil {
			t.Fatal(err)
		}
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	for realm, spEnabled := range map[string]bool{"r1": false, "r2": true} {
		if _, err := s.GetClientByClientID(testCtx, realm, "saml-idp"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("realm %s: saml-idp after the migration: %v, want ErrNotFound", realm, err)
		}
		if c, err := s.GetClientByClientID(testCtx, realm, "wiki"); err != nil || !c.Enabled {
			t.Fatalf("realm %s: the administrator's client: %+v, %v", realm, c, err)
		}
		sp, err := s.GetSAMLServiceProvider(testCtx, realm, "sp-"+realm)
		if err != nil || sp.Enabled != spEnabled {
			t.Fatalf("realm %s: SP %+v, %v; want enabled %t", realm, sp, err, spEnabled)
		}
	}
}
