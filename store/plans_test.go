package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store/pgtest"
)

// A code exchange finds the client's session among the SSO session's
// children, sorting those few, never among the realm's live sessions.
func TestSQLiteClientSessionPlan(t *testing.T) {
	s := newSQLiteTestStore(t)
	plan := sqlitePlan(t, s.readerDB, "SELECT s.id FROM user_sessions s WHERE "+clientSessionOfWhere, "r", "u", "p", "c", 1)
	if text := strings.Join(plan, "; "); !strings.HasPrefix(text, "SEARCH s USING INDEX user_sessions_parent (parent_id=?)") {
		t.Fatalf("plan %q, want a search of the SSO session's children", text)
	}
}

// TestSQLiteQueryPlans pins the indexes of the hot lookups: a plan that
// scans a table or sorts in a temporary tree would turn a page of a large
// realm from milliseconds into a full read.
func TestSQLiteQueryPlans(t *testing.T) {
	s := newSQLiteTestStore(t)
	for _, c := range []struct {
		name, query, index string
	}{
		{"account deletion", "DELETE FROM users WHERE id = $1", "sqlite_autoindex_users_1"},
		{"logout", "DELETE FROM user_sessions WHERE realm_id = $1 AND id = $2", "sqlite_autoindex_user_sessions_1"},
		{"user page", "SELECT id FROM users WHERE realm_id = $1 AND service_account_client_id IS NULL ORDER BY username LIMIT 50 OFFSET 0", "users_people"},
		{"user count", "SELECT count(*) FROM users WHERE realm_id = $1 AND service_account_client_id IS NULL", "users_people"},
		{"user by username", "SELECT id FROM users WHERE realm_id = $1 AND username = $2", "users_realm_username"},
		{"user by email", "SELECT id FROM users WHERE realm_id = $1 AND email = $2 AND email <> ''", "users_realm_email"},
		{"service account", "SELECT id FROM users WHERE service_account_client_id = $1", "users_service_account"},
		// SCIM's filters on the folded names and on addresses.
		{"users by folded given name", "SELECT count(*) FROM users u WHERE u.realm_id = $1 AND u.service_account_client_id IS NULL AND u.first_name_fold = $2", "users_realm_first_name_fold"},
		{"users by folded family name", "SELECT count(*) FROM users u WHERE u.realm_id = $1 AND u.service_account_client_id IS NULL AND u.last_name_fold = $2", "users_realm_last_name_fold"},
		{"groups by folded name", "SELECT count(*) FROM realm_groups g WHERE g.realm_id = $1 AND g.name_fold = $2", "realm_groups_name_fold"},
		{"users by address locality", "SELECT v.user_id FROM scim_user_addresses v WHERE v.realm_id = $1 AND (v.type = $2 AND v.locality = $3)", "scim_user_addresses_locality"},
		{"users by address country", "SELECT v.user_id FROM scim_user_addresses v WHERE v.realm_id = $1 AND v.country = $2", "scim_user_addresses_country"},
		{"client by clientId", "SELECT id FROM clients WHERE realm_id = $1 AND client_id = $2", "clients_realm_client_id"},
		{"realm role by name", "SELECT id FROM roles WHERE realm_id = $1 AND client_id IS NULL AND name = $2", "roles_realm_name"},
		{"user's groups", "SELECT group_id FROM group_members WHERE user_id = $1", "group_members_user"},
		{"admin events page", "SELECT id FROM admin_events WHERE realm_id = $1 ORDER BY time DESC, id DESC LIMIT 100", "admin_events_realm_time"},
		{"user's second factors", "SELECT DISTINCT type FROM user_credentials WHERE realm_id = $1 AND user_id = $2 AND confirmed ORDER BY type", "user_credentials_user"},
		{"user's WebAuthn credentials", "SELECT id FROM user_credentials WHERE user_id = $1 AND type = $2 AND realm_id = $3 AND confirmed", "user_credentials_user"},
		{"WebAuthn credential by credential ID", "SELECT id FROM user_credentials WHERE realm_id = $1 AND credential_id = $2 AND type = $3", "user_credentials_webauthn_id"},
		// The sweeps: each deletes by expiry through an index, not a scan.
		{"expired WebAuthn ceremonies", "DELETE FROM webauthn_ceremonies WHERE expires_at <= $1", "webauthn_ceremonies_expiry"},
		{"expired sessions", "DELETE FROM user_sessions WHERE expires_at <= $1", "user_sessions_expiry"},
		{"expired refresh tokens", "DELETE FROM refresh_tokens WHERE expires_at <= $1", "refresh_tokens_expiry"},
		{"expired logout token IDs", "DELETE FROM logout_token_ids WHERE expires_at <= $1", "logout_token_ids_expiry"},
		{"expired access token revocations", "DELETE FROM revoked_access_tokens WHERE expires_at <= $1", "revoked_access_tokens_expiry"},
		{"expired auth requests", "DELETE FROM auth_requests WHERE expires_at <= $1", "auth_requests_expiry"},
		{"expired action tokens", "DELETE FROM action_tokens WHERE expires_at <= $1", "action_tokens_expiry"},
		{"expired device authorizations", "DELETE FROM device_authorizations WHERE expires_at <= $1", "device_authorizations_expiry"},
		{"expired admin token revocations", "DELETE FROM admin_token_revocations WHERE expires_at < $1", "admin_token_revocations_expiry"},
		{"old admin login failures", "DELETE FROM admin_login_failures WHERE failed_at <= $1", "admin_login_failures_time"},
		{"admin login failures of a key", "DELETE FROM admin_login_failures WHERE key_hash = $1", "admin_login_failures_key"},
		{"expired login events", "DELETE FROM login_events WHERE realm_id = $1 AND time < $2", "login_events_realm_time"},
		{"expired admin events", "DELETE FROM admin_events WHERE realm_id = $1 AND time < $2", "admin_events_realm_time"},
		{"login events page", "SELECT id FROM login_events WHERE realm_id = $1 ORDER BY time DESC, id DESC LIMIT 100", "login_events_realm_time"},
		{"due account deletions", `SELECT d.user_id, d.realm_id, d.requested_at, d.delete_at, r.name
			FROM account_deletions d JOIN realms r ON r.id = d.realm_id
			WHERE d.delete_at <= $1 ORDER BY d.delete_at, d.user_id LIMIT $2`, "account_deletions_due"},
		{"login failures of a user", "SELECT failures FROM login_failures WHERE realm_id = $1 AND user_id = $2", "sqlite_autoindex_login_failures_1"},
		{"locked users page", "SELECT user_id FROM login_failures WHERE realm_id = $1 AND locked_until > $2 ORDER BY locked_until DESC, user_id DESC LIMIT 50", "login_failures_locked"},
		// The token endpoints' lookups that no cache covers: refresh, revocation, sessions.
		// Impersonations: the mark of a session's login events, the account page's list.
		{"impersonation of a session", "SELECT id FROM impersonations WHERE session_id = $1", "impersonations_session"},
		{"user's impersonations", "SELECT id FROM impersonations WHERE realm_id = $1 AND user_id = $2 ORDER BY started_at DESC, id DESC LIMIT 20", "impersonations_user"},
		{"refresh token by hash", "SELECT id FROM refresh_tokens WHERE token_hash = $1 AND realm_id = $2", "sqlite_autoindex_refresh_tokens_2"},
		{"refresh token rotation", rotateRefreshTokenSQL, "sqlite_autoindex_refresh_tokens_2"},
		// At every start, the rows not folded yet (none, after the first).
		{"users not folded", "SELECT id, first_name, last_name FROM users WHERE first_name_fold IS NULL OR last_name_fold IS NULL LIMIT 1000", "users_unfolded"},
		{"groups not folded", "SELECT id, name, '' FROM realm_groups WHERE name_fold IS NULL LIMIT 1000", "realm_groups_unfolded"},
		{"refresh tokens of a session", "SELECT id FROM refresh_tokens WHERE session_id = $1", "refresh_tokens_session"},
		{"access token revoked", "SELECT count(*) FROM revoked_access_tokens WHERE token_id = $1", "sqlite_autoindex_revoked_access_tokens_1"},
		{"session by ID", "SELECT id FROM user_sessions WHERE realm_id = $1 AND id = $2", "sqlite_autoindex_user_sessions_1"},
		{"active signing key", "SELECT id FROM signing_keys WHERE realm_id = $1 AND status = 'active'", "signing_keys_"},
		{"client's linked scopes", `SELECT c.id FROM client_scopes c JOIN client_scope_links l ON l.scope_id = c.id
			WHERE c.realm_id = $1 AND l.client_id = $2 AND l.kind = $3`, "sqlite_autoindex_client_scope_links_1"},
		{"sign-in flow of a requester", signInFlowOfSQL, "signin_flows_requester"},
		// Session risk: the refresh's hook reads a profile by its key; a
		// sign-in asks whether its user owes a step-up; a refused refresh
		// asks why.
		{"session risk of a session", "SELECT session_id FROM session_risk WHERE session_id = $1 AND realm_id = $2", "sqlite_autoindex_session_risk_1"},
		{"step-up owed", "SELECT session_id FROM session_risk WHERE user_id = $1 AND step_up_owed = TRUE AND realm_id = $2 ORDER BY updated_at DESC LIMIT 1", "session_risk_user"},
		{"refused refresh token", "SELECT action FROM risk_refused_tokens WHERE token_hash = $1 AND realm_id = $2", "sqlite_autoindex_risk_refused_tokens_1"},
		{"expired token refusals", "DELETE FROM risk_refused_tokens WHERE expires_at <= $1", "risk_refused_tokens_expiry"},
		{"session risk page", "SELECT session_id FROM session_risk WHERE realm_id = $1 ORDER BY updated_at DESC, session_id DESC LIMIT 50", "session_risk_realm"},
		{"session risk events page", "SELECT id FROM session_risk_events WHERE realm_id = $1 ORDER BY created_at DESC, id DESC LIMIT 50", "session_risk_events_realm"},
		{"password history", "SELECT password_hash FROM password_history WHERE realm_id = $1 AND user_id = $2 ORDER BY seq DESC LIMIT 5", "sqlite_autoindex_password_history_1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := make([]any, strings.Count(c.query, "$"))
			for i := range args {
				args[i] = "x"
			}
			plan := sqlitePlan(t, s.readerDB, c.query, args...)
			text := strings.Join(plan, "; ")
			if !strings.Contains(text, "INDEX "+c.index) || strings.Contains(text, "TEMP B-TREE") {
				t.Fatalf("plan %q, want a search of index %s without a temporary sort", text, c.index)
			}
			// A delete also looks up the rows that refer to the deleted
			// ones (ON DELETE CASCADE): those lookups must use indexes too,
			// except in the few tables whose rows live minutes.
			for _, step := range plan {
				table, scan := strings.CutPrefix(step, "SCAN ")
				// A partial index holds only the rows the query wants.
				partial := slices.Contains([]string{"users_unfolded", "realm_groups_unfolded"}, c.index) &&
					strings.HasSuffix(step, "USING INDEX "+c.index)
				if scan && !partial && !slices.Contains([]string{"webauthn_ceremonies", "device_authorizations"}, table) {
					t.Fatalf("plan %q reads all of %s", text, table)
				}
			}
		})
	}
}

// TestSQLiteSCIMFilterPlans pins the plans of SCIM's substring filters
// (co, sw, ew) on the attributes clients search by, as the store builds
// them: each reads the rows a trigram table found (a MATCH of FTS5,
// whose rowids the query lists in a JSON array) by rowid, or a range of
// a B-tree index, never the realm's users one by one.
func TestSQLiteSCIMFilterPlans(t *testing.T) {
	s := newSQLiteTestStore(t)
	cmp := func(op, field, text string) *Match { return &Match{Op: op, Field: field, Value: text} }
	has := func(attr string, sub *Match) *Match { return &Match{Op: MatchHas, Attr: attr, Subs: []*Match{sub}} }
	emailsOf := func(op, text string) *Match {
		m := has("emails", cmp(op, "fold", text))
		m.Also = "email"
		return m
	}
	const (
		users  = "SEARCH u USING INTEGER PRIMARY KEY (rowid=?)"
		emails = "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)" // the users row's email, beside SCIM's
		values = "SEARCH v USING INTEGER PRIMARY KEY (rowid=?)"
	)
	for _, table := range []string{"users_trigrams", "scim_user_values_trigrams"} {
		query := "SELECT rowid FROM " + table + " WHERE " + table + " MATCH $1 LIMIT $2"
		if plan := queryStrings(t, s.readerDB, "EXPLAIN QUERY PLAN "+query, "x", 1); len(plan) != 1 ||
			!strings.Contains(plan[0][3], "VIRTUAL TABLE INDEX 0:M") {
			t.Errorf("plan %q of %s, want a MATCH of the index", plan, query)
		}
	}
	for _, c := range []struct {
		name  string
		where *Match
		want  []string // steps of the plan, each found in one of its steps
	}{
		{"userName co", cmp(MatchCo, "username", "r054321"), []string{users}},
		{"userName sw", cmp(MatchSw, "username", "user05432"), []string{"INDEX users_people (realm_id=? AND username>? AND username<?)"}},
		{"userName ew", cmp(MatchEw, "username", "054321"), []string{users}},
		{"emails co", emailsOf(MatchCo, "r054321@"), []string{values, emails}},
		{"emails sw", emailsOf(MatchSw, "user054321@"), []string{"INDEX scim_user_values_fold (realm_id=? AND attr=? AND fold>? AND fold<?)",
			"INDEX users_realm_email (realm_id=? AND email>? AND email<?)"}},
		{"emails ew", emailsOf(MatchEw, "054321@example.com"), []string{values, emails}},
		{"emails.value co", has("emails", cmp(MatchCo, "fold", "r054321@")), []string{values}},
		{"displayName co", has("displayname", cmp(MatchCo, "fold", "user 054321")), []string{values}},
		{"displayName sw", has("displayname", cmp(MatchSw, "fold", "bench user 05432")),
			[]string{"INDEX scim_user_values_fold (realm_id=? AND attr=? AND fold>? AND fold<?)"}},
		{"displayName ew", has("displayname", cmp(MatchEw, "fold", "ser 054321")), []string{values}},
		{"name.familyName co", cmp(MatchCo, "last_name", "son 54321"), []string{users}},
		{"name.familyName sw", cmp(MatchSw, "last_name", "person 5432"),
			[]string{"INDEX users_realm_last_name_fold (realm_id=? AND last_name_fold>? AND last_name_fold<?)"}},
		{"name.familyName ew", cmp(MatchEw, "last_name", "on 54321"), []string{users}},
		{"name.givenName co", cmp(MatchCo, "first_name", "ench"), []string{users}},
		{"externalId co", has("externalid", cmp(MatchCo, "value", "t-54321")), []string{values}},
		{"externalId sw", has("externalid", cmp(MatchSw, "value", "ext-5432")),
			[]string{"INDEX scim_user_values_exact (realm_id=? AND attr=? AND value>? AND value<?)"}},
		{"externalId ew", has("externalid", cmp(MatchEw, "value", "-54321")), []string{values}},
		{"co and eq", &Match{Op: MatchAnd, Subs: []*Match{cmp(MatchEq, "enabled", "x"), cmp(MatchCo, "username", "r054321")}},
			[]string{users}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := s.scimUsersMatch(testCtx, testRealmID)
			from, where, err := b.filter(SCIMQuery{Where: c.where}, scimUsersFrom, scimUsersJoin, scimUsersScope)
			if err != nil {
				t.Fatal(err)
			}
			for _, query := range []string{"SELECT count(*) FROM " + from + " WHERE " + where,
				"SELECT u.id FROM " + from + " WHERE " + where + " ORDER BY " + userOrder(c.where) + " ASC LIMIT 100 OFFSET 0"} {
				plan := sqlitePlan(t, s.readerDB, query, b.args...)
				text := strings.Join(plan, "; ")
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("plan %q\nof %s\nwants %q", text, query, w)
					}
				}
				// The only scans: the rows a trigram table found, and the
				// owners a value condition found (m).
				for _, step := range plan {
					if strings.HasPrefix(step, "SCAN ") && step != "SCAN m" && !strings.HasPrefix(step, "SCAN json_each VIRTUAL TABLE") {
						t.Errorf("plan %q\nof %s\nscans: %s", text, query, step)
					}
				}
			}
		})
	}
}

// TestPostgresSCIMFilterPlans: on PostgreSQL with pg_trgm (the test
// server's), the same filters' LIKE comparisons read the trigram indexes
// of version 54, once the planner knows the tables' sizes.
func TestPostgresSCIMFilterPlans(t *testing.T) {
	pgSchema, err := os.ReadFile(filepath.Join("..", "schema_postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(testCtx, Config{Path: pgtest.Database(t), PostgresSchema: string(pgSchema), MasterKey: storeTestKey})
	if err != nil {
		t.Fatalf("open PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	mustCreateRealm(t, s, testRealm(testRealmID, "acme", 1000))
	// 20,000 users, enough for an index to pay (the planner reads a few
	// thousand rows whole), and the values PutSCIMUser would write.
	if _, err := s.w.ExecContext(testCtx, `INSERT INTO users (id, realm_id, username, email, first_name, last_name, name_search,
			enabled, email_verified, require_password_reset, created_at, first_name_fold, last_name_fold)
		SELECT 'u' || i, $1, 'user' || lpad(i::text, 6, '0'), 'user' || lpad(i::text, 6, '0') || '@example.com', 'Bench',
			'Person ' || i, 'bench person ' || i, TRUE, TRUE, FALSE, 1, 'bench', 'person ' || i FROM generate_series(0, 19999) i`,
		testRealmID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(testCtx, `INSERT INTO scim_user_values (user_id, realm_id, attr, value, fold, type, is_primary)
		SELECT id, realm_id, 'emails', email, email, 'work', TRUE FROM users
		UNION ALL SELECT id, realm_id, 'externalid', 'Ext-' || substr(id, 2), 'ext-' || substr(id, 2), '', FALSE FROM users`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(testCtx, "ANALYZE users; ANALYZE scim_user_values"); err != nil {
		t.Fatal(err)
	}
	cmp := func(op, field, text string) *Match { return &Match{Op: op, Field: field, Value: text} }
	has := func(attr string, sub *Match) *Match { return &Match{Op: MatchHas, Attr: attr, Subs: []*Match{sub}} }
	emails := has("emails", cmp(MatchCo, "fold", "r004321@"))
	emails.Also = "email"
	for _, c := range []struct {
		name  string
		where *Match
		want  []string
	}{
		{"userName co", cmp(MatchCo, "username", "r004321"), []string{"users_username_trigrams"}},
		{"userName ew", cmp(MatchEw, "username", "004321"), []string{"users_username_trigrams"}},
		{"emails co", emails, []string{"scim_user_values_fold_trigrams", "users_email_trigrams"}},
		{"name.familyName co", cmp(MatchCo, "last_name", "son 4321"), []string{"users_last_name_fold_trigrams"}},
		{"externalId co", has("externalid", cmp(MatchCo, "value", "t-4321")), []string{"scim_user_values_value_trigrams"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := s.scimUsersMatch(testCtx, testRealmID)
			from, where, err := b.filter(SCIMQuery{Where: c.where}, scimUsersFrom, scimUsersJoin, scimUsersScope)
			if err != nil {
				t.Fatal(err)
			}
			query := "SELECT count(*) FROM " + from + " WHERE " + where
			var plan []string
			for _, row := range queryStrings(t, s.readerDB, "EXPLAIN "+query, b.args...) {
				plan = append(plan, row[0])
			}
			text := strings.Join(plan, "\n")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("plan of %s\n%s\nwants index %s", query, text, w)
				}
			}
		})
	}
}

// sqlitePlan is the detail column of SQLite's EXPLAIN QUERY PLAN of query,
// a row a step.
func sqlitePlan(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(testCtx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
