package app

import (
	"errors"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// resetPasswordMail is the mail carrying a password reset link (the
// verification link's is mail.VerifyEmail).
var resetPasswordMail = mail.LinkMail{Name: "reset-password", Key: "mail.resetPassword",
	Lifetime: resetPasswordTokenLifetime, Unit: time.Minute}

// testMailTemplate is the template name the outbox records for the test
// of a realm's email settings.
const testMailTemplate = "test"

type testMailBody struct {
	To string `json:"to"`
}

type testMailResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// testSMTP sends a test message through the realm's SMTP settings, whatever
// its provider, so they can be checked before switching to SMTP.
func (a *App) testSMTP(w http.ResponseWriter, r *http.Request) error {
	return a.sendTestMail(w, r, true)
}

// testEmail sends a test message through the realm's configured provider.
func (a *App) testEmail(w http.ResponseWriter, r *http.Request) error {
	return a.sendTestMail(w, r, false)
}

// sendTestMail sends at once rather than through the outbox: the point is
// to see the provider's answer. A failed delivery is a 502 carrying it.
func (a *App) sendTestMail(w http.ResponseWriter, r *http.Request, smtpOnly bool) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	var body testMailBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.To == "" {
		return apperr.Field("to", "is required")
	}
	to, err := validate.NormalizeEmail(body.To)
	if err != nil {
		return apperr.Field("to", "must be an email address")
	}
	provider := realm.EmailProvider
	if smtpOnly || provider == "" {
		provider = "smtp"
	}
	if smtpOnly && realm.SMTPHost == "" {
		return apperr.Invalid("the realm has no SMTP server: set smtpHost first")
	}
	if err := sendTestMailNow(r, a.mail, a.mailLangs, realm, provider, to, smtpOnly); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, testMailResult{Success: true, Message: "test email sent to " + to + " through " + provider})
	return nil
}

// sendTestMailNow sends the test message to to through provider at once,
// in the language of the one asking (r): settings that cannot work are a
// 400, a refusal by the server or provider a 502 carrying its answer.
func sendTestMailNow(r *http.Request, m *mail.Service, langs mail.Languages, realm *store.Realm, provider, to string,
	smtpOnly bool) error {
	msg, err := deliveryTestMail(langs.Tagged(r.Context(), realm, signin.RequestLocale(langs.Messages, r)), realm, provider, to)
	if err != nil {
		return err
	}
	if err := m.SendNow(r.Context(), realm, msg, smtpOnly); err != nil {
		var bad mail.ConfigError
		if errors.As(err, &bad) {
			return apperr.Invalid("%s", err.Error())
		}
		return &apperr.Error{Status: http.StatusBadGateway, Code: apperr.CodeDeliveryFailed,
			Message: "delivery through " + provider + " failed: " + err.Error()}
	}
	return nil
}

// deliveryTestMail is the message that checks delivery through
// provider, in l's language.
func deliveryTestMail(l *ui.Localizer, realm *store.Realm, provider, to string) (mail.Message, error) {
	c := mail.NewContent(l, realm)
	c.Subject = l.T("mail.testMail.subject", c.Realm)
	c.Body = []string{l.T("mail.testMail.intro", c.Realm, provider), l.T("mail.testMail.done")}
	c.Vars = map[string]string{"Intro": c.Body[0], "Done": c.Body[1], "Provider": provider}
	return c.Render(testMailTemplate, to)
}

// sendVerificationEmail mails the user a single-use link that verifies
// their address. The token and the mail are written in one transaction;
// the outbox worker sends it.
func (a *App) sendVerificationEmail(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	if u.Email == "" {
		return apperr.Invalid("the user has no email address")
	}
	if _, err := mail.Sender(realm, false); err != nil {
		return apperr.Invalid("%s", err.Error())
	}
	// An administrator's request: the mail takes the user's language.
	l, err := a.mailLangs.Localizer(r.Context(), realm, u, nil)
	if err != nil {
		return err
	}
	v, err := a.mail.NewVerification(l, realm, u)
	if err != nil {
		return err
	}
	if err := a.store.Tx(r.Context(), func(tx *store.Store) error { return v.Queue(r.Context(), tx) }); err != nil {
		return err
	}
	a.mail.Wake()
	httpx.WriteJSON(w, http.StatusOK, mailQueued{Message: "verification email queued"})
	return nil
}

// mailQueued answers a request that queued a mail.
type mailQueued struct {
	Message string `json:"message"`
}
