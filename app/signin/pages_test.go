package signin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

func testPages(t *testing.T, secure bool) *Pages {
	t.Helper()
	c, err := ui.LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	return NewPages(PagesConfig{Messages: c, Stylesheet: "/assets/idenplane.css", Secure: secure,
		CSRFKey: []byte("0123456789abcdef0123456789abcdef"), DefaultTheme: "idenplane"})
}

// post is a form post carrying csrf, from a browser with the given CSRF
// cookie ("" for none).
func post(cookie, csrf string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/realms/acme/login", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: CSRFCookie, Value: cookie})
	}
	_ = r.ParseForm()
	return r
}

func TestCSRF(t *testing.T) {
	p := testPages(t, false)
	realm := &store.Realm{Name: "acme"}
	w := httptest.NewRecorder()
	token := p.CSRFToken(w, httptest.NewRequest(http.MethodGet, "/realms/acme/login", nil), realm, "login", "request-1")
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != CSRFCookie || !cookies[0].HttpOnly || cookies[0].Path != "/realms/acme/" {
		t.Fatalf("the browser got %+v", cookies)
	}
	browser := cookies[0].Value
	otherToken := p.CSRFMAC("another browser", "login", "request-1")
	for _, tc := range []struct {
		name, cookie, csrf, form, bound string
		ok                              bool
	}{
		{"its own token", browser, token, "login", "request-1", true},
		{"no cookie", "", token, "login", "request-1", false},
		{"no token", browser, "", "login", "request-1", false},
		{"another browser's token", browser, otherToken, "login", "request-1", false},
		{"another form's", browser, token, "consent", "request-1", false},
		{"another request's", browser, token, "login", "request-2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.CheckCSRF(post(tc.cookie, tc.csrf), tc.form, tc.bound)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrCSRF) {
				t.Fatalf("got %v, want ErrCSRF", err)
			}
		})
	}
	// A browser that has its cookie keeps it.
	r := httptest.NewRequest(http.MethodGet, "/realms/acme/login", nil)
	r.AddCookie(&http.Cookie{Name: CSRFCookie, Value: browser})
	w = httptest.NewRecorder()
	if p.BrowserSecret(w, r, realm) != browser || len(w.Result().Cookies()) != 0 {
		t.Fatal("a browser with its cookie was given another")
	}
}

func TestPageCookieSecure(t *testing.T) {
	realm := &store.Realm{Name: "acme"}
	for _, secure := range []bool{false, true} {
		if c := testPages(t, secure).Cookie(realm, "n", "v"); c.Secure != secure || c.SameSite != http.SameSiteLaxMode {
			t.Fatalf("secure %v: cookie %+v", secure, c)
		}
	}
}

// A page whose forms may lead off the server has no form-action: browsers
// hold the redirects after a post to it.
func TestRenderPolicy(t *testing.T) {
	p := testPages(t, false)
	realm := &store.Realm{Name: "acme", DisplayName: "Acme"}
	for _, leave := range []bool{false, true} {
		r := WithRealm(httptest.NewRequest(http.MethodGet, "/realms/acme/login", nil), realm)
		if leave {
			FormsLeaveServer(r.Context())
		}
		w := httptest.NewRecorder()
		if err := p.Render(w, r, http.StatusOK, ui.Welcome(p.Page("welcome.title"))); err != nil {
			t.Fatal(err)
		}
		csp := w.Header().Get("Content-Security-Policy")
		if strings.Contains(csp, "form-action") == leave || !strings.Contains(csp, "'nonce-") {
			t.Fatalf("forms leave %v: policy %q", leave, csp)
		}
		if w.Header().Get("Cache-Control") != "no-store" || !strings.Contains(w.Body.String(), "Acme") {
			t.Fatalf("forms leave %v: page %q, headers %v", leave, w.Body.String(), w.Header())
		}
	}
}
