package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// The look and language of the hosted pages: the realm's theme and frame,
// and the catalogue the browser or the sign-in asks for.

func TestPagesFollowRealmTheme(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("web", nil)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{
		"displayName": "Acme Corp", "themeName": "idenplane-dark",
		"theme": map[string]any{"primaryColor": "#ff5500", "fontFamily": "Georgia, serif",
			"logoUrl": "https://cdn.example.test/acme.png", "faviconUrl": "https://cdn.example.test/favicon.ico"},
	}), http.StatusOK)
	cfg := e.oauth2Config("web", "", "openid")
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	mustStatus(t, &testResponse{Status: page.status, Body: page.body}, http.StatusOK)
	checkPageCSP(t, page.header, true)
	body := string(page.body)
	nonce := cspNonce.FindStringSubmatch(page.header.Get("Content-Security-Policy"))[1]
	for _, want := range []string{
		`data-theme="idenplane-dark"`,
		`<style nonce="` + nonce + `">body{--primary:#ff5500;--font:Georgia, serif;}</style>`,
		`<img src="https://cdn.example.test/acme.png" alt="" class="logo">`,
		`<link rel="icon" href="https://cdn.example.test/favicon.ico">`,
		`<span class="realm-name">Acme Corp</span>`,
		`· Acme Corp</title>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("login page lacks %s", want)
		}
	}

	// Without overrides there is no inline style at all, and the preset is
	// the default one.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"themeName": "high-contrast", "theme": nil}), http.StatusOK)
	page = b.follow(e.url, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if body := string(page.body); strings.Contains(body, "<style") || !strings.Contains(body, `data-theme="high-contrast"`) {
		t.Errorf("page without overrides: %s", body)
	}
}

func TestPagesSpeakTheAskedLanguage(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("web", nil)
	cfg := e.oauth2Config("web", "", "openid")
	authURL := func(opts ...oauth2.AuthCodeOption) string {
		return cfg.AuthCodeURL("st", append(opts, oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))...)
	}
	lang := regexp.MustCompile(`<html lang="([a-z-]+)"`)
	pageLang := func(p *codeflowPage) string {
		t.Helper()
		m := lang.FindSubmatch(p.body)
		if m == nil {
			t.Fatalf("no lang in %s", p.body)
		}
		if p.header.Get("Content-Language") != string(m[1]) {
			t.Fatalf("Content-Language %q, html lang %q", p.header.Get("Content-Language"), m[1])
		}
		return string(m[1])
	}

	// Accept-Language picks German; an error page speaks it too.
	b := e.browser()
	req, _ := http.NewRequest(http.MethodGet, e.url+"/realms/acme/consent?authRequestID=nope", nil)
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
	p := b.do(req)
	if pageLang(p) != "de" || !strings.Contains(string(p.body), "Die Anmeldung ist nicht möglich") {
		t.Fatalf("German error page: %s", p.body)
	}
	// Without a preference: English.
	if p := b.get(e.url + "/realms/acme/consent?authRequestID=nope"); pageLang(p) != "en" {
		t.Fatal("default language")
	}

	// ui_locales on the authorization request carries over to the pages of
	// that sign-in, whatever the browser's own preference.
	b = e.browser()
	req, _ = http.NewRequest(http.MethodGet, authURL(oauth2.SetAuthURLParam("ui_locales", "sv de")), nil)
	req.Header.Set("Accept-Language", "en")
	p = b.do(req)
	for p.status == http.StatusFound || p.status == http.StatusSeeOther {
		next, _ := http.NewRequest(http.MethodGet, p.location(t).String(), nil)
		next.Header.Set("Accept-Language", "en")
		p = b.do(next)
	}
	if pageLang(p) != "de" || !strings.Contains(string(p.body), ">Passwort<") {
		t.Fatalf("login page after ui_locales=de: %s", p.body)
	}
	// A language without a catalogue changes nothing.
	b = e.browser()
	if p := b.follow(e.url, authURL(oauth2.SetAuthURLParam("ui_locales", "sv"))); pageLang(p) != "en" {
		t.Fatal("ui_locales=sv should leave English")
	}
}
