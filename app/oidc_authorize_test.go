package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/sessions"
)

// An unknown client or a redirect URI not registered exactly is shown as
// an error page: the browser goes nowhere.
func TestAuthorizeRefusesWithoutRedirect(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("spa", map[string]any{"clientType": "PUBLIC"})
	e.client("off", map[string]any{"enabled": false})
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	base := url.Values{"response_type": {"code"}, "client_id": {"spa"}, "redirect_uri": {codeflowRedirect},
		"scope": {"openid"}, "state": {"s"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	for _, tc := range []struct {
		name string
		set  url.Values
		del  []string
	}{
		{"unknown client", url.Values{"client_id": {"ghost"}}, nil},
		{"disabled client", url.Values{"client_id": {"off"}}, nil},
		{"no client", nil, []string{"client_id"}},
		{"no redirect URI", nil, []string{"redirect_uri"}},
		{"redirect URI extended", url.Values{"redirect_uri": {codeflowRedirect + "/more"}}, nil},
		{"redirect URI with a query", url.Values{"redirect_uri": {codeflowRedirect + "?next=/"}}, nil},
		{"redirect URI prefix", url.Values{"redirect_uri": {strings.TrimSuffix(codeflowRedirect, "back")}}, nil},
		{"redirect URI of another host", url.Values{"redirect_uri": {"https://evil.example.test/callback"}}, nil},
		{"redirect URI in other case", url.Values{"redirect_uri": {strings.ToUpper(codeflowRedirect)}}, nil},
		{"redirect URI twice", url.Values{"redirect_uri": {codeflowRedirect, "https://evil.example.test/callback"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := url.Values{}
			for k, v := range base {
				q[k] = v
			}
			for k, v := range tc.set {
				q[k] = v
			}
			for _, k := range tc.del {
				q.Del(k)
			}
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				var r *testResponse
				if method == http.MethodGet {
					r = e.request(method, "/realms/acme/protocol/openid-connect/auth?"+q.Encode(), nil)
				} else {
					r = e.request(method, "/realms/acme/protocol/openid-connect/auth", q.Encode(),
						"Content-Type: application/x-www-form-urlencoded")
				}
				if r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" ||
					!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("%s: status %d Location %q Content-Type %q, want a 400 page",
						method, r.Status, r.Header.Get("Location"), r.Header.Get("Content-Type"))
				}
				if !strings.Contains(string(r.Body), enMsg("error.heading")) {
					t.Fatalf("error page body %s", r.Body)
				}
			}
		})
	}
}

// Other errors go back to the client's redirect URI with error and state.
func TestAuthorizeErrorsRedirect(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("spa", map[string]any{"clientType": "PUBLIC"})
	e.client("web", nil)
	e.client("machine", map[string]any{"grantTypes": []string{"client_credentials"}})
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	for _, tc := range []struct {
		name   string
		params url.Values
		code   string
	}{
		{"token response type", url.Values{"client_id": {"web"}, "response_type": {"token"}}, "unsupported_response_type"},
		{"hybrid response type", url.Values{"client_id": {"web"}, "response_type": {"code id_token"}}, "unsupported_response_type"},
		{"no response type", url.Values{"client_id": {"web"}, "response_type": {""}}, "invalid_request"},
		{"public client without PKCE", url.Values{"client_id": {"spa"}}, "invalid_request"},
		{"plain PKCE", url.Values{"client_id": {"spa"}, "code_challenge": {challenge}, "code_challenge_method": {"plain"}}, "invalid_request"},
		{"PKCE method left out (plain)", url.Values{"client_id": {"spa"}, "code_challenge": {challenge}}, "invalid_request"},
		{"PKCE method unknown", url.Values{"client_id": {"web"}, "code_challenge": {challenge}, "code_challenge_method": {"S512"}}, "invalid_request"},
		{"malformed challenge", url.Values{"client_id": {"web"}, "code_challenge": {"short"}, "code_challenge_method": {"S256"}}, "invalid_request"},
		{"method without challenge", url.Values{"client_id": {"web"}, "code_challenge_method": {"S256"}}, "invalid_request"},
		{"grant not allowed", url.Values{"client_id": {"machine"}}, "unauthorized_client"},
		{"scope not assigned", url.Values{"client_id": {"web"}, "scope": {"openid nope"}}, "invalid_scope"},
		{"prompt none without session", url.Values{"client_id": {"web"}, "prompt": {"none"}}, "login_required"},
		{"prompt none with another", url.Values{"client_id": {"web"}, "prompt": {"none login"}}, "invalid_request"},
		{"unknown prompt", url.Values{"client_id": {"web"}, "prompt": {"sideways"}}, "invalid_request"},
		{"bad max_age", url.Values{"client_id": {"web"}, "max_age": {"-1"}}, "invalid_request"},
		{"request object", url.Values{"client_id": {"web"}, "request": {"eyJ..."}}, "request_not_supported"},
		{"request_uri", url.Values{"client_id": {"web"}, "request_uri": {"https://app.example.test/r"}}, "request_uri_not_supported"},
		{"repeated parameter", url.Values{"client_id": {"web"}, "scope": {"openid", "email"}}, "invalid_request"},
		{"unknown response mode", url.Values{"client_id": {"web"}, "response_mode": {"web_message"}}, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// machine has no redirect URI of its own: give it one.
			if tc.params.Get("client_id") == "machine" {
				mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/clients/machine",
					map[string]any{"redirectUris": []string{codeflowRedirect}}), http.StatusOK)
			}
			q := url.Values{"response_type": {"code"}, "redirect_uri": {codeflowRedirect}, "scope": {"openid"},
				"state": {"the-state"}}
			for k, v := range tc.params {
				q[k] = v
			}
			r := e.request(http.MethodGet, "/realms/acme/protocol/openid-connect/auth?"+q.Encode(), nil)
			if r.Status != http.StatusFound {
				t.Fatalf("status %d, want a redirect; body %s", r.Status, r.Body)
			}
			loc, err := url.Parse(r.Header.Get("Location"))
			if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != codeflowRedirect {
				t.Fatalf("redirected to %q", r.Header.Get("Location"))
			}
			if got := loc.Query(); got.Get("error") != tc.code || got.Get("state") != "the-state" ||
				got.Get("error_description") == "" || got.Has("code") {
				t.Fatalf("error response %v, want %s with the state", got, tc.code)
			}
		})
	}
}

// prompt=login and an exceeded max_age bring the login page back despite
// the SSO session; a fresh enough session answers at once.
func TestAuthorizePromptLoginAndMaxAge(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	e.signIn(b, cfg.AuthCodeURL("s"), "alice")
	loginTime := e.clock.now().Unix()

	showsLogin := func(opts ...oauth2.AuthCodeOption) bool {
		t.Helper()
		p := b.get(cfg.AuthCodeURL("s", opts...))
		return p.status == http.StatusFound && p.location(t).Path == "/realms/acme/login"
	}
	if showsLogin() {
		t.Fatal("login page despite a live SSO session")
	}
	if !showsLogin(oauth2.SetAuthURLParam("prompt", "login")) {
		t.Fatal("prompt=login answered from the SSO session")
	}
	e.clock.advance(120e9) // two minutes
	if showsLogin(oauth2.SetAuthURLParam("max_age", "300")) {
		t.Fatal("max_age 300 refused a two-minute-old sign-in")
	}
	if !showsLogin(oauth2.SetAuthURLParam("max_age", "60")) {
		t.Fatal("max_age 60 accepted a two-minute-old sign-in")
	}

	// Signing in again renews the same session's auth_time.
	back := e.signIn(b, cfg.AuthCodeURL("s", oauth2.SetAuthURLParam("prompt", "login")), "alice")
	tok, err := cfg.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	_, claims := e.verifyIDToken(tok, "web", "")
	if at := int64(claims["auth_time"].(float64)); at != loginTime+120 {
		t.Fatalf("auth_time %d, want the new sign-in %d", at, loginTime+120)
	}
	listed := e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil)
	var reps []sessions.SessionRep
	listed.decode(t, &reps)
	if sso, _ := codeflowSessionKinds(reps); len(sso) != 1 || sso[0].ID != claims["sid"] {
		t.Fatalf("sessions %s: want one SSO session, signed in again, the token's sid %v", listed.Body, claims["sid"])
	}

	// prompt=none answers from the session, or says login_required without one.
	back = e.redirectedBack(b.get(cfg.AuthCodeURL("silent", oauth2.SetAuthURLParam("prompt", "none"))))
	if back.Get("code") == "" || back.Get("state") != "silent" {
		t.Fatalf("prompt=none with a session: %v", back)
	}
	back = e.redirectedBack(e.browser().get(cfg.AuthCodeURL("silent", oauth2.SetAuthURLParam("prompt", "none"))))
	if back.Get("error") != "login_required" || back.Get("state") != "silent" {
		t.Fatalf("prompt=none without a session: %v", back)
	}
}
