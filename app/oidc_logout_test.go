package app

import (
	"crypto/rand"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// logoutTestRealm is a realm with user alice and clients, for the logout
// tests. Sessions and tokens are made in the store directly, as the login
// flow would make them.
type logoutTestRealm struct {
	s       *oidcTestServer
	t       *testing.T
	realm   *store.Realm
	user    string // alice's ID
	clients map[string]*store.Client
	secrets map[string]string
	cookies map[string]string // SSO session ID -> the cookie secret it hashes from
}

const (
	logoutTestRedirect = "https://rp.example/cb"
	logoutTestBye      = "https://rp.example/bye"
)

// logoutTestSetup makes realm name with alice, the confidential client
// "web" (redirect URIs logoutTestRedirect and logoutTestBye) and the public
// client "spa".
func logoutTestSetup(t *testing.T, s *oidcTestServer, name string) *logoutTestRealm {
	t.Helper()
	s.createRealm(name)
	user := s.createUser(name, map[string]any{"username": "alice", "email": "alice@example.com"})
	realm, err := s.store.GetRealm(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	fx := &logoutTestRealm{s: s, t: t, realm: realm, user: user["id"].(string), clients: map[string]*store.Client{},
		secrets: map[string]string{}, cookies: map[string]string{}}
	fx.client(map[string]any{"clientId": "web", "redirectUris": []string{logoutTestRedirect, logoutTestBye}})
	fx.client(map[string]any{"clientId": "spa", "clientType": "PUBLIC", "redirectUris": []string{"https://spa.example/cb"}})
	return fx
}

// client creates a client from an admin API body.
func (fx *logoutTestRealm) client(body map[string]any) *store.Client {
	fx.t.Helper()
	r := fx.s.admin(http.MethodPost, "/admin/realms/"+fx.realm.Name+"/clients", body)
	mustStatus(fx.t, r, http.StatusCreated)
	id := body["clientId"].(string)
	if secret, ok := r.object(fx.t)["secret"].(string); ok {
		fx.secrets[id] = secret
	}
	c, err := fx.s.store.GetClientByClientID(fx.t.Context(), fx.realm.ID, id)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.clients[id] = c
	return c
}

// login makes an SSO session of alice with an OAuth session and a refresh
// token for each client, and returns the SSO session's ID and the tokens
// by clientId.
func (fx *logoutTestRealm) login(clients ...string) (sid string, refresh map[string]string) {
	fx.t.Helper()
	now := fx.s.app.now().UnixMilli()
	sid = fx.ssoID()
	hour := int64(time.Hour / time.Millisecond)
	fx.session(&store.Session{ID: sid, RealmID: fx.realm.ID, UserID: fx.user, Kind: store.SessionSSO,
		IPAddress: "192.0.2.9", StartedAt: now, LastAccessAt: now, ExpiresAt: now + hour, AuthTime: now, AMR: []string{"pwd"}})
	refresh = map[string]string{}
	for _, id := range clients {
		oauth := uuid.NewString()
		fx.session(&store.Session{ID: oauth, RealmID: fx.realm.ID, UserID: fx.user, Kind: store.SessionOAuth, ParentID: sid,
			ClientID: fx.clients[id].ID, IPAddress: "192.0.2.9", StartedAt: now, LastAccessAt: now, ExpiresAt: now + hour,
			AuthTime: now, AMR: []string{"pwd"}})
		refresh[id] = fx.refreshToken(id, oauth, false)
	}
	return sid, refresh
}

// offline makes an offline session of alice for client, and returns its
// offline token.
func (fx *logoutTestRealm) offline(client string) string {
	fx.t.Helper()
	now := fx.s.app.now().UnixMilli()
	id := uuid.NewString()
	fx.session(&store.Session{ID: id, RealmID: fx.realm.ID, UserID: fx.user, Kind: store.SessionOAuth, Offline: true,
		ClientID: fx.clients[client].ID, IPAddress: "192.0.2.9", StartedAt: now, LastAccessAt: now,
		ExpiresAt: now + int64(30*24*time.Hour/time.Millisecond), AuthTime: now, AMR: []string{"pwd"}})
	return fx.refreshToken(client, id, true)
}

func (fx *logoutTestRealm) session(s *store.Session) {
	fx.t.Helper()
	if err := fx.s.store.CreateSession(fx.t.Context(), s); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *logoutTestRealm) refreshToken(client, session string, offline bool) string {
	fx.t.Helper()
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := fx.s.app.now().UnixMilli()
	err := fx.s.store.CreateRefreshToken(fx.t.Context(), &store.RefreshToken{ID: uuid.NewString(), RealmID: fx.realm.ID,
		TokenHash: store.HashToken(token), SessionID: session, ClientID: fx.clients[client].ID, UserID: fx.user,
		Scopes: []string{"openid"}, Offline: offline, AuthTime: now, AMR: []string{"pwd"}, CreatedAt: now,
		ExpiresAt: now + int64(time.Hour/time.Millisecond)})
	if err != nil {
		fx.t.Fatal(err)
	}
	return token
}

// idToken signs an ID token of alice for client with sid, as the
// authorization-code flow would issue it, expiring at exp.
func (fx *logoutTestRealm) idToken(client, sid string, exp time.Time) string {
	fx.t.Helper()
	return fx.sign("JWT", map[string]any{"iss": fx.s.issuer(fx.realm.Name), "sub": fx.user, "aud": client,
		"azp": client, "sid": sid, "iat": exp.Add(-5 * time.Minute).Unix(), "exp": exp.Unix(), "nonce": "n-1"})
}

func (fx *logoutTestRealm) sign(typ string, claims map[string]any) string {
	fx.t.Helper()
	token, err := fx.s.app.sign(fx.t.Context(), fx.realm, typ, claims)
	if err != nil {
		fx.t.Fatal(err)
	}
	return token
}

// liveSessions lists alice's active sessions by kind: "sso", "oauth" and
// "offline".
func (fx *logoutTestRealm) liveSessions() map[string]int {
	fx.t.Helper()
	sessions, err := fx.s.store.ListUserSessions(fx.t.Context(), fx.realm.ID, fx.user, fx.s.app.now().UnixMilli())
	if err != nil {
		fx.t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range sessions {
		kind := s.Kind
		if s.Offline {
			kind = "offline"
		}
		out[kind]++
	}
	return out
}

// refreshLive says whether a refresh token can still be used.
func (fx *logoutTestRealm) refreshLive(token string) bool {
	fx.t.Helper()
	rt, err := fx.s.store.RefreshTokenByHash(fx.t.Context(), fx.realm.ID, store.HashToken(token))
	return err == nil && rt.Live(fx.s.app.now().UnixMilli())
}

// logoutTestBrowser is an HTTP client with a cookie jar that does not
// follow redirects, so each answer can be looked at.
func logoutTestBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ssoID is a new SSO session ID, made from a cookie secret as the login
// page makes it, so a browser can be given its cookie.
func (fx *logoutTestRealm) ssoID() string {
	secret := randomToken()
	id := ssoSessionID(secret)
	fx.cookies[id] = secret
	return id
}

// setSSOCookie gives the browser the SSO cookie of session sid, as the
// login page sets it.
func (fx *logoutTestRealm) setSSOCookie(browser *http.Client, sid string) {
	fx.t.Helper()
	u, _ := url.Parse(fx.s.url + "/realms/" + fx.realm.Name + "/")
	browser.Jar.SetCookies(u, []*http.Cookie{{Name: ssoCookieName(fx.realm), Value: fx.cookies[sid],
		Path: "/realms/" + fx.realm.Name + "/", HttpOnly: true}})
}

// ssoCookie is the ID of the SSO session the browser's cookie names, or "".
func (fx *logoutTestRealm) ssoCookie(browser *http.Client) string {
	u, _ := url.Parse(fx.s.url + "/realms/" + fx.realm.Name + "/")
	for _, c := range browser.Jar.Cookies(u) {
		if c.Name == ssoCookieName(fx.realm) && c.Value != "" {
			return ssoSessionID(c.Value)
		}
	}
	return ""
}

type logoutTestPage struct {
	status   int
	location string
	body     string
	header   http.Header
}

func logoutTestDo(t *testing.T, browser *http.Client, req *http.Request) logoutTestPage {
	t.Helper()
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return logoutTestPage{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(body), header: resp.Header}
}

func (fx *logoutTestRealm) get(browser *http.Client, query url.Values) logoutTestPage {
	fx.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fx.s.issuer(fx.realm.Name)+"/protocol/openid-connect/logout?"+query.Encode(), nil)
	return logoutTestDo(fx.t, browser, req)
}

func logoutTestPost(t *testing.T, browser *http.Client, target string, form url.Values) logoutTestPage {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return logoutTestDo(t, browser, req)
}

var (
	logoutTestFormRe  = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	logoutTestInputRe = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)"`)
)

// logoutTestForm reads the confirmation page's form: its action and its
// hidden fields.
func logoutTestForm(t *testing.T, page string) (action string, fields url.Values) {
	t.Helper()
	m := logoutTestFormRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form in page:\n%s", page)
	}
	fields = url.Values{}
	for _, in := range logoutTestInputRe.FindAllStringSubmatch(page, -1) {
		fields.Set(html.UnescapeString(in[1]), html.UnescapeString(in[2]))
	}
	return html.UnescapeString(m[1]), fields
}

func TestLogoutDiscovery(t *testing.T) {
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	doc := s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil).object(t)
	if doc["end_session_endpoint"] != s.issuer("acme")+"/protocol/openid-connect/logout" ||
		doc["backchannel_logout_supported"] != true || doc["backchannel_logout_session_supported"] != true {
		t.Fatalf("discovery lacks logout: %v", doc)
	}
}

func TestLogoutWithIDTokenHint(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	sid, refresh := fx.login("web", "spa")
	offline := fx.offline("web")
	browser := logoutTestBrowser(t)
	fx.setSSOCookie(browser, sid)
	// The hint expired an hour ago: still good for logout.
	hint := fx.idToken("web", sid, s.app.now().Add(-time.Hour))

	page := fx.get(browser, url.Values{"id_token_hint": {hint}, "post_logout_redirect_uri": {logoutTestBye}, "state": {"s 1&x"}})
	if page.status != http.StatusFound || page.location != logoutTestBye+"?state=s+1%26x" {
		t.Fatalf("logout: %d to %q, want 302 to the registered URI with the state", page.status, page.location)
	}
	if got := fx.liveSessions(); got["sso"] != 0 || got["oauth"] != 0 || got["offline"] != 1 {
		t.Fatalf("sessions after logout %v: want only the offline one", got)
	}
	if fx.refreshLive(refresh["web"]) || fx.refreshLive(refresh["spa"]) {
		t.Fatal("a refresh token of the ended session still works")
	}
	if !fx.refreshLive(offline) {
		t.Fatal("the offline token did not survive SSO logout")
	}
	if fx.ssoCookie(browser) != "" {
		t.Fatal("SSO cookie not cleared")
	}

	// Without a redirect URI the browser lands on the signed-out page; the
	// session is already over, which is no error.
	page = fx.get(logoutTestBrowser(t), url.Values{"id_token_hint": {hint}})
	if page.status != http.StatusOK || !strings.Contains(page.body, "You are signed out") ||
		!strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Fatalf("logout without redirect: %d %s", page.status, page.body)
	}
}

// A hint ends its own sid's session, and the browser's only if it is the
// hinted user's.
func TestLogoutHintSessionsOfItsUser(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	bob := s.createUser("acme", map[string]any{"username": "bob"})["id"].(string)
	now := s.app.now().UnixMilli()
	bobSSO := fx.ssoID()
	fx.session(&store.Session{ID: bobSSO, RealmID: fx.realm.ID, UserID: bob, Kind: store.SessionSSO, IPAddress: "192.0.2.3",
		StartedAt: now, LastAccessAt: now, ExpiresAt: now + 3_600_000, AMR: []string{"pwd"}})
	sid, _ := fx.login("web")
	browser := logoutTestBrowser(t)
	fx.setSSOCookie(browser, bobSSO)
	page := fx.get(browser, url.Values{"id_token_hint": {fx.idToken("web", sid, s.app.now().Add(time.Minute))}})
	mustStatusPage(t, page, http.StatusOK)
	if got := fx.liveSessions(); got["sso"] != 0 {
		t.Fatalf("alice's session survived: %v", got)
	}
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, bobSSO); err != nil {
		t.Fatalf("bob's session ended by alice's hint: %v", err)
	}
	if fx.ssoCookie(browser) != bobSSO {
		t.Fatal("bob's cookie cleared by alice's hint")
	}
}

func mustStatusPage(t *testing.T, page logoutTestPage, want int) {
	t.Helper()
	if page.status != want {
		t.Fatalf("status %d, want %d: %s", page.status, want, page.body)
	}
}

func TestLogoutRefusedRequests(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	other := logoutTestSetup(t, s, "other")
	sid, _ := fx.login("web")
	otherSID, _ := other.login("web")
	future := s.app.now().Add(time.Minute)
	good := fx.idToken("web", sid, future)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"x","sub":"y","aud":"web"}`)) + "." + parts[2]
	accessToken := fx.sign("at+jwt", map[string]any{"iss": s.issuer("acme"), "sub": fx.user, "aud": "web", "sid": sid,
		"exp": future.Unix()})
	for _, tc := range []struct {
		name  string
		query url.Values
		text  string
	}{
		{"unregistered redirect URI", url.Values{"id_token_hint": {good}, "post_logout_redirect_uri": {"https://evil.example/"}},
			"not registered"},
		{"redirect URI by prefix", url.Values{"id_token_hint": {good}, "post_logout_redirect_uri": {logoutTestBye + "/more"}},
			"not registered"},
		{"another client's redirect URI", url.Values{"client_id": {"spa"}, "post_logout_redirect_uri": {logoutTestBye}},
			"not registered"},
		{"redirect URI without hint or client", url.Values{"post_logout_redirect_uri": {logoutTestBye}}, "needs an id_token_hint"},
		{"unknown client", url.Values{"client_id": {"ghost"}, "post_logout_redirect_uri": {logoutTestBye}}, "unknown"},
		{"tampered hint", url.Values{"id_token_hint": {tampered}, "post_logout_redirect_uri": {logoutTestBye}}, "not valid"},
		{"hint of another realm", url.Values{"id_token_hint": {other.idToken("web", otherSID, future)}}, "not valid"},
		{"access token as hint", url.Values{"id_token_hint": {accessToken}}, "not valid"},
		{"hint for no client of the realm", url.Values{"id_token_hint": {fx.sign("JWT", map[string]any{
			"iss": s.issuer("acme"), "sub": fx.user, "aud": "ghost", "sid": sid, "exp": future.Unix()})}}, "not valid"},
		{"hint and client_id disagree", url.Values{"id_token_hint": {good}, "client_id": {"spa"}}, "does not match"},
		{"garbage hint", url.Values{"id_token_hint": {"garbage"}}, "not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := fx.get(logoutTestBrowser(t), tc.query)
			if page.status != http.StatusBadRequest || page.location != "" ||
				!strings.HasPrefix(page.header.Get("Content-Type"), "text/html") || !strings.Contains(page.body, tc.text) {
				t.Fatalf("%d to %q (%s): want a 400 HTML page saying %q and no redirect", page.status, page.location,
					page.header.Get("Content-Type"), tc.text)
			}
		})
	}
	if got := fx.liveSessions(); got["sso"] != 1 || got["oauth"] != 1 {
		t.Fatalf("a refused logout ended sessions: %v", got)
	}
}

func TestLogoutConfirmation(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	sid, refresh := fx.login("web")
	browser := logoutTestBrowser(t)
	fx.setSSOCookie(browser, sid)

	page := fx.get(browser, url.Values{"client_id": {"web"}, "post_logout_redirect_uri": {logoutTestBye}, "state": {"st"}})
	mustStatusPage(t, page, http.StatusOK)
	if fx.liveSessions()["sso"] != 1 {
		t.Fatal("the confirmation page ended the session before it was confirmed")
	}
	action, fields := logoutTestForm(t, page.body)
	if action != "/realms/acme/protocol/openid-connect/logout" || fields.Get("csrf_token") == "" ||
		fields.Get("client_id") != "web" || fields.Get("post_logout_redirect_uri") != logoutTestBye || fields.Get("state") != "st" {
		t.Fatalf("form %s %v", action, fields)
	}
	// The confirmed form redirects to the client, which may redirect on:
	// the page has no form-action.
	checkPageCSP(t, page.header, true)

	// A forged or foreign token is refused, and nothing ends.
	forged := url.Values{}
	for k, v := range fields {
		forged[k] = v
	}
	forged.Set("csrf_token", fields.Get("csrf_token")+"x")
	if page := logoutTestPost(t, browser, s.url+action, forged); page.status != http.StatusBadRequest {
		t.Fatalf("forged CSRF token: %d", page.status)
	}
	otherSID, _ := fx.login("spa")
	otherBrowser := logoutTestBrowser(t)
	fx.setSSOCookie(otherBrowser, otherSID)
	if page := logoutTestPost(t, otherBrowser, s.url+action, fields); page.status != http.StatusBadRequest {
		t.Fatalf("another session's CSRF token: %d", page.status)
	}
	if fx.liveSessions()["sso"] != 2 {
		t.Fatal("a refused confirmation ended a session")
	}

	page = logoutTestPost(t, browser, s.url+action, fields)
	if page.status != http.StatusFound || page.location != logoutTestBye+"?state=st" {
		t.Fatalf("confirmed logout: %d to %q", page.status, page.location)
	}
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, sid); err == nil {
		t.Fatal("confirmed logout left the session")
	}
	if fx.refreshLive(refresh["web"]) || fx.ssoCookie(browser) != "" {
		t.Fatal("confirmed logout left the refresh token or the cookie")
	}
	// The other browser's session is another matter.
	if _, err := s.store.GetSession(t.Context(), fx.realm.ID, otherSID); err != nil {
		t.Fatalf("another browser's session ended: %v", err)
	}

	// A browser without a session has nothing to confirm.
	page = fx.get(logoutTestBrowser(t), url.Values{})
	if page.status != http.StatusOK || strings.Contains(page.body, "<form") || !strings.Contains(page.body, "signed out") {
		t.Fatalf("logout without a session: %d %s", page.status, page.body)
	}
	page = fx.get(logoutTestBrowser(t), url.Values{"client_id": {"web"}, "post_logout_redirect_uri": {logoutTestBye}})
	if page.status != http.StatusFound || page.location != logoutTestBye {
		t.Fatalf("logout without a session, with a redirect: %d to %q", page.status, page.location)
	}
}

func TestLogoutConfirmationExpires(t *testing.T) {
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := newOIDCTestServer(t, func(c *Config) { c.Now = func() time.Time { return clock } })
	fx := logoutTestSetup(t, s, "acme")
	sid, _ := fx.login("web")
	browser := logoutTestBrowser(t)
	fx.setSSOCookie(browser, sid)
	action, fields := logoutTestForm(t, fx.get(browser, url.Values{}).body)
	clock = clock.Add(logoutCSRFLifetime + time.Second)
	if page := logoutTestPost(t, browser, s.url+action, fields); page.status != http.StatusBadRequest ||
		!strings.Contains(page.body, "expired") {
		t.Fatalf("expired confirmation: %d %s", page.status, page.body)
	}
	if fx.liveSessions()["sso"] != 1 {
		t.Fatal("an expired confirmation ended the session")
	}
}

func TestLogoutByRefreshToken(t *testing.T) {
	s := newOIDCTestServer(t)
	fx := logoutTestSetup(t, s, "acme")
	other := logoutTestSetup(t, s, "other")
	logoutURL := s.issuer("acme") + "/protocol/openid-connect/logout"
	post := func(form url.Values, user, pass string) (int, http.Header, oauthError) {
		req, _ := http.NewRequest(http.MethodPost, logoutURL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e oauthError
		body, _ := io.ReadAll(resp.Body)
		if len(body) > 0 {
			(&testResponse{Status: resp.StatusCode, Body: body}).decode(t, &e)
		}
		return resp.StatusCode, resp.Header, e
	}

	_, refresh := fx.login("web", "spa")
	_, otherRefresh := other.login("web")
	for _, tc := range []struct {
		name       string
		form       url.Values
		user, pass string
		status     int
		code       string
	}{
		{"another client's token", url.Values{"refresh_token": {refresh["spa"]}}, "web", fx.secrets["web"], 400, "invalid_grant"},
		{"another realm's token", url.Values{"refresh_token": {otherRefresh["web"]}}, "web", fx.secrets["web"], 400, "invalid_grant"},
		{"unknown token", url.Values{"refresh_token": {"nope"}}, "web", fx.secrets["web"], 400, "invalid_grant"},
		{"wrong secret", url.Values{"refresh_token": {refresh["web"]}}, "web", "wrong", 401, "invalid_client"},
		{"no client", url.Values{"refresh_token": {refresh["web"]}}, "", "", 401, "invalid_client"},
		{"confidential client without secret", url.Values{"refresh_token": {refresh["web"]}, "client_id": {"web"}}, "", "", 401, "invalid_client"},
		{"no token", url.Values{}, "web", fx.secrets["web"], 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, header, e := post(tc.form, tc.user, tc.pass)
			if status != tc.status || e.Error != tc.code {
				t.Fatalf("%d %+v, want %d %s", status, e, tc.status, tc.code)
			}
			if status == 401 && header.Get("WWW-Authenticate") == "" {
				t.Fatal("invalid_client without WWW-Authenticate")
			}
		})
	}
	if got := fx.liveSessions(); got["sso"] != 1 || got["oauth"] != 2 {
		t.Fatalf("a refused logout ended sessions: %v", got)
	}

	offline := fx.offline("spa")
	// A public client authenticates by its client_id alone.
	if status, _, e := post(url.Values{"refresh_token": {refresh["spa"]}, "client_id": {"spa"}}, "", ""); status != http.StatusNoContent {
		t.Fatalf("logout by the public client: %d %+v", status, e)
	}
	if got := fx.liveSessions(); got["sso"] != 0 || got["oauth"] != 0 || got["offline"] != 1 {
		t.Fatalf("sessions after logout %v: want the offline one alone", got)
	}
	if fx.refreshLive(refresh["web"]) || !fx.refreshLive(offline) {
		t.Fatal("logout must end the SSO session's tokens, and only those")
	}
	// The token is spent: a second logout is invalid_grant.
	if status, _, e := post(url.Values{"refresh_token": {refresh["spa"]}, "client_id": {"spa"}}, "", ""); status != 400 || e.Error != "invalid_grant" {
		t.Fatalf("second logout: %d %+v", status, e)
	}
	// An offline token ends its own offline session.
	if status, _, e := post(url.Values{"refresh_token": {offline}, "client_id": {"spa"}}, "", ""); status != http.StatusNoContent {
		t.Fatalf("logout by offline token: %d %+v", status, e)
	}
	if got := fx.liveSessions(); len(got) != 0 {
		t.Fatalf("sessions after offline logout %v", got)
	}
	// The confidential client with client_secret_post.
	_, refresh = fx.login("web")
	if status, _, e := post(url.Values{"refresh_token": {refresh["web"]}, "client_id": {"web"}, "client_secret": {fx.secrets["web"]}}, "", ""); status != http.StatusNoContent {
		t.Fatalf("logout with client_secret_post: %d %+v", status, e)
	}
	if fx.refreshLive(refresh["web"]) {
		t.Fatal("refresh token alive after logout")
	}
	if !slices.Contains(s.app.Routes(), "POST /realms/{realm}/protocol/openid-connect/logout") {
		t.Fatal("logout POST not in the route table")
	}
}
