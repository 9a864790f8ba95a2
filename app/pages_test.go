package app

import (
	"html"

	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/ui"
)

func TestWelcomePageAndAssets(t *testing.T) {
	s := newTestServer(t)
	page := s.request(http.MethodGet, "/", nil)
	mustStatus(t, page, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	checkPageCSP(t, page.Header)
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

var cspNonce = regexp.MustCompile(`'nonce-([A-Za-z0-9+/]{22})'`)

// checkPageCSP checks a page's policy: a fresh nonce for its style and
// script sources, nothing inline beyond it, and forms that lead only to
// the server and formTargets.
func checkPageCSP(t testing.TB, h http.Header, formTargets ...string) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	m := cspNonce.FindAllStringSubmatch(csp, -1)
	if len(m) != 2 || m[0][1] != m[1][1] {
		t.Fatalf("CSP %q: want one nonce for style-src and script-src", csp)
	}
	if want := pageCSP(m[0][1], formTargets); csp != want {
		t.Fatalf("CSP %q, want %q", csp, want)
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Fatalf("CSP %q allows inline code", csp)
	}
}

// testCatalogues are the embedded message catalogues, for tests that look
// for a message in a page.
var testCatalogues = func() *ui.Catalogues {
	c, err := ui.LoadCatalogues()
	if err != nil {
		panic(err)
	}
	return c
}()

// enMsg is the English text of a message key as a page shows it: HTML-escaped.
func enMsg(key string, args ...any) string {
	return html.EscapeString(testCatalogues.Localizer(ui.DefaultLocale).T(key, args...))
}

func TestSourceOf(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"https://app.example.test/callback?x=1", "https://app.example.test"},
		{"http://127.0.0.1:8080/cb", "http://127.0.0.1:8080"},
		{"com.example.app:/oauth2redirect", "com.example.app:"},
		{"/relative", ""},
		{"", ""},
	} {
		if got := sourceOf(tc.uri); got != tc.want {
			t.Errorf("sourceOf(%q) = %q, want %q", tc.uri, got, tc.want)
		}
	}
}
