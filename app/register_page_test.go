package app

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/store"
)

// registerPageEnv is a codeflow server whose realm records events and has
// the fields phone (required tel with a pattern), plan (select) and terms
// (required checkbox), and its client web.
func registerPageEnv(t *testing.T) (*codeflowEnv, *oauth2.Config) {
	t.Helper()
	e := newCodeflowEnv(t)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	for _, f := range []map[string]any{
		{"key": "phone", "label": "Phone number", "type": "tel", "required": true, "pattern": `\+[0-9]{6,15}`, "order": 1},
		{"key": "plan", "label": "Plan", "type": "select", "options": []string{"free", "pro"}, "order": 2},
		{"key": "terms", "label": "I accept the terms", "type": "checkbox", "required": true, "order": 3},
	} {
		mustStatus(t, e.admin(http.MethodPost, "/realms/acme/registration/admin/fields", f), http.StatusCreated)
	}
	secret := e.client("web", nil)
	return e, e.oauth2Config("web", secret, "openid")
}

// registerPageOpen follows the login page's "Create an account" link.
func registerPageOpen(t *testing.T, e *codeflowEnv, b *codeflowBrowser, authURL string) *codeflowPage {
	t.Helper()
	login := b.follow(e.url, authURL)
	page := b.get(recoveryHref(t, login, "Create an account"))
	recoveryMustContain(t, page, http.StatusOK, "Create an account")
	if got, want := page.form(t).fields.Get("authRequestID"), login.form(t).fields.Get("authRequestID"); got != want || got == "" {
		t.Fatalf("register form carries authRequestID %q, want %q", got, want)
	}
	return page
}

// registerPageValid is a valid register form for username.
func registerPageValid(username string) map[string]string {
	return map[string]string{"username": username, "email": username + "@example.test", "firstName": "Nina",
		"lastName": "Newcomer", "password": registrationPassword, "confirm": registrationPassword,
		"attributes.phone": "+33123456789", "attributes.plan": "pro", "attributes.terms": "true"}
}

func registerPageUser(t *testing.T, e *codeflowEnv, username string) *store.User {
	t.Helper()
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.store.GetUserByUsername(t.Context(), realm.ID, username)
	if err != nil {
		t.Fatalf("user %s: %v", username, err)
	}
	return u
}

// From the login page's link to a signed-in new user: the fields shown
// with labels, the errors of a bad post each by its field with what was
// typed kept and the passwords not, then the user created with its
// attributes, signed in, and the code issued.
func TestRegisterPage(t *testing.T) {
	e, c := registerPageEnv(t)
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("reg"))
	body := string(page.body)
	for _, want := range []string{
		`<label for="username">Username</label>`, `<label for="email">Email</label>`,
		`<label for="password">Password</label>`, `<label for="confirm">Confirm password</label>`,
		`<label for="attr-phone">Phone number</label>`, `pattern="\+[0-9]{6,15}"`,
		`<label for="attr-plan">Plan</label>`, `<option value="pro">pro</option>`,
		`<label for="attr-terms">I accept the terms</label>`, `At least 8 characters.`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("register page lacks %s", want)
		}
	}
	if t.Failed() {
		t.Fatalf("page %s", body)
	}

	bad := registerPageValid("nina")
	bad["username"], bad["email"], bad["password"], bad["confirm"] = "n", "not-an-address", "tiny7", "other7"
	bad["attributes.phone"], bad["attributes.terms"] = "12", ""
	p := b.submit(page, bad)
	if p.status != http.StatusBadRequest {
		t.Fatalf("bad form: status %d", p.status)
	}
	for field, message := range map[string]string{
		"username":   "Use at least 2 characters, without spaces, angle brackets or invisible characters.",
		"email":      "Enter a valid email address.",
		"password":   "The password needs at least 8 characters.",
		"confirm":    "The passwords do not match.",
		"attr-phone": "Enter a telephone number.",
		"attr-terms": "This field is required.",
	} {
		recoveryMustContain(t, p, http.StatusBadRequest, `aria-describedby="`+field+`-error`)
		recoveryMustContain(t, p, http.StatusBadRequest, `<span id="`+field+`-error" class="field-error">`+message+`</span>`)
	}
	recoveryMustContain(t, p, http.StatusBadRequest, "Some fields need your attention.")
	kept := p.form(t).fields
	if kept.Get("username") != "n" || kept.Get("email") != "not-an-address" || kept.Get("firstName") != "Nina" ||
		kept.Get("attributes.phone") != "12" || !strings.Contains(string(p.body), `<option value="pro" selected>`) {
		t.Fatalf("the form did not keep what was typed: %v", kept)
	}
	if kept.Get("password") != "" || kept.Get("confirm") != "" || strings.Contains(string(p.body), "tiny7") ||
		strings.Contains(string(p.body), "other7") {
		t.Fatal("the form echoes a password")
	}

	p = b.submit(p, registerPageValid("nina"))
	back := e.redirectedBack(p)
	if back.Get("state") != "reg" || loginSSOCookie(p) == "" {
		t.Fatalf("after registering: %v, cookie %q", back, loginSSOCookie(p))
	}
	tok, err := c.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	nina := registerPageUser(t, e, "nina")
	if idt, _ := e.verifyIDToken(tok, "web", ""); idt.Subject != nina.ID {
		t.Fatalf("signed in %s, want nina %s", idt.Subject, nina.ID)
	}
	if nina.Email != "nina@example.test" || nina.FirstName != "Nina" || nina.EmailVerified || !nina.Enabled {
		t.Fatalf("registered %+v", nina)
	}
	attrs, err := e.store.UserAttributes(t.Context(), nina.ID)
	if err != nil || len(attrs) != 3 || attrs["phone"] != "+33123456789" || attrs["plan"] != "pro" || attrs["terms"] != "true" {
		t.Fatalf("attributes %v, %v", attrs, err)
	}
	if ev := registrationEvents(t, e.testServer, "REGISTER"); len(ev) != 1 || ev[0].UserID != nina.ID {
		t.Fatalf("REGISTER events %+v", ev)
	}
	if ev := registrationEvents(t, e.testServer, "LOGIN"); len(ev) != 1 || ev[0].UserID != nina.ID {
		t.Fatalf("LOGIN events %+v", ev)
	}

	// A taken username comes back on its field.
	b = e.browser()
	page = registerPageOpen(t, e, b, c.AuthCodeURL("again"))
	taken := registerPageValid("nina")
	taken["email"] = "other@example.test"
	recoveryMustContain(t, b.submit(page, taken), http.StatusBadRequest,
		`<span id="username-error" class="field-error">This username is taken.</span>`)
	if ev := registrationEvents(t, e.testServer, "REGISTER_ERROR"); len(ev) != 1 || ev[0].Error != "username_in_use" {
		t.Fatalf("REGISTER_ERROR events %+v", ev)
	}
}

// With email verification required the new user is not signed in: a page
// says to check the mail, which is queued.
func TestRegisterPageEmailVerification(t *testing.T) {
	e, c := registerPageEnv(t)
	e.setRealmEmail("acme", func(r *store.Realm) { r.RequireEmailVerification = true })
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("s"))
	noEmail := registerPageValid("vic")
	noEmail["email"] = ""
	recoveryMustContain(t, b.submit(page, noEmail), http.StatusBadRequest,
		`<span id="email-error" class="field-error">Enter your email address.</span>`)

	p := b.submit(page, registerPageValid("vic"))
	recoveryMustContain(t, p, http.StatusOK, "Check your email")
	recoveryMustContain(t, p, http.StatusOK, "We sent a link to vic@example.test")
	if c := loginSSOCookie(p); c != "" {
		t.Fatalf("an unverified user was signed in: %q", c)
	}
	mails := recoveryOutbox(e)
	if len(mails) != 1 || mails[0].Recipient != "vic@example.test" {
		t.Fatalf("outbox %+v", mails)
	}
	recoveryLink(t, e, mails[0].TextBody, pathVerifyEmail)
}

// Under moderation the new user waits for approval, and is told so.
func TestRegisterPageModeration(t *testing.T) {
	e, c := registerPageEnv(t)
	mustStatus(t, e.admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{"moderation": true}), http.StatusOK)
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("s"))
	p := b.submit(page, registerPageValid("pat"))
	recoveryMustContain(t, p, http.StatusOK, "waiting for an administrator")
	if c := loginSSOCookie(p); c != "" {
		t.Fatalf("a pending user was signed in: %q", c)
	}
	pat := registerPageUser(t, e, "pat")
	if st := registrationStatus(t, e.testServer, pat.ID); st != store.UserPending {
		t.Fatalf("status %q, want pending", st)
	}
}

// Without an authorization request the page still registers, then says
// to sign in.
func TestRegisterPageStandalone(t *testing.T) {
	e, _ := registerPageEnv(t)
	b := e.browser()
	page := b.get(e.issuer("acme") + pathRegister)
	recoveryMustContain(t, page, http.StatusOK, "Create an account")
	if strings.Contains(string(page.body), "Back to sign in") {
		t.Fatal("a link back to a sign-in there is none of")
	}
	p := b.submit(page, registerPageValid("sam"))
	recoveryMustContain(t, p, http.StatusOK, "Go back to the application and sign in.")
	registerPageUser(t, e, "sam")
}

// A realm without registration has no register page.
func TestRegisterPageDisabled(t *testing.T) {
	e, c := registerPageEnv(t)
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("s"))
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": false}), http.StatusOK)
	recoveryMustContain(t, b.get(page.url.String()), http.StatusNotFound, "does not take new registrations")
	recoveryMustContain(t, b.submit(page, registerPageValid("zed")), http.StatusNotFound, "does not take new registrations")
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetUserByUsername(t.Context(), realm.ID, "zed"); err == nil {
		t.Fatal("registered in a realm without registration")
	}
	if p := b.post(page.url.String(), url.Values{}); p.status != http.StatusNotFound {
		t.Fatalf("post without a form: %d", p.status)
	}
}

// The page is limited per address, every attempt counting, with a 429
// and Retry-After; a forged post is refused.
func TestRegisterPageThrottle(t *testing.T) {
	e, c := registerPageEnv(t)
	b := e.browser()
	page := registerPageOpen(t, e, b, c.AuthCodeURL("s"))
	if p := b.submit(page, map[string]string{"csrf": "forged"}); p.status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", p.status)
	}
	bad := registerPageValid("tom")
	bad["password"] = "tiny7"
	for i := range registration.RegisterLimitPerIP {
		if p := b.submit(page, bad); p.status != http.StatusBadRequest {
			t.Fatalf("attempt %d: status %d", i, p.status)
		}
	}
	p := b.submit(page, registerPageValid("tom"))
	recoveryMustContain(t, p, http.StatusTooManyRequests, "Too many registration attempts. Try again later.")
	if p.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	if kept := p.form(t).fields; kept.Get("username") != "tom" || kept.Get("password") != "" {
		t.Fatalf("throttled form %v", kept)
	}
}

// Registrations naming one username or one email address are limited
// whatever the address they come from, on the API and the page alike.
func TestRegistrationPerAccountLimit(t *testing.T) {
	s := registrationServer(t)
	for i := range registration.RegisterLimitPerAccount {
		want := http.StatusConflict
		if i == 0 {
			want = http.StatusCreated
		}
		res := registrationRegister(s, "acme", registrationUser("kim", map[string]any{"email": fmt.Sprintf("kim%d@example.test", i)}),
			fmt.Sprintf("198.51.100.%d", 10+i))
		mustStatus(t, res, want)
	}
	res := registrationRegister(s, "acme", registrationUser("kim", map[string]any{"email": "kim9@example.test"}), "198.51.100.30")
	mustError(t, res, http.StatusTooManyRequests, "too_many_requests", "")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// The email counts apart from the username.
	for i := range registration.RegisterLimitPerAccount {
		res := registrationRegister(s, "acme", registrationUser(fmt.Sprintf("lee%d", i), map[string]any{"email": "lee@example.test"}),
			fmt.Sprintf("198.51.100.%d", 40+i))
		if res.Status != http.StatusCreated && res.Status != http.StatusConflict {
			t.Fatalf("attempt %d: %d %s", i, res.Status, res.Body)
		}
	}
	mustError(t, registrationRegister(s, "acme", registrationUser("lee9", map[string]any{"email": "LEE@example.test"}), "198.51.100.60"),
		http.StatusTooManyRequests, "too_many_requests", "")
	// Invalid attempts do not count against an account.
	for i := range registration.RegisterLimitPerAccount + 1 {
		mustError(t, registrationRegister(s, "acme", registrationUser("max", map[string]any{"password": "tiny7"}), fmt.Sprintf("198.51.100.%d", 70+i)),
			http.StatusBadRequest, "invalid_field", "password")
	}
	mustStatus(t, registrationRegister(s, "acme", registrationUser("max", nil), "198.51.100.90"), http.StatusCreated)
}
