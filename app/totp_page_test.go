package app

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// totpPasswordStep runs browser b from an authorization URL through the
// password form and returns the second-step page it is sent to.
func (e *codeflowEnv) totpPasswordStep(b *codeflowBrowser, authURL, username string) *codeflowPage {
	e.t.Helper()
	p := b.follow(e.url, authURL)
	p = b.submit(p, map[string]string{"username": username, "password": codeflowPassword})
	if p.status != http.StatusSeeOther {
		e.t.Fatalf("password step: status %d, want 303 to the TOTP page; body %s", p.status, p.body)
	}
	if loc := p.location(e.t); loc.Path != "/realms/acme/totp" || loc.Query().Get("authRequestID") == "" {
		e.t.Fatalf("after the password: redirected to %s, want the TOTP page", loc)
	}
	if cookies := p.header.Values("Set-Cookie"); len(cookies) != 0 {
		e.t.Fatalf("cookies set before the second factor: %v", cookies)
	}
	page := b.follow(e.url, p.location(e.t).String())
	if page.status != http.StatusOK {
		e.t.Fatalf("TOTP page: status %d; body %s", page.status, page.body)
	}
	return page
}

// totpExchange redeems the code of a redirect back and returns the ID
// token's claims.
func (e *codeflowEnv) totpExchange(cfg *oauth2.Config, back url.Values) map[string]any {
	e.t.Helper()
	tok, err := cfg.Exchange(e.t.Context(), back.Get("code"))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	_, claims := e.verifyIDToken(tok, cfg.ClientID, "")
	return claims
}

func totpMustAMR(t *testing.T, claims map[string]any, want ...string) {
	t.Helper()
	amr, _ := claims["amr"].([]any)
	if len(amr) != len(want) {
		t.Fatalf("amr %v, want %v", claims["amr"], want)
	}
	for i := range want {
		if amr[i] != want[i] {
			t.Fatalf("amr %v, want %v", claims["amr"], want)
		}
	}
}

// totpMustRefuse checks a re-rendered TOTP form: the status and the
// error tied to its field.
func totpMustRefuse(t *testing.T, p *codeflowPage, status int, field string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d; body %s", p.status, status, p.body)
	}
	body := string(p.body)
	if !strings.Contains(body, `id="`+field+`-error"`) || !strings.Contains(body, `aria-invalid="true"`) {
		t.Fatalf("no error tied to field %s in %s", field, body)
	}
	if f := p.form(t); f.fields.Get("csrf") == "" || !f.fields.Has(field) {
		t.Fatalf("re-rendered form %v", f.fields)
	}
}

func TestTOTPLogin(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.eventsOn()
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep) // the enrolment used this step's code

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s1"), "alice")
	form := page.form(t)
	arID := form.fields.Get("authRequestID")
	if !form.fields.Has("code") || form.fields.Get("csrf") == "" || arID == "" {
		t.Fatalf("TOTP form %v", form.fields)
	}
	checkPageCSP(t, page.header, true)
	// The password alone authenticated nothing.
	ar, err := e.store.GetAuthRequest(t.Context(), e.realmID(), arID)
	if err != nil || ar.UserID != "" || ar.Done {
		t.Fatalf("auth request after the password: %+v, %v; want it still pending", ar, err)
	}
	if sessions := e.userSessions(); len(sessions) != 0 {
		t.Fatalf("sessions after the password alone: %+v", sessions)
	}

	code := totpTestCode(t, totpSecret, e.clock.now())
	totpMustRefuse(t, b.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	if errs := e.loginEvents("LOGIN_ERROR"); len(errs) != 1 || errs[0].Error != "invalid_totp" || errs[0].UserID != e.aliceID {
		t.Fatalf("LOGIN_ERROR events %+v, want one invalid_totp of alice", errs)
	}
	// A forged post lacks the form's token.
	if p := b.submit(page, map[string]string{"code": code, "csrf": "forged"}); p.status != http.StatusForbidden {
		t.Fatalf("forged post: status %d", p.status)
	}

	claims := e.totpExchange(cfg, e.redirectedBack(b.submit(page, map[string]string{"code": code})))
	totpMustAMR(t, claims, "pwd", "otp")
	if claims["sub"] != e.aliceID {
		t.Fatalf("ID token sub %v", claims["sub"])
	}
	if logins := e.loginEvents("LOGIN"); len(logins) != 1 || logins[0].UserID != e.aliceID || logins[0].SessionID != claims["sid"] {
		t.Fatalf("LOGIN events %+v", logins)
	}
	// The step is done: its page is gone.
	if p := b.get(totpURL(e.issuer("acme"), arID, false)); p.status != http.StatusBadRequest {
		t.Fatalf("TOTP page of a finished sign-in: status %d", p.status)
	}

	// The same code in a second sign-in, within its step, is a replay.
	b2 := e.browser()
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s2"), "alice")
	totpMustRefuse(t, b2.submit(page, map[string]string{"code": code}), http.StatusUnauthorized, "code")
	// The next step's code works, a step early (skew), and then the
	// current step's, now behind it, does not.
	next := totpTestCode(t, totpSecret, e.clock.now().Add(totpTestStep))
	e.redirectedBack(b2.submit(page, map[string]string{"code": next}))
	b3 := e.browser()
	page = e.totpPasswordStep(b3, cfg.AuthCodeURL("s3"), "alice")
	if code != next {
		totpMustRefuse(t, b3.submit(page, map[string]string{"code": code}), http.StatusUnauthorized, "code")
	}
	totpMustRefuse(t, b3.submit(page, map[string]string{"code": next}), http.StatusUnauthorized, "code")
}

func TestTOTPLoginSkew(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(3 * totpTestStep) // steps before now-2 are used up or long gone
	at := func(k int) string {
		return totpTestCode(t, totpSecret, e.clock.now().Add(totpTestStep*time.Duration(k)))
	}

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	for _, k := range []int{-2, 2} {
		if at(k) == at(-1) || at(k) == at(0) || at(k) == at(1) {
			continue // a collision of six digits would make the case meaningless
		}
		totpMustRefuse(t, b.submit(page, map[string]string{"code": at(k)}), http.StatusUnauthorized, "code")
	}
	// One step either side is accepted; each in its own sign-in, in
	// order, as a step behind the last used one is refused.
	e.redirectedBack(b.submit(page, map[string]string{"code": at(-1)}))
	for _, k := range []int{0, 1} {
		b := e.browser()
		page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
		e.redirectedBack(b.submit(page, map[string]string{"code": at(k)}))
	}
}

func TestTOTPRecoveryCode(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.totpAlign()
	_, recovery := e.totpEnrol(e.aliceID)

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	link := regexp.MustCompile(`href="([^"]*use=recovery[^"]*)"`).FindStringSubmatch(string(page.body))
	if link == nil {
		t.Fatalf("no link to use a recovery code in %s", page.body)
	}
	page = b.get(strings.ReplaceAll(link[1], "&amp;", "&"))
	if f := page.form(t); page.status != http.StatusOK || !f.fields.Has("recoveryCode") || f.fields.Get("method") != "recovery" {
		t.Fatalf("recovery code page: status %d form %v", page.status, f.fields)
	}
	totpMustRefuse(t, b.submit(page, map[string]string{"recoveryCode": "aaaa-bbbb-cccc-dddd"}), http.StatusUnauthorized, "recoveryCode")
	// Typed in capitals with spaces, it is the same code.
	typed := strings.ToUpper(strings.ReplaceAll(recovery[3], "-", " "))
	claims := e.totpExchange(cfg, e.redirectedBack(b.submit(page, map[string]string{"recoveryCode": typed})))
	totpMustAMR(t, claims, "pwd", "otp")

	// Once only.
	b2 := e.browser()
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s"), "alice")
	arID := page.form(t).fields.Get("authRequestID")
	page = b2.get(totpURL(e.issuer("acme"), arID, true))
	totpMustRefuse(t, b2.submit(page, map[string]string{"recoveryCode": recovery[3]}), http.StatusUnauthorized, "recoveryCode")
	var status mfaStatusRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/mfa/status", nil).decode(t, &status)
	if status.RecoveryCodesRemaining != identity.RecoveryCodeCount-1 {
		t.Fatalf("recovery codes left %d, want %d", status.RecoveryCodesRemaining, identity.RecoveryCodeCount-1)
	}
}

func TestTOTPLoginThrottled(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.eventsOn()
	// The flood guard alone: the realm's lockout, which would trip at the
	// same count, has a test of its own.
	e.changeRealm(func(r *store.Realm) { r.BruteForceEnabled = false })
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, totpSecret, e.clock.now())

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	for range identity.LoginLimitPerUser {
		totpMustRefuse(t, b.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	}
	// Now even the right code waits; a new password does not reset it.
	p := b.submit(page, map[string]string{"code": code})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures: status %d Retry-After %q", identity.LoginLimitPerUser, p.status, p.header.Get("Retry-After"))
	}
	b2 := e.browser()
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s"), "alice")
	if p := b2.submit(page, map[string]string{"code": code}); p.status != http.StatusTooManyRequests {
		t.Fatalf("after a new password: status %d, want 429", p.status)
	}
	errs := e.loginEvents("LOGIN_ERROR")
	if len(errs) != identity.LoginLimitPerUser+2 || errs[0].Error != "user_temporarily_disabled" {
		t.Fatalf("LOGIN_ERROR events %+v", errs)
	}
	// The window passes; the code of the moment works.
	e.clock.advance(16 * time.Minute)
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s"), "alice")
	e.redirectedBack(b2.submit(page, map[string]string{"code": totpTestCode(t, totpSecret, e.clock.now())}))
}

func TestTOTPStepBoundToBrowser(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)

	page := e.totpPasswordStep(e.browser(), cfg.AuthCodeURL("s"), "alice")
	arID := page.form(t).fields.Get("authRequestID")
	// Another browser, with a CSRF cookie of its own, knows the request's
	// ID (it is in URLs) and the code: it still cannot finish the sign-in.
	other := e.browser()
	other.follow(e.url, cfg.AuthCodeURL("mine"))
	if p := other.get(totpURL(e.issuer("acme"), arID, false)); p.status != http.StatusForbidden {
		t.Fatalf("TOTP page in another browser: status %d, want 403", p.status)
	}
	form := url.Values{"authRequestID": {arID}, "csrf": {page.form(t).fields.Get("csrf")},
		"code": {totpTestCode(t, totpSecret, e.clock.now())}}
	if p := other.post(e.issuer("acme")+pathTOTP, form); p.status != http.StatusForbidden {
		t.Fatalf("TOTP post from another browser: status %d, want 403", p.status)
	}
	// A request without a second step has no TOTP page.
	if p := other.get(totpURL(e.issuer("acme"), "unknown", false)); p.status != http.StatusBadRequest {
		t.Fatalf("TOTP page of an unknown request: status %d", p.status)
	}
}

func TestTOTPUserWithoutFactor(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	// Without TOTP and without mfaRequired, the password signs in alone.
	claims := e.totpExchange(cfg, e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice"))
	totpMustAMR(t, claims, "pwd")
	// A pending, unconfirmed enrolment is no factor yet.
	realm, _ := e.store.GetRealm(t.Context(), "acme")
	user, _ := e.store.GetUser(t.Context(), realm.ID, e.aliceID)
	if _, err := e.app.id.BeginTOTP(t.Context(), realm, user); err != nil {
		t.Fatal(err)
	}
	totpMustAMR(t, e.totpExchange(cfg, e.signIn(e.browser(), cfg.AuthCodeURL("s"), "alice")), "pwd")
}

func TestTOTPRequiredEnrolment(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.eventsOn()
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true, "displayName": "Acme Corp"}), http.StatusOK)
	e.totpAlign()

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s"), "alice")
	body := string(page.body)
	if !strings.Contains(body, `class="qr" src="data:image/png;base64,`) {
		t.Fatalf("setup page without a QR code image: %s", body)
	}
	m := regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("setup page without the key written out: %s", body)
	}
	totpSecret := strings.ReplaceAll(m[1], " ", "")
	if f := page.form(t); !f.fields.Has("code") {
		t.Fatalf("setup form %v", f.fields)
	}
	// Reloaded, the page keeps the key already scanned.
	if again := b.get(page.url.String()); !strings.Contains(string(again.body), m[1]) {
		t.Fatal("a reload of the setup page changed the key")
	}
	code := totpTestCode(t, totpSecret, e.clock.now())
	wrong := b.submit(page, map[string]string{"code": totpTestWrongCode(code)})
	totpMustRefuse(t, wrong, http.StatusBadRequest, "code")
	if !strings.Contains(string(wrong.body), m[1]) {
		t.Fatal("a wrong code changed the key")
	}

	codes := b.submit(page, map[string]string{"code": code})
	if codes.status != http.StatusOK {
		t.Fatalf("confirmation: status %d; body %s", codes.status, codes.body)
	}
	shown := regexp.MustCompile(`<li><code>([a-z2-7-]{19})</code></li>`).FindAllStringSubmatch(string(codes.body), -1)
	if len(shown) != identity.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown, want %d: %s", len(shown), identity.RecoveryCodeCount, codes.body)
	}
	// Shown once: a reload says they were shown, without them.
	if reload := b.get(page.url.String()); strings.Contains(string(reload.body), shown[0][1]) || reload.status != http.StatusOK {
		t.Fatalf("reload of the recovery codes page: status %d body %s", reload.status, reload.body)
	}
	claims := e.totpExchange(cfg, e.redirectedBack(b.submit(codes, nil)))
	totpMustAMR(t, claims, "pwd", "otp")
	if ev := e.loginEvents("UPDATE_TOTP"); len(ev) != 1 || ev[0].UserID != e.aliceID {
		t.Fatalf("UPDATE_TOTP events %+v", ev)
	}

	// Next time the realm asks for a code, and a recovery code works.
	b2 := e.browser()
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s"), "alice")
	if !page.form(t).fields.Has("code") || strings.Contains(string(page.body), "data:image/png") {
		t.Fatalf("second sign-in: want the code form, not the setup page: %s", page.body)
	}
	page = b2.get(totpURL(e.issuer("acme"), page.form(t).fields.Get("authRequestID"), true))
	e.redirectedBack(b2.submit(page, map[string]string{"recoveryCode": shown[0][1]}))
}

// realmID is acme's internal ID.
func (e *codeflowEnv) realmID() string {
	e.t.Helper()
	realm, err := e.store.GetRealm(e.t.Context(), "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	return realm.ID
}
