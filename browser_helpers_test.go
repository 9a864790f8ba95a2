package main

// The harness of the browser tests (browser_test.go): the real binary that
// TestMain built, driven by Debian's headless Chromium through chromedp, with
// axe-core checking every page of the server that a test lands on. Mail goes
// to a real SMTP server on loopback; a client's redirect URI is a real HTTP
// server on loopback. Every wait is bounded; no assertion depends on timing.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const (
	// browserAxeScript is axe-core as `npm ci --prefix testdata/browser` installs it.
	browserAxeScript = "testdata/browser/node_modules/axe-core/axe.min.js"

	// browserWaitBound caps one browser action, a mail's delivery or a
	// redirect's arrival: a safety net against hangs, never an expectation.
	browserWaitBound = 60 * time.Second
	// browserLifeBound caps a test's browser as a whole, for the same reason.
	browserLifeBound = 10 * time.Minute

	// browserViewport is the window every page is shown (and photographed) in.
	browserViewportWidth, browserViewportHeight = 800, 600

	// browserScreenshotsEnv names a directory: when set, each named step's
	// page is saved there as a full-page PNG (make screenshots).
	browserScreenshotsEnv = "IDENPLANE_SCREENSHOTS"

	browserPassword = "correct horse battery staple"
)

// browserNeeds finds Chromium and axe-core. Without them a browser test
// skips, saying what to install; under CI (CI=true) it fails instead, so
// that a machine that lost them cannot pass by running nothing.
func browserNeeds(t *testing.T) (chromium string, axe []byte) {
	t.Helper()
	var missing []string
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		missing = append(missing, "Chromium (apt-get install chromium)")
	}
	axe, err = os.ReadFile(browserAxeScript)
	if err != nil {
		missing = append(missing, "axe-core (npm ci --prefix testdata/browser)")
	}
	if len(missing) == 0 {
		return chromium, axe
	}
	msg := "browser tests need " + strings.Join(missing, " and ")
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return "", nil
}

// browserEnv is `idenplane serve` on a fresh database, with the admin API
// key set, and what a browser needs to visit it.
type browserEnv struct {
	t        *testing.T
	srv      *cliServer
	chromium string
	axe      string
}

func newBrowserEnv(t *testing.T) *browserEnv {
	t.Helper()
	chromium, axe := browserNeeds(t)
	srv := cliStartServer(t, filepath.Join(t.TempDir(), "idenplane.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	srv.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	return &browserEnv{t: t, srv: srv, chromium: chromium, axe: string(axe)}
}

// admin sends an admin API request, requires status want and decodes the
// answer into out unless out is nil.
func (e *browserEnv) admin(method, path string, body any, want int, out any) {
	e.t.Helper()
	data := e.srv.must(method, path, cliAPIKey, body, want)
	if out == nil {
		return
	}
	if err := json.Unmarshal(data, out); err != nil {
		e.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
	}
}

// realm creates a realm; fields are added to its name.
func (e *browserEnv) realm(name string, fields map[string]any) {
	e.t.Helper()
	body := map[string]any{"name": name}
	for k, v := range fields {
		body[k] = v
	}
	e.admin(http.MethodPost, "/admin/realms", body, http.StatusCreated, nil)
}

// putRealm replaces a realm's updatable fields with body: what body
// leaves out goes back to its default.
func (e *browserEnv) putRealm(name string, body map[string]any) {
	e.t.Helper()
	e.admin(http.MethodPut, "/admin/realms/"+name, body, http.StatusOK, nil)
}

// user creates a user and returns its ID.
func (e *browserEnv) user(realm string, fields map[string]any) string {
	e.t.Helper()
	var rep struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, "/admin/realms/"+realm+"/users", fields, http.StatusCreated, &rep)
	return rep.ID
}

// client creates a client and returns its secret ("" for a public one).
func (e *browserEnv) client(realm string, fields map[string]any) string {
	e.t.Helper()
	var rep struct {
		Secret string `json:"secret"`
	}
	e.admin(http.MethodPost, "/admin/realms/"+realm+"/clients", fields, http.StatusCreated, &rep)
	return rep.Secret
}

func (e *browserEnv) issuer(realm string) string { return e.srv.base + "/realms/" + realm }

// browserRP is a relying party as an application would have it: go-oidc
// discovered the realm, x/oauth2 speaks for the client.
type browserRP struct {
	t        *testing.T
	provider *oidc.Provider
	config   *oauth2.Config
}

func (e *browserEnv) relyingParty(realm, clientID, secret, redirect string, scopes ...string) *browserRP {
	e.t.Helper()
	provider, err := oidc.NewProvider(e.t.Context(), e.issuer(realm))
	if err != nil {
		e.t.Fatalf("discovery: %v", err)
	}
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = oauth2.AuthStyleInHeader
	if secret == "" {
		endpoint.AuthStyle = oauth2.AuthStyleInParams // a public client names itself in the form
	}
	return &browserRP{t: e.t, provider: provider, config: &oauth2.Config{ClientID: clientID, ClientSecret: secret,
		Endpoint: endpoint, RedirectURL: redirect, Scopes: scopes}}
}

// verify checks the ID token of tok (signature through the published keys,
// issuer, audience, expiry, nonce, at_hash) and returns its claims.
func (rp *browserRP) verify(tok *oauth2.Token, nonce string) (*oidc.IDToken, map[string]any) {
	rp.t.Helper()
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		rp.t.Fatalf("no id_token in the token response")
	}
	idt, err := rp.provider.Verifier(&oidc.Config{ClientID: rp.config.ClientID}).Verify(rp.t.Context(), raw)
	if err != nil {
		rp.t.Fatalf("verify ID token: %v", err)
	}
	if idt.Nonce != nonce {
		rp.t.Fatalf("ID token nonce %q, want %q", idt.Nonce, nonce)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		rp.t.Fatalf("at_hash: %v", err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		rp.t.Fatal(err)
	}
	return idt, claims
}

// browserCallback is a client's redirect URI: a server on loopback that
// hands each query it receives to the test and shows a plain page.
type browserCallback struct {
	t   *testing.T
	url string
	got chan url.Values
}

func newBrowserCallback(t *testing.T) *browserCallback {
	t.Helper()
	c := &browserCallback{t: t, got: make(chan url.Values, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case c.got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html lang="en"><title>Application</title><h1>Back in the application</h1></html>`)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL + "/callback"
	return c
}

// wait returns the next query the redirect URI received.
func (c *browserCallback) wait() url.Values {
	c.t.Helper()
	select {
	case q := <-c.got:
		return q
	case <-time.After(browserWaitBound):
		c.t.Fatalf("the redirect URI was never called")
		return nil
	}
}

// browserTab is one headless Chromium with one tab, its own profile, and
// an 800 px wide window.
type browserTab struct {
	t   *testing.T
	e   *browserEnv
	ctx context.Context
}

// browser is a fresh Chromium that takes the server's pages exactly as
// they come, Content-Security-Policy included.
func (e *browserEnv) browser() *browserTab {
	e.t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(e.chromium),
		chromedp.UserDataDir(e.t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// The machine's network is closed: nothing but the pages under test.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(browserViewportWidth, browserViewportHeight),
	}
	life, cancelLife := context.WithTimeout(context.Background(), browserLifeBound)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(life, opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	e.t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelLife()
	})
	b := &browserTab{t: e.t, e: e, ctx: ctx}
	// The first action starts the browser and binds it to ctx.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(browserViewportWidth, browserViewportHeight)); err != nil {
		e.t.Fatalf("start chromium: %v", err)
	}
	return b
}

// bounded is the tab's context capped by browserWaitBound.
func (b *browserTab) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, browserWaitBound)
}

func (b *browserTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (page %s)", what, err, b.location())
	}
}

func browserRun[T any](b *browserTab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// location is the address of the page shown, "" when unknown.
func (b *browserTab) location() string {
	ctx, cancel := b.bounded()
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// open loads u, follows its redirects, checks the page it lands on and
// returns the HTTP status of that page. step names the page's screenshot
// ("" for none).
func (b *browserTab) open(step, u string) int {
	b.t.Helper()
	resp := browserRun(b, "open "+u, chromedp.NavigateResponse(u))
	b.landed(step)
	return int(resp.Status)
}

// click clicks the button or link whose text is text, waits for the page it
// leads to, checks it and returns its HTTP status.
func (b *browserTab) click(step, text string) int {
	b.t.Helper()
	status, err := b.tryClick(step, text)
	if err != nil {
		b.t.Fatal(err)
	}
	return status
}

// tryClick is click that returns a failed navigation instead of failing.
func (b *browserTab) tryClick(step, text string) (int, error) {
	b.t.Helper()
	resp, err := b.tryClickResponse(step, text)
	if err != nil {
		return 0, err
	}
	return int(resp.Status), nil
}

// clickResponse is click that returns the response of the page the click
// leads to, headers and all.
func (b *browserTab) clickResponse(step, text string) *network.Response {
	b.t.Helper()
	resp, err := b.tryClickResponse(step, text)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp
}

func (b *browserTab) tryClickResponse(step, text string) (*network.Response, error) {
	b.t.Helper()
	if strings.Contains(text, `"`) {
		b.t.Fatalf("click %q: no double quotes in button texts, please", text)
	}
	sel := fmt.Sprintf(`//*[self::button or self::a][normalize-space(.)="%s"]`, text)
	ctx, cancel := b.bounded()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(sel))
	if err != nil {
		return nil, fmt.Errorf("click %q on %s: %w", text, b.location(), err)
	}
	if resp == nil {
		return nil, fmt.Errorf("click %q on %s: no page loaded", text, b.location())
	}
	b.landed(step)
	return resp, nil
}

// acceptLanguage has the tab ask for pages in lang from now on, as a
// browser set to that language does.
func (b *browserTab) acceptLanguage(lang string) {
	b.t.Helper()
	b.do("accept language "+lang, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders,
			network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}})
		return err
	}))
}

// browserEval is the value of the JavaScript expression js in the page,
// awaited when it is a promise.
func browserEval[T any](b *browserTab, what, js string) T {
	b.t.Helper()
	return browserRun(b, what, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// browserFetched is the answer to a fetch made from within the page.
type browserFetched struct {
	Status      int    `json:"status"`
	Type        string `json:"type"`
	Disposition string `json:"disposition"`
	Body        string `json:"body"`
}

// fetch gets path from within the page, as the page's own script would:
// same origin, with the browser's cookies. It stands in for downloads,
// which headless Chromium keeps out of reach.
func (b *browserTab) fetch(path string) browserFetched {
	b.t.Helper()
	return browserEval[browserFetched](b, "fetch "+path, fmt.Sprintf(`fetch(%s, {credentials: 'same-origin'}).then(async r => ({
		status: r.status, type: r.headers.get('Content-Type') || '', disposition: r.headers.get('Content-Disposition') || '',
		body: await r.text()}))`, jsString(path)))
}

// landed checks a page the server showed: axe-core over the whole
// document, then the screenshot. Pages of other servers (a client's
// redirect URI) are not ours to check.
func (b *browserTab) landed(step string) {
	b.t.Helper()
	loc := b.location()
	if !strings.HasPrefix(loc, b.e.srv.base+"/") {
		return
	}
	b.checkA11y(loc)
	b.screenshot(step)
}

// browserFieldID finds the control of the label whose text is its
// argument: the way a person (and a screen reader) finds a field.
const browserFieldID = `(want) => {
	const labels = [...document.querySelectorAll('label')].filter(l => l.textContent.trim() === want);
	if (labels.length !== 1 || !labels[0].control || !labels[0].control.id) {
		return 'no single labelled field; labels: ' + JSON.stringify([...document.querySelectorAll('label')].map(l => l.textContent.trim()));
	}
	return '#' + labels[0].control.id;
}`

// field returns the id selector of the input labelled label.
func (b *browserTab) field(label string) chromedp.ID {
	b.t.Helper()
	ref := browserRun(b, "find field "+label, chromedp.Evaluate[string](fmt.Sprintf("(%s)(%s)", browserFieldID, jsString(label))))
	if !strings.HasPrefix(ref, "#") {
		b.t.Fatalf("field %q on %s: %s", label, b.location(), ref)
	}
	return chromedp.ID(strings.TrimPrefix(ref, "#"))
}

// fill types value into the field labelled label, replacing what it held.
func (b *browserTab) fill(label, value string) {
	b.t.Helper()
	id := b.field(label)
	// Not SetValue(id, ""): chromedp v0.23.0 passes an empty string
	// argument as undefined, and the field would read "undefined".
	b.do("fill "+label, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%s).value = ''`, jsString(string(id)))),
		chromedp.SendKeys(id, value))
}

// value is what the field labelled label holds.
func (b *browserTab) value(label string) string {
	b.t.Helper()
	// By getElementById: an ID may hold dots (config.claim.value), which a
	// selector would read as classes.
	id := b.field(label)
	return browserEval[string](b, "value of "+label, fmt.Sprintf(`document.getElementById(%s).value`, jsString(string(id))))
}

// errorOf is the text of what the field labelled label names with
// aria-describedby, and whether it is marked aria-invalid.
func (b *browserTab) errorOf(label string) (string, bool) {
	b.t.Helper()
	id := b.field(label)
	js := fmt.Sprintf(`(() => {
		const f = document.getElementById(%s);
		const ids = (f.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
		return {text: ids.map(i => document.getElementById(i)).filter(Boolean).map(n => n.textContent.trim()).join(' '),
			invalid: f.getAttribute('aria-invalid') === 'true'};
	})()`, jsString(string(id)))
	res := browserRun(b, "error of "+label, chromedp.Evaluate[struct {
		Text    string `json:"text"`
		Invalid bool   `json:"invalid"`
	}](js))
	return res.Text, res.Invalid
}

// heading is the text of the page's h1.
func (b *browserTab) heading() string {
	b.t.Helper()
	return strings.TrimSpace(browserRun(b, "heading", chromedp.Text(chromedp.CSS("h1"))))
}

// alerts are the texts of the elements with role alert.
func (b *browserTab) alerts() []string {
	b.t.Helper()
	return browserRun(b, "alerts", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[role=alert]')].map(n => n.textContent.trim())`))
}

// text is what the page shows, as a person reads it.
func (b *browserTab) text() string {
	b.t.Helper()
	return browserRun(b, "page text", chromedp.Evaluate[string](`document.body.innerText`))
}

// mustShow fails unless the page shows each of want.
func (b *browserTab) mustShow(want ...string) {
	b.t.Helper()
	text := b.text()
	for _, w := range want {
		if !strings.Contains(text, w) {
			b.t.Errorf("page %s does not show %q; it shows:\n%s", b.location(), w, text)
		}
	}
}

func jsString(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}

// screenshot saves the page as dir/step.png when browserScreenshotsEnv
// names a directory.
func (b *browserTab) screenshot(step string) {
	b.t.Helper()
	dir := os.Getenv(browserScreenshotsEnv)
	if dir == "" || step == "" {
		return
	}
	png, err := browserSmallPNG(browserRun(b, "screenshot "+step, chromedp.FullScreenshot(100)))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", step, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, step+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
