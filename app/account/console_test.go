package account

import (
	"net/http/httptest"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// The page a browser returns to after signing in is read back from a
// cookie: only a path of the realm's own account pages is taken.
func TestIsAccountPagePath(t *testing.T) {
	realm := &store.Realm{Name: "acme"}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/realms/acme/account", true},
		{"/realms/acme/account/", true},
		{"/realms/acme/account/webauthn/credentials", true},
		{"/realms/acme/accountant", false},
		{"/realms/other/account/", false},
		{"//evil.example/realms/acme/account/", false},
		{"/realms/acme/account//evil.example", false},
		{"/realms/acme/account/../../../admin", false},
		{"/realms/acme/account/?next=x", false},
		{"/realms/acme/account/#x", false},
		{`/realms/acme/account/\evil`, false},
		{"https://evil.example/realms/acme/account/", false},
	} {
		if got := isAccountPagePath(realm, tc.path); got != tc.want {
			t.Errorf("isAccountPagePath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// Only a browser loading a page, or posting an HTML form, is sent to sign
// in; every other caller is an API caller, answered with a 401.
func TestBrowserNavigation(t *testing.T) {
	const html = "text/html,application/xhtml+xml,*/*;q=0.8"
	for _, tc := range []struct {
		name, method string
		headers      map[string]string
		want         bool
	}{
		{"page", "GET", map[string]string{"Accept": html}, true},
		{"navigate", "GET", map[string]string{"Accept": html, "Sec-Fetch-Mode": "navigate"}, true},
		{"HEAD", "HEAD", map[string]string{"Accept": html}, true},
		{"form", "POST", map[string]string{"Accept": html, "Content-Type": "application/x-www-form-urlencoded"}, true},
		{"multipart form", "POST", map[string]string{"Accept": html, "Content-Type": "multipart/form-data; boundary=x"}, true},
		{"JSON post", "POST", map[string]string{"Accept": html, "Content-Type": "application/json"}, false},
		{"DELETE", "DELETE", map[string]string{"Accept": html}, false},
		{"wildcard only", "GET", map[string]string{"Accept": "*/*"}, false},
		{"HTML refused", "GET", map[string]string{"Accept": "application/json, text/html;q=0"}, false},
		{"no Accept", "GET", nil, false},
		{"XMLHttpRequest", "GET", map[string]string{"Accept": html, "X-Requested-With": "XMLHttpRequest"}, false},
		{"fetch", "GET", map[string]string{"Accept": html, "Sec-Fetch-Mode": "cors"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/realms/acme/account/", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if got := browserNavigation(r); got != tc.want {
				t.Fatalf("browserNavigation = %v, want %v", got, tc.want)
			}
		})
	}
}
