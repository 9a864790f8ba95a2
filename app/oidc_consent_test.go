package app

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/sessions"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
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
	for _, want := range []string{"The Shop", "Know who you are", "See your phone number"} {
		if !strings.Contains(body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	// profile and email are the client's by default: it did not ask, but
	// gets them, and the page says so apart. Scope names show nowhere.
	_, shared, _ := strings.Cut(body, "It also receives, as it always does:")
	for _, want := range []string{"See your email address", "See your profile"} {
		if !strings.Contains(shared, want) {
			t.Errorf("consent page lacks %q among the defaults not asked for:\n%s", want, body)
		}
	}
	for _, unwanted := range []string{"OpenID Connect built-in scope", ">email<", ">profile<", ">phone<"} {
		if strings.Contains(body, unwanted) {
			t.Errorf("consent page shows %q:\n%s", unwanted, body)
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
	var reps []sessions.ConsentRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/consents", nil).decode(t, &reps)
	if len(reps) != 1 || reps[0].ClientID != "shop" || !slices.Contains(reps[0].GrantedScopes, "phone") {
		t.Fatalf("consents %+v", reps)
	}
	var history []sessions.ConsentEventRep
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

// The consent page describes each scope the application asked for in the
// reader's language; a scope of the realm's own by its description, or
// its name when it has none.
func TestConsentPageDescribesRequestedScopes(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("shop", map[string]any{"requireConsent": true, "name": "The Shop"})
	for name, description := range map[string]string{"billing": "Read your invoices", "ledger": ""} {
		r := e.admin(http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": name, "description": description})
		mustStatus(t, r, http.StatusCreated)
		mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/clients/shop/optional-client-scopes",
			map[string]any{"clientScopeId": r.object(t)["id"]}), http.StatusCreated)
	}
	// Signed in once, the browser goes straight to the consent page.
	b := e.browser()
	p := b.follow(e.url, e.oauth2Config("shop", secret, "openid").AuthCodeURL("s"))
	b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	consentPage := func(cfg *oauth2.Config, opts ...oauth2.AuthCodeOption) string {
		t.Helper()
		p := b.get(cfg.AuthCodeURL("s", opts...))
		if p.status != http.StatusFound || p.location(t).Path != "/realms/acme/consent" {
			t.Fatalf("status %d Location %q, want the consent page", p.status, p.header.Get("Location"))
		}
		page := b.get(p.location(t).String())
		if page.status != http.StatusOK {
			t.Fatalf("consent page: %d %s", page.status, page.body)
		}
		return string(page.body)
	}
	// The scopes asked for are listed first; the client's defaults the
	// request did not name, granted all the same, after the line that says
	// so; an optional scope not asked for nowhere.
	for _, c := range []struct {
		name   string
		cfg    *oauth2.Config
		opts   []oauth2.AuthCodeOption
		also   string // the line before the defaults not asked for
		asked  []string
		shared []string
		unwant []string
	}{
		{"standard scopes", e.oauth2Config("shop", secret, "openid", "email", "offline_access"), nil,
			"It also receives, as it always does:",
			[]string{"See your email address", "Keep access to your data when you are signed out"},
			[]string{"See your profile"},
			[]string{"See your phone number", "Read your invoices", "ledger"}},
		{"the realm's own scopes", e.oauth2Config("shop", secret, "openid", "billing", "ledger"), nil,
			"It also receives, as it always does:",
			[]string{"Read your invoices", "<li>ledger</li>"}, []string{"See your email address", "See your profile"},
			[]string{"See your phone number"}},
		{"in German", e.oauth2Config("shop", secret, "openid", "email"), []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("ui_locales", "de")},
			"Außerdem erhält sie, wie bei jeder Anmeldung:",
			[]string{"Ihre E-Mail-Adresse sehen"}, []string{"Ihr Profil sehen"}, []string{"See your email address"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := consentPage(c.cfg, c.opts...)
			asked, shared, ok := strings.Cut(body, c.also)
			if !ok {
				t.Fatalf("consent page lacks %q:\n%s", c.also, body)
			}
			for _, want := range c.asked {
				if !strings.Contains(asked, want) {
					t.Errorf("consent page lacks %q among the scopes asked for:\n%s", want, body)
				}
			}
			for _, want := range c.shared {
				if !strings.Contains(shared, want) || strings.Contains(asked, want) {
					t.Errorf("consent page lacks %q among the defaults not asked for:\n%s", want, body)
				}
			}
			for _, unwanted := range c.unwant {
				if strings.Contains(body, unwanted) {
					t.Errorf("consent page shows %q:\n%s", unwanted, body)
				}
			}
		})
	}
}

// Every scope a realm starts with has its consent text in every catalogue.
func TestStandardScopesHaveConsentText(t *testing.T) {
	c, err := ui.LoadCatalogues()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scopes.Defaults(&store.Realm{}) {
		if !slices.Contains(standardScopes, sc.Name) {
			t.Errorf("scope %s has no consent text", sc.Name)
		}
	}
	for _, tag := range c.Tags() {
		for _, name := range standardScopes {
			if !slices.Contains(c.Keys(tag), "consent.scope."+name) {
				t.Errorf("catalogue %s lacks consent.scope.%s", tag, name)
			}
		}
	}
}
