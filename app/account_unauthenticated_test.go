package app

import (
	"net/http"
	"strings"
	"testing"
)

// Without a token or a sign-in, the account answers an API caller with a
// 401 Bearer challenge and a JSON error, and sends only a browser loading
// a page to the login page.
func TestAccountWithoutCredentials(t *testing.T) {
	e := newAccountEnv(t)
	const form = "Content-Type: application/x-www-form-urlencoded"
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
		redirect           int // 0: the 401
	}{
		{"JSON asked for", http.MethodGet, "/", nil, []string{"Accept: application/json"}, 0},
		{"JSON before HTML", http.MethodGet, "/", nil, []string{"Accept: application/json, text/html;q=0"}, 0},
		{"any type (curl)", http.MethodGet, "/", nil, []string{"Accept: */*"}, 0},
		{"no Accept", http.MethodGet, "/data-export", nil, nil, 0},
		{"DELETE", http.MethodDelete, "/webauthn/credentials/x", nil, []string{"Accept: text/html"}, 0},
		{"JSON POST", http.MethodPost, "/profile", `{"firstName":"x"}`, []string{"Accept: application/json"}, 0},
		{"JSON POST from a page", http.MethodPost, "/profile", `{"firstName":"x"}`, []string{"Accept: text/html"}, 0},
		{"XMLHttpRequest", http.MethodGet, "/", nil, []string{"Accept: text/html", "X-Requested-With: XMLHttpRequest"}, 0},
		{"fetch from a page", http.MethodGet, "/", nil, []string{"Accept: text/html", "Sec-Fetch-Mode: cors"}, 0},
		{"browser page", http.MethodGet, "/", nil, []string{"Accept: " + codeflowAccept, "Sec-Fetch-Mode: navigate"}, http.StatusFound},
		{"browser form", http.MethodPost, "/profile", "firstName=x", []string{"Accept: " + codeflowAccept, form}, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(tc.method, "/realms/acme/account"+tc.path, tc.body, tc.headers...)
			if tc.redirect != 0 {
				if r.Status != tc.redirect || !strings.Contains(r.Header.Get("Location"), "/realms/acme/protocol/openid-connect/auth?") {
					t.Fatalf("status %d to %q, want %d to the login", r.Status, r.Header.Get("Location"), tc.redirect)
				}
				return
			}
			mustError(t, r, http.StatusUnauthorized, "unauthorized", "")
			if h := r.Header.Get("WWW-Authenticate"); h != `Bearer realm="acme"` {
				t.Fatalf("WWW-Authenticate %q, want a bare Bearer challenge", h)
			}
			if r.Header.Get("Location") != "" || r.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("headers %v", r.Header)
			}
		})
	}
}
