package signin

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The email one-time code's rules: a code works for five minutes, once,
// and for five wrong tries at most; a flow has a code mailed at most
// every 30 seconds, a user at most five in fifteen minutes, so the step
// can neither be guessed through nor used to flood a mailbox.
const (
	emailCodeLifetime    = 5 * time.Minute
	emailCodeMaxAttempts = 5
)

// EmailCodeKept is how long a code is kept once sent: past its lifetime
// and the window of the user's limit, which counts it.
const EmailCodeKept = 15 * time.Minute

var emailCodeLimits = store.EmailCodeLimits{
	FlowGap:    (30 * time.Second).Milliseconds(),
	UserWindow: EmailCodeKept.Milliseconds(),
	UserMax:    5,
}

// The reasons of the step's LOGIN_ERROR events, as Keycloak names them.
const (
	reasonInvalidEmailCode = "invalid_email_code" // a wrong code
	reasonExpiredCode      = "expired_code"       // no code that works: expired, used, or voided by wrong tries
)

// emailCodeStep mails the known user a six-digit code and asks for it:
// it proves the person reads the user's mailbox.
type emailCodeStep struct {
	pages *Pages
	emit  Emitter
	deps  StepDeps
}

func (emailCodeStep) Kind() StepKind { return KindEmailCode }

// AMR: RFC 8176 has no value for a code by email; it is a one-time
// password, as a TOTP code is.
func (emailCodeStep) AMR() []string       { return []string{"otp"} }
func (emailCodeStep) Events() []EventType { return []EventType{EventLoginError} }

func (s emailCodeStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, errKey, alert string) error {
	form := ui.EmailCodeForm{Action: v.Action + stepQuery(v), CSRFToken: v.CSRF, ClientName: f.Wants.ClientName,
		Email: maskEmail(f.User.Email), Error: errKey, Alert: alert}
	return s.pages.Render(w, r, status, ui.EmailCodeLogin(s.pages.Page("emailCode.title"), form))
}

// Show mails a code unless the flow has one that still works: coming
// back to the page sends no second mail.
func (s emailCodeStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	_, err := s.deps.Store.LiveSignInEmailCode(r.Context(), f.Realm.ID, f.ID(), s.deps.Now().UnixMilli())
	switch {
	case err == nil:
		return s.page(w, r, f, v, http.StatusOK, "", "")
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return s.send(w, r, f, v, "")
}

// send mails a new code, which voids the flow's earlier one, and shows
// the page with alert; within the limits only.
func (s emailCodeStep) send(w http.ResponseWriter, r *http.Request, f *Flow, v View, alert string) error {
	ctx := r.Context()
	code, err := newEmailCode()
	if err != nil {
		return err
	}
	now := s.deps.Now()
	c := &store.SignInEmailCode{ID: uuid.NewString(), RealmID: f.Realm.ID, FlowID: f.ID(), UserID: f.User.ID,
		CodeHash: emailCodeHash(f, code), SentAt: now.UnixMilli(), ExpiresAt: now.Add(emailCodeLifetime).UnixMilli()}
	err = s.deps.MailCode(ctx, r, f.Realm, f.User, code, emailCodeLifetime, func(tx *store.Store) error {
		return tx.IssueSignInEmailCode(ctx, c, emailCodeLimits)
	})
	var limited *store.SendLimitedError
	switch {
	case errors.As(err, &limited):
		httpx.RetryAfter(w, time.UnixMilli(limited.RetryAt).Sub(now))
		return s.page(w, r, f, v, http.StatusTooManyRequests, "", "emailCode.error.throttled")
	case err != nil:
		return err
	}
	return s.page(w, r, f, v, http.StatusOK, "", alert)
}

func (s emailCodeStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx := r.Context()
	if r.PostForm.Get("resend") != "" {
		return nil, s.send(w, r, f, v, "emailCode.sent")
	}
	code := strings.TrimSpace(r.PostForm.Get("code"))
	if code == "" {
		return nil, s.page(w, r, f, v, http.StatusBadRequest, "emailCode.error.missing", "")
	}
	err := s.deps.Store.UseSignInEmailCode(ctx, f.Realm.ID, f.ID(), emailCodeHash(f, code), s.deps.Now().UnixMilli(), emailCodeMaxAttempts)
	reason, key := "", ""
	switch {
	case errors.Is(err, store.ErrCodeMismatch):
		reason, key = reasonInvalidEmailCode, "emailCode.error.code"
	case errors.Is(err, store.ErrNotFound):
		reason, key = reasonExpiredCode, "emailCode.error.expired"
	case err != nil:
		return nil, err
	default:
		return f.User, nil
	}
	s.emit(ctx, f.Realm, store.LoginEvent{Type: EventLoginError, UserID: f.User.ID, ClientID: f.Wants.Client,
		IPAddress: v.ClientIP, Error: reason})
	return nil, s.page(w, r, f, v, http.StatusUnauthorized, key, "")
}

// newEmailCode is six random digits.
func newEmailCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("email code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// emailCodeHash is what the store keeps of a code: bound to the flow, so
// that one table of the million codes' hashes does not read them all.
func emailCodeHash(f *Flow, code string) []byte { return store.HashToken(f.ID() + ":" + code) }

// maskEmail shows enough of an address for the person to know it:
// a***@example.com.
func maskEmail(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" {
		return addr
	}
	first := []rune(local)[0]
	return string(first) + "***@" + domain
}
