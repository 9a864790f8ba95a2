package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestWelcomePageAndAssets(t *testing.T) {
	s := newTestServer(t)
	page := s.request(http.MethodGet, "/", nil)
	mustStatus(t, page, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	if csp := page.Header.Get("Content-Security-Policy"); csp != pageCSP {
		t.Fatalf("CSP %q", csp)
	}
	body := string(page.Body)
	if !strings.Contains(body, "<h1>Idenplane is running</h1>") {
		t.Fatalf("page body: %s", body)
	}
	href := regexp.MustCompile(`href="(/assets/idenplane\.[0-9a-f]{12}\.css)"`).FindStringSubmatch(body)
	if href == nil {
		t.Fatalf("no hashed stylesheet link in %s", body)
	}

	css := s.request(http.MethodGet, href[1], nil)
	mustStatus(t, css, http.StatusOK)
	if ct := css.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Fatalf("stylesheet Content-Type %q", ct)
	}
	if cc := css.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Fatalf("stylesheet Cache-Control %q", cc)
	}
	if !strings.Contains(string(css.Body), "--primary") {
		t.Fatalf("stylesheet body: %s", css.Body)
	}

	for _, path := range []string{"/assets/idenplane.css", "/assets/idenplane.000000000000.css"} {
		if r := s.request(http.MethodGet, path, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, r.Status)
		}
	}
	// The router cleans dot segments by redirecting; nothing outside the
	// embedded files is ever served.
	if r := s.request(http.MethodGet, "/assets/../schema.sql", nil); r.Status == http.StatusOK || strings.Contains(string(r.Body), "CREATE TABLE") {
		t.Errorf("GET /assets/../schema.sql: status %d body %s", r.Status, r.Body)
	}
}
