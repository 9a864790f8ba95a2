package events_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

func TestLoginEventsQuery(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	otherID := createRealm(s, "other", false)
	const alice, bob = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	ev := func(id, at string, typ store.EventType, user, client string) *store.LoginEvent {
		return &store.LoginEvent{ID: id, RealmID: realmID, Time: millis(t, at), Type: typ, UserID: user,
			ClientID: client, SessionID: "sess-" + id, IPAddress: "198.51.100.4"}
	}
	failed := ev("l2", "2026-11-21T00:00:00Z", "LOGIN_ERROR", bob, "web")
	failed.Error, failed.Details = "invalid_user_credentials", map[string]string{"username": "bob", "auth_method": "openid-connect"}
	seedLoginEvents(t, s,
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
		if got := loginEventIDs(s, "acme", c.query); got != c.want {
			t.Errorf("events%s: got [%s], want [%s]", c.query, got, c.want)
		}
	}

	r := s.Admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN_ERROR", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var raw []map[string]any
	r.Decode(t, &raw)
	want := map[string]any{
		"id": "l2", "time": float64(failed.Time), "type": "LOGIN_ERROR", "realmId": realmID, "clientId": "web",
		"userId": bob, "sessionId": "sess-l2", "ipAddress": "198.51.100.4", "error": "invalid_user_credentials",
		"details": map[string]any{"username": "bob", "auth_method": "openid-connect"},
	}
	if len(raw) != 1 || !reflect.DeepEqual(raw[0], want) {
		t.Fatalf("login event\n got %v\nwant %v", raw, want)
	}
	// An event without details shows an empty object.
	r = s.Admin(http.MethodGet, "/admin/realms/acme/events?type=CLIENT_LOGIN", nil)
	raw = nil
	r.Decode(t, &raw)
	if len(raw) != 1 || !reflect.DeepEqual(raw[0]["details"], map[string]any{}) || raw[0]["userId"] != "" {
		t.Fatalf("client login event %v", raw)
	}
}

func TestLoginEventsQueryBadInput(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	cases := append([]struct{ query, field string }{
		{"type=login", "type"},
		{"type=LOGIN,LOGGED_IN", "type"},
		{"type=ADMIN_LOGIN", "type"},
		{"userId=alice", "userId"},
		{"max=1001", "max"},
	}, badParams...)
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/acme/events?"+c.query, nil),
				http.StatusBadRequest, "invalid_parameter", c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/events", nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Request(http.MethodGet, "/admin/realms/acme/events", nil), http.StatusUnauthorized, "unauthorized", "")
	// Every known type is accepted.
	for _, typ := range store.LoginEventTypes {
		apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/events?type="+string(typ), nil), http.StatusOK)
	}
}

func TestLoginEventsClear(t *testing.T) {
	s := realapp.New(t)
	acme := createRealm(s, "acme", true)
	other := createRealm(s, "other", false)
	seedLoginEvents(t, s,
		&store.LoginEvent{ID: "l1", RealmID: acme, Time: 1, Type: "LOGIN"},
		&store.LoginEvent{ID: "l2", RealmID: acme, Time: 2, Type: "LOGOUT"},
		&store.LoginEvent{ID: "x1", RealmID: other, Time: 1, Type: "LOGIN"},
	)
	r := s.Admin(http.MethodDelete, "/admin/realms/acme/events", nil)
	apptest.MustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	if got := loginEventIDs(s, "acme", ""); got != "" {
		t.Fatalf("login events after clear: %s", got)
	}
	if got := loginEventIDs(s, "other", ""); got != "x1" {
		t.Fatalf("other realm's login events after clear: %s", got)
	}
	// Admin events stay, and the clear is one of them.
	admin := adminEvents(s, "acme", "")
	if len(admin) != 2 || admin[0].OperationType != "DELETE" || admin[0].ResourcePath != "events" {
		t.Fatalf("admin events after clear: %+v", admin)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodDelete, "/admin/realms/nope/events", nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Request(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusUnauthorized, "unauthorized", "")
}
