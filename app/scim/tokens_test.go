package scim_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

const tokensPath = "/admin/realms/acme/scim/tokens"

func TestTokenCreateShownOnce(t *testing.T) {
	s := newServer(t)
	created := s.createToken("acme", "entra")
	cred, _ := created["token"].(string)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(cred, id+".") || len(cred) < len(id)+40 {
		t.Fatalf("credential %q of token %q", cred, id)
	}
	if created["status"] != "active" || created["enabled"] != true || created["useCount"] != 0.0 || created["name"] != "entra" {
		t.Fatalf("created %v", created)
	}
	for _, path := range []string{tokensPath, tokensPath + "/" + id} {
		r := s.Admin(http.MethodGet, path, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.Body), cred[len(id)+1:]) || strings.Contains(string(r.Body), `"token"`) {
			t.Fatalf("GET %s shows the credential: %s", path, r.Body)
		}
	}
	// Nothing of the secret is stored as it is.
	tok, err := s.Store.GetSCIMToken(t.Context(), s.Realm("acme").ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tok.SecretHash), cred[len(id)+1:]) || len(tok.SecretHash) != 32 {
		t.Fatalf("stored secret %x", tok.SecretHash)
	}
}

func TestTokenCreateRefused(t *testing.T) {
	s := newServer(t)
	s.createToken("acme", "okta")
	past := s.clock.Now().Add(-time.Minute).UnixMilli()
	for _, tc := range []struct {
		name        string
		body        any
		status      int
		code, field string
	}{
		{"no name", map[string]any{}, 400, "invalid_field", "name"},
		{"name with a control character", map[string]any{"name": "a\x00b"}, 400, "invalid_field", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 101)}, 400, "invalid_field", "name"},
		{"taken name", map[string]any{"name": "okta"}, 409, "conflict", "name"},
		{"expiry in the past", map[string]any{"name": "x", "expiresAt": past}, 400, "invalid_field", "expiresAt"},
		{"unknown field", map[string]any{"name": "x", "secret": "mine"}, 400, "unknown_field", "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, tokensPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/nope/scim/tokens", map[string]any{"name": "x"}),
		http.StatusNotFound, "not_found", "")
	var list []map[string]any
	r := s.Admin(http.MethodGet, tokensPath, nil)
	r.Decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("tokens after the refusals: %s", r.Body)
	}
}

// A SCIM request authenticates with a token of its realm that is neither
// revoked, disabled nor expired; anything else is a 401 SCIM error.
func TestTokenAuthentication(t *testing.T) {
	s := newServer(t)
	s.CreateRealm("beta")
	good := s.createToken("acme", "good")["token"].(string)
	other := s.createToken("beta", "other")["token"].(string)
	revoked := s.createToken("acme", "revoked")
	disabled := s.createToken("acme", "disabled")
	r := s.Admin(http.MethodPost, tokensPath, map[string]any{"name": "expiring", "expiresAt": s.clock.Now().Add(time.Hour).UnixMilli()})
	apptest.MustStatus(t, r, http.StatusCreated)
	expiring := r.Object(t)["token"].(string)
	apptest.MustStatus(t, s.Admin(http.MethodPut, tokensPath+"/"+revoked["id"].(string)+"/revoke", nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPut, tokensPath+"/"+disabled["id"].(string)+"/disable", nil), http.StatusOK)
	const spc = "/scim/v2/acme/ServiceProviderConfig"
	apptest.MustStatus(t, s.scim(http.MethodGet, spc, good, nil), http.StatusOK)
	apptest.MustStatus(t, s.scim(http.MethodGet, spc, expiring, nil), http.StatusOK)
	s.clock.Advance(time.Hour)

	id, secret, _ := strings.Cut(good, ".")
	for _, tc := range []struct {
		name   string
		header string
	}{
		{"no credential", ""},
		{"basic scheme", "Authorization: Basic " + good},
		{"empty bearer", "Authorization: Bearer "},
		{"no dot", "Authorization: Bearer " + id + secret},
		{"wrong secret", "Authorization: Bearer " + id + "." + strings.ToUpper(secret)},
		{"unknown id", "Authorization: Bearer 00000000-0000-4000-8000-000000000000." + secret},
		{"huge", "Authorization: Bearer " + good + strings.Repeat("a", 10000)},
		{"another realm's token", "Authorization: Bearer " + other},
		{"revoked", "Authorization: Bearer " + revoked["token"].(string)},
		{"disabled", "Authorization: Bearer " + disabled["token"].(string)},
		{"expired", "Authorization: Bearer " + expiring},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.header != "" {
				headers = append(headers, tc.header)
			}
			r := s.Request(http.MethodGet, spc, nil, headers...)
			mustSCIMError(t, r, http.StatusUnauthorized, "")
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
	// The other realm's token opens its own realm, and the discovery
	// endpoints outside any realm.
	apptest.MustStatus(t, s.scim(http.MethodGet, "/scim/v2/beta/ServiceProviderConfig", other, nil), http.StatusOK)
	apptest.MustStatus(t, s.scim(http.MethodGet, "/scim/v2/ServiceProviderConfig", other, nil), http.StatusOK)
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/ServiceProviderConfig", "", nil), http.StatusUnauthorized, "")
	// A token of a disabled realm opens nothing.
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/beta", map[string]any{"enabled": false}), http.StatusOK)
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/beta/ServiceProviderConfig", other, nil), http.StatusUnauthorized, "")
}

// Each accepted request counts, with its time; refused ones do not.
func TestTokenUse(t *testing.T) {
	s := newServer(t)
	created := s.createToken("acme", "entra")
	cred, id := created["token"].(string), created["id"].(string)
	for range 3 {
		s.clock.Advance(time.Minute)
		apptest.MustStatus(t, s.scim(http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", cred, nil), http.StatusOK)
	}
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", id+".wrong", nil), http.StatusUnauthorized, "")
	got := s.Admin(http.MethodGet, tokensPath+"/"+id, nil).Object(t)
	if got["useCount"] != 3.0 || got["lastUsedAt"] != float64(s.clock.Now().UnixMilli()) {
		t.Fatalf("after three uses: %v", got)
	}
}

func TestTokenStates(t *testing.T) {
	s := newServer(t)
	created := s.createToken("acme", "entra")
	cred, one := created["token"].(string), tokensPath+"/"+created["id"].(string)
	const spc = "/scim/v2/acme/ServiceProviderConfig"
	for _, step := range []struct {
		method, path string
		status       int
		state        string // the token's status after the step
		works        bool
	}{
		{http.MethodPut, one + "/disable", 200, "disabled", false},
		{http.MethodPut, one + "/disable", 200, "disabled", false},
		{http.MethodPut, one + "/enable", 200, "active", true},
		{http.MethodPut, one + "/revoke", 200, "revoked", false},
		{http.MethodPut, one + "/enable", 409, "revoked", false},
		{http.MethodPut, one + "/revoke", 200, "revoked", false},
	} {
		r := s.Admin(step.method, step.path, nil)
		apptest.MustStatus(t, r, step.status)
		if got := s.Admin(http.MethodGet, one, nil).Object(t)["status"]; got != step.state {
			t.Fatalf("%s %s: status %v, want %s", step.method, step.path, got, step.state)
		}
		if works := s.scim(http.MethodGet, spc, cred, nil).Status == http.StatusOK; works != step.works {
			t.Fatalf("%s %s: the token works: %v", step.method, step.path, works)
		}
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, one, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, one, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, one, nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodPut, tokensPath+"/nope/enable", nil), http.StatusNotFound, "not_found", "")
	mustSCIMError(t, s.scim(http.MethodGet, spc, cred, nil), http.StatusUnauthorized, "")
}

// A token left by a deleted and recreated realm opens nothing.
func TestTokenGoesWithItsRealm(t *testing.T) {
	s := newServer(t)
	cred := s.createToken("acme", "entra")["token"].(string)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	s.CreateRealm("acme")
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/ServiceProviderConfig", cred, nil), http.StatusUnauthorized, "")
}

func TestStatus(t *testing.T) {
	p := newProvisioner(t)
	s := p.server
	s.createToken("acme", "spare")
	disabled := s.createToken("acme", "off")
	apptest.MustStatus(t, s.Admin(http.MethodPut, tokensPath+"/"+disabled["id"].(string)+"/disable", nil), http.StatusOK)
	const status = "/admin/realms/acme/scim/status"
	got := s.Admin(http.MethodGet, status, nil).Object(t)
	if got["users"] != 0.0 || got["lastRequestAt"] != nil || len(got["recentErrors"].([]any)) != 0 {
		t.Fatalf("status before any request: %v", got)
	}
	p.clock.Advance(time.Minute)
	p.create(userBody("alice"))
	apptest.MustStatus(t, p.do(http.MethodPost, "/Groups", map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"}, "displayName": "staff"}), http.StatusCreated)
	p.CreateUser("acme", map[string]any{"username": "admin-made"})
	mustSCIMError(t, p.do(http.MethodPost, "/Users", userBody("alice")), http.StatusConflict, "uniqueness")
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/Users", "", nil), http.StatusUnauthorized, "")
	got = s.Admin(http.MethodGet, status, nil).Object(t)
	tokens := got["tokens"].(map[string]any)
	if tokens["total"] != 3.0 || tokens["active"] != 2.0 || tokens["disabled"] != 1.0 || got["users"] != 1.0 ||
		got["groups"] != 1.0 || got["lastRequestAt"] != float64(p.clock.Now().UnixMilli()) {
		t.Fatalf("status %v", got)
	}
	errs := got["recentErrors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["status"] != 409.0 || errs[0].(map[string]any)["scimType"] != "uniqueness" {
		t.Fatalf("recent errors %v", errs)
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/scim/status", nil), http.StatusNotFound, "not_found", "")
}
