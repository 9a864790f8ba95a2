package main

// The first-run setup wizard in a real browser: the server prints the
// wizard's address with the bootstrap token in its fragment, Chromium
// opens it, and a person walks every step of the page, with a real SMTP
// server taking the test email. Every page passes axe-core, and the
// browser reports no error: no script failing, nothing the pages'
// Content-Security-Policy refused.

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var browserSetupURL = regexp.MustCompile(`open (http://\S+/setup-wizard#token=[A-Za-z0-9_-]+)`)

// browserConsole collects what the browser reports as errors: console
// errors, uncaught exceptions, and log entries such as a refusal of the
// Content-Security-Policy.
type browserConsole struct {
	mu       sync.Mutex
	problems []string
}

func (b *browserTab) watchConsole() *browserConsole {
	b.t.Helper()
	c := &browserConsole{}
	add := func(format string, args ...any) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
	if err := chromedp.Listen(b.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				add("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			add("exception: %s", ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			// A page answered with an error status (a form refused, the
			// wizard closed) is the test's own doing, not the page's.
			if ev.Entry.Source != log.EntrySourceNetwork &&
				(ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning) {
				add("%s %s: %s (%s)", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
			}
		}
	}); err != nil {
		b.t.Fatalf("listen to the browser: %v", err)
	}
	b.do("enable the log", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, log.Enable, cdp.Empty{})
		return err
	}))
	return c
}

// reported is what the browser reported so far.
func (c *browserConsole) reported() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.problems)
}

// check fails with each thing the browser reported, then shows that the
// watch sees a refusal of the policy at all: an inline script, which the
// pages' policy refuses, must be reported.
func (c *browserConsole) check(t *testing.T, b *browserTab) {
	t.Helper()
	for _, p := range c.reported() {
		t.Errorf("the browser reported: %s", p)
	}
	b.do("add an inline script", chromedp.Evaluate[chromedp.Void](
		`document.head.appendChild(Object.assign(document.createElement('script'), {textContent: 'window.inlineRan = true'}))`))
	deadline := time.Now().Add(browserWaitBound)
	for !slices.ContainsFunc(c.reported(), func(p string) bool { return strings.Contains(p, "Content Security Policy") }) {
		if time.Now().After(deadline) {
			t.Fatalf("an inline script refused by the policy was not reported: %q", c.reported())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if browserEval[bool](b, "inline ran", `window.inlineRan === true`) {
		t.Fatal("the page's policy let an inline script run")
	}
}

func TestBrowserSetupWizard(t *testing.T) {
	e := newBrowserEnv(t)
	m := browserSetupURL.FindStringSubmatch(e.srv.waitStdoutLine("Setup wizard"))
	if m == nil {
		t.Fatalf("no wizard address printed:\n%s", e.srv.stdout)
	}
	mailbox := newBrowserMailbox(t)
	b := e.browser()
	console := b.watchConsole()

	// The printed address: setup.js takes the token from the fragment
	// into the form, and sends it.
	b.open("setup-token", m[1])
	b.do("wait for the first step", chromedp.WaitVisible(`#username`))
	b.landed("setup-admin")
	if loc := b.location(); strings.Contains(loc, "token=") {
		t.Errorf("the token stayed in the address: %s", loc)
	}

	// The administrator: a weak password is refused beside its field.
	b.fill("Username", "alice")
	b.fill("Password", "weak")
	b.fill("Repeat the password", "weak")
	if status := b.click("setup-admin-weak", "Save and continue"); status != http.StatusBadRequest {
		t.Fatalf("a weak password: status %d", status)
	}
	if msg, invalid := b.errorOf("Password"); !invalid || !strings.Contains(msg, "too weak") {
		t.Fatalf("the weak password's error: %q (invalid %v)", msg, invalid)
	}
	b.fill("Password", "Tr0ub4dor&3-horse")
	b.fill("Repeat the password", "Tr0ub4dor&3-horse")
	b.click("setup-realm", "Save and continue")

	// The realm.
	b.fill("Realm name", "acme")
	b.fill("Display name", "Acme Corp")
	b.check("People may register themselves")
	b.click("setup-smtp", "Save and continue")
	var realm struct {
		DisplayName         string `json:"displayName"`
		RegistrationAllowed bool   `json:"registrationAllowed"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme", nil, http.StatusOK, &realm)
	if realm.DisplayName != "Acme Corp" || !realm.RegistrationAllowed {
		t.Fatalf("realm %+v", realm)
	}

	// Outgoing mail, and a test message through it.
	b.fill("SMTP server", mailbox.host)
	b.fill("Port (empty: 587, or 465 with TLS)", strconv.Itoa(mailbox.port))
	b.fill("Sender address", "noreply@acme.test")
	b.click("setup-smtp-saved", "Save and continue")
	b.fill("Recipient", "ops@example.test")
	b.click("setup-smtp-tested", "Send test email")
	b.mustShow("Test email sent to ops@example.test.")
	if got := mailbox.next(); got.subject != "Test email from Acme Corp" {
		t.Fatalf("the test email: %+v", got)
	}
	b.click("setup-client", "Continue")

	// The application, and its code.
	b.fill("Client ID", "shop")
	b.choose("Kind of application", "Single-page app in the browser (public client, PKCE)")
	b.fill("Redirect URI", "https://shop.example.test/callback")
	b.click("setup-sdk", "Save and continue")
	b.click("setup-sdk-shown", "Show the code")
	b.mustShow("oidc-client-ts", "golang.org/x/oauth2", "authlib", `"https://shop.example.test/callback"`, e.issuer("acme"))
	b.click("setup-complete", "Continue")
	b.mustShow("alice", "acme", "shop")

	b.click("setup-completed", "Complete setup")
	b.mustShow("Setup is complete.")
	// Closed for good: the page and the API answer 410.
	if status := b.open("", e.srv.base+"/setup-wizard"); status != http.StatusGone {
		t.Fatalf("the wizard after completion: %d", status)
	}
	e.srv.must(http.MethodGet, "/setup-wizard/status", "", nil, http.StatusGone)
	console.check(t, b)
}
