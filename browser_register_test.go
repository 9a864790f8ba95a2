package main

// Browser tests of self-service registration through the hosted register
// page, which the login page links to: with the email verified by a
// mailed link before the first sign-in, and without, where registering
// signs the new user in.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserUser is a user as the admin API shows it.
type browserUser struct {
	ID                   string `json:"id"`
	Username             string `json:"username"`
	Email                string `json:"email"`
	FirstName            string `json:"firstName"`
	LastName             string `json:"lastName"`
	Enabled              bool   `json:"enabled"`
	EmailVerified        bool   `json:"emailVerified"`
	RequirePasswordReset bool   `json:"requirePasswordReset"`
}

// getUser reads a user through the admin API.
func (e *browserEnv) getUser(realm, id string) browserUser {
	e.t.Helper()
	var u browserUser
	e.admin(http.MethodGet, "/admin/realms/"+realm+"/users/"+id, nil, http.StatusOK, &u)
	return u
}

// findUser is the user of realm named username, through the admin API's
// exact search; nil when there is none.
func (e *browserEnv) findUser(realm, username string) *browserUser {
	e.t.Helper()
	var list struct {
		Users []browserUser `json:"users"`
	}
	e.admin(http.MethodGet, "/admin/realms/"+realm+"/users?exact=true&username="+url.QueryEscape(username), nil, http.StatusOK, &list)
	for _, u := range list.Users {
		if u.Username == username {
			return &u
		}
	}
	return nil
}

// signIn fills the login page with username and password and submits it;
// step names the page it leads to. It returns that page's status.
func (b *browserTab) signIn(step, username, password string) int {
	b.t.Helper()
	b.fill("Username or email", username)
	b.fill("Password", password)
	return b.click(step, "Sign in")
}

// browserAccountJSON is GET /realms/{realm}/account with a user's access
// token: the account as its owner's applications read it.
type browserAccountJSON struct {
	ID            string            `json:"id"`
	Username      string            `json:"username"`
	Email         string            `json:"email"`
	EmailVerified bool              `json:"emailVerified"`
	FirstName     string            `json:"firstName"`
	LastName      string            `json:"lastName"`
	Attributes    map[string]string `json:"attributes"`
	Factors       []string          `json:"factors"`
	Deletion      struct {
		Scheduled bool  `json:"scheduled"`
		DeleteAt  int64 `json:"deleteAt"`
	} `json:"deletion"`
}

// accountAPI sends GET realm's account path with tok's access token and
// decodes the JSON answer into out.
func (rp *browserRP) accountAPI(e *browserEnv, realm, path string, tok *oauth2.Token, out any) {
	rp.t.Helper()
	resp, err := rp.config.Client(rp.t.Context(), tok).Get(e.issuer(realm) + "/account" + path)
	if err != nil {
		rp.t.Fatalf("account API %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		rp.t.Fatalf("account API %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		rp.t.Fatalf("account API %s: %v", path, err)
	}
}

// TestBrowserRegisterVerifyEmail: from the application's sign-in, a person
// creates an account on the register page (with a field the realm's
// administrator added), is told to check their email, follows the mailed
// link, and then goes on with the sign-in the application started. A
// refused form comes back with what was typed, passwords aside.
func TestBrowserRegisterVerifyEmail(t *testing.T) {
	e := newBrowserEnv(t)
	box := newBrowserMailbox(t)
	settings := box.realmSettings()
	settings["displayName"], settings["registrationAllowed"], settings["requireEmailVerification"] = "Acme", true, true
	e.realm("acme", settings)
	e.admin(http.MethodPost, "/realms/acme/registration/admin/fields", map[string]any{
		"key": "company", "label": "Company", "type": "text", "required": true}, http.StatusCreated, nil)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid", "email", "profile")

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-reg", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-reg")))
	if status := b.click("register", "Create an account"); status != http.StatusOK {
		t.Fatalf("register page: status %d", status)
	}
	if h := b.heading(); h != "Create an account" {
		t.Fatalf("register page heading %q", h)
	}
	form := []struct{ label, value string }{
		{"Username", "linda"}, {"Email", "linda@example.test"}, {"First name", "Linda"},
		{"Last name", "Lovelace"}, {"Company", "Analytical Engines Ltd"},
	}
	for _, f := range form {
		b.fill(f.label, f.value)
	}
	b.fill("Password", browserPassword)
	b.fill("Confirm password", browserPassword+" typo")
	if status := b.click("register-error", "Create account"); status != http.StatusBadRequest {
		t.Fatalf("mismatched passwords: status %d, want 400", status)
	}
	if text, invalid := b.errorOf("Confirm password"); !strings.Contains(text, "The passwords do not match.") || !invalid {
		t.Errorf("confirmation error %q (invalid %v), want that the passwords do not match", text, invalid)
	}
	if alerts := b.alerts(); !slices.Contains(alerts, "Some fields need your attention.") {
		t.Errorf("alerts %q, want the form's", alerts)
	}
	for _, f := range form {
		if got := b.value(f.label); got != f.value {
			t.Errorf("%s after the error = %q, want %q kept", f.label, got, f.value)
		}
	}
	for _, label := range []string{"Password", "Confirm password"} {
		if b.value(label) != "" {
			t.Errorf("%s came back in the form", label)
		}
	}
	if u := e.findUser("acme", "linda"); u != nil {
		t.Fatalf("a refused form created user %+v", u)
	}

	b.fill("Password", browserPassword)
	b.fill("Confirm password", browserPassword)
	if status := b.click("register-check-email", "Create account"); status != http.StatusOK {
		t.Fatalf("register: status %d", status)
	}
	if h := b.heading(); h != "Check your email" {
		t.Fatalf("after registering: heading %q; page:\n%s", h, b.text())
	}
	b.mustShow("linda@example.test")
	// The page leads back to the sign-in the application started.
	back := browserEval[string](b, "back link", `document.querySelector('nav.links a').href`)
	if !strings.HasPrefix(back, e.issuer("acme")+"/login?authRequestID=") {
		t.Fatalf("back link %q, want the waiting sign-in", back)
	}
	u := e.findUser("acme", "linda")
	if u == nil || u.Email != "linda@example.test" || u.EmailVerified || u.FirstName != "Linda" || u.LastName != "Lovelace" || !u.Enabled {
		t.Fatalf("registered user %+v, want linda, enabled, unverified", u)
	}

	m := box.next()
	if !strings.Contains(m.to, "linda@example.test") {
		t.Fatalf("verification mail to %q", m.to)
	}
	b.open("", m.link(t, "/realms/acme/verify-email"))
	if h := b.heading(); h != "Email verified" {
		t.Fatalf("verification page heading %q; page:\n%s", h, b.text())
	}
	if !e.getUser("acme", u.ID).EmailVerified {
		t.Fatalf("after the link the email is not verified")
	}

	b.open("", back)
	if h := b.heading(); h != "Sign in" {
		t.Fatalf("back to the sign-in: heading %q", h)
	}
	b.signIn("", "linda", browserPassword)
	q := cb.wait()
	if q.Get("state") != "state-reg" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	tok, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-reg")
	if idt.Subject != u.ID || claims["preferred_username"] != "linda" || claims["email_verified"] != true {
		t.Fatalf("ID token for %s, claims %v; want linda %s, verified", idt.Subject, claims, u.ID)
	}
	// The administrator's field is stored with the account.
	var acct browserAccountJSON
	rp.accountAPI(e, "acme", "", tok, &acct)
	if acct.ID != u.ID || acct.Attributes["company"] != "Analytical Engines Ltd" {
		t.Fatalf("account %+v, want linda with her company", acct)
	}
}

// TestBrowserRegisterSignsIn: in a realm that does not verify email
// addresses, registering signs the new user in, and the application that
// sent the browser gets its code.
func TestBrowserRegisterSignsIn(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme", "registrationAllowed": true})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid", "profile")

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-new", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-new")))
	b.click("", "Create an account")
	b.fill("Username", "grace")
	b.fill("Email", "grace@example.test")
	b.fill("First name", "Grace")
	b.fill("Password", browserPassword)
	b.fill("Confirm password", browserPassword)
	if _, err := b.tryClick("", "Create account"); err != nil || !strings.HasPrefix(b.location(), cb.url+"?") {
		t.Fatalf("registering did not lead back to the application: %v (page %s)", err, b.location())
	}
	q := cb.wait()
	if q.Get("state") != "state-new" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	tok, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-new")
	u := e.findUser("acme", "grace")
	if u == nil || idt.Subject != u.ID || claims["preferred_username"] != "grace" || claims["given_name"] != "Grace" {
		t.Fatalf("ID token for %s with %v; user %+v", idt.Subject, claims, u)
	}
	if u.Email != "grace@example.test" || !u.Enabled {
		t.Fatalf("registered user %+v", u)
	}
	// Stored: the SSO session the registration started, the ID token's sid.
	var sessions []browserSession
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+u.ID+"/sessions", nil, http.StatusOK, &sessions)
	if !slices.ContainsFunc(sessions, func(s browserSession) bool { return s.Type == "sso" && s.ID == claims["sid"] }) {
		t.Fatalf("sessions %+v, want the SSO session %v", sessions, claims["sid"])
	}
}
