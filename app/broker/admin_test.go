package broker_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const idps = "/admin/realms/acme/identity-providers"

func TestCreateProviderPresets(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme")
	for _, c := range []struct {
		body                        map[string]any
		auth, token, userinfo, jwks string
		issuer, scopes, display     string
	}{
		{body: map[string]any{"alias": "google", "providerType": "google"},
			auth: "https://accounts.google.com/o/oauth2/v2/auth", token: "https://oauth2.googleapis.com/token",
			userinfo: "https://openidconnect.googleapis.com/v1/userinfo", jwks: "https://www.googleapis.com/oauth2/v3/certs",
			issuer: "https://accounts.google.com", scopes: "openid email profile", display: "Google"},
		{body: map[string]any{"alias": "entra", "providerType": "microsoft", "tenant": "contoso.onmicrosoft.com", "displayName": "Contoso"},
			auth:     "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize",
			token:    "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
			userinfo: "https://graph.microsoft.com/oidc/userinfo",
			jwks:     "https://login.microsoftonline.com/contoso.onmicrosoft.com/discovery/v2.0/keys",
			issuer:   "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0", scopes: "openid email profile", display: "Contoso"},
		{body: map[string]any{"alias": "ms", "providerType": "microsoft"},
			auth:     "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
			token:    "https://login.microsoftonline.com/common/oauth2/v2.0/token",
			userinfo: "https://graph.microsoft.com/oidc/userinfo",
			jwks:     "https://login.microsoftonline.com/common/discovery/v2.0/keys",
			issuer:   "https://login.microsoftonline.com/common/v2.0", scopes: "openid email profile", display: "Microsoft"},
		{body: map[string]any{"alias": "gh", "providerType": "github", "defaultScopes": "user:email"},
			auth: "https://github.com/login/oauth/authorize", token: "https://github.com/login/oauth/access_token",
			userinfo: "https://api.github.com/user", scopes: "user:email", display: "GitHub"},
		{body: map[string]any{"alias": "gitlab", "providerType": "gitlab"},
			auth: "https://gitlab.com/oauth/authorize", token: "https://gitlab.com/oauth/token",
			userinfo: "https://gitlab.com/oauth/userinfo", jwks: "https://gitlab.com/oauth/discovery/keys",
			issuer: "https://gitlab.com", scopes: "openid email profile", display: "GitLab"},
		{body: map[string]any{"alias": "apple", "providerType": "apple"},
			auth: "https://appleid.apple.com/auth/authorize", token: "https://appleid.apple.com/auth/token",
			jwks: "https://appleid.apple.com/auth/keys", issuer: "https://appleid.apple.com", scopes: "openid", display: "Apple"},
		{body: map[string]any{"alias": "fb", "providerType": "facebook"},
			auth: "https://www.facebook.com/v19.0/dialog/oauth", token: "https://graph.facebook.com/v19.0/oauth/access_token",
			userinfo: "https://graph.facebook.com/me?fields=id,name,email,first_name,last_name", scopes: "email public_profile",
			display: "Facebook"},
		{body: map[string]any{"alias": "li", "providerType": "linkedin"},
			auth: "https://www.linkedin.com/oauth/v2/authorization", token: "https://www.linkedin.com/oauth/v2/accessToken",
			userinfo: "https://api.linkedin.com/v2/userinfo", jwks: "https://www.linkedin.com/oauth/openid/jwks",
			issuer: "https://www.linkedin.com/oauth", scopes: "openid profile email", display: "LinkedIn"},
		{body: map[string]any{"alias": "discord", "providerType": "discord"},
			auth: "https://discord.com/oauth2/authorize", token: "https://discord.com/api/oauth2/token",
			userinfo: "https://discord.com/api/users/@me", scopes: "identify email", display: "Discord"},
	} {
		alias := c.body["alias"].(string)
		t.Run(alias, func(t *testing.T) {
			c.body["clientId"], c.body["clientSecret"] = "id-"+alias, "secret-"+alias
			got := createProvider(s, "acme", c.body)
			for field, want := range map[string]any{"authorizationUrl": c.auth, "tokenUrl": c.token, "userinfoUrl": c.userinfo,
				"jwksUrl": c.jwks, "issuer": c.issuer, "defaultScopes": c.scopes, "displayName": c.display,
				"clientSecret": "**********", "enabled": true, "providerType": c.body["providerType"]} {
				if got[field] != want {
					t.Errorf("%s = %v, want %v", field, got[field], want)
				}
			}
			if _, ok := got["discovery"]; ok {
				t.Errorf("a preset reported a discovery: %v", got["discovery"])
			}
			if p := storedProvider(s, "acme", alias); p.ClientSecret != "secret-"+alias {
				t.Errorf("stored secret %q", p.ClientSecret)
			}
		})
	}
}

func TestCreateProviderValidationNamesTheField(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme")
	oidc := func(over map[string]any) map[string]any {
		b := map[string]any{"alias": "corp", "providerType": "oidc", "clientId": "c", "clientSecret": "s",
			"authorizationUrl": "https://idp.test/auth", "tokenUrl": "https://idp.test/token",
			"jwksUrl": "https://idp.test/jwks", "issuer": "https://idp.test"}
		for k, v := range over {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	createProvider(s, "acme", oidc(map[string]any{"alias": "taken"}))
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no alias", oidc(map[string]any{"alias": nil}), 400, "invalid_field", "alias"},
		{"alias with a slash", oidc(map[string]any{"alias": "a/b"}), 400, "invalid_field", "alias"},
		{"alias taken", oidc(map[string]any{"alias": "taken"}), 409, "conflict", "alias"},
		{"no type", oidc(map[string]any{"providerType": nil}), 400, "invalid_field", "providerType"},
		{"unknown type", oidc(map[string]any{"providerType": "myspace"}), 400, "invalid_field", "providerType"},
		{"no client id", oidc(map[string]any{"clientId": nil}), 400, "invalid_field", "clientId"},
		{"no secret", oidc(map[string]any{"clientSecret": nil}), 400, "invalid_field", "clientSecret"},
		{"redacted secret", oidc(map[string]any{"clientSecret": "**********"}), 400, "invalid_field", "clientSecret"},
		{"no authorization URL", oidc(map[string]any{"authorizationUrl": nil, "issuer": nil}), 400, "invalid_field", "authorizationUrl"},
		{"relative token URL", oidc(map[string]any{"tokenUrl": "/token"}), 400, "invalid_field", "tokenUrl"},
		{"ftp jwks URL", oidc(map[string]any{"jwksUrl": "ftp://idp.test/jwks"}), 400, "invalid_field", "jwksUrl"},
		{"oidc without issuer", oidc(map[string]any{"issuer": nil}), 400, "invalid_field", "issuer"},
		{"oidc without keys", oidc(map[string]any{"jwksUrl": nil, "issuer": nil}), 400, "invalid_field", "jwksUrl"},
		{"oauth2 without userinfo", oidc(map[string]any{"providerType": "oauth2"}), 400, "invalid_field", "userinfoUrl"},
		{"fragment", oidc(map[string]any{"tokenUrl": "https://idp.test/token#x"}), 400, "invalid_field", "tokenUrl"},
		{"bad scope", oidc(map[string]any{"defaultScopes": "openid \"email\""}), 400, "invalid_field", "defaultScopes"},
		{"tenant off microsoft", oidc(map[string]any{"tenant": "contoso"}), 400, "invalid_field", "tenant"},
		{"bad tenant", map[string]any{"alias": "ms", "providerType": "microsoft", "clientId": "c", "clientSecret": "s",
			"tenant": "../x"}, 400, "invalid_field", "tenant"},
		{"bad claim", oidc(map[string]any{"claimMapping": map[string]any{"email": "e mail"}}), 400, "invalid_field", "claimMapping.email"},
		{"roles without claim", oidc(map[string]any{"claimMapping": map[string]any{"roles": map[string]any{"admins": "admin"}}}),
			400, "invalid_field", "claimMapping.rolesClaim"},
		{"role to nothing", oidc(map[string]any{"claimMapping": map[string]any{"rolesClaim": "groups", "roles": map[string]any{"admins": ""}}}),
			400, "invalid_field", "claimMapping.roles.admins"},
		{"display name control", oidc(map[string]any{"displayName": "a\u0000b"}), 400, "invalid_field", "displayName"},
		{"unknown field", oidc(map[string]any{"color": "red"}), 400, "unknown_field", "color"},
		{"wrong type", oidc(map[string]any{"enabled": "yes"}), 400, "invalid_field", "enabled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, idps, c.body), c.status, c.code, c.field)
		})
	}
	r := s.Admin(http.MethodGet, idps, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.Decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("after refused creates, %d providers: %s", len(list), r.Body)
	}
}

func TestProviderCRUD(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme")
	created := s.Admin(http.MethodPost, idps, githubProvider("gh"))
	apptest.MustStatus(t, created, http.StatusCreated)
	if loc := created.Header.Get("Location"); !strings.HasSuffix(loc, idps+"/gh") {
		t.Fatalf("Location %q", loc)
	}
	createProvider(s, "acme", githubProvider("another"))

	r := s.Admin(http.MethodGet, idps, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.Decode(t, &list)
	if len(list) != 2 || list[0]["alias"] != "another" || list[1]["alias"] != "gh" {
		t.Fatalf("list: %s", r.Body)
	}
	for _, body := range [][]byte{created.Body, r.Body} {
		if bytes.Contains(body, []byte("gh-secret")) {
			t.Fatalf("secret in an answer: %s", body)
		}
	}

	// A representation read back is a valid update; the redacted secret
	// keeps the stored one.
	got := s.Admin(http.MethodGet, idps+"/gh", nil)
	apptest.MustStatus(t, got, http.StatusOK)
	rep := got.Object(t)
	for _, k := range []string{"internalId", "createdTimestamp"} {
		delete(rep, k)
	}
	rep["displayName"], rep["trustEmail"], rep["syncUserProfile"] = "Octocat", true, true
	upd := s.Admin(http.MethodPut, idps+"/gh", rep)
	apptest.MustStatus(t, upd, http.StatusOK)
	p := storedProvider(s, "acme", "gh")
	if p.DisplayName != "Octocat" || !p.TrustEmail || !p.SyncUserProfile || p.ClientSecret != "gh-secret-gh" {
		t.Fatalf("after update: %+v", p)
	}
	// A new secret replaces it; null on an endpoint of a preset fills it
	// from the preset again.
	apptest.MustStatus(t, s.Admin(http.MethodPut, idps+"/gh", map[string]any{"clientSecret": "rotated", "tokenUrl": nil}), http.StatusOK)
	if p := storedProvider(s, "acme", "gh"); p.ClientSecret != "rotated" || p.TokenURL != "https://github.com/login/oauth/access_token" ||
		p.DisplayName != "Octocat" {
		t.Fatalf("after secret update: %+v", p)
	}
	for _, c := range []struct {
		body        map[string]any
		status      int
		code, field string
	}{
		{map[string]any{"alias": "renamed"}, 400, "invalid_field", "alias"},
		{map[string]any{"providerType": "gitlab"}, 400, "invalid_field", "providerType"},
		{map[string]any{"clientSecret": nil}, 400, "invalid_field", "clientSecret"},
		{map[string]any{"internalId": "x"}, 400, "unknown_field", "internalId"},
		{map[string]any{"userinfoUrl": "not a url"}, 400, "invalid_field", "userinfoUrl"},
	} {
		apptest.MustError(t, s.Admin(http.MethodPut, idps+"/gh", c.body), c.status, c.code, c.field)
	}
	apptest.MustError(t, s.Admin(http.MethodPut, idps+"/nope", map[string]any{}), 404, "not_found", "")

	apptest.MustStatus(t, s.Admin(http.MethodDelete, idps+"/gh", nil), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodGet, idps+"/gh", nil), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, idps+"/gh", nil), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/identity-providers", nil), 404, "not_found", "")
}

// The client secret is sealed in the database file: its bytes appear
// nowhere in it.
func TestProviderSecretEncryptedAtRest(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme")
	const secret = "a-very-recognisable-upstream-secret"
	body := githubProvider("gh")
	body["clientSecret"] = secret
	createProvider(s, "acme", body)
	db, err := sql.Open("sqlite", "file:"+s.DBPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sealed []byte
	if err := db.QueryRow("SELECT client_secret FROM identity_providers WHERE alias = 'gh'").Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(secret)) {
		t.Fatalf("client_secret column %q", sealed)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Log(err) // read-only: the WAL file is read below as well
	}
	for _, f := range []string{s.DBPath, s.DBPath + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("the secret is in %s in clear", f)
		}
	}
}

func TestProviderAdminEvents(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme")
	createProvider(s, "acme", githubProvider("gh"))
	apptest.MustStatus(t, s.Admin(http.MethodPut, idps+"/gh", map[string]any{"displayName": "Hub"}), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, idps+"/gh", nil), http.StatusOK)
	r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=IDENTITY_PROVIDER", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var evs []struct {
		OperationType, ResourcePath string
		Representation              json.RawMessage
	}
	r.Decode(t, &evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.OperationType+" "+e.ResourcePath)
		if bytes.Contains(e.Representation, []byte("gh-secret")) {
			t.Fatalf("secret in an admin event: %s", e.Representation)
		}
	}
	if strings.Join(got, ", ") != "DELETE identity-providers/gh, UPDATE identity-providers/gh, CREATE identity-providers/gh" {
		t.Fatalf("admin events: %v", got)
	}
}

// An oidc provider given an issuer alone takes its endpoints from the
// issuer's discovery document; here the issuer is a realm of a second
// server, a real OpenID Connect provider.
func TestCreateProviderDiscovery(t *testing.T) {
	upstream, upBase := liveServer(t, false)
	upstream.CreateRealm("upstream")
	issuer := upBase + "/realms/upstream"

	s := realapp.New(t, func(c *app.Config) { c.OutboundAllowed = loopback })
	createRealm(s, "acme")
	got := createProvider(s, "acme", map[string]any{"alias": "corp", "providerType": "oidc", "issuer": issuer,
		"clientId": "c", "clientSecret": "s"})
	for field, want := range map[string]string{
		"authorizationUrl": issuer + "/protocol/openid-connect/auth", "tokenUrl": issuer + "/protocol/openid-connect/token",
		"userinfoUrl": issuer + "/protocol/openid-connect/userinfo", "jwksUrl": issuer + "/protocol/openid-connect/certs",
		"logoutUrl": issuer + "/protocol/openid-connect/logout",
	} {
		if got[field] != want {
			t.Errorf("%s = %v, want %s", field, got[field], want)
		}
	}
	note, _ := got["discovery"].(map[string]any)
	if note["url"] != issuer+"/.well-known/openid-configuration" || len(note["filled"].([]any)) != 5 {
		t.Fatalf("discovery note %v", got["discovery"])
	}
	if g := s.Admin(http.MethodGet, idps+"/corp", nil).Object(t); g["discovery"] != nil {
		t.Fatalf("a GET reports a discovery: %v", g)
	}
	// A set endpoint is kept; only the missing ones are filled.
	got = createProvider(s, "acme", map[string]any{"alias": "corp2", "providerType": "oidc", "issuer": issuer,
		"clientId": "c", "clientSecret": "s", "tokenUrl": "https://elsewhere.test/token"})
	if got["tokenUrl"] != "https://elsewhere.test/token" || len(got["discovery"].(map[string]any)["filled"].([]any)) != 4 {
		t.Fatalf("partial discovery: %v", got)
	}

	for _, c := range []struct {
		name, issuer string
	}{
		{"wrong issuer in the document", upBase + "/realms/upstream/"},
		{"no document", upBase + "/realms/nope"},
		{"nothing listening", "http://127.0.0.1:1/realms/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Admin(http.MethodPost, idps, map[string]any{"alias": "bad", "providerType": "oidc", "issuer": c.issuer,
				"clientId": "c", "clientSecret": "s"})
			apptest.MustError(t, r, 400, "invalid_field", "issuer")
		})
	}
}

// Without the configured allowance, discovery never connects to a
// loopback, private or metadata address.
func TestDiscoveryRefusesInternalAddresses(t *testing.T) {
	hits := 0
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer internal.Close()
	s := realapp.New(t)
	createRealm(s, "acme")
	for _, issuer := range []string{internal.URL, "http://169.254.169.254/latest", "http://10.0.0.1", "http://[::1]:8080"} {
		r := s.Admin(http.MethodPost, idps, map[string]any{"alias": "corp", "providerType": "oidc", "issuer": issuer,
			"clientId": "c", "clientSecret": "s"})
		apptest.MustError(t, r, 400, "invalid_field", "issuer")
		if !strings.Contains(string(r.Body), "non-public") {
			t.Errorf("issuer %s: %s", issuer, r.Body)
		}
	}
	if hits != 0 {
		t.Fatalf("the internal server was reached %d times", hits)
	}
}
