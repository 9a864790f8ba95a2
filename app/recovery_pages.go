package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The hosted pages a mailed link or a forgotten password leads to: email
// verification, the forgot-password form and the password reset form, and
// the resend-verification form of the login page.

const (
	pathVerifyEmail        = "/verify-email"
	pathForgotPassword     = "/forgot-password"
	pathResetPassword      = "/reset-password"
	pathResendVerification = "/login/resend-verification"

	// resetPasswordTokenLifetime is how long a password reset link works.
	resetPasswordTokenLifetime = time.Hour

	// Requests for a mail per quarter hour: per typed account, per
	// address, and per user actually mailed.
	recoveryLimitPerAccount = 3
	recoveryLimitPerIP      = 10
	recoveryLimitPerUser    = 3

	// recoveryMinDuration pads the forgot-password answer, so that it takes
	// as long whether or not a mail was queued.
	recoveryMinDuration = 150 * time.Millisecond
)

// errInvalidLink is the answer to any mailed link that cannot be used,
// without saying why.
var errInvalidLink = badPage("error.invalidLink")

// errMailUnavailable: the realm has no way to send mail.
var errMailUnavailable = errors.New("the realm cannot send mail")

// liveAuthRequestID is id when it names a sign-in still waiting for its
// user, else "": a recovery page carries it only to offer the way back.
func (a *App) liveAuthRequestID(ctx context.Context, realm *store.Realm, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	_, _, err := a.pageAuthRequest(ctx, realm, id, false)
	if errors.Is(err, errStaleAuthRequest) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return id, nil
}

func (a *App) loginURL(realm *store.Realm, authRequestID string) string {
	if authRequestID == "" {
		return ""
	}
	return a.issuer(realm) + pathLogin + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// queueActionMail creates u's token of kind and queues the mail carrying
// its link, in one transaction. own is u's own request, whose language the
// mail takes when u has not chosen one; nil when an administrator asked.
func (a *App) queueActionMail(ctx context.Context, own *http.Request, realm *store.Realm, u *store.User, kind string,
	path string, query url.Values, m mail.LinkMail) error {
	if _, err := mail.Sender(realm, false); err != nil {
		return errMailUnavailable
	}
	l, err := mail.Languages{Store: a.store, Messages: a.messages}.Localizer(ctx, realm, u, own)
	if err != nil {
		return err
	}
	token, err := mail.NewActionToken()
	if err != nil {
		return err
	}
	q := url.Values{"token": {token}}
	for k, v := range query {
		q[k] = v
	}
	link := a.issuer(realm) + path + "?" + q.Encode()
	msg, err := m.Render(l, realm, u, link)
	if err != nil {
		return err
	}
	now := a.now()
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(token), RealmID: realm.ID,
			UserID: u.ID, Kind: kind, Email: u.Email, CreatedAt: now.UnixMilli(),
			ExpiresAt: now.Add(m.Lifetime).UnixMilli()}); err != nil {
			return err
		}
		return a.mail.Enqueue(ctx, tx, realm, msg)
	})
	if err != nil {
		return err
	}
	a.mail.Wake()
	return nil
}

// verifyEmailPage uses a verify-email link: the user's address is
// verified, once.
func (a *App) verifyEmailPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	token := r.URL.Query().Get("token")
	if token == "" {
		return errInvalidLink
	}
	var tok *store.ActionToken
	err := a.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if tok, err = tx.ConsumeActionToken(ctx, realm.ID, store.HashToken(token), store.ActionVerifyEmail, a.now().UnixMilli()); err != nil {
			return err
		}
		return tx.MarkEmailVerified(ctx, realm.ID, tok.UserID, tok.Email)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidLink
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventVerifyEmail, UserID: tok.UserID, IPAddress: a.clientIP(r),
		Details: map[string]string{"email": tok.Email}})
	return a.pages.Render(w, r, http.StatusOK, ui.Info(a.pages.Page("verify.done.title"), ui.InfoPage{Heading: "verify.done.title",
		Message: "verify.done.message"}))
}

func (a *App) renderForgot(w http.ResponseWriter, r *http.Request, realm *store.Realm, status int, f ui.ForgotPasswordForm) error {
	token := a.pages.CSRFToken(w, r, realm, "forgot-password", f.AuthRequestID)
	f.Action, f.CSRFToken, f.LoginURL = a.issuer(realm)+pathForgotPassword, token, a.loginURL(realm, f.AuthRequestID)
	return a.pages.Render(w, r, status, ui.ForgotPassword(a.pages.Page("Forgot password"), f))
}

func (a *App) forgotPasswordPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	arID, err := a.liveAuthRequestID(r.Context(), realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	return a.renderForgot(w, r, realm, http.StatusOK, ui.ForgotPasswordForm{AuthRequestID: arID})
}

// forgotPassword mails a reset link to the account named, if there is
// one that can have it. The answer is the same page either way, padded
// to the same time.
func (a *App) forgotPassword(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	start := time.Now()
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	arID := r.PostForm.Get("authRequestID")
	if err := a.pages.CheckCSRF(r, "forgot-password", arID); err != nil {
		return err
	}
	arID, err := a.liveAuthRequestID(ctx, realm, arID)
	if err != nil {
		return err
	}
	login := strings.TrimSpace(r.PostForm.Get("login"))
	form := ui.ForgotPasswordForm{AuthRequestID: arID, Login: login}
	if login == "" || len(login) > 320 {
		form.Error = "forgot.error.loginRequired"
		return a.renderForgot(w, r, realm, http.StatusBadRequest, form)
	}
	accountKey := "realm:" + realm.ID + ":forgot-account:" + strings.ToLower(login)
	ipKey := "realm:" + realm.ID + ":forgot-ip:" + a.clientIP(r)
	if wait := max(a.loginThrottle.Wait(accountKey, recoveryLimitPerAccount), a.loginThrottle.Wait(ipKey, recoveryLimitPerIP)); wait > 0 {
		httpx.RetryAfter(w, wait)
		form.Banner = "error.tooManyRequests"
		return a.renderForgot(w, r, realm, http.StatusTooManyRequests, form)
	}
	a.loginThrottle.Fail(accountKey)
	a.loginThrottle.Fail(ipKey)

	user, err := a.store.FindRecoveryUser(ctx, realm.ID, login)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if user != nil && user.Enabled && user.Email != "" && user.ServiceAccountClientID == "" {
		// Per user too, silently: whatever was typed, one inbox gets few mails.
		userKey := "realm:" + realm.ID + ":forgot-user:" + user.ID
		if a.loginThrottle.Wait(userKey, recoveryLimitPerUser) == 0 {
			a.loginThrottle.Fail(userKey)
			var query url.Values
			if arID != "" {
				query = url.Values{"authRequestID": {arID}}
			}
			err := a.queueActionMail(r.Context(), r, realm, user, store.ActionResetPassword, pathResetPassword, query, resetPasswordMail)
			switch {
			case errors.Is(err, errMailUnavailable):
				a.log.WarnContext(ctx, "password reset requested, but the realm cannot send mail", "realm", realm.Name)
			case err != nil:
				return err
			default:
				a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventSendResetPassword, UserID: user.ID, IPAddress: a.clientIP(r),
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
	return a.pages.Render(w, r, http.StatusOK, ui.Info(a.pages.Page("forgot.sent.title"), ui.InfoPage{Heading: "forgot.sent.title",
		Message: "forgot.sent.message",
		LinkURL: a.loginURL(realm, arID), LinkText: "common.backToLogin"}))
}

// resetToken is the live reset token and its enabled user, or
// errInvalidLink.
func (a *App) resetToken(ctx context.Context, realm *store.Realm, token string) (*store.ActionToken, *store.User, error) {
	if token == "" {
		return nil, nil, errInvalidLink
	}
	tok, err := a.store.PeekActionToken(ctx, realm.ID, store.HashToken(token), store.ActionResetPassword, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errInvalidLink
	} else if err != nil {
		return nil, nil, err
	}
	u, err := a.store.GetUser(ctx, realm.ID, tok.UserID)
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

func (a *App) renderReset(w http.ResponseWriter, r *http.Request, realm *store.Realm, status int, f ui.ResetPasswordForm) error {
	csrf := a.pages.CSRFToken(w, r, realm, "reset-password", f.Token)
	f.Action, f.CSRFToken = a.issuer(realm)+pathResetPassword, csrf
	w.Header().Set("Referrer-Policy", "no-referrer") // the token is in the URL
	return a.pages.Render(w, r, status, ui.ResetPassword(a.pages.Page("Choose a new password"), f))
}

// resetPasswordPage shows the form of a live reset link, without using it.
func (a *App) resetPasswordPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	token := r.URL.Query().Get("token")
	if _, _, err := a.resetToken(r.Context(), realm, token); err != nil {
		return err
	}
	arID, err := a.liveAuthRequestID(r.Context(), realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	return a.renderReset(w, r, realm, http.StatusOK, ui.ResetPasswordForm{Token: token, AuthRequestID: arID})
}

// resetPasswordForm sets the new password with a reset link, once, and ends
// the user's sessions.
func (a *App) resetPasswordForm(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	token := r.PostForm.Get("token")
	if err := a.pages.CheckCSRF(r, "reset-password", token); err != nil {
		return err
	}
	_, user, err := a.resetToken(ctx, realm, token)
	if err != nil {
		return err
	}
	arID, err := a.liveAuthRequestID(ctx, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	password, confirm := r.PostForm.Get("password"), r.PostForm.Get("confirm")
	form := ui.ResetPasswordForm{Token: token, AuthRequestID: arID}
	if password == "" {
		form.PasswordError = "password.error.required"
	} else {
		// What needs no stored password first; the history with the hash.
		form.PasswordError = a.pages.PasswordText(r, realm, identity.UnmetUserPasswordRules(realm, user, password))
	}
	if password != confirm {
		form.ConfirmError = "password.error.mismatch"
	}
	if form.PasswordError != "" || form.ConfirmError != "" {
		return a.renderReset(w, r, realm, http.StatusBadRequest, form)
	}
	hash, err := a.id.NewPasswordHash(ctx, realm, user, password)
	if msg := a.pages.PasswordError(r, realm, err); msg != "" {
		form.PasswordError = msg
		return a.renderReset(w, r, realm, http.StatusBadRequest, form)
	} else if err != nil {
		return err
	}
	now := a.now().UnixMilli()
	var ended []*store.Session
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		tok, err := tx.ConsumeActionToken(ctx, realm.ID, store.HashToken(token), store.ActionResetPassword, now)
		if err != nil {
			return err
		}
		if err := a.id.SetPassword(ctx, tx, realm, tok.UserID, hash, false); err != nil {
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
	a.backchannelLogout(ctx, realm, ended)
	// The failures before the reset no longer count against the account.
	a.id.ForgetFailedSignIns(realm, user)
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventUpdatePassword, UserID: user.ID, IPAddress: a.clientIP(r),
		Details: map[string]string{"reason": "reset-password"}})
	info := ui.InfoPage{Heading: "reset.done.title", Message: "reset.done.message"}
	if arID != "" {
		info.Message = "reset.done.messageSignIn"
		info.LinkURL, info.LinkText = a.loginURL(realm, arID), "common.backToLogin"
	}
	return a.pages.Render(w, r, http.StatusOK, ui.Info(a.pages.Page("reset.done.title"), info))
}

func resendForm(userID string) string { return "resend-verification\x00" + userID }

// refuseUnverified answers a correct password of a user whose email is
// not verified, in a realm that requires it, offering a new link.
func (a *App) refuseUnverified(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, user *store.User, username string) error {
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
		IPAddress: a.clientIP(r), Error: "email_not_verified", Details: map[string]string{"username": username}})
	f := ui.LoginForm{Username: username}
	if user.Email == "" {
		f.Error = "login.error.noEmail"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusForbidden, f)
	}
	csrf := a.pages.CSRFToken(w, r, realm, resendForm(user.ID), ar.ID)
	f.Error = "login.error.unverified"
	f.Resend = &ui.ResendVerificationForm{Action: a.issuer(realm) + pathResendVerification, UserID: user.ID, CSRFToken: csrf}
	return a.renderLoginWith(w, r, realm, client, ar, http.StatusForbidden, f)
}

// resendVerification mails a new verification link to the user a
// refused sign-in named. Its CSRF token binds the user to this browser
// and sign-in, so it is only had by knowing the password.
func (a *App) resendVerification(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	ar, client, err := a.pageAuthRequest(ctx, realm, r.PostForm.Get("authRequestID"), false)
	if err != nil {
		return err
	}
	userID := r.PostForm.Get("userID")
	if err := a.pages.CheckCSRF(r, resendForm(userID), ar.ID); err != nil {
		return err
	}
	user, err := a.store.GetUser(ctx, realm.ID, userID)
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
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusOK, f)
	}
	key := "realm:" + realm.ID + ":verify-resend:" + user.ID
	ipKey := "realm:" + realm.ID + ":verify-resend-ip:" + a.clientIP(r)
	if wait := max(a.loginThrottle.Wait(key, recoveryLimitPerUser), a.loginThrottle.Wait(ipKey, registration.ResendLimitPerIP)); wait > 0 {
		httpx.RetryAfter(w, wait)
		f.Error = "login.error.resendThrottled"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusTooManyRequests, f)
	}
	a.loginThrottle.Fail(key)
	a.loginThrottle.Fail(ipKey)
	err = a.queueActionMail(r.Context(), r, realm, user, store.ActionVerifyEmail, pathVerifyEmail, nil, mail.VerifyEmail)
	if errors.Is(err, errMailUnavailable) {
		f.Error = "login.error.mailUnavailable"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusServiceUnavailable, f)
	} else if err != nil {
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventSendVerifyEmail, UserID: user.ID, ClientID: client.ClientID,
		IPAddress: a.clientIP(r), Details: map[string]string{"email": user.Email}})
	f.Error = "login.info.verificationSent"
	return a.renderLoginWith(w, r, realm, client, ar, http.StatusOK, f)
}
