package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

var (
	flowTestEmailCode = map[string]any{"kind": "email-otp", "requirement": "required"}
	flowTestTerms     = map[string]any{"kind": "terms", "requirement": "required"}
	// emailCodePattern finds the code in the text of the English mail.
	emailCodePattern = regexp.MustCompile(`Your code: (\d{6})`)
)

// emailCodeSent delivers the outbox and answers the code of the newest
// of the mails to, as a real SMTP server received it: the count-th mail
// to that address.
func emailCodeSent(e *codeflowEnv, smtp *apptest.SMTPServer, to string, count int) string {
	e.t.Helper()
	e.app.mail.DeliverDue(e.t.Context())
	var texts []string
	deadline := time.Now().Add(time.Minute)
	for len(texts) < count {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d mails to %s arrived, want %d", len(texts), to, count)
		}
		smtp.WaitFor(e.t, to)
		texts = texts[:0]
		for _, m := range smtp.Received() {
			if len(m.To) == 1 && m.To[0] == to {
				texts = append(texts, m.Text(e.t))
			}
		}
	}
	if len(texts) != count {
		e.t.Fatalf("%d mails to %s, want %d", len(texts), to, count)
	}
	code := emailCodePattern.FindStringSubmatch(texts[count-1])
	if code == nil {
		e.t.Fatalf("no code in the mail: %s", texts[count-1])
	}
	return code[1]
}

// A flow of a password and a code by email: the code arrives through the
// realm's SMTP server; a wrong code, a code a newer one replaced and a
// code asked again too soon are refused, each for its reason; the right
// code signs in, once.
func TestFlowPasswordAndEmailCode(t *testing.T) {
	smtp := apptest.StartSMTPServer(t, &apptest.SMTPServer{}, nil, false, false)
	e := recoveryEnv(t, func(r *store.Realm) { r.SMTPHost, r.SMTPPort = smtp.Host, smtp.Port })
	const alice = "alice@example.test"
	if err := e.store.MarkEmailVerified(t.Context(), e.realmID(), e.aliceID, alice); err != nil {
		t.Fatal(err)
	}
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-email", flowTestPassword, flowTestEmailCode)
	e.eventsOn()

	b := e.browser()
	page := e.flowTestNext(b, b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s1")), map[string]string{"username": "alice", "password": codeflowPassword}))
	if f := page.form(t); !f.fields.Has("code") || f.buttons.Get("resend") == "" {
		t.Fatalf("the flow's second page is no email code form: %v %v", f.fields, f.buttons)
	}
	recoveryMustContain(t, page, http.StatusOK, "a***@example.test")
	first := emailCodeSent(e, smtp, alice, 1)
	// Coming back to the page sends no second mail.
	if p := b.get(page.url.String()); p.status != http.StatusOK || len(recoveryOutbox(e)) != 0 {
		t.Fatalf("the page again: status %d, %d mails queued; want 200 and none", p.status, len(recoveryOutbox(e)))
	}

	// Another code at once is refused, saying when to ask again.
	p := b.submit(page, map[string]string{"resend": "1"})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "30" {
		t.Fatalf("a new code at once: status %d Retry-After %q, want 429 and 30", p.status, p.header.Get("Retry-After"))
	}
	recoveryMustContain(t, p, http.StatusTooManyRequests, "A code was sent a moment ago")
	e.clock.advance(31 * time.Second)
	recoveryMustContain(t, b.submit(page, map[string]string{"resend": "1"}), http.StatusOK, "A new code is on its way")
	second := emailCodeSent(e, smtp, alice, 2)

	// A wrong code is refused as wrong, and recorded.
	wrong := "000000"
	if wrong == second {
		wrong = "000001"
	}
	recoveryMustContain(t, b.submit(page, map[string]string{"code": wrong}), http.StatusUnauthorized, "The code is wrong")
	if errs := e.loginEvents("LOGIN_ERROR"); len(errs) != 1 || errs[0].Error != "invalid_email_code" || errs[0].UserID != e.aliceID {
		t.Fatalf("LOGIN_ERROR events %+v, want an invalid_email_code of alice", errs)
	}
	// The code the new one replaced no longer works.
	if first != second {
		recoveryMustContain(t, b.submit(page, map[string]string{"code": first}), http.StatusUnauthorized, "The code is wrong")
	}

	done := b.submit(page, map[string]string{"code": second})
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(done)), "pwd", "otp")
	// The same code again finds the sign-in over.
	if p := b.submit(page, map[string]string{"code": second}); p.status != http.StatusBadRequest {
		t.Fatalf("the code used twice: status %d, want 400", p.status)
	}
}

// Five wrong codes void the code: the right one is then refused as
// expired, and a new code must be sent.
func TestFlowEmailCodeVoidedByWrongCodes(t *testing.T) {
	smtp := apptest.StartSMTPServer(t, &apptest.SMTPServer{}, nil, false, false)
	e := recoveryEnv(t, func(r *store.Realm) { r.SMTPHost, r.SMTPPort = smtp.Host, smtp.Port })
	const alice = "alice@example.test"
	if err := e.store.MarkEmailVerified(t.Context(), e.realmID(), e.aliceID, alice); err != nil {
		t.Fatal(err)
	}
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-email", flowTestPassword, flowTestEmailCode)
	b := e.browser()
	page := e.flowTestNext(b, b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s1")), map[string]string{"username": "alice", "password": codeflowPassword}))
	code := emailCodeSent(e, smtp, alice, 1)
	wrong := "000000"
	if wrong == code {
		wrong = "000001"
	}
	for range 5 {
		recoveryMustContain(t, b.submit(page, map[string]string{"code": wrong}), http.StatusUnauthorized, "The code is wrong")
	}
	recoveryMustContain(t, b.submit(page, map[string]string{"code": code}), http.StatusUnauthorized, "This code no longer works")
}

// A user the email code step cannot reach (no email address) is told so
// on a page, never left at a dead end.
func TestFlowEmailCodeUserWithoutEmail(t *testing.T) {
	e := newCodeflowEnv(t)
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-email", flowTestPassword, flowTestEmailCode)
	b := e.browser()
	p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "bob", "password": codeflowPassword})
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "administrator") {
		t.Fatalf("a user without an email: status %d, body %s; want 403 and a page saying what to do", p.status, p.body)
	}
}

// A flow of a password and the realm's terms: the first sign-in shows the
// terms and records their acceptance, the next skips them, a new version
// shows them again, and declining ends the sign-in on a page saying so.
func TestFlowPasswordAndTerms(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-terms", flowTestPassword, flowTestTerms)
	e.eventsOn()
	setTerms := func(version string) {
		t.Helper()
		r := e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"termsText": "Be kind.\n\nNo spam.", "termsVersion": version})
		mustStatus(t, r, http.StatusOK)
		if got := r.object(t); got["termsText"] != "Be kind.\n\nNo spam." || got["termsVersion"] != version {
			t.Fatalf("the realm's terms: %v %v", got["termsText"], got["termsVersion"])
		}
	}
	setTerms("v1")
	password := func() (*codeflowBrowser, *codeflowPage) {
		b := e.browser()
		return b, b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	}
	accepted := func(version string) bool {
		_, err := e.store.TermsAcceptedAt(t.Context(), e.realmID(), e.aliceID, version)
		return err == nil
	}

	b, p := password()
	terms := e.flowTestNext(b, p)
	recoveryMustContain(t, terms, http.StatusOK, "No spam.")
	if f := terms.form(t); f.fields.Get("version") != "v1" || f.buttons["decision"] == nil {
		t.Fatalf("the terms page's form: %v %v", f.fields, f.buttons)
	}
	if accepted("v1") {
		t.Fatal("terms recorded as accepted before the user accepted them")
	}
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(b.submit(terms, map[string]string{"decision": "accept"}))), "pwd")
	if !accepted("v1") {
		t.Fatal("the acceptance was not recorded")
	}

	// Accepted: the next sign-in skips them.
	_, p = password()
	e.redirectedBack(p)

	// A new version is shown again; declining it ends the sign-in.
	setTerms("v2")
	b, p = password()
	terms = e.flowTestNext(b, p)
	recoveryMustContain(t, terms, http.StatusOK, "No spam.")
	recoveryMustContain(t, b.submit(terms, map[string]string{"decision": "decline"}), http.StatusForbidden, "You declined the terms")
	if errs := e.loginEvents("LOGIN_ERROR"); len(errs) != 1 || errs[0].Error != "rejected_by_user" || errs[0].UserID != e.aliceID {
		t.Fatalf("LOGIN_ERROR events %+v, want a rejected_by_user of alice", errs)
	}
	if p := b.get(terms.url.String()); p.status != http.StatusBadRequest {
		t.Fatalf("the page of a declined sign-in: status %d, want 400", p.status)
	}
	if accepted("v2") {
		t.Fatal("declined terms recorded as accepted")
	}

	// Terms changed while read are not accepted unread.
	b, p = password()
	terms = e.flowTestNext(b, p)
	setTerms("v3")
	recoveryMustContain(t, b.submit(terms, map[string]string{"decision": "accept"}), http.StatusConflict, "The terms changed")
	if accepted("v2") || accepted("v3") {
		t.Fatal("terms accepted that were not the ones shown")
	}
}

// A terms step in a realm without terms cannot be passed: the person is
// told on a page, never signed in past terms nobody wrote.
func TestFlowTermsWithoutTerms(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-terms", flowTestPassword, flowTestTerms)
	b := e.browser()
	p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "administrator") {
		t.Fatalf("terms without terms: status %d, body %s; want 403 and a page saying what to do", p.status, p.body)
	}
}

// A realm that cannot send mail answers the email code step with a page
// saying so, and stores no code.
func TestFlowEmailCodeWithoutMail(t *testing.T) {
	e := newCodeflowEnv(t)
	if err := e.store.MarkEmailVerified(t.Context(), e.realmID(), e.aliceID, "alice@example.test"); err != nil {
		t.Fatal(err)
	}
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestBind("web", "password-and-email", flowTestPassword, flowTestEmailCode)
	b := e.browser()
	p := b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	p = b.follow(e.url, p.location(t).String())
	recoveryMustContain(t, p, http.StatusServiceUnavailable, "cannot send mail")
	flowID := strings.TrimPrefix(p.url.Path, "/realms/acme/signin/")
	if _, err := e.store.LiveSignInEmailCode(t.Context(), e.realmID(), flowID, e.clock.now().UnixMilli()); err == nil {
		t.Fatal("a code was stored that no mail carries")
	}
}
