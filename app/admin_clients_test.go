package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

func clientsTestPath(realm string) string { return "/admin/realms/" + realm + "/clients" }

func clientsTestClientPath(realm, clientID string) string {
	return clientsTestPath(realm) + "/" + clientID
}

// clientsTestKeys are every field a client representation has.
var clientsTestKeys = []string{
	"id", "clientId", "name", "description", "clientType", "enabled", "redirectUris", "webOrigins", "grantTypes",
	"requireConsent", "backchannelLogoutUri", "backchannelLogoutSessionRequired", "idTokenOnRefresh", "publicClient",
	"serviceAccountsEnabled", "createdTimestamp",
}

// clientsTestCreate makes a client and returns its create response.
func (s *testServer) clientsTestCreate(realm string, fields map[string]any) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodPost, clientsTestPath(realm), fields)
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}

func (s *testServer) clientsTestGet(realm, clientID string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodGet, clientsTestClientPath(realm, clientID), nil)
	mustStatus(s.t, r, http.StatusOK)
	clientsTestMustHideSecret(s.t, "GET client", r)
	return r.object(s.t)
}

// clientsTestIDs lists a realm's clients through the API, by clientId.
func (s *testServer) clientsTestIDs(realm, query string) []string {
	s.t.Helper()
	r := s.admin(http.MethodGet, clientsTestPath(realm)+query, nil)
	mustStatus(s.t, r, http.StatusOK)
	clientsTestMustHideSecret(s.t, "list clients", r)
	var list []map[string]any
	r.decode(s.t, &list)
	if list == nil {
		s.t.Fatalf("client list is %s, want an array", r.Body)
	}
	ids := []string{}
	for _, c := range list {
		ids = append(ids, c["clientId"].(string))
	}
	return ids
}

func (s *testServer) clientsTestRealmID(realm string) string {
	s.t.Helper()
	r, err := s.store.GetRealm(s.t.Context(), realm)
	if err != nil {
		s.t.Fatalf("realm %s: %v", realm, err)
	}
	return r.ID
}

// clientsTestStored reads a client straight from the store.
func (s *testServer) clientsTestStored(realm, clientID string) *store.Client {
	s.t.Helper()
	c, err := s.store.GetClientByClientID(s.t.Context(), s.clientsTestRealmID(realm), clientID)
	if err != nil {
		s.t.Fatalf("stored client %s: %v", clientID, err)
	}
	return c
}

// clientsTestMustHideSecret fails if a response shows a secret or a hash.
func clientsTestMustHideSecret(t testing.TB, what string, r *testResponse) {
	t.Helper()
	for _, k := range []string{`"secret"`, `"secretHash"`, `"SecretHash"`} {
		if bytes.Contains(r.Body, []byte(k)) {
			t.Fatalf("%s shows %s: %s", what, k, r.Body)
		}
	}
}

// clientsTestMustSecret checks a create or regenerate response's secret:
// 32 random bytes in base64url, stored only as its SHA-256.
func (s *testServer) clientsTestMustSecret(realm string, body map[string]any) string {
	s.t.Helper()
	secret, _ := body["secret"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil || len(raw) != 32 {
		s.t.Fatalf("secret %q is not 32 bytes of base64url: %v", secret, err)
	}
	c := s.clientsTestStored(realm, body["clientId"].(string))
	h := sha256.Sum256([]byte(secret))
	if !bytes.Equal(c.SecretHash, h[:]) {
		s.t.Fatalf("stored hash %x, want SHA-256 of the secret %x", c.SecretHash, h)
	}
	if !identity.CheckClientSecret(c, secret) {
		s.t.Fatal("the returned secret does not check")
	}
	return secret
}

func clientsTestFull() map[string]any {
	return map[string]any{
		"clientId": "Web.App_1", "name": "Web App", "description": "The web front end", "clientType": "CONFIDENTIAL",
		"enabled": false,
		"redirectUris": []any{"https://app.example.com/cb", "http://localhost:8080/cb?x=1", "com.example.app:/oauth2redirect",
			"myapp://callback"},
		"webOrigins":     []any{"https://app.example.com", "http://localhost:8080", "+"},
		"grantTypes":     []any{"authorization_code", "client_credentials", "password", "refresh_token", identity.GrantDeviceCode},
		"requireConsent": true, "backchannelLogoutUri": "https://app.example.com/logout",
		"backchannelLogoutSessionRequired": false, "idTokenOnRefresh": false,
	}
}

func TestClientCreate(t *testing.T) {
	s := newTestServer(t, fixedClock)
	s.createRealm("acme")
	full := clientsTestFull()
	r := s.admin(http.MethodPost, clientsTestPath("acme"), full)
	mustStatus(t, r, http.StatusCreated)
	got := r.object(t)
	id, _ := got["id"].(string)
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("id %v is not a UUID", got["id"])
	}
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/clients/Web.App_1" {
		t.Fatalf("Location %q", loc)
	}
	secret := s.clientsTestMustSecret("acme", got)
	want := cloneMap(full, map[string]any{
		"id": id, "secret": secret, "publicClient": false, "serviceAccountsEnabled": true,
		"createdTimestamp": testEpoch.UnixMilli(),
	})
	mustEqualJSON(t, "created client", got, want)
	mustEqualJSON(t, "client on GET", s.clientsTestGet("acme", "Web.App_1"), cloneMap(want, map[string]any{"secret": nil}))
	for k := range s.clientsTestGet("acme", "Web.App_1") {
		if !slices.Contains(clientsTestKeys, k) {
			t.Fatalf("unexpected client field %q", k)
		}
	}

	// Only clientId is required; the rest take the defaults.
	minimal := s.clientsTestCreate("acme", map[string]any{"clientId": "ab"})
	s.clientsTestMustSecret("acme", minimal)
	mustEqualJSON(t, "minimal client", minimal, map[string]any{
		"id": minimal["id"], "clientId": "ab", "name": "", "description": "", "clientType": "CONFIDENTIAL", "enabled": true,
		"redirectUris": []any{}, "webOrigins": []any{}, "grantTypes": []any{"authorization_code", "refresh_token"},
		"requireConsent": false, "backchannelLogoutUri": "", "backchannelLogoutSessionRequired": true,
		"idTokenOnRefresh": true, "publicClient": false, "serviceAccountsEnabled": false, "createdTimestamp": testEpoch.UnixMilli(),
		"secret": minimal["secret"],
	})
	// Null means the default too.
	nulls := map[string]any{"clientId": "nulls"}
	for k := range full {
		if k != "clientId" {
			nulls[k] = nil
		}
	}
	got = s.clientsTestCreate("acme", nulls)
	mustEqualJSON(t, "client from nulls", got, cloneMap(minimal, map[string]any{
		"id": got["id"], "clientId": "nulls", "secret": got["secret"],
	}))
	if got["secret"] == minimal["secret"] {
		t.Fatal("two clients got the same secret")
	}

	// A public client gets no secret, stored or shown.
	r = s.admin(http.MethodPost, clientsTestPath("acme"), map[string]any{
		"clientId": "spa", "clientType": "PUBLIC", "redirectUris": []any{"https://spa.example.com/"},
	})
	mustStatus(t, r, http.StatusCreated)
	clientsTestMustHideSecret(t, "create public client", r)
	spa := r.object(t)
	if spa["publicClient"] != true || spa["clientType"] != "PUBLIC" {
		t.Fatalf("public client %v", spa)
	}
	if c := s.clientsTestStored("acme", "spa"); c.SecretHash != nil {
		t.Fatalf("public client has secret hash %x", c.SecretHash)
	}

	// Lists keep their order, lose repeats; origins are lowercased; no grant at all is allowed.
	got = s.clientsTestCreate("acme", map[string]any{
		"clientId":     "norm",
		"redirectUris": []any{"https://b.example/cb", "https://a.example/cb", "https://b.example/cb"},
		"webOrigins":   []any{"HTTPS://App.Example.COM:8443", "https://app.example.com:8443", "+", "+"},
		"grantTypes":   []any{},
	})
	mustEqualJSON(t, "normalized lists", []any{got["redirectUris"], got["webOrigins"], got["grantTypes"]}, []any{
		[]any{"https://b.example/cb", "https://a.example/cb"}, []any{"https://app.example.com:8443", "+"}, []any{},
	})
	// Limits: 100 URIs of 2048 bytes, 255-character clientIds.
	long := "https://app.example.com/" + strings.Repeat("p", 2048-len("https://app.example.com/"))
	uris := make([]any, 100)
	for i := range uris {
		uris[i] = long[:2000] + fmt.Sprintf("%03d", i)
	}
	uris[0] = long
	s.clientsTestCreate("acme", map[string]any{"clientId": strings.Repeat("c", 255), "redirectUris": uris})
}

func TestClientCreateInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	with := func(k string, v any) map[string]any { return map[string]any{"clientId": "app", k: v} }
	tooMany := make([]any, 101)
	for i := range tooMany {
		tooMany[i] = "https://app.example.com/" + strings.Repeat("x", i)
	}
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"missing clientId", map[string]any{"name": "App"}, nil, 400, "invalid_field", "clientId"},
		{"null clientId", with("clientId", nil), nil, 400, "invalid_field", "clientId"},
		{"empty clientId", with("clientId", ""), nil, 400, "invalid_field", "clientId"},
		{"1-char clientId", with("clientId", "a"), nil, 400, "invalid_field", "clientId"},
		{"256-char clientId", with("clientId", strings.Repeat("a", 256)), nil, 400, "invalid_field", "clientId"},
		{"clientId with space", with("clientId", "my app"), nil, 400, "invalid_field", "clientId"},
		{"clientId with slash", with("clientId", "my/app"), nil, 400, "invalid_field", "clientId"},
		{"clientId non-ASCII", with("clientId", "appé"), nil, 400, "invalid_field", "clientId"},
		{"clientId number", with("clientId", 42), nil, 400, "invalid_field", "clientId"},
		{"name 256 chars", with("name", strings.Repeat("n", 256)), nil, 400, "invalid_field", "name"},
		{"name control char", with("name", "App\n"), nil, 400, "invalid_field", "name"},
		{"description 1025 chars", with("description", strings.Repeat("d", 1025)), nil, 400, "invalid_field", "description"},
		{"clientType lowercase", with("clientType", "public"), nil, 400, "invalid_field", "clientType"},
		{"clientType other", with("clientType", "BEARER_ONLY"), nil, 400, "invalid_field", "clientType"},
		{"clientType empty", with("clientType", ""), nil, 400, "invalid_field", "clientType"},
		{"enabled string", with("enabled", "true"), nil, 400, "invalid_field", "enabled"},
		{"requireConsent number", with("requireConsent", 1), nil, 400, "invalid_field", "requireConsent"},
		{"backchannelLogoutSessionRequired string", with("backchannelLogoutSessionRequired", "no"), nil, 400, "invalid_field", "backchannelLogoutSessionRequired"},
		{"redirectUris string", with("redirectUris", "https://a.example/cb"), nil, 400, "invalid_field", "redirectUris"},
		{"redirect wildcard", with("redirectUris", []any{"https://app.example.com/*"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect bare star", with("redirectUris", []any{"https://ok.example/cb", "*"}), nil, 400, "invalid_field", "redirectUris[1]"},
		{"redirect relative", with("redirectUris", []any{"/callback"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect empty", with("redirectUris", []any{""}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect null entry", with("redirectUris", []any{nil}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect fragment", with("redirectUris", []any{"https://app.example.com/cb#x"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect empty fragment", with("redirectUris", []any{"https://app.example.com/cb#"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect no host", with("redirectUris", []any{"https:///cb"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect userinfo", with("redirectUris", []any{"https://user:pw@app.example.com/cb"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect javascript", with("redirectUris", []any{"javascript:alert(1)//"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect javascript slash", with("redirectUris", []any{"JavaScript:/x"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect data", with("redirectUris", []any{"data:text/html,hi"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect host:port without scheme", with("redirectUris", []any{"localhost:8080/cb"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect opaque custom", with("redirectUris", []any{"myapp:callback"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect space", with("redirectUris", []any{"https://app.example.com/a b"}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect 2049 bytes", with("redirectUris", []any{"https://app.example.com/" + strings.Repeat("p", 2049-24)}), nil, 400, "invalid_field", "redirectUris[0]"},
		{"redirect number", with("redirectUris", []any{5}), nil, 400, "invalid_field", "redirectUris"},
		{"101 redirects", with("redirectUris", tooMany), nil, 400, "invalid_field", "redirectUris"},
		{"origin with path", with("webOrigins", []any{"https://app.example.com/"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin with long path", with("webOrigins", []any{"https://app.example.com/cb"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin star", with("webOrigins", []any{"*"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin wildcard host", with("webOrigins", []any{"https://*.example.com"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin no scheme", with("webOrigins", []any{"app.example.com"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin query", with("webOrigins", []any{"https://app.example.com?x"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin fragment", with("webOrigins", []any{"https://app.example.com#x"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin empty port", with("webOrigins", []any{"https://app.example.com:"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin port 0", with("webOrigins", []any{"https://app.example.com:0"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin port 65536", with("webOrigins", []any{"https://app.example.com:65536"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin userinfo", with("webOrigins", []any{"https://u@app.example.com"}), nil, 400, "invalid_field", "webOrigins[0]"},
		{"origin empty", with("webOrigins", []any{"+", ""}), nil, 400, "invalid_field", "webOrigins[1]"},
		{"101 origins", with("webOrigins", tooMany), nil, 400, "invalid_field", "webOrigins"},
		{"unknown grant", with("grantTypes", []any{"implicit"}), nil, 400, "invalid_field", "grantTypes[0]"},
		{"grant wrong case", with("grantTypes", []any{"refresh_token", "Password"}), nil, 400, "invalid_field", "grantTypes[1]"},
		{"short device grant", with("grantTypes", []any{"device_code"}), nil, 400, "invalid_field", "grantTypes[0]"},
		{"grantTypes object", with("grantTypes", map[string]any{"a": 1}), nil, 400, "invalid_field", "grantTypes"},
		{"public client_credentials", map[string]any{"clientId": "app", "clientType": "PUBLIC", "grantTypes": []any{"client_credentials"}}, nil, 400, "invalid_field", "grantTypes"},
		{"backchannel relative", with("backchannelLogoutUri", "/logout"), nil, 400, "invalid_field", "backchannelLogoutUri"},
		{"backchannel custom scheme", with("backchannelLogoutUri", "com.example.app:/logout"), nil, 400, "invalid_field", "backchannelLogoutUri"},
		{"backchannel fragment", with("backchannelLogoutUri", "https://app.example.com/logout#x"), nil, 400, "invalid_field", "backchannelLogoutUri"},
		{"backchannel number", with("backchannelLogoutUri", 1), nil, 400, "invalid_field", "backchannelLogoutUri"},
		{"unknown field", with("rootUrl", "https://app.example.com"), nil, 400, "unknown_field", "rootUrl"},
		{"id", with("id", "6f1c7a43-0000-4000-8000-000000000000"), nil, 400, "unknown_field", "id"},
		{"secret", with("secret", "chosen-secret"), nil, 400, "unknown_field", "secret"},
		{"publicClient", with("publicClient", true), nil, 400, "unknown_field", "publicClient"},
		{"serviceAccountsEnabled", with("serviceAccountsEnabled", true), nil, 400, "unknown_field", "serviceAccountsEnabled"},
		{"wrong-case field", with("ClientType", "PUBLIC"), nil, 400, "unknown_field", "ClientType"},
		{"malformed", `{"clientId":"app"`, nil, 400, "invalid_json", ""},
		{"array", `[{"clientId":"app"}]`, nil, 400, "invalid_json", ""},
		{"empty body", "", nil, 400, "invalid_json", ""},
		{"trailing data", `{"clientId":"app"}{}`, nil, 400, "invalid_json", ""},
		{"text/plain", `{"clientId":"app"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.admin(http.MethodPost, clientsTestPath("acme"), c.body, c.headers...)
			mustError(t, r, c.status, c.code, c.field)
		})
	}
	if ids := s.clientsTestIDs("acme", ""); !slices.Equal(ids, []string{account.ConsoleClientID}) {
		t.Fatalf("rejected creates left clients %v", ids)
	}
	// The wildcard refusal says why.
	r := s.admin(http.MethodPost, clientsTestPath("acme"), with("redirectUris", []any{"https://app.example.com/*"}))
	if d := r.object(t)["error_description"].(string); !strings.Contains(d, "wildcard") || !strings.Contains(d, "exactly") {
		t.Fatalf("wildcard error %q does not explain exact matching", d)
	}
	mustError(t, s.admin(http.MethodPost, clientsTestPath("nope"), map[string]any{"clientId": "app"}), 404, "not_found", "")
}

func TestClientCreateDuplicate(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	first := s.clientsTestCreate("acme", map[string]any{"clientId": "app", "name": "First"})
	r := s.admin(http.MethodPost, clientsTestPath("acme"), map[string]any{"clientId": "app", "name": "Second"})
	mustError(t, r, http.StatusConflict, "conflict", "clientId")
	clientsTestMustHideSecret(t, "conflict", r)
	mustEqualJSON(t, "first client after the conflict", s.clientsTestGet("acme", "app"), cloneMap(first, map[string]any{"secret": nil}))
	// clientIds are case-sensitive, as in Keycloak, and per realm.
	s.clientsTestCreate("acme", map[string]any{"clientId": "App"})
	s.clientsTestCreate("other", map[string]any{"clientId": "app"})
	if ids := s.clientsTestIDs("acme", ""); !slices.Equal(ids, []string{"App", account.ConsoleClientID, "app"}) {
		t.Fatalf("acme clients %v", ids)
	}
}

func TestClientList(t *testing.T) {
	s := newTestServer(t, tickingClock)
	s.createRealm("acme")
	s.createRealm("other")
	// A new realm has one client: the account pages' own.
	if ids := s.clientsTestIDs("acme", ""); !slices.Equal(ids, []string{account.ConsoleClientID}) {
		t.Fatalf("clients of a new realm %v", ids)
	}
	for _, id := range []string{"zeta", "alpha", "mid-app"} {
		s.clientsTestCreate("acme", map[string]any{"clientId": id})
	}
	s.clientsTestCreate("other", map[string]any{"clientId": "beta"})
	if ids := s.clientsTestIDs("acme", ""); !slices.Equal(ids, []string{account.ConsoleClientID, "alpha", "mid-app", "zeta"}) {
		t.Fatalf("clients %v, want by clientId", ids)
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"?clientId=mid-app", []string{"mid-app"}},
		{"?clientId=mid", []string{}},
		{"?clientId=ZETA", []string{}},
		{"?clientId=beta", []string{}},
		{"?clientId=", []string{account.ConsoleClientID, "alpha", "mid-app", "zeta"}},
	} {
		if ids := s.clientsTestIDs("acme", c.query); !slices.Equal(ids, c.want) {
			t.Errorf("list %s: %v, want %v", c.query, ids, c.want)
		}
	}
	// Listed clients are whole representations.
	r := s.admin(http.MethodGet, clientsTestPath("acme")+"?clientId=alpha", nil)
	var list []map[string]any
	r.decode(t, &list)
	mustEqualJSON(t, "listed client", list[0], s.clientsTestGet("acme", "alpha"))
	mustError(t, s.admin(http.MethodGet, clientsTestPath("nope"), nil), 404, "not_found", "")
}

func TestClientGetUnknown(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	app := s.clientsTestCreate("acme", map[string]any{"clientId": "app"})
	for _, path := range []string{
		clientsTestClientPath("acme", "nope"),
		clientsTestClientPath("acme", "APP"),
		clientsTestClientPath("acme", app["id"].(string)), // addressed by clientId, not the internal id
		clientsTestClientPath("other", "app"),
		clientsTestClientPath("nope", "app"),
	} {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			var body any
			if m == http.MethodPut || m == http.MethodPatch {
				body = map[string]any{"name": "x"}
			}
			mustError(t, s.admin(m, path, body), http.StatusNotFound, "not_found", "")
		}
		for _, sub := range []string{"/service-account-user", "/default-client-scopes", "/optional-client-scopes"} {
			mustError(t, s.admin(http.MethodGet, path+sub, nil), http.StatusNotFound, "not_found", "")
		}
		mustError(t, s.admin(http.MethodPost, path+"/regenerate-secret", nil), http.StatusNotFound, "not_found", "")
	}
	r := s.admin(http.MethodGet, clientsTestClientPath("acme", "nope"), nil)
	if d := r.object(t)["error_description"]; d != "client nope not found" {
		t.Fatalf("description %q", d)
	}
	mustEqualJSON(t, "app after the misses", s.clientsTestGet("acme", "app"), cloneMap(app, map[string]any{"secret": nil}))
}

func TestClientUpdate(t *testing.T) {
	s := newTestServer(t, fixedClock)
	s.createRealm("acme")
	created := s.clientsTestCreate("acme", clientsTestFull())
	secret := created["secret"].(string)
	path := clientsTestClientPath("acme", "Web.App_1")
	cur := cloneMap(created, map[string]any{"secret": nil})

	steps := []struct {
		name   string
		method string
		body   any
		change map[string]any
	}{
		{"PUT names one field", http.MethodPut, map[string]any{"name": "Renamed"}, map[string]any{"name": "Renamed"}},
		{"PUT replaces a list whole", http.MethodPut, map[string]any{"redirectUris": []any{"https://new.example/cb"}},
			map[string]any{"redirectUris": []any{"https://new.example/cb"}}},
		{"PUT every field", http.MethodPut, map[string]any{
			"name": "N", "description": "D", "enabled": true, "redirectUris": []any{"https://x.example/cb"},
			"webOrigins": []any{"+"}, "grantTypes": []any{"authorization_code"}, "requireConsent": false,
			"backchannelLogoutUri": "http://x.example/bc", "backchannelLogoutSessionRequired": true,
		}, map[string]any{
			"name": "N", "description": "D", "enabled": true, "redirectUris": []any{"https://x.example/cb"},
			"webOrigins": []any{"+"}, "grantTypes": []any{"authorization_code"}, "requireConsent": false,
			"backchannelLogoutUri": "http://x.example/bc", "backchannelLogoutSessionRequired": true,
			"serviceAccountsEnabled": false,
		}},
		{"PATCH merges", http.MethodPatch, map[string]any{"enabled": false, "webOrigins": []any{"https://Y.example"}},
			map[string]any{"enabled": false, "webOrigins": []any{"https://y.example"}}},
		{"PATCH null resets to defaults", http.MethodPatch, map[string]any{
			"name": nil, "description": nil, "enabled": nil, "redirectUris": nil, "webOrigins": nil, "grantTypes": nil,
			"requireConsent": nil, "backchannelLogoutUri": nil, "backchannelLogoutSessionRequired": nil,
		}, map[string]any{
			"name": "", "description": "", "enabled": true, "redirectUris": []any{}, "webOrigins": []any{},
			"grantTypes": []any{"authorization_code", "refresh_token"}, "requireConsent": false, "backchannelLogoutUri": "",
			"backchannelLogoutSessionRequired": true,
		}},
		{"PUT sets a flag and empties the grants", http.MethodPut, map[string]any{"requireConsent": true, "grantTypes": []any{}},
			map[string]any{"requireConsent": true, "grantTypes": []any{}}},
		{"empty PATCH changes nothing", http.MethodPatch, map[string]any{}, nil},
	}
	for _, st := range steps {
		r := s.admin(st.method, path, st.body)
		mustStatus(t, r, http.StatusOK)
		clientsTestMustHideSecret(t, st.name, r)
		cur = cloneMap(cur, st.change)
		mustEqualJSON(t, st.name, r.object(t), cur)
		mustEqualJSON(t, st.name+" (GET)", s.clientsTestGet("acme", "Web.App_1"), cur)
	}
	// Updates never touch the secret.
	if c := s.clientsTestStored("acme", "Web.App_1"); !identity.CheckClientSecret(c, secret) {
		t.Fatal("the secret changed in an update")
	}
}

func TestClientUpdateInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.clientsTestCreate("acme", map[string]any{"clientId": "app", "redirectUris": []any{"https://app.example/cb"}})
	s.clientsTestCreate("acme", map[string]any{"clientId": "spa", "clientType": "PUBLIC"})
	before := s.clientsTestGet("acme", "app")
	cases := []struct {
		name    string
		client  string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"clientId", "app", map[string]any{"clientId": "renamed"}, nil, 400, "unknown_field", "clientId"},
		{"clientType", "app", map[string]any{"clientType": "PUBLIC"}, nil, 400, "unknown_field", "clientType"},
		{"id", "app", map[string]any{"id": "x"}, nil, 400, "unknown_field", "id"},
		{"secret", "app", map[string]any{"secret": "x"}, nil, 400, "unknown_field", "secret"},
		{"createdTimestamp", "app", map[string]any{"createdTimestamp": 1}, nil, 400, "unknown_field", "createdTimestamp"},
		{"publicClient", "app", map[string]any{"publicClient": true}, nil, 400, "unknown_field", "publicClient"},
		{"unknown beside valid", "app", map[string]any{"name": "ok", "bogus": 1}, nil, 400, "unknown_field", "bogus"},
		{"name 256", "app", map[string]any{"name": strings.Repeat("n", 256)}, nil, 400, "invalid_field", "name"},
		{"name number", "app", map[string]any{"name": 5}, nil, 400, "invalid_field", "name"},
		{"enabled string", "app", map[string]any{"enabled": "no"}, nil, 400, "invalid_field", "enabled"},
		{"redirect wildcard", "app", map[string]any{"redirectUris": []any{"https://a.example/cb", "https://*.example/cb"}}, nil, 400, "invalid_field", "redirectUris[1]"},
		{"origin path", "app", map[string]any{"webOrigins": []any{"https://a.example/x"}}, nil, 400, "invalid_field", "webOrigins[0]"},
		{"unknown grant", "app", map[string]any{"grantTypes": []any{"implicit"}}, nil, 400, "invalid_field", "grantTypes[0]"},
		{"grantTypes string", "app", map[string]any{"grantTypes": "password"}, nil, 400, "invalid_field", "grantTypes"},
		{"backchannel custom", "app", map[string]any{"backchannelLogoutUri": "ftp://x.example/"}, nil, 400, "invalid_field", "backchannelLogoutUri"},
		{"public gains client_credentials", "spa", map[string]any{"grantTypes": []any{"client_credentials"}}, nil, 400, "invalid_field", "grantTypes"},
		{"malformed", "app", `{"name":`, nil, 400, "invalid_json", ""},
		{"array", "app", `[]`, nil, 400, "invalid_json", ""},
		{"empty", "app", ``, nil, 400, "invalid_json", ""},
		{"trailing", "app", `{"name":"x"} x`, nil, 400, "invalid_json", ""},
		{"text/plain", "app", `{"name":"x"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		for _, m := range []string{http.MethodPut, http.MethodPatch} {
			t.Run(m+" "+c.name, func(t *testing.T) {
				r := s.admin(m, clientsTestClientPath("acme", c.client), c.body, c.headers...)
				mustError(t, r, c.status, c.code, c.field)
			})
		}
	}
	mustEqualJSON(t, "app after rejected updates", s.clientsTestGet("acme", "app"), before)
	if got := s.clientsTestGet("acme", "spa")["grantTypes"]; !slices.Equal(jsonNorm(t, got).([]any), []any{"authorization_code", "refresh_token"}) {
		t.Fatalf("spa grants after a rejected update %v", got)
	}
}

// clientsTestLinks names the scopes linked to a client, of either kind.
func clientsTestLinks(t *testing.T, s *testServer, realmID, clientID string) []string {
	t.Helper()
	var names []string
	for _, kind := range []string{store.ScopeDefault, store.ScopeOptional} {
		scopes, err := s.store.ListLinkedScopes(t.Context(), realmID, clientID, kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range scopes {
			names = append(names, kind+" "+c.Name)
		}
	}
	return names
}

func TestClientDelete(t *testing.T) {
	s := newTestServer(t)
	s.clientsTestBareRealm("acme")
	realmID := mustRealmID(t, s, "acme")
	scope := &store.ClientScope{ID: "e0000000-0000-4000-8000-000000000001", RealmID: realmID, Name: "profile",
		Protocol: "openid-connect"}
	if err := s.store.CreateClientScope(t.Context(), scope); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, id := range []string{"app", "keep"} {
		ids[id] = s.clientsTestCreate("acme", map[string]any{"clientId": id, "grantTypes": []any{"client_credentials"}})["id"].(string)
		role := &store.Role{ID: "role-" + id, RealmID: realmID, ClientID: ids[id], Name: "viewer"}
		if err := s.store.CreateRole(t.Context(), role); err != nil {
			t.Fatal(err)
		}
	}
	appSA := s.admin(http.MethodGet, clientsTestClientPath("acme", "app")+"/service-account-user", nil).object(t)["id"].(string)
	if links := clientsTestLinks(t, s, realmID, ids["app"]); len(links) == 0 {
		t.Fatal("the client has no scope links to lose")
	}

	r := s.admin(http.MethodDelete, clientsTestClientPath("acme", "app"), nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with body %s", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, clientsTestClientPath("acme", "app"), nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, clientsTestClientPath("acme", "app"), nil), 404, "not_found", "")
	if _, err := s.store.GetRoleByID(t.Context(), realmID, "role-app"); err == nil {
		t.Fatal("the deleted client's role remains")
	}
	if _, err := s.store.GetUser(t.Context(), realmID, appSA); err == nil {
		t.Fatal("the deleted client's service account remains")
	}
	// Its scope links went too: a client made again with its ID has none.
	again := &store.Client{ID: ids["app"], RealmID: realmID, ClientID: "app-again", ClientType: "PUBLIC", CreatedAt: 1}
	if err := s.store.CreateClient(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	if links := clientsTestLinks(t, s, realmID, ids["app"]); len(links) != 0 {
		t.Fatalf("scope links of the deleted client: %v", links)
	}
	if err := s.store.DeleteClient(t.Context(), realmID, ids["app"]); err != nil {
		t.Fatal(err)
	}
	// The other client keeps its role and service account; the clientId is free.
	if _, err := s.store.GetRoleByID(t.Context(), realmID, "role-keep"); err != nil {
		t.Fatalf("the other client's role: %v", err)
	}
	mustStatus(t, s.admin(http.MethodGet, clientsTestClientPath("acme", "keep")+"/service-account-user", nil), http.StatusOK)
	s.clientsTestCreate("acme", map[string]any{"clientId": "app", "grantTypes": []any{"client_credentials"}})
}

func TestClientServiceAccount(t *testing.T) {
	s := newTestServer(t, fixedClock)
	s.createRealm("acme")
	app := s.clientsTestCreate("acme", map[string]any{"clientId": "My.App", "grantTypes": []any{"client_credentials"}})
	if app["serviceAccountsEnabled"] != true {
		t.Fatalf("serviceAccountsEnabled %v", app["serviceAccountsEnabled"])
	}
	saPath := clientsTestClientPath("acme", "My.App") + "/service-account-user"
	r := s.admin(http.MethodGet, saPath, nil)
	mustStatus(t, r, http.StatusOK)
	sa := r.object(t)
	mustEqualJSON(t, "service account", sa, map[string]any{
		"id": sa["id"], "username": "service-account-my.app", "enabled": true, "emailVerified": false,
		"requirePasswordReset": false, "createdTimestamp": testEpoch.UnixMilli(),
	})
	u, err := s.store.GetUser(t.Context(), mustRealmID(t, s, "acme"), sa["id"].(string))
	if err != nil || u.ServiceAccountClientID != app["id"] || u.PasswordHash != "" {
		t.Fatalf("stored service account %+v %v", u, err)
	}
	// Service accounts are not people: the user list leaves them out.
	if total, names := s.listUsers("acme", ""); total != 0 {
		t.Fatalf("user list shows %v", names)
	}

	// A client without client_credentials has none.
	s.clientsTestCreate("acme", map[string]any{"clientId": "web"})
	r = s.admin(http.MethodGet, clientsTestClientPath("acme", "web")+"/service-account-user", nil)
	mustError(t, r, http.StatusNotFound, "not_found", "")
	if d := r.object(t)["error_description"].(string); !strings.Contains(d, "web") || !strings.Contains(d, "client_credentials") {
		t.Fatalf("description %q", d)
	}

	// Removing the grant deletes the account; adding it makes a new one.
	r = s.admin(http.MethodPatch, clientsTestClientPath("acme", "My.App"), map[string]any{"grantTypes": []any{"authorization_code"}})
	mustStatus(t, r, http.StatusOK)
	if r.object(t)["serviceAccountsEnabled"] != false {
		t.Fatalf("after removing the grant: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, saPath, nil), http.StatusNotFound, "not_found", "")
	if _, err := s.store.GetUser(t.Context(), mustRealmID(t, s, "acme"), sa["id"].(string)); err == nil {
		t.Fatal("the old service account remains")
	}
	mustStatus(t, s.admin(http.MethodPut, clientsTestClientPath("acme", "My.App"), map[string]any{"grantTypes": []any{"client_credentials", "refresh_token"}}), http.StatusOK)
	r = s.admin(http.MethodGet, saPath, nil)
	mustStatus(t, r, http.StatusOK)
	again := r.object(t)
	if again["username"] != "service-account-my.app" || again["id"] == sa["id"] {
		t.Fatalf("new service account %v (old %v)", again, sa["id"])
	}
	// An update that keeps the grant keeps the account.
	mustStatus(t, s.admin(http.MethodPatch, clientsTestClientPath("acme", "My.App"), map[string]any{"name": "renamed"}), http.StatusOK)
	mustEqualJSON(t, "kept service account", s.admin(http.MethodGet, saPath, nil).object(t), again)
}

func TestClientServiceAccountUsernameTaken(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "service-account-clash"})

	// Create: the whole client is refused, nothing is half made.
	r := s.admin(http.MethodPost, clientsTestPath("acme"), map[string]any{"clientId": "Clash", "grantTypes": []any{"client_credentials"}})
	mustError(t, r, http.StatusConflict, "conflict", "clientId")
	if d := r.object(t)["error_description"].(string); !strings.Contains(d, "service-account-clash") {
		t.Fatalf("description %q does not name the username", d)
	}
	if ids := s.clientsTestIDs("acme", ""); !slices.Equal(ids, []string{account.ConsoleClientID}) {
		t.Fatalf("refused create left clients %v", ids)
	}
	// Update: refused, the client keeps its grants.
	before := s.clientsTestCreate("acme", map[string]any{"clientId": "clash"})
	r = s.admin(http.MethodPatch, clientsTestClientPath("acme", "clash"), map[string]any{"grantTypes": []any{"client_credentials"}, "name": "x"})
	mustError(t, r, http.StatusConflict, "conflict", "clientId")
	mustEqualJSON(t, "client after refused update", s.clientsTestGet("acme", "clash"), cloneMap(before, map[string]any{"secret": nil}))
	mustError(t, s.admin(http.MethodGet, clientsTestClientPath("acme", "clash")+"/service-account-user", nil), 404, "not_found", "")
}

func TestClientRegenerateSecret(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	created := s.clientsTestCreate("acme", map[string]any{"clientId": "app"})
	old := created["secret"].(string)
	path := clientsTestClientPath("acme", "app") + "/regenerate-secret"

	r := s.admin(http.MethodPost, path, nil)
	mustStatus(t, r, http.StatusOK)
	got := r.object(t)
	fresh := s.clientsTestMustSecret("acme", got)
	if fresh == old {
		t.Fatal("regenerate returned the old secret")
	}
	mustEqualJSON(t, "regenerate response", got, cloneMap(s.clientsTestGet("acme", "app"), map[string]any{"secret": fresh}))
	if identity.CheckClientSecret(s.clientsTestStored("acme", "app"), old) {
		t.Fatal("the old secret still checks")
	}
	// Again, with a body: each call makes a new one.
	r = s.admin(http.MethodPost, path, map[string]any{})
	mustStatus(t, r, http.StatusOK)
	if third := s.clientsTestMustSecret("acme", r.object(t)); third == fresh {
		t.Fatal("second regenerate returned the same secret")
	}

	s.clientsTestCreate("acme", map[string]any{"clientId": "spa", "clientType": "PUBLIC"})
	r = s.admin(http.MethodPost, clientsTestClientPath("acme", "spa")+"/regenerate-secret", nil)
	mustError(t, r, http.StatusBadRequest, "invalid_request", "")
	clientsTestMustHideSecret(t, "public regenerate", r)
	if c := s.clientsTestStored("acme", "spa"); c.SecretHash != nil {
		t.Fatalf("public client got a secret hash %x", c.SecretHash)
	}
	mustError(t, s.admin(http.MethodGet, path, nil), http.StatusMethodNotAllowed, "method_not_allowed", "")
}

// clientsTestScopes makes client scopes named names in a realm, returning
// their IDs by name.
// clientsTestBareRealm makes a realm and removes the default client scopes
// it is seeded with, so the test decides every scope there is.
func (s *testServer) clientsTestBareRealm(name string) {
	s.t.Helper()
	s.createRealm(name)
	realmID := mustRealmID(s.t, s, name)
	scopes, err := s.store.ListClientScopes(s.t.Context(), realmID)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, sc := range scopes {
		if err := s.store.DeleteClientScope(s.t.Context(), realmID, sc.ID); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *testServer) clientsTestScopes(realm string, names ...string) map[string]string {
	s.t.Helper()
	ids := map[string]string{}
	realmID := s.clientsTestRealmID(realm)
	for i, n := range names {
		id := fmt.Sprintf("e0000000-0000-4000-8000-%012x", i+1)
		if realm != "acme" {
			id = "f" + id[1:]
		}
		sc := &store.ClientScope{ID: id, RealmID: realmID, Name: n, Description: "About " + n, Protocol: "openid-connect"}
		if err := s.store.CreateClientScope(s.t.Context(), sc); err != nil {
			s.t.Fatalf("create scope %s: %v", n, err)
		}
		ids[n] = id
	}
	return ids
}

// clientsTestLinked lists the names of a client's default or optional scopes.
func (s *testServer) clientsTestLinked(realm, clientID, kind string) []string {
	s.t.Helper()
	r := s.admin(http.MethodGet, clientsTestClientPath(realm, clientID)+"/"+kind+"-client-scopes", nil)
	mustStatus(s.t, r, http.StatusOK)
	var list []map[string]any
	r.decode(s.t, &list)
	if list == nil {
		s.t.Fatalf("%s scopes %s, want an array", kind, r.Body)
	}
	names := []string{}
	for _, sc := range list {
		if len(sc) != 4 || sc["id"] == nil || sc["description"] != "About "+sc["name"].(string) || sc["protocol"] != "openid-connect" {
			s.t.Fatalf("scope representation %v", sc)
		}
		names = append(names, sc["name"].(string))
	}
	return names
}

func TestClientCreateLinksRealmScopes(t *testing.T) {
	s := newTestServer(t)
	s.clientsTestBareRealm("acme")
	s.clientsTestBareRealm("bare")
	s.clientsTestScopes("acme", "profile", "email", "openid", "phone", "offline_access", "custom", "roles")
	s.clientsTestCreate("acme", map[string]any{"clientId": "app"})
	if got := s.clientsTestLinked("acme", "app", "default"); !slices.Equal(got, []string{"email", "openid", "profile", "roles"}) {
		t.Fatalf("default scopes %v", got)
	}
	if got := s.clientsTestLinked("acme", "app", "optional"); !slices.Equal(got, []string{"offline_access", "phone"}) {
		t.Fatalf("optional scopes %v", got)
	}
	// A realm without those scopes gives its clients none.
	s.clientsTestCreate("bare", map[string]any{"clientId": "app"})
	for _, kind := range []string{"default", "optional"} {
		if got := s.clientsTestLinked("bare", "app", kind); len(got) != 0 {
			t.Fatalf("%s scopes in a bare realm %v", kind, got)
		}
	}
}

func TestClientScopeLinks(t *testing.T) {
	s := newTestServer(t)
	s.clientsTestBareRealm("acme")
	s.clientsTestBareRealm("other")
	s.clientsTestCreate("acme", map[string]any{"clientId": "app"})
	ids := s.clientsTestScopes("acme", "alpha", "beta")
	foreign := s.clientsTestScopes("other", "gamma")["gamma"]
	base := clientsTestClientPath("acme", "app")

	r := s.admin(http.MethodPost, base+"/default-client-scopes", map[string]any{"clientScopeId": ids["beta"]})
	mustStatus(t, r, http.StatusCreated)
	mustEqualJSON(t, "assigned scope", r.object(t), map[string]any{
		"id": ids["beta"], "name": "beta", "description": "About beta", "protocol": "openid-connect",
	})
	r = s.admin(http.MethodPost, base+"/optional-client-scopes", map[string]any{"clientScopeId": ids["alpha"]})
	mustStatus(t, r, http.StatusCreated)
	if got := s.clientsTestLinked("acme", "app", "default"); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("default scopes %v", got)
	}
	if got := s.clientsTestLinked("acme", "app", "optional"); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("optional scopes %v", got)
	}

	for _, kind := range []string{"default", "optional"} {
		p := base + "/" + kind + "-client-scopes"
		cases := []struct {
			name    string
			body    any
			headers []string
			status  int
			code    string
			field   string
		}{
			{"already default", map[string]any{"clientScopeId": ids["beta"]}, nil, 409, "conflict", "clientScopeId"},
			{"already optional", map[string]any{"clientScopeId": ids["alpha"]}, nil, 409, "conflict", "clientScopeId"},
			{"unknown scope", map[string]any{"clientScopeId": "e0000000-0000-4000-8000-0000000000ff"}, nil, 404, "not_found", ""},
			{"scope of another realm", map[string]any{"clientScopeId": foreign}, nil, 404, "not_found", ""},
			{"missing", map[string]any{}, nil, 400, "invalid_field", "clientScopeId"},
			{"null", map[string]any{"clientScopeId": nil}, nil, 400, "invalid_field", "clientScopeId"},
			{"not a uuid", map[string]any{"clientScopeId": "alpha"}, nil, 400, "invalid_field", "clientScopeId"},
			{"uuid without hyphens", map[string]any{"clientScopeId": strings.ReplaceAll(ids["alpha"], "-", "")}, nil, 400, "invalid_field", "clientScopeId"},
			{"number", map[string]any{"clientScopeId": 1}, nil, 400, "invalid_field", "clientScopeId"},
			{"by name", map[string]any{"name": "alpha"}, nil, 400, "unknown_field", "name"},
			{"malformed", `{"clientScopeId":`, nil, 400, "invalid_json", ""},
			{"empty", ``, nil, 400, "invalid_json", ""},
			{"text/plain", `{}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		}
		for _, c := range cases {
			t.Run(kind+" "+c.name, func(t *testing.T) {
				mustError(t, s.admin(http.MethodPost, p, c.body, c.headers...), c.status, c.code, c.field)
			})
		}
		r := s.admin(http.MethodPost, p, map[string]any{"clientScopeId": "e0000000-0000-4000-8000-0000000000ff"})
		if d := r.object(t)["error_description"].(string); !strings.Contains(d, "e0000000-0000-4000-8000-0000000000ff") {
			t.Fatalf("404 description %q does not name the scope", d)
		}
	}
	if got := s.clientsTestLinked("acme", "app", "default"); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("default scopes after refusals %v", got)
	}

	// Removal must name the way the scope is assigned.
	mustError(t, s.admin(http.MethodDelete, base+"/optional-client-scopes/"+ids["beta"], nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, base+"/default-client-scopes/"+ids["alpha"], nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, base+"/default-client-scopes/nope", nil), 404, "not_found", "")
	r = s.admin(http.MethodDelete, base+"/default-client-scopes/"+ids["beta"], nil)
	mustStatus(t, r, http.StatusNoContent)
	mustError(t, s.admin(http.MethodDelete, base+"/default-client-scopes/"+ids["beta"], nil), 404, "not_found", "")
	if got := s.clientsTestLinked("acme", "app", "default"); len(got) != 0 {
		t.Fatalf("default scopes after removal %v", got)
	}
	// Once removed, it can be assigned the other way.
	mustStatus(t, s.admin(http.MethodPost, base+"/optional-client-scopes", map[string]any{"clientScopeId": ids["beta"]}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodDelete, base+"/optional-client-scopes/"+ids["alpha"], nil), http.StatusNoContent)
	if got := s.clientsTestLinked("acme", "app", "optional"); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("optional scopes at the end %v", got)
	}
	// Scopes are still there: only the links went.
	if got, err := s.store.ListClientScopes(t.Context(), mustRealmID(t, s, "acme")); err != nil || len(got) != 2 {
		t.Fatalf("realm scopes %v %v", got, err)
	}
	mustError(t, s.admin(http.MethodPost, clientsTestClientPath("acme", "nope")+"/default-client-scopes", map[string]any{"clientScopeId": ids["alpha"]}), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, clientsTestClientPath("acme", "nope")+"/optional-client-scopes/"+ids["beta"], nil), 404, "not_found", "")
}

// In a realm as created, a new client gets the seeded scopes Keycloak
// assigns: the defaults always, the optional ones on request.
func TestClientCreateLinksSeededScopes(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.clientsTestCreate("acme", map[string]any{"clientId": "app"})
	want := map[string][]string{"default": slices.Sorted(slices.Values(clients.NewClientDefaultScopes)),
		"optional": slices.Sorted(slices.Values(clients.NewClientOptionalScopes))}
	for kind, names := range want {
		var list []map[string]any
		s.admin(http.MethodGet, clientsTestClientPath("acme", "app")+"/"+kind+"-client-scopes", nil).decode(t, &list)
		var got []string
		for _, sc := range list {
			got = append(got, sc["name"].(string))
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%s scopes %v, want %v", kind, got, names)
		}
	}
}
