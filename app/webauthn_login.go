package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Signing in with WebAuthn. authenticate/options asks for an assertion:
// of the user of a sign-in's second step (authRequestID, this browser's),
// as a second factor after the password; of a named user; or, named by
// nobody, of any passkey the authenticator holds for the realm (a
// discoverable credential, whose user handle names the user). Without a
// password the key must verify the user (PIN or biometrics), and a
// second step's ceremony, which does not ask for that, is never taken
// for a sign-in by the key alone (verifyAssertion).
// authenticate/verify checks the assertion once per ceremony: as JSON it
// only answers whose key it was; posted as a form by the login page or the
// second step's page, it signs the browser in and goes on with the
// authorization request, as the password form does.

// errWebAuthnRefused answers every refused assertion alike, so that the
// answer never tells an unknown key from a disabled or locked user.
var errWebAuthnRefused = apperr.New(http.StatusUnauthorized, apperr.CodeInvalidCredentials, "the security key or passkey was not accepted")

// afterPasswordAMR is how an assertion after the password authenticated.
func afterPasswordAMR(as *webauthnrp.Assertion) []string {
	return []string{amrPassword, as.Key()}
}

// webauthnAuthenticateOptions begins an authentication. A username that
// names no user with a credential gets the options of a passkey sign-in,
// as one without a username does: the answer's shape does not tell
// whether the user exists unless the user has a key.
func (a *App) webauthnAuthenticateOptions(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	in, err := readWebAuthnRequest(r, "username", "authRequestID")
	if err != nil {
		return err
	}
	if _, _, err := a.webauthn.Host(); err != nil {
		return err
	}
	ctx := r.Context()
	var wu *webauthnrp.User
	secondFactor := false
	switch {
	case in.AuthRequestID != "":
		st, err := a.totpStep(r, realm, in.AuthRequestID)
		if err != nil {
			return err
		}
		if st.step.Pending != store.StepTOTP && st.step.Pending != store.StepWebAuthn {
			return apperr.Invalid("this sign-in does not ask for a second factor now")
		}
		if wu, err = a.webauthn.LoginUser(ctx, realm, st.user); err != nil {
			return err
		} else if wu == nil {
			return webauthnrp.ErrNoKey
		}
		secondFactor = true // after the password
	case strings.TrimSpace(in.Username) != "":
		user, err := a.id.FindLoginUser(ctx, realm, strings.TrimSpace(in.Username))
		if err != nil {
			return err
		}
		if user != nil && user.Enabled && user.ServiceAccountClientID == "" {
			if wu, err = a.webauthn.LoginUser(ctx, realm, user); err != nil {
				return err
			}
		}
	}
	opts, err := a.webauthn.BeginAssertion(ctx, realm, wu, secondFactor)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, toWebAuthnOptionsRep(opts))
	return nil
}

// webauthnAuthenticateVerify checks an assertion: as JSON, an answer of
// whose key it was; as a browser's form, a sign-in.
func (a *App) webauthnAuthenticateVerify(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	in, err := readWebAuthnRequest(r, "ceremonyId", "credential")
	if err != nil {
		return err
	}
	if in.form {
		return a.webauthnBrowserSignIn(w, r, realm, in)
	}
	as, err := a.webauthn.VerifyAssertion(r.Context(), realm, in.assertion(a.clientIP(r), ""))
	if err != nil {
		return webauthnAPIError(w, err)
	}
	httpx.WriteJSON(w, http.StatusOK, webauthnVerifiedRep{Verified: true, UserID: as.User.ID, CredentialID: as.Credential.ID,
		UserVerified: as.UserVerified})
	return nil
}

// webauthnVerifiedRep says whose key answered an assertion; verified is
// always true, a refusal being an error.
type webauthnVerifiedRep struct {
	Verified     bool   `json:"verified"`
	UserID       string `json:"userId"`
	CredentialID string `json:"credentialId"`
	UserVerified bool   `json:"userVerified"`
}

// webauthnAPIError is the JSON answer of a failed verification.
func webauthnAPIError(w http.ResponseWriter, err error) error {
	var throttled *identity.ThrottledError
	var refused *webauthnrp.Failure
	switch {
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		return apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many failed sign-ins; try again later")
	case errors.As(err, &refused):
		return &apperr.Error{Status: errWebAuthnRefused.Status, Code: errWebAuthnRefused.Code,
			Message: errWebAuthnRefused.Message, Cause: err}
	}
	return err
}

// webauthnBrowserSignIn is the form a sign-in page's script posts: at a
// second step, the second factor; on the login page, a passkey sign-in.
// Both forms carry the login form's CSRF token of the request.
func (a *App) webauthnBrowserSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, in *webauthnRequest) error {
	ctx := r.Context()
	ar, client, err := a.pageAuthRequest(ctx, realm, in.AuthRequestID, false)
	if err != nil {
		return err
	}
	if err := a.pages.CheckCSRF(r, "login", ar.ID); err != nil {
		return err
	}
	if _, err := a.store.GetAuthRequestStep(ctx, realm.ID, ar.ID); err == nil {
		return a.webauthnSecondFactor(w, r, realm, in)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	as, err := a.webauthn.VerifyAssertion(ctx, realm, in.assertion(a.clientIP(r), client.ClientID))
	if err != nil {
		form := ui.LoginForm{Error: "webauthn.error.failed"}
		status := http.StatusUnauthorized
		var throttled *identity.ThrottledError
		switch {
		case errors.As(err, &throttled):
			httpx.RetryAfter(w, throttled.Wait)
			form.Error, status = "login.error.throttled", http.StatusTooManyRequests
		case errors.Is(err, webauthnrp.ErrCeremony):
			form.Error, status = "webauthn.error.expired", http.StatusBadRequest
		case !webauthnrp.IsRefusal(err):
			return err
		}
		return a.renderLoginWith(w, r, realm, client, ar, status, form)
	}
	user := as.User
	if identity.EmailVerificationRequired(realm, user) {
		return a.recovery.RefuseUnverified(w, r, realm, client, ar, user, user.Username)
	}
	if identity.PasswordChangeRequired(realm, user, a.now()) {
		return a.startPendingLogin(w, r, realm, ar, user, store.ActionUpdatePassword,
			pendingSignIn{remember: in.rememberMe, amr: as.AMR()})
	}
	sso, err := a.signInBrowser(w, r, realm, client, ar, user, browserSignIn{remember: in.rememberMe, amr: as.AMR()})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, client, ar, user, sso)
}

// webauthnSecondFactor takes a security key as the second factor of the
// sign-in step of this browser.
func (a *App) webauthnSecondFactor(w http.ResponseWriter, r *http.Request, realm *store.Realm, in *webauthnRequest) error {
	st, err := a.totpStep(r, realm, in.AuthRequestID)
	if err != nil {
		return err
	}
	if st.step.Pending != store.StepTOTP && st.step.Pending != store.StepWebAuthn {
		return a.toWebAuthnStep(w, r, realm, st)
	}
	req := in.assertion(a.clientIP(r), st.client.ClientID)
	req.UserID, req.SecondFactor = st.user.ID, true
	as, err := a.webauthn.VerifyAssertion(r.Context(), realm, req)
	if err != nil {
		var throttled *identity.ThrottledError
		switch {
		case errors.As(err, &throttled):
			httpx.RetryAfter(w, throttled.Wait)
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusTooManyRequests, "totp.error.throttled")
		case errors.Is(err, webauthnrp.ErrCeremony):
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusBadRequest, "webauthn.error.expired")
		case webauthnrp.IsRefusal(err):
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusUnauthorized, "webauthn.error.failed")
		}
		return err
	}
	return a.finishSecondStep(w, r, realm, st, afterPasswordAMR(as))
}

// webauthnEnrolled ends the registration of a sign-in's enrolment step.
// A page's form signs the user in (the password was the sign-in's
// factor: registering a key proves no possession of it); a JSON caller's
// registration moves the step on to asking for the new key.
func (a *App) webauthnEnrolled(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, cred *store.WebAuthnCredential, err error) error {
	form := isFormPost(r)
	if err != nil {
		if !form {
			return err
		}
		var ae *apperr.Error
		switch {
		case errors.Is(err, webauthnrp.ErrCeremony):
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusBadRequest, "webauthn.error.expired", "")
		case errors.As(err, &ae) && ae.Field == "name":
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusBadRequest, "", "webauthn.error.name")
		case errors.Is(err, webauthnrp.ErrRegistered):
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusConflict, "webauthn.error.registered", "")
		case errors.As(err, &ae) && ae.Status < http.StatusInternalServerError:
			return a.renderWebAuthnEnrol(w, r, realm, st, ae.Status, "webauthn.error.registration", "")
		}
		return err
	}
	a.account.WebAuthnCredentialEvent(r, realm, store.EventUpdateCredential, st.user, "", st.client.ClientID, cred)
	if form {
		return a.finishSecondStep(w, r, realm, st, loginAMR(false))
	}
	err = a.store.AdvanceAuthRequestStep(r.Context(), st.ar.ID, store.StepTOTPSetup, store.StepWebAuthn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, account.ToWebAuthnCredentialRep(cred))
	return nil
}

func webauthnStepURL(issuer, authRequestID string) string {
	return issuer + pathWebAuthn + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// toWebAuthnStep sends a browser to the page of its step: this one for a
// security key, the TOTP page for anything else.
func (a *App) toWebAuthnStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState) error {
	to := totpURL(a.issuer(realm), st.ar.ID, false)
	if st.step.Pending == store.StepWebAuthn {
		to = webauthnStepURL(a.issuer(realm), st.ar.ID)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// webauthnStepLink is the way from a TOTP step's page to this one: to use
// a security key instead of a code, or to register one instead of an
// authenticator app. "" when WebAuthn is no choice there.
func (a *App) webauthnStepLink(ctx context.Context, realm *store.Realm, st *totpState) string {
	if !a.webauthn.Available() {
		return ""
	}
	if st.step.Pending == store.StepTOTP {
		if creds, err := a.store.WebAuthnCredentials(ctx, realm.ID, st.user.ID); err != nil || len(creds) == 0 {
			return ""
		}
	}
	return webauthnStepURL(a.issuer(realm), st.ar.ID)
}

// webauthnStepPage is GET /realms/{realm}/webauthn: the second step of a
// sign-in with a security key, or the registration of one at an
// enrolment step.
func (a *App) webauthnStepPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	st, err := a.totpStep(r, realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	if !a.webauthn.Available() {
		return webauthnrp.ErrUnavailable
	}
	switch st.step.Pending {
	case store.StepTOTPSetup:
		return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusOK, "", "")
	case store.StepTOTP, store.StepWebAuthn:
		if creds, err := a.store.WebAuthnCredentials(r.Context(), realm.ID, st.user.ID); err != nil {
			return err
		} else if len(creds) == 0 {
			return a.toWebAuthnStep(w, r, realm, st)
		}
		return a.renderWebAuthnStep(w, r, realm, st, http.StatusOK, "")
	}
	return a.toWebAuthnStep(w, r, realm, st)
}

func (a *App) renderWebAuthnStep(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, status int, errKey string) error {
	token := a.pages.CSRFToken(w, r, realm, "login", st.ar.ID)
	issuer := a.issuer(realm)
	f := ui.WebAuthnStepForm{Script: a.assets.URL("webauthn.js"), OptionsURL: issuer + pathWebAuthn + "/authenticate/options",
		Action: issuer + pathWebAuthn + "/authenticate/verify", AuthRequestID: st.ar.ID, CSRFToken: token,
		ClientName: clientName(st.client), Error: errKey}
	if c, err := a.id.UserTOTP(r.Context(), realm, st.user.ID); err != nil {
		return err
	} else if c != nil && st.step.Pending == store.StepTOTP {
		f.TOTPURL = totpURL(issuer, st.ar.ID, false)
	}
	return a.pages.Render(w, r, status, ui.WebAuthnStep(a.pages.Page("webauthn.step.title"), f))
}

func (a *App) renderWebAuthnEnrol(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, status int, errKey, nameErr string) error {
	token := a.pages.CSRFToken(w, r, realm, "login", st.ar.ID)
	issuer := a.issuer(realm)
	return a.pages.Render(w, r, status, ui.WebAuthnEnrol(a.pages.Page("webauthn.enrol.title"), ui.WebAuthnRegisterForm{
		Script: a.assets.URL("webauthn.js"), OptionsURL: issuer + pathWebAuthn + "/register/options",
		Action: issuer + pathWebAuthn + "/register/verify", AuthRequestID: st.ar.ID, CSRFToken: token,
		ClientName: clientName(st.client), Error: errKey, NameError: nameErr, OtherURL: totpURL(issuer, st.ar.ID, false)}))
}

// passkeyLogin is the login page's offer of a passkey sign-in, nil when
// the base URL rules WebAuthn out.
func (a *App) passkeyLogin(realm *store.Realm) *ui.PasskeyLogin {
	if !a.webauthn.Available() {
		return nil
	}
	issuer := a.issuer(realm)
	return &ui.PasskeyLogin{Script: a.assets.URL("webauthn.js"), OptionsURL: issuer + pathWebAuthn + "/authenticate/options",
		Action: issuer + pathWebAuthn + "/authenticate/verify"}
}
