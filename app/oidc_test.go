package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// oidcTestServer is the real App served on loopback, its base URL the
// server's own address, so issuers and endpoints are reachable as clients
// see them.
type oidcTestServer struct {
	*testServer
	url string
}

func newOIDCTestServer(t *testing.T, opts ...func(*Config)) *oidcTestServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := newTestServer(t, append([]func(*Config){func(c *Config) { c.BaseURL = base }}, opts...)...)
	srv := httptest.NewUnstartedServer(s.handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &oidcTestServer{testServer: s, url: base}
}

func (s *oidcTestServer) issuer(realm string) string { return s.url + "/realms/" + realm }

// machineClient makes a confidential client with the client_credentials
// grant whose service account holds realm role "reporter", and returns its
// secret.
func (s *oidcTestServer) machineClient(t *testing.T, realm, clientID string) string {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/clients", map[string]any{
		"clientId": clientID, "grantTypes": []string{"client_credentials"}})
	mustStatus(t, r, http.StatusCreated)
	secret := r.object(t)["secret"].(string)
	if r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/roles", map[string]any{"name": "reporter"}); r.Status != http.StatusCreated && r.Status != http.StatusConflict {
		t.Fatalf("create role: %d %s", r.Status, r.Body)
	}
	sa := s.admin(http.MethodGet, "/admin/realms/"+realm+"/clients/"+clientID+"/service-account-user", nil).object(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/"+realm+"/users/"+sa["id"].(string)+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"reporter"}}), http.StatusOK)
	return secret
}

// jwtParts decodes a JWT's header and claims without verifying it.
func jwtParts(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatal(err)
		}
	}
	return header, claims
}

func TestOIDCDiscoveryAndKeys(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	ctx := t.Context()

	provider, err := oidc.NewProvider(ctx, s.issuer("acme"))
	if err != nil {
		t.Fatalf("go-oidc discovery: %v", err)
	}
	var doc map[string]any
	if err := provider.Claims(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["token_endpoint"] != s.issuer("acme")+"/protocol/openid-connect/token" ||
		doc["jwks_uri"] != s.issuer("acme")+"/protocol/openid-connect/certs" {
		t.Fatalf("endpoints %v", doc)
	}
	if got := doc["code_challenge_methods_supported"].([]any); len(got) != 1 || got[0] != "S256" {
		t.Fatalf("code_challenge_methods_supported %v", got)
	}
	scopes, _ := json.Marshal(doc["scopes_supported"])
	for _, want := range []string{"openid", "profile", "email", "offline_access", "roles"} {
		if !strings.Contains(string(scopes), `"`+want+`"`) {
			t.Errorf("scopes_supported %s lacks %s", scopes, want)
		}
	}

	r := s.request(http.MethodGet, "/realms/acme/protocol/openid-connect/certs", nil)
	mustStatus(t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age") {
		t.Fatalf("certs Cache-Control %q", cc)
	}
	var set struct{ Keys []map[string]any }
	r.decode(t, &set)
	if len(set.Keys) == 0 {
		t.Fatal("no keys published")
	}
	for _, k := range set.Keys {
		if k["kid"] == nil || k["alg"] == nil || k["use"] != "sig" {
			t.Fatalf("key without kid, alg or use: %v", k)
		}
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[private]; ok {
				t.Fatalf("published key has private member %s", private)
			}
		}
	}
}

func TestOIDCUnknownOrDisabledRealm(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"enabled": false}), http.StatusOK)
	for _, realm := range []string{"acme", "nope"} {
		for _, p := range []struct{ method, path string }{
			{http.MethodGet, "/.well-known/openid-configuration"},
			{http.MethodGet, "/protocol/openid-connect/certs"},
			{http.MethodPost, "/protocol/openid-connect/token"},
			{http.MethodPost, "/protocol/openid-connect/token/introspect"},
		} {
			r := s.request(p.method, "/realms/"+realm+p.path, "grant_type=client_credentials", "Content-Type: application/x-www-form-urlencoded")
			if r.Status != http.StatusNotFound {
				t.Errorf("%s %s on realm %s: %d, want 404", p.method, p.path, realm, r.Status)
			}
		}
	}
}

func TestOIDCClientCredentials(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	secret := s.machineClient(t, "acme", "reports")
	ctx := t.Context()
	provider, err := oidc.NewProvider(ctx, s.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret, TokenURL: provider.Endpoint().TokenURL,
			AuthStyle: style, Scopes: []string{"phone"}}
		tok, err := cfg.Token(ctx)
		if err != nil {
			t.Fatalf("auth style %d: %v", style, err)
		}
		if tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
			t.Fatalf("token %+v", tok)
		}
		// The signature verifies through the published keys.
		if _, err := oidc.NewRemoteKeySet(ctx, s.issuer("acme")+"/protocol/openid-connect/certs").VerifySignature(ctx, tok.AccessToken); err != nil {
			t.Fatalf("signature: %v", err)
		}
		header, claims := jwtParts(t, tok.AccessToken)
		if header["typ"] != "at+jwt" || header["kid"] == nil {
			t.Fatalf("header %v", header)
		}
		sa := s.admin(http.MethodGet, "/admin/realms/acme/clients/reports/service-account-user", nil).object(t)
		if claims["iss"] != s.issuer("acme") || claims["sub"] != sa["id"] || claims["azp"] != "reports" || claims["jti"] == nil {
			t.Fatalf("claims %v", claims)
		}
		roles, _ := json.Marshal(claims["realm_access"])
		if !strings.Contains(string(roles), `"reporter"`) {
			t.Fatalf("realm_access %s lacks the service account's role", roles)
		}
		if scope := claims["scope"].(string); !strings.Contains(scope, "phone") || !strings.Contains(scope, "profile") {
			t.Fatalf("scope %q: want the defaults and the optional phone", scope)
		}
	}
}

// oauthError is RFC 6749's error body.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func TestOIDCClientCredentialsRefused(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	secret := s.machineClient(t, "acme", "reports")
	otherSecret := s.machineClient(t, "other", "reports")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	webSecret := s.admin(http.MethodPost, "/admin/realms/acme/clients/web/regenerate-secret", nil).object(t)["secret"].(string)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC"}), http.StatusCreated)

	tokenURL := "/realms/acme/protocol/openid-connect/token"
	basic := func(id, secret string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	form := "Content-Type: application/x-www-form-urlencoded"
	for _, c := range []struct {
		name    string
		body    string
		headers []string
		status  int
		code    string
	}{
		{"wrong secret", "grant_type=client_credentials", []string{basic("reports", "wrong")}, 401, "invalid_client"},
		{"secret of another realm's client", "grant_type=client_credentials", []string{basic("reports", otherSecret)}, 401, "invalid_client"},
		{"unknown client", "grant_type=client_credentials", []string{basic("ghost", secret)}, 401, "invalid_client"},
		{"no credentials", "grant_type=client_credentials&client_id=reports", nil, 401, "invalid_client"},
		{"public client", "grant_type=client_credentials&client_id=spa", nil, 400, "unauthorized_client"},
		{"grant not allowed", "grant_type=client_credentials", []string{basic("web", webSecret)}, 400, "unauthorized_client"},
		{"scope not assigned", "grant_type=client_credentials&scope=nope", []string{basic("reports", secret)}, 400, "invalid_scope"},
		{"unknown grant type", "grant_type=magic", []string{basic("reports", secret)}, 400, "unsupported_grant_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.request(http.MethodPost, tokenURL, c.body, append([]string{form}, c.headers...)...)
			var e oauthError
			r.decode(t, &e)
			if r.Status != c.status || e.Error != c.code {
				t.Fatalf("status %d body %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
			if c.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("invalid_client without WWW-Authenticate")
			}
		})
	}
}

func TestOIDCIntrospection(t *testing.T) {
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := newOIDCTestServer(t, func(c *Config) { c.Now = func() time.Time { return clock } })
	s.createRealm("acme")
	s.createRealm("other")
	secret := s.machineClient(t, "acme", "reports")
	otherSecret := s.machineClient(t, "other", "reports")
	ctx := context.Background()
	token := func(realm, secret string) string {
		cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret,
			TokenURL: s.issuer(realm) + "/protocol/openid-connect/token"}
		tok, err := cfg.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	good := token("acme", secret)
	foreign := token("other", otherSecret)
	introspect := func(tok string, headers ...string) (int, map[string]any) {
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(tok),
			append([]string{"Content-Type: application/x-www-form-urlencoded"}, headers...)...)
		var out map[string]any
		r.decode(t, &out)
		return r.Status, out
	}
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("reports:"+secret))

	status, out := introspect(good, auth)
	if status != 200 || out["active"] != true || out["client_id"] != "reports" || out["scope"] == nil || out["exp"] == nil {
		t.Fatalf("introspection of a good token: %d %v", status, out)
	}
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + strings.TrimRight(base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"someone-else"}`)), "=") + "." + parts[2]
	for name, tok := range map[string]string{"tampered": tampered, "other realm": foreign, "garbage": "not-a-token"} {
		if status, out := introspect(tok, auth); status != 200 || len(out) != 1 || out["active"] != false {
			t.Errorf("%s token: %d %v, want exactly {active: false}", name, status, out)
		}
	}
	// RFC 7662 requires the token parameter.
	if status, out := introspect("", auth); status != http.StatusBadRequest || out["error"] != "invalid_request" {
		t.Errorf("introspection without a token: %d %v", status, out)
	}
	if status, _ := introspect(good); status != http.StatusUnauthorized {
		t.Errorf("introspection without client authentication: %d", status)
	}
	if status, _ := introspect(good, "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("reports:wrong"))); status != http.StatusUnauthorized {
		t.Errorf("introspection with a wrong secret: %d", status)
	}
	clock = clock.Add(301 * time.Second)
	if _, out := introspect(good, auth); out["active"] != false {
		t.Errorf("expired token introspected as %v", out)
	}
}

func TestOIDCRevocation(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	secret := s.machineClient(t, "acme", "reports")
	otherSecret := s.machineClient(t, "acme", "billing")
	cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret, TokenURL: s.issuer("acme") + "/protocol/openid-connect/token"}
	tok, err := cfg.Token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	form := "Content-Type: application/x-www-form-urlencoded"
	basic := func(id, secret string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	}
	active := func() bool {
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect",
			"token="+url.QueryEscape(tok.AccessToken), form, basic("reports", secret))
		mustStatus(t, r, http.StatusOK)
		return r.object(t)["active"] == true
	}
	revoke := func(body, auth string) *testResponse {
		return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", body, form, auth)
	}

	// Another client cannot revoke it, and learns nothing: 200 all the same.
	mustStatus(t, revoke("token="+url.QueryEscape(tok.AccessToken), basic("billing", otherSecret)), http.StatusOK)
	if !active() {
		t.Fatal("another client's revocation took effect")
	}
	for _, body := range []string{"token=unknown", "token=unknown&token_type_hint=refresh_token", "token=x&token_type_hint=bogus"} {
		mustStatus(t, revoke(body, basic("reports", secret)), http.StatusOK)
	}
	if r := revoke("token="+url.QueryEscape(tok.AccessToken), basic("reports", "wrong")); r.Status != http.StatusUnauthorized {
		t.Fatalf("revocation with a wrong secret: %d %s", r.Status, r.Body)
	}
	if !active() {
		t.Fatal("token inactive before its revocation")
	}
	mustStatus(t, revoke("token="+url.QueryEscape(tok.AccessToken)+"&token_type_hint=access_token", basic("reports", secret)), http.StatusOK)
	if active() {
		t.Fatal("revoked access token still introspects as active")
	}
}

// A failure inside the provider answers a bare server_error: nothing of the
// cause (SQL, paths) reaches the client.
func TestOIDCServerErrorLeaksNothing(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	secret := s.machineClient(t, "acme", "reports")
	s.store.Close() // every read and write now fails
	r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("reports:"+secret)))
	if r.Status < 500 {
		t.Fatalf("status %d with a closed store", r.Status)
	}
	for _, leak := range []string{"sql", "sqlite", "database", ".go", "closed"} {
		if strings.Contains(strings.ToLower(string(r.Body)), leak) {
			t.Fatalf("error body leaks %q: %s", leak, r.Body)
		}
	}
}

// A token signed before a rotation still verifies through certs; tokens
// made after it carry the new key's kid.
func TestOIDCKeyRotation(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	secret := s.machineClient(t, "acme", "reports")
	ctx := t.Context()
	cfg := clientcredentials.Config{ClientID: "reports", ClientSecret: secret, TokenURL: s.issuer("acme") + "/protocol/openid-connect/token"}
	before, err := cfg.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldHeader, _ := jwtParts(t, before.AccessToken)

	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/keys/rotate", map[string]any{"algorithm": "ES256", "immediate": true}), http.StatusOK)
	after, err := cfg.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newHeader, _ := jwtParts(t, after.AccessToken)
	if newHeader["kid"] == oldHeader["kid"] || newHeader["alg"] != "ES256" {
		t.Fatalf("after rotation: header %v, before %v", newHeader, oldHeader)
	}
	keys := oidc.NewRemoteKeySet(ctx, s.issuer("acme")+"/protocol/openid-connect/certs")
	for name, tok := range map[string]string{"before": before.AccessToken, "after": after.AccessToken} {
		if _, err := keys.VerifySignature(ctx, tok); err != nil {
			t.Errorf("token from %s the rotation does not verify: %v", name, err)
		}
	}
	// Both stay introspectable while the old key is published.
	for name, tok := range map[string]string{"before": before.AccessToken, "after": after.AccessToken} {
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(tok),
			"Content-Type: application/x-www-form-urlencoded",
			"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("reports:"+secret)))
		if r.object(t)["active"] != true {
			t.Errorf("token from %s the rotation is inactive", name)
		}
	}
}
