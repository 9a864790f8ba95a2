package app

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// The realm's brute-force lockout on every path that checks a password or
// a one-time code, beyond the password grant and the device page (tested
// in brute_force_test.go): a locked user is refused there as a wrong
// credential is, failures count, and a finished sign-in forgets them.

// changeRealm changes acme's settings in the store, for those the admin
// API sets only at creation.
func (e *codeflowEnv) changeRealm(change func(r *store.Realm)) {
	e.t.Helper()
	realm, err := e.store.GetRealm(e.t.Context(), "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	change(realm)
	if err := e.store.UpdateRealm(e.t.Context(), realm); err != nil {
		e.t.Fatal(err)
	}
}

// lockAfterThree makes acme lock a user out for 20 minutes after three
// failures.
func (e *codeflowEnv) lockAfterThree() {
	e.changeRealm(func(r *store.Realm) {
		r.BruteForceEnabled, r.MaxLoginFailures, r.LockoutDuration = true, 3, 1200
	})
}

// aliceFailures is alice's failure count on record, 0 for none.
func (e *codeflowEnv) aliceFailures() int {
	e.t.Helper()
	f, err := e.store.GetLoginFailure(e.t.Context(), e.realmID(), e.aliceID)
	if errors.Is(err, store.ErrNotFound) {
		return 0
	} else if err != nil {
		e.t.Fatal(err)
	}
	return f.Failures
}

// lockedAttempts counts the LOGIN_ERROR events of alice's attempts while
// locked out: user_temporarily_disabled without the lockout's own details.
func (e *codeflowEnv) lockedAttempts() int {
	e.t.Helper()
	n := 0
	for _, ev := range e.loginEvents("LOGIN_ERROR") {
		if ev.Error == "user_temporarily_disabled" && ev.UserID == e.aliceID && ev.Details["lockout"] == "" {
			n++
		}
	}
	return n
}

func TestBruteForceLoginPage(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.eventsOn()
	e.lockAfterThree()
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	wrong := func(what, password string) {
		t.Helper()
		page = b.submit(page, map[string]string{"username": "alice", "password": password})
		mustPage(t, page, http.StatusUnauthorized, "Invalid username or password.")
		if loginSSOCookie(page) != "" {
			t.Fatalf("%s: signed in", what)
		}
	}
	for range 3 {
		wrong("wrong password", "wrong password")
	}
	if n := e.aliceFailures(); n != 3 {
		t.Fatalf("%d failures on record, want 3", n)
	}
	// Locked: the right password gets the wrong one's answer.
	wrong("right password, locked", codeflowPassword)
	if n := e.lockedAttempts(); n != 1 {
		t.Fatalf("%d LOGIN_ERROR user_temporarily_disabled of alice's locked attempt, want 1", n)
	}
	if n := e.aliceFailures(); n != 3 {
		t.Fatalf("%d failures on record, want 3: attempts while locked are not counted", n)
	}
	// The lockout (and the flood guard's window) past, she signs in, and
	// her failures are forgotten.
	e.clock.advance(20 * time.Minute)
	e.redirectedBack(b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}))
	if n := e.aliceFailures(); n != 0 {
		t.Fatalf("%d failures kept after the sign-in", n)
	}
}

// Wrong TOTP codes count as failures; a locked user's right code is
// refused as a wrong one; the right password does not forget failures
// while a code is still owed.
func TestBruteForceTOTPStep(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.eventsOn()
	e.lockAfterThree()
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, totpSecret, e.clock.now())

	b := e.browser()
	page := e.totpPasswordStep(b, cfg.AuthCodeURL("s1"), "alice")
	for range 2 {
		totpMustRefuse(t, b.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	}
	// A new sign-in's right password leaves them on record.
	b2 := e.browser()
	page = e.totpPasswordStep(b2, cfg.AuthCodeURL("s2"), "alice")
	if n := e.aliceFailures(); n != 2 {
		t.Fatalf("%d failures after the right password, want the 2 wrong codes kept", n)
	}
	totpMustRefuse(t, b2.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusUnauthorized, "code")
	// Locked: the right code reads as a wrong one.
	locked := b2.submit(page, map[string]string{"code": code})
	totpMustRefuse(t, locked, http.StatusUnauthorized, "code")
	if !strings.Contains(string(locked.body), enMsg("totp.error.code")) {
		t.Fatalf("locked answer is not a wrong code's: %s", locked.body)
	}
	if n := e.lockedAttempts(); n != 1 {
		t.Fatalf("%d LOGIN_ERROR user_temporarily_disabled of the locked attempt, want 1", n)
	}
	if sessions := e.userSessions(); len(sessions) != 0 {
		t.Fatalf("sessions of a locked user: %+v", sessions)
	}

	// After the lockout the code of the moment signs in and the failures
	// are forgotten.
	e.clock.advance(20 * time.Minute)
	b3 := e.browser()
	page = e.totpPasswordStep(b3, cfg.AuthCodeURL("s3"), "alice")
	claims := e.totpExchange(cfg, e.redirectedBack(b3.submit(page,
		map[string]string{"code": totpTestCode(t, totpSecret, e.clock.now())})))
	totpMustAMR(t, claims, "pwd", "otp")
	if n := e.aliceFailures(); n != 0 {
		t.Fatalf("%d failures kept after the sign-in", n)
	}
}

// The account's checks of the current password (change, deletion) count
// against the lockout and refuse a locked user's right password as a
// wrong one, from an API caller and from a browser.
func TestBruteForceAccountPassword(t *testing.T) {
	e := newAccountEnv(t)
	e.lockAfterThree()
	// The flood guard forgets at once (a zero window): what is seen is the
	// realm's lockout.
	noSignInThrottle(t, e.app)
	const newPassword = "a brand new passphrase"
	tok := e.token("alice", codeflowPassword).AccessToken
	change := func(current, next string) *testResponse {
		return e.api(http.MethodPost, "/password", tok, map[string]any{"currentPassword": current, "newPassword": next,
			"confirmation": next})
	}
	// Below the limit, a right password forgets the failures.
	for range 2 {
		mustError(t, change("wrong password", newPassword), http.StatusBadRequest, "invalid_field", "currentPassword")
	}
	if n := e.aliceFailures(); n != 2 {
		t.Fatalf("%d failures on record, want 2", n)
	}
	mustStatus(t, change(codeflowPassword, newPassword), http.StatusNoContent)
	if n := e.aliceFailures(); n != 0 {
		t.Fatalf("%d failures kept after a right current password", n)
	}

	b := e.browser()
	page := e.signInAt(b, accountTestHome, "alice", newPassword)
	for range 3 {
		mustError(t, change("wrong password", codeflowPassword), http.StatusBadRequest, "invalid_field", "currentPassword")
	}
	// Locked: the right password is wrong, on every path that asks for it.
	wrong := change("wrong password", codeflowPassword)
	locked := change(newPassword, codeflowPassword)
	mustError(t, locked, http.StatusBadRequest, "invalid_field", "currentPassword")
	if string(locked.Body) != string(wrong.Body) {
		t.Fatalf("locked answer %s, wrong password's %s", locked.Body, wrong.Body)
	}
	mustError(t, e.api(http.MethodPost, "/delete-account", tok, map[string]any{"currentPassword": newPassword}),
		http.StatusBadRequest, "invalid_field", "currentPassword")
	p := accountSubmit(b, page, "/password", map[string]string{"currentPassword": newPassword, "newPassword": codeflowPassword,
		"confirmation": codeflowPassword})
	mustPage(t, p, http.StatusBadRequest, `id="currentPassword-error"`, "The current password is not correct")
	p = accountSubmit(b, b.follow(e.url, e.url+accountTestHome+"delete-account"), "/delete-account",
		map[string]string{"currentPassword": newPassword})
	mustPage(t, p, http.StatusBadRequest, `id="currentPassword-error"`, "The current password is not correct")

	if n := e.aliceFailures(); n != 3 {
		t.Fatalf("%d failures on record, want 3: attempts while locked are not counted", n)
	}
	if d := e.api(http.MethodGet, "/delete-account", tok, nil).object(t); d["scheduled"] != false {
		t.Fatalf("deletion status %v: scheduled by a locked user", d)
	}
	var lockedEvents int
	for _, ev := range e.loginEvents(e.aliceID) {
		if ev.Type == "LOGIN_ERROR" && ev.Error == "user_temporarily_disabled" && ev.Details["lockout"] == "" {
			lockedEvents++
		}
	}
	if lockedEvents != 5 {
		t.Fatalf("%d LOGIN_ERROR user_temporarily_disabled of the locked attempts, want 5", lockedEvents)
	}
	// Once the lockout is over, the password is the one set before it.
	e.clock.advance(20 * time.Minute)
	e.token("alice", newPassword)
}

// Turning TOTP off takes a code or the password: wrong ones count, and a
// locked user's right ones are refused as wrong.
func TestBruteForceAccountTOTPDisable(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	e.lockAfterThree()
	noSignInThrottle(t, e.app)
	token, err := e.passwordGrantToken(e.passwordGrantClient())
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Authorization: Bearer " + token
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, secret, e.clock.now())
	disable := func(body map[string]any) *testResponse {
		return e.request(http.MethodPost, "/realms/acme/account/totp-disable", body, bearer)
	}
	mustError(t, disable(map[string]any{"code": totpTestWrongCode(code)}), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, disable(map[string]any{"password": "wrong password"}), http.StatusBadRequest, "invalid_field", "password")
	mustError(t, disable(map[string]any{"code": totpTestWrongCode(code)}), http.StatusBadRequest, "invalid_field", "code")
	if n := e.aliceFailures(); n != 3 {
		t.Fatalf("%d failures on record, want 3", n)
	}
	mustError(t, disable(map[string]any{"code": code}), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, disable(map[string]any{"password": codeflowPassword}), http.StatusBadRequest, "invalid_field", "password")
	if cred, err := e.app.id.UserTOTP(t.Context(), &store.Realm{ID: e.realmID()}, e.aliceID); err != nil || cred == nil {
		t.Fatalf("TOTP after a locked user's attempts: %v %v, want it kept", cred, err)
	}
	if n := e.lockedAttempts(); n != 2 {
		t.Fatalf("%d LOGIN_ERROR user_temporarily_disabled of the locked attempts, want 2", n)
	}
}
