package broker_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

func seedThreeProviders(s *apptest.Server) {
	createRealm(s, "acme")
	createProvider(s, "acme", githubProvider("gh"))
	createProvider(s, "acme", map[string]any{"alias": "entra", "providerType": "microsoft", "tenant": "contoso",
		"clientId": "ms", "clientSecret": "ms-secret", "trustEmail": true, "storeToken": true})
	createProvider(s, "acme", map[string]any{"alias": "corp", "providerType": "oidc", "displayName": "Corp SSO",
		"clientId": "corp", "clientSecret": "corp-secret", "issuer": "https://sso.corp.test",
		"authorizationUrl": "https://sso.corp.test/auth", "tokenUrl": "https://sso.corp.test/token",
		"jwksUrl": "https://sso.corp.test/keys", "syncUserProfile": true, "enabled": false,
		"claimMapping": map[string]any{"username": "upn", "rolesClaim": "groups", "roles": map[string]any{"admins": "admin"},
			"attributes": map[string]any{"department": "dept"}}})
}

func export(s *apptest.Server, query string) []byte {
	s.T.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/acme/export"+query, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	return r.Body
}

func exportedProviders(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var file struct {
		IdentityProviders []map[string]any `json:"identityProviders"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	return file.IdentityProviders
}

// A realm with three providers exports them and imports them back; the
// export of the import is the same bytes, with secrets and without.
func TestProvidersExportImportRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name, query string
		secrets     bool
	}{
		{"with secrets", "?includeSecrets=true", true},
		{"without secrets", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realapp.New(t)
			seedThreeProviders(s)
			first := export(s, c.query)
			providers := exportedProviders(t, first)
			if len(providers) != 3 || providers[0]["alias"] != "corp" || providers[1]["alias"] != "entra" || providers[2]["alias"] != "gh" {
				t.Fatalf("exported providers: %v", providers)
			}
			secret, has := providers[1]["clientSecret"]
			if c.secrets && secret != "ms-secret" || !c.secrets && has {
				t.Fatalf("exported secret %v (present %v)", secret, has)
			}
			if !c.secrets && bytes.Contains(first, []byte("**********")) {
				t.Fatalf("an export without secrets writes placeholders")
			}

			// Overwriting the realm with its own export: the secrets stay.
			apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?overwrite=true", first), http.StatusCreated)
			if second := export(s, c.query); !bytes.Equal(first, second) {
				t.Fatalf("second export differs:\n%s\n---\n%s", first, second)
			}
			if p := storedProvider(s, "acme", "entra"); p.ClientSecret != "ms-secret" {
				t.Fatalf("secret after overwrite: %q", p.ClientSecret)
			}

			// Into another server: without secrets, the providers come
			// without them, and say so by having none.
			other := realapp.New(t)
			apptest.MustStatus(t, other.Admin(http.MethodPost, "/admin/realms/import", first), http.StatusCreated)
			if again := export(other, c.query); !bytes.Equal(first, again) {
				t.Fatalf("export from the other server differs:\n%s\n---\n%s", first, again)
			}
			got := other.Admin(http.MethodGet, "/admin/realms/acme/identity-providers/entra", nil).Object(t)
			if _, has := got["clientSecret"]; has != c.secrets {
				t.Fatalf("imported provider's clientSecret %v, want present %v", got["clientSecret"], c.secrets)
			}
		})
	}
}

func TestProvidersImportValidation(t *testing.T) {
	s := realapp.New(t)
	seedThreeProviders(s)
	data := export(s, "?includeSecrets=true")
	for _, c := range []struct {
		name  string
		edit  func(p []map[string]any)
		code  string
		field string
	}{
		{"unknown type", func(p []map[string]any) { p[1]["providerType"] = "myspace" }, "invalid_field", "identityProviders[1].providerType"},
		{"same alias twice", func(p []map[string]any) { p[2]["alias"] = "corp" }, "invalid_field", "identityProviders[2].alias"},
		{"bad URL", func(p []map[string]any) { p[0]["tokenUrl"] = "nope" }, "invalid_field", "identityProviders[0].tokenUrl"},
		{"bad id", func(p []map[string]any) { p[0]["internalId"] = "nope" }, "invalid_field", "identityProviders[0].internalId"},
		{"unknown field", func(p []map[string]any) { p[0]["colour"] = "red" }, "unknown_field", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var file map[string]any
			if err := json.Unmarshal(data, &file); err != nil {
				t.Fatal(err)
			}
			var providers []map[string]any
			b, _ := json.Marshal(file["identityProviders"])
			_ = json.Unmarshal(b, &providers)
			c.edit(providers)
			file["identityProviders"], file["name"] = providers, "copy"
			r := s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", file)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var body struct{ Error, Field string }
			r.Decode(t, &body)
			if body.Error != c.code || (c.field != "" && body.Field != c.field) {
				t.Fatalf("error %s", r.Body)
			}
			apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/copy", nil), 404, "not_found", "")
		})
	}
}

// Users' links go with the users in an export with users: overwriting the
// realm with its export keeps them, and the second export is the same bytes.
func TestFederatedIdentitiesExportImport(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil)
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	id := e.acmeUser("bob")["id"].(string)
	first := export(e.s, "?includeUsers=true")
	if !bytes.Contains(first, []byte(`"federatedIdentities"`)) || !bytes.Contains(first, []byte(`"userId": "up-123"`)) {
		t.Fatalf("export without the link: %s", first)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/import?overwrite=true", first), http.StatusCreated)
	if second := export(e.s, "?includeUsers=true"); !bytes.Equal(first, second) {
		t.Fatalf("second export differs:\n%s\n---\n%s", first, second)
	}
	if claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t))); claims["sub"] != id {
		t.Fatalf("after the import, signed in as %v, want %v", claims["sub"], id)
	}
	if n := len(e.events("IDENTITY_PROVIDER_FIRST_LOGIN")); n != 0 { // the import replaced the events' realm
		t.Fatalf("%d first logins after the import", n)
	}

	// A link to a provider the file lacks is refused, naming it.
	var file map[string]any
	if err := json.Unmarshal(first, &file); err != nil {
		t.Fatal(err)
	}
	file["identityProviders"], file["name"] = []any{}, "copy"
	r := e.s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", file)
	apptest.MustError(t, r, 400, "invalid_field", "users[0].federatedIdentities[0].identityProvider")
}
