package events_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

func TestAdminEventsQuery(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	otherID := createRealm(s, "other", false)
	const root = "c0000000-0000-4000-8000-000000000001"
	ev := func(id, at, op, res, path, user string) *store.AdminEvent {
		e := &store.AdminEvent{ID: id, RealmID: realmID, Time: millis(t, at), OperationType: op,
			ResourceType: res, ResourcePath: path, AuthType: "api-key", IPAddress: "192.0.2.7", Representation: `{"k":"v"}`}
		if user != "" {
			e.AuthType, e.AuthUserID, e.AuthUsername = "user", user, "root"
		}
		return e
	}
	seedAdminEvents(t, s,
		ev("e1", "2026-11-20T23:59:59.999Z", "CREATE", "USER", "users/u1", ""),
		ev("e2", "2026-11-21T00:00:00Z", "UPDATE", "USER", "users/u1", root),
		ev("e3", "2026-11-21T12:00:00Z", "CREATE", "CLIENT", "clients/web", root),
		ev("e4", "2026-11-21T23:59:59.999Z", "DELETE", "REALM_ROLE", "roles/admin", ""),
		ev("e5", "2026-11-22T00:00:00Z", "ACTION", "USER", "users/u2/reset-password", ""),
		&store.AdminEvent{ID: "x1", RealmID: otherID, Time: 1, OperationType: "CREATE", ResourceType: "USER",
			ResourcePath: "users/u1", AuthType: "api-key"},
	)
	for _, c := range []struct{ query, want string }{
		{"", "e5 e4 e3 e2 e1"},
		{"?operationType=CREATE", "e3 e1"},
		{"?operationType=CREATE,DELETE", "e4 e3 e1"},
		{"?operationType=CREATE&operationType=ACTION", "e5 e3 e1"},
		{"?operationType=CREATE,+DELETE,", "e4 e3 e1"},
		{"?resourceType=USER", "e5 e2 e1"},
		{"?resourceType=CLIENT,REALM_ROLE", "e4 e3"},
		{"?resourceType=GROUP", ""},
		{"?resourcePath=users/u1", "e2 e1"},
		{"?resourcePath=users/*", "e5 e2 e1"},
		{"?resourcePath=users", "e5 e2 e1"},
		{"?resourcePath=" + url.QueryEscape("users/%"), ""},
		{"?resourcePath=roles/admin", "e4"},
		{"?authUserId=" + root, "e3 e2"},
		{"?authUserId=" + strings.ToUpper(root), "e3 e2"},
		{"?dateFrom=2026-11-21", "e5 e4 e3 e2"},
		{"?dateTo=2026-11-21", "e4 e3 e2 e1"},
		{"?dateFrom=2026-11-21&dateTo=2026-11-21", "e4 e3 e2"},
		{"?dateFrom=2026-11-21T12:00:00Z&dateTo=2026-11-22T00:00:00Z", "e5 e4 e3"},
		{"?dateFrom=2026-11-21T13:00:00%2B01:00", "e5 e4 e3"},
		{"?dateTo=2026-11-21T11:59:59.999Z", "e2 e1"},
		{"?dateFrom=2026-11-21&dateTo=2026-11-21&resourceType=USER&operationType=UPDATE", "e2"},
		{"?max=2", "e5 e4"},
		{"?first=2&max=2", "e3 e2"},
		{"?first=4", "e1"},
		{"?first=5", ""},
		{"?resourceType=USER&first=1&max=1", "e2"},
	} {
		var ids []string
		for _, e := range adminEvents(s, "acme", c.query) {
			ids = append(ids, e.ID)
		}
		if got := strings.Join(ids, " "); got != c.want {
			t.Errorf("admin-events%s: got [%s], want [%s]", c.query, got, c.want)
		}
	}

	// The whole representation of one event.
	r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=CLIENT", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var raw []map[string]any
	r.Decode(t, &raw)
	want := map[string]any{
		"id": "e3", "time": float64(millis(t, "2026-11-21T12:00:00Z")), "realmId": realmID,
		"operationType": "CREATE", "resourceType": "CLIENT", "resourcePath": "clients/web",
		"authDetails":    map[string]any{"type": "user", "userId": root, "username": "root", "ipAddress": "192.0.2.7"},
		"representation": map[string]any{"k": "v"},
	}
	if len(raw) != 1 || !reflect.DeepEqual(raw[0], want) {
		t.Fatalf("admin event\n got %v\nwant %v", raw, want)
	}
}

func TestAdminEventsQueryDefaultPage(t *testing.T) {
	s := realapp.New(t)
	realmID := createRealm(s, "acme", false)
	var events []*store.AdminEvent
	for i := range 105 {
		events = append(events, &store.AdminEvent{ID: fmt.Sprintf("e%03d", i), RealmID: realmID, Time: int64(i),
			OperationType: "CREATE", ResourceType: "USER", AuthType: "api-key"})
	}
	seedAdminEvents(t, s, events...)
	got := adminEvents(s, "acme", "")
	if len(got) != 100 || got[0].ID != "e104" || got[99].ID != "e005" {
		t.Fatalf("default page: %d events from %s", len(got), got[0].ID)
	}
	if got := adminEvents(s, "acme", "?first=100"); len(got) != 5 || got[4].ID != "e000" {
		t.Fatalf("second default page: %d events", len(got))
	}
}

func TestAdminEventsQueryBadInput(t *testing.T) {
	s := realapp.New(t)
	createRealm(s, "acme", true)
	cases := append([]struct{ query, field string }{
		{"operationType=create", "operationType"},
		{"operationType=CREATE,REMOVE", "operationType"},
		{"resourceType=user", "resourceType"},
		{"resourceType=USER%3BDROP", "resourceType"},
		{"authUserId=root", "authUserId"},
		{"authUserId=c0000000000040008000000000000001", "authUserId"},
		{"max=1001", "max"},
	}, badParams...)
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?"+c.query, nil)
			apptest.MustError(t, r, http.StatusBadRequest, "invalid_parameter", c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/admin-events", nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Request(http.MethodGet, "/admin/realms/acme/admin-events", nil), http.StatusUnauthorized, "unauthorized", "")
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/acme/admin-events", map[string]any{}),
		http.StatusMethodNotAllowed, "method_not_allowed", "")
}
