package events_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

func TestEventsConfig(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	const path = "/admin/realms/acme/events/config"

	// A new realm keeps login and admin events, for the spec's week.
	r := s.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if got := r.Object(t); got["eventsEnabled"] != true || got["adminEventsEnabled"] != true || got["eventsExpiration"] != float64(604800) {
		t.Fatalf("default config %v", got)
	}

	// Admin events stop being recorded once switched off here, and start
	// again once switched back on.
	r = s.Admin(http.MethodPut, path, map[string]any{"adminEventsEnabled": false, "eventsExpiration": 3600})
	apptest.MustStatus(t, r, http.StatusOK)
	if got := r.Object(t); got["adminEventsEnabled"] != false || got["eventsEnabled"] != true || got["eventsExpiration"] != float64(3600) {
		t.Fatalf("updated config %v", got)
	}
	s.CreateUser("acme", map[string]any{"username": "bob"})
	apptest.MustStatus(t, s.Admin(http.MethodPut, path, map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	s.CreateUser("acme", map[string]any{"username": "alice"})
	var events []map[string]any
	s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=USER", nil).Decode(t, &events)
	if len(events) != 1 || events[0]["operationType"] != "CREATE" || !strings.Contains(fmt.Sprint(events[0]["representation"]), "alice") {
		t.Fatalf("admin events after switching off and on: %v", events)
	}
	realm := s.Admin(http.MethodGet, "/admin/realms/acme", nil).Object(t)
	if realm["adminEventsEnabled"] != true || realm["eventsExpiration"] != float64(3600) {
		t.Fatalf("realm after events config: %v", realm)
	}

	cases := []struct {
		name        string
		body        any
		status      int
		code, field string
	}{
		{"unknown field", map[string]any{"name": "x"}, 400, "unknown_field", "name"},
		{"wrong type", map[string]any{"eventsEnabled": "yes"}, 400, "invalid_field", "eventsEnabled"},
		{"expiration too short", map[string]any{"eventsExpiration": 5}, 400, "invalid_field", "eventsExpiration"},
		{"malformed", `{"eventsEnabled":`, 400, "invalid_json", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPut, path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/events/config", nil), http.StatusNotFound, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodPut, "/admin/realms/nope/events/config", map[string]any{}), http.StatusNotFound, "not_found", "")
}
