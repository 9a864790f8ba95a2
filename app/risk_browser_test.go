package app

// A risk policy seen from a real browser: headless Chromium (Debian's
// chromium, driven by chromedp) signs in to the client web of riskEnv,
// whose redirect URI the test answers itself inside the browser, so that
// nothing leaves the machine.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// riskChromiumWait caps one browser action: a safety net against hangs,
// never an expectation.
const riskChromiumWait = 60 * time.Second

// riskPKCEVerifier is the code verifier of the browser's authorization
// requests (RFC 7636, appendix B).
const riskPKCEVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// riskBrowserAuthURL is authURL with the challenge of riskPKCEVerifier,
// so that the code the browser brings back can be redeemed.
func (e *riskEnv) riskBrowserAuthURL() string {
	e.t.Helper()
	u, err := url.Parse(e.authURL())
	if err != nil {
		e.t.Fatal(err)
	}
	q := u.Query()
	sum := sha256.Sum256([]byte(riskPKCEVerifier))
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	u.RawQuery = q.Encode()
	return u.String()
}

// riskNeedsChromium finds Chromium. Without it the test skips, saying
// what to install; under CI (CI=true) it fails instead, so that a
// machine that lost it cannot pass by running nothing.
func riskNeedsChromium(t *testing.T) string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err == nil {
		return chromium
	}
	const msg = "this test needs Chromium (apt-get install chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// riskTab is one tab of a headless Chromium. Its requests reach the
// server through the trusted proxy from riskParis; its navigations to
// the client's redirect URI are answered with a plain page, and their
// URLs handed to the test.
type riskTab struct {
	t    *testing.T
	e    *riskEnv
	ctx  context.Context
	back chan string // the redirect URIs the tab was sent to, query and all
}

// riskChromium starts a headless Chromium with a profile of its own and
// answers its first tab.
func (e *riskEnv) riskChromium() *riskTab {
	e.t.Helper()
	chromium := riskNeedsChromium(e.t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
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
	}
	life, cancelLife := context.WithTimeout(context.Background(), 5*time.Minute)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(life, opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	e.t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelLife()
	})
	return e.riskTabIn(ctx)
}

// freshContext is a tab of the same Chromium in a browser context of its
// own: no cookie of the first tab's profile, as another browser.
func (b *riskTab) freshContext() *riskTab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	return b.e.riskTabIn(ctx)
}

// riskTabIn makes the tab of ctx answer the redirect URI and send its
// requests from riskParis.
func (e *riskEnv) riskTabIn(ctx context.Context) *riskTab {
	e.t.Helper()
	tab := &riskTab{t: e.t, e: e, ctx: ctx, back: make(chan string, 8)}
	// Subscribed before the interception starts: no paused request is missed.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	tab.do("intercept the redirect URI", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: codeflowRedirect + "*"}}})
		return err
	}), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"X-Forwarded-For": riskParis}})
		return err
	}))
	target := chromedp.FromContext(ctx).Target
	go func() {
		for ev, err := range paused {
			if err != nil {
				return // the tab is gone
			}
			select {
			case tab.back <- ev.Request.URL:
			default:
			}
			_, _ = cdp.Call(ctx, target, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: 200,
				ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}},
				Body:            []byte(`<!DOCTYPE html><html lang="en"><title>Application</title><h1>Back in the application</h1></html>`)})
		}
	}()
	return tab
}

func (b *riskTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, riskChromiumWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func riskTabRun[T any](b *riskTab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, riskChromiumWait)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// open loads u, following its redirects, and answers the status of the
// page it lands on.
func (b *riskTab) open(u string) int {
	b.t.Helper()
	return int(riskTabRun(b, "open "+u, chromedp.NavigateResponse(u)).Status)
}

// submit types values into the fields they name, clicks the submit button
// of the form that holds the first, and answers the status of the page the
// click leads to, after its redirects.
func (b *riskTab) submit(values [][2]string) int {
	b.t.Helper()
	for _, v := range values {
		b.do("type "+v[0], chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`form input[name=%q]`, v[0])), v[1]))
	}
	button := chromedp.CSS(fmt.Sprintf(`form:has(input[name=%q]) button[type="submit"]`, values[0][0]))
	ctx, cancel := context.WithTimeout(b.ctx, riskChromiumWait)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(button))
	if err != nil || resp == nil {
		b.t.Fatalf("submit %s: %v (page %s)", values[0][0], err, b.location())
	}
	return int(resp.Status)
}

// location is the address of the page shown.
func (b *riskTab) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, riskChromiumWait)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// heading is the text of the page's h1.
func (b *riskTab) heading() string {
	b.t.Helper()
	return strings.TrimSpace(riskTabRun(b, "heading", chromedp.Text(chromedp.CSS("h1"))))
}

// fields are the names of the fields a person sees in the page's forms:
// visible inputs, hidden ones left out.
func (b *riskTab) fields() []string {
	b.t.Helper()
	return riskTabRun(b, "fields", chromedp.Evaluate[[]string](`[...document.querySelectorAll('form input')]
		.filter(i => i.type !== 'hidden' && i.getClientRects().length > 0).map(i => i.name)`))
}

// deviceCookie is the value of the tab's IDENPLANE_DEVICE cookie for acme,
// "" without one.
func (b *riskTab) deviceCookie() string {
	b.t.Helper()
	var value string
	b.do("cookies", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{URLs: []string{b.e.issuer("acme") + "/"}})
		if err != nil {
			return err
		}
		for _, c := range res.Cookies {
			if c.Name == "IDENPLANE_DEVICE" {
				if !c.HTTPOnly || c.Path != "/realms/acme/" {
					return fmt.Errorf("device cookie %+v: want HttpOnly, path /realms/acme/", c)
				}
				value = c.Value
			}
		}
		return nil
	}))
	return value
}

// backAtClient checks that the tab was sent to the client's redirect URI
// and shows the page there, and answers the authorization code.
func (b *riskTab) backAtClient() string {
	b.t.Helper()
	var got string
	select {
	case got = <-b.back:
	case <-time.After(riskChromiumWait):
		b.t.Fatalf("the redirect URI was never asked for; the tab shows %s", b.location())
	}
	u, err := url.Parse(got)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != codeflowRedirect {
		b.t.Fatalf("sent to %s, want %s", got, codeflowRedirect)
	}
	if loc := b.location(); loc != got {
		b.t.Fatalf("the tab shows %s, want the redirect URI %s", loc, got)
	}
	if u.Query().Get("state") != "s" || u.Query().Get("code") == "" {
		b.t.Fatalf("back at the client without a code: %s", got)
	}
	return u.Query().Get("code")
}

// riskAMR redeems a code of web and answers the amr of its ID token.
func (e *riskEnv) riskAMR(code string) []string {
	e.t.Helper()
	status, body := e.tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {"web"},
		"redirect_uri": {codeflowRedirect}, "code_verifier": {riskPKCEVerifier}})
	if status != http.StatusOK {
		e.t.Fatalf("code exchange: %d %v", status, body)
	}
	_, claims := jwtParts(e.t, body["id_token"].(string))
	var amr []string
	for _, m := range claims["amr"].([]any) {
		amr = append(amr, m.(string))
	}
	slices.Sort(amr)
	return amr
}

// Under a policy that asks new devices for a second factor, Chromium
// signs alice in three times: once in a profile of its own (her first
// sign-in: nothing to compare with, so no new device, and no code asked);
// then from a fresh browser context, without the device cookie, which the
// policy sends to the TOTP page, and whose right code brings it back to
// the client; then in the first profile again, whose cookie the server
// knows: the password alone. The assessments say the same.
func TestRiskBrowserNewDeviceSecondFactor(t *testing.T) {
	riskNeedsChromium(t) // before the server is made
	e := newRiskEnv(t)
	known := e.riskChromium()
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	mfa := e.policy(map[string]any{"name": "new devices give a code", "priority": 10,
		"conditions": map[string]any{"signals": []string{"new_device"}}, "action": "mfa"})
	password := [][2]string{{"username", "alice"}, {"password", codeflowPassword}}

	// The first sign-in, in the first profile: the password, and back.
	e.clock.advance(time.Minute)
	if status := known.open(e.riskBrowserAuthURL()); status != http.StatusOK {
		t.Fatalf("the authorization request: status %d at %s", status, known.location())
	}
	if f := known.fields(); !slices.Contains(f, "username") || !slices.Contains(f, "password") || slices.Contains(f, "code") {
		t.Fatalf("the flow's first page shows the fields %v, want username and password", f)
	}
	known.submit(password)
	if amr := e.riskAMR(known.backAtClient()); !slices.Equal(amr, []string{"pwd"}) {
		t.Fatalf("the first sign-in's amr %v, want pwd alone", amr)
	}
	first := e.latest()
	riskMustState(t, first, "new_device", "absent") // nothing to compare with
	if first["action"] != "allow" || first["outcome"] != "succeeded" || first["userAgent"] != "Chrome on Linux" ||
		first["ipAddress"] != riskParis {
		t.Fatalf("the first sign-in's assessment %v", first)
	}
	device := known.deviceCookie()
	if len(device) < 22 {
		t.Fatalf("no device cookie after the first sign-in: %q", device)
	}

	// Another browser: no device cookie, a new device, the TOTP page.
	e.clock.advance(time.Hour)
	fresh := known.freshContext()
	if c := fresh.deviceCookie(); c != "" {
		t.Fatalf("a fresh browser context has the device cookie %q", c)
	}
	if status := fresh.open(e.riskBrowserAuthURL()); status != http.StatusOK {
		t.Fatalf("the authorization request in a fresh context: status %d at %s", status, fresh.location())
	}
	if status := fresh.submit(password); status != http.StatusOK {
		t.Fatalf("the password of a new device: status %d at %s", status, fresh.location())
	}
	if loc := fresh.location(); !strings.HasPrefix(loc, e.issuer("acme")+"/signin/") {
		t.Fatalf("after the password, a new device is at %s, want a page of the sign-in", loc)
	}
	if h, f := fresh.heading(), fresh.fields(); h != "Two-factor authentication" || !slices.Equal(f, []string{"code"}) {
		t.Fatalf("after the password, a new device sees %q with the fields %v, want the TOTP form (code)", h, f)
	}
	if c := fresh.deviceCookie(); len(c) < 22 || c == device {
		t.Fatalf("the new device's cookie %q (the first profile's %q)", c, device)
	}
	pending := e.latest()
	if pending["outcome"] != "pending" || pending["action"] != "mfa" {
		t.Fatalf("the new device's assessment before the code: %v", pending)
	}
	fresh.submit([][2]string{{"code", totpTestCode(t, secret, e.clock.now())}})
	if amr := e.riskAMR(fresh.backAtClient()); !slices.Equal(amr, []string{"otp", "pwd"}) {
		t.Fatalf("the new device's amr %v, want pwd and otp", amr)
	}
	stepped := e.latest()
	riskMustState(t, stepped, "new_device", "present")
	riskMustState(t, stepped, "new_ip", "absent")
	if stepped["id"] != pending["id"] || stepped["action"] != "mfa" || stepped["policyId"] != mfa ||
		stepped["policyName"] != "new devices give a code" || stepped["outcome"] != "succeeded" || stepped["score"] != float64(20) {
		t.Fatalf("the new device's assessment %v", stepped)
	}

	// The first profile again: its cookie is known, the password is enough.
	e.clock.advance(time.Hour)
	if status := known.open(e.riskBrowserAuthURL()); status != http.StatusOK {
		t.Fatalf("the authorization request again: status %d at %s", status, known.location())
	}
	known.submit(password)
	if amr := e.riskAMR(known.backAtClient()); !slices.Equal(amr, []string{"pwd"}) {
		t.Fatalf("the known device's amr %v, want pwd alone", amr)
	}
	again := e.latest()
	riskMustState(t, again, "new_device", "absent")
	if again["action"] != "allow" || again["policyId"] != nil || again["outcome"] != "succeeded" || again["score"] != float64(0) {
		t.Fatalf("the known device's assessment %v", again)
	}

	// The three, newest first; the filter by signal finds the new device.
	var list []map[string]any
	r := e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?user="+e.aliceID, nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &list)
	if len(list) != 3 || list[0]["id"] != again["id"] || list[1]["id"] != stepped["id"] || list[2]["id"] != first["id"] {
		t.Fatalf("alice's assessments %v", list)
	}
	r = e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?signal=new_device", nil)
	mustStatus(t, r, http.StatusOK)
	r.decode(t, &list)
	if len(list) != 1 || list[0]["id"] != stepped["id"] {
		t.Fatalf("assessments with new_device present: %v", list)
	}
}
