package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/authz"
)

// testArgon2Hash is a valid argon2id hash of a password no test types.
const testArgon2Hash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2wqRVv4D0CWE2dJ+y3i9r0Q6rYfXhmTb8CFL/1HJxyc"

const (
	exportTestSMTPPassword = "smtp-s3cret-pw"
	exportTestProviderKey  = "SG.provider-secret-key"
	exportTestUserPassword = "Correct-horse-battery-9" // meets the realm's policy below
)

// exportTestRealmBody is a realm with every field away from its default.
func exportTestRealmBody(name string) map[string]any {
	return map[string]any{
		"name": name, "displayName": "Acme Corp", "enabled": false,
		"accessTokenLifespan": 600, "refreshTokenLifespan": 3600, "offlineTokenLifespan": 86400,
		"smtpHost": "smtp.acme.test", "smtpPort": 2525, "smtpUser": "mailer", "smtpPassword": exportTestSMTPPassword,
		"smtpFrom": "noreply@acme.test", "smtpSecure": true,
		"emailProvider":       "sendgrid",
		"emailProviderConfig": map[string]any{"apiKey": exportTestProviderKey, "region": "eu", "sandbox": true},
		"passwordMinLength":   12, "passwordRequireUppercase": true, "passwordRequireLowercase": true,
		"passwordRequireDigits": true, "passwordRequireSpecialChars": true,
		"passwordHistoryCount": 3, "passwordMaxAgeDays": 90,
		"bruteForceEnabled": false, "maxLoginFailures": 7, "lockoutDuration": 600, "failureResetTime": 3600,
		"permanentLockoutAfter": 20, "registrationAllowed": false, "requireEmailVerification": true,
		"mfaRequired": true, "eventsEnabled": true, "eventsExpiration": 3600, "adminEventsEnabled": true,
		"termsText": "Be kind.\n\nNo spam.", "termsVersion": "2026-01",
		"themeName": "idenplane-dark",
		"theme": map[string]any{
			"primaryColor": "#112233", "backgroundColor": "#fafafa", "logoUrl": "https://acme.test/logo.png",
			"fontFamily": "Inter, sans-serif",
		},
		"loginTheme": "high-contrast", "accountTheme": "idenplane", "emailTheme": "idenplane-dark",
	}
}

// exportTestSetup creates realm acme with three users, alice having a
// password, and returns alice's id.
func exportTestSetup(t *testing.T, s *testServer) string {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms", exportTestRealmBody("acme"))
	mustStatus(t, r, http.StatusCreated)
	alice := s.createUser("acme", map[string]any{
		"username": "alice", "email": "Alice@Acme.test", "firstName": "Alice", "lastName": "Liddell",
		"password": exportTestUserPassword,
	})
	s.createUser("acme", map[string]any{"username": "bob", "email": "bob@acme.test", "enabled": false, "emailVerified": true})
	s.createUser("acme", map[string]any{"username": "carol", "requirePasswordReset": true, "firstName": "Carol"})
	return alice["id"].(string)
}

// exportTestGet exports a realm and returns the raw body and its decoded form.
func exportTestGet(t *testing.T, s *testServer, realm, query string) ([]byte, map[string]any) {
	t.Helper()
	path := "/admin/realms/" + realm + "/export"
	if query != "" {
		path += "?" + query
	}
	r := s.admin(http.MethodGet, path, nil)
	mustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("export Content-Type %q", ct)
	}
	return r.Body, r.object(t)
}

func exportTestUsers(t *testing.T, export map[string]any) []map[string]any {
	t.Helper()
	raw, ok := export["users"].([]any)
	if !ok {
		t.Fatalf("export has no users array: %v", export["users"])
	}
	out := make([]map[string]any, len(raw))
	for i, u := range raw {
		out[i] = u.(map[string]any)
	}
	return out
}

func TestRealmExportSecretsAndUsers(t *testing.T) {
	s := newTestServer(t)
	aliceID := exportTestSetup(t, s)

	t.Run("default", func(t *testing.T) {
		r := s.admin(http.MethodGet, "/admin/realms/acme/export", nil)
		mustStatus(t, r, http.StatusOK)
		if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="realm-acme.json"` {
			t.Fatalf("Content-Disposition %q", cd)
		}
		raw, e := r.Body, r.object(t)
		if e["formatVersion"] != float64(1) || e["name"] != "acme" || e["displayName"] != "Acme Corp" || e["smtpPort"] != float64(2525) {
			t.Fatalf("export %s", raw)
		}
		if _, ok := e["users"]; ok {
			t.Fatalf("default export includes users: %s", raw)
		}
		if e["smtpPassword"] != redacted {
			t.Fatalf("smtpPassword %v, want redacted", e["smtpPassword"])
		}
		cfg := e["emailProviderConfig"].(map[string]any)
		if cfg["apiKey"] != redacted || cfg["region"] != "eu" || cfg["sandbox"] != true {
			t.Fatalf("emailProviderConfig %v, want apiKey redacted and the rest as is", cfg)
		}
		for _, secret := range []string{exportTestSMTPPassword, exportTestProviderKey, "$argon2id$"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Fatalf("default export contains %q", secret)
			}
		}
	})

	t.Run("includeUsers", func(t *testing.T) {
		raw, e := exportTestGet(t, s, "acme", "includeUsers=true")
		users := exportTestUsers(t, e)
		if len(users) != 3 || users[0]["username"] != "alice" || users[1]["username"] != "bob" || users[2]["username"] != "carol" {
			t.Fatalf("users %v, want alice, bob, carol", users)
		}
		if users[0]["id"] != aliceID || users[0]["email"] != "alice@acme.test" || users[1]["enabled"] != false ||
			users[1]["emailVerified"] != true || users[2]["requirePasswordReset"] != true {
			t.Fatalf("users %v", users)
		}
		for _, u := range users {
			if _, ok := u["credentials"]; ok {
				t.Fatalf("user %v has credentials without includeSecrets", u["username"])
			}
		}
		for _, secret := range []string{exportTestSMTPPassword, exportTestProviderKey, "$argon2id$", "password_hash", "passwordHash"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Fatalf("export with users but no secrets contains %q", secret)
			}
		}
		if e["smtpPassword"] != redacted {
			t.Fatalf("smtpPassword %v, want redacted", e["smtpPassword"])
		}
	})

	t.Run("includeSecrets", func(t *testing.T) {
		_, e := exportTestGet(t, s, "acme", "includeSecrets=true")
		if _, ok := e["users"]; ok {
			t.Fatal("includeSecrets alone includes users")
		}
		if e["smtpPassword"] != exportTestSMTPPassword {
			t.Fatalf("smtpPassword %v, want the plaintext", e["smtpPassword"])
		}
		if cfg := e["emailProviderConfig"].(map[string]any); cfg["apiKey"] != exportTestProviderKey {
			t.Fatalf("emailProviderConfig %v, want the plaintext key", cfg)
		}
	})

	t.Run("both", func(t *testing.T) {
		_, e := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")
		users := exportTestUsers(t, e)
		if len(users) != 3 {
			t.Fatalf("%d users", len(users))
		}
		creds, ok := users[0]["credentials"].([]any)
		if !ok || len(creds) != 1 {
			t.Fatalf("alice credentials %v, want one", users[0]["credentials"])
		}
		c := creds[0].(map[string]any)
		hash, _ := c["hash"].(string)
		if c["type"] != "password" || !strings.HasPrefix(hash, "$argon2id$v=19$") {
			t.Fatalf("credential %v, want type password with an argon2id hash", c)
		}
		if c["createdTimestamp"] != users[0]["createdTimestamp"] {
			t.Fatalf("credential createdTimestamp %v, want the user's %v", c["createdTimestamp"], users[0]["createdTimestamp"])
		}
		for _, u := range users[1:] {
			if _, ok := u["credentials"]; ok {
				t.Fatalf("user %v without a password has credentials", u["username"])
			}
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		mustError(t, s.admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=maybe", nil), http.StatusBadRequest, "invalid_parameter", "includeUsers")
		mustError(t, s.admin(http.MethodGet, "/admin/realms/acme/export?includeSecrets=1", nil), http.StatusBadRequest, "invalid_parameter", "includeSecrets")
		mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/export", nil), http.StatusNotFound, "not_found", "")
	})
}

func TestRealmExportImportRoundTrip(t *testing.T) {
	s := newTestServer(t)
	ctx := context.Background()
	exportTestSetup(t, s)
	raw, first := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")

	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme", nil), http.StatusNotFound)

	r := s.admin(http.MethodPost, "/admin/realms/import", raw)
	mustStatus(t, r, http.StatusCreated)
	created := r.object(t)
	if created["name"] != "acme" || created["id"] != first["id"] || created["smtpPassword"] != redacted {
		t.Fatalf("import answered %s", r.Body)
	}
	if first["termsText"] != "Be kind.\n\nNo spam." || first["termsVersion"] != "2026-01" ||
		created["termsText"] != first["termsText"] || created["termsVersion"] != first["termsVersion"] {
		t.Fatalf("the realm's terms: exported %q %q, imported %q %q", first["termsText"], first["termsVersion"],
			created["termsText"], created["termsVersion"])
	}

	_, second := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")
	if !reflect.DeepEqual(first, second) {
		a, _ := json.MarshalIndent(first, "", "  ")
		b, _ := json.MarshalIndent(second, "", "  ")
		t.Fatalf("round trip changed the realm:\nbefore %s\nafter %s", a, b)
	}

	realm, err := s.store.GetRealm(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := s.store.GetUserByUsername(ctx, realm.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.app.id.VerifyPassword(ctx, alice.PasswordHash, exportTestUserPassword); err != nil || !ok {
		t.Fatalf("imported password does not verify: %v, %v", ok, err)
	}
	if ok, err := s.app.id.VerifyPassword(ctx, alice.PasswordHash, exportTestUserPassword+"x"); err != nil || ok {
		t.Fatalf("imported hash accepts a wrong password: %v, %v", ok, err)
	}
	bob, err := s.store.GetUserByUsername(ctx, realm.ID, "bob")
	if err != nil || bob.PasswordHash != "" {
		t.Fatalf("bob after import %+v, %v; want no password", bob, err)
	}
	// The realm works as a realm again: users can be listed and added.
	r = s.admin(http.MethodGet, "/admin/realms/acme/users", nil)
	mustStatus(t, r, http.StatusOK)
	if total := r.object(t)["total"]; total != float64(3) {
		t.Fatalf("total users %v, want 3", total)
	}
	s.createUser("acme", map[string]any{"username": "dave", "email": "dave@acme.test"})
}

func TestRealmImportOverExisting(t *testing.T) {
	s := newTestServer(t)
	exportTestSetup(t, s)
	raw, original := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")

	// Change the realm after the export: a new user, a new display name.
	s.createUser("acme", map[string]any{"username": "dave"})
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "Changed"}), http.StatusOK)
	_, changed := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")

	t.Run("without overwrite", func(t *testing.T) {
		mustError(t, s.admin(http.MethodPost, "/admin/realms/import", raw), http.StatusConflict, "conflict", "")
		mustError(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=false", raw), http.StatusConflict, "conflict", "")
		_, after := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")
		if !reflect.DeepEqual(after, changed) {
			t.Fatalf("a refused import changed the realm")
		}
	})

	t.Run("bad overwrite parameter", func(t *testing.T) {
		mustError(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=yes", raw), http.StatusBadRequest, "invalid_parameter", "overwrite")
	})

	t.Run("with overwrite", func(t *testing.T) {
		mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", raw), http.StatusCreated)
		_, after := exportTestGet(t, s, "acme", "includeUsers=true&includeSecrets=true")
		if !reflect.DeepEqual(after, original) {
			t.Fatalf("overwrite did not restore the exported realm")
		}
		for _, u := range exportTestUsers(t, after) {
			if u["username"] == "dave" {
				t.Fatal("dave, who is not in the file, survived the overwrite")
			}
		}
	})

	t.Run("overwrite with an empty user list", func(t *testing.T) {
		var e map[string]any
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		delete(e, "users")
		mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", e), http.StatusCreated)
		r := s.admin(http.MethodGet, "/admin/realms/acme/users", nil)
		mustStatus(t, r, http.StatusOK)
		if total := r.object(t)["total"]; total != float64(0) {
			t.Fatalf("users after overwriting with none: %v", total)
		}
	})
}

// exportTestImportBody is a minimal valid import of realm name with users.
func exportTestImportBody(name string, users ...map[string]any) map[string]any {
	b := map[string]any{"formatVersion": 1, "name": name}
	if users != nil {
		list := make([]any, len(users))
		for i, u := range users {
			list[i] = u
		}
		b["users"] = list
	}
	return b
}

func TestRealmImportRejectsInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("other")
	otherUser := s.createUser("other", map[string]any{"username": "olga"})["id"].(string)

	with := func(b map[string]any, k string, v any) map[string]any {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	u := func(username, email string) map[string]any {
		m := map[string]any{"username": username}
		if email != "" {
			m["email"] = email
		}
		return m
	}

	for _, c := range []struct {
		name        string
		body        any
		status      int
		code, field string
	}{
		{"bad third email", exportTestImportBody("atomic", u("ann", "ann@x.test"), u("ben", "ben@x.test"), u("cat", "not-an-email")),
			400, "invalid_field", "users[2].email"},
		{"bad username", exportTestImportBody("atomic", u("ann", ""), u("b", "")), 400, "invalid_field", "users[1].username"},
		{"missing username", exportTestImportBody("atomic", map[string]any{"email": "x@x.test"}), 400, "invalid_field", "users[0].username"},
		{"duplicate usernames", exportTestImportBody("atomic", u("ann", ""), u("ANN", "")), 409, "conflict", "users[1].username"},
		{"duplicate emails", exportTestImportBody("atomic", u("ann", "a@x.test"), u("ben", "A@X.test")), 409, "conflict", "users[1].email"},
		{"plaintext password", exportTestImportBody("atomic", with(u("ann", ""), "password", "hunter2hunter2")),
			400, "unknown_field", "users[0].password"},
		{"bad credential hash", exportTestImportBody("atomic", with(u("ann", ""), "credentials", []any{map[string]any{"type": "password", "hash": "plain"}})),
			400, "invalid_field", "users[0].credentials"},
		{"bad credential type", exportTestImportBody("atomic", with(u("ann", ""), "credentials", []any{map[string]any{"type": "otp", "hash": testArgon2Hash}})),
			400, "invalid_field", "users[0].credentials"},
		// With a realm id, the file's IDs are kept, so they can clash.
		{"user id taken in another realm", with(exportTestImportBody("atomic", u("ann", ""), with(u("ben", ""), "id", otherUser)),
			"id", "0b8a3f4e-8f0e-4f57-9d0c-7f3a1c2b5e61"), 409, "conflict", "users[1].id"},
		{"bad user id", exportTestImportBody("atomic", with(u("ann", ""), "id", "not-a-uuid")), 400, "invalid_field", "users[0].id"},
		{"missing formatVersion", with(exportTestImportBody("atomic"), "formatVersion", nil), 400, "invalid_field", "formatVersion"},
		{"formatVersion 99", with(exportTestImportBody("atomic"), "formatVersion", 99), 400, "invalid_field", "formatVersion"},
		{"formatVersion 0", with(exportTestImportBody("atomic"), "formatVersion", 0), 400, "invalid_field", "formatVersion"},
		{"formatVersion string", with(exportTestImportBody("atomic"), "formatVersion", "1"), 400, "invalid_field", "formatVersion"},
		{"unknown top-level field", with(exportTestImportBody("atomic"), "bogus", []any{}), 400, "unknown_field", "bogus"},
		{"unknown user field", exportTestImportBody("atomic", with(u("ann", ""), "roles", []any{})), 400, "unknown_field", "roles"},
		{"missing name", with(exportTestImportBody("atomic"), "name", nil), 400, "invalid_field", "name"},
		{"bad name", exportTestImportBody("Not A Slug"), 400, "invalid_field", "name"},
		{"reserved name", exportTestImportBody("themes"), 400, "invalid_field", "name"},
		{"bad realm field", with(exportTestImportBody("atomic"), "smtpPort", 70000), 400, "invalid_field", "smtpPort"},
		{"bad realm id", with(exportTestImportBody("atomic"), "id", "nope"), 400, "invalid_field", "id"},
		{"not an object", `[1]`, 400, "invalid_json", ""},
		{"malformed", `{"formatVersion": 1,`, 400, "invalid_json", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, "/admin/realms/import", c.body), c.status, c.code, c.field)
			mustError(t, s.admin(http.MethodGet, "/admin/realms/atomic", nil), http.StatusNotFound, "not_found", "")
		})
	}

	mustError(t, s.admin(http.MethodPost, "/admin/realms/import", `{"formatVersion":1,"name":"x"}`, "Content-Type: text/plain"),
		http.StatusUnsupportedMediaType, "unsupported_media_type", "")

	// The failed imports left the other realm alone.
	r := s.admin(http.MethodGet, "/admin/realms/other/users/"+otherUser, nil)
	mustStatus(t, r, http.StatusOK)
	if r.object(t)["username"] != "olga" {
		t.Fatalf("olga changed: %s", r.Body)
	}
	r = s.admin(http.MethodGet, "/admin/realms", nil)
	mustStatus(t, r, http.StatusOK)
	var realms []map[string]any
	r.decode(t, &realms)
	if len(realms) != 1 {
		t.Fatalf("realms after failed imports: %s", r.Body)
	}

	// Control: the same shape, valid, imports.
	r = s.admin(http.MethodPost, "/admin/realms/import", exportTestImportBody("atomic", u("ann", "ann@x.test"),
		with(u("ben", ""), "credentials", []any{map[string]any{"type": "password", "hash": testArgon2Hash}})))
	mustStatus(t, r, http.StatusCreated)
	r = s.admin(http.MethodGet, "/admin/realms/atomic", nil)
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["enabled"] != true || got["accessTokenLifespan"] != float64(300) {
		t.Fatalf("imported realm lacks the defaults: %v", got)
	}
}

func TestRealmImportKeepsRedactedSecrets(t *testing.T) {
	s := newTestServer(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", exportTestRealmBody("acme")), http.StatusCreated)
	raw, redactedExport := exportTestGet(t, s, "acme", "")
	if redactedExport["smtpPassword"] != redacted {
		t.Fatalf("export without secrets has smtpPassword %v", redactedExport["smtpPassword"])
	}

	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", raw), http.StatusCreated)
	_, e := exportTestGet(t, s, "acme", "includeSecrets=true")
	if e["smtpPassword"] != exportTestSMTPPassword {
		t.Fatalf("smtpPassword after overwrite %v, want the stored %q", e["smtpPassword"], exportTestSMTPPassword)
	}
	if cfg := e["emailProviderConfig"].(map[string]any); cfg["apiKey"] != exportTestProviderKey || cfg["region"] != "eu" {
		t.Fatalf("emailProviderConfig after overwrite %v", cfg)
	}

	// Imported as a new realm, a redacted secret is dropped, never stored as
	// the placeholder itself.
	var fresh map[string]any
	if err := json.Unmarshal(raw, &fresh); err != nil {
		t.Fatal(err)
	}
	fresh["name"] = "copy"
	delete(fresh, "id")
	fresh["emailProvider"] = "smtp"
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import", fresh), http.StatusCreated)
	_, c := exportTestGet(t, s, "copy", "includeSecrets=true")
	if pw, ok := c["smtpPassword"]; ok {
		t.Fatalf("copy has smtpPassword %v, want none", pw)
	}
	if cfg := c["emailProviderConfig"].(map[string]any); cfg["apiKey"] != nil || cfg["region"] != "eu" {
		t.Fatalf("copy emailProviderConfig %v, want apiKey dropped and region kept", cfg)
	}
	if c["id"] == e["id"] {
		t.Fatalf("copy reused the id %v", c["id"])
	}
}

// An export made without secrets, imported over the realm it came from,
// keeps the users' passwords as it keeps the realm's secrets.
func TestRealmImportOverwriteKeepsUserPasswords(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "alice", "password": "alice-password-1"})
	s.createUser("acme", map[string]any{"username": "bob"})
	before, err := s.store.GetUserByUsername(t.Context(), mustRealmID(t, s, "acme"), "alice")
	if err != nil {
		t.Fatal(err)
	}
	raw := s.admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=true", nil)
	mustStatus(t, raw, http.StatusOK)
	if strings.Contains(string(raw.Body), "argon2id") {
		t.Fatalf("export without secrets carries a hash: %s", raw.Body)
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", raw.Body), http.StatusCreated)

	realmID := mustRealmID(t, s, "acme")
	after, err := s.store.GetUserByUsername(t.Context(), realmID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if after.PasswordHash == "" || after.PasswordHash != before.PasswordHash {
		t.Fatalf("alice's password hash after overwrite %q, want %q", after.PasswordHash, before.PasswordHash)
	}
	ok, err := s.app.id.VerifyPassword(t.Context(), after.PasswordHash, "alice-password-1")
	if err != nil || !ok {
		t.Fatalf("alice's password no longer verifies: %v %v", ok, err)
	}
	bob, err := s.store.GetUserByUsername(t.Context(), realmID, "bob")
	if err != nil || bob.PasswordHash != "" {
		t.Fatalf("bob after overwrite: %+v %v", bob, err)
	}
}

func mustRealmID(t testing.TB, s *testServer, name string) string {
	t.Helper()
	realm, err := s.store.GetRealm(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return realm.ID
}

// An export shows its caller nothing their credential does not: the areas
// it holds need their read permissions, the users users:read, and the
// secrets, which the admin API never shows, the write permissions of what
// they open.
func TestRealmExportNeedsWhatItHolds(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	s.createRealm("acme")
	reads := []authz.Permission{authz.RealmRead, authz.ClientsRead, authz.RolesRead, authz.GroupsRead, authz.ScopesRead,
		authz.IdentityProvidersRead, authz.SCIMRead, authz.OrgsRead, authz.PoliciesRead}
	secrets := append(slices.Clone(reads), authz.RealmWrite, authz.ClientsWrite, authz.IdentityProvidersWrite)
	with := func(base []authz.Permission, more ...authz.Permission) []authz.Permission {
		return append(slices.Clone(base), more...)
	}
	for _, c := range []struct {
		query   string
		perms   []authz.Permission
		lacking authz.Permission // "" for a 200
	}{
		{"", []authz.Permission{authz.RealmRead}, authz.ClientsRead},
		{"", reads, ""},
		{"includeUsers=true", reads, authz.UsersRead},
		{"includeUsers=true", with(reads, authz.UsersRead), ""},
		{"includeSecrets=true", with(reads, authz.UsersRead, authz.UsersWrite), authz.RealmWrite},
		{"includeSecrets=true", secrets, ""},
		{"includeUsers=true&includeSecrets=true", with(secrets, authz.UsersRead), authz.UsersWrite},
		{"includeUsers=true&includeSecrets=true", with(secrets, authz.UsersRead, authz.UsersWrite), ""},
	} {
		t.Run(fmt.Sprintf("%s %v", c.query, c.perms), func(t *testing.T) {
			r := s.request(http.MethodGet, "/admin/realms/acme/export?"+c.query, nil, authBearer(authLoginFor(t, s, c.perms)))
			if c.lacking == "" {
				mustStatus(t, r, http.StatusOK)
				return
			}
			mustError(t, r, http.StatusForbidden, "forbidden", "")
			if !strings.Contains(string(r.Body), string(c.lacking)) {
				t.Fatalf("the 403 does not name %s: %s", c.lacking, r.Body)
			}
		})
	}
}
