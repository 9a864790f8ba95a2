package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// verifyEmailTokenLifetime is how long a verification link works.
const verifyEmailTokenLifetime = 12 * time.Hour

// The mails carrying a single-use link.
var (
	verifyEmailMail = mail.LinkMail{Name: "verify-email", Key: "mail.verifyEmail",
		Lifetime: verifyEmailTokenLifetime, Unit: time.Hour}
	resetPasswordMail = mail.LinkMail{Name: "reset-password", Key: "mail.resetPassword",
		Lifetime: resetPasswordTokenLifetime, Unit: time.Minute}
)

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
	// The administrator asking is the one to read it: their language.
	msg, err := deliveryTestMail(a.messages.Localizer(mail.Locale(a.messages, realm, signin.RequestLocale(a.messages, r))), realm, provider, to)
	if err != nil {
		return err
	}
	if err := a.mail.SendNow(r.Context(), realm, msg, smtpOnly); err != nil {
		var bad mail.ConfigError
		if errors.As(err, &bad) {
			return apperr.Invalid("%s", err.Error())
		}
		return &apperr.Error{Status: http.StatusBadGateway, Code: apperr.CodeDeliveryFailed,
			Message: "delivery through " + provider + " failed: " + err.Error()}
	}
	httpx.WriteJSON(w, http.StatusOK, testMailResult{Success: true, Message: "test email sent to " + to + " through " + provider})
	return nil
}

// deliveryTestMail is the message that checks delivery through
// provider, in l's language.
func deliveryTestMail(l *ui.Localizer, realm *store.Realm, provider, to string) (mail.Message, error) {
	c := mail.NewContent(l, realm)
	c.Subject = l.T("mail.testMail.subject", c.Realm)
	c.Body = []string{l.T("mail.testMail.intro", c.Realm, provider), l.T("mail.testMail.done")}
	return c.Render("test", to)
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
	l, err := mail.Languages{Store: a.store, Messages: a.messages}.Localizer(r.Context(), realm, u, nil)
	if err != nil {
		return err
	}
	v, err := a.newVerification(l, realm, u)
	if err != nil {
		return err
	}
	if err := a.store.Tx(r.Context(), func(tx *store.Store) error { return v.queue(r.Context(), tx) }); err != nil {
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

// verification is a verify-email token and its mail, ready to be written.
type verification struct {
	a     *App
	realm *store.Realm
	user  *store.User
	token string
	msg   mail.Message
}

// newVerification makes a token and renders the mail with its link for u,
// who must have an email address, in l's language.
func (a *App) newVerification(l *ui.Localizer, realm *store.Realm, u *store.User) (*verification, error) {
	token, err := newActionToken()
	if err != nil {
		return nil, err
	}
	link := a.cfg.BaseURL + "/realms/" + url.PathEscape(realm.Name) + "/verify-email?" + url.Values{"token": {token}}.Encode()
	msg, err := verifyEmailMail.Render(l, realm, u, link)
	if err != nil {
		return nil, err
	}
	return &verification{a: a, realm: realm, user: u, token: token, msg: msg}, nil
}

// queue stores the token's hash and puts the mail in the outbox through
// tx; the caller wakes the mail worker once tx commits.
func (v *verification) queue(ctx context.Context, tx *store.Store) error {
	now := v.a.now()
	if err := tx.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(v.token), RealmID: v.realm.ID,
		UserID: v.user.ID, Kind: store.ActionVerifyEmail, Email: v.user.Email, CreatedAt: now.UnixMilli(),
		ExpiresAt: now.Add(verifyEmailTokenLifetime).UnixMilli()}); err != nil {
		return err
	}
	return v.a.mail.Enqueue(ctx, tx, v.realm, v.msg)
}

// newActionToken is 256 random bits, URL-safe.
func newActionToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
