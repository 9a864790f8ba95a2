package nhi_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/idenplane/idenplane/app/apptest"
)

const tokenPath = "/realms/acme/protocol/openid-connect/token"

// tokenEnv is a server on a real listener, for a real OAuth 2.0 client,
// with an identity whose service-account user holds the realm role
// "billing".
type tokenEnv struct {
	s   *apptest.Server
	clk *clock
	url string // the listener's base URL
	n   identityJSON
}

func newTokenEnv(t *testing.T) *tokenEnv {
	clk := newClock()
	s := newServer(t, withClock(clk))
	srv := httptest.NewServer(s.Handler)
	t.Cleanup(srv.Close)
	n := createIdentity(t, s, map[string]any{"kind": "workload", "name": "billing-worker"})
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "billing"}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/users/"+n.ServiceAccountUserID+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"billing"}}), http.StatusOK)
	return &tokenEnv{s: s, clk: clk, url: srv.URL, n: n}
}

// token asks for a token with clientcredentials, as a client would.
func (e *tokenEnv) token(clientID, secret string, scopes ...string) (*oauth2.Token, error) {
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: secret, TokenURL: e.url + tokenPath, Scopes: scopes,
		AuthStyle: oauth2.AuthStyleInHeader}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cfg.Token(ctx)
}

// mustToken gets a token and returns its claims, unverified: the tests of
// the token endpoint check the signature; these check what it carries.
func (e *tokenEnv) mustToken(t *testing.T, clientID, secret string, scopes ...string) map[string]any {
	t.Helper()
	tok, err := e.token(clientID, secret, scopes...)
	if err != nil {
		t.Fatalf("token for %s: %v", clientID, err)
	}
	return claimsOf(t, tok.AccessToken)
}

func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.PS256, jose.EdDSA})
	if err != nil {
		t.Fatalf("parse access token: %v", err)
	}
	var claims map[string]any
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// mustRefuse checks that the token endpoint refuses with the OAuth error
// code.
func mustRefuse(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != code {
		t.Fatalf("token request: %v, want the OAuth error %s", err, code)
	}
}

// changedLast is s with its last character replaced by another: a fixed
// replacement would leave a sixteenth of the keys as they were.
func changedLast(s string) string {
	last := "A"
	if strings.HasSuffix(s, last) {
		last = "B"
	}
	return s[:len(s)-1] + last
}

func realmRoles(claims map[string]any) []string {
	ra, _ := claims["realm_access"].(map[string]any)
	var out []string
	for _, r := range ra["roles"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

func TestClientCredentialsWithSecretAndAPIKey(t *testing.T) {
	e := newTokenEnv(t)
	sec := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"})
	key := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key"})
	for _, secret := range []string{sec.Secret, key.APIKey} {
		claims := e.mustToken(t, "billing-worker", secret)
		if claims["azp"] != "billing-worker" || claims["sub"] != e.n.ServiceAccountUserID || !slices.Contains(realmRoles(claims), "billing") {
			t.Errorf("token claims %v", claims)
		}
	}
	// The use is recorded on the credential and on the identity.
	if got := getIdentity(t, e.s, e.n.ID); got.LastUsedTimestamp == nil || *got.LastUsedTimestamp != e.clk.Millis() {
		t.Errorf("identity last used %v, want %d", got.LastUsedTimestamp, e.clk.Millis())
	}
	creds := listCredentials(t, e.s, e.n.ID)
	for _, id := range []string{sec.ID, key.ID} {
		if creds[id].LastUsedTimestamp == nil {
			t.Errorf("credential %s: no last use", id)
		}
	}
	for _, c := range []struct{ name, clientID, secret string }{
		{"a wrong secret", "billing-worker", sec.Secret + "x"},
		{"an API key of another prefix", "billing-worker", "idp_000000000000_" + strings.Repeat("a", 43)},
		{"an API key changed", "billing-worker", changedLast(key.APIKey)},
		{"no secret", "billing-worker", ""},
		{"an unknown client", "nobody", sec.Secret},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.token(c.clientID, c.secret)
			mustRefuse(t, err, "invalid_client")
		})
	}
	// The backing client's own secret, had an admin made one, does not
	// authenticate the identity: only its credentials do.
	r := e.s.Admin(http.MethodPost, "/admin/realms/acme/clients/billing-worker/regenerate-secret", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	_, err := e.token("billing-worker", r.Object(t)["secret"].(string))
	mustRefuse(t, err, "invalid_client")
	// Another identity's API key is not this one's.
	other := createIdentity(t, e.s, map[string]any{"kind": "bot", "name": "other"})
	otherKey := issueCredential(t, e.s, other.ID, map[string]any{"type": "api_key"})
	_, err = e.token("billing-worker", otherKey.APIKey)
	mustRefuse(t, err, "invalid_client")
	e.mustToken(t, "other", otherKey.APIKey)
}

func TestTokensFollowStatesAndCredentials(t *testing.T) {
	e := newTokenEnv(t)
	sec := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"})
	short := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key", "expiresIn": 60})
	path := nhiPath + "/" + e.n.ID
	e.mustToken(t, "billing-worker", sec.Secret)

	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/suspend", nil), http.StatusOK)
	_, err := e.token("billing-worker", sec.Secret)
	mustRefuse(t, err, "invalid_client")
	// Even with its client re-enabled behind the identity's back.
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/clients/billing-worker", map[string]any{"enabled": true}), http.StatusOK)
	_, err = e.token("billing-worker", sec.Secret)
	mustRefuse(t, err, "invalid_client")
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/reactivate", nil), http.StatusOK)
	e.mustToken(t, "billing-worker", sec.Secret)

	// An expired credential.
	e.mustToken(t, "billing-worker", short.APIKey)
	e.clk.Advance(61 * time.Second)
	_, err = e.token("billing-worker", short.APIKey)
	mustRefuse(t, err, "invalid_client")

	// A rotated one works through its grace period, and not after.
	r := e.s.Admin(http.MethodPost, path+"/credentials/"+sec.ID+"/rotate", map[string]any{"gracePeriod": 120})
	apptest.MustStatus(t, r, http.StatusCreated)
	var repl credentialJSON
	r.Decode(t, &repl)
	e.mustToken(t, "billing-worker", sec.Secret)
	e.mustToken(t, "billing-worker", repl.Secret)
	e.clk.Advance(121 * time.Second)
	_, err = e.token("billing-worker", sec.Secret)
	mustRefuse(t, err, "invalid_client")
	e.mustToken(t, "billing-worker", repl.Secret)

	// A revoked one.
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/credentials/"+repl.ID+"/revoke", nil), http.StatusOK)
	_, err = e.token("billing-worker", repl.Secret)
	mustRefuse(t, err, "invalid_client")

	// Decommissioned: nothing works again.
	key := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key"})
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/decommission", nil), http.StatusOK)
	_, err = e.token("billing-worker", key.APIKey)
	mustRefuse(t, err, "invalid_client")
}

// A token issued before a suspension stops standing at introspection.
func TestSuspensionEndsTokens(t *testing.T) {
	e := newTokenEnv(t)
	sec := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"})
	tok, err := e.token("billing-worker", sec.Secret)
	if err != nil {
		t.Fatal(err)
	}
	created := e.s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "rs"})
	apptest.MustStatus(t, created, http.StatusCreated)
	rs := created.Object(t)["secret"]
	introspect := func() bool {
		form := url.Values{"token": {tok.AccessToken}, "client_id": {"rs"}, "client_secret": {rs.(string)}}
		resp, err := http.PostForm(e.url+"/realms/acme/protocol/openid-connect/token/introspect", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body["active"] == true
	}
	if !introspect() {
		t.Fatal("fresh token not active")
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, nhiPath+"/"+e.n.ID+"/suspend", nil), http.StatusOK)
	if introspect() {
		t.Fatal("token of a suspended identity still active")
	}
}

func TestAPIKeyScopes(t *testing.T) {
	e := newTokenEnv(t)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": "invoices:read"}), http.StatusCreated)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": "invoices:write"}), http.StatusCreated)
	for _, sc := range []string{"invoices:read", "invoices:write"} {
		id := scopeID(t, e.s, sc)
		apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/clients/billing-worker/optional-client-scopes",
			map[string]any{"clientScopeId": id}), http.StatusCreated)
	}
	key := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "api_key", "scopes": []string{"invoices:read"}})
	sec := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"})
	if claims := e.mustToken(t, "billing-worker", key.APIKey, "invoices:read"); !strings.Contains(claims["scope"].(string), "invoices:read") {
		t.Errorf("scope %v", claims["scope"])
	}
	_, err := e.token("billing-worker", key.APIKey, "invoices:write")
	mustRefuse(t, err, "invalid_scope")
	e.mustToken(t, "billing-worker", sec.Secret, "invoices:write")
}

func scopeID(t *testing.T, s *apptest.Server, name string) string {
	t.Helper()
	var list []map[string]any
	s.Admin(http.MethodGet, "/admin/realms/acme/client-scopes", nil).Decode(t, &list)
	for _, sc := range list {
		if sc["name"] == name {
			return sc["id"].(string)
		}
	}
	t.Fatalf("no scope %s", name)
	return ""
}

// assertion signs claims with key as a client of ours would.
func assertion(t *testing.T, key crypto.Signer, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// hmacAssertion is a client_secret_jwt assertion, which identities do not
// use: they hold no secret the server could verify an HMAC with.
// refusals are the realm's AUTHENTICATION_REFUSED audit records: their
// details (the reason) by id.
func refusals(t *testing.T, s *apptest.Server) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range auditLog(t, s, "?action=AUTHENTICATION_REFUSED&max=1000") {
		out[a.ID] = a.Details
	}
	return out
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hmacAssertion(t *testing.T, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("a shared secret of 32 bytes or more")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// assertionToken posts a client_credentials request authenticated by the
// assertion, and answers the status and the OAuth error code, if any.
func (e *tokenEnv) assertionToken(t *testing.T, clientID, jwtAssertion string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion": {jwtAssertion}}
	if clientID != "" {
		form.Set("client_id", clientID)
	}
	resp, err := http.PostForm(e.url+tokenPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestPrivateKeyJWT(t *testing.T) {
	e := newTokenEnv(t)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecCred := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, &ec.PublicKey, "")})
	issueCredential(t, e.s, e.n.ID, map[string]any{"type": "public_key", "publicKey": publicJWK(t, &rs.PublicKey, "rsa-1")})
	iss := apptest.BaseURL + "/realms/acme"
	now := e.clk.Now()
	claims := func(change func(map[string]any)) map[string]any {
		c := map[string]any{"iss": "billing-worker", "sub": "billing-worker", "aud": iss + "/protocol/openid-connect/token",
			"exp": now.Add(2 * time.Minute).Unix(), "iat": now.Unix(), "jti": uuid.NewString()}
		if change != nil {
			change(c)
		}
		return c
	}

	// The good ones, by either key; aud may be the issuer or an array.
	for _, a := range []string{
		assertion(t, ec, jose.ES256, ecCred.KeyID, claims(nil)),
		assertion(t, ec, jose.ES256, "", claims(nil)),
		assertion(t, rs, jose.PS256, "rsa-1", claims(func(c map[string]any) { c["aud"] = iss })),
		assertion(t, rs, jose.RS256, "", claims(func(c map[string]any) { c["aud"] = []string{"https://other.test", iss} })),
	} {
		status, body := e.assertionToken(t, "billing-worker", a)
		if status != http.StatusOK || !slices.Contains(realmRoles(claimsOf(t, body["access_token"].(string))), "billing") {
			t.Fatalf("good assertion: %d %v", status, body)
		}
	}
	// client_id may be left out: the assertion names the client.
	if status, body := e.assertionToken(t, "", assertion(t, ec, jose.ES256, "", claims(nil))); status != http.StatusOK {
		t.Fatalf("without client_id: %d %v", status, body)
	}
	// A real client library, the assertion in its endpoint parameters.
	cfg := clientcredentials.Config{ClientID: "billing-worker", TokenURL: e.url + tokenPath, AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: url.Values{"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion": {assertion(t, ec, jose.ES256, "", claims(nil))}}}
	if _, err := cfg.Token(context.Background()); err != nil {
		t.Fatalf("clientcredentials with an assertion: %v", err)
	}

	replayed := assertion(t, ec, jose.ES256, "", claims(nil))
	if status, _ := e.assertionToken(t, "billing-worker", replayed); status != http.StatusOK {
		t.Fatal("first use refused")
	}
	unsigned := func(alg string) string {
		part := func(v any) string { return base64.RawURLEncoding.EncodeToString(mustMarshal(t, v)) }
		return part(map[string]any{"alg": alg, "typ": "JWT"}) + "." + part(claims(nil)) + "."
	}
	const noKey = "no active key of the identity verifies its signature"
	// Each is refused with the one invalid_client; the reason it names is
	// the one recorded in the identity's audit log ("" when the assertion
	// names no identity, and nothing is recorded).
	for _, c := range []struct {
		name, clientID, assertion, reason string
	}{
		{"replayed jti", "billing-worker", replayed, "jti already used"},
		{"an unknown key", "billing-worker", assertion(t, stranger, jose.ES256, "", claims(nil)), noKey},
		{"a kid of another key", "billing-worker", assertion(t, ec, jose.ES256, "rsa-1", claims(nil)), noKey},
		{"a key's kid, signed by another", "billing-worker", assertion(t, rs, jose.RS256, ecCred.KeyID, claims(nil)), noKey},
		{"client_secret_jwt (HS256)", "billing-worker", hmacAssertion(t, claims(nil)), `accepted algorithm (alg "HS256")`},
		{"another audience", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["aud"] = "https://other.test" })), "aud names neither"},
		{"no aud", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { delete(c, "aud") })), "aud names neither"},
		{"expired", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })), "token is expired (exp)"},
		{"no exp", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { delete(c, "exp") })), "exp is required"},
		{"exp an hour ahead", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["exp"] = now.Add(time.Hour).Unix() })), "exp is more than ten minutes ahead"},
		{"nbf ahead", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["nbf"] = now.Add(5 * time.Minute).Unix() })), "(nbf)"},
		{"iat ahead", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["iat"] = now.Add(5 * time.Minute).Unix() })), "(iat)"},
		{"no jti", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { delete(c, "jti") })), "jti is required"},
		{"iss not sub", "billing-worker", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["iss"] = "other" })), "iss and sub must both be the client_id"},
		{"another client_id in the form", "other", assertion(t, ec, jose.ES256, "", claims(nil)), "client_id is not the assertion's sub"},
		{"a client of no identity", "", assertion(t, ec, jose.ES256, "", claims(func(c map[string]any) { c["iss"], c["sub"] = "admin-cli", "admin-cli" })), ""},
		{"not a JWT", "billing-worker", "not.a.jwt", ""},
		{"an unsigned JWT (alg none), its claims good", "billing-worker", unsigned("none"), `accepted algorithm (alg "none")`},
		{"an unsigned JWT (alg None), its claims good", "billing-worker", unsigned("None"), `accepted algorithm (alg "None")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.mustRefuseAssertion(t, c.clientID, c.assertion, c.reason)
		})
	}

	// A revoked key, and a suspended identity.
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, nhiPath+"/"+e.n.ID+"/credentials/"+ecCred.ID+"/revoke", nil), http.StatusOK)
	e.mustRefuseAssertion(t, "billing-worker", assertion(t, ec, jose.ES256, "", claims(nil)), noKey)
	// Suspending disables the backing client, which refuses before any
	// identity is looked at; with the client enabled again behind the
	// identity's back, the identity's state refuses.
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, nhiPath+"/"+e.n.ID+"/suspend", nil), http.StatusOK)
	e.mustRefuseAssertion(t, "billing-worker", assertion(t, rs, jose.RS256, "", claims(nil)), "")
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/clients/billing-worker", map[string]any{"enabled": true}), http.StatusOK)
	e.mustRefuseAssertion(t, "billing-worker", assertion(t, rs, jose.RS256, "", claims(nil)), "the identity is not active")
}

// mustRefuseAssertion checks that the assertion is refused with the one
// invalid_client, and that the refusal recorded in the audit log names
// reason ("" for an assertion that names no identity: nothing recorded).
func (e *tokenEnv) mustRefuseAssertion(t *testing.T, clientID, jwtAssertion, reason string) {
	t.Helper()
	before := refusals(t, e.s)
	status, body := e.assertionToken(t, clientID, jwtAssertion)
	if status != http.StatusUnauthorized || body["error"] != "invalid_client" || body["error_description"] != "client authentication failed" {
		t.Fatalf("%d %v, want 401 invalid_client", status, body)
	}
	var added []string
	for id, details := range refusals(t, e.s) {
		if _, seen := before[id]; !seen {
			added = append(added, details)
		}
	}
	switch {
	case reason == "" && len(added) != 0:
		t.Fatalf("refusals recorded %v, want none", added)
	case reason != "" && (len(added) != 1 || !strings.Contains(added[0], reason)):
		t.Fatalf("refusals recorded %q, want one with %q", added, reason)
	}
}

// Discovery advertises private_key_jwt and its algorithms.
func TestDiscoveryAdvertisesPrivateKeyJWT(t *testing.T) {
	s := newServer(t)
	r := s.Request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var d struct {
		Methods []string `json:"token_endpoint_auth_methods_supported"`
		Algs    []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	}
	r.Decode(t, &d)
	if !slices.Contains(d.Methods, "private_key_jwt") || !slices.Contains(d.Algs, "ES256") || slices.Contains(d.Algs, "HS256") {
		t.Errorf("discovery %+v", d)
	}
}
