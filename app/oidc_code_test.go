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
		{"no redirect_uri", url.Values{"redirect_uri": nil}, codeflowBasic("web", secret), 400, "invalid_request"},
		{"wrong secret", nil, codeflowBasic("web", "wrong"), 401, "invalid_client"},
		{"unknown code", url.Values{"code": {"nope"}}, codeflowBasic("web", secret), 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := code()
			status, body := e.tokenRequest(form(c, tc.set), tc.auth)
			codeflowMustOAuthError(t, status, body, tc.status, tc.code)
			// None of these reaches the code, so none uses it up: its client
			// still redeems it (the ones that do: TestFailedCodeExchangeUsesCodeUp).
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

// A failed redemption uses the code up, as Keycloak's single-use codes
// are: a second try with the right values is invalid_grant. A try after
// the code was redeemed revokes what it was redeemed for, whatever the
// try got wrong.
func TestFailedCodeExchangeUsesCodeUp(t *testing.T) {
	e := newRFCEnv(t)
	otherSecret := e.client("other", nil)
	e.client("spa", map[string]any{"clientType": "PUBLIC"})
	web := e.oauth2Config("web", e.secret, "openid")
	spa := e.oauth2Config("spa", "", "openid")
	ctx := t.Context()
	verifier := oauth2.GenerateVerifier()

	for _, c := range []struct {
		name   string
		cfg    *oauth2.Config
		pkce   bool
		form   url.Values // over the right redemption
		auth   string
		status int
		code   string
		usesUp bool
	}{
		{"redirect_uri differs", web, false, url.Values{"redirect_uri": {codeflowRedirect + "/other"}}, e.basic(), 400, "invalid_grant", true},
		{"code of another client", web, false, nil, codeflowBasic("other", otherSecret), 400, "invalid_grant", true},
		{"wrong verifier", spa, true, url.Values{"code_verifier": {oauth2.GenerateVerifier()}}, "", 400, "invalid_grant", true},
		{"no verifier", spa, true, url.Values{"code_verifier": nil}, "", 400, "invalid_grant", true},
		{"verifier without challenge", web, false, url.Values{"code_verifier": {verifier}}, e.basic(), 400, "invalid_grant", true},
		// Refused before the code is looked at: it stays good.
		{"wrong secret", web, false, nil, codeflowBasic("web", "wrong"), 401, "invalid_client", false},
		{"no redirect_uri", web, false, url.Values{"redirect_uri": nil}, e.basic(), 400, "invalid_request", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []oauth2.AuthCodeOption
			if c.pkce {
				opts = append(opts, oauth2.S256ChallengeOption(verifier))
			}
			code := e.signIn(e.browser(), c.cfg.AuthCodeURL("s", opts...), "alice").Get("code")
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {codeflowRedirect}}
			if c.pkce {
				form.Set("code_verifier", verifier)
			}
			if c.cfg == spa {
				form.Set("client_id", "spa")
			}
			for k, v := range c.form {
				form[k] = v
			}
			var headers []string
			if c.auth != "" {
				headers = append(headers, c.auth)
			}
			status, body := e.tokenRequest(form, headers...)
			codeflowMustOAuthError(t, status, body, c.status, c.code)

			var again []oauth2.AuthCodeOption
			if c.pkce {
				again = append(again, oauth2.VerifierOption(verifier))
			}
			_, err := c.cfg.Exchange(ctx, code, again...)
			if c.usesUp {
				codeflowMustRetrieveError(t, err, "invalid_grant")
			} else if err != nil {
				t.Fatalf("the right redemption after the refusal: %v", err)
			}
		})
	}

	t.Run("a wrong try after the redemption", func(t *testing.T) {
		code := e.signIn(e.browser(), web.AuthCodeURL("s"), "alice").Get("code")
		tok, err := web.Exchange(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		status, body := e.tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {codeflowRedirect + "/other"}}, e.basic())
		codeflowMustOAuthError(t, status, body, 400, "invalid_grant")
		if got := e.introspect("web", e.secret, tok.AccessToken); got["active"] != false {
			t.Fatalf("access token of a replayed code introspected as %v", got)
		}
		_, err = e.refresh(web, tok.RefreshToken)
		codeflowMustRetrieveError(t, err, "invalid_grant")
	})
}
