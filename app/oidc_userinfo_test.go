package app

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/idenplane/idenplane/store"
)

const userinfoTestPath = "/realms/acme/protocol/openid-connect/userinfo"

// userinfoTestGrant is a grant for a user of acme to client web with the
// scopes named, as the token endpoint would resolve it.
func userinfoTestGrant(t *testing.T, s *oidcTestServer, username string, scopes ...string) *tokenGrant {
	t.Helper()
	ctx := t.Context()
	realm, err := s.store.GetRealm(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	client, err := s.store.GetClientByClientID(ctx, realm.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	user, err := s.store.GetUserByUsername(ctx, realm.ID, username)
	if err != nil {
		t.Fatal(err)
	}
	g := &tokenGrant{realm: realm, client: client, user: user, authTime: s.app.now()}
	for _, kind := range []string{store.ScopeDefault, store.ScopeOptional} {
		linked, err := s.store.ListLinkedScopes(ctx, realm.ID, client.ID, kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range linked {
			if slices.Contains(scopes, sc.Name) {
				g.scopes = append(g.scopes, sc)
			}
		}
	}
	if len(g.scopes) != len(scopes) {
		t.Fatalf("client web has not all of the scopes %v", scopes)
	}
	return g
}

// userinfoTestMint mints an access token the way the grants do.
func userinfoTestMint(t *testing.T, s *oidcTestServer, username string, scopes ...string) string {
	t.Helper()
	token, _, _, err := s.app.accessToken(t.Context(), userinfoTestGrant(t, s, username, scopes...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// userinfoTestServer serves realms acme and other, each with the machine
// client reports; acme also has client web and users alice, bob and carol.
func userinfoTestServer(t *testing.T, clock *deviceTestClock) (s *oidcTestServer, secret, otherSecret string) {
	t.Helper()
	s = newOIDCTestServer(t, func(c *Config) { c.Now = clock.now })
	s.createRealm("acme")
	s.createRealm("other")
	secret = s.machineClient(t, "acme", "reports")
	otherSecret = s.machineClient(t, "other", "reports")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	for _, u := range []string{"alice", "bob", "carol"} {
		s.createUser("acme", map[string]any{"username": u, "email": u + "@acme.test", "emailVerified": true,
			"firstName": strings.ToUpper(u[:1]) + u[1:], "lastName": "Liddell"})
	}
	return s, secret, otherSecret
}

func userinfoTestCC(t *testing.T, s *oidcTestServer, realm, secret string, scopes ...string) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret, Scopes: scopes,
		TokenURL: s.issuer(realm) + "/protocol/openid-connect/token"}
	tok, err := cfg.Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// userinfoTestAsk calls userinfo the three ways RFC 6750 §2 allows a
// client to present the token and checks that they agree.
func userinfoTestAsk(t *testing.T, s *oidcTestServer, token string) map[string]any {
	t.Helper()
	form := "Content-Type: application/x-www-form-urlencoded"
	var first map[string]any
	for i, r := range []*testResponse{
		s.request(http.MethodGet, userinfoTestPath, nil, "Authorization: Bearer "+token),
		s.request(http.MethodPost, userinfoTestPath, "", "Authorization: Bearer "+token, form),
		s.request(http.MethodPost, userinfoTestPath, "access_token="+url.QueryEscape(token), form),
	} {
		mustStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("userinfo headers %v", r.Header)
		}
		got := r.object(t)
		if i == 0 {
			first = got
		} else if !slices.Equal(sortedKeys(got), sortedKeys(first)) {
			t.Fatalf("userinfo way %d answered %v, the first %v", i, got, first)
		}
	}
	return first
}

func TestOIDCUserinfoServiceAccount(t *testing.T) {
	s, secret, _ := userinfoTestServer(t, newDeviceTestClock(0))
	sa := s.admin(http.MethodGet, "/admin/realms/acme/clients/reports/service-account-user", nil).object(t)
	got := userinfoTestAsk(t, s, userinfoTestCC(t, s, "acme", secret))
	// profile is a default scope of the client: its username claim comes;
	// roles are in access tokens only.
	if got["sub"] != sa["id"] || got["preferred_username"] != "service-account-reports" || got["realm_access"] != nil {
		t.Fatalf("userinfo of the service account: %v", got)
	}
}

func TestOIDCUserinfoClaimsByScope(t *testing.T) {
	s, _, _ := userinfoTestServer(t, newDeviceTestClock(0))
	alice := userinfoTestGrant(t, s, "alice").user
	for _, c := range []struct {
		scopes []string
		want   map[string]any
	}{
		{[]string{"openid"}, map[string]any{"sub": alice.ID}},
		{[]string{"openid", "email"}, map[string]any{"sub": alice.ID, "email": "alice@acme.test", "email_verified": true}},
		{[]string{"profile"}, map[string]any{"sub": alice.ID, "preferred_username": "alice", "given_name": "Alice",
			"family_name": "Liddell", "name": "Alice Liddell"}},
	} {
		got := userinfoTestAsk(t, s, userinfoTestMint(t, s, "alice", c.scopes...))
		if !slices.Equal(sortedKeys(got), sortedKeys(c.want)) {
			t.Fatalf("scopes %v: claims %v, want %v", c.scopes, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Fatalf("scopes %v: %s = %v, want %v", c.scopes, k, got[k], v)
			}
		}
	}

	// A scope taken from the client since the token was issued releases
	// nothing any more.
	token := userinfoTestMint(t, s, "alice", "openid", "email")
	scopes := s.admin(http.MethodGet, "/admin/realms/acme/clients/web/default-client-scopes", nil)
	mustStatus(t, scopes, http.StatusOK)
	var linked []map[string]any
	scopes.decode(t, &linked)
	i := slices.IndexFunc(linked, func(sc map[string]any) bool { return sc["name"] == "email" })
	if i < 0 {
		t.Fatalf("default scopes %v", linked)
	}
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/clients/web/default-client-scopes/"+linked[i]["id"].(string), nil), http.StatusNoContent)
	if got := userinfoTestAsk(t, s, token); got["email"] != nil {
		t.Fatalf("claims of an unassigned scope: %v", got)
	}
}

func TestOIDCUserinfoRefused(t *testing.T) {
	clock := newDeviceTestClock(0)
	s, secret, otherSecret := userinfoTestServer(t, clock)
	ctx := t.Context()
	good := userinfoTestCC(t, s, "acme", secret)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"someone-else"}`)) + "." + parts[2]

	revoked := userinfoTestCC(t, s, "acme", secret)
	mustStatus(t, s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", "token="+url.QueryEscape(revoked),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("reports:"+secret))), http.StatusOK)

	// Signed by the realm's key, but not as an access token.
	g := userinfoTestGrant(t, s, "alice", "openid")
	idLike, err := s.app.sign(ctx, g.realm, "JWT", map[string]any{"iss": s.issuer("acme"), "sub": g.user.ID, "azp": "web",
		"aud": "web", "exp": clock.now().Add(time.Minute).Unix(), "iat": clock.now().Unix(), "jti": "id-1", "scope": "openid"})
	if err != nil {
		t.Fatal(err)
	}

	deleted := userinfoTestMint(t, s, "bob", "openid")
	disabled := userinfoTestMint(t, s, "carol", "openid")
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+userinfoTestGrant(t, s, "bob").user.ID, nil), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/users/"+userinfoTestGrant(t, s, "carol").user.ID,
		map[string]any{"enabled": false}), http.StatusOK)
	ofDisabledClient := userinfoTestMint(t, s, "alice", "openid")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/clients/web", map[string]any{"enabled": false}), http.StatusOK)

	bearer := func(token string) string { return "Authorization: Bearer " + token }
	form := "Content-Type: application/x-www-form-urlencoded"
	invalid := `Bearer realm="acme", error="invalid_token"`
	cases := []struct {
		name      string
		method    string
		headers   []string
		body      string
		code      string
		challenge string
	}{
		{"tampered", http.MethodGet, []string{bearer(tampered)}, "", "invalid_token", invalid},
		{"another realm's token", http.MethodGet, []string{bearer(userinfoTestCC(t, s, "other", otherSecret))}, "", "invalid_token", invalid},
		{"garbage", http.MethodGet, []string{bearer("not-a-token")}, "", "invalid_token", invalid},
		{"garbage in the form", http.MethodPost, []string{form}, "access_token=not-a-token", "invalid_token", invalid},
		{"revoked", http.MethodGet, []string{bearer(revoked)}, "", "invalid_token", invalid},
		{"not an access token", http.MethodGet, []string{bearer(idLike)}, "", "invalid_token", invalid},
		{"deleted user", http.MethodGet, []string{bearer(deleted)}, "", "invalid_token", invalid},
		{"disabled user", http.MethodPost, []string{form}, "access_token=" + url.QueryEscape(disabled), "invalid_token", invalid},
		{"disabled client", http.MethodGet, []string{bearer(ofDisabledClient)}, "", "invalid_token", invalid},
		{"no token", http.MethodGet, nil, "", "invalid_request", `Bearer realm="acme"`},
		{"Basic credentials", http.MethodGet, []string{"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("reports:"+secret))},
			"", "invalid_request", `Bearer realm="acme"`},
	}
	check := func(t *testing.T, method, body, code, challenge string, headers []string) {
		t.Helper()
		var b any
		if body != "" || method == http.MethodPost {
			b = body
		}
		r := s.request(method, userinfoTestPath, b, headers...)
		var e oauthError
		r.decode(t, &e)
		if r.Status != http.StatusUnauthorized || e.Error != code {
			t.Fatalf("status %d body %s, want 401 %s", r.Status, r.Body, code)
		}
		if got := r.Header.Get("WWW-Authenticate"); got != challenge {
			t.Fatalf("WWW-Authenticate %q, want %q", got, challenge)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.method, c.body, c.code, c.challenge, c.headers) })
	}

	// Good until it expires.
	userinfoTestAsk(t, s, good)
	clock.advance(301 * time.Second)
	t.Run("expired", func(t *testing.T) {
		check(t, http.MethodGet, "", "invalid_token", invalid, []string{bearer(good)})
	})
}
