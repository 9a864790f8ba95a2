package app

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/scopes"
)

// TestErrorBodiesLeakNothing sends requests that fail deep down, at a
// uniqueness rule, a missing row, a foreign key, a parser, and checks that
// each answers a client error whose body shows no SQL, driver or Go text,
// in the shape of its route group (errorShape) and no other: the JSON
// error of the APIs, the OAuth error of the protocol endpoints, the HTML
// page of the hosted pages; the account answers an API caller in JSON
// and a browser with a page. Then, with the database gone, each group
// answers a fault of the server in its shape too.
func TestErrorBodiesLeakNothing(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("beta")
	webSecret := s.clientsTestCreate("acme", map[string]any{"clientId": "web", "redirectUris": []string{"https://web.test/cb"},
		"grantTypes": []string{"authorization_code", "password"}})["secret"].(string)
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})
	s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})
	aliceID := alice["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin"}), http.StatusCreated)
	staff := s.groupsTestCreate("acme", "staff", "")["id"].(string)
	ops := s.groupsTestCreate("acme", "ops", "")["id"].(string)
	apiScope := scopesTestCreate(t, s, map[string]any{"name": "api", "protocolMappers": []any{
		map[string]any{"name": "full name", "mapperType": scopes.MapperFullName}}})["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients/web/optional-client-scopes",
		map[string]any{"clientScopeId": apiScope}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/realms/acme/registration/admin/fields",
		map[string]any{"key": "nick", "label": "Nick", "type": "text"}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/organizations",
		map[string]any{"slug": "acme-corp", "name": "Acme Corp"}), http.StatusCreated)
	export := s.admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=true", nil)
	mustStatus(t, export, http.StatusOK)
	renamed := export.object(t)
	renamed["name"] = "gamma"
	newID := func(doc map[string]any) map[string]any { doc["id"] = uuid.NewString(); return doc }

	form := "Content-Type: application/x-www-form-urlencoded"
	bearer := "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"
	webBasic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("web:"+webSecret))
	grant := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&username=alice&password=correct+horse+1", form, webBasic)
	mustStatus(t, grant, http.StatusOK)
	alicesToken := "Authorization: Bearer " + grant.object(t)["access_token"].(string)
	html := "Accept: text/html"
	r := s.admin(http.MethodPost, "/admin/realms/acme/scim/tokens", map[string]any{"name": "provisioning"})
	mustStatus(t, r, http.StatusCreated)
	scimToken := "Authorization: Bearer " + r.object(t)["token"].(string)
	const api, oauth, page, scim = apiShape, oauthShape, pageShape, scimShape
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		headers      []string
		public       bool // sent without the admin key
		shape        errorShape
	}{
		{"duplicate realm", http.MethodPost, "/admin/realms", map[string]any{"name": "acme"}, nil, false, api},
		{"duplicate username", http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"}, nil, false, api},
		{"duplicate email", http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "al", "email": "alice@example.test"}, nil, false, api},
		{"email taken on update", http.MethodPut, "/admin/realms/acme/users/" + aliceID, map[string]any{"email": "bob@example.test"}, nil, false, api},
		{"unknown user", http.MethodGet, "/admin/realms/acme/users/" + uuid.NewString(), nil, nil, false, api},
		{"malformed user id", http.MethodGet, "/admin/realms/acme/users/'%20OR%201=1--", nil, nil, false, api},
		{"duplicate client", http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}, nil, false, api},
		{"scope linked twice", http.MethodPost, "/admin/realms/acme/clients/web/default-client-scopes",
			map[string]any{"clientScopeId": apiScope}, nil, false, api},
		{"unknown scope linked", http.MethodPost, "/admin/realms/acme/clients/web/default-client-scopes",
			map[string]any{"clientScopeId": uuid.NewString()}, nil, false, api},
		{"duplicate role", http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin"}, nil, false, api},
		{"unknown role mapped", http.MethodPost, "/admin/realms/acme/users/" + aliceID + "/role-mappings/realm",
			map[string]any{"roleNames": []string{"nope"}}, nil, false, api},
		{"role includes itself", http.MethodPost, rolesPath("acme") + "/admin/composites",
			map[string]any{"roleNames": []string{"admin"}}, nil, false, api},
		{"duplicate group", http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"}, nil, false, api},
		{"group renamed to a sibling's name", http.MethodPut, "/admin/realms/acme/groups/" + ops, map[string]any{"name": "staff"}, nil, false, api},
		{"group moved under itself", http.MethodPost, "/admin/realms/acme/groups/" + staff + "/children", map[string]any{"id": staff}, nil, false, api},
		{"unknown group joined", http.MethodPut, "/admin/realms/acme/users/" + aliceID + "/groups/" + uuid.NewString(), nil, nil, false, api},
		{"duplicate scope", http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": "api"}, nil, false, api},
		{"scope renamed to a taken name", http.MethodPut, "/admin/realms/acme/client-scopes/" + apiScope, map[string]any{"name": "profile"}, nil, false, api},
		{"duplicate mapper", http.MethodPost, "/admin/realms/acme/client-scopes/" + apiScope + "/protocol-mappers",
			map[string]any{"name": "full name", "mapperType": scopes.MapperFullName}, nil, false, api},
		{"duplicate registration field", http.MethodPost, "/realms/acme/registration/admin/fields",
			map[string]any{"key": "nick", "label": "Nick", "type": "text"}, nil, false, api},
		{"import of a renamed export", http.MethodPost, "/admin/realms/import", renamed, nil, false, api},
		{"import whose resources keep their IDs", http.MethodPost, "/admin/realms/import", newID(export.object(t)), nil, false, api},
		{"import over a realm of that name", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "acme"}, nil, false, api},
		{"import with a user id of another realm", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1,
			"id": uuid.NewString(), "name": "delta", "users": []any{map[string]any{"id": aliceID, "username": "x"}}}, nil, false, api},
		{"import with a group listed twice", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "delta",
			"groups": []any{map[string]any{"id": staff, "name": "a"}, map[string]any{"id": staff, "name": "b"}}}, nil, false, api},
		{"import with a role cycle", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "delta",
			"roles": map[string]any{"realm": []any{
				map[string]any{"name": "a", "composites": map[string]any{"realmRoles": []string{"b"}}},
				map[string]any{"name": "b", "composites": map[string]any{"realmRoles": []string{"a"}}}}}}, nil, false, api},
		{"import of a realm id that is not a UUID", http.MethodPost, "/admin/realms/import",
			map[string]any{"formatVersion": 1, "id": "x' OR 1=1", "name": "delta"}, nil, false, api},
		{"malformed JSON", http.MethodPost, "/admin/realms/acme/users", `{"username": `, nil, false, api},
		{"wrong JSON type", http.MethodPost, "/admin/realms/acme/users", `{"username": {"$ne": 1}}`, nil, false, api},
		{"NUL in a path", http.MethodGet, "/admin/realms/acme/users/%00", nil, nil, false, api},
		{"unknown realm", http.MethodGet, "/admin/realms/nope", nil, nil, false, api},
		{"body too large", http.MethodPost, "/admin/realms/acme/users", `{"username":"` + strings.Repeat("a", 2<<20) + `"}`, nil, false, api},
		{"token: unknown grant", http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=nope&client_id=web",
			[]string{form}, true, oauth},
		{"token: forged code", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=authorization_code&code=x'%3B--&client_id=web&redirect_uri=https://web.test/cb", []string{form}, true, oauth},
		{"token: forged refresh token", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=refresh_token&refresh_token=%00%01&client_id=web", []string{form}, true, oauth},
		{"token: password for a client without a secret", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=password&username=alice&password=x&client_id=web", []string{form}, true, oauth},
		{"userinfo with a forged token", http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, []string{bearer}, true, oauth},
		{"account API with a forged token", http.MethodGet, "/realms/acme/account/", nil, []string{bearer, "Accept: application/json"}, true, api},
		{"logout with a forged hint", http.MethodGet, "/realms/acme/protocol/openid-connect/logout?id_token_hint=a.b.c", nil, nil, true, page},
		{"authorize for an unknown client", http.MethodGet, "/realms/acme/protocol/openid-connect/auth?client_id=%00&response_type=code", nil, nil, true, page},
		{"protocol path of an unknown realm", http.MethodGet, "/realms/nope/.well-known/openid-configuration", nil, nil, true, oauth},
		{"registration with a taken username", http.MethodPost, "/realms/acme/registration/register",
			map[string]any{"username": "alice", "email": "new@example.test", "password": "a long password 1"}, nil, true, api},
		{"verify-email with a forged token", http.MethodPost, "/realms/acme/registration/verify-email",
			map[string]any{"token": "x' OR 1=1"}, nil, true, api},
		{"duplicate organization", http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": "acme-corp", "name": "A"}, nil, false, api},
		{"unknown organization", http.MethodGet, "/admin/realms/acme/organizations/nope", nil, nil, false, api},
		{"sso connection to an unknown provider", http.MethodPost, "/admin/realms/acme/organizations/acme-corp/sso-connections",
			map[string]any{"identityProvider": "nope"}, nil, false, api},
		{"unknown sso connection", http.MethodGet, "/admin/realms/acme/organizations/acme-corp/sso-connections/" + uuid.NewString(), nil, nil, false, api},
		{"invitation accepted with a forged token", http.MethodPost, "/admin/realms/acme/organizations/acme-corp/invitations/x/accept",
			nil, []string{alicesToken}, true, api},
		{"events with a malformed date", http.MethodGet, "/admin/realms/acme/events?dateFrom=yesterday", nil, nil, false, api},
		{"user federation: a bad provider", http.MethodPost, "/admin/realms/acme/user-federation",
			map[string]any{"name": "x", "providerType": "ldap", "connectionUrl": "ldap://'%00"}, nil, false, api},
		{"user federation: unknown provider", http.MethodPost, "/admin/realms/acme/user-federation/" + uuid.NewString() + "/sync", nil, nil, false, api},
		{"identity named as a taken clientId", http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "service", "name": "web"}, nil, false, api},
		{"identity of an unknown kind", http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "robot", "name": "r2"}, nil, false, api},
		{"unknown identity", http.MethodGet, "/admin/realms/acme/nhi/" + uuid.NewString(), nil, nil, false, api},
		{"API key of an unknown service account", http.MethodPost, "/admin/realms/acme/service-accounts/" + uuid.NewString() + "/api-keys",
			map[string]any{}, nil, false, api},
		{"token with a forged client assertion", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=client_credentials&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=a.b.c",
			[]string{form}, true, oauth},

		// The account: JSON to an API caller, pages to a browser.
		{"account API: an email another account holds", http.MethodPost, "/realms/acme/account/profile",
			map[string]any{"email": "bob@example.test"}, []string{alicesToken}, true, api},
		{"account API: a field it does not take", http.MethodPost, "/realms/acme/account/profile",
			map[string]any{"nick": "x"}, []string{alicesToken}, true, api},
		{"account API: a wrong current password", http.MethodPost, "/realms/acme/account/password",
			map[string]any{"currentPassword": "wrong", "newPassword": "another long password 2", "confirmation": "another long password 2"},
			[]string{alicesToken}, true, api},
		{"account API: no TOTP to remove", http.MethodPost, "/realms/acme/account/totp-disable",
			map[string]any{"code": "123456"}, []string{alicesToken}, true, api},
		{"account API: no deletion to cancel", http.MethodPost, "/realms/acme/account/cancel-delete-account", nil,
			[]string{alicesToken}, true, api},
		{"account API: a page of the browser alone", http.MethodGet, "/realms/acme/account/webauthn/credentials/add", nil,
			[]string{alicesToken}, true, api},
		{"account API without a token", http.MethodGet, "/realms/acme/account/", nil, []string{"Accept: application/json"}, true, api},
		{"account API of an unknown realm", http.MethodGet, "/realms/nope/account/", nil, []string{bearer}, true, api},
		{"account page of an unknown realm", http.MethodGet, "/realms/nope/account/", nil, []string{html}, true, page},
		{"account page back from a failed sign-in", http.MethodGet, "/realms/acme/account/?code=x&state=y", nil,
			[]string{html}, true, page},

		// The hosted pages.
		{"login page of an unknown realm", http.MethodGet, "/realms/nope/login?authRequestID=x", nil, []string{html}, true, page},
		{"login form of a stale request", http.MethodPost, "/realms/acme/login", "authRequestID=nope&username=a&password=b",
			[]string{form}, true, page},
		{"consent form of a stale request", http.MethodPost, "/realms/acme/consent", "authRequestID=nope", []string{form}, true, page},
		{"reset-password with a forged link", http.MethodGet, "/realms/acme/reset-password?token=x'%20OR%201=1", nil, nil, true, page},
		{"device page of an unknown realm", http.MethodGet, "/realms/nope/device", nil, nil, true, page},

		// Identity brokering: pages, but the kept tokens' JSON.
		{"broker login of an unknown provider", http.MethodGet, "/realms/acme/broker/nope/login?authRequestID=x'%3B--", nil, nil, true, page},
		{"broker callback with a forged state", http.MethodGet, "/realms/acme/broker/nope/callback?state=%00&code=x", nil, nil, true, page},
		{"broker link page without a link", http.MethodPost, "/realms/acme/broker/nope/link", "id=x&password=y", []string{form}, true, page},
		{"broker tokens with a forged token", http.MethodGet, "/realms/acme/broker/nope/token", nil, []string{bearer}, true, api},
		{"identity provider of an unknown type", http.MethodPost, "/admin/realms/acme/identity-providers",
			map[string]any{"alias": "x", "providerType": "x' OR 1=1", "clientId": "c", "clientSecret": "s"}, nil, false, api},

		// WebAuthn and step-up: JSON, but a browser's form post gets pages.
		{"WebAuthn API without a sign-in", http.MethodPost, "/realms/acme/webauthn/register/options", nil, nil, true, api},
		{"WebAuthn API with a forged token", http.MethodPost, "/realms/acme/webauthn/register/options", nil, []string{bearer}, true, api},
		{"WebAuthn API of an unknown realm", http.MethodPost, "/realms/nope/webauthn/authenticate/options", nil, nil, true, api},
		{"WebAuthn form of a stale sign-in", http.MethodPost, "/realms/acme/webauthn/authenticate/verify",
			"authRequestID=nope&ceremonyId=x&credential=%7B%7D", []string{form}, true, page},
		{"step-up without a token", http.MethodGet, "/realms/acme/step-up/challenge", nil, nil, true, api},
		{"step-up with a forged token", http.MethodGet, "/realms/acme/step-up/challenge", nil, []string{bearer}, true, api},

		// The OpenID Connect endpoints, also where the library is not asked.
		{"token: body too large", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=client_credentials&x=" + strings.Repeat("a", 2<<20), []string{form}, true, oauth},
		{"token: a parameter twice", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=client_credentials&grant_type=password", []string{form, webBasic}, true, oauth},
		{"token: the client secret in the URL", http.MethodPost, "/realms/acme/protocol/openid-connect/token?client_secret=x",
			"grant_type=client_credentials&client_id=web", []string{form}, true, oauth},
		{"token in an unknown realm", http.MethodPost, "/realms/nope/protocol/openid-connect/token",
			"grant_type=password&client_id=x&username=a&password=b", []string{form}, true, oauth},
		{"introspection without client credentials", http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect",
			"token=x", []string{form}, true, oauth},

		// The SAML identity provider: pages where no service provider can be answered.
		{"SAML descriptor of an unknown realm", http.MethodGet, "/realms/nope/protocol/saml/descriptor", nil, nil, true, page},
		{"SAML endpoint without a request", http.MethodGet, "/realms/acme/protocol/saml", nil, nil, true, page},
		{"SAML request that is not base64", http.MethodPost, "/realms/acme/protocol/saml", "SAMLRequest=%25%25", []string{form}, true, page},
		{"SAML request of an unknown SP", http.MethodPost, "/realms/acme/protocol/saml", "SAMLRequest=" + url.QueryEscape(base64.StdEncoding.EncodeToString(
			[]byte(`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="x" Version="2.0"><saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">nope</saml:Issuer></samlp:AuthnRequest>`))),
			[]string{form}, true, page},
		{"SAML sign-in return of a stale request", http.MethodGet, "/realms/acme/protocol/saml?state=x&code=y", nil, nil, true, page},

		// SCIM: SCIM errors (RFC 7644 §3.12).
		{"SCIM without a token", http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", nil, nil, true, scim},
		{"SCIM with a forged token", http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", nil, []string{bearer}, true, scim},
		{"SCIM token of another realm", http.MethodGet, "/scim/v2/beta/ServiceProviderConfig", nil, []string{scimToken}, true, scim},
		{"SCIM token admin: duplicate name", http.MethodPost, "/admin/realms/acme/scim/tokens", map[string]any{"name": "provisioning"},
			nil, false, api},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *testResponse
			if tc.public {
				r = s.request(tc.method, tc.path, tc.body, tc.headers...)
			} else {
				r = s.admin(tc.method, tc.path, tc.body, tc.headers...)
			}
			if r.Status < 400 || r.Status >= 500 {
				t.Fatalf("status %d, want a client error; body: %.300s", r.Status, r.Body)
			}
			mustErrorShape(t, r, tc.shape)
		})
	}
	// Nothing refused above was half-written.
	if names := s.realmNames(); strings.Join(names, ",") != "acme,beta" {
		t.Fatalf("realms %v", names)
	}

	// A fault of the server: every read and write now fails.
	s.store.Close()
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		headers      []string
		shape        errorShape
	}{
		{"admin API", http.MethodGet, "/admin/realms/acme/users", nil, []string{"X-Admin-API-Key: " + testAPIKey}, api},
		{"token", http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
			[]string{form, webBasic}, oauth},
		{"discovery of a realm not read yet", http.MethodGet, "/realms/beta/.well-known/openid-configuration", nil, nil, oauth},
		{"account page", http.MethodGet, "/realms/acme/account/", nil, []string{html}, page},
		{"login page", http.MethodGet, "/realms/acme/login?authRequestID=x", nil, []string{html}, page},
		{"device page", http.MethodGet, "/realms/acme/device?user_code=BCDF-GHJK", nil, []string{html}, page},
		{"WebAuthn API", http.MethodPost, "/realms/acme/webauthn/authenticate/options", map[string]any{}, nil, api},
		{"SAML descriptor", http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil, nil, page},
		{"SAML request", http.MethodPost, "/realms/acme/protocol/saml", "SAMLRequest=" + url.QueryEscape(base64.StdEncoding.EncodeToString(
			[]byte(`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="x" Version="2.0"><saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">sp</saml:Issuer></samlp:AuthnRequest>`))),
			[]string{form}, page},
		{"SCIM", http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", nil, []string{scimToken}, scim},
	} {
		t.Run("fault: "+tc.name, func(t *testing.T) {
			r := s.request(tc.method, tc.path, tc.body, tc.headers...)
			if r.Status < 500 {
				t.Fatalf("status %d with the database gone; body: %.300s", r.Status, r.Body)
			}
			mustErrorShape(t, r, tc.shape)
			switch tc.shape {
			case apiShape:
				if string(r.Body) != errTestInternalBody {
					t.Fatalf("body %s, want %s", r.Body, errTestInternalBody)
				}
			case oauthShape:
				if e := r.object(t); e["error"] != "server_error" || e["error_description"] != "internal server error" {
					t.Fatalf("body %s, want a bare server_error", r.Body)
				}
			case scimShape:
				if e := r.object(t); e["status"] != "500" || e["detail"] != "internal server error" {
					t.Fatalf("body %s, want a bare SCIM error", r.Body)
				}
			}
		})
	}
}

// errorShape is the shape a route group answers its errors in.
type errorShape int

const (
	apiShape   errorShape = iota // docs/api-errors.md: a code of package apperr, with a status it is documented with
	oauthShape                   // RFC 6749 §5.2 and RFC 6750 §3.1
	pageShape                    // an HTML page
	scimShape                    // RFC 7644 §3.12, application/scim+json
)

// oauthErrorCodes are the error codes of OAuth 2.0 and its extensions the
// protocol endpoints answer with, and not_found for a path of no realm.
var oauthErrorCodes = []string{"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
	"unsupported_grant_type", "invalid_scope", "server_error", "temporarily_unavailable", "invalid_token",
	"insufficient_scope", "authorization_pending", "slow_down", "expired_token", "access_denied", "not_found"}

// mustErrorShape checks that r answers an error in shape and in no other,
// and shows no SQL, driver or Go text.
func mustErrorShape(t *testing.T, r *testResponse, shape errorShape) {
	t.Helper()
	body := strings.ToLower(string(r.Body))
	for _, leak := range []string{"sql:", "constraint", "sqlite", ".go:", "panic", "goroutine", "foreign key", "database is closed"} {
		if strings.Contains(body, leak) {
			t.Fatalf("body shows %q: %.500s", leak, r.Body)
		}
	}
	ct := r.Header.Get("Content-Type")
	if shape == scimShape {
		mustSCIMErrorShape(t, r)
		return
	}
	if shape == pageShape {
		if !strings.HasPrefix(ct, "text/html") || !strings.HasPrefix(strings.TrimSpace(body), "<!doctype html") {
			t.Fatalf("%d %s, want an HTML page: %.300s", r.Status, ct, r.Body)
		}
		return
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%d %s, want a JSON error: %.300s", r.Status, ct, r.Body)
	}
	var e map[string]any
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%d: body is no JSON object: %.300s", r.Status, r.Body)
	}
	code, _ := e["error"].(string)
	if d, _ := e["error_description"].(string); d == "" {
		t.Fatalf("%d: no error_description: %s", r.Status, r.Body)
	}
	for k := range e {
		if k != "error" && k != "error_description" && (shape != apiShape || k != "field") {
			t.Fatalf("%d: error body has %q: %s", r.Status, k, r.Body)
		}
	}
	if shape == oauthShape {
		if !slices.Contains(oauthErrorCodes, code) {
			t.Fatalf("%d: %q is no OAuth error: %s", r.Status, code, r.Body)
		}
		return
	}
	for _, c := range apperr.Codes {
		if string(c.Code) == code && slices.Contains(c.Statuses, r.Status) {
			return
		}
	}
	t.Fatalf("%d: %q is no code of the API answered with this status: %s", r.Status, code, r.Body)
}

// scimTypes are RFC 7644 §3.12's scimType values.
var scimTypes = []string{"invalidFilter", "tooMany", "uniqueness", "mutability", "invalidSyntax", "invalidPath", "noTarget",
	"invalidValue", "invalidVers", "sensitive"}

// mustSCIMErrorShape checks a SCIM error: its media type, its schema, its
// status as a string equal to the answer's, a scimType of the RFC's if
// any, a detail, and nothing else.
func mustSCIMErrorShape(t *testing.T, r *testResponse) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/scim+json" {
		t.Fatalf("%d %s, want a SCIM error: %.300s", r.Status, ct, r.Body)
	}
	var e map[string]any
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%d: body is no JSON object: %.300s", r.Status, r.Body)
	}
	if s, _ := e["schemas"].([]any); len(s) != 1 || s[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
		t.Fatalf("%d: schemas %v", r.Status, e["schemas"])
	}
	if e["status"] != strconv.Itoa(r.Status) {
		t.Fatalf("%d: status %v", r.Status, e["status"])
	}
	if d, _ := e["detail"].(string); d == "" {
		t.Fatalf("%d: no detail: %s", r.Status, r.Body)
	}
	if typ, ok := e["scimType"]; ok && !slices.Contains(scimTypes, typ.(string)) {
		t.Fatalf("%d: scimType %v", r.Status, typ)
	}
	for k := range e {
		if !slices.Contains([]string{"schemas", "status", "scimType", "detail"}, k) {
			t.Fatalf("%d: error body has %q: %s", r.Status, k, r.Body)
		}
	}
}
