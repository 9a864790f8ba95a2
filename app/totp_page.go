package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The second step of a browser sign-in, GET and POST /realms/{realm}/totp.
// After the right password of a user who owes a second factor, login
// records a step for the authorization request instead of authenticating
// it (auth_request_steps); this page takes what the step owes and only
// then signs the user in, exactly as login would, with amr pwd and otp.
// The step is bound to the browser that gave the password, through its
// CSRF cookie, so the authorization request's ID alone is no way in.

const (
	pathTOTP = "/totp"
	totpForm = "totp" // names the form in its CSRF token
)

// startSecondFactor takes over a login whose password was right when the
// user owes a second factor: it records the step and sends the browser
// to this page. It says whether it did.
func (a *App) startSecondFactor(w http.ResponseWriter, r *http.Request, realm *store.Realm, ar *store.AuthRequest, user *store.User, remember bool) (bool, error) {
	return a.startSecondStep(w, r, realm, ar, user, remember, false)
}

// startSecondStep is startSecondFactor after a first factor that was a
// password, or, federated, an upstream identity provider's sign-in.
func (a *App) startSecondStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, ar *store.AuthRequest, user *store.User, remember, federated bool) (bool, error) {
	ctx := r.Context()
	pending, err := a.id.NeedsSecondFactor(ctx, realm, user.ID)
	if err != nil || pending == "" {
		return false, err
	}
	browser := browserHash(r)
	if browser == nil { // login checked its CSRF token, so the cookie is there
		return false, signin.ErrCSRF
	}
	now := a.now().UnixMilli()
	err = a.store.CreateAuthRequestStep(ctx, realm.ID, &store.AuthRequestStep{AuthRequestID: ar.ID, UserID: user.ID,
		Pending: pending, BrowserHash: browser, PasswordAt: now, RememberMe: remember, Federated: federated}, now)
	if errors.Is(err, store.ErrNotFound) {
		return false, errStaleAuthRequest
	} else if err != nil {
		return false, err
	}
	http.Redirect(w, r, totpURL(a.issuer(realm), ar.ID, false), http.StatusSeeOther)
	return true, nil
}

func totpURL(issuer, authRequestID string, recovery bool) string {
	q := url.Values{"authRequestID": {authRequestID}}
	if recovery {
		q.Set("use", "recovery")
	}
	return issuer + pathTOTP + "?" + q.Encode()
}

// totpState is a sign-in at its second step.
type totpState struct {
	ar     *store.AuthRequest
	client *store.Client
	step   *store.AuthRequestStep
	user   *store.User
}

// totpStep loads the step a TOTP page answers: of a pending request of
// the realm, started in this browser, for a user still able to sign in.
func (a *App) totpStep(r *http.Request, realm *store.Realm, id string) (*totpState, error) {
	ctx := r.Context()
	ar, client, err := a.pageAuthRequest(ctx, realm, id, false)
	if err != nil {
		return nil, err
	}
	step, err := a.store.GetAuthRequestStep(ctx, realm.ID, ar.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStaleAuthRequest
	} else if err != nil {
		return nil, err
	}
	if browser := browserHash(r); browser == nil || subtle.ConstantTimeCompare(browser, step.BrowserHash) != 1 {
		return nil, errOtherBrowser
	}
	user, err := a.store.GetUser(ctx, realm.ID, step.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && !user.Enabled {
		return nil, errStaleAuthRequest
	} else if err != nil {
		return nil, err
	}
	return &totpState{ar: ar, client: client, step: step, user: user}, nil
}

// totpPage shows what the step owes: a code, an enrolment, or the way on
// after the recovery codes were shown.
func (a *App) totpPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	st, err := a.totpStep(r, realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	switch st.step.Pending {
	case store.StepTOTP:
		return a.renderTOTPLogin(w, r, realm, st, http.StatusOK, ui.TOTPLoginForm{Recovery: r.URL.Query().Get("use") == "recovery"})
	case store.StepTOTPSetup:
		return a.renderTOTPSetup(w, r, realm, st, http.StatusOK, "")
	case store.StepWebAuthn: // a security key's step: webauthn_login.go
		return a.toWebAuthnStep(w, r, realm, st)
	default:
		return a.renderRecoveryCodes(w, r, realm, st, nil)
	}
}

// totpSubmit takes the step's form.
func (a *App) totpSubmit(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	st, err := a.totpStep(r, realm, r.PostForm.Get("authRequestID"))
	if err != nil {
		return err
	}
	if err := a.pages.CheckCSRF(r, totpForm, st.ar.ID); err != nil {
		return err
	}
	switch st.step.Pending {
	case store.StepTOTP:
		return a.totpVerify(w, r, realm, st)
	case store.StepTOTPSetup:
		return a.totpEnrol(w, r, realm, st)
	case store.StepWebAuthn: // a security key's step: webauthn_login.go
		return a.toWebAuthnStep(w, r, realm, st)
	default:
		return a.finishSecondStep(w, r, realm, st, loginAMR(true))
	}
}

// totpVerify checks a TOTP code, or a recovery code, throttled per user
// and per address as passwords are, and under the realm's brute-force
// policy: a locked user's code is refused as a wrong one is.
func (a *App) totpVerify(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState) error {
	ctx := r.Context()
	recovery := r.PostForm.Get("method") == "recovery"
	f := ui.TOTPLoginForm{Recovery: recovery}
	method, code := "totp", r.PostForm.Get("code")
	if recovery {
		method, code = "recovery-code", r.PostForm.Get("recoveryCode")
	}
	err := a.id.CheckOneTimeCode(ctx, realm, st.user, code, recovery, a.clientIP(r))
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &throttled):
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: st.user.ID, ClientID: st.client.ClientID,
			IPAddress: a.clientIP(r), Error: "user_temporarily_disabled", Details: map[string]string{"username": st.user.Username}})
		httpx.RetryAfter(w, throttled.Wait)
		f.Alert = "totp.error.throttled"
		return a.renderTOTPLogin(w, r, realm, st, http.StatusTooManyRequests, f)
	case errors.Is(err, identity.ErrInvalidTOTP): // a lockout too: it answers as a wrong code
		reason := "invalid_totp"
		if _, locked := identity.LockedOut(err); locked {
			reason = "user_temporarily_disabled"
		}
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: st.user.ID, ClientID: st.client.ClientID,
			IPAddress: a.clientIP(r), Error: reason, Details: map[string]string{"username": st.user.Username, "method": method}})
		f.Error = "totp.error.code"
		if recovery {
			f.Error = "totp.error.recovery"
		}
		return a.renderTOTPLogin(w, r, realm, st, http.StatusUnauthorized, f)
	case err != nil:
		return err
	}
	return a.finishSecondStep(w, r, realm, st, loginAMR(true))
}

// totpEnrol confirms the enrolment a realm requiring a second factor asked
// for, then shows the recovery codes.
func (a *App) totpEnrol(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState) error {
	ctx := r.Context()
	// The step moves on in the confirming transaction: the recovery codes
	// are shown by the one request that confirmed.
	codes, err := a.id.ConfirmTOTP(ctx, realm, st.user, r.PostForm.Get("code"), func(tx *store.Store) error {
		return tx.AdvanceAuthRequestStep(ctx, st.ar.ID, store.StepTOTPSetup, store.StepRecoveryCodes)
	})
	switch {
	case errors.Is(err, identity.ErrInvalidTOTP):
		return a.renderTOTPSetup(w, r, realm, st, http.StatusBadRequest, "totp.error.code")
	case errors.Is(err, identity.ErrNoTOTPEnrolment):
		return a.renderTOTPSetup(w, r, realm, st, http.StatusBadRequest, "totp.error.expired")
	case errors.Is(err, identity.ErrTOTPEnrolled):
		return a.askForCodeInstead(w, r, realm, st)
	case err != nil:
		return err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventUpdateTOTP, UserID: st.user.ID, ClientID: st.client.ClientID,
		IPAddress: a.clientIP(r), Details: map[string]string{"username": st.user.Username}})
	st.step.Pending = store.StepRecoveryCodes
	return a.renderRecoveryCodes(w, r, realm, st, codes)
}

// askForCodeInstead turns an enrolment step into a code step: the user
// enrolled elsewhere meanwhile, so the new authenticator is what counts.
func (a *App) askForCodeInstead(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState) error {
	err := a.store.AdvanceAuthRequestStep(r.Context(), st.ar.ID, store.StepTOTPSetup, store.StepTOTP)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	http.Redirect(w, r, totpURL(a.issuer(realm), st.ar.ID, false), http.StatusSeeOther)
	return nil
}

// finishSecondStep completes a sign-in's step and signs the user in,
// authenticated by amr, or, when the account owes a password change,
// hands the sign-in on to that step with amr, in the transaction that
// completes this one.
func (a *App) finishSecondStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, amr []string) error {
	if st.step.Federated { // the first factor was an identity provider's, not a password
		amr = slices.Clone(amr)
		for i, m := range amr {
			if m == amrPassword {
				amr[i] = broker.AMRFederated
			}
		}
	}
	pending := st.step.Pending
	complete := func(ctx context.Context, tx *store.Store) error {
		return tx.CompleteAuthRequestStep(ctx, st.ar.ID, pending)
	}
	if identity.PasswordChangeRequired(realm, st.user, a.now()) {
		return a.startPendingLogin(w, r, realm, st.ar, st.user, store.ActionUpdatePassword,
			pendingSignIn{remember: st.step.RememberMe, amr: amr, also: complete})
	}
	sso, err := a.signInBrowser(w, r, realm, st.client, st.ar, st.user, browserSignIn{
		remember: st.step.RememberMe,
		amr:      amr,
		also:     complete,
	})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, st.client, st.ar, st.user, sso)
}

func (a *App) renderTOTPLogin(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, status int, f ui.TOTPLoginForm) error {
	token := a.pages.CSRFToken(w, r, realm, totpForm, st.ar.ID)
	f.Action, f.AuthRequestID, f.CSRFToken, f.ClientName = a.issuer(realm)+pathTOTP, st.ar.ID, token, clientName(st.client)
	f.SwitchURL = totpURL(a.issuer(realm), st.ar.ID, !f.Recovery)
	f.WebAuthnURL = a.webauthnStepLink(r.Context(), realm, st) // webauthn_login.go
	return a.pages.Render(w, r, status, ui.TOTPLogin(a.pages.Page("totp.login.title"), f))
}

func (a *App) renderTOTPSetup(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, status int, errKey string) error {
	e, err := a.id.BeginTOTP(r.Context(), realm, st.user)
	if errors.Is(err, identity.ErrTOTPEnrolled) {
		return a.askForCodeInstead(w, r, realm, st)
	} else if err != nil {
		return err
	}
	token := a.pages.CSRFToken(w, r, realm, totpForm, st.ar.ID)
	return a.pages.Render(w, r, status, ui.TOTPSetup(a.pages.Page("totp.setup.title"), ui.TOTPSetupForm{
		Action: a.issuer(realm) + pathTOTP, AuthRequestID: st.ar.ID, CSRFToken: token, ClientName: clientName(st.client),
		Enrolment: ui.TOTPEnrolment{QRDataURL: e.QRDataURL(), Secret: e.Secret()}, Error: errKey,
		PasskeyURL: a.webauthnStepLink(r.Context(), realm, st)})) // webauthn_login.go
}

func (a *App) renderRecoveryCodes(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, codes []string) error {
	token := a.pages.CSRFToken(w, r, realm, totpForm, st.ar.ID)
	return a.pages.Render(w, r, http.StatusOK, ui.RecoveryCodes(a.pages.Page("recoveryCodes.title"), ui.RecoveryCodesForm{
		Action: a.issuer(realm) + pathTOTP, AuthRequestID: st.ar.ID, CSRFToken: token, Codes: codes}))
}
