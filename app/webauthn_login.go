package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
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

// errWebAuthnNoKey: a second step asked for an assertion of a user
// without a WebAuthn credential.
var errWebAuthnNoKey = apperr.Invalid("the user has no security key or passkey")

// webauthnFailure is a refused assertion; reason goes to the LOGIN_ERROR
// event only.
type webauthnFailure struct {
	reason string
	cause  error
}

func (e *webauthnFailure) Error() string {
	if e.cause != nil {
		return "WebAuthn assertion refused: " + e.reason + ": " + e.cause.Error()
	}
	return "WebAuthn assertion refused: " + e.reason
}

// errWebAuthnRefused answers every refused assertion alike, so that the
// answer never tells an unknown key from a disabled or locked user.
var errWebAuthnRefused = apperr.New(http.StatusUnauthorized, apperr.CodeInvalidCredentials, "the security key or passkey was not accepted")

// webauthnAssertion is an accepted assertion.
type webauthnAssertion struct {
	user         *store.User
	cred         *store.WebAuthnCredential
	record       *webauthn.Credential
	userVerified bool
}

// key is how the key authenticated: hwk for one bound to its device, swk
// for one that may be synced.
func (as *webauthnAssertion) key() string {
	if as.record.Flags.BackupEligible {
		return amrSoftwareKey
	}
	return amrHardwareKey
}

// amr is how the assertion authenticated, after a password or alone.
func (as *webauthnAssertion) amr(afterPassword bool) []string {
	key := as.key()
	switch {
	case afterPassword:
		return []string{amrPassword, key}
	case as.userVerified:
		return []string{key, amrMFA}
	}
	return []string{key}
}

// webauthnLoginUser is user with the credentials to assert, or nil for a
// user without any.
func (a *App) webauthnLoginUser(ctx context.Context, realm *store.Realm, user *store.User) (*webauthnUser, error) {
	creds, err := a.store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	return a.loadWebAuthnUser(ctx, realm, user)
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
	rp, err := a.relyingParty(realm)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var wu *webauthnUser
	uv := protocol.VerificationRequired
	switch {
	case in.AuthRequestID != "":
		st, err := a.totpStep(r, realm, in.AuthRequestID)
		if err != nil {
			return err
		}
		if st.step.Pending != store.StepTOTP && st.step.Pending != store.StepWebAuthn {
			return apperr.Invalid("this sign-in does not ask for a second factor now")
		}
		if wu, err = a.webauthnLoginUser(ctx, realm, st.user); err != nil {
			return err
		} else if wu == nil {
			return errWebAuthnNoKey
		}
		// After the password the key is the second factor: its presence
		// is enough, and a PIN prompt would only be in the way.
		uv = protocol.VerificationDiscouraged
	case strings.TrimSpace(in.Username) != "":
		user, err := a.id.FindLoginUser(ctx, realm, strings.TrimSpace(in.Username))
		if err != nil {
			return err
		}
		if user != nil && user.Enabled && user.ServiceAccountClientID == "" {
			if wu, err = a.webauthnLoginUser(ctx, realm, user); err != nil {
				return err
			}
		}
	}
	opts, err := a.beginAssertion(ctx, realm, rp, wu, uv)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, opts)
	return nil
}

// beginAssertion begins an authentication with one of wu's keys, or with
// any passkey of the realm when wu is nil, and keeps its ceremony: a
// login's when uv requires user verification, else a second factor's,
// which only a second step or a step-up takes (verifyAssertion).
func (a *App) beginAssertion(ctx context.Context, realm *store.Realm, rp *webauthn.WebAuthn, wu *webauthnUser, uv protocol.UserVerificationRequirement) (*webauthnOptionsRep, error) {
	kind := store.CeremonyLogin
	if uv != protocol.VerificationRequired {
		kind = store.CeremonySecondFactor
	}
	var assertion *protocol.CredentialAssertion
	var session *webauthn.SessionData
	var err error
	userID := ""
	if wu != nil {
		assertion, session, err = rp.BeginLogin(wu, webauthn.WithUserVerification(uv))
		userID = wu.user.ID
	} else {
		assertion, session, err = rp.BeginDiscoverableLogin(webauthn.WithUserVerification(uv))
	}
	if err != nil {
		return nil, fmt.Errorf("begin WebAuthn login: %w", err)
	}
	id, err := a.beginCeremony(ctx, realm, userID, kind, session)
	if err != nil {
		return nil, err
	}
	return &webauthnOptionsRep{CeremonyID: id, PublicKey: assertion.Response}, nil
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
	as, err := a.verifyAssertion(r, realm, in, "", "")
	if err != nil {
		return webauthnAPIError(w, err)
	}
	httpx.WriteJSON(w, http.StatusOK, webauthnVerifiedRep{Verified: true, UserID: as.user.ID, CredentialID: as.cred.ID,
		UserVerified: as.userVerified})
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
	var refused *webauthnFailure
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

// verifyAssertion checks an assertion against its ceremony, under the
// flood guard and the realm's brute-force policy (the identity core's
// AssertionCheck keeps their books), and records the use: the new
// signature counter, checked against cloning. wantUserID, when set, is
// the only user whose key is accepted (a second step's or a step-up's):
// it takes a second factor's ceremony, whose key need not verify the
// user. Without it the key alone authenticates: it takes a login
// ceremony only, and the key must have verified the user. Every refusal
// is a *webauthnFailure (from a guarded address, an
// *identity.ThrottledError), recorded as a LOGIN_ERROR event and counted
// against the user once known.
func (a *App) verifyAssertion(r *http.Request, realm *store.Realm, in *webauthnRequest, clientID, wantUserID string) (*webauthnAssertion, error) {
	ctx := r.Context()
	ip := a.clientIP(r)
	check, err := a.id.StartAssertion(realm, ip)
	if err != nil {
		return nil, err
	}
	if len(in.Credential) == 0 {
		return nil, apperr.Field("credential", "is required: the PublicKeyCredential navigator.credentials.get() returned, as JSON")
	}
	rp, err := a.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	kind := store.CeremonyLogin
	if wantUserID != "" {
		kind = store.CeremonySecondFactor
	}
	ceremony, session, err := a.takeCeremony(ctx, realm, in.CeremonyID, kind)
	if err != nil {
		return nil, err
	}
	var user *store.User
	fail := func(reason string, cause error, counted bool) error {
		e := store.LoginEvent{Type: "LOGIN_ERROR", ClientID: clientID, IPAddress: ip, Error: "invalid_user_credentials",
			Details: map[string]string{"credential_type": credentialTypeWebAuthn, "reason": reason}}
		if user != nil {
			e.UserID, e.Details["username"] = user.ID, user.Username
			switch reason {
			case "user_disabled", "user_temporarily_disabled":
				e.Error = reason
			}
		}
		if in.stepUp {
			e.Details["step_up"] = "true"
		}
		return check.Refused(ctx, user, counted, e, &webauthnFailure{reason: reason, cause: cause})
	}
	if wantUserID != "" && ceremony.UserID != wantUserID {
		return nil, errWebAuthnCeremony
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(in.Credential)
	if err != nil {
		return nil, fail("webauthn_invalid_response", err, false)
	}
	userID := ceremony.UserID
	if userID == "" { // a passkey sign-in: the credential names its user
		c, err := a.store.WebAuthnCredentialByCredentialID(ctx, realm.ID, parsed.RawID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fail("webauthn_unknown_credential", nil, false)
		} else if err != nil {
			return nil, err
		}
		userID = c.UserID
	}
	if user, err = a.store.GetUser(ctx, realm.ID, userID); errors.Is(err, store.ErrNotFound) {
		return nil, fail("webauthn_unknown_credential", nil, false)
	} else if err != nil {
		return nil, err
	}
	if !user.Enabled {
		return nil, fail("user_disabled", nil, false)
	}
	if status, err := a.store.UserStatus(ctx, realm.ID, user.ID); err != nil {
		return nil, err
	} else if status != store.UserActive {
		return nil, fail("user_not_active", nil, false)
	}
	if locked, err := check.Locked(ctx, user); err != nil {
		return nil, err
	} else if locked {
		return nil, fail("user_temporarily_disabled", nil, false)
	}
	if err := check.Admit(user); err != nil {
		return nil, err
	}
	wu, err := a.loadWebAuthnUser(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	var rec *webauthn.Credential
	if ceremony.UserID != "" {
		rec, err = rp.ValidateLogin(wu, *session, parsed)
	} else {
		rec, err = rp.ValidateDiscoverableLogin(func(_, _ []byte) (webauthn.User, error) { return wu, nil }, *session, parsed)
	}
	if err != nil {
		return nil, fail("webauthn_invalid_assertion", err, true)
	}
	userVerified := parsed.Response.AuthenticatorData.Flags.HasUserVerified()
	if wantUserID == "" && !userVerified {
		// The login ceremony required it, so the library refused this
		// already; the key alone must never sign in without it.
		return nil, fail("webauthn_user_not_verified", nil, true)
	}
	stored := wu.stored(rec.ID)
	if stored == nil { // the library found the record among wu's
		return nil, fail("webauthn_unknown_credential", nil, true)
	}
	if rec.Authenticator.CloneWarning {
		a.log.WarnContext(ctx, "WebAuthn signature counter went back: the authenticator may be cloned",
			"realm", realm.Name, "user", user.ID, "credential", stored.ID)
		return nil, fail("webauthn_clone_detected", nil, true)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode WebAuthn credential: %w", err)
	}
	now := a.now().UnixMilli()
	// The store decides, atomically: of two assertions with one counter
	// value, one wins.
	err = a.store.UseWebAuthnCredential(ctx, realm.ID, stored.ID, int64(rec.Authenticator.SignCount), data, now)
	if errors.Is(err, store.ErrSignCount) {
		a.log.WarnContext(ctx, "WebAuthn signature counter reused: the authenticator may be cloned",
			"realm", realm.Name, "user", user.ID, "credential", stored.ID)
		return nil, fail("webauthn_clone_detected", err, true)
	} else if err != nil {
		return nil, err
	}
	stored.SignCount, stored.LastUsedAt, stored.Data = int64(rec.Authenticator.SignCount), now, data
	if err := check.Succeeded(ctx, user); err != nil {
		return nil, err
	}
	return &webauthnAssertion{user: user, cred: stored, record: rec, userVerified: userVerified}, nil
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
	as, err := a.verifyAssertion(r, realm, in, client.ClientID, "")
	if err != nil {
		form := ui.LoginForm{Error: "webauthn.error.failed"}
		status := http.StatusUnauthorized
		var throttled *identity.ThrottledError
		switch {
		case errors.As(err, &throttled):
			httpx.RetryAfter(w, throttled.Wait)
			form.Error, status = "login.error.throttled", http.StatusTooManyRequests
		case errors.Is(err, errWebAuthnCeremony):
			form.Error, status = "webauthn.error.expired", http.StatusBadRequest
		case !isWebAuthnRefusal(err):
			return err
		}
		return a.renderLoginWith(w, r, realm, client, ar, status, form)
	}
	user := as.user
	if identity.EmailVerificationRequired(realm, user) {
		return a.refuseUnverified(w, r, realm, client, ar, user, user.Username)
	}
	if identity.PasswordChangeRequired(realm, user, a.now()) {
		return a.startPendingLogin(w, r, realm, ar, user, store.ActionUpdatePassword,
			pendingSignIn{remember: in.rememberMe, amr: as.amr(false)})
	}
	sso, err := a.signInBrowser(w, r, realm, client, ar, user, browserSignIn{remember: in.rememberMe, amr: as.amr(false)})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, client, ar, user, sso)
}

// isWebAuthnRefusal tells a refused assertion or a malformed request
// (shown on the page) from a failure of the server.
func isWebAuthnRefusal(err error) bool {
	var refused *webauthnFailure
	var ae *apperr.Error
	return errors.As(err, &refused) || errors.As(err, &ae) && ae.Status < http.StatusInternalServerError
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
	in.stepUp = st.isStepUp()
	as, err := a.verifyAssertion(r, realm, in, st.client.ClientID, st.user.ID)
	if err != nil {
		var throttled *identity.ThrottledError
		switch {
		case errors.As(err, &throttled):
			httpx.RetryAfter(w, throttled.Wait)
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusTooManyRequests, "totp.error.throttled")
		case errors.Is(err, errWebAuthnCeremony):
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusBadRequest, "webauthn.error.expired")
		case isWebAuthnRefusal(err):
			return a.renderWebAuthnStep(w, r, realm, st, http.StatusUnauthorized, "webauthn.error.failed")
		}
		return err
	}
	if st.isStepUp() { // step_up_browser.go
		return a.finishStepUp(w, r, realm, st, credentialTypeWebAuthn, []string{as.key()})
	}
	return a.finishSecondStep(w, r, realm, st, as.amr(true))
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
		case errors.Is(err, errWebAuthnCeremony):
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusBadRequest, "webauthn.error.expired", "")
		case errors.As(err, &ae) && ae.Field == "name":
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusBadRequest, "", "webauthn.error.name")
		case errors.Is(err, errWebAuthnRegistered):
			return a.renderWebAuthnEnrol(w, r, realm, st, http.StatusConflict, "webauthn.error.registered", "")
		case errors.As(err, &ae) && ae.Status < http.StatusInternalServerError:
			return a.renderWebAuthnEnrol(w, r, realm, st, ae.Status, "webauthn.error.registration", "")
		}
		return err
	}
	a.webauthnCredentialEvent(r, realm, "UPDATE_CREDENTIAL", st.user, "", st.client.ClientID, cred)
	if form {
		return a.finishSecondStep(w, r, realm, st, loginAMR(false))
	}
	err = a.store.AdvanceAuthRequestStep(r.Context(), st.ar.ID, store.StepTOTPSetup, store.StepWebAuthn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, toWebAuthnCredentialRep(cred))
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
	if !a.webauthnAvailable() {
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
	if !a.webauthnAvailable() {
		return errWebAuthnUnavailable
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
	if !a.webauthnAvailable() {
		return nil
	}
	issuer := a.issuer(realm)
	return &ui.PasskeyLogin{Script: a.assets.URL("webauthn.js"), OptionsURL: issuer + pathWebAuthn + "/authenticate/options",
		Action: issuer + pathWebAuthn + "/authenticate/verify"}
}
