package main

// Browser tests of how the hosted pages look and speak: a realm's theme
// preset and colour override as the browser renders them, and the
// language the browser asks for.

import (
	"net/http"
	"slices"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserStyle is the computed value of a CSS property of the first
// element sel matches.
func (b *browserTab) style(sel, prop string) string {
	b.t.Helper()
	return browserEval[string](b, "style of "+sel, `getComputedStyle(document.querySelector(`+jsString(sel)+`)).getPropertyValue(`+jsString(prop)+`)`)
}

// TestBrowserTheme: a realm with the dark preset and its own primary
// colour: the login page is rendered dark, with the submit button in the
// realm's colour.
func TestBrowserTheme(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme", "themeName": "idenplane-dark",
		"theme": map[string]any{"primaryColor": "#f59e0b"}})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	var realm struct {
		ThemeName string         `json:"themeName"`
		Theme     map[string]any `json:"theme"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme", nil, http.StatusOK, &realm)
	if realm.ThemeName != "idenplane-dark" || realm.Theme["primaryColor"] != "#f59e0b" {
		t.Fatalf("stored theme %q %v", realm.ThemeName, realm.Theme)
	}

	b := e.browser()
	b.open("login-dark", rp.config.AuthCodeURL("state-dark", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if got := browserEval[string](b, "theme", `document.documentElement.dataset.theme`); got != "idenplane-dark" {
		t.Errorf("data-theme %q", got)
	}
	for _, c := range []struct{ sel, prop, want string }{
		{`button[type=submit]`, "background-color", "rgb(245, 158, 11)"}, // the override
		{`button[type=submit]`, "color", "rgb(11, 18, 32)"},              // the preset's text on primary
		{`body`, "background-color", "rgb(11, 18, 32)"},                  // the preset's background
	} {
		if got := b.style(c.sel, c.prop); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.sel, c.prop, got, c.want)
		}
	}
}

// TestBrowserGerman: a browser whose language is German gets the German
// login page, and signs in with it.
func TestBrowserGerman(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	b.acceptLanguage("de-DE,de;q=0.9")
	b.open("login-de", rp.config.AuthCodeURL("state-de", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-de")))
	if h := b.heading(); h != "Anmelden" {
		t.Fatalf("heading %q, want the German one", h)
	}
	if lang := browserEval[string](b, "lang", `document.documentElement.lang`); lang != "de" {
		t.Errorf("html lang %q, want de", lang)
	}
	b.mustShow("Passwort vergessen?")
	b.fill("Benutzername oder E-Mail", "alice")
	b.fill("Passwort", "falsch")
	if status := b.click("", "Anmelden"); status != http.StatusUnauthorized {
		t.Fatalf("wrong password: status %d", status)
	}
	if h := b.heading(); h != "Anmelden" {
		t.Fatalf("after a wrong password: heading %q, want the German login page", h)
	}
	if alerts := b.alerts(); !slices.Contains(alerts, "Benutzername oder Passwort ist falsch.") {
		t.Errorf("alerts %q, want the German message", alerts)
	}
	b.fill("Passwort", browserPassword)
	b.click("", "Anmelden")
	q := cb.wait()
	if q.Get("state") != "state-de" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	tok, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-de")
	if idt.Subject != aliceID {
		t.Fatalf("signed in as %s", idt.Subject)
	}
	var sessions []browserSession
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/sessions", nil, http.StatusOK, &sessions)
	if !slices.ContainsFunc(sessions, func(s browserSession) bool { return s.Type == "sso" && s.ID == claims["sid"] }) {
		t.Fatalf("sessions %+v, want the SSO session %v", sessions, claims["sid"])
	}
}

// TestBrowserThemeLinkColor: links take the realm's primary colour, as
// buttons do, unless the realm sets a link colour of its own.
func TestBrowserThemeLinkColor(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme", "themeName": "idenplane-dark",
		"theme": map[string]any{"primaryColor": "#f59e0b"}})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-link", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if got := b.style("nav.links a", "color"); got != "rgb(245, 158, 11)" {
		t.Errorf("link colour %q, want the realm's primary rgb(245, 158, 11)", got)
	}
}
