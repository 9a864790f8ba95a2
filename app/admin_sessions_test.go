package app

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/sessions"
	"github.com/idenplane/idenplane/store"
)

// sessionsTestEnv is a server whose clock stands at now, with realms acme
// (users alice and bob, clients web-app and cli-app) and other (user
// carol, and a client also called web-app).
type sessionsTestEnv struct {
	s                  *testServer
	now                int64 // Unix milliseconds
	realmID, otherID   string
	alice, bob, carol  string
	web, cli, otherWeb string // internal client IDs
}

const sessionsTestHour = int64(time.Hour / time.Millisecond)

func sessionsTestSetup(t *testing.T) *sessionsTestEnv {
	t.Helper()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := newTestServer(t, func(c *Config) { c.Now = func() time.Time { return now } })
	e := &sessionsTestEnv{s: s, now: now.UnixMilli(), web: "c-web", cli: "c-cli", otherWeb: "c-other-web"}
	for name, id := range map[string]*string{"acme": &e.realmID, "other": &e.otherID} {
		s.createRealm(name)
		realm, err := s.store.GetRealm(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		*id = realm.ID
	}
	e.alice = s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	e.bob = s.createUser("acme", map[string]any{"username": "bob"})["id"].(string)
	e.carol = s.createUser("other", map[string]any{"username": "carol"})["id"].(string)
	for _, c := range []*store.Client{
		{ID: e.web, RealmID: e.realmID, ClientID: "web-app"},
		{ID: e.cli, RealmID: e.realmID, ClientID: "cli-app"},
		{ID: e.otherWeb, RealmID: e.otherID, ClientID: "web-app"},
	} {
		c.ClientType, c.Enabled, c.CreatedAt = "PUBLIC", true, 1
		if err := s.store.CreateClient(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// sso starts an SSO session of user start ms before now, for an hour.
func (e *sessionsTestEnv) sso(t *testing.T, id, realmID, user string, start int64) {
	t.Helper()
	e.session(t, &store.Session{ID: id, RealmID: realmID, UserID: user, Kind: store.SessionSSO, IPAddress: "192.0.2.9",
		StartedAt: e.now - start, LastAccessAt: e.now - start/2, ExpiresAt: e.now + sessionsTestHour})
}

// oauth starts a client's session under parent, or an offline one when
// parent is "", start ms before now.
func (e *sessionsTestEnv) oauth(t *testing.T, id, user, parent, client string, start int64) {
	t.Helper()
	e.session(t, &store.Session{ID: id, RealmID: e.realmID, UserID: user, Kind: store.SessionOAuth, ParentID: parent,
		ClientID: client, IPAddress: "198.51.100.4", StartedAt: e.now - start, LastAccessAt: e.now - start,
		ExpiresAt: e.now + 24*sessionsTestHour, Offline: parent == ""})
}

func (e *sessionsTestEnv) session(t *testing.T, sess *store.Session) {
	t.Helper()
	if err := e.s.store.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("create session %s: %v", sess.ID, err)
	}
}

// token issues the first refresh token of a family under session.
func (e *sessionsTestEnv) token(t *testing.T, id, user, client, session string, offline bool, created int64) {
	t.Helper()
	err := e.s.store.CreateRefreshToken(context.Background(), &store.RefreshToken{ID: id, RealmID: e.realmID,
		TokenHash: store.HashToken("tok-" + id), SessionID: session, ClientID: client, UserID: user,
		Scopes: []string{"openid", "offline_access"}, Offline: offline, AMR: []string{"pwd"}, CreatedAt: created,
		ExpiresAt: e.now + 30*24*sessionsTestHour})
	if err != nil {
		t.Fatalf("create refresh token %s: %v", id, err)
	}
}

// sessionsTestIDs lists the ids of a session listing.
func sessionsTestIDs(t *testing.T, r *testResponse) []string {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	var reps []sessions.SessionRep
	r.decode(t, &reps)
	ids := []string{}
	for _, rep := range reps {
		ids = append(ids, rep.ID)
	}
	return ids
}

func sessionsTestMustEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\n got %#v\nwant %#v", what, got, want)
	}
}

func TestListSessions(t *testing.T) {
	e := sessionsTestSetup(t)
	e.sso(t, "a-sso", e.realmID, e.alice, 5000)
	e.oauth(t, "a-web", e.alice, "a-sso", e.web, 4000)
	e.sso(t, "b-sso", e.realmID, e.bob, 3000)
	e.oauth(t, "a-off", e.alice, "", e.cli, 2000)
	e.sso(t, "c-sso", e.otherID, e.carol, 1000)
	e.session(t, &store.Session{ID: "expired", RealmID: e.realmID, UserID: e.bob, Kind: store.SessionSSO,
		StartedAt: e.now - 9000, ExpiresAt: e.now})

	r := e.s.admin(http.MethodGet, "/admin/realms/acme/sessions", nil)
	mustStatus(t, r, http.StatusOK)
	var got []map[string]any
	r.decode(t, &got)
	now := float64(e.now)
	want := []map[string]any{
		{"id": "a-sso", "type": "sso", "userId": e.alice, "username": "alice", "ipAddress": "192.0.2.9",
			"start": now - 5000, "lastAccess": now - 2500, "expires": now + float64(sessionsTestHour), "offline": false},
		{"id": "a-web", "type": "oauth", "userId": e.alice, "username": "alice", "ipAddress": "198.51.100.4",
			"start": now - 4000, "lastAccess": now - 4000, "expires": now + float64(24*sessionsTestHour),
			"clientId": "web-app", "parentId": "a-sso", "offline": false},
		{"id": "b-sso", "type": "sso", "userId": e.bob, "username": "bob", "ipAddress": "192.0.2.9",
			"start": now - 3000, "lastAccess": now - 1500, "expires": now + float64(sessionsTestHour), "offline": false},
		{"id": "a-off", "type": "oauth", "userId": e.alice, "username": "alice", "ipAddress": "198.51.100.4",
			"start": now - 2000, "lastAccess": now - 2000, "expires": now + float64(24*sessionsTestHour),
			"clientId": "cli-app", "offline": true},
	}
	sessionsTestMustEqual(t, "realm sessions", got, want)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?max=2", []string{"a-sso", "a-web"}},
		{"?first=1&max=2", []string{"a-web", "b-sso"}},
		{"?first=4", []string{}},
	} {
		sessionsTestMustEqual(t, "page "+tc.query,
			sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/sessions"+tc.query, nil)), tc.want)
	}
	sessionsTestMustEqual(t, "other realm",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/other/sessions", nil)), []string{"c-sso"})

	for _, tc := range []struct {
		path        string
		status      int
		code, field string
	}{
		{"/admin/realms/acme/sessions?first=-1", 400, "invalid_parameter", "first"},
		{"/admin/realms/acme/sessions?first=x", 400, "invalid_parameter", "first"},
		{"/admin/realms/acme/sessions?max=0", 400, "invalid_parameter", "max"},
		{"/admin/realms/acme/sessions?max=1001", 400, "invalid_parameter", "max"},
		{"/admin/realms/nope/sessions", 404, "not_found", ""},
	} {
		mustError(t, e.s.admin(http.MethodGet, tc.path, nil), tc.status, tc.code, tc.field)
	}
	mustError(t, e.s.request(http.MethodGet, "/admin/realms/acme/sessions", nil), http.StatusUnauthorized, "unauthorized", "")
}

func TestListUserSessions(t *testing.T) {
	e := sessionsTestSetup(t)
	e.sso(t, "a-sso", e.realmID, e.alice, 5000)
	e.oauth(t, "a-web", e.alice, "a-sso", e.web, 4000)
	e.oauth(t, "a-off", e.alice, "", e.cli, 2000)
	e.sso(t, "b-sso", e.realmID, e.bob, 3000)

	sessionsTestMustEqual(t, "alice's sessions",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil)),
		[]string{"a-sso", "a-web", "a-off"})
	sessionsTestMustEqual(t, "bob's sessions",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.bob+"/sessions", nil)),
		[]string{"b-sso"})
	sessionsTestMustEqual(t, "carol's sessions",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/other/users/"+e.carol+"/sessions", nil)),
		[]string{})
	for _, path := range []string{
		"/admin/realms/acme/users/" + e.carol + "/sessions", // a user of another realm
		"/admin/realms/acme/users/nope/sessions",
		"/admin/realms/nope/users/" + e.alice + "/sessions",
	} {
		mustError(t, e.s.admin(http.MethodGet, path, nil), http.StatusNotFound, "not_found", "")
	}
}

func TestDeleteSession(t *testing.T) {
	e := sessionsTestSetup(t)
	e.sso(t, "a-sso", e.realmID, e.alice, 5000)
	e.oauth(t, "a-web", e.alice, "a-sso", e.web, 4000)
	e.oauth(t, "a-cli", e.alice, "a-sso", e.cli, 3900)
	e.oauth(t, "a-off", e.alice, "", e.cli, 2000)
	e.sso(t, "b-sso", e.realmID, e.bob, 3000)
	e.sso(t, "c-sso", e.otherID, e.carol, 1000)
	e.token(t, "t-web", e.alice, e.web, "a-web", false, e.now-4000)
	e.token(t, "t-off", e.alice, e.cli, "a-off", true, e.now-2000)

	for _, tc := range []struct {
		name, path  string
		status      int
		code, field string
	}{
		{"bad type", "/admin/realms/acme/sessions/a-web?type=saml", 400, "invalid_parameter", "type"},
		{"type in capitals", "/admin/realms/acme/sessions/a-web?type=OAUTH", 400, "invalid_parameter", "type"},
		{"SSO session as the default oauth", "/admin/realms/acme/sessions/a-sso", 404, "not_found", ""},
		{"OAuth session as sso", "/admin/realms/acme/sessions/a-web?type=sso", 404, "not_found", ""},
		{"unknown session", "/admin/realms/acme/sessions/nope?type=sso", 404, "not_found", ""},
		{"session of another realm", "/admin/realms/acme/sessions/c-sso?type=sso", 404, "not_found", ""},
		{"unknown realm", "/admin/realms/nope/sessions/a-sso?type=sso", 404, "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, e.s.admin(http.MethodDelete, tc.path, nil), tc.status, tc.code, tc.field)
		})
	}
	if got := sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/sessions", nil)); len(got) != 5 {
		t.Fatalf("refused deletions ended sessions: %v left", got)
	}

	for _, tc := range []struct {
		path string
		want string
		left []string
	}{
		{"/admin/realms/acme/sessions/a-cli", `{"deleted":1,"type":"oauth"}`, []string{"a-sso", "a-web", "b-sso", "a-off"}},
		{"/admin/realms/acme/sessions/a-sso?type=sso", `{"deleted":2,"type":"sso"}`, []string{"b-sso", "a-off"}},
		{"/admin/realms/acme/sessions/a-off?type=oauth", `{"deleted":1,"type":"oauth"}`, []string{"b-sso"}},
	} {
		r := e.s.admin(http.MethodDelete, tc.path, nil)
		mustStatus(t, r, http.StatusOK)
		if got := string(r.Body); got != tc.want+"\n" {
			t.Fatalf("DELETE %s answered %s, want %s", tc.path, got, tc.want)
		}
		sessionsTestMustEqual(t, "sessions after DELETE "+tc.path,
			sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/sessions", nil)), tc.left)
		mustError(t, e.s.admin(http.MethodDelete, tc.path, nil), http.StatusNotFound, "not_found", "")
	}
	for _, tok := range []string{"tok-t-web", "tok-t-off"} {
		if _, err := e.s.store.RefreshTokenByHash(context.Background(), e.realmID, store.HashToken(tok)); err == nil {
			t.Fatalf("%s outlived its session", tok)
		}
	}
}

func TestDeleteUserSessions(t *testing.T) {
	e := sessionsTestSetup(t)
	e.sso(t, "a-sso", e.realmID, e.alice, 5000)
	e.oauth(t, "a-web", e.alice, "a-sso", e.web, 4000)
	e.sso(t, "a-sso2", e.realmID, e.alice, 4500)
	e.oauth(t, "a-off", e.alice, "", e.cli, 2000)
	e.sso(t, "b-sso", e.realmID, e.bob, 3000)
	e.token(t, "t-off", e.alice, e.cli, "a-off", true, e.now-2000)

	path := "/admin/realms/acme/users/" + e.alice + "/sessions"
	r := e.s.admin(http.MethodDelete, path, nil)
	mustStatus(t, r, http.StatusOK)
	if got := string(r.Body); got != `{"count":3}`+"\n" {
		t.Fatalf("logout answered %s, want count 3", got)
	}
	// As in Keycloak, the offline session and its token survive.
	sessionsTestMustEqual(t, "alice's sessions after logout",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, path, nil)), []string{"a-off"})
	sessionsTestMustEqual(t, "realm sessions after logout",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/sessions", nil)), []string{"b-sso", "a-off"})
	if tok, err := e.s.store.RefreshTokenByHash(context.Background(), e.realmID, store.HashToken("tok-t-off")); err != nil || !tok.Live(e.now) {
		t.Fatalf("offline token after logout: %+v, %v", tok, err)
	}
	r = e.s.admin(http.MethodDelete, path, nil)
	mustStatus(t, r, http.StatusOK)
	if got := string(r.Body); got != `{"count":0}`+"\n" {
		t.Fatalf("second logout answered %s, want count 0", got)
	}
	for _, path := range []string{
		"/admin/realms/acme/users/" + e.carol + "/sessions",
		"/admin/realms/acme/users/nope/sessions",
		"/admin/realms/nope/users/" + e.bob + "/sessions",
	} {
		mustError(t, e.s.admin(http.MethodDelete, path, nil), http.StatusNotFound, "not_found", "")
	}
	sessionsTestMustEqual(t, "bob's sessions", sessionsTestIDs(t, e.s.admin(http.MethodGet,
		"/admin/realms/acme/users/"+e.bob+"/sessions", nil)), []string{"b-sso"})
}

func TestUserConsents(t *testing.T) {
	e := sessionsTestSetup(t)
	ctx := context.Background()
	for _, g := range []struct {
		client string
		scopes []string
		at     int64
	}{
		{e.web, []string{"openid", "profile"}, e.now - 3000},
		{e.cli, []string{"openid"}, e.now - 2000},
		{e.web, []string{"email"}, e.now - 1000},
	} {
		if err := e.s.store.GrantConsent(ctx, e.alice, g.client, g.scopes, g.at); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.s.store.GrantConsent(ctx, e.carol, e.otherWeb, []string{"openid"}, e.now); err != nil {
		t.Fatal(err)
	}
	e.sso(t, "a-sso", e.realmID, e.alice, 5000)
	e.oauth(t, "a-web", e.alice, "a-sso", e.web, 4000)
	e.oauth(t, "a-cli", e.alice, "a-sso", e.cli, 4000)
	e.oauth(t, "a-off", e.alice, "", e.web, 2000)
	e.token(t, "t-off", e.alice, e.web, "a-off", true, e.now-2000)

	base := "/admin/realms/acme/users/" + e.alice + "/consents"
	r := e.s.admin(http.MethodGet, base, nil)
	mustStatus(t, r, http.StatusOK)
	var consents []map[string]any
	r.decode(t, &consents)
	now := float64(e.now)
	sessionsTestMustEqual(t, "consents", consents, []map[string]any{
		{"clientId": "cli-app", "grantedScopes": []any{"openid"}, "createdDate": now - 2000, "lastUpdatedDate": now - 2000},
		{"clientId": "web-app", "grantedScopes": []any{"email", "openid", "profile"}, "createdDate": now - 3000,
			"lastUpdatedDate": now - 1000},
	})

	r = e.s.admin(http.MethodDelete, base+"/web-app", nil)
	mustStatus(t, r, http.StatusNoContent)
	r = e.s.admin(http.MethodGet, base, nil)
	mustStatus(t, r, http.StatusOK)
	want := fmt.Sprintf(`[{"clientId":"cli-app","grantedScopes":["openid"],"createdDate":%d,"lastUpdatedDate":%d}]`+"\n",
		e.now-2000, e.now-2000)
	if got := string(r.Body); got != want {
		t.Fatalf("consents after revoking web-app: %s", got)
	}
	// The client's sessions ended with the consent, offline ones too, and its offline token is revoked.
	sessionsTestMustEqual(t, "alice's sessions after revoking web-app",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil)),
		[]string{"a-sso", "a-cli"})
	r = e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/offline-sessions", nil)
	mustStatus(t, r, http.StatusOK)
	if string(r.Body) != "[]\n" {
		t.Fatalf("offline sessions after revoking the consent: %s", r.Body)
	}

	r = e.s.admin(http.MethodGet, base+"/history", nil)
	mustStatus(t, r, http.StatusOK)
	var history []map[string]any
	r.decode(t, &history)
	sessionsTestMustEqual(t, "consent history", history, []map[string]any{
		{"clientId": "web-app", "action": "REVOKE", "scopes": []any{"email", "openid", "profile"}, "time": now},
		{"clientId": "web-app", "action": "GRANT", "scopes": []any{"email"}, "time": now - 1000},
		{"clientId": "cli-app", "action": "GRANT", "scopes": []any{"openid"}, "time": now - 2000},
		{"clientId": "web-app", "action": "GRANT", "scopes": []any{"openid", "profile"}, "time": now - 3000},
	})
	r = e.s.admin(http.MethodGet, base+"/history?first=1&max=2", nil)
	mustStatus(t, r, http.StatusOK)
	history = nil
	r.decode(t, &history)
	if len(history) != 2 || history[0]["time"] != now-1000 || history[1]["time"] != now-2000 {
		t.Fatalf("history page: %v", history)
	}

	for _, tc := range []struct {
		name, method, path string
		status             int
		code, field        string
	}{
		{"revoke twice", http.MethodDelete, base + "/web-app", 404, "not_found", ""},
		{"revoke an unknown client", http.MethodDelete, base + "/nope", 404, "not_found", ""},
		{"revoke a consent never given", http.MethodDelete, "/admin/realms/acme/users/" + e.bob + "/consents/web-app", 404, "not_found", ""},
		{"revoke for a user of another realm", http.MethodDelete, "/admin/realms/acme/users/" + e.carol + "/consents/web-app", 404, "not_found", ""},
		{"list of a user of another realm", http.MethodGet, "/admin/realms/acme/users/" + e.carol + "/consents", 404, "not_found", ""},
		{"list of an unknown user", http.MethodGet, "/admin/realms/acme/users/nope/consents", 404, "not_found", ""},
		{"list in an unknown realm", http.MethodGet, "/admin/realms/nope/users/" + e.alice + "/consents", 404, "not_found", ""},
		{"history of an unknown user", http.MethodGet, "/admin/realms/acme/users/nope/consents/history", 404, "not_found", ""},
		{"history of a user of another realm", http.MethodGet, "/admin/realms/acme/users/" + e.carol + "/consents/history", 404, "not_found", ""},
		{"history with a bad first", http.MethodGet, base + "/history?first=-2", 400, "invalid_parameter", "first"},
		{"history with a bad max", http.MethodGet, base + "/history?max=abc", 400, "invalid_parameter", "max"},
		{"GET one consent", http.MethodGet, base + "/cli-app", 405, "method_not_allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, e.s.admin(tc.method, tc.path, nil), tc.status, tc.code, tc.field)
		})
	}

	// carol's consent, to the other realm's web-app, is untouched.
	r = e.s.admin(http.MethodGet, "/admin/realms/other/users/"+e.carol+"/consents", nil)
	mustStatus(t, r, http.StatusOK)
	consents = nil
	r.decode(t, &consents)
	if len(consents) != 1 || consents[0]["clientId"] != "web-app" {
		t.Fatalf("carol's consents: %v", consents)
	}
}

func TestOfflineSessions(t *testing.T) {
	e := sessionsTestSetup(t)
	ctx := context.Background()
	e.oauth(t, "off-web", e.alice, "", e.web, 9000)
	e.oauth(t, "off-cli", e.alice, "", e.cli, 5000)
	e.oauth(t, "off-bob", e.bob, "", e.web, 5000)
	e.token(t, "w1", e.alice, e.web, "off-web", true, e.now-9000)
	e.token(t, "c1", e.alice, e.cli, "off-cli", true, e.now-5000)
	e.token(t, "b1", e.bob, e.web, "off-bob", true, e.now-5000)
	next := &store.RefreshToken{ID: "w2", TokenHash: store.HashToken("tok-w2"), Scopes: []string{"openid"},
		CreatedAt: e.now - 1000, ExpiresAt: e.now + sessionsTestHour}
	if _, err := e.s.store.RotateRefreshToken(ctx, e.realmID, store.HashToken("tok-w1"), next, e.now-1000); err != nil {
		t.Fatal(err)
	}

	base := "/admin/realms/acme/users/" + e.alice + "/offline-sessions"
	r := e.s.admin(http.MethodGet, base, nil)
	mustStatus(t, r, http.StatusOK)
	var got []map[string]any
	r.decode(t, &got)
	now := float64(e.now)
	sessionsTestMustEqual(t, "offline sessions", got, []map[string]any{
		{"tokenId": "c1", "clientId": "cli-app", "scopes": []any{"openid", "offline_access"}, "created": now - 5000,
			"expires": now + float64(30*24*sessionsTestHour)},
		{"tokenId": "w1", "clientId": "web-app", "scopes": []any{"openid"}, "created": now - 9000,
			"expires": now + float64(sessionsTestHour), "lastRefresh": now - 1000},
	})

	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"unknown token", http.MethodDelete, base + "/nope", 404},
		{"a successor's own id", http.MethodDelete, base + "/w2", 404},
		{"another user's token", http.MethodDelete, base + "/b1", 404},
		{"token of a user of another realm", http.MethodDelete, "/admin/realms/other/users/" + e.carol + "/offline-sessions/w1", 404},
		{"user of another realm", http.MethodDelete, "/admin/realms/acme/users/" + e.carol + "/offline-sessions/w1", 404},
		{"unknown user", http.MethodDelete, "/admin/realms/acme/users/nope/offline-sessions/w1", 404},
		{"unknown realm", http.MethodDelete, "/admin/realms/nope/users/" + e.alice + "/offline-sessions/w1", 404},
		{"list of a user of another realm", http.MethodGet, "/admin/realms/acme/users/" + e.carol + "/offline-sessions", 404},
		{"list of an unknown user", http.MethodGet, "/admin/realms/acme/users/nope/offline-sessions", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, e.s.admin(tc.method, tc.path, nil), tc.status, "not_found", "")
		})
	}

	r = e.s.admin(http.MethodDelete, base+"/w1", nil)
	mustStatus(t, r, http.StatusNoContent)
	mustError(t, e.s.admin(http.MethodDelete, base+"/w1", nil), http.StatusNotFound, "not_found", "")
	r = e.s.admin(http.MethodGet, base, nil)
	mustStatus(t, r, http.StatusOK)
	got = nil
	r.decode(t, &got)
	if len(got) != 1 || got[0]["tokenId"] != "c1" {
		t.Fatalf("offline sessions after revoking w1: %v", got)
	}
	if _, err := e.s.store.RotateRefreshToken(ctx, e.realmID, store.HashToken("tok-w2"),
		&store.RefreshToken{ID: "w3", TokenHash: store.HashToken("tok-w3"), CreatedAt: e.now, ExpiresAt: e.now + 1}, e.now); err == nil {
		t.Fatal("a revoked offline token still refreshes")
	}
	sessionsTestMustEqual(t, "alice's sessions after revoking w1",
		sessionsTestIDs(t, e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil)),
		[]string{"off-cli"})
	r = e.s.admin(http.MethodGet, "/admin/realms/acme/users/"+e.bob+"/offline-sessions", nil)
	mustStatus(t, r, http.StatusOK)
	got = nil
	r.decode(t, &got)
	if len(got) != 1 || got[0]["tokenId"] != "b1" {
		t.Fatalf("bob's offline sessions: %v", got)
	}
}
