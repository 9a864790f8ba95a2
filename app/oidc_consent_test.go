package app

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestConsent(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("shop", map[string]any{"requireConsent": true, "name": "The Shop"})
	cfg := e.oauth2Config("shop", secret, "openid", "phone")
	b := e.browser()

	// After the login comes the consent page, listing the scopes.
	p := b.follow(e.url, cfg.AuthCodeURL("deny-state"))
	p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme/consent" {
		t.Fatalf("after login: status %d Location %q, want the consent page", p.status, p.header.Get("Location"))
	}
	page := b.get(p.location(t).String())
	if page.status != http.StatusOK {
		t.Fatalf("consent page: %d %s", page.status, page.body)
	}
	body := string(page.body)
	for _, want := range []string{"The Shop", "phone", "OpenID Connect built-in scope: phone", "email",
		"OpenID Connect built-in scope: email"} {
		if !strings.Contains(body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	form := page.form(t)
	if got := form.buttons["action"]; !slices.Equal(got, []string{"approve", "deny"}) || form.fields.Get("csrf") == "" {
		t.Fatalf("consent form %+v", form)
	}

	// Deny: back to the client with access_denied, and nothing stored.
	back := e.redirectedBack(b.submit(page, map[string]string{"action": "deny"}))
	if back.Get("error") != "access_denied" || back.Get("state") != "deny-state" || back.Has("code") {
		t.Fatalf("denial %v", back)
	}
	consents := e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/consents", nil)
	if string(consents.Body) != "[]\n" {
		t.Fatalf("consents after a denial: %s", consents.Body)
	}
	// The denied request is gone: its form cannot be answered again.
	if again := b.submit(page, map[string]string{"action": "approve"}); again.status != http.StatusBadRequest {
		t.Fatalf("approving a denied request: %d", again.status)
	}

	// Approve: the code comes, and the decision is stored as a grant.
	p = b.get(cfg.AuthCodeURL("ok-state")) // signed in already: straight to consent
	if p.status != http.StatusFound || p.location(t).Path != "/realms/acme/consent" {
		t.Fatalf("with SSO but no consent: status %d Location %q", p.status, p.header.Get("Location"))
	}
	page = b.get(p.location(t).String())
	back = e.redirectedBack(b.submit(page, map[string]string{"action": "approve"}))
	if back.Get("state") != "ok-state" {
		t.Fatalf("approval %v", back)
	}
	if _, err := cfg.Exchange(t.Context(), back.Get("code")); err != nil {
		t.Fatal(err)
	}
	var reps []consentRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/consents", nil).decode(t, &reps)
	if len(reps) != 1 || reps[0].ClientID != "shop" || !slices.Contains(reps[0].GrantedScopes, "phone") {
		t.Fatalf("consents %+v", reps)
	}
	var history []consentEventRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/consents/history", nil).decode(t, &history)
	if len(history) != 1 || history[0].Action != "GRANT" {
		t.Fatalf("consent history %+v", history)
	}

	// The stored consent covers the next request; prompt=consent asks again.
	e.redirectedBack(b.get(cfg.AuthCodeURL("s")))
	p = b.get(cfg.AuthCodeURL("s", oauth2.SetAuthURLParam("prompt", "consent")))
	if p.status != http.StatusFound || p.location(t).Path != "/realms/acme/consent" {
		t.Fatalf("prompt=consent: status %d Location %q", p.status, p.header.Get("Location"))
	}
	// A scope beyond the consent asks again; prompt=none cannot.
	wider := e.oauth2Config("shop", secret, "openid", "phone", "address")
	back = e.redirectedBack(b.get(wider.AuthCodeURL("silent", oauth2.SetAuthURLParam("prompt", "none"))))
	if back.Get("error") != "consent_required" || back.Get("state") != "silent" {
		t.Fatalf("prompt=none needing consent: %v", back)
	}
}

// The consent form answers only in the browser session that signed in,
// and only with its CSRF token.
func TestConsentFormChecks(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("shop", map[string]any{"requireConsent": true})
	cfg := e.oauth2Config("shop", secret, "openid")
	b := e.browser()
	p := b.follow(e.url, cfg.AuthCodeURL("s"))
	p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	page := b.get(p.location(t).String())

	if r := b.submit(page, map[string]string{"action": "approve", "csrf": "forged"}); r.status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", r.status)
	}
	if r := b.submit(page, map[string]string{"action": "maybe"}); r.status != http.StatusBadRequest {
		t.Fatalf("unknown action: %d", r.status)
	}
	// Another browser, holding the form's fields, is turned away.
	other := e.browser()
	if r := other.get(p.location(t).String()); r.status != http.StatusForbidden {
		t.Fatalf("consent page in another browser: %d", r.status)
	}
	if r := other.submit(page, map[string]string{"action": "approve"}); r.status != http.StatusForbidden {
		t.Fatalf("consent post from another browser: %d", r.status)
	}
	e.redirectedBack(b.submit(page, map[string]string{"action": "approve"}))
}
