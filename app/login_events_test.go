package app

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// eventsTestSeedLogin inserts login events as the login code will, in one
// transaction.
func eventsTestSeedLogin(t *testing.T, s *testServer, events ...*store.LoginEvent) {
	t.Helper()
	err := s.store.Tx(context.Background(), func(tx *store.Store) error {
		for _, e := range events {
			if err := tx.AddLoginEvent(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func eventsTestLoginIDs(s *testServer, realm, query string) string {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/events"+query, nil)
	mustStatus(s.t, r, http.StatusOK)
	var events []loginEventRep
	r.decode(s.t, &events)
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return strings.Join(ids, " ")
}

func TestLoginEventsQuery(t *testing.T) {
	s := newTestServer(t)
	realmID := mustRealmID(t, s, s.createRealm("acme")["name"].(string))
	otherID := mustRealmID(t, s, s.createRealm("other")["name"].(string))
	const alice, bob = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	ev := func(id, at, typ, user, client string) *store.LoginEvent {
		return &store.LoginEvent{ID: id, RealmID: realmID, Time: eventsTestMillis(t, at), Type: typ, UserID: user,
			ClientID: client, SessionID: "sess-" + id, IPAddress: "198.51.100.4"}
	}
	failed := ev("l2", "2026-11-21T00:00:00Z", "LOGIN_ERROR", bob, "web")
	failed.Error, failed.Details = "invalid_user_credentials", map[string]string{"username": "bob", "auth_method": "openid-connect"}
	eventsTestSeedLogin(t, s,
		ev("l1", "2026-11-20T23:59:59.999Z", "LOGIN", alice, "web"),
		failed,
		ev("l3", "2026-11-21T12:00:00Z", "CODE_TO_TOKEN", alice, "web"),
		ev("l4", "2026-11-21T23:59:59.999Z", "LOGIN", bob, "cli"),
		ev("l5", "2026-11-22T00:00:00Z", "CLIENT_LOGIN", "", "svc"),
		&store.LoginEvent{ID: "x1", RealmID: otherID, Time: 1, Type: "LOGIN", UserID: alice, ClientID: "web"},
	)
	for _, c := range []struct{ query, want string }{
		{"", "l5 l4 l3 l2 l1"},
		{"?type=LOGIN", "l4 l1"},
		{"?type=LOGIN,LOGIN_ERROR", "l4 l2 l1"},
		{"?type=LOGIN_ERROR&type=CLIENT_LOGIN", "l5 l2"},
		{"?type=LOGOUT", ""},
		{"?userId=" + alice, "l3 l1"},
		{"?userId=" + strings.ToUpper(bob), "l4 l2"},
		{"?clientId=web", "l3 l2 l1"},
		{"?clientId=WEB", ""},
		{"?clientId=web&type=LOGIN", "l1"},
		{"?dateFrom=2026-11-21", "l5 l4 l3 l2"},
		{"?dateTo=2026-11-21", "l4 l3 l2 l1"},
		{"?dateFrom=2026-11-21&dateTo=2026-11-21", "l4 l3 l2"},
		{"?dateFrom=2026-11-21T00:00:00.001Z&dateTo=2026-11-21T12:00:00Z", "l3"},
		{"?max=1", "l5"},
		{"?first=1&max=2", "l4 l3"},
		{"?first=3", "l2 l1"},
		{"?first=9", ""},
	} {
		if got := eventsTestLoginIDs(s, "acme", c.query); got != c.want {
			t.Errorf("events%s: got [%s], want [%s]", c.query, got, c.want)
		}
	}

	r := s.admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN_ERROR", nil)
	mustStatus(t, r, http.StatusOK)
	var raw []map[string]any
	r.decode(t, &raw)
	want := map[string]any{
		"id": "l2", "time": float64(failed.Time), "type": "LOGIN_ERROR", "realmId": realmID, "clientId": "web",
		"userId": bob, "sessionId": "sess-l2", "ipAddress": "198.51.100.4", "error": "invalid_user_credentials",
		"details": map[string]any{"username": "bob", "auth_method": "openid-connect"},
	}
	if len(raw) != 1 || !reflect.DeepEqual(raw[0], want) {
		t.Fatalf("login event\n got %v\nwant %v", raw, want)
	}
	// An event without details shows an empty object.
	r = s.admin(http.MethodGet, "/admin/realms/acme/events?type=CLIENT_LOGIN", nil)
	raw = nil
	r.decode(t, &raw)
	if len(raw) != 1 || !reflect.DeepEqual(raw[0]["details"], map[string]any{}) || raw[0]["userId"] != "" {
		t.Fatalf("client login event %v", raw)
	}
}

func TestLoginEventsQueryBadInput(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	cases := append([]struct{ query, field string }{
		{"type=login", "type"},
		{"type=LOGIN,LOGGED_IN", "type"},
		{"type=ADMIN_LOGIN", "type"},
		{"userId=alice", "userId"},
		{"max=1001", "max"},
	}, eventsTestBadParams...)
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			mustError(t, s.admin(http.MethodGet, "/admin/realms/acme/events?"+c.query, nil),
				http.StatusBadRequest, "invalid_parameter", c.field)
		})
	}
	mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/events", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodGet, "/admin/realms/acme/events", nil), http.StatusUnauthorized, "unauthorized", "")
	// Every known type is accepted.
	for _, typ := range loginEventTypes {
		mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/events?type="+typ, nil), http.StatusOK)
	}
}

func TestLoginEventsClear(t *testing.T) {
	s := newTestServer(t)
	acme := mustRealmID(t, s, eventsTestRealm(s, "acme", true)["name"].(string))
	other := mustRealmID(t, s, s.createRealm("other")["name"].(string))
	eventsTestSeedLogin(t, s,
		&store.LoginEvent{ID: "l1", RealmID: acme, Time: 1, Type: "LOGIN"},
		&store.LoginEvent{ID: "l2", RealmID: acme, Time: 2, Type: "LOGOUT"},
		&store.LoginEvent{ID: "x1", RealmID: other, Time: 1, Type: "LOGIN"},
	)
	r := s.admin(http.MethodDelete, "/admin/realms/acme/events", nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	if got := eventsTestLoginIDs(s, "acme", ""); got != "" {
		t.Fatalf("login events after clear: %s", got)
	}
	if got := eventsTestLoginIDs(s, "other", ""); got != "x1" {
		t.Fatalf("other realm's login events after clear: %s", got)
	}
	// Admin events stay, and the clear is one of them.
	admin := eventsTestAdminEvents(s, "acme", "")
	if len(admin) != 2 || admin[0].OperationType != "DELETE" || admin[0].ResourcePath != "events" {
		t.Fatalf("admin events after clear: %+v", admin)
	}
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusNoContent)
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/nope/events", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusUnauthorized, "unauthorized", "")
}
