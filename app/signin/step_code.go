package signin

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// stepQuery names the step in its form's action, so that the post says
// which of the offered steps it answers.
func stepQuery(v View) string { return "?step=" + strconv.Itoa(v.Step) }

// codeStep asks the known user for a one-time code of a second factor: a
// TOTP code of the user's authenticator, or (recovery) one of the user's
// recovery codes.
type codeStep struct {
	core     *identity.Core
	pages    *Pages
	emit     Emitter
	recovery bool
}

func (s codeStep) Kind() StepKind {
	if s.recovery {
		return KindRecoveryCode
	}
	return KindTOTP
}

// AMR: a recovery code stands in for the TOTP code, as in the sign-in
// without a flow.
func (codeStep) AMR() []string       { return []string{"otp"} }
func (codeStep) Events() []EventType { return []EventType{EventLoginError} }

func (s codeStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, errKey string) error {
	form := ui.TOTPLoginForm{Action: v.Action + stepQuery(v), CSRFToken: v.CSRF, ClientName: f.Wants.ClientName,
		Recovery: s.recovery, Error: errKey}
	// The page's link to the other kind of code is the other step, when
	// the flow offers it here.
	if s.recovery {
		form.SwitchURL = v.Other(KindTOTP)
	} else {
		form.SwitchURL = v.Other(KindRecoveryCode)
	}
	form.WebAuthnURL = v.Other(KindSecurityKey)
	return s.pages.Render(w, r, status, ui.TOTPLogin(s.pages.Page("totp.login.title"), form))
}

func (s codeStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.page(w, r, f, v, http.StatusOK, "")
}

func (s codeStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx := r.Context()
	field, wrong := "code", "totp.error.code"
	if s.recovery {
		field, wrong = "recoveryCode", "totp.error.recovery"
	}
	err := s.core.CheckOneTimeCode(ctx, f.Realm, f.User, strings.TrimSpace(r.PostForm.Get(field)), s.recovery, v.ClientIP)
	s.emit.stepFailed(ctx, f, v, f.User.ID, "", err)
	var throttled *identity.ThrottledError
	switch {
	case errors.Is(err, identity.ErrInvalidTOTP): // a lockout too: it answers as a wrong code
		return nil, s.page(w, r, f, v, http.StatusUnauthorized, wrong)
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		return nil, s.page(w, r, f, v, http.StatusTooManyRequests, "totp.error.throttled")
	case err != nil:
		return nil, err
	}
	return f.User, nil
}
