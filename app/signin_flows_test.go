package app

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
)

// flowTestBind makes a browser flow of acme with steps and binds client
// to it; it answers the flow's ID.
func (e *codeflowEnv) flowTestBind(client, alias string, steps ...map[string]any) string {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": alias, "usage": "browser", "steps": steps})
	mustStatus(e.t, r, http.StatusCreated)
	id, _ := r.object(e.t)["id"].(string)
	r = e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+id+"/assign-client/"+url.PathEscape(client), map[string]any{"usage": "browser"})
	mustStatus(e.t, r, http.StatusNoContent)
	return id
}

// flowTestStart follows an authorization URL to the first page of the
// flow bound to its client.
func (e *codeflowEnv) flowTestStart(b *codeflowBrowser, authURL string) *codeflowPage {
	e.t.Helper()
	p := b.follow(e.url, authURL)
	if p.status != http.StatusOK || !strings.HasPrefix(p.url.Path, "/realms/acme/signin/") {
		e.t.Fatalf("sign-in of a client with a flow: status %d at %s, want its flow's page", p.status, p.url)
	}
	return p
}

// flowTestNext follows a step's answer, a 303 to the flow's next page.
func (e *codeflowEnv) flowTestNext(b *codeflowBrowser, p *codeflowPage) *codeflowPage {
	e.t.Helper()
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(e.t).Path, "/realms/acme/signin/") {
		e.t.Fatalf("after a step: status %d, want 303 to the flow's next page; body %s", p.status, p.body)
	}
	return b.follow(e.url, p.location(e.t).String())
}

var (
	flowTestPassword = map[string]any{"kind": "username-password", "requirement": "required"}
	flowTestTOTP     = map[string]any{"kind": "totp", "requirement": "required"}
)

// A client bound to a flow of password and TOTP signs in through both;
// another client of the realm keeps the sign-in without a flow.
func TestFlowPasswordAndTOTP(t *testing.T) {
	e := newCodeflowEnv(t)
	strict := e.oauth2Config("strict", e.client("strict", nil), "openid")
	plain := e.oauth2Config("plain", e.client("plain", nil), "openid")
	e.flowTestBind("strict", "password-and-totp", flowTestPassword, flowTestTOTP)
	e.eventsOn()
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)

	b := e.browser()
	page := e.flowTestStart(b, strict.AuthCodeURL("s1"))
	flowURL := page.url.String()
	if f := page.form(t); !f.fields.Has("username") || !f.fields.Has("password") || f.fields.Get("csrf") == "" {
		t.Fatalf("the flow's first page is no password form: %v", f.fields)
	}
	if p := b.submit(page, map[string]string{"username": "alice", "password": "wrong"}); p.status != http.StatusUnauthorized {
		t.Fatalf("wrong password: status %d", p.status)
	}
	totpPage := e.flowTestNext(b, b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}))
	if f := totpPage.form(t); !f.fields.Has("code") {
		t.Fatalf("the flow's second page is no TOTP form: %v", f.fields)
	}
	// The password form posted again finds the flow moved on.
	if p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}); p.status != http.StatusConflict {
		t.Fatalf("the password step posted twice: status %d, want 409", p.status)
	}
	// The request cannot be finished through the sign-in without a flow.
	rec, err := e.store.GetSignInFlow(t.Context(), e.realmID(), strings.TrimPrefix(totpPage.url.Path, "/realms/acme/signin/"), e.clock.now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get(e.issuer("acme") + "/login?authRequestID=" + rec.RequesterID); p.status != http.StatusBadRequest {
		t.Fatalf("the login page of a request with a flow: status %d, want 400", p.status)
	}
	code := totpTestCode(t, totpSecret, e.clock.now())
	totpMustRefuse(t, b.submit(totpPage, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	if errs := e.loginEvents("LOGIN_ERROR"); len(errs) != 2 || errs[0].Error != "invalid_totp" || errs[0].UserID != e.aliceID {
		t.Fatalf("LOGIN_ERROR events %+v, want an invalid_totp of alice after a wrong password", errs)
	}
	claims := e.totpExchange(strict, e.redirectedBack(b.submit(totpPage, map[string]string{"code": code})))
	totpMustAMR(t, claims, "pwd", "otp")
	if logins := e.loginEvents("LOGIN"); len(logins) != 1 || logins[0].UserID != e.aliceID {
		t.Fatalf("LOGIN events %+v", logins)
	}
	// The finished flow is gone.
	if p := b.get(flowURL); p.status != http.StatusBadRequest {
		t.Fatalf("the page of a finished flow: status %d, want 400", p.status)
	}

	// The other client signs in on the realm's login page.
	p := e.browser().follow(e.url, plain.AuthCodeURL("s2"))
	if p.status != http.StatusOK || p.url.Path != "/realms/acme/login" {
		t.Fatalf("a client without a flow: status %d at %s, want the login page", p.status, p.url)
	}
}

// A second factor conditional on a role is asked of the users who hold it
// only.
func TestFlowConditionalSecondFactor(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "admins-give-a-code", flowTestPassword,
		map[string]any{"kind": "totp", "requirement": "conditional", "condition": map[string]any{"role": "admin"}})
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)

	signIn := func() (*codeflowBrowser, *codeflowPage) {
		b := e.browser()
		page := e.flowTestStart(b, cfg.AuthCodeURL("s"))
		return b, b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	}
	// Without the role, the password is enough.
	_, p := signIn()
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(p)), "pwd")

	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "admin"}), http.StatusCreated)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"admin"}}), http.StatusOK)
	b, p := signIn()
	totpPage := e.flowTestNext(b, p)
	code := totpTestCode(t, totpSecret, e.clock.now())
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(b.submit(totpPage, map[string]string{"code": code}))), "pwd", "otp")
}

// A user who lacks the credential a required step needs is told so on a
// page, never left at a dead end.
func TestFlowUserWithoutTheCredential(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-totp", flowTestPassword, flowTestTOTP)
	b := e.browser()
	page := e.flowTestStart(b, cfg.AuthCodeURL("s"))
	p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "administrator") {
		t.Fatalf("a user without TOTP: status %d, body %s; want 403 and a page saying what to do", p.status, p.body)
	}
}

// A password that must change is changed after a flow's steps, on the
// page the sign-in without a flow uses, and the sign-in lands.
func TestFlowThenPasswordChange(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password", flowTestPassword)
	signIn := func(b *codeflowBrowser, password string) *codeflowPage {
		return b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": password})
	}
	// A session of alice's elsewhere, which the change ends.
	elsewhere := e.browser()
	e.redirectedBack(signIn(elsewhere, codeflowPassword))
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"requirePasswordReset": true}), http.StatusOK)
	e.eventsOn()

	b := e.browser()
	form := e.flowTestNext(b, signIn(b, codeflowPassword))
	recoveryMustContain(t, form, http.StatusOK, "Change your password")
	if p := b.submit(form, map[string]string{"password": changedPassword, "confirm": "something else"}); p.status != http.StatusBadRequest {
		t.Fatalf("a confirmation that differs: status %d, want 400", p.status)
	}
	recoveryMustContain(t, b.submit(form, map[string]string{"password": codeflowPassword, "confirm": codeflowPassword}),
		http.StatusBadRequest, "different from your current one")
	back := e.redirectedBack(b.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword}))
	totpMustAMR(t, e.totpExchange(cfg, back), "pwd")
	if ev := e.loginEvents("UPDATE_PASSWORD"); len(ev) != 1 || ev[0].UserID != e.aliceID {
		t.Fatalf("UPDATE_PASSWORD events %+v, want one of alice", ev)
	}
	// The change ended the session elsewhere; the new password signs in,
	// owing nothing more.
	e.flowTestStart(elsewhere, cfg.AuthCodeURL("s2"))
	e.redirectedBack(signIn(e.browser(), changedPassword))
}

// A client whose password grant is bound to a direct-grant flow with a
// TOTP step gets tokens for the password and a code (totp) only.
func TestFlowDirectGrant(t *testing.T) {
	e := newCodeflowEnv(t)
	cli := e.passwordGrantClient()
	other := e.client("other", map[string]any{"grantTypes": []string{"password"}})
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "password-and-code", "usage": "direct-grant",
		"steps": []map[string]any{flowTestPassword, flowTestTOTP}})
	mustStatus(t, r, http.StatusCreated)
	id, _ := r.object(t)["id"].(string)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+id+"/assign-client/cli", map[string]any{"usage": "direct-grant"}),
		http.StatusNoContent)
	e.eventsOn()
	grant := func(client, secret string, extra ...string) (int, map[string]any) {
		form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}, "scope": {"openid"}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		return e.tokenRequest(form, codeflowBasic(client, secret))
	}
	refused := func(want string, status int, body map[string]any) {
		t.Helper()
		codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
		if d, _ := body["error_description"].(string); !strings.Contains(d, want) {
			t.Fatalf("error_description %q, want it to say %q", d, want)
		}
	}
	// Without an authenticator app, the flow's code cannot be given.
	status, body := grant("cli", cli)
	refused("no authenticator app", status, body)
	// The other client keeps the password alone.
	if status, body := grant("other", other); status != http.StatusOK {
		t.Fatalf("a client without a flow: status %d %v", status, body)
	}

	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	status, body = grant("cli", cli)
	refused("send it as totp", status, body)
	code := totpTestCode(t, secret, e.clock.now())
	status, body = grant("cli", cli, "totp", totpTestWrongCode(code))
	refused("invalid one-time code", status, body)
	if errs := e.loginEvents("LOGIN_ERROR"); len(errs) == 0 || errs[0].Error != "invalid_totp" || errs[0].UserID != e.aliceID {
		t.Fatalf("LOGIN_ERROR events %+v, want an invalid_totp of alice first", errs)
	}
	status, body = grant("cli", cli, "totp", code)
	if status != http.StatusOK {
		t.Fatalf("password and code: status %d %v", status, body)
	}
	idToken, _ := body["id_token"].(string)
	parts := strings.Split(idToken, ".")
	var claims map[string]any
	if raw, err := base64.RawURLEncoding.DecodeString(parts[min(1, len(parts)-1)]); err != nil || json.Unmarshal(raw, &claims) != nil {
		t.Fatalf("no ID token: %v", body)
	}
	totpMustAMR(t, claims, "pwd", "otp")
	// A code is taken once.
	status, body = grant("cli", cli, "totp", code)
	refused("invalid one-time code", status, body)
}

// A realm that requires a second factor has a user without one set up an
// authenticator app at the end of any flow, as the sign-in without a flow
// does: the first code proves it (otp), the recovery codes are shown once
// on a page that leads on; the next sign-in asks for the app's code.
func TestFlowRequiredEnrolment(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-then-totp", flowTestPassword,
		map[string]any{"kind": "totp", "requirement": "conditional", "condition": map[string]any{"configured": true}})
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
	e.eventsOn()
	e.totpAlign()
	signIn := func(b *codeflowBrowser, state string) *codeflowPage {
		return e.flowTestNext(b, b.submit(e.flowTestStart(b, cfg.AuthCodeURL(state)),
			map[string]string{"username": "alice", "password": codeflowPassword}))
	}

	b := e.browser()
	setup := signIn(b, "s")
	secret := totpSecretShown(t, setup)
	code := totpTestCode(t, secret, e.clock.now())
	totpMustRefuse(t, b.submit(setup, map[string]string{"code": totpTestWrongCode(code)}), http.StatusBadRequest, "code")
	codes := b.submit(setup, map[string]string{"code": code})
	shown := regexp.MustCompile(`<li><code>([a-z2-7-]{19})</code></li>`).FindAllSubmatch(codes.body, -1)
	if codes.status != http.StatusOK || len(shown) != identity.RecoveryCodeCount {
		t.Fatalf("confirmation: status %d, %d recovery codes shown, want 200 and %d; body %s",
			codes.status, len(shown), identity.RecoveryCodeCount, codes.body)
	}
	next := regexp.MustCompile(`<nav class="links"><a href="([^"]*/realms/acme/signin/[^"]+)">`).FindSubmatch(codes.body)
	if next == nil {
		t.Fatalf("the recovery codes page leads nowhere: %s", codes.body)
	}
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(b.follow(e.url, html.UnescapeString(string(next[1]))))), "pwd", "otp")
	if ev := e.loginEvents("UPDATE_TOTP"); len(ev) != 1 || ev[0].UserID != e.aliceID {
		t.Fatalf("UPDATE_TOTP events %+v, want one of alice", ev)
	}

	// Set up now, the app is asked for, not set up again.
	e.clock.advance(totpTestStep)
	page := signIn(e.browser(), "s2")
	if !strings.Contains(string(page.body), `name="code"`) || strings.Contains(string(page.body), `<dd><code>`) {
		t.Fatalf("the next sign-in: status %d, want the TOTP code page; body %s", page.status, page.body)
	}
}
