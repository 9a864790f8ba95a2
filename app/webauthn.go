package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// WebAuthn (go-webauthn): security keys and passkeys. A user registers one
// from the account (Bearer token or the browser's SSO session) or at the
// enrolment step of a sign-in in a realm that requires a second factor;
// then uses it after the password as the second factor, or alone as a
// passkey, with user verification. The ceremonies are
// POST /realms/{realm}/webauthn/register/options and register/verify,
// authenticate/options and authenticate/verify: options hand out a
// challenge and a ceremony ID, kept server-side for five minutes and
// answered once; verify checks the authenticator's response against it.
// The rules of the ceremonies are app/identity/webauthnrp's (a.webauthn);
// these handlers read the requests and answer them.

const (
	pathWebAuthn = "/webauthn"
	// csrfHeader carries a page's CSRF token on the JSON requests its
	// script sends.
	csrfHeader = "X-CSRF-Token"

	// How a WebAuthn credential authenticates (RFC 8176), as the relying
	// party says (webauthnrp).
	amrHardwareKey = webauthnrp.AMRHardwareKey
	amrSoftwareKey = webauthnrp.AMRSoftwareKey
	amrMFA         = webauthnrp.AMRMFA

	credentialTypeWebAuthn = store.CredentialWebAuthn
)

var (
	errWebAuthnSignedOut   = apperr.Unauthorized("sign in first: send a Bearer access token, or use the realm's signed-in browser")
	errWebAuthnNoEnrolment = apperr.Invalid("this sign-in has no second-factor enrolment to do")
)

// webauthnEndpoint wraps a ceremony endpoint. A browser's form post is
// answered with pages, as the sign-in pages are; anything else in JSON.
func (a *App) webauthnEndpoint(h realmHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
		if errors.Is(err, store.ErrNotFound) {
			err = errNoRealm
		}
		if err == nil {
			r = signin.WithRealm(r, realm)
			err = h(w, r, realm)
		}
		switch {
		case err == nil:
		case isFormPost(r):
			a.renderPageError(w, r, err)
		default:
			account.SetBearerChallenge(w, realm, err)
			a.writeError(w, r, err)
		}
	})
}

// isFormPost tells a browser's form post from an API call.
func isFormPost(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

// webauthnOptionsRep is what an options endpoint answers: the ceremony to
// name in the verify request and the options for
// navigator.credentials.create() or get(), binary members in base64url.
type webauthnOptionsRep struct {
	CeremonyID string `json:"ceremonyId"`
	PublicKey  any    `json:"publicKey"`
}

func toWebAuthnOptionsRep(o *webauthnrp.Options) *webauthnOptionsRep {
	return &webauthnOptionsRep{CeremonyID: o.CeremonyID, PublicKey: o.PublicKey}
}

// webauthnRegistrant is who registers a credential: the account's caller
// (a Bearer token, or the browser's SSO session), or the user of a
// sign-in at its enrolment step.
type webauthnRegistrant struct {
	user   *store.User
	caller *account.Caller // nil at a sign-in step
	step   *totpState      // nil outside a sign-in
}

// webauthnRegistrant authenticates a registration request. A browser's
// request carries its page's CSRF token, as a form field or header.
func (a *App) webauthnRegistrant(r *http.Request, realm *store.Realm, authRequestID, csrf string) (*webauthnRegistrant, error) {
	if token := httpx.BearerToken(r); token != "" {
		c, err := a.account.Bearer(r, realm, token)
		if err != nil {
			return nil, err
		}
		return &webauthnRegistrant{user: c.User, caller: c}, nil
	}
	if authRequestID != "" {
		st, err := a.totpStep(r, realm, authRequestID)
		if err != nil {
			return nil, err
		}
		if err := a.pages.CheckCSRFValue(r, "login", st.ar.ID, csrf); err != nil {
			return nil, err
		}
		if st.step.Pending != store.StepTOTPSetup {
			return nil, errWebAuthnNoEnrolment
		}
		return &webauthnRegistrant{user: st.user, step: st}, nil
	}
	c, err := a.account.Browser(r, realm)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errWebAuthnSignedOut
	}
	if err := a.pages.CheckCSRFValue(r, account.WebAuthnRegisterForm, c.Session.ID, csrf); err != nil {
		return nil, err
	}
	return &webauthnRegistrant{user: c.User, caller: c}, nil
}

// webauthnRequest is what a ceremony endpoint was sent, as JSON or as a
// browser's form (where credential is the JSON of the PublicKeyCredential).
type webauthnRequest struct {
	CeremonyID    string          `json:"ceremonyId"`
	Name          string          `json:"name"`
	Username      string          `json:"username"`
	AuthRequestID string          `json:"authRequestID"`
	Credential    json.RawMessage `json:"credential"`
	form          bool
	csrf          string
	rememberMe    bool
}

// assertion is the request's assertion to check, for client, from ip.
func (in *webauthnRequest) assertion(ip, clientID string) webauthnrp.AssertionRequest {
	return webauthnrp.AssertionRequest{CeremonyID: in.CeremonyID, Credential: in.Credential, ClientID: clientID, IP: ip}
}

// readWebAuthnRequest reads a request whose members are among allowed: a
// member the endpoint does not take is refused, as everywhere in the API.
// An empty JSON body is no members.
func readWebAuthnRequest(r *http.Request, allowed ...string) (*webauthnRequest, error) {
	in := webauthnRequest{csrf: r.Header.Get(csrfHeader)}
	if isFormPost(r) {
		if err := r.ParseForm(); err != nil {
			return nil, badPage("error.formUnreadable")
		}
		f := r.PostForm
		in.form, in.csrf, in.rememberMe = true, f.Get("csrf"), f.Get("rememberMe") != ""
		in.CeremonyID, in.Name, in.Username, in.AuthRequestID = f.Get("ceremonyId"), f.Get("name"), f.Get("username"), f.Get("authRequestID")
		if c := f.Get("credential"); c != "" {
			in.Credential = json.RawMessage(c)
		}
		return &in, nil
	}
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return &in, nil
	}
	body, err := httpx.ReadBody(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &in, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return nil, apperr.InvalidJSON("request body must be a JSON object")
	}
	for name := range members {
		if !slices.Contains(allowed, name) {
			return nil, apperr.Field(name, "is not a member of this request")
		}
	}
	if err := httpx.StrictUnmarshal(body, &in); err != nil {
		return nil, err
	}
	if string(bytes.TrimSpace(in.Credential)) == "null" {
		in.Credential = nil
	}
	return &in, nil
}

// webauthnRegisterOptions begins a registration for the authenticated
// user: a passkey where the authenticator can keep one, the user's
// credentials excluded so an authenticator is not registered twice.
func (a *App) webauthnRegisterOptions(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	in, err := readWebAuthnRequest(r, "authRequestID")
	if err != nil {
		return err
	}
	reg, err := a.webauthnRegistrant(r, realm, in.AuthRequestID, in.csrf)
	if err != nil {
		return err
	}
	if reg.caller != nil { // the account's, not a sign-in's enrolment step
		if err := a.account.RecentAuth(reg.caller, ""); err != nil {
			return err
		}
	}
	opts, err := a.webauthn.BeginRegistration(r.Context(), realm, reg.user)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, toWebAuthnOptionsRep(opts))
	return nil
}

// webauthnRegisterVerify checks the authenticator's answer to a
// registration and stores the credential under the name given.
func (a *App) webauthnRegisterVerify(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	in, err := readWebAuthnRequest(r, "ceremonyId", "name", "credential", "authRequestID")
	if err != nil {
		return err
	}
	reg, err := a.webauthnRegistrant(r, realm, in.AuthRequestID, in.csrf)
	if err != nil {
		return err
	}
	accountForm := in.form && reg.caller != nil && !reg.caller.API // the account page's form
	if reg.caller != nil {
		returnTo := "" // a script's request: answered in JSON
		if accountForm {
			returnTo = account.Path(realm) + account.WebAuthnPath
		}
		if err := a.account.RecentAuth(reg.caller, returnTo); err != nil {
			return err
		}
	}
	cred, err := a.webauthn.FinishRegistration(r.Context(), realm, reg.user, in.CeremonyID, in.Name, in.Credential)
	if reg.step != nil {
		return a.webauthnEnrolled(w, r, realm, reg.step, cred, err)
	}
	if err == nil {
		a.account.WebAuthnCredentialEvent(r, realm, store.EventUpdateCredential, reg.user, reg.caller.SessionID(), reg.caller.ClientID, cred)
	}
	if accountForm {
		return a.account.WebAuthnRegistered(w, r, reg.caller, in.Name, err)
	}
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, account.ToWebAuthnCredentialRep(cred))
	return nil
}
