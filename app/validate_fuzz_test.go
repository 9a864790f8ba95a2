package app

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/http/httpguts"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The checks of values that come from outside and end up in places with
// their own syntax: email addresses (mail headers), redirect URIs
// (Location headers, form_post pages and their policy), web origins (CORS
// headers).

// FuzzNormalizeEmail checks email normalisation. Invariants: an address
// accepted is lowercase, at most 254 bytes, free of spaces and control
// characters (it goes into mail headers), and normalises to itself.
func FuzzNormalizeEmail(f *testing.F) {
	for _, s := range []string{"alice@example.test", "Alice@Example.TEST", "a.b+c@x.io", `"a b"@x.io`, "a@[127.0.0.1]",
		"Alice <alice@example.test>", "a@b", "a@b\r\nBcc: c@d", "a@b\x00", "(comment)a@b.c", "a@b.c (c)", "é@ü.de",
		strings.Repeat("a", 250) + "@b.cd", "@", "", "a@@b", "=?utf-8?q?a?=@b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := validate.NormalizeEmail(s)
		if err != nil {
			return
		}
		switch {
		case got != strings.ToLower(got) || len(got) > 254:
			t.Fatalf("%q normalised to %q", s, got)
		case strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }):
			t.Fatalf("%q normalised to %q, which has spaces or control characters", s, got)
		}
		if again, err := validate.NormalizeEmail(got); err != nil || again != got {
			t.Fatalf("%q normalised to %q, which normalises to %q, %v", s, got, again, err)
		}
	})
}

// FuzzRedirectURI checks redirect URIs as a client registers them and as
// an authorization response goes back to them. Invariants: a URI accepted
// has a scheme that cannot run script, no fragment and no credentials; the
// response's redirect keeps its scheme, host and path; the form_post
// page's policy is the same whatever the URI.
func FuzzRedirectURI(f *testing.F) {
	e := newFuzzEnv(f)
	for _, s := range []string{"https://app.example.test/cb", "http://localhost:8080/cb?x=1", "com.example.app:/oauth2redirect",
		"myapp://callback", "JavaScript:alert(1)", "https://u:p@x.test/", "https://x.test/#f", "x:y",
		"https://x.test:8443/a%2F..%2Fb", "http://[::1]:80/", "https://x.test/cb?state=injected", "data:text/html,x",
		"https://x.test /", "//x.test/cb", "https:x.test", "https://x.test\\@y.test/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := identity.CheckRedirectURI("redirectUris[0]", s)
		if err != nil {
			return
		}
		u, err := url.Parse(got)
		switch {
		case err != nil:
			t.Fatalf("%q accepted but does not parse: %v", s, err)
		case u.User != nil || strings.Contains(got, "#"):
			t.Fatalf("%q accepted with credentials or a fragment", s)
		case strings.Contains(strings.ToLower(u.Scheme), "script") || u.Scheme == "data" || u.Scheme == "file":
			t.Fatalf("%q accepted with scheme %q", s, u.Scheme)
		}
		ar := &authRequestForFuzz{uri: got}
		for _, mode := range []string{"query", "fragment", "form_post"} {
			rec := ar.respond(t, e, mode)
			if rec.Code >= 500 {
				t.Fatalf("response to %q in mode %s: %d %s", got, mode, rec.Code, rec.Body)
			}
			if mode == "form_post" {
				redirectFuzzMustPolicy(t, got, rec.Header().Get("Content-Security-Policy"))
				continue
			}
			back, err := url.Parse(rec.Header().Get("Location"))
			if err != nil || back.Scheme != u.Scheme || back.Host != u.Host || back.EscapedPath() != u.EscapedPath() {
				t.Fatalf("response to %q in mode %s went to %q", got, mode, rec.Header().Get("Location"))
			}
		}
	})
}

// authRequestForFuzz answers an authorization request to one URI.
type authRequestForFuzz struct{ uri string }

func (ar *authRequestForFuzz) respond(t *testing.T, e *fuzzEnv, mode string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/realms/acme/protocol/openid-connect/auth", nil)
	req = signin.WithRealm(req, e.realm)
	rec := httptest.NewRecorder()
	err := e.app.authResponse(rec, req, &store.AuthRequest{RedirectURI: ar.uri, State: "s", ResponseMode: mode},
		url.Values{"code": {"c"}})
	if err != nil {
		t.Fatalf("response to %q in mode %s: %v", ar.uri, mode, err)
	}
	return rec
}

// redirectFuzzMustPolicy checks the form_post page's policy: the fixed
// one, whatever the URI, so that nothing in a registered URI adds a
// directive or a source.
func redirectFuzzMustPolicy(t *testing.T, uri string, policy string) {
	t.Helper()
	nonce := cspNonce.FindStringSubmatch(policy)
	if nonce == nil || policy != formPostCSP(nonce[1]) {
		t.Fatalf("redirect URI %q: policy %q, want the fixed form_post policy", uri, policy)
	}
}

// FuzzWebOrigin checks web origins as a client registers them and as
// browsers send them. Invariants: an origin accepted is one a browser can
// send (it normalises as an Origin header does); an Origin header the
// server allows echoes back only for the client's registered origin.
func FuzzWebOrigin(f *testing.F) {
	e := newFuzzEnv(f)
	e.client(f, map[string]any{"clientId": "spa", "clientType": "PUBLIC", "redirectUris": []string{"https://spa.example.test/cb"},
		"webOrigins": []string{"+", "http://localhost:8080"}})
	allowed := []string{"https://spa.example.test", "http://localhost:8080"}
	for _, s := range []string{"https://spa.example.test", "HTTPS://SPA.EXAMPLE.TEST:443", "http://localhost:8080", "null", "+", "*",
		"https://spa.example.test.evil.test", "https://spa.example.test/", "https://spa.example.test?", "https://spa.example.test#",
		"http://localhost:08080", "http://localhost:8080\r\nX: y", "https://xn--spa-.test", "http://[::1]:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := identity.NormalizeWebOrigin("webOrigins[0]", s); err == nil && o != identity.WebOriginsOfRedirects && normalizeOrigin(o) == "" {
			t.Fatalf("web origin %q accepted as %q, which no browser's Origin can match", s, o)
		}
		if !httpguts.ValidHeaderFieldValue(s) {
			return
		}
		s2 := e.on(t)
		for _, method := range []string{http.MethodOptions, http.MethodPost} {
			r := s2.send(method, "/realms/acme/protocol/openid-connect/token", strings.NewReader("client_id=spa"),
				http.Header{"Origin": {s}, "Content-Type": {"application/x-www-form-urlencoded"}})
			e.fuzzNoServerError(t, method+" token", r)
			acao := r.Header.Get("Access-Control-Allow-Origin")
			if acao == "" {
				continue
			}
			if acao != s {
				t.Fatalf("Origin %q answered with Access-Control-Allow-Origin %q", s, acao)
			}
			ok := false
			for _, a := range allowed {
				ok = ok || normalizeOrigin(s) == a
			}
			if !ok {
				t.Fatalf("Origin %q allowed, though it is none of %q", s, allowed)
			}
		}
	})
}
