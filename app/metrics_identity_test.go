package app

import (
	"net/http"
	"strings"
	"testing"
)

// TestIdentityMetrics: the identity metrics move as people sign in, fail,
// get locked out and are issued tokens, in realms that keep no events.
func TestIdentityMetrics(t *testing.T) {
	s := newTestServer(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "eventsEnabled": false}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli",
		"clientType": "PUBLIC", "grantTypes": []string{"password", "refresh_token"}}), http.StatusCreated)
	s.createUser("acme", map[string]any{"username": "alice", "password": "a-long-enough-password"})
	bob := s.createUser("acme", map[string]any{"username": "bob", "password": "a-long-enough-password"})["id"].(string)
	grant := func(username, password string) {
		t.Helper()
		s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=password&client_id=cli&username="+username+"&password="+password,
			"Content-Type: application/x-www-form-urlencoded")
	}
	scrape := func() string {
		t.Helper()
		r := s.admin(http.MethodGet, "/admin/metrics", nil)
		mustStatus(t, r, http.StatusOK)
		return string(r.Body)
	}
	want := func(text, series, value string) {
		t.Helper()
		if got, ok := healthMetricValue(text, series); !ok || got != value {
			t.Errorf("%s = %q (%v), want %s", series, got, ok, value)
		}
	}
	before := scrape()
	if strings.Contains(before, `realm="acme"`) {
		t.Fatalf("acme in the metrics before anything happened there:\n%s", before)
	}
	grant("alice", "a-long-enough-password")
	grant("bob", "a-long-enough-password")
	for range 5 {
		grant("alice", "wrong")
	}
	text := scrape()
	want(text, `idenplane_login_events_total{error="",realm="acme",type="LOGIN"}`, "2")
	want(text, `idenplane_login_events_total{error="invalid_user_credentials",realm="acme",type="LOGIN_ERROR"}`, "5")
	want(text, `idenplane_lockouts_total{kind="temporary",realm="acme"}`, "1")
	want(text, `idenplane_active_sessions{realm="acme"}`, "2")

	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+bob+"/sessions", nil), http.StatusOK)
	want(scrape(), `idenplane_active_sessions{realm="acme"}`, "1")
}
