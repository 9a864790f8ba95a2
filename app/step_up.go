package app

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
)

// Step-up for an application holding a user's access token (Bearer):
// GET /realms/{realm}/step-up/challenge says the level of the token's SSO
// session (its sid) and the second factors the user can raise it with;
// POST /realms/{realm}/step-up/verify takes one, a TOTP or recovery code
// or a WebAuthn assertion of the challenge's ceremony, checked as at
// sign-in (the flood guard, the realm's brute-force lockout, each code and
// each signature counter once), and raises the session: its amr gains the
// method, its auth_time is now, its acr is 2. Tokens issued from the
// session afterwards, by a refresh or an authorization the SSO session
// answers, carry that level. The browser's side is step_up_browser.go.

const pathStepUp = "/step-up"

// The methods of a step-up, as the challenge lists them and verify takes
// them.
const (
	stepUpTOTP     = "totp" // a TOTP code, or a recovery code in its place
	stepUpWebAuthn = "webauthn"
)

var (
	errStepUpNoSession = apperr.Invalid("the access token names no SSO session (sid) to step up: use a token from a user's sign-in")
	errStepUpOffline   = apperr.Invalid("an offline token's session cannot be stepped up: use a token from a user's sign-in")
	errStepUpNoFactor  = apperr.New(http.StatusConflict, apperr.CodeNoSecondFactor, "the user has no second factor to step up with: enrol TOTP or a security key first")
	errStepUpNoTOTP    = apperr.New(http.StatusConflict, apperr.CodeNoSecondFactor, "the user has no TOTP authenticator: step up with a security key, or enrol TOTP first")
)

// stepUpEndpoint authenticates the caller of a step-up endpoint and
// answers in JSON, never cached: a challenge holds a ceremony of its own.
func (a *App) stepUpEndpoint(h account.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		realm, err := a.account.Realm(r)
		if err == nil {
			var c *account.Caller
			if c, err = a.stepUpCaller(r, realm); err == nil {
				err = h(w, r, c)
			}
		}
		if err != nil {
			account.SetBearerChallenge(w, realm, err)
			a.writeError(w, r, err)
		}
	})
}

// stepUpCaller is the user of a Bearer token whose sid is a live SSO
// session of that user: the session a step-up raises.
func (a *App) stepUpCaller(r *http.Request, realm *store.Realm) (*account.Caller, error) {
	token := httpx.BearerToken(r)
	if token == "" {
		return nil, account.ErrStepUpNoToken
	}
	c, err := a.account.Bearer(r, realm, token)
	if err != nil {
		return nil, err
	}
	switch {
	case c.SID == "":
		return nil, errStepUpNoSession
	case c.Session == nil:
		return nil, account.ErrStepUpEnded
	case c.Session.Kind != store.SessionSSO:
		return nil, errStepUpOffline
	}
	return c, nil
}

// stepUpRep is the level of the caller's SSO session.
type stepUpRep struct {
	ACR      string   `json:"acr"`
	AMR      []string `json:"amr"`
	AuthTime int64    `json:"authTime"` // Unix milliseconds
}

// stepUpChallengeRep is what the user can step up with: methods, and for
// a user with security keys or passkeys the assertion options of a
// ceremony to answer in verify.
type stepUpChallengeRep struct {
	stepUpRep
	Methods  []string            `json:"methods"`
	WebAuthn *webauthnOptionsRep `json:"webauthn,omitempty"`
}

func (a *App) stepUpChallenge(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	ctx := r.Context()
	rep := stepUpChallengeRep{stepUpRep: stepUpRepOf(c.Session), Methods: []string{}}
	if cred, err := a.id.UserTOTP(ctx, c.Realm, c.User.ID); err != nil {
		return err
	} else if cred != nil {
		rep.Methods = append(rep.Methods, stepUpTOTP)
	}
	wu, err := a.webauthn.LoginUser(ctx, c.Realm, c.User)
	if err != nil {
		return err
	}
	if wu != nil {
		// The session's password was the first factor: the key's
		// presence is the second, as at a sign-in's second step.
		opts, err := a.webauthn.BeginAssertion(ctx, c.Realm, wu, true)
		switch {
		case errors.Is(err, webauthnrp.ErrUnavailable) && len(rep.Methods) > 0:
			// The keys cannot be used on this base URL; TOTP still can.
		case err != nil:
			return err
		default:
			rep.WebAuthn = toWebAuthnOptionsRep(opts)
			rep.Methods = append(rep.Methods, stepUpWebAuthn)
		}
	}
	if len(rep.Methods) == 0 {
		return errStepUpNoFactor
	}
	httpx.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// stepUpVerifyInput is verify's body: method, and the code for totp, or
// the ceremony and the PublicKeyCredential for webauthn.
type stepUpVerifyInput struct {
	Method     string          `json:"method"`
	Code       string          `json:"code"`
	CeremonyID string          `json:"ceremonyId"`
	Credential json.RawMessage `json:"credential"`
}

func (a *App) stepUpVerify(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	var in stepUpVerifyInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	var method string
	var proved []string
	switch in.Method {
	case stepUpTOTP:
		switch {
		case in.CeremonyID != "":
			return apperr.Field("ceremonyId", "is not part of a TOTP step-up")
		case len(in.Credential) > 0:
			return apperr.Field("credential", "is not part of a TOTP step-up")
		case strings.TrimSpace(in.Code) == "":
			return apperr.Field("code", "is required: a current code of the authenticator, or a recovery code")
		}
		var err error
		if method, err = a.stepUpCode(w, r, c, in.Code); err != nil {
			return err
		}
		proved = []string{amrOTP}
	case stepUpWebAuthn:
		switch {
		case in.Code != "":
			return apperr.Field("code", "is not part of a WebAuthn step-up")
		case in.CeremonyID == "":
			return apperr.Field("ceremonyId", "is required: the webauthn.ceremonyId of the challenge")
		}
		if string(in.Credential) == "null" {
			in.Credential = nil
		}
		as, err := a.webauthn.VerifyAssertion(r.Context(), c.Realm, webauthnrp.AssertionRequest{CeremonyID: in.CeremonyID,
			Credential: in.Credential, UserID: c.User.ID, SecondFactor: true, ClientID: c.ClientID, IP: a.clientIP(r), StepUp: true})
		if err != nil {
			return webauthnAPIError(w, err)
		}
		method, proved = credentialTypeWebAuthn, []string{as.Key()}
	case "":
		return apperr.Field("method", "is required: totp or webauthn")
	default:
		return apperr.Field("method", "must be totp or webauthn")
	}
	return a.raiseSession(w, r, c, method, proved)
}

// stepUpCode checks a TOTP code, or a recovery code (told apart by their
// form), as the sign-in's TOTP step does, and names the method for the
// event.
func (a *App) stepUpCode(w http.ResponseWriter, r *http.Request, c *account.Caller, code string) (string, error) {
	ctx := r.Context()
	if cred, err := a.id.UserTOTP(ctx, c.Realm, c.User.ID); err != nil {
		return "", err
	} else if cred == nil {
		return "", errStepUpNoTOTP
	}
	recovery := !looksLikeTOTP(code)
	method := "totp"
	if recovery {
		method = "recovery-code"
	}
	err := a.id.CheckOneTimeCode(ctx, c.Realm, c.User, code, recovery, a.clientIP(r))
	failure := store.LoginEvent{Type: store.EventLoginError, UserID: c.User.ID, ClientID: c.ClientID, SessionID: c.Session.ID,
		IPAddress: a.clientIP(r), Details: map[string]string{"username": c.User.Username, "method": method, "step_up": "true"}}
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &throttled):
		failure.Error = "user_temporarily_disabled"
		a.loginEvent(ctx, c.Realm, failure)
		httpx.RetryAfter(w, throttled.Wait)
		return "", apperr.New(http.StatusTooManyRequests, apperr.CodeTooManyRequests, "too many failed attempts; try again later")
	case errors.Is(err, identity.ErrInvalidTOTP): // a lockout too: it answers as a wrong code
		failure.Error = "invalid_totp"
		if _, locked := identity.LockedOut(err); locked {
			failure.Error = "user_temporarily_disabled"
		}
		a.loginEvent(ctx, c.Realm, failure)
		return "", apperr.Field("code", "is wrong, expired or already used")
	case err != nil:
		return "", err
	}
	return method, nil
}

// raiseSession records a proved factor in the caller's SSO session and
// answers its new level.
func (a *App) raiseSession(w http.ResponseWriter, r *http.Request, c *account.Caller, method string, proved []string) error {
	sso := c.Session
	now := a.now().UnixMilli()
	amr := raiseAMR(sso.AMR, proved)
	expires := ssoExpiry(c.Realm, sso, now)
	err := a.store.ReauthenticateSession(r.Context(), c.Realm.ID, sso.ID, now, amr, now, expires)
	if errors.Is(err, store.ErrNotFound) { // ended since it was read
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+c.Realm.Name+`", error="invalid_token"`)
		return account.ErrStepUpEnded
	} else if err != nil {
		return err
	}
	sso.AuthTime, sso.AMR, sso.LastAccessAt, sso.ExpiresAt = now, amr, now, expires
	a.stepUpEvent(r, c.Realm, c.User, c.ClientID, sso, method)
	httpx.WriteJSON(w, http.StatusOK, stepUpRepOf(sso))
	return nil
}

func stepUpRepOf(sso *store.Session) stepUpRep {
	return stepUpRep{ACR: acrOf(sso.AMR), AMR: sso.AMR, AuthTime: sso.AuthTime}
}
