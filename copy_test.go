package main

// These tests run the real binary's copy: a realm with one of everything
// goes from SQLite to PostgreSQL and back, and comes out the same.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
)

// cliCopyRealm fills the realm acme of a server through the admin API and
// the token endpoint (a public client "cli" with the password grant):
// users with passwords, clients, a group tree, an
// identity provider with a sealed secret, a SAML service provider, SCIM
// mappings made within a millisecond, an organization with a member and
// an SSO connection, a non-human identity with a credential, sessions and
// refresh tokens of password grants, login and admin events. It returns
// the client secret of app.
func cliCopyRealm(t *testing.T, s *cliServer) string {
	t.Helper()
	post := func(path string, body any) []byte {
		t.Helper()
		return s.must(http.MethodPost, "/admin/realms/acme"+path, cliAPIKey, body, http.StatusCreated)
	}
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "acme", "smtpHost": "smtp.acme.test",
		"smtpPassword": "smtp-secret"}, http.StatusCreated)
	s.must(http.MethodPut, "/admin/realms/acme/events/config", cliAPIKey,
		map[string]any{"eventsEnabled": true, "eventsExpiration": 86400, "adminEventsEnabled": true}, http.StatusOK)
	for _, name := range []string{"alice", "bob", "carol"} {
		post("/users", map[string]any{"username": name, "email": name + "@acme.test", "firstName": strings.ToUpper(name[:1]) + name[1:],
			"password": "correct horse battery staple"})
	}
	secret := cliClientSecret(t, s, "acme", "app")
	post("/clients", map[string]any{"clientId": "cli", "clientType": "PUBLIC", "grantTypes": []string{"password", "refresh_token"}})
	var staff struct{ ID string }
	cliDecode(t, post("/groups", map[string]any{"name": "staff"}), &staff)
	post("/groups", map[string]any{"name": "ops", "parentId": staff.ID})
	post("/identity-providers", map[string]any{"alias": "corp", "providerType": "oidc", "clientId": "c", "clientSecret": "idp-secret",
		"authorizationUrl": "https://idp.test/auth", "tokenUrl": "https://idp.test/token", "jwksUrl": "https://idp.test/jwks",
		"issuer": "https://idp.test"})
	post("/saml-service-providers", map[string]any{"entityId": "https://sp.test/metadata", "name": "Wiki", "acsUrl": "https://sp.test/acs"})
	for _, name := range []string{"costCenter", "city", "badge"} {
		post("/custom-attributes", map[string]any{"name": name, "type": "string"})
	}
	post("/scim/attribute-mappings", map[string]any{"scimPath": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter",
		"target": "attributes.costCenter"})
	post("/scim/attribute-mappings", map[string]any{"scimPath": `addresses[type eq "work"].locality`, "target": "attributes.city"})
	post("/scim/attribute-mappings", map[string]any{"scimPath": "title", "target": "attributes.badge"})
	post("/organizations", map[string]any{"slug": "acme-corp", "name": "Acme Corp", "domains": []any{map[string]any{"name": "acme.test"}}})
	post("/organizations/acme-corp/members", map[string]any{"userId": cliUserID(t, s, "alice"), "role": "owner"})
	post("/organizations/acme-corp/sso-connections", map[string]any{"identityProvider": "corp", "domain": "acme.test"})
	var bot struct{ ID string }
	cliDecode(t, post("/nhi", map[string]any{"kind": "workload", "name": "worker"}), &bot)
	post("/nhi/"+bot.ID+"/credentials", map[string]any{"type": "client_secret"})

	if status, body := cliClientToken(t, s, "acme", "app", secret); status != http.StatusOK {
		t.Fatalf("client credentials: %d %s", status, body)
	}
	if status, body := cliPasswordGrant(t, s, "bob", "correct horse battery staple"); status != http.StatusOK {
		t.Fatalf("password grant: %d %s", status, body)
	}
	if status, body := cliPasswordGrant(t, s, "bob", "wrong"); status < 400 || status >= 500 {
		t.Fatalf("password grant with a wrong password: %d %s", status, body)
	}
	return secret
}

// cliPasswordGrant signs a user of acme in at the token endpoint, with
// the public client cli.
func cliPasswordGrant(t *testing.T, s *cliServer, username, password string) (int, string) {
	t.Helper()
	status, body := s.oidcPost("acme", "token", "cli", "", url.Values{"grant_type": {"password"}, "username": {username},
		"password": {password}, "scope": {"openid"}})
	return status, string(body)
}

func cliDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// cliUserID is the ID of a user of acme.
func cliUserID(t *testing.T, s *cliServer, username string) string {
	t.Helper()
	var list cliUserList
	cliDecode(t, s.must(http.MethodGet, "/admin/realms/acme/users?exact=true&username="+username, cliAPIKey, nil, http.StatusOK), &list)
	if len(list.Users) != 1 {
		t.Fatalf("user %s: %d found", username, len(list.Users))
	}
	return list.Users[0].ID
}

// cliCopyTOTP gives carol a TOTP authenticator, through the store: its
// secret is sealed with the master key.
func cliCopyTOTP(t *testing.T, db string, key []byte, userID string) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: db, Schema: schema, MasterKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	realm, err := st.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	c := &store.Credential{ID: "totp-carol", RealmID: realm.ID, UserID: userID, Type: store.CredentialTOTP, Label: "phone",
		Secret: []byte("carol's totp secret"), CreatedAt: 1_800_000_000_000}
	if err := st.BeginCredential(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if err := st.ConfirmCredential(context.Background(), realm.ID, c.ID, 1, nil, 1_800_000_000_000); err != nil {
		t.Fatal(err)
	}
}

// cliCopyTable is the line of a table with rows in copy's report: its
// name, rows and checksum.
var cliCopyTable = regexp.MustCompile(`(?m)^  ([a-z_0-9]+) +([0-9]+)  ([0-9a-f]{16})$`)

func cliCopyTables(t *testing.T, stdout string) map[string]string {
	t.Helper()
	tables := map[string]string{}
	for _, m := range cliCopyTable.FindAllStringSubmatch(stdout, -1) {
		tables[m[1]] = m[2] + " " + m[3]
	}
	empty := regexp.MustCompile(`(?m)^  and ([0-9]+) tables empty in both$`).FindStringSubmatch(stdout)
	if len(tables) < 20 || empty == nil {
		t.Fatalf("copy's report:\n%s", stdout)
	}
	tables["(empty)"] = empty[1]
	return tables
}

// cliCount counts the rows of a table of a SQLite file.
func cliCount(t *testing.T, db, table string) int {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A realm with one of everything, its sessions and events, goes from
// SQLite to PostgreSQL and back with copy: its exports with users and
// secrets (which the key opens) are the same bytes all along, every table
// has the same rows and checksum in both copies, the master key goes with
// the copy, and a server on the PostgreSQL copy signs tokens with the
// realm's sealed key.
func TestCLICopyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src.db"), filepath.Join(dir, "back.db")
	pg := pgtest.Database(t)
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}

	s := cliStartServer(t, src, env...)
	secret := cliCopyRealm(t, s)
	carol := cliUserID(t, s, "carol")
	s.stopGracefully()
	keyFile := src + ".key"
	hexKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(strings.TrimSpace(string(hexKey)))
	cliCopyTOTP(t, src, key, carol)
	for _, table := range []string{"user_sessions", "refresh_tokens", "login_events", "admin_events", "nhi_credentials",
		"saml_service_providers", "scim_attribute_mappings", "organization_sso_connections", "user_credentials"} {
		if cliCount(t, src, table) == 0 {
			t.Fatalf("the source has no rows in %s", table)
		}
	}

	export := func(db string, extra ...string) string {
		t.Helper()
		res := cliRun(t, dir, cliEnv(extra...), "", "export", "--db", db, "--realm", "acme", "--include-users", "--include-secrets")
		if res.code != 0 {
			t.Fatalf("export %s: code %d, stderr:\n%s", store.Redact(db), res.code, res.stderr)
		}
		return res.stdout
	}
	want := export(src)
	for _, secret := range []string{`"smtpPassword": "smtp-secret"`, `"clientSecret": "idp-secret"`, "$argon2id$", `"entityId": "https://sp.test/metadata"`,
		`"scimPath": "title"`, `"slug": "acme-corp"`} {
		if !strings.Contains(want, secret) {
			t.Fatalf("the export lacks %s:\n%s", secret, want)
		}
	}

	there := cliRun(t, dir, cliEnv(), "", "copy", "--from", src, "--to", pg, "--batch-size", "2")
	if there.code != 0 {
		t.Fatalf("copy to PostgreSQL: code %d\nstdout:\n%s\nstderr:\n%s", there.code, there.stdout, there.stderr)
	}
	if !regexp.MustCompile(`(?m)^copying users: 2/[0-9]+\n(copying users: [0-9]+/[0-9]+\n)*copying users: ([0-9]+)/([0-9]+)\n`).MatchString(there.stderr) ||
		!strings.Contains(there.stderr, "--master-key-file "+keyFile) || !strings.Contains(there.stdout, "the master key opened all") {
		t.Errorf("copy's output:\nstdout:\n%s\nstderr:\n%s", there.stdout, there.stderr)
	}
	if got := export(pg, "IDENPLANE_MASTER_KEY_FILE="+keyFile); got != want {
		t.Fatalf("export of the PostgreSQL copy differs:\n%s\nwant:\n%s", got, want)
	}

	home := cliRun(t, dir, cliEnv("IDENPLANE_MASTER_KEY_FILE="+keyFile), "", "copy", "--from", pg, "--to", back)
	if home.code != 0 {
		t.Fatalf("copy back to SQLite: code %d\nstdout:\n%s\nstderr:\n%s", home.code, home.stdout, home.stderr)
	}
	if got := export(back); got != want {
		t.Fatalf("export of the copy back differs:\n%s\nwant:\n%s", got, want)
	}
	if mode := cliMode(t, back+".key"); mode != 0o600 {
		t.Errorf("the copy's key file has mode %v", mode)
	}
	if got, _ := os.ReadFile(back + ".key"); !bytes.Equal(got, hexKey) {
		t.Errorf("the copy's key file holds %q, want the source's %q", got, hexKey)
	}
	a, b := cliCopyTables(t, there.stdout), cliCopyTables(t, home.stdout)
	if len(a) != len(b) {
		t.Errorf("%d tables reported there, %d back", len(a), len(b))
	}
	for table, rows := range a {
		if b[table] != rows {
			t.Errorf("table %s: %s there, %s back", table, rows, b[table])
		}
	}
	for _, table := range []string{"user_sessions", "login_events", "admin_events", "user_credentials"} {
		if n := cliCount(t, back, table); n != cliCount(t, src, table) {
			t.Errorf("%s: %d rows back, want %d", table, n, cliCount(t, src, table))
		}
	}
	st, err := store.Open(context.Background(), store.Config{Path: back, Schema: schema, MasterKey: key})
	if err != nil {
		t.Fatal(err)
	}
	realm, err := st.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	creds, err := st.Credentials(context.Background(), realm.ID, carol)
	st.Close()
	if err != nil || len(creds) != 1 || string(creds[0].Secret) != "carol's totp secret" {
		t.Fatalf("carol's TOTP after the round trip: %v %v", creds, err)
	}

	// Copy fills an empty database only, and a key file that is not the
	// source's stays as it is.
	again := cliRun(t, dir, cliEnv(), "", "copy", "--from", src, "--to", back)
	if again.code != 1 || !strings.Contains(again.stderr, "not empty") {
		t.Errorf("copy into a full database: code %d, stderr:\n%s", again.code, again.stderr)
	}
	if got := export(back); got != want {
		t.Error("a refused copy changed the target")
	}
	other := filepath.Join(dir, "other.db")
	if err := os.WriteFile(other+".key", []byte(cliMasterKey(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := cliRun(t, dir, cliEnv(), "", "copy", "--from", src, "--to", other)
	if refused.code != 1 || !strings.Contains(refused.stderr, "holds another master key") {
		t.Errorf("copy beside another key: code %d, stderr:\n%s", refused.code, refused.stderr)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("a refused copy made the target")
	}

	// A server on the PostgreSQL copy opens its sealed signing key.
	s = cliStartServer(t, pg, append(env, "IDENPLANE_MASTER_KEY_FILE="+keyFile)...)
	if status, body := cliClientToken(t, s, "acme", "app", secret); status != http.StatusOK {
		t.Errorf("client credentials on the PostgreSQL copy: %d %s", status, body)
	}
	s.stopGracefully()
}
