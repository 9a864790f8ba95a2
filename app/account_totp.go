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

// totpEnabledRep answers a confirmed enrolment: the recovery codes are
// shown this once.
type totpEnabledRep struct {
	Enabled       bool     `json:"enabled"`
	RecoveryCodes []string `json:"recoveryCodes"`
}

// errAccountTOTPEnrolled: an enrolment for a user who has TOTP already.
var errAccountTOTPEnrolled = apperr.New(http.StatusConflict, apperr.CodeConflict, "TOTP is already set up: remove it with totp-disable before enrolling another authenticator")

func (a *App) accountTOTPSetup(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	// Enrolling asks for a recent sign-in (reauth.go); seeing that TOTP
	// is on, and the form that removes it, does not.
	if cred, err := a.id.UserTOTP(r.Context(), c.realm, c.user.ID); err != nil {
		return err
	} else if cred == nil {
		if err := a.recentAuth(c, accountPath(c.realm)+"/totp-setup"); err != nil {
			return err
		}
	}
	e, err := a.id.BeginTOTP(r.Context(), c.realm, c.user)
	if errors.Is(err, identity.ErrTOTPEnrolled) {
		return withPage(errAccountTOTPEnrolled, a.accountTOTPEnabledPage(c, http.StatusOK))
	} else if err != nil {
		return err
	}
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, totpSetupRep{Status: "pending", Secret: e.Key.Secret(), OTPAuthURI: e.Key.URL(),
			QRPNG: base64.StdEncoding.EncodeToString(e.PNG), Algorithm: "SHA1", Digits: identity.TOTPDigits.Length(),
			Period: identity.TOTPPeriod, ExpiresAt: e.ExpiresAt.UnixMilli()})
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
// with its CSRF token from a browser: the password only where the form has
// one, the disable form.
func (a *App) readAccountTOTPInput(r *http.Request, c *accountCaller, form string) (*accountTOTPInput, error) {
	var in accountTOTPInput
	if c.api {
		return &in, httpx.DecodeJSON(r, &in)
	}
	if err := r.ParseForm(); err != nil {
		return nil, badPage("error.formUnreadable")
	}
	if err := a.pages.CheckCSRF(r, form, c.session.ID); err != nil {
		return nil, err
	}
	in.Code = r.PostForm.Get("code")
	if form == accountTOTPDisableForm {
		in.Password = r.PostForm.Get("password")
	}
	return &in, nil
}

func (a *App) accountTOTPConfirm(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	in, err := a.readAccountTOTPInput(r, c, accountTOTPSetupForm)
	if err != nil {
		return err
	}
	if err := a.recentAuth(c, accountPath(c.realm)+"/totp-setup"); err != nil {
		return err
	}
	setupAgain := func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
		enrolment, err := a.id.BeginTOTP(ctx, c.realm, c.user)
		if err != nil {
			return err
		}
		return a.renderAccountTOTPSetup(w, r, c, enrolment, http.StatusBadRequest, e.Key)
	}
	if in.Password != "" { // a JSON body's: the setup form has no password
		return apperr.Field("password", "is not part of an enrolment: send the code")
	}
	if strings.TrimSpace(in.Code) == "" {
		return withPage(apperr.Field("code", "is required: the current code of the authenticator").WithKey("totp.error.code"), setupAgain)
	}
	codes, err := a.id.ConfirmTOTP(ctx, c.realm, c.user, in.Code, nil)
	switch {
	case errors.Is(err, identity.ErrTOTPEnrolled):
		return withPage(errAccountTOTPEnrolled, a.accountTOTPEnabledPage(c, http.StatusConflict))
	case errors.Is(err, identity.ErrNoTOTPEnrolment):
		return withPage(apperr.Invalid("no TOTP enrolment in progress, or it expired: GET totp-setup first").WithKey("totp.error.expired"), setupAgain)
	case errors.Is(err, identity.ErrInvalidTOTP):
		return withPage(apperr.Field("code", "is not a current code of the authenticator").WithKey("totp.error.code"), setupAgain)
	case err != nil:
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventUpdateTOTP, UserID: c.user.ID, SessionID: accountSessionID(c),
		IPAddress: a.clientIP(r), Details: map[string]string{"username": c.user.Username}})
	if c.api {
		httpx.WriteJSON(w, http.StatusOK, totpEnabledRep{Enabled: true, RecoveryCodes: codes})
		return nil
	}
	return a.pages.Render(w, r, http.StatusOK, ui.AccountRecoveryCodes(a.pages.Page("account.totp.done.title"), codes))
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
		return withPage(apperr.NotFound("TOTP credential"), func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
			return a.renderAccountTOTPRemoved(w, r, c)
		})
	}
	var f ui.AccountTOTPForm // the form again, with the message at the proof
	switch {
	// Both proofs are checked as at sign-in, under the realm's brute-force
	// policy too: a locked user's proof is refused as a wrong one.
	case strings.TrimSpace(in.Code) != "":
		err = a.id.CheckOneTimeCode(ctx, c.realm, c.user, in.Code, false, a.clientIP(r))
		a.accountLockedEvent(ctx, r, c, err, map[string]string{"method": "totp"})
		if errors.Is(err, identity.ErrInvalidTOTP) {
			err = apperr.Field("code", "is wrong or was already used")
		}
		f.CodeError = "totp.error.code"
	case in.Password != "":
		err = a.id.CheckUserPassword(ctx, c.realm, c.user, in.Password, a.clientIP(r))
		a.accountLockedEvent(ctx, r, c, err, nil)
		if errors.Is(err, identity.ErrBadCredentials) {
			err = apperr.Field("password", "is wrong")
		}
		f.PasswordError = "account.totp.error.password"
	default:
		err = apperr.Field("code", "or password is required: a current code of the authenticator, or the password")
		f.Alert = "account.totp.error.proof"
	}
	if err != nil {
		err = throttleRefusal(err, "too many failed attempts; try again later", "account.totp.error.throttled")
		return withPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			if e.Code == apperr.CodeTooManyRequests {
				f = ui.AccountTOTPForm{Alert: e.Key}
			}
			return a.renderAccountTOTPEnabled(w, r, c, e.Status, f)
		})
	}
	if _, err := a.store.DeleteCredentials(ctx, c.realm.ID, c.user.ID, store.CredentialTOTP); err != nil {
		return err
	}
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventRemoveTOTP, UserID: c.user.ID, SessionID: accountSessionID(c),
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

func (a *App) renderAccountTOTPSetup(w http.ResponseWriter, r *http.Request, c *accountCaller, e *identity.TOTPEnrolment, status int, errKey string) error {
	token := a.pages.CSRFToken(w, r, c.realm, accountTOTPSetupForm, c.session.ID)
	return a.pages.Render(w, r, status, ui.AccountTOTPSetup(a.pages.Page("account.totp.setup.title"), ui.AccountTOTPSetupForm{
		Action: a.accountTOTPPath(c, "/totp-setup"), CSRFToken: token,
		Enrolment: ui.TOTPEnrolment{QRDataURL: e.QRDataURL(), Secret: e.Secret()}, Error: errKey}))
}

// accountTOTPEnabledPage is the page that says TOTP is on, with the form
// that removes it, for a browser whose request finds it on.
func (a *App) accountTOTPEnabledPage(c *accountCaller, status int) func(http.ResponseWriter, *http.Request, *apperr.Error) error {
	return func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
		return a.renderAccountTOTPEnabled(w, r, c, status, ui.AccountTOTPForm{})
	}
}

func (a *App) renderAccountTOTPEnabled(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, f ui.AccountTOTPForm) error {
	token := a.pages.CSRFToken(w, r, c.realm, accountTOTPDisableForm, c.session.ID)
	f.Action, f.CSRFToken = a.accountTOTPPath(c, "/totp-disable"), token
	return a.pages.Render(w, r, status, ui.AccountTOTPEnabled(a.pages.Page("account.totp.enabled.title"), f))
}

func (a *App) renderAccountTOTPRemoved(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	return a.pages.Render(w, r, http.StatusOK, ui.AccountTOTPRemoved(a.pages.Page("account.totp.removed.title"),
		a.accountTOTPPath(c, "/totp-setup")))
}
