package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

const (
	authTestAdminUser     = "root"
	authTestAdminPassword = "a-long-admin-password"
)

// authTestClock is a settable clock for Config.Now.
type authTestClock struct {
	mu  sync.Mutex
	now time.Time
}

func newAuthTestClock() *authTestClock {
	// Start at the real time: the store's own clock (time.Now) purges
	// revocations by it, so the two must agree.
	return &authTestClock{now: time.Now().Truncate(time.Second)}
}

func (c *authTestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *authTestClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// authWithAdminUser configures the first admin user and, if clock is not
// nil, the app's clock.
func authWithAdminUser(clock *authTestClock) func(*Config) {
	return func(c *Config) {
		c.AdminUser, c.AdminPassword = authTestAdminUser, authTestAdminPassword
		if clock != nil {
			c.Now = clock.Now
		}
	}
}

// authLogin logs in and returns the access token, failing unless it works.
func authLogin(t *testing.T, s *testServer, username, password string) string {
	t.Helper()
	r := s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": username, "password": password})
	mustStatus(t, r, http.StatusOK)
	var body struct {
		AccessToken string `json:"accessToken"`
	}
	r.decode(t, &body)
	if body.AccessToken == "" {
		t.Fatalf("login answered no accessToken: %s", r.Body)
	}
	return body.AccessToken
}

type authRoute struct{ method, template string }

// isUserRoute says whether the table has the route as a signed-in user's.
func isUserRoute(a *App, method, path string) bool {
	return slices.ContainsFunc(a.table, func(rt route) bool {
		return rt.method == method && rt.path == path && rt.access.kind == accessUser
	})
}

// authAdminRoutes walks the router and returns every route under /admin,
// POST /admin/auth/login included, but those of a signed-in user (an
// organization's invitation accepted by the invited user).
func authAdminRoutes(t *testing.T, a *App) []authRoute {
	t.Helper()
	var out []authRoute
	err := a.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, "/admin") {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			// A route open to every method: check them all.
			methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
		}
		for _, m := range methods {
			if !isUserRoute(a, m, tpl) {
				out = append(out, authRoute{m, tpl})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk routes: %v", err)
	}
	return out
}

// isPublic says the route is one of the few under /admin anyone may
// call: the login, and the API document.
func (r authRoute) isPublic() bool {
	return r.method == http.MethodPost && r.template == "/admin/auth/login" ||
		r.method == http.MethodGet && slices.Contains([]string{pathOpenAPI, pathOpenAPIJSON, pathOpenAPIYAML}, r.template)
}

// authOtherVar is any path variable but {realm} and {userId}, with its
// pattern if it has one.
var authOtherVar = regexp.MustCompile(`\{[A-Za-z]+(?::[^{}]*)?\}`)

// authFillPath replaces the path variables of a route template. Other IDs
// need not exist: the credentials are refused before any lookup.
func authFillPath(t *testing.T, tpl, realm, userID string) string {
	t.Helper()
	path := strings.NewReplacer("{realm}", realm, "{userId}", userID).Replace(tpl)
	path = authOtherVar.ReplaceAllString(path, "00000000-0000-4000-8000-000000000000")
	if strings.ContainsAny(path, "{}") {
		t.Fatalf("route %s has a path variable this test does not know", tpl)
	}
	return path
}

// authRequireAll asserts that every protected admin route answers 401
// unauthorized to the given credential headers, and returns how many it checked.
func authRequireAll(t *testing.T, s *testServer, realm, userID string, headers ...string) int {
	t.Helper()
	n := 0
	for _, rt := range authAdminRoutes(t, s.app) {
		if rt.isPublic() {
			continue
		}
		path := authFillPath(t, rt.template, realm, userID)
		var body any
		if rt.method == http.MethodPost || rt.method == http.MethodPut || rt.method == http.MethodPatch {
			body = map[string]any{}
		}
		r := s.request(rt.method, path, body, headers...)
		if r.Status != http.StatusUnauthorized {
			t.Errorf("%s %s with %q: status %d, want 401; body %s", rt.method, path, headers, r.Status, r.Body)
			continue
		}
		mustError(t, r, http.StatusUnauthorized, "unauthorized", "")
		n++
	}
	return n
}

func TestAdminAuthRoutesRequireCredentials(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	userID := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)

	routes := authAdminRoutes(t, s.app)
	if len(routes) < 20 {
		t.Fatalf("walk found %d admin routes, want at least 20: %v", len(routes), routes)
	}
	var protected []string
	for _, rt := range routes {
		if !rt.isPublic() {
			protected = append(protected, rt.method+" "+rt.template)
		}
	}
	if len(protected) != len(routes)-4 {
		t.Fatalf("the login and the API document not found among admin routes %v", routes)
	}
	for _, want := range []string{
		"GET /admin/metrics", "GET /admin/auth/me", "POST /admin/auth/logout", "GET /admin/realms/themes",
		"POST /admin/realms/import", "POST /admin/realms", "GET /admin/realms", "DELETE /admin/realms/{realm}",
		"GET /admin/realms/{realm}/export", "PUT /admin/realms/{realm}/users/{userId}/reset-password",
		"DELETE /admin/realms/{realm}/users/{userId}",
	} {
		if !slices.Contains(protected, want) {
			t.Errorf("route %s not found by the walk", want)
		}
	}

	for _, c := range []struct {
		name    string
		headers []string
	}{
		{"no credentials", nil},
		{"wrong api key", []string{"X-Admin-API-Key: " + testAPIKey + "-wrong"}},
		{"empty bearer", []string{"Authorization: Bearer "}},
		{"garbage bearer", []string{"Authorization: Bearer not.a.jwt"}},
		{"garbage bearer jws", []string{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"}},
		{"api key as bearer", []string{"Authorization: Bearer " + testAPIKey}},
		{"basic auth", []string{"Authorization: Basic cm9vdDpwYXNzd29yZA=="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := authRequireAll(t, s, "acme", userID, c.headers...); n != len(protected) {
				t.Fatalf("checked %d routes, want %d", n, len(protected))
			}
		})
	}

	// The control: the right key opens them (here, one route of each shape).
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms", nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users/"+userID, nil), http.StatusOK)
	// Nothing was changed by the unauthenticated writes.
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme", nil), http.StatusOK)
}

// authJWTPart decodes one base64url part of a JWT as a JSON object.
func authJWTPart(t *testing.T, part string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatalf("JWT part %q is not base64url: %v", part, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("JWT part %s is not a JSON object: %v", b, err)
	}
	return m
}

func authBearer(token string) string { return "Authorization: Bearer " + token }

func TestAdminAuthUserLogin(t *testing.T) {
	clock := newAuthTestClock()
	s := newTestServer(t, authWithAdminUser(clock))
	stored, err := s.systemUser(authTestAdminUser)
	if err != nil {
		t.Fatalf("first admin user not created: %v", err)
	}
	if !strings.HasPrefix(stored.PasswordHash, "$argon2id$") {
		t.Fatalf("admin password stored as %q, want an argon2id hash", stored.PasswordHash)
	}

	r := s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "root", "password": authTestAdminPassword})
	mustStatus(t, r, http.StatusOK)
	var login struct {
		AccessToken string `json:"accessToken"`
		TokenType   string `json:"tokenType"`
		ExpiresIn   int    `json:"expiresIn"`
		User        struct {
			ID       string `json:"id"`
			Username string `json:"username"`
		} `json:"user"`
	}
	r.decode(t, &login)
	if login.User.ID != stored.ID || login.User.Username != "root" {
		t.Fatalf("login user %+v, want id %s username root", login.User, stored.ID)
	}
	if login.TokenType != "Bearer" || login.ExpiresIn != 900 {
		t.Fatalf("tokenType %q expiresIn %d, want Bearer 900", login.TokenType, login.ExpiresIn)
	}
	token := login.AccessToken
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] == "" {
		t.Fatalf("accessToken %q is not a three-part JWT", token)
	}
	header := authJWTPart(t, parts[0])
	if header["typ"] != "JWT" || header["alg"] != "HS256" {
		t.Fatalf("JWT header %v, want typ JWT alg HS256", header)
	}
	claims := authJWTPart(t, parts[1])
	if claims["sub"] != stored.ID || claims["preferred_username"] != "root" || claims["iss"] != "http://localhost:3000/admin" {
		t.Fatalf("JWT claims %v", claims)
	}
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 900 || int64(iat) != clock.Now().Unix() {
		t.Fatalf("JWT iat %v exp %v, want iat now (%d) and a 15 minute life", iat, exp, clock.Now().Unix())
	}
	if jti, _ := claims["jti"].(string); jti == "" {
		t.Fatalf("JWT has no jti: %v", claims)
	}

	t.Run("bearer token works", func(t *testing.T) {
		mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusOK)
		r := s.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token))
		mustStatus(t, r, http.StatusOK)
		me := r.object(t)
		wantExp := clock.Now().Add(15 * time.Minute).UTC().Format(time.RFC3339)
		if me["type"] != "user" || me["username"] != "root" || me["id"] != stored.ID || me["tokenExpiresAt"] != wantExp {
			t.Fatalf("me %v, want type user username root id %s tokenExpiresAt %s", me, stored.ID, wantExp)
		}
		// The scheme is case-insensitive.
		mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, "Authorization: bearer "+token), http.StatusOK)
	})

	t.Run("api key me", func(t *testing.T) {
		r := s.admin(http.MethodGet, "/admin/auth/me", nil)
		mustStatus(t, r, http.StatusOK)
		var me struct {
			Type        string   `json:"type"`
			Permissions []string `json:"permissions"`
		}
		r.decode(t, &me)
		if me.Type != "api-key" || len(r.object(t)) != 2 || !slices.Equal(me.Permissions, authz.Names(authz.Everything())) {
			t.Fatalf("me with API key %s, want exactly {type: api-key, permissions: every one}", r.Body)
		}
	})

	t.Run("logout with api key", func(t *testing.T) {
		mustError(t, s.admin(http.MethodPost, "/admin/auth/logout", nil), http.StatusBadRequest, "invalid_request", "")
		// and the key is still good
		mustStatus(t, s.admin(http.MethodGet, "/admin/realms", nil), http.StatusOK)
	})

	t.Run("logout revokes the token", func(t *testing.T) {
		other := authLogin(t, s, "root", authTestAdminPassword)
		s.createRealm("acme")
		userID := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)

		r := s.request(http.MethodPost, "/admin/auth/logout", nil, authBearer(token))
		mustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("logout body %q, want none", r.Body)
		}
		ctx := context.Background()
		jti := claims["jti"].(string)
		if revoked, err := s.store.AdminTokenRevoked(ctx, jti); err != nil || !revoked {
			t.Fatalf("token %s revoked = %v, %v; want true", jti, revoked, err)
		}
		if n := authRequireAll(t, s, "acme", userID, authBearer(token)); n < 19 {
			t.Fatalf("checked %d routes after logout, want at least 19", n)
		}
		// A second logout with the dead token is refused too.
		mustError(t, s.request(http.MethodPost, "/admin/auth/logout", nil, authBearer(token)), http.StatusUnauthorized, "unauthorized", "")
		// Revocation is per token: another session of the same user lives on.
		mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(other)), http.StatusOK)
	})
}

func TestAdminAuthLoginRejections(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	bodies := map[string][]byte{}
	for _, c := range []struct {
		name        string
		body        any
		headers     []string
		status      int
		code, field string
	}{
		{"wrong password", map[string]any{"username": "root", "password": "not-the-password"}, nil, 401, "invalid_credentials", ""},
		{"unknown user", map[string]any{"username": "nobody", "password": authTestAdminPassword}, nil, 401, "invalid_credentials", ""},
		{"missing username", map[string]any{"password": authTestAdminPassword}, nil, 400, "invalid_field", "username"},
		{"empty username", map[string]any{"username": "", "password": authTestAdminPassword}, nil, 400, "invalid_field", "username"},
		{"missing password", map[string]any{"username": "root"}, nil, 400, "invalid_field", "password"},
		{"empty password", map[string]any{"username": "root", "password": ""}, nil, 400, "invalid_field", "password"},
		{"username not a string", `{"username": 7, "password": "x"}`, nil, 400, "invalid_field", "username"},
		{"unknown field", map[string]any{"username": "root", "password": "x", "otp": "1"}, nil, 400, "unknown_field", "otp"},
		{"malformed JSON", `{"username": "root", "password": `, nil, 400, "invalid_json", ""},
		{"not an object", `["root"]`, nil, 400, "invalid_json", ""},
		{"empty body", "", nil, 400, "invalid_json", ""},
		{"not JSON", "username=root&password=x", []string{"Content-Type: application/x-www-form-urlencoded"}, 415, "unsupported_media_type", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.request(http.MethodPost, "/admin/auth/login", c.body, c.headers...)
			mustError(t, r, c.status, c.code, c.field)
			if bytes.Contains(r.Body, []byte("accessToken")) {
				t.Fatalf("rejected login issued a token: %s", r.Body)
			}
			bodies[c.name] = r.Body
		})
	}
	// The invalid_credentials answers must not tell which part was wrong.
	if a, b := bodies["wrong password"], bodies["unknown user"]; a == nil || !bytes.Equal(a, b) {
		t.Fatalf("wrong password and unknown user answer differently:\n%s\n%s", a, b)
	}
	// The right password still works: nothing above locked root out.
	authLogin(t, s, "root", authTestAdminPassword)
}

func TestAdminAuthTokenExpiry(t *testing.T) {
	clock := newAuthTestClock()
	s := newTestServer(t, authWithAdminUser(clock))
	token := authLogin(t, s, "root", authTestAdminPassword)

	clock.Advance(14 * time.Minute)
	mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusOK)

	clock.Advance(2 * time.Minute) // 16 minutes after login
	mustError(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, s.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token)), http.StatusUnauthorized, "unauthorized", "")

	// A token issued by a clock set back before it would be valid is refused too (nbf).
	fresh := authLogin(t, s, "root", authTestAdminPassword)
	clock.Advance(-time.Hour)
	mustError(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(fresh)), http.StatusUnauthorized, "unauthorized", "")
	clock.Advance(time.Hour)
	mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(fresh)), http.StatusOK)
}

// authSign signs claims as an HS256 JWT with key.
func authSign(t *testing.T, key []byte, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatalf("signer: %v", err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return tok
}

func TestAdminAuthTokenForged(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	token := authLogin(t, s, "root", authTestAdminPassword)
	parts := strings.Split(token, ".")
	claims := authJWTPart(t, parts[1])

	// Control: the same claims signed with the server's own key are accepted,
	// so every refusal below is down to the one thing each case changes.
	mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(authSign(t, s.app.tokenKey, claims))), http.StatusOK)

	withClaim := func(k string, v any) map[string]any {
		c := map[string]any{}
		for ck, cv := range claims {
			c[ck] = cv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	tampered := withClaim("exp", claims["exp"].(float64)+3600)
	tamperedJSON, _ := json.Marshal(tampered)
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))

	for _, c := range []struct{ name, token string }{
		{"tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString(tamperedJSON) + "." + parts[2]},
		{"another key", authSign(t, bytes.Repeat([]byte{9}, 32), claims)},
		{"master key itself", authSign(t, s.app.cfg.MasterKey, claims)},
		{"alg none", noneHeader + "." + parts[1] + "."},
		{"signature stripped", parts[0] + "." + parts[1] + "."},
		{"wrong issuer", authSign(t, s.app.tokenKey, withClaim("iss", "http://evil.test/admin"))},
		{"wrong audience", authSign(t, s.app.tokenKey, withClaim("aud", "someone-else"))},
		{"no jti", authSign(t, s.app.tokenKey, withClaim("jti", nil))},
		{"no exp", authSign(t, s.app.tokenKey, withClaim("exp", nil))},
		{"unknown admin user", authSign(t, s.app.tokenKey, withClaim("sub", "00000000-0000-4000-8000-000000000000"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(c.token)), http.StatusUnauthorized, "unauthorized", "")
		})
	}
	// The real token is unharmed by all that.
	mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusOK)
}

func TestAdminAuthLoginThrottle(t *testing.T) {
	clock := newAuthTestClock()
	s := newTestServer(t, authWithAdminUser(clock))
	login := func(username, password string) *testResponse {
		return s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": username, "password": password})
	}
	for i := range 5 {
		r := login("root", "wrong-password-"+string(rune('a'+i)))
		mustError(t, r, http.StatusUnauthorized, "invalid_credentials", "")
		if h := r.Header.Get("Retry-After"); h != "" {
			t.Fatalf("failure %d carries Retry-After %q", i+1, h)
		}
	}
	r := login("root", authTestAdminPassword)
	mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
	if h := r.Header.Get("Retry-After"); h != "900" {
		t.Fatalf("Retry-After %q, want 900 (the 15 minute window)", h)
	}
	// The username key is case-insensitive, so case games don't dodge it.
	mustError(t, login("Root", authTestAdminPassword), http.StatusTooManyRequests, "too_many_requests", "")
	// Another username from the same address is not locked out.
	mustError(t, login("someone", "whatever-password"), http.StatusUnauthorized, "invalid_credentials", "")

	clock.Advance(10 * time.Minute)
	r = login("root", authTestAdminPassword)
	mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
	if h := r.Header.Get("Retry-After"); h != "300" {
		t.Fatalf("Retry-After after 10 minutes %q, want 300", h)
	}

	clock.Advance(6 * time.Minute) // 16 minutes after the failures
	token := authLogin(t, s, "root", authTestAdminPassword)
	mustStatus(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusOK)
}

// Invented usernames from one address hold up the guesser, not an
// admin's right password from that address; a wrong password there reads
// as an invented name.
func TestAdminAuthLoginGuardedAddress(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(newAuthTestClock()))
	fastGuardedAnswers(t, s.app)
	login := func(username, password string) *testResponse {
		return s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": username, "password": password})
	}
	for i := range identity.LoginLimitPerIP {
		mustError(t, login(fmt.Sprintf("nobody%d", i), "a-guess-of-a-password"), http.StatusUnauthorized, "invalid_credentials", "")
	}
	for _, who := range []string{"nobody-else", "root"} {
		r := login(who, "a-guess-of-a-password")
		mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", who)
		}
	}
	authLogin(t, s, "root", authTestAdminPassword)
}

// The admin login's throttle is kept in the database: a restart on the
// same file finds it still in force, per username and per address, until
// its window has passed; then the records are forgotten.
func TestAdminAuthLoginThrottleSurvivesRestart(t *testing.T) {
	clock := newAuthTestClock()
	s := newTestServer(t, authWithAdminUser(clock))
	fastGuardedAnswers(t, s.app)
	login := func(s *testServer, username, password string) *testResponse {
		return s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": username, "password": password})
	}
	for i := range identity.LoginLimitPerUser {
		mustError(t, login(s, "root", fmt.Sprintf("wrong-password-%d", i)), http.StatusUnauthorized, "invalid_credentials", "")
	}
	for i := range identity.LoginLimitPerIP - identity.LoginLimitPerUser {
		mustError(t, login(s, fmt.Sprintf("nobody%d", i), "a-guess-of-a-password"), http.StatusUnauthorized, "invalid_credentials", "")
	}

	// Restart: the store closed and opened again on the same file.
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), store.Config{Path: s.dbPath, Schema: testSchema(t), MasterKey: s.app.cfg.MasterKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(t.Context(), st, s.app.cfg)
	if err != nil {
		t.Fatal(err)
	}
	fastGuardedAnswers(t, a)
	s2 := &testServer{t: t, app: a, store: st, handler: a.Handler(), dbPath: s.dbPath}

	r := login(s2, "root", authTestAdminPassword)
	mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
	if h := r.Header.Get("Retry-After"); h != "900" {
		t.Fatalf("root's right password after the restart: Retry-After %q, want 900", h)
	}
	mustError(t, login(s2, "nobody-else", "a-guess-of-a-password"), http.StatusTooManyRequests, "too_many_requests", "")

	clock.Advance(16 * time.Minute)
	mustError(t, login(s2, "nobody-later", "a-guess-of-a-password"), http.StatusUnauthorized, "invalid_credentials", "")
	if kept, err := st.AdminLoginFailures(t.Context(), 0); err != nil || len(kept) != 2 {
		t.Fatalf("records after the window: %d %v, want the last failure's two", len(kept), err)
	}
	authLogin(t, s2, "root", authTestAdminPassword)
}

func TestAdminAuthUserCreatedOnlyOnFirstStart(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	ctx := context.Background()
	first, err := s.systemUser("root")
	if err != nil {
		t.Fatal(err)
	}

	cfg := s.app.cfg
	cfg.AdminPassword = "a-different-long-password"
	a2, err := New(ctx, s.store, cfg)
	if err != nil {
		t.Fatalf("second New: %v", err)
	}
	cfg.AdminUser = "other-admin"
	if _, err := New(ctx, s.store, cfg); err != nil {
		t.Fatalf("third New: %v", err)
	}
	if accounts, err := s.store.ListAdminAccounts(ctx); err != nil || len(accounts) != 1 {
		t.Fatalf("admin accounts = %d, %v; want 1", len(accounts), err)
	}
	if _, err := s.systemUser("other-admin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other-admin lookup: %v, want ErrNotFound", err)
	}
	again, err := s.systemUser("root")
	if err != nil || again.PasswordHash != first.PasswordHash || again.ID != first.ID {
		t.Fatalf("root after restart %+v (%v), want unchanged %+v", again, err, first)
	}

	s2 := &testServer{t: t, app: a2, store: s.store, handler: a2.Handler(), dbPath: s.dbPath}
	authLogin(t, s2, "root", authTestAdminPassword)
	r := s2.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "root", "password": "a-different-long-password"})
	mustError(t, r, http.StatusUnauthorized, "invalid_credentials", "")
}

// authAPIKeyFromOutput extracts the key from New's one-line announcement.
func authAPIKeyFromOutput(t *testing.T, out string) string {
	t.Helper()
	// The setup wizard's lines may follow (app/setup): the key's is one.
	var lines []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "Admin API key") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 1 || !strings.HasSuffix(lines[0], "\n") {
		t.Fatalf("New printed %q, want exactly one line of the admin API key", out)
	}
	out = lines[0]
	i := strings.LastIndex(out, ": ")
	if i < 0 {
		t.Fatalf("no key in %q", out)
	}
	key := strings.TrimSpace(out[i+2:])
	if len(key) < 32 || strings.ContainsAny(key, " \t") {
		t.Fatalf("printed key %q is too short or malformed", key)
	}
	return key
}

// authStoredKeyHash is the admin API key's hash as the store keeps it
// (one row at most: the schema allows no other).
func authStoredKeyHash(t *testing.T, st *store.Store) []byte {
	t.Helper()
	h, err := st.AdminAPIKeyHash(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestAdminAuthAPIKeyBootstrap(t *testing.T) {
	var out bytes.Buffer
	s := newTestServer(t, func(c *Config) { c.AdminAPIKey = ""; c.Stdout = &out })
	key := authAPIKeyFromOutput(t, out.String())
	if !strings.Contains(out.String(), "X-Admin-API-Key") {
		t.Fatalf("announcement %q does not say how to send the key", out.String())
	}

	withKey := func(s *testServer, k string) *testResponse {
		return s.request(http.MethodGet, "/admin/realms", nil, "X-Admin-API-Key: "+k)
	}
	mustStatus(t, withKey(s, key), http.StatusOK)
	mustError(t, withKey(s, testAPIKey), http.StatusUnauthorized, "unauthorized", "")

	sum := sha256.Sum256([]byte(key))
	if h := authStoredKeyHash(t, s.store); !bytes.Equal(h, sum[:]) {
		t.Fatalf("stored key hash %x, want exactly the SHA-256 %x", h, sum)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(s.dbPath + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(key)) {
			t.Fatalf("the key's text is stored in %s", s.dbPath+suffix)
		}
		if suffix == "" && len(data) == 0 {
			t.Fatalf("database file is empty")
		}
	}

	ctx := context.Background()
	t.Run("second start prints nothing", func(t *testing.T) {
		var out2 bytes.Buffer
		cfg := s.app.cfg
		cfg.Stdout = &out2
		a2, err := New(ctx, s.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if out2.Len() != 0 {
			t.Fatalf("second New printed %q", out2.String())
		}
		s2 := &testServer{t: t, app: a2, store: s.store, handler: a2.Handler(), dbPath: s.dbPath}
		mustStatus(t, withKey(s2, key), http.StatusOK)
		if h := authStoredKeyHash(t, s.store); !bytes.Equal(h, sum[:]) {
			t.Fatalf("second New changed the stored key hash: %x", h)
		}
	})

	t.Run("configured key rotates", func(t *testing.T) {
		const rotated = "rotated-admin-api-key-0123456789abcdef"
		var out3 bytes.Buffer
		cfg := s.app.cfg
		cfg.Stdout = &out3
		cfg.AdminAPIKey = rotated
		a3, err := New(ctx, s.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if out3.Len() != 0 {
			t.Fatalf("New with a configured key printed %q", out3.String())
		}
		s3 := &testServer{t: t, app: a3, store: s.store, handler: a3.Handler(), dbPath: s.dbPath}
		mustError(t, withKey(s3, key), http.StatusUnauthorized, "unauthorized", "")
		mustStatus(t, withKey(s3, rotated), http.StatusOK)
		rsum := sha256.Sum256([]byte(rotated))
		if h := authStoredKeyHash(t, s.store); !bytes.Equal(h, rsum[:]) {
			t.Fatalf("stored key hash after rotation %x, want %x", h, rsum)
		}

		// A later start without a configured key keeps the rotated one and prints nothing.
		var out4 bytes.Buffer
		cfg.AdminAPIKey, cfg.Stdout = "", &out4
		a4, err := New(ctx, s.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if out4.Len() != 0 {
			t.Fatalf("New after rotation printed %q", out4.String())
		}
		s4 := &testServer{t: t, app: a4, store: s.store, handler: a4.Handler(), dbPath: s.dbPath}
		mustStatus(t, withKey(s4, rotated), http.StatusOK)
		mustError(t, withKey(s4, key), http.StatusUnauthorized, "unauthorized", "")
	})
}
