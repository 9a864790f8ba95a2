package account

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
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

// TotpSetupRep is an enrolment in progress, for an application to show.
type TotpSetupRep struct {
	Status     string `json:"status"` // pending: waiting for its first code
	Secret     string `json:"secret"` // base32
	OTPAuthURI string `json:"otpauthUri"`
	QRPNG      string `json:"qrPng"` // base64 PNG of the otpauth URI
	Algorithm  string `json:"algorithm"`
	Digits     int    `json:"digits"`
	Period     int    `json:"period"`
	ExpiresAt  int64  `json:"expiresAt"` // Unix milliseconds: confirm before then
}

// TotpEnabledRep answers a confirmed enrolment: the recovery codes are
// shown this once.
type TotpEnabledRep struct {
	Enabled       bool     `json:"enabled"`
	RecoveryCodes []string `json:"recoveryCodes"`
}

// errAccountTOTPEnrolled: an enrolment for a user who has TOTP already.
var errAccountTOTPEnrolled = apperr.New(http.StatusConflict, apperr.CodeConflict, "TOTP is already set up: remove it with totp-disable before enrolling another authenticator")

func (s *Service) TOTPSetup(w http.ResponseWriter, r *http.Request, c *Caller) error {
	// Enrolling asks for a recent sign-in (reauth.go); seeing that TOTP
	// is on, and the form that removes it, does not.
	if cred, err := s.deps.Identity.UserTOTP(r.Context(), c.Realm, c.User.ID); err != nil {
		return err
	} else if cred == nil {
		if err := s.RecentAuth(c, Path(c.Realm)+"/totp-setup"); err != nil {
			return err
		}
	}
	e, err := s.deps.Identity.BeginTOTP(r.Context(), c.Realm, c.User)
	if errors.Is(err, identity.ErrTOTPEnrolled) {
		return signin.WithPage(errAccountTOTPEnrolled, s.accountTOTPEnabledPage(c, http.StatusOK))
	} else if err != nil {
		return err
	}
	if c.API {
		httpx.WriteJSON(w, http.StatusOK, TotpSetupRep{Status: "pending", Secret: e.Key.Secret(), OTPAuthURI: e.Key.URL(),
			QRPNG: base64.StdEncoding.EncodeToString(e.PNG), Algorithm: "SHA1", Digits: identity.TOTPDigits.Length(),
			Period: identity.TOTPPeriod, ExpiresAt: e.ExpiresAt.UnixMilli()})
		return nil
	}
	return s.renderAccountTOTPSetup(w, r, c, e, http.StatusOK, "")
}

// AccountTOTPInput is what the TOTP forms post.
type AccountTOTPInput struct {
	Code     string `json:"code"`
	Password string `json:"password"`
}

// readAccountTOTPInput reads a JSON body from a Bearer caller, or a form
// with its CSRF token from a browser: the password only where the form has
// one, the disable form.
func (s *Service) readAccountTOTPInput(r *http.Request, c *Caller, form string) (*AccountTOTPInput, error) {
	var in AccountTOTPInput
	if c.API {
		return &in, httpx.DecodeJSON(r, &in)
	}
	if err := r.ParseForm(); err != nil {
		return nil, errFormUnreadable
	}
	if err := s.deps.Pages.CheckCSRF(r, form, c.Session.ID); err != nil {
		return nil, err
	}
	in.Code = r.PostForm.Get("code")
	if form == accountTOTPDisableForm {
		in.Password = r.PostForm.Get("password")
	}
	return &in, nil
}

func (s *Service) TOTPConfirm(w http.ResponseWriter, r *http.Request, c *Caller) error {
	ctx := r.Context()
	in, err := s.readAccountTOTPInput(r, c, accountTOTPSetupForm)
	if err != nil {
		return err
	}
	if err := s.RecentAuth(c, Path(c.Realm)+"/totp-setup"); err != nil {
		return err
	}
	setupAgain := func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
		enrolment, err := s.deps.Identity.BeginTOTP(ctx, c.Realm, c.User)
		if err != nil {
			return err
		}
		return s.renderAccountTOTPSetup(w, r, c, enrolment, http.StatusBadRequest, e.Key)
	}
	if in.Password != "" { // a JSON body's: the setup form has no password
		return apperr.Field("password", "is not part of an enrolment: send the code")
	}
	if strings.TrimSpace(in.Code) == "" {
		return signin.WithPage(apperr.Field("code", "is required: the current code of the authenticator").WithKey("totp.error.code"), setupAgain)
	}
	codes, err := s.deps.Identity.ConfirmTOTP(ctx, c.Realm, c.User, in.Code, nil)
	switch {
	case errors.Is(err, identity.ErrTOTPEnrolled):
		return signin.WithPage(errAccountTOTPEnrolled, s.accountTOTPEnabledPage(c, http.StatusConflict))
	case errors.Is(err, identity.ErrNoTOTPEnrolment):
		return signin.WithPage(apperr.Invalid("no TOTP enrolment in progress, or it expired: GET totp-setup first").WithKey("totp.error.expired"), setupAgain)
	case errors.Is(err, identity.ErrInvalidTOTP):
		return signin.WithPage(apperr.Field("code", "is not a current code of the authenticator").WithKey("totp.error.code"), setupAgain)
	case err != nil:
		return err
	}
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventUpdateTOTP, UserID: c.User.ID, SessionID: c.SessionID(),
		IPAddress: s.deps.ClientIP(r), Details: map[string]string{"username": c.User.Username}})
	if c.API {
		httpx.WriteJSON(w, http.StatusOK, TotpEnabledRep{Enabled: true, RecoveryCodes: codes})
		return nil
	}
	return s.deps.Pages.Render(w, r, http.StatusOK, ui.AccountRecoveryCodes(s.deps.Pages.Page("account.totp.done.title"), codes))
}

// TOTPDisable removes the user's authenticator. The proof is a
// current code (which it uses up) or the password, both throttled as
// sign-ins are: a stolen access token alone does not turn TOTP off.
func (s *Service) TOTPDisable(w http.ResponseWriter, r *http.Request, c *Caller) error {
	ctx := r.Context()
	in, err := s.readAccountTOTPInput(r, c, accountTOTPDisableForm)
	if err != nil {
		return err
	}
	cred, err := s.deps.Identity.UserTOTP(ctx, c.Realm, c.User.ID)
	if err != nil {
		return err
	}
	if cred == nil {
		return signin.WithPage(apperr.NotFound("TOTP credential"), func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
			return s.renderAccountTOTPRemoved(w, r, c)
		})
	}
	var f ui.AccountTOTPForm // the form again, with the message at the proof
	switch {
	// Both proofs are checked as at sign-in, under the realm's brute-force
	// policy too: a locked user's proof is refused as a wrong one.
	case strings.TrimSpace(in.Code) != "":
		err = s.deps.Identity.CheckOneTimeCode(ctx, c.Realm, c.User, in.Code, false, s.deps.ClientIP(r))
		s.accountLockedEvent(ctx, r, c, err, map[string]string{"method": "totp"})
		if errors.Is(err, identity.ErrInvalidTOTP) {
			err = apperr.Field("code", "is wrong or was already used")
		}
		f.CodeError = "totp.error.code"
	case in.Password != "":
		err = s.deps.Identity.CheckUserPassword(ctx, c.Realm, c.User, in.Password, s.deps.ClientIP(r))
		s.accountLockedEvent(ctx, r, c, err, nil)
		if errors.Is(err, identity.ErrBadCredentials) {
			err = apperr.Field("password", "is wrong")
		}
		f.PasswordError = "account.totp.error.password"
	default:
		err = apperr.Field("code", "or password is required: a current code of the authenticator, or the password")
		f.Alert = "account.totp.error.proof"
	}
	if err != nil {
		err = signin.ThrottleRefusal(err, "too many failed attempts; try again later", "account.totp.error.throttled")
		return signin.WithPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			if e.Code == apperr.CodeTooManyRequests {
				f = ui.AccountTOTPForm{Alert: e.Key}
			}
			return s.renderAccountTOTPEnabled(w, r, c, e.Status, f)
		})
	}
	if _, err := s.deps.Store.DeleteCredentials(ctx, c.Realm.ID, c.User.ID, store.CredentialTOTP); err != nil {
		return err
	}
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventRemoveTOTP, UserID: c.User.ID, SessionID: c.SessionID(),
		IPAddress: s.deps.ClientIP(r), Details: map[string]string{"username": c.User.Username}})
	if c.API {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return s.renderAccountTOTPRemoved(w, r, c)
}

func (s *Service) accountTOTPPath(c *Caller, rel string) string {
	return s.deps.BaseURL + Path(c.Realm) + rel
}

func (s *Service) renderAccountTOTPSetup(w http.ResponseWriter, r *http.Request, c *Caller, e *identity.TOTPEnrolment, status int, errKey string) error {
	token := s.deps.Pages.CSRFToken(w, r, c.Realm, accountTOTPSetupForm, c.Session.ID)
	return s.deps.Pages.Render(w, r, status, ui.AccountTOTPSetup(s.deps.Pages.Page("account.totp.setup.title"), ui.AccountTOTPSetupForm{
		Action: s.accountTOTPPath(c, "/totp-setup"), CSRFToken: token,
		Enrolment: ui.TOTPEnrolment{QRDataURL: e.QRDataURL(), Secret: e.Secret()}, Error: errKey}))
}

// accountTOTPEnabledPage is the page that says TOTP is on, with the form
// that removes it, for a browser whose request finds it on.
func (s *Service) accountTOTPEnabledPage(c *Caller, status int) func(http.ResponseWriter, *http.Request, *apperr.Error) error {
	return func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
		return s.renderAccountTOTPEnabled(w, r, c, status, ui.AccountTOTPForm{})
	}
}

func (s *Service) renderAccountTOTPEnabled(w http.ResponseWriter, r *http.Request, c *Caller, status int, f ui.AccountTOTPForm) error {
	token := s.deps.Pages.CSRFToken(w, r, c.Realm, accountTOTPDisableForm, c.Session.ID)
	f.Action, f.CSRFToken = s.accountTOTPPath(c, "/totp-disable"), token
	return s.deps.Pages.Render(w, r, status, ui.AccountTOTPEnabled(s.deps.Pages.Page("account.totp.enabled.title"), f))
}

func (s *Service) renderAccountTOTPRemoved(w http.ResponseWriter, r *http.Request, c *Caller) error {
	return s.deps.Pages.Render(w, r, http.StatusOK, ui.AccountTOTPRemoved(s.deps.Pages.Page("account.totp.removed.title"),
		s.accountTOTPPath(c, "/totp-setup")))
}
