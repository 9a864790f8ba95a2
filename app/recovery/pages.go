// Package recovery is the hosted pages a mailed link or a forgotten
// password leads to: email verification, the forgot-password form and the
// password reset form, and the resend-verification form of the login page.
// The sign-in they lead back to, and the mail they send, are the server's,
// which hands them over.
package recovery

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The pages' paths under a realm's issuer.
const (
	PathVerifyEmail        = "/verify-email"
	PathForgotPassword     = "/forgot-password"
	PathResetPassword      = "/reset-password"
	PathResendVerification = "/login/resend-verification"
)

const (
	// Requests for a mail per quarter hour: per typed account, per
	// address, and per user actually mailed.
	LimitPerAccount = 3
	LimitPerIP      = 10
	LimitPerUser    = 3

	// recoveryMinDuration pads the forgot-password answer, so that it takes
	// as long whether or not a mail was queued.
	recoveryMinDuration = 150 * time.Millisecond
)

// Deps is what the recovery pages work with.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	Log   *slog.Logger
	// Pages is the hosted pages' kit: rendering, CSRF tokens, the texts of
	// the password rules.
	Pages *signin.Pages
	// Identity is the identity core: the password rules and hash, the
	// password write, the lockout a reset forgets.
	Identity *identity.Core
	// Throttle counts the requests for a mail, in the sign-in flood
	// guard's window.
	Throttle *identity.Throttle
	// ResendLimitPerIP is how many verification links an address may ask
	// for again: as many as registration's API allows.
	ResendLimitPerIP int
	Mail             Mailer
	// Issuer is the realm's issuer URL, which the pages' paths are under.
	Issuer func(realm *store.Realm) string
	// LoginEvent records the VERIFY_EMAIL, SEND_RESET_PASSWORD,
	// UPDATE_PASSWORD, SEND_VERIFY_EMAIL and LOGIN_ERROR events.
	LoginEvent func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	// ClientIP is the address of the request's client.
	ClientIP func(r *http.Request) string
	// SessionsEnded tells the clients of the sessions a reset ended.
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
	// LiveAuthRequest is id when it names a sign-in still waiting for its
	// user, else "": a page carries it only to offer the way back.
	LiveAuthRequest func(ctx context.Context, realm *store.Realm, id string) (string, error)
	// LoginURL is the login page of the sign-in authRequestID names, ""
	// for none.
	LoginURL func(realm *store.Realm, authRequestID string) string
	// AuthRequest is the sign-in a login form names, with its client, or
	// the page error of a stale one.
	AuthRequest func(ctx context.Context, realm *store.Realm, id string) (*store.AuthRequest, *store.Client, error)
	// RenderLogin shows the login page of ar with f's username, message
	// and resend form.
	RenderLogin func(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, status int, f ui.LoginForm) error
}

// Mailer queues the mails carrying the pages' links, each with a new token
// of its kind, in the user's language, else that of own, the request the
// user made: the mail module's, which the server hands over, since a
// module does not import another. Both answer ErrMailUnavailable when the
// realm has no way to send mail.
type Mailer interface {
	// ResetPassword queues u's password reset link, carrying query.
	ResetPassword(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User, query url.Values) error
	// VerifyEmail queues u's email verification link.
	VerifyEmail(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User) error
}

// ErrMailUnavailable: the realm has no way to send mail.
var ErrMailUnavailable = errors.New("the realm cannot send mail")

// Service is the recovery pages' handlers.
type Service struct{ deps Deps }

// New builds the recovery pages.
func New(d Deps) *Service { return &Service{deps: d} }

// badPage is a request a page cannot take, said by key, as the sign-in's
// pages say it.
func badPage(key string) *apperr.Error {
	return apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest, "").WithKey(key)
}

// errInvalidLink is the answer to any mailed link that cannot be used,
// without saying why.
var errInvalidLink = badPage("error.invalidLink")

// errStaleAuthRequest is a form whose sign-in is unknown, expired or
// already answered.
var errStaleAuthRequest = badPage("error.staleAuthRequest")

// VerifyEmailPage uses a verify-email link: the user's address is
// verified, once.
func (s *Service) VerifyEmailPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	token := r.URL.Query().Get("token")
	if token == "" {
		return errInvalidLink
	}
	var tok *store.ActionToken
	err := s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if tok, err = tx.ConsumeActionToken(ctx, realm.ID, store.HashToken(token), store.ActionVerifyEmail, s.deps.Now().UnixMilli()); err != nil {
			return err
		}
		return tx.MarkEmailVerified(ctx, realm.ID, tok.UserID, tok.Email)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidLink
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventVerifyEmail, UserID: tok.UserID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"email": tok.Email}})
	return s.deps.Pages.Render(w, r, http.StatusOK, ui.Info(s.deps.Pages.Page("verify.done.title"), ui.InfoPage{Heading: "verify.done.title",
		Message: "verify.done.message"}))
}

func (s *Service) renderForgot(w http.ResponseWriter, r *http.Request, realm *store.Realm, status int, f ui.ForgotPasswordForm) error {
	token := s.deps.Pages.CSRFToken(w, r, realm, "forgot-password", f.AuthRequestID)
	f.Action, f.CSRFToken, f.LoginURL = s.deps.Issuer(realm)+PathForgotPassword, token, s.deps.LoginURL(realm, f.AuthRequestID)
	return s.deps.Pages.Render(w, r, status, ui.ForgotPassword(s.deps.Pages.Page("Forgot password"), f))
}

// ForgotPasswordPage shows the forgot-password form.
func (s *Service) ForgotPasswordPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	arID, err := s.deps.LiveAuthRequest(r.Context(), realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	return s.renderForgot(w, r, realm, http.StatusOK, ui.ForgotPasswordForm{AuthRequestID: arID})
}

// ForgotPassword mails a reset link to the account named, if there is
// one that can have it. The answer is the same page either way, padded
// to the same time.
func (s *Service) ForgotPassword(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	start := time.Now()
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	arID := r.PostForm.Get("authRequestID")
	if err := s.deps.Pages.CheckCSRF(r, "forgot-password", arID); err != nil {
		return err
	}
	arID, err := s.deps.LiveAuthRequest(ctx, realm, arID)
	if err != nil {
		return err
	}
	login := strings.TrimSpace(r.PostForm.Get("login"))
	form := ui.ForgotPasswordForm{AuthRequestID: arID, Login: login}
	if login == "" || len(login) > 320 {
		form.Error = "forgot.error.loginRequired"
		return s.renderForgot(w, r, realm, http.StatusBadRequest, form)
	}
	accountKey := "realm:" + realm.ID + ":forgot-account:" + strings.ToLower(login)
	ipKey := "realm:" + realm.ID + ":forgot-ip:" + s.deps.ClientIP(r)
	if wait := max(s.deps.Throttle.Wait(accountKey, LimitPerAccount), s.deps.Throttle.Wait(ipKey, LimitPerIP)); wait > 0 {
		httpx.RetryAfter(w, wait)
		form.Banner = "error.tooManyRequests"
		return s.renderForgot(w, r, realm, http.StatusTooManyRequests, form)
	}
	s.deps.Throttle.Fail(accountKey)
	s.deps.Throttle.Fail(ipKey)

	user, err := s.deps.Store.FindRecoveryUser(ctx, realm.ID, login)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if user != nil && user.Enabled && user.Email != "" && user.ServiceAccountClientID == "" {
		// Per user too, silently: whatever was typed, one inbox gets few mails.
		userKey := "realm:" + realm.ID + ":forgot-user:" + user.ID
		if s.deps.Throttle.Wait(userKey, LimitPerUser) == 0 {
			s.deps.Throttle.Fail(userKey)
			var query url.Values
			if arID != "" {
				query = url.Values{"authRequestID": {arID}}
			}
			err := s.deps.Mail.ResetPassword(r.Context(), r, realm, user, query)
			switch {
			case errors.Is(err, ErrMailUnavailable):
				s.deps.Log.WarnContext(ctx, "password reset requested, but the realm cannot send mail", "realm", realm.Name)
			case err != nil:
				return err
			default:
				s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventSendResetPassword, UserID: user.ID, IPAddress: s.deps.ClientIP(r),
					Details: map[string]string{"email": user.Email}})
			}
		}
	}
	if pad := recoveryMinDuration - time.Since(start); pad > 0 {
		select {
		case <-time.After(pad):
		case <-ctx.Done():
		}
	}
	return s.deps.Pages.Render(w, r, http.StatusOK, ui.Info(s.deps.Pages.Page("forgot.sent.title"), ui.InfoPage{Heading: "forgot.sent.title",
		Message: "forgot.sent.message",
		LinkURL: s.deps.LoginURL(realm, arID), LinkText: "common.backToLogin"}))
}

// resetToken is the live reset token and its enabled user, or
// errInvalidLink.
func (s *Service) resetToken(ctx context.Context, realm *store.Realm, token string) (*store.ActionToken, *store.User, error) {
	if token == "" {
		return nil, nil, errInvalidLink
	}
	tok, err := s.deps.Store.PeekActionToken(ctx, realm.ID, store.HashToken(token), store.ActionResetPassword, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errInvalidLink
	} else if err != nil {
		return nil, nil, err
	}
	u, err := s.deps.Store.GetUser(ctx, realm.ID, tok.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errInvalidLink
	} else if err != nil {
		return nil, nil, err
	}
	if !u.Enabled {
		return nil, nil, errInvalidLink
	}
	return tok, u, nil
}

func (s *Service) renderReset(w http.ResponseWriter, r *http.Request, realm *store.Realm, status int, f ui.ResetPasswordForm) error {
	csrf := s.deps.Pages.CSRFToken(w, r, realm, "reset-password", f.Token)
	f.Action, f.CSRFToken = s.deps.Issuer(realm)+PathResetPassword, csrf
	w.Header().Set("Referrer-Policy", "no-referrer") // the token is in the URL
	return s.deps.Pages.Render(w, r, status, ui.ResetPassword(s.deps.Pages.Page("Choose a new password"), f))
}

// ResetPasswordPage shows the form of a live reset link, without using it.
func (s *Service) ResetPasswordPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	token := r.URL.Query().Get("token")
	if _, _, err := s.resetToken(r.Context(), realm, token); err != nil {
		return err
	}
	arID, err := s.deps.LiveAuthRequest(r.Context(), realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	return s.renderReset(w, r, realm, http.StatusOK, ui.ResetPasswordForm{Token: token, AuthRequestID: arID})
}

// ResetPasswordForm sets the new password with a reset link, once, and ends
// the user's sessions.
func (s *Service) ResetPasswordForm(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	token := r.PostForm.Get("token")
	if err := s.deps.Pages.CheckCSRF(r, "reset-password", token); err != nil {
		return err
	}
	_, user, err := s.resetToken(ctx, realm, token)
	if err != nil {
		return err
	}
	arID, err := s.deps.LiveAuthRequest(ctx, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	password, confirm := r.PostForm.Get("password"), r.PostForm.Get("confirm")
	form := ui.ResetPasswordForm{Token: token, AuthRequestID: arID}
	if password == "" {
		form.PasswordError = "password.error.required"
	} else {
		// What needs no stored password first; the history with the hash.
		form.PasswordError = s.deps.Pages.PasswordText(r, realm, identity.UnmetUserPasswordRules(realm, user, password))
	}
	if password != confirm {
		form.ConfirmError = "password.error.mismatch"
	}
	if form.PasswordError != "" || form.ConfirmError != "" {
		return s.renderReset(w, r, realm, http.StatusBadRequest, form)
	}
	hash, err := s.deps.Identity.NewPasswordHash(ctx, realm, user, password)
	if msg := s.deps.Pages.PasswordError(r, realm, err); msg != "" {
		form.PasswordError = msg
		return s.renderReset(w, r, realm, http.StatusBadRequest, form)
	} else if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	var ended []*store.Session
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		tok, err := tx.ConsumeActionToken(ctx, realm.ID, store.HashToken(token), store.ActionResetPassword, now)
		if err != nil {
			return err
		}
		if err := s.deps.Identity.SetPassword(ctx, tx, realm, tok.UserID, hash, false); err != nil {
			return err
		}
		ended, err = tx.DeleteUserSessions(ctx, realm.ID, tok.UserID, now)
		return err
	})
	if errors.Is(err, store.ErrNotFound) { // used meanwhile
		return errInvalidLink
	} else if err != nil {
		return err
	}
	s.deps.SessionsEnded(ctx, realm, ended)
	// The failures before the reset no longer count against the account.
	s.deps.Identity.ForgetFailedSignIns(realm, user)
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventUpdatePassword, UserID: user.ID, IPAddress: s.deps.ClientIP(r),
		Details: map[string]string{"reason": "reset-password"}})
	info := ui.InfoPage{Heading: "reset.done.title", Message: "reset.done.message"}
	if arID != "" {
		info.Message = "reset.done.messageSignIn"
		info.LinkURL, info.LinkText = s.deps.LoginURL(realm, arID), "common.backToLogin"
	}
	return s.deps.Pages.Render(w, r, http.StatusOK, ui.Info(s.deps.Pages.Page("reset.done.title"), info))
}

func resendForm(userID string) string { return "resend-verification\x00" + userID }

// RefuseUnverified answers a correct password of a user whose email is
// not verified, in a realm that requires it, offering a new link.
func (s *Service) RefuseUnverified(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, user *store.User, username string) error {
	s.deps.LoginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
		IPAddress: s.deps.ClientIP(r), Error: "email_not_verified", Details: map[string]string{"username": username}})
	f := ui.LoginForm{Username: username}
	if user.Email == "" {
		f.Error = "login.error.noEmail"
		return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusForbidden, f)
	}
	csrf := s.deps.Pages.CSRFToken(w, r, realm, resendForm(user.ID), ar.ID)
	f.Error = "login.error.unverified"
	f.Resend = &ui.ResendVerificationForm{Action: s.deps.Issuer(realm) + PathResendVerification, UserID: user.ID, CSRFToken: csrf}
	return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusForbidden, f)
}

// ResendVerification mails a new verification link to the user a
// refused sign-in named. Its CSRF token binds the user to this browser
// and sign-in, so it is only had by knowing the password.
func (s *Service) ResendVerification(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	ar, client, err := s.deps.AuthRequest(ctx, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	userID := r.PostForm.Get("userID")
	if err := s.deps.Pages.CheckCSRF(r, resendForm(userID), ar.ID); err != nil {
		return err
	}
	user, err := s.deps.Store.GetUser(ctx, realm.ID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return errStaleAuthRequest
	} else if err != nil {
		return err
	}
	if !user.Enabled || user.Email == "" {
		return errStaleAuthRequest
	}
	f := ui.LoginForm{Username: user.Username}
	if user.EmailVerified {
		f.Error = "login.info.alreadyVerified"
		return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusOK, f)
	}
	key := "realm:" + realm.ID + ":verify-resend:" + user.ID
	ipKey := "realm:" + realm.ID + ":verify-resend-ip:" + s.deps.ClientIP(r)
	if wait := max(s.deps.Throttle.Wait(key, LimitPerUser), s.deps.Throttle.Wait(ipKey, s.deps.ResendLimitPerIP)); wait > 0 {
		httpx.RetryAfter(w, wait)
		f.Error = "login.error.resendThrottled"
		return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusTooManyRequests, f)
	}
	s.deps.Throttle.Fail(key)
	s.deps.Throttle.Fail(ipKey)
	err = s.deps.Mail.VerifyEmail(r.Context(), r, realm, user)
	if errors.Is(err, ErrMailUnavailable) {
		f.Error = "login.error.mailUnavailable"
		return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusServiceUnavailable, f)
	} else if err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: user.ID, ClientID: client.ClientID,
		IPAddress: s.deps.ClientIP(r), Details: map[string]string{"email": user.Email}})
	f.Error = "login.info.verificationSent"
	return s.deps.RenderLogin(w, r, realm, client, ar, http.StatusOK, f)
}
