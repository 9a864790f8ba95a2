package console

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/gorilla/mux"
)

// fakeAPI answers /admin/auth/me and counts every call it gets.
type fakeAPI struct {
	calls []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer good" && !strings.HasSuffix(r.URL.Path, "/token") {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"unauthorized","error_description":"no"}`)
		return
	}
	switch r.URL.Path {
	case "/realms/idenplane-admin/protocol/openid-connect/token":
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != "live" ||
			r.PostForm.Get("client_id") != "idenplane-console" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"good","refresh_token":"next","expires_in":300}`)
	case "/admin/auth/me":
		_, _ = io.WriteString(w, `{"type":"user","id":"1","username":"ada","permissions":["users:read"]}`)
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_field","error_description":"a redirect URI must be absolute","field":"redirectUris[1]",`+
			`"errors":[{"field":"redirectUris[1]","error_description":"a redirect URI must be absolute"},{"field":"name","error_description":"too long"}]}`)
	}
}

func newTestService(t *testing.T, api http.Handler) *Service {
	t.Helper()
	s, err := New(Deps{API: api, BaseURL: "https://id.example", SystemRealm: "idenplane-admin", ClientID: "idenplane-console",
		CookieKey: bytes.Repeat([]byte{7}, 32), Now: time.Now, Asset: func(name string) string { return "/assets/" + name },
		RenderPage: func(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
			w.WriteHeader(status)
			return c.Render(r.Context(), w)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sessionCookies are the cookies of a console session of s.
func sessionCookies(t *testing.T, s *Service, sess *session) []*http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := s.writeSealed(rec, httptest.NewRequest(http.MethodGet, "/", nil), sessionCookie, sess, 0); err != nil {
		t.Fatal(err)
	}
	return rec.Result().Cookies()
}

func TestSealRefusesTamperingAndOtherCookies(t *testing.T) {
	s := newTestService(t, &fakeAPI{})
	v, err := s.cookie.seal(sessionCookie, session{CSRF: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var got session
	if err := s.cookie.open(sessionCookie, v, &got); err != nil || got.CSRF != "x" {
		t.Fatalf("open: %v %+v", err, got)
	}
	raw := []byte(v)
	raw[len(raw)/2] ^= 1
	if err := s.cookie.open(sessionCookie, string(raw), &got); err != errBadSeal {
		t.Fatalf("a changed cookie opened: %v", err)
	}
	if err := s.cookie.open(signinCookie, v, &got); err != errBadSeal {
		t.Fatalf("a session opened as a sign-in's state: %v", err)
	}
	if _, err := New(Deps{CookieKey: []byte("short")}); err == nil {
		t.Fatal("a 5-byte key was taken")
	}
}

// A session too large for one cookie is split, and read back whole.
func TestSessionSplitsAcrossCookies(t *testing.T) {
	s := newTestService(t, &fakeAPI{})
	big := &session{AccessToken: strings.Repeat("a", 3000), RefreshToken: strings.Repeat("r", 3000), CSRF: "c",
		Until: time.Now().Add(time.Hour).Unix()}
	cookies := sessionCookies(t, s, big)
	if len(cookies) < 2 {
		t.Fatalf("%d cookies for a 6 KB session", len(cookies))
	}
	r := httptest.NewRequest(http.MethodGet, "/console/", nil)
	for _, c := range cookies {
		if len(c.Value) > cookieChunk {
			t.Fatalf("cookie %s holds %d bytes", c.Name, len(c.Value))
		}
		r.AddCookie(c)
	}
	got := s.currentSession(r)
	if got == nil || got.AccessToken != big.AccessToken || got.RefreshToken != big.RefreshToken {
		t.Fatal("the split session did not read back")
	}
}

// A form post with no CSRF token or another one is refused before the
// API hears of it; the session's token passes.
func TestPageChecksCSRFFirst(t *testing.T) {
	api := &fakeAPI{}
	s := newTestService(t, api)
	cookies := sessionCookies(t, s, &session{AccessToken: "good", CSRF: "the-token",
		Expires: time.Now().Add(time.Hour).Unix(), Until: time.Now().Add(time.Hour).Unix()})
	ran := 0
	h := s.Page(func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		ran++
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	for _, tc := range []struct {
		name, form string
		want       int
	}{
		{"missing", "name=x", http.StatusForbidden},
		{"empty", "csrf=&name=x", http.StatusForbidden},
		{"wrong", "csrf=another-token&name=x", http.StatusForbidden},
		{"right", "csrf=the-token&name=x", http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api.calls, ran = nil, 0
			r := httptest.NewRequest(http.MethodPost, "/console/realms/new", strings.NewReader(tc.form))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, c := range cookies {
				r.AddCookie(c)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusForbidden {
				if len(api.calls) != 0 || ran != 0 {
					t.Fatalf("a refused form reached the API %v or the handler %d", api.calls, ran)
				}
				if !strings.Contains(rec.Body.String(), "console.error.csrf") {
					t.Fatalf("refused for another reason: %s", rec.Body)
				}
			} else if ran != 1 {
				t.Fatal("the handler did not run")
			}
		})
	}
}

// Without a session a page leads to the sign-in, to come back to it.
func TestPageWithoutSessionLeadsToSignIn(t *testing.T) {
	s := newTestService(t, &fakeAPI{})
	h := s.Page(func(w http.ResponseWriter, r *http.Request, c *Ctx) error { t.Fatal("handler ran"); return nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/realms?x=1", nil))
	want := "/console/login?" + url.Values{"return": {"/console/realms?x=1"}}.Encode()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
		t.Fatalf("%d to %q, want 303 to %q", rec.Code, rec.Header().Get("Location"), want)
	}
}

func TestSafeReturn(t *testing.T) {
	for in, want := range map[string]string{
		"/console/realms":        "/console/realms",
		"":                       "/console/",
		"https://evil.example/":  "/console/",
		"//evil.example/console": "/console/",
		"/consolex":              "/console/",
		"/console/\\evil":        "/console/",
		"/realms/x":              "/console/",
	} {
		if got := safeReturn(in); got != want {
			t.Errorf("safeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}

// A refusal shows every field's message at its input, the index of a
// list entry dropped; a field the form lacks goes to the form's alert.
func TestFormFailureShowsEveryField(t *testing.T) {
	api := &fakeAPI{}
	s := newTestService(t, api)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	err := s.call(r, &session{AccessToken: "good"}, http.MethodPost, "/admin/realms/x/clients", map[string]any{}, nil)
	f, ok := formFailure(err, "redirectUris")
	if !ok {
		t.Fatalf("not a form's refusal: %v", err)
	}
	if f.Err("redirectUris") != "a redirect URI must be absolute" || f.Alert != "name: too long" {
		t.Fatalf("form %+v", f)
	}
}

// The sign-in sends the browser to the system realm with S256 PKCE, and
// a callback whose state is not the sealed one is refused without an
// exchange.
func TestSignInStateAndPKCE(t *testing.T) {
	api := &fakeAPI{}
	s := newTestService(t, api)
	rec := httptest.NewRecorder()
	s.Login(rec, httptest.NewRequest(http.MethodGet, "/console/login?return=https://evil.example/", nil))
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || loc.Path != "/realms/idenplane-admin/protocol/openid-connect/auth" {
		t.Fatalf("sign-in went to %q", rec.Header().Get("Location"))
	}
	q := loc.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("client_id") != "idenplane-console" ||
		q.Get("redirect_uri") != "https://id.example/console/callback" {
		t.Fatalf("authorization request %v", q)
	}
	var in signin
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range rec.Result().Cookies() {
		r.AddCookie(c)
	}
	if err := s.readSealed(r, signinCookie, &in); err != nil || in.Return != "/console/" {
		t.Fatalf("sign-in state %+v %v: the return must stay in the console", in, err)
	}

	cb := httptest.NewRequest(http.MethodGet, "/console/callback?code=c&state=forged", nil)
	for _, c := range rec.Result().Cookies() {
		cb.AddCookie(c)
	}
	out := httptest.NewRecorder()
	router := mux.NewRouter()
	router.HandleFunc("/console/callback", s.Callback)
	router.ServeHTTP(out, cb)
	if out.Code != http.StatusBadRequest || !strings.Contains(out.Body.String(), "console.error.signinState") || len(api.calls) != 0 {
		t.Fatalf("forged state: %d %s, API calls %v", out.Code, out.Body, api.calls)
	}
}

// The tests' list of the generic pages' kinds is the module's.
func TestResourcesListed(t *testing.T) {
	var got []string
	for _, r := range Resources {
		got = append(got, r.Path)
	}
	want := []string{"roles", "groups", "client-scopes", "identity-providers", "saml-service-providers",
		"user-federation", "scim-tokens", "organizations", "nhi"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Resources %v; update resourcePaths in console_access_test.go to %v", got, want)
	}
}

// An access token about to expire is refreshed in process before the
// page runs, and the session written back; a refused refresh ends the
// console session and leads to the sign-in.
func TestPageRefreshesTheToken(t *testing.T) {
	api := &fakeAPI{}
	s := newTestService(t, api)
	ran := 0
	h := s.Page(func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		ran++
		if c.sess.AccessToken != "good" {
			t.Errorf("the page ran with %q", c.sess.AccessToken)
		}
		return nil
	})
	for _, tc := range []struct {
		name, refresh string
		signIn        bool
	}{
		{"live refresh token", "live", false},
		{"refused refresh token", "ended", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = 0
			cookies := sessionCookies(t, s, &session{AccessToken: "stale", RefreshToken: tc.refresh, CSRF: "c",
				Expires: time.Now().Unix() + 5, Until: time.Now().Add(time.Hour).Unix()})
			r := httptest.NewRequest(http.MethodGet, "/console/", nil)
			for _, c := range cookies {
				r.AddCookie(c)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if tc.signIn {
				if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/console/login") || ran != 0 {
					t.Fatalf("%d to %q, page ran %d times", rec.Code, rec.Header().Get("Location"), ran)
				}
				return
			}
			if ran != 1 {
				t.Fatalf("the page did not run: %d %s", rec.Code, rec.Body)
			}
			back := httptest.NewRequest(http.MethodGet, "/console/", nil)
			for _, c := range rec.Result().Cookies() {
				back.AddCookie(c)
			}
			if got := s.currentSession(back); got == nil || got.AccessToken != "good" || got.RefreshToken != "next" {
				t.Fatalf("the refreshed session was not written back: %+v", got)
			}
		})
	}
}
