package app

import (
	"html"
	"maps"
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
	checkPageCSP(t, page.Header, false)
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

// checkPageCSP checks a page's policy, directive by directive: a fresh
// nonce for its style and script sources, nothing inline beyond it, no
// frames, no base, and forms that post to the server only, or, for a
// page whose forms lead off the server (formsLeave), no form-action.
func checkPageCSP(t testing.TB, h http.Header, formsLeave bool) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	m := cspNonce.FindAllStringSubmatch(csp, -1)
	if len(m) != 2 || m[0][1] != m[1][1] {
		t.Fatalf("CSP %q: want one nonce for style-src and script-src", csp)
	}
	nonce := "'nonce-" + m[0][1] + "'"
	want := map[string]string{"default-src": "'none'", "style-src": "'self' " + nonce, "script-src": "'self' " + nonce,
		"img-src": "'self' data: https:", "connect-src": "'self'", "base-uri": "'none'", "frame-ancestors": "'none'"}
	if !formsLeave {
		want["form-action"] = "'self'"
	}
	if got := cspDirectives(t, csp); !maps.Equal(got, want) {
		t.Fatalf("CSP %q: directives %q, want %q", csp, got, want)
	}
}

// cspDirectives splits a policy into its directives' values, failing on
// a directive given twice.
func cspDirectives(t testing.TB, csp string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if name == "" {
			continue
		}
		if _, dup := out[name]; dup {
			t.Fatalf("CSP %q: %s twice", csp, name)
		}
		out[name] = strings.TrimSpace(value)
	}
	return out
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
