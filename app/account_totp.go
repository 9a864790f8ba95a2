package app

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// TOTP in account self-service: GET /totp-setup begins (or resumes) an
// enrolment, POST /totp-setup confirms it with a first code and answers
// with the recovery codes, once; POST /totp-disable removes the
// authenticator, proven by a current code or the password. A Bearer
// caller sends and gets JSON; a browser gets pages whose forms carry a
// CSRF token bound to its SSO session.

const (
	accountTOTPSetupForm   = "account-totp-setup"
	accountTOTPDisableForm = "account-totp-disable"
)

// totpSetupRep is an enrolment in progress, for an application to show.
type totpSetupRep struct {
	Status     string `json:"status"` // pending: waiting for its first code
	Secret     string `json:"secret"` // base32
	OTPAuthURI string `json:"otpauthUri"`
	QRPNG      string `json:"qrPng"` // base64 PNG of the otpauth URI
	Algorithm  string `json:"algorithm"`
	Digits     int    `json:"digits"`
	Period     int    `json:"period"`
	ExpiresAt  int64  `json:"expiresAt"` // Unix milliseconds: confirm before then
}

var errAPITOTPEnrolled = apperr.New(http.StatusConflict, apperr.CodeConflict, "TOTP is already set up: remove it with totp-disable before enrolling another authenticator")

func (a *App) accountTOTPSetup(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	// Enrolling asks for a recent sign-in (reauth.go); seeing that TOTP
	// is on, and the form that removes it, does not.
	if cred, err := a.id.UserTOTP(r.Context(), c.realm, c.user.ID); err != nil {
		return err
	} else if cred == nil {
		if fresh, err := a.recentAuth(w, r, c, accountPath(c.realm)+"/totp-setup"); !fresh {
			return err
		}
	}
	e, err := a.beginTOTP(r.Context(), c.realm, c.user)
	switch {
	case errors.Is(err, errTOTPEnrolled) && c.api:
		return errAPITOTPEnrolled
	case errors.Is(err, errTOTPEnrolled):
		return a.renderAccountTOTPEnabled(w, r, c, http.StatusOK, ui.AccountTOTPForm{})
	case err != nil:
		return err
	}
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, totpSetupRep{Status: "pending", Secret: e.key.Secret(), OTPAuthURI: e.key.URL(),
			QRPNG: base64.StdEncoding.EncodeToString(e.png), Algorithm: "SHA1", Digits: identity.TOTPDigits.Length(),
			Period: identity.TOTPPeriod, ExpiresAt: e.expiresAt.UnixMilli()})
		return nil
	}
	return a.renderAccountTOTPSetup(w, r, c, e, http.StatusOK, "")
}

// accountTOTPInput is what the TOTP forms post.
type accountTOTPInput struct {
	Code     string `json:"code"`
	Password string `json:"password"`
}

// readAccountTOTPInput reads a JSON body from a Bearer caller, or a form
// with its CSRF token from a browser.
func (a *App) readAccountTOTPInput(r *http.Request, c *accountCaller, form string) (*accountTOTPInput, error) {
	var in accountTOTPInput
	if c.api {
		return &in, httpx.DecodeJSON(r, &in)
	}
	if err := r.ParseForm(); err != nil {
		return nil, badPage("error.formUnreadable")
	}
	if err := a.checkCSRF(r, form, c.session.ID); err != nil {
		return nil, err
	}
	in.Code, in.Password = r.PostForm.Get("code"), r.PostForm.Get("password")
	return &in, nil
}

func (a *App) accountTOTPConfirm(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	in, err := a.readAccountTOTPInput(r, c, accountTOTPSetupForm)
	if err != nil {
		return err
	}
	if fresh, err := a.recentAuth(w, r, c, accountPath(c.realm)+"/totp-setup"); !fresh {
		return err
	}
	if c.api && in.Password != "" {
		return apperr.Field("password", "is not part of an enrolment: send the code")
	}
	if c.api && strings.TrimSpace(in.Code) == "" {
		return apperr.Field("code", "is required: the current code of the authenticator")
	}
	codes, err := a.confirmTOTP(ctx, c.realm, c.user, in.Code, nil)
	switch {
	case errors.Is(err, errTOTPEnrolled) && c.api:
		return errAPITOTPEnrolled
	case errors.Is(err, errTOTPEnrolled):
		return a.renderAccountTOTPEnabled(w, r, c, http.StatusConflict, ui.AccountTOTPForm{})
	case errors.Is(err, errNoEnrolment) && c.api:
		return apperr.Invalid("no TOTP enrolment in progress, or it expired: GET totp-setup first")
	case errors.Is(err, identity.ErrInvalidTOTP) && c.api:
		return apperr.Field("code", "is not a current code of the authenticator")
	case errors.Is(err, errNoEnrolment), errors.Is(err, identity.ErrInvalidTOTP):
		msg := "totp.error.code"
		if errors.Is(err, errNoEnrolment) {
			msg = "totp.error.expired"
		}
		e, err := a.beginTOTP(ctx, c.realm, c.user)
		if err != nil {
			return err
		}
		return a.renderAccountTOTPSetup(w, r, c, e, http.StatusBadRequest, msg)
	case err != nil:
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: "UPDATE_TOTP", UserID: c.user.ID, SessionID: accountSessionID(c),
		IPAddress: a.clientIP(r), Details: map[string]string{"username": c.user.Username}})
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"enabled": true, "recoveryCodes": codes})
		return nil
	}
	return a.renderPage(w, r, http.StatusOK, ui.AccountRecoveryCodes(a.page("account.totp.done.title"), codes))
}

// accountTOTPDisable removes the user's authenticator. The proof is a
// current code (which it uses up) or the password, both throttled as
// sign-ins are: a stolen access token alone does not turn TOTP off.
func (a *App) accountTOTPDisable(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	in, err := a.readAccountTOTPInput(r, c, accountTOTPDisableForm)
	if err != nil {
		return err
	}
	cred, err := a.id.UserTOTP(ctx, c.realm, c.user.ID)
	if err != nil {
		return err
	}
	if cred == nil {
		if c.api {
			return apperr.NotFound("TOTP credential")
		}
		return a.renderAccountTOTPRemoved(w, r, c)
	}
	var f ui.AccountTOTPForm
	switch {
	// Both proofs are checked as at sign-in, under the realm's brute-force
	// policy too: a locked user's proof is refused as a wrong one.
	case strings.TrimSpace(in.Code) != "":
		err = a.id.CheckOneTimeCode(ctx, c.realm, c.user, in.Code, false, a.clientIP(r))
		a.accountLockedEvent(ctx, r, c, err, map[string]string{"method": "totp"})
		f.CodeError = "totp.error.code"
	case in.Password != "":
		err = a.id.CheckUserPassword(ctx, c.realm, c.user, in.Password, a.clientIP(r))
		a.accountLockedEvent(ctx, r, c, err, nil)
		f.PasswordError = "account.totp.error.password"
	default:
		if c.api {
			return apperr.Field("code", "or password is required: a current code of the authenticator, or the password")
		}
		return a.renderAccountTOTPEnabled(w, r, c, http.StatusBadRequest, ui.AccountTOTPForm{Alert: "account.totp.error.proof"})
	}
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		if c.api {
			return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many failed attempts; try again later")
		}
		return a.renderAccountTOTPEnabled(w, r, c, http.StatusTooManyRequests, ui.AccountTOTPForm{Alert: "account.totp.error.throttled"})
	case errors.Is(err, identity.ErrInvalidTOTP) && c.api:
		return apperr.Field("code", "is wrong or was already used")
	case errors.Is(err, identity.ErrBadCredentials) && c.api:
		return apperr.Field("password", "is wrong")
	case errors.Is(err, identity.ErrInvalidTOTP), errors.Is(err, identity.ErrBadCredentials):
		return a.renderAccountTOTPEnabled(w, r, c, http.StatusBadRequest, f)
	case err != nil:
		return err
	}
	if _, err := a.store.DeleteCredentials(ctx, c.realm.ID, c.user.ID, store.CredentialTOTP); err != nil {
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: "REMOVE_TOTP", UserID: c.user.ID, SessionID: accountSessionID(c),
		IPAddress: a.clientIP(r), Details: map[string]string{"username": c.user.Username}})
	if c.api {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return a.renderAccountTOTPRemoved(w, r, c)
}

func accountSessionID(c *accountCaller) string {
	if c.session == nil {
		return ""
	}
	return c.session.ID
}

func (a *App) accountTOTPPath(c *accountCaller, rel string) string {
	return a.cfg.BaseURL + accountPath(c.realm) + rel
}

func (a *App) renderAccountTOTPSetup(w http.ResponseWriter, r *http.Request, c *accountCaller, e *totpEnrolment, status int, errKey string) error {
	token, err := a.csrfToken(w, r, c.realm, accountTOTPSetupForm, c.session.ID)
	if err != nil {
		return err
	}
	return a.renderPage(w, r, status, ui.AccountTOTPSetup(a.page("account.totp.setup.title"), ui.AccountTOTPSetupForm{
		Action: a.accountTOTPPath(c, "/totp-setup"), CSRFToken: token,
		Enrolment: ui.TOTPEnrolment{QRDataURL: e.qrDataURL(), Secret: e.secret()}, Error: errKey}))
}

func (a *App) renderAccountTOTPEnabled(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, f ui.AccountTOTPForm) error {
	token, err := a.csrfToken(w, r, c.realm, accountTOTPDisableForm, c.session.ID)
	if err != nil {
		return err
	}
	f.Action, f.CSRFToken = a.accountTOTPPath(c, "/totp-disable"), token
	return a.renderPage(w, r, status, ui.AccountTOTPEnabled(a.page("account.totp.enabled.title"), f))
}

func (a *App) renderAccountTOTPRemoved(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	return a.renderPage(w, r, http.StatusOK, ui.AccountTOTPRemoved(a.page("account.totp.removed.title"),
		a.accountTOTPPath(c, "/totp-setup")))
}
