package app

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The device verification page, GET and POST /realms/{realm}/device: the
// user enters the code their device shows and approves it with their
// username and password (or through the flow its client's device
// approvals follow: signin_device.go), or denies it.

const (
	deviceForm = "device" // names the form in its CSRF token
	// Failures allowed per throttle window per user code (a wrong code or
	// wrong credentials for it) and per client address (codes that name
	// nothing live). A user code has 20^8 values; a few guesses per code
	// and a bounded rate per address keep guessing hopeless. Credentials
	// count as on the login page besides (app/identity/signin_guard.go).
	deviceLimitPerCode = 5
	deviceLimitPerIP   = 20
)

// Messages of the form. Wrong credentials get one message whether or not
// the user exists.
const (
	deviceMsgNoCode      = "device.enterCode"
	deviceMsgBadCode     = "device.error.badCode"
	deviceMsgNoLogin     = "device.error.noLogin"
	deviceMsgBadLogin    = "login.error.invalid"
	deviceMsgDisabled    = "login.error.disabled"
	deviceMsgBadAction   = "device.error.noAction"
	deviceMsgThrottled   = "error.throttled"
	deviceMsgFormExpired = "error.formExpired"
)

// devicePage serves the page for the realm in the path; an unknown or
// disabled realm is a 404, as on every protocol path.
func (a *App) devicePage(w http.ResponseWriter, r *http.Request) {
	realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
	if err == nil {
		r = signin.WithRealm(r, realm)
		if r.Method == http.MethodPost {
			err = a.deviceDecide(w, r, realm)
		} else {
			err = a.deviceShow(w, r, realm)
		}
	}
	if err != nil {
		a.renderDeviceError(w, r, err)
	}
}

// renderDeviceError is the error page of the device page, in its own look:
// classified as every page's error (pageFailure), it says that there is
// no such page or to try again later.
func (a *App) renderDeviceError(w http.ResponseWriter, r *http.Request, err error) {
	e, _ := a.pageFailure(w, r, err)
	heading, message := "error.internal.heading", "error.tryLater"
	if e.Status == http.StatusNotFound {
		heading, message = "error.notFound.heading", "error.notFound"
	}
	if err := a.pages.Render(w, r, e.Status, ui.DeviceMessage(a.pages.Page(heading), heading, message)); err != nil {
		a.log.ErrorContext(r.Context(), "render device page", "err", err)
	}
}

// deviceShow shows the form, with the code from verification_uri_complete
// filled in and, when it is a live one, what it would approve.
func (a *App) deviceShow(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	token := a.pages.CSRFToken(w, r, realm, deviceForm, "")
	f := ui.DeviceForm{CSRFToken: token, UserCode: r.URL.Query().Get("user_code")}
	if _, user, err := a.ssoSession(r, realm); err != nil {
		return err
	} else if user != nil {
		f.SignedInAs = user.Username
	}
	if f.UserCode != "" {
		// A lookup is a guess too: throttled and counted like one.
		ipKey := "device-ip:" + a.clientIP(r)
		if a.loginThrottle.Wait(ipKey, deviceLimitPerIP) > 0 {
			f.Error = deviceMsgThrottled
		} else if d, err := a.livePendingDevice(r, realm, f.UserCode); err != nil {
			return err
		} else if d == nil {
			a.loginThrottle.Fail(ipKey)
			f.Error = deviceMsgBadCode
		} else {
			f.Client, f.Scopes = deviceClientName(d), d.Scopes
			def, _, err := a.signin.Definition(r.Context(), realm, store.ClientKindOIDC, d.ClientID, signin.UsageDevice)
			if err != nil {
				return err
			}
			f.FollowsFlow = def != nil
		}
	}
	return a.pages.Render(w, r, http.StatusOK, ui.DeviceVerify(a.pages.Page("device.title"), f))
}

// deviceDecide approves or denies the device whose user code is posted.
func (a *App) deviceDecide(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return apperr.Invalid("unreadable form")
	}
	f := ui.DeviceForm{UserCode: r.PostForm.Get("user_code"), Username: r.PostForm.Get("username")}
	action, password := r.PostForm.Get("action"), r.PostForm.Get("password")
	// An approval without username and password is the browser's SSO
	// session's: the cookie vouches for the user, so the form must be
	// the page's own (CSRF). A post that carries the credentials, or a
	// denial (which acts for nobody), rides on nothing the browser sends
	// by itself: there is nothing to forge, and other clients than the
	// page may send it, as the spec's form (user_code, action, username,
	// password) has no token.
	bySession := action == "approve" && f.Username == "" && password == ""
	sso, sessionUser, err := a.ssoSession(r, realm)
	if err != nil {
		return err
	}
	if sessionUser != nil {
		f.SignedInAs = sessionUser.Username
	}
	again := func(status int, msg string) error {
		f.Error = msg
		return a.pages.Render(w, r, status, ui.DeviceVerify(a.pages.Page("device.title"), f))
	}
	csrfErr := a.pages.CheckCSRF(r, deviceForm, "")
	f.CSRFToken = a.pages.CSRFToken(w, r, realm, deviceForm, "")
	if bySession && csrfErr != nil {
		return again(http.StatusForbidden, deviceMsgFormExpired)
	}
	code, _ := normalizeUserCode(f.UserCode)
	ipKey, codeKey := "device-ip:"+a.clientIP(r), deviceCodeKey(realm, code)
	if wait := max(a.loginThrottle.Wait(ipKey, deviceLimitPerIP), a.loginThrottle.Wait(codeKey, deviceLimitPerCode)); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return again(http.StatusTooManyRequests, deviceMsgThrottled)
	}
	if strings.TrimSpace(f.UserCode) == "" {
		return again(http.StatusBadRequest, deviceMsgNoCode)
	}
	d, err := a.livePendingDevice(r, realm, f.UserCode)
	if err != nil {
		return err
	}
	if d == nil {
		a.loginThrottle.Fail(ipKey)
		return again(http.StatusBadRequest, deviceMsgBadCode)
	}
	f.Client, f.Scopes = deviceClientName(d), d.Scopes
	now := a.now().UnixMilli()
	flow, _, err := a.signin.Definition(r.Context(), realm, store.ClientKindOIDC, d.ClientID, signin.UsageDevice)
	if err != nil {
		return err
	}
	f.FollowsFlow = flow != nil

	switch action {
	case "deny":
		err := a.store.DenyDeviceAuthorization(r.Context(), realm.ID, code, now)
		if errors.Is(err, store.ErrNotFound) { // decided or expired meanwhile
			return again(http.StatusBadRequest, deviceMsgBadCode)
		} else if err != nil {
			return err
		}
		return a.pages.Render(w, r, http.StatusOK, ui.DeviceMessage(a.pages.Page("device.denied.title"), "device.denied.title",
			"device.denied.message"))
	case "approve":
	default:
		return again(http.StatusBadRequest, deviceMsgBadAction)
	}

	if bySession && sso != nil {
		return a.deviceApproveBySession(w, r, realm, f, d, sso, sessionUser)
	}
	if flow != nil {
		// The flow's pages take the credentials, in this browser: only
		// the page's own form starts it.
		if csrfErr != nil {
			return again(http.StatusForbidden, deviceMsgFormExpired)
		}
		return beginDeviceFlow(a, w, r, realm, d, flow)
	}
	if f.Username == "" || password == "" {
		return again(http.StatusBadRequest, deviceMsgNoLogin)
	}
	ctx := r.Context()
	// Checked and counted as on the login page: the realm's lockout and
	// the sign-in flood guard, whose 429 a right password from a guarded
	// address gets past.
	user, err := a.id.CheckCredentials(ctx, realm, f.Username, password, a.clientIP(r))
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		return again(http.StatusTooManyRequests, deviceMsgThrottled)
	case errors.Is(err, identity.ErrBadCredentials): // a lockout too: it answers as a wrong password
		a.loginThrottle.Fail(codeKey)
		if lockedID, locked := identity.LockedOut(err); locked {
			a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: lockedID, ClientID: d.PublicClientID,
				IPAddress: a.clientIP(r), Error: "user_temporarily_disabled",
				Details: map[string]string{"username": f.Username, "grant_type": identity.GrantDeviceCode}})
		}
		return again(http.StatusBadRequest, deviceMsgBadLogin)
	case errors.Is(err, identity.ErrUserDisabled):
		// Said only to whoever knows the password.
		return again(http.StatusForbidden, deviceMsgDisabled)
	case err != nil:
		return err
	}
	// What a browser sign-in would ask after the password, as Keycloak's
	// device flow runs it: the one-time code of a user with TOTP; a user
	// who owes a step a form here cannot take (a security key's, an
	// enrolment) is sent to sign in first.
	pending, err := a.id.NeedsSecondFactor(ctx, realm, user.ID)
	if err != nil {
		return err
	}
	switch pending {
	case store.StepTOTP:
		otp := strings.TrimSpace(r.PostForm.Get("otp"))
		if otp == "" {
			f.OTPError = "device.error.otpRequired"
			return again(http.StatusUnauthorized, "")
		}
		method, recovery := "totp", !looksLikeTOTP(otp)
		if recovery {
			method = "recovery-code"
		}
		err := a.id.CheckOneTimeCode(ctx, realm, user, otp, recovery, a.clientIP(r))
		var throttled *identity.ThrottledError
		switch {
		case errors.As(err, &throttled):
			httpx.RetryAfter(w, throttled.Wait)
			return again(http.StatusTooManyRequests, deviceMsgThrottled)
		case errors.Is(err, identity.ErrInvalidTOTP): // a lockout too: it answers as a wrong code
			a.loginThrottle.Fail(codeKey)
			reason := "invalid_totp"
			if _, locked := identity.LockedOut(err); locked {
				reason = "user_temporarily_disabled"
			}
			a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: d.PublicClientID,
				IPAddress: a.clientIP(r), Error: reason,
				Details: map[string]string{"username": user.Username, "grant_type": identity.GrantDeviceCode, "method": method}})
			f.OTPError = "device.error.otpWrong"
			return again(http.StatusUnauthorized, "")
		case err != nil:
			return err
		}
	case "":
	case store.StepTOTPSetup:
		return a.deviceSignInFirst(w, r, realm, f, user, d, "totp_setup_required")
	default:
		// A security key's assertion (store.StepWebAuthn), or any step
		// this form has no field for: the password alone approves nothing.
		return a.deviceSignInFirst(w, r, realm, f, user, d, "second_factor_required")
	}
	if reason := deviceAccountOwes(realm, user, a.now()); reason != "" {
		return a.deviceSignInFirst(w, r, realm, f, user, d, reason)
	}
	return a.deviceApprove(w, r, realm, f, user, now)
}

// deviceAccountOwes names the step of the browser sign-in user still owes,
// which the device page cannot take; "" for none.
func deviceAccountOwes(realm *store.Realm, user *store.User, now time.Time) string {
	switch {
	case identity.PasswordChangeRequired(realm, user, now):
		return "password_change_required"
	case identity.EmailVerificationRequired(realm, user):
		return "email_not_verified"
	}
	return ""
}

// deviceApproveBySession approves the device as the user of the browser's
// SSO session, authenticated when that session was: the sign-in already
// asked for the password and the second factor. A session that owes a
// step (a second factor it was begun without, a password change) is sent
// to sign in first, as a password approval would be.
func (a *App) deviceApproveBySession(w http.ResponseWriter, r *http.Request, realm *store.Realm, f ui.DeviceForm, d *store.DeviceAuthorization, sso *store.Session, user *store.User) error {
	step, login, err := a.ssoShortfall(r.Context(), realm, user, sso)
	if err != nil {
		return err
	}
	if step != "" || login {
		return a.deviceSignInFirst(w, r, realm, f, user, d, "second_factor_required")
	}
	if reason := deviceAccountOwes(realm, user, a.now()); reason != "" {
		return a.deviceSignInFirst(w, r, realm, f, user, d, reason)
	}
	return a.deviceApprove(w, r, realm, f, user, sso.AuthTime)
}

// deviceApprove records the approval of the device whose user code f
// holds, by user, authenticated at authTime (Unix milliseconds).
func (a *App) deviceApprove(w http.ResponseWriter, r *http.Request, realm *store.Realm, f ui.DeviceForm, user *store.User, authTime int64) error {
	code, _ := normalizeUserCode(f.UserCode)
	a.loginThrottle.Reset(deviceCodeKey(realm, code))
	err := a.store.ApproveDeviceAuthorization(r.Context(), realm.ID, code, user.ID, authTime, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) { // decided or expired meanwhile
		f.Error = deviceMsgBadCode
		return a.pages.Render(w, r, http.StatusBadRequest, ui.DeviceVerify(a.pages.Page("device.title"), f))
	} else if err != nil {
		return err
	}
	return a.pages.Render(w, r, http.StatusOK, ui.DeviceMessage(a.pages.Page("device.approved.title"), "device.approved.title",
		"device.approved.message"))
}

// deviceSignInFirst refuses an approval by a user whose account owes a
// step of the browser sign-in (enrolling a second factor the realm
// requires, a password change, a verified email): the form links to the
// account, whose sign-in takes the step; then the user comes back.
func (a *App) deviceSignInFirst(w http.ResponseWriter, r *http.Request, realm *store.Realm, f ui.DeviceForm, user *store.User, d *store.DeviceAuthorization, reason string) error {
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: d.PublicClientID,
		IPAddress: a.clientIP(r), Error: "resolve_required_actions",
		Details: map[string]string{"username": user.Username, "grant_type": identity.GrantDeviceCode, "reason": reason}})
	f.Error, f.AccountURL = "device.error.signInFirst", a.cfg.BaseURL+account.Path(realm)+"/"
	return a.pages.Render(w, r, http.StatusForbidden, ui.DeviceVerify(a.pages.Page("device.title"), f))
}

// deviceCodeKey is the throttle key of the failures on one user code.
func deviceCodeKey(realm *store.Realm, code string) string {
	return "device-code:" + realm.ID + ":" + code
}

// livePendingDevice finds the authorization a typed user code names, if it
// is still waiting for a decision; nil if not.
func (a *App) livePendingDevice(r *http.Request, realm *store.Realm, typed string) (*store.DeviceAuthorization, error) {
	code, ok := normalizeUserCode(typed)
	if !ok {
		return nil, nil
	}
	d, err := a.store.DeviceAuthorizationByUserCode(r.Context(), realm.ID, code)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if d.Status != store.DevicePending || d.ExpiresAt <= a.now().UnixMilli() {
		return nil, nil
	}
	return d, nil
}

func deviceClientName(d *store.DeviceAuthorization) string {
	if d.ClientName != "" {
		return d.ClientName
	}
	return d.PublicClientID
}
