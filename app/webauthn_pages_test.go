package app

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/signin"
)

// The browser's side of WebAuthn without a browser: the pages' forms,
// posted as webauthn.js posts them, with the virtual authenticator's
// answers in them.

// webauthnSubmit posts f (from page p) with the ceremony's ID and answer.
func webauthnSubmit(b *codeflowBrowser, p *codeflowPage, f *codeflowForm, ceremonyID string, credential []byte, set map[string]string) *codeflowPage {
	b.t.Helper()
	values := url.Values{}
	for k, v := range f.fields {
		values[k] = v
	}
	values.Set("ceremonyId", ceremonyID)
	values.Set("credential", string(credential))
	for k, v := range set {
		values.Set(k, v)
	}
	action, err := p.url.Parse(f.action)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.post(action.String(), values)
}

// pageCeremony asks an options endpoint as the page's script does.
func pageCeremony(t *testing.T, b *codeflowBrowser, u string, body map[string]any, headers ...string) (string, []byte) {
	t.Helper()
	p := b.postJSON(u, body, headers...)
	if p.status != http.StatusOK {
		t.Fatalf("options: status %d; body %s", p.status, p.body)
	}
	id := regexp.MustCompile(`"ceremonyId":"([^"]+)"`).FindSubmatch(p.body)
	if id == nil {
		t.Fatalf("options without a ceremony: %s", p.body)
	}
	return string(id[1]), p.body
}

// pageLink is the href of p's link whose URL matches re.
func pageLink(t *testing.T, p *codeflowPage, re string) string {
	t.Helper()
	m := regexp.MustCompile(`href="(` + re + `)"`).FindSubmatch(p.body)
	if m == nil {
		t.Fatalf("no link matching %s on the page: %s", re, p.body)
	}
	return html.UnescapeString(string(m[1]))
}

func TestWebAuthnPasskeySignIn(t *testing.T) {
	e := newWebAuthnEnv(t)
	token := e.token("alice", codeflowPassword).AccessToken
	device := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	synced := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true})
	e.registerKey(token, device, "Security key")
	e.registerKey(token, synced, "Phone")
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	options := e.url + webauthnPath("authenticate/options")

	for _, tc := range []struct {
		name string
		key  *webauthnKey
		amr  []string
	}{
		{"a device-bound key", device, []string{"hwk", "mfa"}},
		{"a synced passkey", synced, []string{"swk", "mfa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			p := b.follow(e.url, cfg.AuthCodeURL("s"))
			mustPage(t, p, http.StatusOK, `data-webauthn="passkey"`, `data-options="`+options+`"`, `<script src="/assets/webauthn.`)
			login := p.form(t) // the passkey sign-in adds no form: the script makes its own
			id, body := pageCeremony(t, b, options, map[string]any{})
			back := e.redirectedBack(webauthnSubmit(b, p, &codeflowForm{action: e.url + webauthnPath("authenticate/verify"),
				method: http.MethodPost, fields: url.Values{"authRequestID": login.fields["authRequestID"],
					"csrf": login.fields["csrf"]}}, id, e.assertWith(tc.key, body, ""), nil))
			claims := e.totpExchange(cfg, back)
			if claims["sub"] != e.aliceID {
				t.Fatalf("signed in as %v, want alice", claims["sub"])
			}
			totpMustAMR(t, claims, tc.amr...)
		})
	}

	// Refusals come back as the login page with the message; a forged
	// post without the login form's token gets nothing.
	b := e.browser()
	p := b.follow(e.url, cfg.AuthCodeURL("s"))
	login := p.form(t)
	verify := &codeflowForm{action: e.url + webauthnPath("authenticate/verify"), method: http.MethodPost,
		fields: url.Values{"authRequestID": login.fields["authRequestID"], "csrf": login.fields["csrf"]}}
	id, body := pageCeremony(t, b, options, map[string]any{})
	cred := e.assertWith(device, body, "https://evil.example.test")
	refused := webauthnSubmit(b, p, verify, id, cred, nil)
	mustPage(t, refused, http.StatusUnauthorized, "The security key or passkey was not accepted.")
	refused.form(t) // the password form is back
	mustPage(t, webauthnSubmit(b, p, verify, id, e.assertWith(device, body, ""), nil), http.StatusBadRequest,
		"That took too long or was already used.")
	id, body = pageCeremony(t, b, options, map[string]any{})
	mustPage(t, webauthnSubmit(b, p, verify, id, e.assertWith(device, body, ""), map[string]string{"csrf": "forged"}),
		http.StatusForbidden)
	// The forged post never reached the ceremony: the genuine one works.
	e.redirectedBack(webauthnSubmit(b, p, verify, id, e.assertWith(device, body, ""), nil))
}

func TestWebAuthnSecondFactor(t *testing.T) {
	e := newWebAuthnEnv(t)
	// A security key without a PIN: as the second factor, presence is enough.
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bobKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("bob", codeflowPassword).AccessToken, bobKey, "bob's key")
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	options := e.url + webauthnPath("authenticate/options")

	b := e.browser()
	p := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice") // via the TOTP path, on to the key's page
	if p.url.Path != "/realms/acme/webauthn" {
		t.Fatalf("second step at %s, want the security key's page", p.url)
	}
	mustPage(t, p, http.StatusOK, "Use your security key")
	f := webauthnForm(t, p, "authenticate")
	arID := f.fields.Get("authRequestID")

	// The TOTP form signs nobody in at a security key's step, even with
	// its own valid CSRF token.
	totpCSRF := ""
	for _, c := range b.client.Jar.Cookies(p.url) {
		if c.Name == signin.CSRFCookie {
			totpCSRF = e.app.pages.CSRFMAC(c.Value, totpForm, arID)
		}
	}
	bypass := b.post(e.url+"/realms/acme/totp", url.Values{"authRequestID": {arID}, "csrf": {totpCSRF}, "code": {"123456"}})
	if bypass.status != http.StatusSeeOther || bypass.location(t).Path != "/realms/acme/webauthn" {
		t.Fatalf("TOTP post at a security key's step: status %d location %q", bypass.status, bypass.header.Get("Location"))
	}
	// Another browser cannot ask for the step's options.
	if other := e.browser().postJSON(options, map[string]any{"authRequestID": arID}); other.status != http.StatusForbidden {
		t.Fatalf("another browser's options: status %d body %s", other.status, other.body)
	}
	id, body := pageCeremony(t, b, options, map[string]any{"authRequestID": arID})
	if !strings.Contains(string(body), `"userVerification":"discouraged"`) || !strings.Contains(string(body), `"allowCredentials":[{`) {
		t.Fatalf("second-factor options %s", body)
	}
	// Bob's key is no second factor of alice's.
	refused := webauthnSubmit(b, p, f, id, e.assertWith(bobKey, body, ""), nil)
	mustPage(t, refused, http.StatusUnauthorized, "The security key or passkey was not accepted.")
	webauthnForm(t, refused, "authenticate")

	id, body = pageCeremony(t, b, options, map[string]any{"authRequestID": arID})
	back := e.redirectedBack(webauthnSubmit(b, p, f, id, e.assertWith(key, body, ""), nil))
	totpMustAMR(t, e.totpExchange(cfg, back), "pwd", "hwk")

	// With TOTP too, the code is asked first and the key is the other way.
	e.totpEnrol(e.aliceID)
	b = e.browser()
	p = e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	if p.url.Path != "/realms/acme/totp" {
		t.Fatalf("second step at %s, want the TOTP page", p.url)
	}
	p = b.get(pageLink(t, p, `[^"]*/realms/acme/webauthn\?authRequestID=[^"]*`))
	mustPage(t, p, http.StatusOK, "Use a code from your authenticator app instead")
	f = webauthnForm(t, p, "authenticate")
	id, body = pageCeremony(t, b, options, map[string]any{"authRequestID": f.fields.Get("authRequestID")})
	back = e.redirectedBack(webauthnSubmit(b, p, f, id, e.assertWith(key, body, ""), nil))
	totpMustAMR(t, e.totpExchange(cfg, back), "pwd", "hwk")
}

func TestWebAuthnEnrolmentStep(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"mfaRequired": true})
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})

	b := e.browser()
	p := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice") // the TOTP enrolment, offering a key instead
	p = b.get(pageLink(t, p, `[^"]*/realms/acme/webauthn\?authRequestID=[^"]*`))
	mustPage(t, p, http.StatusOK, "Register a security key", "Set up an authenticator app instead")
	f := webauthnForm(t, p, "register")
	registerOptions := e.url + webauthnPath("register/options")
	body := map[string]any{"authRequestID": f.fields.Get("authRequestID")}
	// Refused in the API's shape, with the code of its status.
	if r := b.postJSON(registerOptions, body); r.status != http.StatusForbidden || !strings.HasPrefix(string(r.body), `{"error":"forbidden",`) {
		t.Fatalf("options without the CSRF token: status %d body %s", r.status, r.body)
	}
	if r := e.browser().postJSON(registerOptions, body, "X-CSRF-Token: "+f.fields.Get("csrf")); r.status != http.StatusForbidden ||
		!strings.HasPrefix(string(r.body), `{"error":"forbidden",`) {
		t.Fatalf("options from another browser: status %d body %s", r.status, r.body)
	}
	id, opts := pageCeremony(t, b, registerOptions, body, "X-CSRF-Token: "+f.fields.Get("csrf"))
	// A name too long brings the form back with the error on the field.
	again := webauthnSubmit(b, p, f, id, e.attest(key, opts, ""), map[string]string{"name": strings.Repeat("x", 65)})
	mustPage(t, again, http.StatusBadRequest, `id="name-error"`, `aria-invalid="true"`)
	id, opts = pageCeremony(t, b, registerOptions, body, "X-CSRF-Token: "+f.fields.Get("csrf"))
	back := e.redirectedBack(webauthnSubmit(b, p, f, id, e.attest(key, opts, ""), map[string]string{"name": "My key"}))
	totpMustAMR(t, e.totpExchange(cfg, back), "pwd")

	var status struct {
		Factors  []string
		WebAuthn []struct{ Name string }
	}
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/mfa/status", nil).decode(t, &status)
	if len(status.WebAuthn) != 1 || status.WebAuthn[0].Name != "My key" {
		t.Fatalf("MFA status after the enrolment %+v", status)
	}
	// From now on the key is the second step.
	b = e.browser()
	p = e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	if p.url.Path != "/realms/acme/webauthn" {
		t.Fatalf("second step at %s, want the security key's page", p.url)
	}
}

func TestWebAuthnAccountPages(t *testing.T) {
	e := newWebAuthnEnv(t)
	b := e.browser()
	home := e.signIn(b)
	page := e.url + "/realms/acme/account/webauthn/credentials"
	mustPage(t, home, http.StatusOK, `href="`+page+`"`)
	p := b.get(page)
	mustPage(t, p, http.StatusOK, "You have no passkeys or security keys yet.")
	f := webauthnForm(t, p, "register")
	registerOptions := e.url + webauthnPath("register/options")
	if r := b.postJSON(registerOptions, map[string]any{}); r.status != http.StatusForbidden {
		t.Fatalf("options without the CSRF token: status %d body %s", r.status, r.body)
	}
	csrf := "X-CSRF-Token: " + f.fields.Get("csrf")
	if r := e.browser().postJSON(registerOptions, map[string]any{}, csrf); r.status != http.StatusUnauthorized {
		t.Fatalf("options from a signed-out browser: status %d body %s", r.status, r.body)
	}
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	id, opts := pageCeremony(t, b, registerOptions, map[string]any{}, csrf)
	p = webauthnSubmit(b, p, f, id, e.attest(key, opts, ""), map[string]string{"name": "Laptop"})
	if p.status != http.StatusSeeOther || p.location(t).RawQuery != "done=webauthn-added" {
		t.Fatalf("registration: status %d location %q body %s", p.status, p.header.Get("Location"), p.body)
	}
	p = b.follow(e.url, p.location(t).String())
	mustPage(t, p, http.StatusOK, "The key was added.", "Laptop", "Never")
	if ev := hasEvent(e.loginEvents(e.aliceID), "UPDATE_CREDENTIAL"); ev == nil || ev.ClientID != account.ConsoleClientID {
		t.Fatalf("UPDATE_CREDENTIAL event %+v", ev)
	}
	// The same key again: the page says so.
	id, opts = pageCeremony(t, b, registerOptions, map[string]any{}, csrf)
	parsed, _ := virtualwebauthn.ParseAttestationOptions(string(opts))
	parsed.ExcludeCredentials = nil
	again := virtualwebauthn.CreateAttestationResponse(e.webauthnRP(""), key.auth, key.cred, *parsed)
	mustPage(t, webauthnSubmit(b, p, webauthnForm(t, p, "register"), id, []byte(again), nil), http.StatusConflict,
		"This security key or passkey is registered already.")

	// Removal works as a plain form; a forged one does nothing.
	forged := accountSubmit(b, p, "/delete", map[string]string{"csrf": "forged"})
	mustPage(t, forged, http.StatusForbidden)
	p = accountSubmit(b, p, "/delete", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("remove: status %d body %s", p.status, p.body)
	}
	p = b.follow(e.url, p.location(t).String())
	mustPage(t, p, http.StatusOK, "The key was removed.", "You have no passkeys or security keys yet.")
	if hasEvent(e.loginEvents(e.aliceID), "REMOVE_CREDENTIAL") == nil {
		t.Fatal("no REMOVE_CREDENTIAL event")
	}
}

// A second step's or a step-up's ceremony asks for the key's presence
// only: its assertion, without user verification, signs nobody in when
// posted to the passkey sign-in of another request.
func TestWebAuthnSecondFactorCeremonyIsNoPasskeySignIn(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{UserNotVerified: true})
	token := e.token("alice", codeflowPassword).AccessToken
	e.registerKey(token, key, "key")
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	options := e.url + webauthnPath("authenticate/options")

	// The attacker's own sign-in, at the second step: its options.
	b := e.browser()
	p := e.totpPasswordStep(b, cfg.AuthCodeURL("s1"), "alice")
	secondStep, secondBody := pageCeremony(t, b, options,
		map[string]any{"authRequestID": webauthnForm(t, p, "authenticate").fields.Get("authRequestID")})
	stepUp, stepUpBody := challengeOptions(t, e.stepUpChallenge(token))

	for _, tc := range []struct {
		name, id string
		body     []byte
	}{
		{"second step", secondStep, secondBody},
		{"step-up", stepUp, stepUpBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			p := b.follow(e.url, cfg.AuthCodeURL("s2"))
			login := p.form(t)
			verify := &codeflowForm{action: e.url + webauthnPath("authenticate/verify"), method: http.MethodPost,
				fields: url.Values{"authRequestID": login.fields["authRequestID"], "csrf": login.fields["csrf"]}}
			got := webauthnSubmit(b, p, verify, tc.id, e.assertWith(key, tc.body, ""), nil)
			if got.status == http.StatusSeeOther || loginSSOCookie(got) != "" {
				t.Fatalf("signed in with a %s ceremony's assertion without user verification: status %d", tc.name, got.status)
			}
			mustPage(t, got, http.StatusBadRequest, "That took too long or was already used.")
		})
	}
}

// A sign-in held for a password change reports, once changed, how it got
// there: the security key after the password, or the passkey alone.
func TestWebAuthnPasswordChangeKeepsAMR(t *testing.T) {
	e := newWebAuthnEnv(t)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("alice", codeflowPassword).AccessToken, key, "key")
	changePasswordRequire(e.codeflowEnv)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	options := e.url + webauthnPath("authenticate/options")
	changeTo := func(b *codeflowBrowser, p *codeflowPage, password string) url.Values {
		t.Helper()
		if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme"+pathChangePassword {
			t.Fatalf("after the key: status %d Location %q, want the change-password page", p.status, p.header.Get("Location"))
		}
		form := b.follow(e.url, p.location(t).String())
		return e.redirectedBack(b.submit(form, map[string]string{"password": password, "confirm": password}))
	}

	t.Run("security key after the password", func(t *testing.T) {
		b := e.browser()
		p := e.totpPasswordStep(b, cfg.AuthCodeURL("s1"), "alice")
		f := webauthnForm(t, p, "authenticate")
		id, body := pageCeremony(t, b, options, map[string]any{"authRequestID": f.fields.Get("authRequestID")})
		back := changeTo(b, webauthnSubmit(b, p, f, id, e.assertWith(key, body, ""), nil), changedPassword)
		totpMustAMR(t, e.totpExchange(cfg, back), "pwd", "hwk")
	})
	changePasswordRequire(e.codeflowEnv)
	t.Run("passkey", func(t *testing.T) {
		b := e.browser()
		p := b.follow(e.url, cfg.AuthCodeURL("s2"))
		login := p.form(t)
		id, body := pageCeremony(t, b, options, map[string]any{})
		verify := &codeflowForm{action: e.url + webauthnPath("authenticate/verify"), method: http.MethodPost,
			fields: url.Values{"authRequestID": login.fields["authRequestID"], "csrf": login.fields["csrf"]}}
		back := changeTo(b, webauthnSubmit(b, p, verify, id, e.assertWith(key, body, ""), nil), changedPassword+" again")
		totpMustAMR(t, e.totpExchange(cfg, back), "hwk", "mfa")
	})
}
