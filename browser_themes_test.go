package main

// A published theme as Chromium renders it: the realm's sign-in page wears
// the theme's colour, radius, texts and logo, under the pages' own
// Content-Security-Policy (nothing refused), and passes axe-core.

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"
)

// browserCSPWatch records, from before any page's own script, every
// Content-Security-Policy violation a page reports.
const browserCSPWatch = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`

// upload sends data as the file of a theme image upload, answering the
// image's ID.
func (e *browserEnv) upload(realm string, data []byte) string {
	e.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", "logo.png")
	if err != nil {
		e.t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	req, err := http.NewRequest(http.MethodPost, e.srv.base+"/admin/realms/"+realm+"/themes/assets/upload", &body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Admin-API-Key", cliAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	var asset struct{ ID string }
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(answer, &asset) != nil {
		e.t.Fatalf("upload: %d %s", resp.StatusCode, answer)
	}
	return asset.ID
}

// consoleErrors collects what the tab logs at the error level from now on.
func (b *browserTab) consoleErrors() func() []string {
	b.t.Helper()
	var (
		mu     sync.Mutex
		errors []string
	)
	entries := chromedp.Events(b.ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return // the tab is gone
			}
			if ev.Entry.Level == cdplog.EntryLevelError {
				mu.Lock()
				errors = append(errors, string(ev.Entry.Source)+": "+ev.Entry.Text)
				mu.Unlock()
			}
		}
	}()
	b.do("watch the console", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, cdplog.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: browserCSPWatch})
		return err
	}))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errors...)
	}
}

// TestBrowserPublishedTheme: a theme published and picked as the realm's
// loginTheme dresses the sign-in page in Chromium.
func TestBrowserPublishedTheme(t *testing.T) {
	e := newBrowserEnv(t)
	e.realm("acme", map[string]any{"displayName": "Acme"})
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	img := image.NewRGBA(image.Rect(0, 0, 96, 32))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(1, 1, color.RGBA{11, 95, 255, 255})
	var logo bytes.Buffer
	if err := png.Encode(&logo, img); err != nil {
		t.Fatal(err)
	}
	assetID := e.upload("acme", logo.Bytes())
	var theme struct{ ID string }
	e.admin(http.MethodPost, "/admin/realms/acme/themes", map[string]any{"name": "brand", "preset": "idenplane",
		"tokens": map[string]any{"colors": map[string]any{"primary": "#0b5fff"}, "radius": map[string]any{"control": "6px"}},
		"logo":   map[string]any{"assetId": assetID}, "favicon": map[string]any{"assetId": assetID},
		"messages": map[string]any{"en": map[string]any{"login.title": "Welcome to Acme"}}}, http.StatusCreated, &theme)
	e.admin(http.MethodPost, "/admin/realms/acme/themes/"+theme.ID+"/publish", nil, http.StatusCreated, nil)
	e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"loginTheme": "brand"}, http.StatusOK, nil)

	b := e.browser()
	consoleErrors := b.consoleErrors()
	// open checks the page with axe-core.
	b.open("login-theme", rp.config.AuthCodeURL("state-theme", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if h := b.heading(); h != "Welcome to Acme" {
		t.Errorf("heading %q, want the theme's", h)
	}
	for _, c := range []struct{ sel, prop, want string }{
		{`button[type=submit]`, "background-color", "rgb(11, 95, 255)"},
		{`button[type=submit]`, "color", "rgb(255, 255, 255)"},
		{`button[type=submit]`, "border-top-left-radius", "6px"},
		{`body`, "--primary", "#0b5fff"},
	} {
		if got := strings.TrimSpace(b.style(c.sel, c.prop)); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.sel, c.prop, got, c.want)
		}
	}
	width := browserEval[int](b, "the logo", `(async () => {
		const img = document.querySelector('header.realm img.logo');
		if (!img) return -1;
		if (!img.complete) await new Promise(done => { img.onload = done; img.onerror = done; });
		return img.naturalWidth;
	})()`)
	if width != 96 {
		t.Errorf("the logo's width %d, want the uploaded image's 96", width)
	}
	if src := browserEval[string](b, "the logo's address", `document.querySelector('img.logo').getAttribute('src')`); src != "/realms/acme/themes/assets/"+assetID {
		t.Errorf("logo src %q", src)
	}
	if v := browserEval[[]string](b, "CSP violations", `window.__cspViolations || ['the watch did not run']`); len(v) != 0 {
		t.Errorf("Content-Security-Policy violations: %q", v)
	}
	for _, msg := range consoleErrors() {
		if strings.Contains(msg, "Content Security Policy") || strings.HasPrefix(msg, "security:") {
			t.Errorf("console: %s", msg)
		}
	}
}
