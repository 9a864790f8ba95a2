package app

import (
	"net/http"
	"testing"
)

func TestEventsConfig(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	const path = "/admin/realms/acme/events/config"

	r := s.admin(http.MethodGet, path, nil)
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["eventsEnabled"] != false || got["adminEventsEnabled"] != false || got["eventsExpiration"] != float64(604800) {
		t.Fatalf("default config %v", got)
	}

	// Admin events start being recorded once switched on here.
	r = s.admin(http.MethodPut, path, map[string]any{"adminEventsEnabled": true, "eventsExpiration": 3600})
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["adminEventsEnabled"] != true || got["eventsEnabled"] != false || got["eventsExpiration"] != float64(3600) {
		t.Fatalf("updated config %v", got)
	}
	s.createUser("acme", map[string]any{"username": "alice"})
	var events []map[string]any
	s.admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=USER", nil).decode(t, &events)
	if len(events) != 1 || events[0]["operationType"] != "CREATE" {
		t.Fatalf("admin events after switching on: %v", events)
	}
	realm := s.admin(http.MethodGet, "/admin/realms/acme", nil).object(t)
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
			mustError(t, s.admin(http.MethodPut, path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/events/config", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPut, "/admin/realms/nope/events/config", map[string]any{}), http.StatusNotFound, "not_found", "")
}
