package app

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
)

// logoutTestReceiver is a client's back-channel logout endpoint. Each
// request is answered by the next status of statuses (the last one
// repeating); the logout tokens received are kept.
type logoutTestReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	tokens   []string // every logout token posted, also refused ones
	got      chan string
}

func newLogoutTestReceiver(t *testing.T, statuses ...int) *logoutTestReceiver {
	t.Helper()
	rc := &logoutTestReceiver{statuses: statuses, got: make(chan string, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("logout token posted as %q", ct)
		}
		token := r.PostFormValue("logout_token")
		rc.mu.Lock()
		rc.tokens = append(rc.tokens, token)
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status = rc.statuses[0]
			if len(rc.statuses) > 1 {
				rc.statuses = rc.statuses[1:]
			}
		}
		rc.mu.Unlock()
		if status == http.StatusFound {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(status)
		if status == http.StatusOK {
			rc.got <- token
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *logoutTestReceiver) received() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.tokens...)
}

// next waits for the next logout token accepted.
func (rc *logoutTestReceiver) next(t *testing.T) string {
	t.Helper()
	select {
	case tok := <-rc.got:
		return tok
	case <-time.After(5 * time.Second):
		t.Fatal("no back-channel logout received")
		return ""
	}
}

// logoutTestDeliver runs the delivery workers for the rest of the test.
func logoutTestDeliver(t *testing.T, s *oidcTestServer) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.app.startLogoutDelivery(ctx)
	t.Cleanup(func() { cancel(); wait() })
}

// logoutTestLog collects the server's log, written from several goroutines.
type logoutTestLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logoutTestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logoutTestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logoutTestLog) count(s string) int { return strings.Count(l.String(), s) }

func TestBackchannelLogoutSent(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	fx.client(map[string]any{"clientId": "mail", "backchannelLogoutUri": rc.URL + "/mail"})
	fx.client(map[string]any{"clientId": "wiki", "backchannelLogoutUri": rc.URL + "/wiki", "backchannelLogoutSessionRequired": false})
	logoutTestDeliver(t, s)
	sid, _ := fx.login("web", "mail", "wiki")

	page := fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {fx.idToken("web", sid, s.app.now().Add(time.Minute))}})
	mustStatusPage(t, page, http.StatusOK)

	keys := oidc.NewRemoteKeySet(t.Context(), s.issuer("acme")+"/protocol/openid-connect/certs")
	byClient := map[string]map[string]any{}
	for range 2 {
		tok := rc.next(t)
		if _, err := keys.VerifySignature(t.Context(), tok); err != nil {
			t.Fatalf("logout token signature: %v", err)
		}
		header, claims := jwtParts(t, tok)
		if header["typ"] != "logout+jwt" || header["kid"] == nil {
			t.Fatalf("logout token header %v", header)
		}
		byClient[claims["aud"].(string)] = claims
	}
	for _, client := range []string{"mail", "wiki"} {
		claims := byClient[client]
		if claims == nil {
			t.Fatalf("no logout token for %s: %v", client, byClient)
		}
		events, _ := claims["events"].(map[string]any)
		if claims["iss"] != s.issuer("acme") || claims["sub"] != fx.user || claims["jti"] == nil ||
			events == nil || events[backchannelEvent] == nil {
			t.Fatalf("%s logout token claims %v", client, claims)
		}
		if _, ok := claims["nonce"]; ok {
			t.Fatalf("%s logout token has a nonce", client)
		}
		if life := claims["exp"].(float64) - claims["iat"].(float64); life != 120 {
			t.Fatalf("%s logout token lives %vs, want 120", client, life)
		}
	}
	if byClient["mail"]["sid"] != sid {
		t.Fatalf("mail requires the session: sid %v, want %s", byClient["mail"]["sid"], sid)
	}
	if _, ok := byClient["wiki"]["sid"]; ok {
		t.Fatal("wiki does not require the session, yet its token has a sid")
	}
	// A client without a back-channel URI gets nothing, and nobody gets two.
	time.Sleep(50 * time.Millisecond)
	if got := rc.received(); len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
}

func TestBackchannelLogoutRetries(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	flaky := newLogoutTestReceiver(t, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusOK)
	refusing := newLogoutTestReceiver(t, http.StatusBadRequest)
	redirecting := newLogoutTestReceiver(t, http.StatusFound)
	dead := newLogoutTestReceiver(t, http.StatusBadGateway)
	fx.client(map[string]any{"clientId": "flaky", "backchannelLogoutUri": flaky.URL})
	fx.client(map[string]any{"clientId": "refusing", "backchannelLogoutUri": refusing.URL})
	fx.client(map[string]any{"clientId": "redirecting", "backchannelLogoutUri": redirecting.URL})
	fx.client(map[string]any{"clientId": "dead", "backchannelLogoutUri": dead.URL})
	s.app.backchannel.retryWait = time.Millisecond
	logoutTestDeliver(t, s)
	_, refresh := fx.login("flaky", "refusing", "redirecting", "dead")

	req, _ := http.NewRequest(http.MethodPost, s.issuer("acme")+"/protocol/openid-connect/logout",
		strings.NewReader(url.Values{"refresh_token": {refresh["flaky"]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("flaky", fx.secrets["flaky"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %d", resp.StatusCode)
	}

	tok := flaky.next(t)
	if got := flaky.received(); len(got) != 3 || got[0] != tok || got[1] != tok {
		t.Fatalf("flaky receiver got %d posts, want the same token three times", len(got))
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(dead.received()) < backchannelAttempts && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	for name, c := range map[string]struct {
		rc   *logoutTestReceiver
		want int
	}{"refusing (400 is final)": {refusing, 1}, "redirecting (not followed)": {redirecting, 1}, "dead (5xx every time)": {dead, backchannelAttempts}} {
		if got := len(c.rc.received()); got != c.want {
			t.Errorf("%s: %d posts, want %d", name, got, c.want)
		}
	}
}

func TestBackchannelLogoutQueueFull(t *testing.T) {
	var logs logoutTestLog
	s := newOIDCTestServer(t, allowLoopback, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	for _, id := range []string{"app-a", "app-b", "app-c"} {
		fx.client(map[string]any{"clientId": id, "backchannelLogoutUri": rc.URL + "/" + id})
	}
	s.app.backchannel.capacity = 1
	sid, _ := fx.login("app-a", "app-b", "app-c")
	// No worker yet: the first delivery waits in the queue, the others
	// find it full.
	page := fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {fx.idToken("web", sid, s.app.now().Add(time.Minute))}})
	mustStatusPage(t, page, http.StatusOK)
	if got := fx.liveSessions(); got["sso"] != 0 {
		t.Fatal("a full delivery queue kept the logout from happening")
	}
	if n := logs.count("back-channel logout dropped: delivery queue full"); n != 2 {
		t.Fatalf("%d drops logged, want 2:\n%s", n, logs.String())
	}
	logoutTestDeliver(t, s)
	rc.next(t)
	time.Sleep(50 * time.Millisecond)
	if got := rc.received(); len(got) != 1 {
		t.Fatalf("%d deliveries, want the one queued", len(got))
	}
}

// A token that expires while it waits in the queue is not sent.
func TestBackchannelLogoutExpiresInQueue(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).UnixNano())
	var logs logoutTestLog
	s := newOIDCTestServer(t, allowLoopback, func(c *Config) {
		c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	fx.client(map[string]any{"clientId": "mail", "backchannelLogoutUri": rc.URL})
	sid, _ := fx.login("mail")
	fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {fx.idToken("web", sid, s.app.now().Add(time.Minute))}})
	clock.Add(int64(logoutTokenLifetime))
	logoutTestDeliver(t, s)
	deadline := time.Now().Add(5 * time.Second)
	for logs.count("its token expired in the queue") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if logs.count("its token expired in the queue") != 1 || len(rc.received()) != 0 {
		t.Fatalf("expired token: %d posts; log:\n%s", len(rc.received()), logs.String())
	}
}

// Stopping the workers cancels a delivery in flight instead of waiting on
// a client that does not answer.
func TestBackchannelLogoutStops(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	arrived := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // with the body read, the server sees the client go
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	fx.client(map[string]any{"clientId": "slow", "backchannelLogoutUri": hang.URL})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.app.startLogoutDelivery(ctx)
	sid, _ := fx.login("slow")
	fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {fx.idToken("web", sid, s.app.now().Add(time.Minute))}})
	<-arrived
	cancel()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("delivery workers did not stop")
	}
}

func TestBackchannelLogoutReceived(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	other := logoutTestSetup(t, s, "other")
	now := s.app.now()
	claims := func(change func(map[string]any)) map[string]any {
		c := map[string]any{"iss": s.issuer("acme"), "aud": "web", "sub": fx.user, "iat": now.Unix(),
			"exp": now.Add(2 * time.Minute).Unix(), "jti": uuid.NewString(),
			"events": map[string]any{backchannelEvent: map[string]any{}}}
		if change != nil {
			change(c)
		}
		return c
	}
	send := func(token string) *testResponse {
		return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/logout/backchannel",
			url.Values{"logout_token": {token}}.Encode(), "Content-Type: application/x-www-form-urlencoded")
	}

	sid, refresh := fx.login("web")
	keep, _ := fx.login("spa")
	good := fx.sign("logout+jwt", claims(func(c map[string]any) { c["sid"] = sid }))
	r := send(good)
	mustStatus(t, r, http.StatusOK)
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, sid); err == nil || fx.refreshLive(refresh["web"]) {
		t.Fatal("the session named by sid survived")
	}
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, keep); err != nil {
		t.Fatalf("another session ended: %v", err)
	}

	// A good token's header and signature over another's claims.
	signed := strings.Split(fx.sign("logout+jwt", claims(nil)), ".")
	forged := strings.Split(fx.sign("logout+jwt", claims(func(c map[string]any) { c["sub"] = "someone-else" })), ".")
	tampered := signed[0] + "." + forged[1] + "." + signed[2]
	for _, tc := range []struct {
		name  string
		token string
		desc  string
	}{
		{"replayed jti", good, "the logout token was already used"},
		{"signed by another realm", other.sign("logout+jwt", claims(nil)), "the logout token is not a JWT signed by this realm"},
		{"tampered", tampered, "the logout token is not a JWT signed by this realm"},
		{"access token", fx.sign("at+jwt", claims(nil)), "the logout token is not a JWT signed by this realm"},
		{"nonce", fx.sign("logout+jwt", claims(func(c map[string]any) { c["nonce"] = "n" })), "a logout token must not carry a nonce"},
		{"wrong audience", fx.sign("logout+jwt", claims(func(c map[string]any) { c["aud"] = "ghost" })), "aud names no client of this realm"},
		{"no events", fx.sign("logout+jwt", claims(func(c map[string]any) { delete(c, "events") })), "events must hold the back-channel logout event"},
		{"other event", fx.sign("logout+jwt", claims(func(c map[string]any) { c["events"] = map[string]any{"x": map[string]any{}} })),
			"events must hold the back-channel logout event"},
		{"wrong issuer", fx.sign("logout+jwt", claims(func(c map[string]any) { c["iss"] = s.issuer("other") })), "iss is not this realm's issuer"},
		{"old", fx.sign("logout+jwt", claims(func(c map[string]any) { c["iat"] = now.Add(-6 * time.Minute).Unix() })), "iat is not recent"},
		{"from the future", fx.sign("logout+jwt", claims(func(c map[string]any) { c["iat"] = now.Add(time.Minute).Unix() })), "iat is not recent"},
		{"no iat", fx.sign("logout+jwt", claims(func(c map[string]any) { delete(c, "iat") })), "iat is required"},
		{"expired", fx.sign("logout+jwt", claims(func(c map[string]any) { c["exp"] = now.Unix() })), "the logout token has expired"},
		{"no jti", fx.sign("logout+jwt", claims(func(c map[string]any) { delete(c, "jti") })), "jti is required"},
		{"neither sub nor sid", fx.sign("logout+jwt", claims(func(c map[string]any) { delete(c, "sub") })), "sub or sid is required"},
		{"sid of another user", fx.sign("logout+jwt", claims(func(c map[string]any) { c["sid"] = keep; c["sub"] = "someone" })),
			"the sid is not a session of the sub"},
		{"missing", "", "logout_token is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(tc.token)
			var e oauthError
			r.decode(t, &e)
			if r.Status != http.StatusBadRequest || e.Error != "invalid_request" || e.Description != tc.desc {
				t.Fatalf("%d %s, want 400 invalid_request %q", r.Status, r.Body, tc.desc)
			}
		})
	}
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, keep); err != nil {
		t.Fatalf("a refused logout token ended a session: %v", err)
	}

	// By sub alone: every session of the user but the offline ones.
	offline := fx.offline("web")
	mustStatus(t, send(fx.sign("logout+jwt", claims(nil))), http.StatusOK)
	if got := fx.liveSessions(); got["sso"] != 0 || got["oauth"] != 0 || got["offline"] != 1 || !fx.refreshLive(offline) {
		t.Fatalf("after logout by sub: %v", got)
	}
	// A session already over is no error.
	mustStatus(t, send(fx.sign("logout+jwt", claims(func(c map[string]any) { c["sid"] = sid }))), http.StatusOK)
}

// A logout received is passed on to the clients of the sessions it ends.
func TestBackchannelLogoutReceivedPassedOn(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	fx.client(map[string]any{"clientId": "mail", "backchannelLogoutUri": rc.URL})
	logoutTestDeliver(t, s)
	sid, _ := fx.login("web", "mail")
	now := s.app.now()
	token := fx.sign("logout+jwt", map[string]any{"iss": s.issuer("acme"), "aud": "web", "sid": sid, "iat": now.Unix(),
		"jti": uuid.NewString(), "events": map[string]any{backchannelEvent: map[string]any{}}})
	r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/logout/backchannel",
		"logout_token="+token, "Content-Type: application/x-www-form-urlencoded")
	mustStatus(t, r, http.StatusOK)
	_, claims := jwtParts(t, rc.next(t))
	if claims["aud"] != "mail" || claims["sid"] != sid {
		t.Fatalf("passed-on logout token %v", claims)
	}
}

// Ending sessions through the admin API, or revoking a consent, tells the
// clients too.
func TestBackchannelLogoutFromAdmin(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	fx.client(map[string]any{"clientId": "mail", "backchannelLogoutUri": rc.URL + "/mail"})
	logoutTestDeliver(t, s)

	for _, c := range []struct {
		name   string
		logout func(sid string)
	}{
		{"one session", func(sid string) {
			mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+sid+"?type=sso", nil), http.StatusOK)
		}},
		{"all of a user's sessions", func(string) {
			mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+fx.user+"/sessions", nil), http.StatusOK)
		}},
		{"a revoked consent", func(string) {
			if err := s.store.GrantConsent(context.Background(), fx.user, fx.clients["mail"].ID, []string{"openid"}, 1); err != nil {
				t.Fatal(err)
			}
			mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+fx.user+"/consents/mail", nil), http.StatusNoContent)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sid, _ := fx.login("mail")
			c.logout(sid)
			_, claims := jwtParts(t, rc.next(t))
			if claims["aud"] != "mail" || claims["sid"] != sid || claims["sub"] != fx.user {
				t.Fatalf("logout token claims %v, want aud mail, sid %s", claims, sid)
			}
		})
	}
}

// Disabling a client ends its sessions, and it hears of each by
// back-channel logout, as it does when a user is disabled; another
// client's session under the same SSO session hears nothing.
func TestBackchannelLogoutOnClientDisable(t *testing.T) {
	s := newOIDCTestServer(t, allowLoopback)
	fx := logoutTestSetup(t, s, "acme")
	rc := newLogoutTestReceiver(t)
	fx.client(map[string]any{"clientId": "mail", "backchannelLogoutUri": rc.URL + "/mail"})
	fx.client(map[string]any{"clientId": "wiki", "backchannelLogoutUri": rc.URL + "/wiki"})
	logoutTestDeliver(t, s)
	sid, _ := fx.login("mail", "wiki")

	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/clients/mail", map[string]any{"enabled": false}), http.StatusOK)
	_, claims := jwtParts(t, rc.next(t))
	if claims["aud"] != "mail" || claims["sub"] != fx.user || claims["sid"] != sid {
		t.Fatalf("logout token claims %v, want mail's for %s in %s", claims, fx.user, sid)
	}
	time.Sleep(50 * time.Millisecond)
	if got := rc.received(); len(got) != 1 {
		t.Fatalf("%d deliveries, want mail's alone", len(got))
	}
}
