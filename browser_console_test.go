package main

// The admin console in a real browser: an administrator signs in with a
// second factor through the hosted pages of the administrators' realm,
// makes a realm, a user and a client, reads the client's secret once, signs
// the user in to an application with that client, finds the sign-in on the
// dashboard and in the login events, ends the user's session and deletes
// the client; axe-core checks every console page on the way.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserConsoleSignIn signs ada in to the console from its first page:
// password, then, as the administrators' realm requires a second factor,
// the enrolment of an authenticator app and its recovery codes.
func browserConsoleSignIn(e *browserEnv, b *browserTab) {
	e.t.Helper()
	b.open("console-signin", e.srv.base+"/console/")
	b.signIn("console-totp-setup", "ada", browserPassword)
	if h := b.heading(); h != "Set up two-factor authentication" {
		e.t.Fatalf("after the password: %q, want the authenticator's enrolment; page:\n%s", h, b.text())
	}
	key := browserEval[string](b, "key", `(() => {
		const dt = [...document.querySelectorAll('dt')].find(d => d.textContent.trim() === 'Key');
		return dt ? dt.nextElementSibling.textContent : '';
	})()`)
	b.fill("Authentication code", browserTOTPCode(e.t, strings.ReplaceAll(strings.TrimSpace(key), " ", ""), time.Now()))
	b.click("console-recovery-codes", "Confirm")
	if h := b.heading(); h == "Save your recovery codes" {
		b.click("", "Continue")
	}
	if loc, h := b.location(), b.heading(); loc != e.srv.base+"/console/" || h != "Dashboard" {
		e.t.Fatalf("signed in at %s (%q), want the console's dashboard; page:\n%s", loc, h, b.text())
	}
}

func TestBrowserConsoleFirstHour(t *testing.T) {
	e := newBrowserEnv(t)
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"password": browserPassword}, http.StatusCreated, nil)
	b := e.browser()
	browserConsoleSignIn(e, b)

	// A realm.
	b.click("console-realms", "Realms")
	b.click("console-realm-new", "New realm")
	b.fill("Name", "shop")
	b.fill("Display name", "The shop")
	b.click("console-realm-settings", "Create realm")
	b.mustShow("The realm is created.")
	if h := b.heading(); h != "Settings of shop" {
		t.Fatalf("after creating the realm: %q", h)
	}
	// The realm keeps its login events, for the dashboard and the events page.
	b.check("Keep login events")
	b.submit("", "Keep login events")
	var events struct {
		EventsEnabled bool `json:"eventsEnabled"`
	}
	e.admin(http.MethodGet, "/admin/realms/shop/events/config", nil, http.StatusOK, &events)
	if !events.EventsEnabled {
		t.Fatal("the realm keeps no login events after its settings were saved")
	}

	// A user, whose form first shows the API's refusal at its field.
	b.click("console-users", "Users")
	b.click("console-user-new", "New user")
	b.fill("Username", "alice")
	b.fill("Email", "not an address")
	if status := b.click("console-user-error", "Create user"); status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad email: %d", status)
	}
	if msg, invalid := b.errorOf("Email"); msg == "" || !invalid {
		t.Fatalf("the email's refusal is not at its field: %q %v", msg, invalid)
	}
	b.fill("Email", "alice@example.test")
	b.fill("Password", browserPassword)
	b.click("console-user", "Create user")
	b.mustShow("The user is created.")

	// A client: its secret is shown once, with a copy button.
	b.click("console-clients", "Clients")
	b.click("console-client-new", "New client")
	b.fill("Client ID", "web")
	b.fill("Redirect URIs", "not a uri")
	b.click("", "Create client")
	if msg, invalid := b.errorOf("Redirect URIs"); msg == "" || !invalid {
		t.Fatalf("the redirect URI's refusal is not at its field: %q %v", msg, invalid)
	}
	app := newBrowserCallback(t)
	b.fill("Redirect URIs", app.url)
	b.click("console-client-secret", "Create client")
	secret := b.value("Client secret")
	if len(secret) < 20 {
		t.Fatalf("the secret shown: %q", secret)
	}
	if hidden := browserEval[bool](b, "copy button", `document.querySelector('button[data-copy]').hidden`); hidden {
		t.Error("the copy button stayed hidden: console.js did not run")
	}
	// The secret is the client's: the token endpoint authenticates it
	// (and then refuses a grant the client lacks), and refuses another.
	for s, want := range map[string]int{secret: http.StatusBadRequest, "wrong" + secret: http.StatusUnauthorized} {
		req, err := http.NewRequest(http.MethodPost, e.issuer("shop")+"/protocol/openid-connect/token",
			strings.NewReader("grant_type=client_credentials"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("web", s)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("the token endpoint with the secret shown (%t): %d, want %d", s == secret, res.StatusCode, want)
		}
	}
	b.click("console-client", "Continue to the client")

	// The application signs alice in through the hosted pages with the
	// client and the secret as the console made them.
	rp := e.relyingParty("shop", "web", secret, app.url, "openid")
	verifier := oauth2.GenerateVerifier()
	b.open("", rp.config.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1")))
	b.signIn("", "alice", browserPassword)
	back := app.wait()
	if back.Get("state") != "state-1" || back.Get("code") == "" {
		t.Fatalf("back in the application with %v, want a code and state-1", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange the code: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-1")
	if claims["preferred_username"] != "alice" {
		t.Fatalf("the ID token's claims %v, want alice's", claims)
	}
	tok, err = rp.config.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh while the session lives: %v", err)
	}

	// The sign-in in the login events, and on the dashboard, whose figures
	// of the day are those of the events page.
	b.open("console-events", e.srv.base+"/console/realms/shop/events")
	rows := b.rows()
	var logins, failures []string
	for _, row := range rows {
		switch cells := strings.Split(row, "\t"); {
		case len(cells) < 4:
			t.Fatalf("a login event's row %q", row)
		case cells[1] == "LOGIN":
			logins = append(logins, row)
		case strings.HasSuffix(cells[1], "_ERROR"):
			failures = append(failures, row)
		}
	}
	if len(logins) != 1 || !strings.Contains(logins[0], "\tweb\t") || !strings.Contains(logins[0], idt.Subject) {
		t.Errorf("the sign-ins among the login events %q, want alice's one to web", logins)
	}
	b.open("console-dashboard-signin", e.srv.base+"/console/?realm=shop")
	for stat, want := range map[string]string{"Login events, last 24 hours": fmt.Sprint(len(rows)),
		"Failed login events, last 24 hours": fmt.Sprint(len(failures)), "Active sessions": "1"} {
		if got := b.stat(stat); got != want {
			t.Errorf("the dashboard's %q: %q, want %q", stat, got, want)
		}
	}
	b.mustShow("1 sign-ins and 0 failed sign-ins")

	// Her session ends from the console: the application's refresh token
	// dies with it.
	b.open("console-sessions", e.srv.base+"/console/realms/shop/sessions")
	b.clickLabelled("console-session-ended", "End the sso session of alice")
	b.mustShow("The session has ended.", "No active session.")
	_, err = rp.config.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("refresh after the session ended: %v, want invalid_grant", err)
	}

	// Every other page of the realm, each checked by axe on arrival.
	for _, page := range []string{"/sessions", "/events", "/admin-events", "/settings", "/roles", "/groups", "/client-scopes",
		"/identity-providers", "/saml-service-providers", "/user-federation", "/scim-tokens", "/organizations", "/nhi",
		"/roles/new", "/groups/new", "/users", "/keys", "/clients"} {
		if status := b.open("", e.srv.base+"/console/realms/shop"+page); status != http.StatusOK {
			t.Errorf("%s: %d", page, status)
		}
	}
	b.open("console-account", e.srv.base+"/console/account")
	b.open("console-accounts", e.srv.base+"/console/accounts")
	b.open("console-account-new", e.srv.base+"/console/accounts/new")
	e.admin(http.MethodPost, "/admin/api-keys", map[string]any{"name": "backup", "permissions": []string{"realm:read"}},
		http.StatusCreated, nil)
	b.open("console-api-keys", e.srv.base+"/console/api-keys")
	b.open("console-api-key-new", e.srv.base+"/console/api-keys/new")
	b.open("console-dashboard", e.srv.base+"/console/?realm=shop")

	// The client goes, after a confirmation.
	b.open("", e.srv.base+"/console/realms/shop/clients/web")
	b.click("console-client-delete", "Delete client")
	b.click("", "Delete client")
	b.mustShow("The client is deleted.")
	e.srv.must(http.MethodGet, "/admin/realms/shop/clients/web", cliAPIKey, nil, http.StatusNotFound)

	// In German, as the browser asks.
	b.acceptLanguage("de")
	b.open("", e.srv.base+"/console/?realm=shop")
	if h := b.heading(); h != "Übersicht" {
		t.Errorf("the dashboard in German: %q", h)
	}
	b.acceptLanguage("en")
	b.open("", e.srv.base+"/console/")

	b.click("console-signed-out", "Sign out")
	b.mustShow("You are signed out of the console.")
}

// check ticks the checkbox labelled label, unless it is ticked already.
func (b *browserTab) check(label string) {
	b.t.Helper()
	id := b.field(label)
	if !browserEval[bool](b, "checked "+label, fmt.Sprintf(`document.getElementById(%s).checked`, jsString(string(id)))) {
		b.do("tick "+label, chromedp.Click(id))
	}
}

// submit sends the form holding the field labelled label with its submit
// button, on pages where several forms share a button's text.
func (b *browserTab) submit(step, label string) int {
	b.t.Helper()
	return b.clickSelector(step, "submit the form of "+label, fmt.Sprintf(`form:has([id=%s]) button[type=submit]`, jsString(string(b.field(label)))))
}

// clickLabelled clicks the button named label (aria-label): one of a row
// of buttons that read the same.
func (b *browserTab) clickLabelled(step, label string) int {
	b.t.Helper()
	return b.clickSelector(step, "click "+label, fmt.Sprintf(`button[aria-label=%s]`, jsString(label)))
}

func (b *browserTab) clickSelector(step, what, css string) int {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(css)))
	if err != nil || resp == nil {
		b.t.Fatalf("%s on %s: no page loaded (%v)", what, b.location(), err)
	}
	b.landed(step)
	return int(resp.Status)
}

// stat is the figure a console page gives for name in a list of terms.
func (b *browserTab) stat(name string) string {
	b.t.Helper()
	return browserEval[string](b, "figure "+name, fmt.Sprintf(`(() => {
		const dt = [...document.querySelectorAll('dt')].find(d => d.textContent.trim() === %s);
		return dt ? dt.nextElementSibling.textContent.trim() : '';
	})()`, jsString(name)))
}

// rows are the texts of the body rows of the page's tables.
func (b *browserTab) rows() []string {
	b.t.Helper()
	return browserEval[[]string](b, "table rows", `[...document.querySelectorAll('tbody tr')].map(r => r.innerText)`)
}
