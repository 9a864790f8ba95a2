package app

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// eventsTestSession makes a session as the OpenID Connect provider does:
// an online OAuth session has parent as its SSO session, an offline one
// has none.
func eventsTestSession(t *testing.T, s *testServer, id, realmID, userID, kind, parent, clientID string, expiresAt int64) {
	t.Helper()
	sess := &store.Session{ID: id, RealmID: realmID, UserID: userID, Kind: kind, ParentID: parent, ClientID: clientID,
		IPAddress: "192.0.2.1", ExpiresAt: expiresAt, Offline: kind == store.SessionOAuth && parent == ""}
	if err := s.store.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("create session %s: %v", id, err)
	}
}

func eventsTestClient(t *testing.T, s *testServer, id, realmID, clientID string) {
	t.Helper()
	c := &store.Client{ID: id, RealmID: realmID, ClientID: clientID, ClientType: "PUBLIC", Enabled: true, CreatedAt: 1}
	if err := s.store.CreateClient(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

func TestRealmStats(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := newTestServer(t, func(c *Config) { c.Now = func() time.Time { return now } })
	ctx := context.Background()
	realmID := mustRealmID(t, s, eventsTestRealm(s, "acme", true)["name"].(string))
	otherID := mustRealmID(t, s, s.createRealm("other")["name"].(string))

	r := s.admin(http.MethodGet, "/admin/realms/acme/stats", nil)
	mustStatus(t, r, http.StatusOK)
	// A new realm's one client is its account-console.
	zero := map[string]any{"users": 0.0, "serviceAccounts": 0.0, "clients": 1.0, "realmRoles": 0.0, "clientRoles": 0.0,
		"groups": 0.0, "activeSessions": 0.0, "clientSessions": 0.0, "loginEventsLastDay": 0.0,
		"loginErrorsLastDay": 0.0, "adminEventsLastDay": 1.0} // the realm's own creation
	if got := r.object(t); !reflect.DeepEqual(got, zero) {
		t.Fatalf("stats of a new realm\n got %v\nwant %v", got, zero)
	}

	alice := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	s.createUser("acme", map[string]any{"username": "bob"})
	carol := s.createUser("other", map[string]any{"username": "carol"})["id"].(string)
	eventsTestClient(t, s, "c1", realmID, "web")
	eventsTestClient(t, s, "c2", realmID, "svc")
	eventsTestClient(t, s, "c3", otherID, "web")
	robot := &store.User{ID: "u-robot", RealmID: realmID, Username: "service-account-svc", Enabled: true,
		ServiceAccountClientID: "c2", CreatedAt: 1}
	if err := s.store.CreateUser(ctx, robot); err != nil {
		t.Fatal(err)
	}
	for _, role := range []*store.Role{
		{ID: "r1", RealmID: realmID, Name: "admin"},
		{ID: "r2", RealmID: realmID, ClientID: "c1", Name: "editor"},
		{ID: "r3", RealmID: realmID, ClientID: "c2", Name: "editor"},
		{ID: "r4", RealmID: otherID, Name: "admin"},
	} {
		if err := s.store.CreateRole(ctx, role); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*store.Group{
		{ID: "g1", RealmID: realmID, Name: "staff"},
		{ID: "g2", RealmID: realmID, ParentID: "g1", Name: "ops"},
		{ID: "g3", RealmID: otherID, Name: "staff"},
	} {
		if err := s.store.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	ms := now.UnixMilli()
	eventsTestSession(t, s, "s1", realmID, alice, "sso", "", "", ms+1000)
	eventsTestSession(t, s, "s2", realmID, alice, "sso", "", "", ms-1000)
	eventsTestSession(t, s, "s3", realmID, alice, "oauth", "s1", "c1", ms+1000)
	eventsTestSession(t, s, "s4", realmID, alice, "oauth", "", "c1", ms+2000) // offline
	eventsTestSession(t, s, "s5", otherID, carol, "sso", "", "", ms+1000)
	hour := time.Hour.Milliseconds()
	eventsTestSeedLogin(t, s,
		&store.LoginEvent{ID: "l1", RealmID: realmID, Time: ms - hour, Type: "LOGIN"},
		&store.LoginEvent{ID: "l2", RealmID: realmID, Time: ms - 23*hour, Type: "LOGIN_ERROR"},
		&store.LoginEvent{ID: "l3", RealmID: realmID, Time: ms - 25*hour, Type: "LOGIN_ERROR"},
		&store.LoginEvent{ID: "l4", RealmID: otherID, Time: ms, Type: "LOGIN_ERROR"},
	)
	eventsTestSeedAdmin(t, s, &store.AdminEvent{ID: "old", RealmID: realmID, Time: ms - 48*hour,
		OperationType: "CREATE", ResourceType: "USER", AuthType: "api-key"})

	r = s.admin(http.MethodGet, "/admin/realms/acme/stats", nil)
	mustStatus(t, r, http.StatusOK)
	want := map[string]any{"users": 2.0, "serviceAccounts": 1.0, "clients": 3.0, "realmRoles": 1.0, "clientRoles": 2.0,
		"groups": 2.0, "activeSessions": 1.0, "clientSessions": 2.0, "loginEventsLastDay": 2.0,
		"loginErrorsLastDay": 1.0, "adminEventsLastDay": 3.0} // realm and two user creates
	if got := r.object(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("stats\n got %v\nwant %v", got, want)
	}

	mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/stats", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodGet, "/admin/realms/acme/stats", nil), http.StatusUnauthorized, "unauthorized", "")
}

func TestConsentStats(t *testing.T) {
	s := newTestServer(t)
	ctx := context.Background()
	realmID := mustRealmID(t, s, s.createRealm("acme")["name"].(string))
	otherID := mustRealmID(t, s, s.createRealm("other")["name"].(string))

	r := s.admin(http.MethodGet, "/admin/realms/acme/stats/consents", nil)
	mustStatus(t, r, http.StatusOK)
	if got, want := string(r.Body), `{"totalConsents":0,"usersWithConsents":0,"clients":[]}`+"\n"; got != want {
		t.Fatalf("consents of a new realm %s, want %s", got, want)
	}

	eventsTestClient(t, s, "c1", realmID, "web")
	eventsTestClient(t, s, "c2", realmID, "cli")
	eventsTestClient(t, s, "c3", otherID, "web")
	var users []string
	for _, name := range []string{"alice", "bob", "carol"} {
		users = append(users, s.createUser("acme", map[string]any{"username": name})["id"].(string))
	}
	dave := s.createUser("other", map[string]any{"username": "dave"})["id"].(string)
	for _, c := range []struct {
		user, client string
		scopes       []string
	}{
		{users[0], "c2", []string{"openid"}},
		{users[0], "c1", []string{"openid", "email"}},
		{users[1], "c1", []string{"openid", "profile"}},
		{users[2], "c1", []string{"openid"}},
		{dave, "c3", []string{"openid"}},
	} {
		if err := s.store.UpsertConsent(ctx, c.user, c.client, c.scopes, 1); err != nil {
			t.Fatal(err)
		}
	}
	r = s.admin(http.MethodGet, "/admin/realms/acme/stats/consents", nil)
	mustStatus(t, r, http.StatusOK)
	want := map[string]any{
		"totalConsents": 4.0, "usersWithConsents": 3.0,
		"clients": []any{
			map[string]any{"clientId": "web", "users": 3.0, "scopes": map[string]any{"openid": 3.0, "email": 1.0, "profile": 1.0}},
			map[string]any{"clientId": "cli", "users": 1.0, "scopes": map[string]any{"openid": 1.0}},
		},
	}
	if got := r.object(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("consent stats\n got %v\nwant %v", got, want)
	}
	mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/stats/consents", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodGet, "/admin/realms/acme/stats/consents", nil), http.StatusUnauthorized, "unauthorized", "")
}
