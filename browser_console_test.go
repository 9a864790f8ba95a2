package main

// The admin console in a real browser: an administrator signs in with a
// second factor through the hosted pages of the administrators' realm,
// makes a realm, a user and a client, reads the client's secret once and
// deletes the client; axe-core checks every console page on the way.

import (
	"net/http"
	"strings"
	"testing"
	"time"
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
	b.fill("Redirect URIs", "https://web.example/callback")
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

	// Every other page of the realm, each checked by axe on arrival.
	for _, page := range []string{"/sessions", "/events", "/admin-events", "/settings", "/roles", "/groups", "/client-scopes",
		"/identity-providers", "/saml-service-providers", "/user-federation", "/scim-tokens", "/organizations", "/nhi",
		"/roles/new", "/groups/new", "/users", "/keys", "/clients"} {
		if status := b.open("", e.srv.base+"/console/realms/shop"+page); status != http.StatusOK {
			t.Errorf("%s: %d", page, status)
		}
	}
	b.open("console-account", e.srv.base+"/console/account")
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
