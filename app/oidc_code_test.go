package app

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// A code serves once: its replay fails and revokes the access and refresh
// tokens its first redemption issued.
func TestCodeReplayRevokesTokens(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	ctx := t.Context()
	back := e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice")
	tok, err := cfg.Exchange(ctx, back.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.introspect("web", secret, tok.AccessToken); got["active"] != true {
		t.Fatalf("fresh access token introspected as %v", got)
	}

	_, err = cfg.Exchange(ctx, back.Get("code"))
	codeflowMustRetrieveError(t, err, "invalid_grant")
	if got := e.introspect("web", secret, tok.AccessToken); got["active"] != false {
		t.Fatalf("access token of a replayed code introspected as %v", got)
	}
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	codeflowMustRetrieveError(t, err, "invalid_grant")
	// A third try is refused the same way.
	_, err = cfg.Exchange(ctx, back.Get("code"))
	codeflowMustRetrieveError(t, err, "invalid_grant")
}

func TestCodeExchangeRefused(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	otherSecret := e.client("other", nil)
	e.createRealm("beta")
	cfg := e.oauth2Config("web", secret, "openid")
	ctx := t.Context()
	b := e.browser()
	code := func() string {
		t.Helper()
		return e.signIn(b, cfg.AuthCodeURL("s"), "alice").Get("code")
	}
	form := func(code string, set url.Values) url.Values {
		f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {codeflowRedirect}}
		for k, v := range set {
			f[k] = v
		}
		return f
	}

	// Expired: a code lives 60 seconds.
	expired := code()
	e.clock.advance(61 * time.Second)
	status, body := e.tokenRequest(form(expired, nil), codeflowBasic("web", secret))
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")

	for _, tc := range []struct {
		name   string
		set    url.Values
		auth   string
		status int
		code   string
	}{
		{"redirect_uri differs", url.Values{"redirect_uri": {codeflowRedirect + "/other"}}, codeflowBasic("web", secret), 400, "invalid_grant"},
		{"no redirect_uri", url.Values{"redirect_uri": nil}, codeflowBasic("web", secret), 400, "invalid_request"},
		{"code of another client", nil, codeflowBasic("other", otherSecret), 400, "invalid_grant"},
		{"wrong secret", nil, codeflowBasic("web", "wrong"), 401, "invalid_client"},
		{"unknown code", url.Values{"code": {"nope"}}, codeflowBasic("web", secret), 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := code()
			status, body := e.tokenRequest(form(c, tc.set), tc.auth)
			codeflowMustOAuthError(t, status, body, tc.status, tc.code)
			// None of these uses the code up: its client still redeems it.
			if _, err := cfg.Exchange(ctx, c); err != nil {
				t.Fatalf("redeeming the code after the refusal: %v", err)
			}
		})
	}

	// A code is good in its realm only.
	betaSecret := func() string {
		r := e.admin(http.MethodPost, "/admin/realms/beta/clients", map[string]any{"clientId": "web",
			"redirectUris": []string{codeflowRedirect}})
		mustStatus(t, r, http.StatusCreated)
		return r.object(t)["secret"].(string)
	}()
	c := code()
	r := e.request(http.MethodPost, "/realms/beta/protocol/openid-connect/token", form(c, nil).Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("web", betaSecret))
	var oe oauthError
	r.decode(t, &oe)
	if r.Status != http.StatusBadRequest || oe.Error != "invalid_grant" {
		t.Fatalf("code of acme redeemed in beta: %d %s", r.Status, r.Body)
	}

	// A client without the grant may not redeem at all.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/clients/web",
		map[string]any{"grantTypes": []string{"client_credentials"}}), http.StatusOK)
	status, body = e.tokenRequest(form("whatever", nil), codeflowBasic("web", secret))
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "unauthorized_client")
}

// A disabled user's code is refused.
func TestCodeExchangeDisabledUser(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	back := e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice")
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": false}), http.StatusOK)
	_, err := cfg.Exchange(t.Context(), back.Get("code"))
	codeflowMustRetrieveError(t, err, "invalid_grant")
}
