package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// newestMail is the mail queued last: each action of the test below
// moves the clock first, as the outbox orders by time only.
func newestMail(t *testing.T, e *codeflowEnv) *store.OutboxEmail {
	t.Helper()
	mails := recoveryOutbox(e)
	if len(mails) == 0 {
		t.Fatal("no mail queued")
	}
	newest := mails[0]
	for _, m := range mails[1:] {
		if m.CreatedAt > newest.CreatedAt {
			newest = m
		}
	}
	return newest
}

// mailLanguageReset asks, from a sign-in begun with uiLocales (none when
// ""), for alice's password reset mail, the form posted with
// acceptLanguage (none when ""), and returns the mail.
func mailLanguageReset(t *testing.T, e *codeflowEnv, cfg *oauth2.Config, uiLocales, acceptLanguage string) *store.OutboxEmail {
	t.Helper()
	var opts []oauth2.AuthCodeOption
	if uiLocales != "" {
		opts = append(opts, oauth2.SetAuthURLParam("ui_locales", uiLocales))
	}
	e.clock.advance(time.Second)
	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s", opts...))
	arID := login.form(t).fields.Get("authRequestID")
	forgot := b.get(e.issuer("acme") + recovery.PathForgotPassword + "?" + url.Values{"authRequestID": {arID}}.Encode())
	f := forgot.form(t)
	values := url.Values{}
	for k, v := range f.fields {
		values[k] = v
	}
	values.Set("login", "alice")
	action, err := forgot.url.Parse(f.action)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, action.String(), strings.NewReader(values.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	if p := b.do(req); p.status != http.StatusOK {
		t.Fatalf("forgot password: status %d: %s", p.status, p.body)
	}
	m := newestMail(t, e)
	if m.Template != "reset-password" {
		t.Fatalf("newest mail %+v", m)
	}
	return m
}

// A mail is in the recipient's language: the user's locale attribute
// first, whatever the request asks; without one, the language of the
// request that caused the mail (ui_locales of the sign-in, or
// Accept-Language); without either, the realm's. A mail an administrator
// causes takes the user's language, not the administrator's.
func TestMailLanguage(t *testing.T) {
	e := recoveryEnv(t, func(*store.Realm) {})
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	const (
		french   = "Réinitialisez votre mot de passe pour Acme Corp"
		japanese = "Acme Corp のパスワードの再設定"
		german   = "Passwort für Acme Corp zurücksetzen"
	)

	if m := mailLanguageReset(t, e, cfg, "fr", "de"); m.Subject != french ||
		!strings.Contains(m.HTMLBody, `<html lang="fr" dir="ltr">`) || !strings.Contains(m.TextBody, "Bonjour Alice,") {
		t.Fatalf("ui_locales=fr: %q\n%s", m.Subject, m.TextBody)
	}
	if m := mailLanguageReset(t, e, cfg, "", "ja, en;q=0.5"); m.Subject != japanese {
		t.Fatalf("Accept-Language ja: %q", m.Subject)
	}

	// The admin API sets the attribute once the realm's schema has it.
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/custom-attributes", map[string]any{"attributes": []map[string]any{
		{"name": "locale", "displayName": "Language", "type": "string", "editableBy": "user"}}}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/attributes",
		map[string]any{"locale": "de"}), http.StatusOK)
	m := mailLanguageReset(t, e, cfg, "fr", "ja")
	if m.Subject != german || !strings.Contains(m.HTMLBody, `<html lang="de" dir="ltr">`) ||
		!strings.Contains(m.TextBody, "Hallo Alice,") || !strings.Contains(m.HTMLBody, "Neues Passwort wählen") {
		t.Fatalf("locale=de: %q\n%s\n%s", m.Subject, m.TextBody, m.HTMLBody)
	}

	// An administrator asking in French: the user's German.
	e.clock.advance(time.Second)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/send-verification-email", nil,
		"Accept-Language: fr"), http.StatusOK)
	if got := newestMail(t, e).Subject; got != "Bestätigen Sie Ihre E-Mail-Adresse für Acme Corp" {
		t.Fatalf("verification mail asked for by an administrator: %q", got)
	}
	// Arabic reads right to left.
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/attributes",
		map[string]any{"locale": "ar"}), http.StatusOK)
	e.clock.advance(time.Second)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/send-verification-email", nil), http.StatusOK)
	if m := newestMail(t, e); m.Subject != "تأكيد عنوان بريدك الإلكتروني في Acme Corp" ||
		!strings.Contains(m.HTMLBody, `<html lang="ar" dir="rtl">`) {
		t.Fatalf("locale=ar: %q\n%s", m.Subject, m.HTMLBody)
	}
	// An invitation takes the language of the realm's user with its
	// address, else the realm's.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations",
		map[string]any{"slug": "widgets", "name": "Widgets"}), http.StatusCreated)
	for to, want := range map[string]string{"alice@example.test": "انضم إلى Widgets في Acme Corp",
		"nobody@example.test": "Join Widgets on Acme Corp"} {
		e.clock.advance(time.Second)
		mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations/widgets/invitations",
			map[string]any{"email": to, "role": "member"}, "Accept-Language: fr"), http.StatusCreated)
		if got := newestMail(t, e); got.Recipient != to || got.Subject != want {
			t.Fatalf("invitation to %s: %q", got.Recipient, got.Subject)
		}
	}
	// A user without a locale, mailed by an administrator asking in
	// French: the realm's language.
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/attributes",
		map[string]any{}), http.StatusOK)
	e.clock.advance(time.Second)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/send-verification-email", nil,
		"Accept-Language: fr"), http.StatusOK)
	if got := newestMail(t, e).Subject; got != "Verify your email address for Acme Corp" {
		t.Fatalf("verification mail to a user without a locale: %q", got)
	}
}

// A registration through the public API is answered by a verification
// mail in the language its request asks for.
func TestRegistrationMailLanguage(t *testing.T) {
	s := registrationServer(t)
	body, err := json.Marshal(registrationUser("bob", nil))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/realms/acme/registration/register", bytes.NewReader(body))
	req.RemoteAddr = "192.0.2.7:1234"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", "pl-PL, en;q=0.5")
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("register: %d %s", rec.Code, rec.Body)
	}
	mails := registrationOutbox(t, s)
	if len(mails) != 1 || mails[0].Subject != "Potwierdź swój adres e-mail w Acme Corp" ||
		!strings.Contains(mails[0].HTMLBody, `<html lang="pl" dir="ltr">`) {
		t.Fatalf("outbox %+v", mails)
	}
}
