package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/authz"
)

func TestHealthLive(t *testing.T) {
	s := newTestServer(t)
	for _, path := range []string{"/health", "/health/live"} {
		r := s.request(http.MethodGet, path, nil)
		mustStatus(t, r, http.StatusOK)
		if string(r.Body) != `{"status":"ok"}`+"\n" {
			t.Fatalf("GET %s body %q, want {\"status\":\"ok\"}", path, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("GET %s Content-Type %q", path, ct)
		}
	}
	// Liveness does not depend on the database.
	s.store.Close()
	mustStatus(t, s.request(http.MethodGet, "/health/live", nil), http.StatusOK)
}

type healthTestReady struct {
	Status string `json:"status"`
	Checks struct {
		Database map[string]any `json:"database"`
		Memory   map[string]any `json:"memory"`
	} `json:"checks"`
}

func TestHealthReady(t *testing.T) {
	s := newTestServer(t)
	r := s.request(http.MethodGet, "/health/ready", nil)
	mustStatus(t, r, http.StatusOK)
	var body healthTestReady
	r.decode(t, &body)
	if body.Status != "ok" || body.Checks.Database["status"] != "ok" {
		t.Fatalf("ready body %s, want status ok and database ok", r.Body)
	}
	if lat, ok := body.Checks.Database["latencyMs"].(float64); !ok || lat < 0 {
		t.Fatalf("database latencyMs %v", body.Checks.Database["latencyMs"])
	}
	if heap, ok := body.Checks.Memory["heapAllocBytes"].(float64); !ok || heap <= 0 {
		t.Fatalf("memory heapAllocBytes %v, want > 0", body.Checks.Memory["heapAllocBytes"])
	}
	if g, ok := body.Checks.Memory["goroutines"].(float64); !ok || g < 1 {
		t.Fatalf("memory goroutines %v", body.Checks.Memory["goroutines"])
	}

	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	r = s.request(http.MethodGet, "/health/ready", nil)
	mustStatus(t, r, http.StatusServiceUnavailable)
	var down healthTestReady
	r.decode(t, &down)
	if down.Status != "unavailable" || down.Checks.Database["status"] != "unavailable" {
		t.Fatalf("ready after close %s, want status unavailable", r.Body)
	}
	if strings.Contains(strings.ToLower(string(r.Body)), "closed") || strings.Contains(string(r.Body), "sql") {
		t.Fatalf("readiness body leaks the cause: %s", r.Body)
	}
}

// healthMetricValue finds the sample of an exposition line "name{labels} value".
func healthMetricValue(text, series string) (string, bool) {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

func TestHealthMetrics(t *testing.T) {
	s := newTestServer(t)
	mustError(t, s.request(http.MethodGet, "/admin/metrics", nil), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, s.request(http.MethodGet, "/admin/metrics", nil, "X-Admin-API-Key: wrong"), http.StatusUnauthorized, "unauthorized", "")

	s.createRealm("acme")
	userID := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users/"+userID, nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users/"+userID, nil), http.StatusOK)
	const missing = "0badc0de-0000-4000-8000-000000000000"
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users/"+missing, nil), http.StatusNotFound)
	mustStatus(t, s.request(http.MethodGet, "/no-such-path-xyzzy", nil), http.StatusNotFound)

	r := s.admin(http.MethodGet, "/admin/metrics", nil)
	mustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("metrics Content-Type %q, want text/plain", ct)
	}
	text := string(r.Body)

	for series, want := range map[string]string{
		`idenplane_http_requests_total{method="GET",route="/admin/realms/{realm}/users/{userId}",status="200"}`:    "2",
		`idenplane_http_requests_total{method="GET",route="/admin/realms/{realm}/users/{userId}",status="404"}`:    "1",
		`idenplane_http_requests_total{method="POST",route="/admin/realms",status="201"}`:                          "1",
		`idenplane_http_requests_total{method="GET",route="/admin/metrics",status="401"}`:                          "2",
		`idenplane_http_requests_total{method="GET",route="unmatched",status="404"}`:                               "1",
		`idenplane_http_request_duration_seconds_count{method="GET",route="/admin/realms/{realm}/users/{userId}"}`: "3",
		`idenplane_http_requests_in_flight`:             "1", // this scrape
		`go_sql_max_open_connections{db_name="writer"}`: "1",
	} {
		got, ok := healthMetricValue(text, series)
		if !ok || got != want {
			t.Errorf("%s = %q (found %v), want %s", series, got, ok, want)
		}
	}
	for _, db := range []string{"writer", "reader"} {
		for _, name := range []string{"go_sql_open_connections", "go_sql_in_use_connections", "go_sql_idle_connections", "go_sql_wait_count_total"} {
			if _, ok := healthMetricValue(text, name+`{db_name="`+db+`"}`); !ok {
				t.Errorf("no %s for db %s", name, db)
			}
		}
	}
	for _, raw := range []string{userID, missing, "no-such-path-xyzzy", "/admin/realms/acme"} {
		if strings.Contains(text, raw) {
			t.Errorf("metrics text contains the raw %q", raw)
		}
	}
	// Every route label is a template or "unmatched".
	for _, m := range regexp.MustCompile(`route="([^"]*)"`).FindAllStringSubmatch(text, -1) {
		if m[1] != "unmatched" && !strings.HasPrefix(m[1], "/") {
			t.Errorf("odd route label %q", m[1])
		}
	}
	if !strings.Contains(text, "go_goroutines") {
		t.Errorf("no Go runtime metrics")
	}

	t.Run("bearer token works", func(t *testing.T) {
		admin := s.createAdmin(t, "ops", testArgon2Hash)
		token, err := s.app.signAdminToken(admin, authz.Everything())
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, s.request(http.MethodGet, "/admin/metrics", nil, "Authorization: Bearer "+token), http.StatusOK)
	})
}

func TestHealthMetricsPublic(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MetricsPublic = true })
	r := s.request(http.MethodGet, "/admin/metrics", nil)
	mustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `go_sql_open_connections{db_name="writer"}`) {
		t.Fatalf("public metrics lack the pool metrics:\n%s", r.Body)
	}
	// Only metrics are opened up.
	mustError(t, s.request(http.MethodGet, "/admin/realms", nil), http.StatusUnauthorized, "unauthorized", "")
	r = s.request(http.MethodGet, "/admin/metrics", nil)
	if v, ok := healthMetricValue(string(r.Body), `idenplane_http_requests_total{method="GET",route="/admin/metrics",status="200"}`); !ok || v != "1" {
		t.Fatalf("public metrics count %q (%v), want 1", v, ok)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("public metrics Cache-Control %q", r.Header.Get("Cache-Control"))
	}
}
