package app

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/store"
)

// exchange redeems the code of a redirect back.
func (e *codeflowEnv) exchange(cfg *oauth2.Config, back url.Values) *oauth2.Token {
	e.t.Helper()
	if back.Get("code") == "" {
		e.t.Fatalf("no code in the redirect back: %v", back)
	}
	tok, err := cfg.Exchange(e.t.Context(), back.Get("code"))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	return tok
}

// mustACR checks the acr of both tokens and the ID token's amr, and
// returns the ID token's claims.
func (e *codeflowEnv) mustACR(tok *oauth2.Token, clientID, acr string, amr ...string) map[string]any {
	e.t.Helper()
	_, claims := e.verifyIDToken(tok, clientID, "")
	if claims["acr"] != acr {
		e.t.Fatalf("ID token acr %v, want %q (amr %v)", claims["acr"], acr, claims["amr"])
	}
	totpMustAMR(e.t, claims, amr...)
	if _, access := jwtParts(e.t, tok.AccessToken); access["acr"] != acr {
		e.t.Fatalf("access token acr %v, want %q", access["acr"], acr)
	}
	return claims
}

// ssoOf reads the SSO session a token's sid names.
func (e *codeflowEnv) ssoOf(claims map[string]any) *store.Session {
	e.t.Helper()
	sid, _ := claims["sid"].(string)
	sess, err := e.store.GetSession(e.t.Context(), e.realmID(), sid)
	if err != nil {
		e.t.Fatalf("SSO session %q: %v", sid, err)
	}
	return sess
}

// withParams adds authorization parameters to an authorization URL.
func withParams(cfg *oauth2.Config, state string, params map[string]string) string {
	var opts []oauth2.AuthCodeOption
	for k, v := range params {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	return cfg.AuthCodeURL(state, opts...)
}

// A user who enrolled TOTP after signing in holds an SSO session at acr 1.
// Asking for acr 2 (or any authorization: the enrolled factor is owed
// anyway) sends the browser to the TOTP page, not the login page; the
// code raises the session, and every token of it says acr 2 from then on.
func TestStepUpAtAuthorization(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.totpAlign()
	b := e.browser()
	first := e.exchange(cfg, e.signIn(b, cfg.AuthCodeURL("pwd"), "alice"))
	firstClaims := e.mustACR(first, "web", "1", "pwd")

	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep) // past the enrolment's code
	up := map[string]string{"acr_values": "2"}
	silent := map[string]string{"acr_values": "2", "prompt": "none"}
	if back := e.redirectedBack(b.follow(e.url, withParams(cfg, "none", silent))); back.Get("error") != "login_required" {
		t.Fatalf("prompt=none at acr 1: %v, want login_required", back)
	}

	p := b.get(withParams(cfg, "up", up))
	if p.status != http.StatusFound || !strings.HasPrefix(p.location(t).Path, "/realms/acme/signin/") {
		t.Fatalf("authorization at acr 1: status %d to %q, want the step-up's page", p.status, p.header.Get("Location"))
	}
	page := b.follow(e.url, p.location(t).String())
	if f := page.form(t); page.status != http.StatusOK || !f.fields.Has("code") || f.fields.Has("password") {
		t.Fatalf("step-up page: status %d fields %v", page.status, f.fields)
	}
	code := totpTestCode(t, secret, e.clock.now())
	totpMustRefuse(t, b.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	if e.aliceFailures() != 1 {
		t.Fatalf("a wrong step-up code is not counted: %d failures", e.aliceFailures())
	}
	e.clock.advance(time.Second)
	tok := e.exchange(cfg, e.redirectedBack(b.submit(page, map[string]string{"code": code})))
	claims := e.mustACR(tok, "web", "2", "pwd", "otp")
	if claims["sid"] != firstClaims["sid"] || claims["auth_time"].(float64) <= firstClaims["auth_time"].(float64) {
		t.Fatalf("after step-up: sid %v auth_time %v, want sid %v and a later auth_time than %v",
			claims["sid"], claims["auth_time"], firstClaims["sid"], firstClaims["auth_time"])
	}
	sso := e.ssoOf(claims)
	if !slices.Equal(sso.AMR, []string{"pwd", "otp"}) || sso.AuthTime != e.clock.now().UnixMilli() {
		t.Fatalf("SSO session after step-up: amr %v auth time %d", sso.AMR, sso.AuthTime)
	}
	if e.aliceFailures() != 0 {
		t.Fatal("a right step-up code leaves the failures on record")
	}

	// Events: the failure and the LOGIN, both marked step_up.
	failed := e.loginEvents("LOGIN_ERROR")
	if len(failed) != 1 || failed[0].Error != "invalid_totp" || failed[0].Details["step_up"] != "true" {
		t.Fatalf("LOGIN_ERROR events %+v", failed)
	}
	login := e.loginEvents("LOGIN")[0]
	if login.Details["step_up"] != "true" || login.Details["method"] != "totp" || login.Details["acr"] != "2" ||
		login.SessionID != sso.ID || login.ClientID != "web" {
		t.Fatalf("step-up LOGIN event %+v", login)
	}

	// The raised session answers silently now, at acr 2.
	e.mustACR(e.exchange(cfg, e.redirectedBack(b.follow(e.url, withParams(cfg, "none", silent)))), "web", "2", "pwd", "otp")
	// The tokens of the first sign-in refresh at the session's level.
	refreshed, err := e.refresh(cfg, first.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	e.mustACR(refreshed, "web", "2", "pwd", "otp")
}

// A user whose second factor is a security key is sent to the key's page;
// a session at pwd and hwk is at acr 2 and answers without another step.
func TestStepUpWithKeyAtAuthorization(t *testing.T) {
	e := newWebAuthnEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	b := e.browser()
	e.mustACR(e.exchange(cfg, e.codeflowEnv.signIn(b, cfg.AuthCodeURL("pwd"), "alice")), "web", "1", "pwd")
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")

	p := b.get(withParams(cfg, "up", map[string]string{"acr_values": "2"}))
	if p.status != http.StatusFound || !strings.HasPrefix(p.location(t).Path, "/realms/acme/signin/") {
		t.Fatalf("authorization at acr 1: status %d to %q, want the step-up's page", p.status, p.header.Get("Location"))
	}
	page := b.follow(e.url, p.location(t).String())
	mustPage(t, page, http.StatusOK, "Use your security key")
	back := e.redirectedBack(e.flowTestAssert(b, page, key))
	claims := e.mustACR(e.exchange(cfg, back), "web", "2", "pwd", "hwk")
	if sso := e.ssoOf(claims); !slices.Equal(sso.AMR, []string{"pwd", "hwk"}) {
		t.Fatalf("SSO session after step-up: amr %v", sso.AMR)
	}
	if login := e.loginEvents(e.aliceID); hasEvent(login, "LOGIN") == nil {
		t.Fatal("no LOGIN event")
	}
	steps := 0
	for _, ev := range e.loginEvents(e.aliceID) {
		if ev.Type == "LOGIN" && ev.Details["step_up"] == "true" && ev.Details["method"] == "webauthn" {
			steps++
		}
	}
	if steps != 1 {
		t.Fatalf("%d step-up LOGIN events with method webauthn, want 1", steps)
	}
	silent := withParams(cfg, "none", map[string]string{"prompt": "none"})
	e.mustACR(e.exchange(cfg, e.redirectedBack(b.follow(e.url, silent))), "web", "2", "pwd", "hwk")
}

// acr follows how the user signed in: one factor, or two.
func TestACRLevels(t *testing.T) {
	e := newWebAuthnEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.totpAlign()
	ids := map[string]string{}
	for _, name := range []string{"bob", "carol", "dave", "erin"} {
		ids[name] = e.createUser("acme", map[string]any{"username": name, "password": codeflowPassword})["id"].(string)
	}
	carolSecret, _ := e.totpEnrol(ids["carol"])
	daveKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("dave", codeflowPassword).AccessToken, daveKey, "key")
	erinKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("erin", codeflowPassword).AccessToken, erinKey, "passkey")
	e.clock.advance(totpTestStep)
	options := e.url + webauthnPath("authenticate/options")

	t.Run("password", func(t *testing.T) {
		e.mustACR(e.exchange(cfg, e.codeflowEnv.signIn(e.browser(), cfg.AuthCodeURL("s"), "bob")), "web", "1", "pwd")
	})
	t.Run("password and TOTP", func(t *testing.T) {
		b := e.browser()
		page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "carol")
		back := e.redirectedBack(b.submit(page, map[string]string{"code": totpTestCode(t, carolSecret, e.clock.now())}))
		e.mustACR(e.exchange(cfg, back), "web", "2", "pwd", "otp")
	})
	t.Run("password and a security key", func(t *testing.T) {
		b := e.browser()
		page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "dave")
		f := webauthnForm(t, page, "authenticate")
		id, body := pageCeremony(t, b, options, map[string]any{"authRequestID": f.fields.Get("authRequestID")})
		back := e.redirectedBack(webauthnSubmit(b, page, f, id, e.assertWith(daveKey, body, ""), nil))
		e.mustACR(e.exchange(cfg, back), "web", "2", "pwd", "hwk")
	})
	t.Run("a passkey that verified its user", func(t *testing.T) {
		b := e.browser()
		p := b.follow(e.url, cfg.AuthCodeURL("s"))
		login := p.form(t)
		id, body := pageCeremony(t, b, options, map[string]any{})
		back := e.redirectedBack(webauthnSubmit(b, p, &codeflowForm{action: e.url + webauthnPath("authenticate/verify"),
			method: http.MethodPost, fields: url.Values{"authRequestID": login.fields["authRequestID"],
				"csrf": login.fields["csrf"]}}, id, e.assertWith(erinKey, body, ""), nil))
		e.mustACR(e.exchange(cfg, back), "web", "2", "hwk", "mfa")
	})
}

// max_age past the last sign-in asks for the whole sign-in again,
// password and second factor, and the tokens say acr 2 with the new
// auth_time; within max_age the session answers as it is.
func TestACRMaxAge(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	first := e.mustACR(e.exchange(cfg, e.redirectedBack(b.submit(page, map[string]string{
		"code": totpTestCode(t, secret, e.clock.now())}))), "web", "2", "pwd", "otp")

	e.clock.advance(2 * time.Minute)
	within := e.mustACR(e.exchange(cfg, e.redirectedBack(b.follow(e.url,
		withParams(cfg, "s", map[string]string{"max_age": "600", "acr_values": "2"})))), "web", "2", "pwd", "otp")
	if within["auth_time"] != first["auth_time"] {
		t.Fatalf("within max_age: auth_time %v, want %v", within["auth_time"], first["auth_time"])
	}
	silent := withParams(cfg, "none", map[string]string{"max_age": "60", "prompt": "none"})
	if back := e.redirectedBack(b.follow(e.url, silent)); back.Get("error") != "login_required" {
		t.Fatalf("prompt=none past max_age: %v, want login_required", back)
	}
	page = e.totpPasswordStep(b, withParams(cfg, "s", map[string]string{"max_age": "60", "acr_values": "2"}), "alice")
	again := e.mustACR(e.exchange(cfg, e.redirectedBack(b.submit(page, map[string]string{
		"code": totpTestCode(t, secret, e.clock.now())}))), "web", "2", "pwd", "otp")
	if again["auth_time"].(float64) != float64(e.clock.now().Unix()) {
		t.Fatalf("after max_age: auth_time %v, want now (%d)", again["auth_time"], e.clock.now().Unix())
	}
}

// acr_values is a voluntary claim: a user without a second factor signs
// in at acr 1 whatever is asked, silently too.
func TestACRValuesVoluntary(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	b := e.browser()
	e.mustACR(e.exchange(cfg, e.signIn(b, withParams(cfg, "s", map[string]string{"acr_values": "2"}), "alice")), "web", "1", "pwd")
	for _, params := range []map[string]string{
		{"acr_values": "2"},
		{"acr_values": "2", "prompt": "none"},
		{"acr_values": "gold 2 1"},
	} {
		e.mustACR(e.exchange(cfg, e.redirectedBack(b.follow(e.url, withParams(cfg, "s", params)))), "web", "1", "pwd")
	}
}

// A step-up's step ends with the SSO session it would raise: the code
// then signs nobody in.
func TestStepUpStepEndsWithSession(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.totpAlign()
	b := e.browser()
	e.signIn(b, cfg.AuthCodeURL("s"), "alice")
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	page := b.follow(e.url, cfg.AuthCodeURL("up"))
	if !strings.HasPrefix(page.url.Path, "/realms/acme/signin/") || !page.form(t).fields.Has("code") {
		t.Fatalf("step-up at %s, want the step-up's TOTP page", page.url)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil), http.StatusOK)
	p := b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
	if p.status != http.StatusBadRequest {
		t.Fatalf("step-up after the session ended: status %d, want 400; body %s", p.status, p.body)
	}
}
