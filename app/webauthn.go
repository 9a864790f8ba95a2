package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/app/validate"
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
// Every realm is its own relying party: RP ID the base URL's host, origin
// the base URL's scheme, host and port, name the realm's display name.
// docs/decisions.md, "WebAuthn and passkeys", records the choices.

const (
	pathWebAuthn = "/webauthn"
	// webauthnCeremonyTTL is how long a ceremony waits for the
	// authenticator's response; the browser is told the same timeout.
	webauthnCeremonyTTL = 5 * time.Minute
	// webauthnHandleSize is the size of a user handle: the maximum, all
	// random, so it says nothing about the user.
	webauthnHandleSize = 64
	// webauthnNameMax caps a credential's name, in characters.
	webauthnNameMax = 64
	// webauthnDefaultName names a credential registered without one.
	webauthnDefaultName = "Passkey"
	// webauthnRegisterForm names the account page's registration form in
	// its CSRF token; a sign-in step's forms use the login form's token.
	webauthnRegisterForm = "webauthn-register"
	// csrfHeader carries a page's CSRF token on the JSON requests its
	// script sends.
	csrfHeader = "X-CSRF-Token"

	// How a WebAuthn credential authenticates (RFC 8176): a key held by a
	// device (hwk), or one that may be copied between devices, as a synced
	// passkey is (swk, when the authenticator says the key is backup
	// eligible); mfa when the authenticator verified the user too (PIN or
	// biometrics), so the key alone is two factors.
	amrHardwareKey = "hwk"
	amrSoftwareKey = "swk"
	amrMFA         = "mfa"

	credentialTypeWebAuthn = store.CredentialWebAuthn
)

var (
	// errWebAuthnUnavailable: WebAuthn binds credentials to a domain, so a
	// base URL that is an IP address cannot serve it.
	errWebAuthnUnavailable = apperr.New(http.StatusServiceUnavailable, apperr.CodeWebAuthnUnavailable, "WebAuthn needs the server's base URL to name a domain (such as localhost), not an IP address: set --base-url (IDENPLANE_BASE_URL)")
	errWebAuthnCeremony    = apperr.New(http.StatusBadRequest, apperr.CodeInvalidCeremony, "the ceremony is unknown, already answered or expired: ask for new options")
	errWebAuthnSignedOut   = apperr.Unauthorized("sign in first: send a Bearer access token, or use the realm's signed-in browser")
	errWebAuthnNoEnrolment = apperr.Invalid("this sign-in has no second-factor enrolment to do")
	errWebAuthnRegistered  = apperr.New(http.StatusConflict, apperr.CodeConflict, "this authenticator is registered already")
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
			setBearerChallenge(w, realm, err)
			a.writeError(w, r, err)
		}
	})
}

// isFormPost tells a browser's form post from an API call.
func isFormPost(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

// webauthnHost is the RP ID and origin of the base URL, or
// errWebAuthnUnavailable when its host is an IP address.
func (a *App) webauthnHost() (rpID, origin string, err error) {
	u, err := url.Parse(a.cfg.BaseURL)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("base URL %q: %w", a.cfg.BaseURL, errWebAuthnUnavailable)
	}
	if net.ParseIP(u.Hostname()) != nil {
		return "", "", errWebAuthnUnavailable
	}
	return strings.ToLower(u.Hostname()), u.Scheme + "://" + u.Host, nil
}

// relyingParty is the realm as a WebAuthn relying party.
func (a *App) relyingParty(realm *store.Realm) (*webauthn.WebAuthn, error) {
	rpID, origin, err := a.webauthnHost()
	if err != nil {
		return nil, err
	}
	timeout := webauthn.TimeoutConfig{Timeout: webauthnCeremonyTTL, TimeoutUVD: webauthnCeremonyTTL}
	return webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: signin.RealmTitle(realm),
		RPOrigins:     []string{origin},
		// No attestation: the server trusts no authenticator maker over
		// another, and asking would show people a privacy prompt.
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred, // a passkey where the authenticator can keep one
			UserVerification: protocol.VerificationPreferred,
		},
		// The ceremony's expiry is the store's, on the server's clock.
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
}

// webauthnUser is a user as go-webauthn sees one: the user handle and the
// registered credentials, their records decoded.
type webauthnUser struct {
	user    *store.User
	handle  []byte
	creds   []*store.WebAuthnCredential
	records []webauthn.Credential
}

func (u *webauthnUser) WebAuthnID() []byte                         { return u.handle }
func (u *webauthnUser) WebAuthnName() string                       { return u.user.Username }
func (u *webauthnUser) WebAuthnCredentials() []webauthn.Credential { return u.records }

func (u *webauthnUser) WebAuthnDisplayName() string {
	if name := strings.TrimSpace(u.user.FirstName + " " + u.user.LastName); name != "" {
		return name
	}
	return u.user.Username
}

// stored is the stored credential of a record.
func (u *webauthnUser) stored(credentialID []byte) *store.WebAuthnCredential {
	for _, c := range u.creds {
		if bytes.Equal(c.CredentialID, credentialID) {
			return c
		}
	}
	return nil
}

// loadWebAuthnUser reads the user's handle (made on first use) and
// credentials. The stored counter is the one that counts: the record's is
// set from it.
func (a *App) loadWebAuthnUser(ctx context.Context, realm *store.Realm, user *store.User) (*webauthnUser, error) {
	fresh := make([]byte, webauthnHandleSize)
	_, _ = rand.Read(fresh)
	handle, err := a.store.WebAuthnUserHandle(ctx, realm.ID, user.ID, fresh)
	if err != nil {
		return nil, err
	}
	creds, err := a.store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	u := &webauthnUser{user: user, handle: handle, creds: creds}
	for _, c := range creds {
		rec, err := decodeWebAuthnRecord(c)
		if err != nil {
			return nil, err
		}
		u.records = append(u.records, *rec)
	}
	return u, nil
}

func decodeWebAuthnRecord(c *store.WebAuthnCredential) (*webauthn.Credential, error) {
	var rec webauthn.Credential
	if err := json.Unmarshal(c.Data, &rec); err != nil {
		return nil, fmt.Errorf("WebAuthn credential %s: decode record: %w", c.ID, err)
	}
	rec.Authenticator.SignCount = uint32(c.SignCount)
	return &rec, nil
}

// webauthnOptionsRep is what an options endpoint answers: the ceremony to
// name in the verify request and the options for
// navigator.credentials.create() or get(), binary members in base64url.
type webauthnOptionsRep struct {
	CeremonyID string `json:"ceremonyId"`
	PublicKey  any    `json:"publicKey"`
}

// beginCeremony keeps a ceremony's session data server-side and returns
// the ID the client names it by.
func (a *App) beginCeremony(ctx context.Context, realm *store.Realm, userID, kind string, session *webauthn.SessionData) (string, error) {
	data, err := json.Marshal(session)
	if err != nil {
		return "", fmt.Errorf("encode WebAuthn session: %w", err)
	}
	id := randomToken()
	err = a.store.CreateWebAuthnCeremony(ctx, &store.WebAuthnCeremony{ID: id, RealmID: realm.ID, UserID: userID, Kind: kind,
		SessionData: data, ExpiresAt: a.now().Add(webauthnCeremonyTTL).UnixMilli()})
	if err != nil {
		return "", err
	}
	return id, nil
}

// takeCeremony uses up the realm's ceremony id of kind: right or wrong,
// its response is checked once.
func (a *App) takeCeremony(ctx context.Context, realm *store.Realm, id, kind string) (*store.WebAuthnCeremony, *webauthn.SessionData, error) {
	if id == "" {
		return nil, nil, errWebAuthnCeremony
	}
	c, err := a.store.TakeWebAuthnCeremony(ctx, realm.ID, id, a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errWebAuthnCeremony
	} else if err != nil {
		return nil, nil, err
	}
	if c.Kind != kind {
		return nil, nil, errWebAuthnCeremony
	}
	var session webauthn.SessionData
	if err := json.Unmarshal(c.SessionData, &session); err != nil {
		return nil, nil, fmt.Errorf("decode WebAuthn session: %w", err)
	}
	return c, &session, nil
}

// webauthnRegistrant is who registers a credential: the account's caller
// (a Bearer token, or the browser's SSO session), or the user of a
// sign-in at its enrolment step.
type webauthnRegistrant struct {
	user   *store.User
	caller *accountCaller // nil at a sign-in step
	step   *totpState     // nil outside a sign-in
}

// webauthnRegistrant authenticates a registration request. A browser's
// request carries its page's CSRF token, as a form field or header.
func (a *App) webauthnRegistrant(r *http.Request, realm *store.Realm, authRequestID, csrf string) (*webauthnRegistrant, error) {
	if token := bearerToken(r); token != "" {
		c, err := a.accountBearer(r, realm, token)
		if err != nil {
			return nil, err
		}
		return &webauthnRegistrant{user: c.user, caller: c}, nil
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
	c, err := a.accountBrowser(r, realm)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errWebAuthnSignedOut
	}
	if err := a.pages.CheckCSRFValue(r, webauthnRegisterForm, c.session.ID, csrf); err != nil {
		return nil, err
	}
	return &webauthnRegistrant{user: c.user, caller: c}, nil
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
	stepUp        bool // a step-up's assertion: its events say so
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

// webauthnCredentialName checks a credential's name: trimmed, a display
// name of at most webauthnNameMax characters; "" gets the default.
func webauthnCredentialName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return webauthnDefaultName, nil
	}
	return name, validate.DisplayName("name", name, webauthnNameMax)
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
		if err := a.recentAuth(reg.caller, ""); err != nil {
			return err
		}
	}
	rp, err := a.relyingParty(realm)
	if err != nil {
		return err
	}
	ctx := r.Context()
	u, err := a.loadWebAuthnUser(ctx, realm, reg.user)
	if err != nil {
		return err
	}
	exclude := make([]protocol.CredentialDescriptor, len(u.records))
	for i, rec := range u.records {
		exclude[i] = rec.Descriptor()
	}
	creation, session, err := rp.BeginRegistration(u, webauthn.WithExclusions(exclude))
	if err != nil {
		return fmt.Errorf("begin WebAuthn registration: %w", err)
	}
	id, err := a.beginCeremony(ctx, realm, reg.user.ID, store.CeremonyRegister, session)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, webauthnOptionsRep{CeremonyID: id, PublicKey: creation.Response})
	return nil
}

// webauthnCredentialRep is a WebAuthn credential as its owner (and an
// admin) sees it; never the public key or the record.
type webauthnCredentialRep struct {
	ID             string   `json:"id"`
	Type           string   `json:"type"` // webauthn
	Name           string   `json:"name"`
	CreatedDate    int64    `json:"createdDate"`            // Unix milliseconds
	LastUsedDate   int64    `json:"lastUsedDate,omitempty"` // Unix milliseconds; absent when never used
	SignCount      int64    `json:"signCount"`
	Transports     []string `json:"transports"`
	AAGUID         string   `json:"aaguid,omitempty"` // the authenticator model, when it tells
	BackupEligible bool     `json:"backupEligible"`   // the key may be synced: a synced passkey
	BackedUp       bool     `json:"backedUp"`
}

func toWebAuthnCredentialRep(c *store.WebAuthnCredential) webauthnCredentialRep {
	rep := webauthnCredentialRep{ID: c.ID, Type: credentialTypeWebAuthn, Name: c.Name, CreatedDate: c.CreatedAt,
		LastUsedDate: c.LastUsedAt, SignCount: c.SignCount, Transports: []string{}}
	if rec, err := decodeWebAuthnRecord(c); err == nil {
		for _, t := range rec.Transport {
			rep.Transports = append(rep.Transports, string(t))
		}
		if id, err := uuid.FromBytes(rec.Authenticator.AAGUID); err == nil && id != uuid.Nil {
			rep.AAGUID = id.String()
		}
		rep.BackupEligible, rep.BackedUp = rec.Flags.BackupEligible, rec.Flags.BackupState
	}
	return rep
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
	accountForm := in.form && reg.caller != nil && !reg.caller.api // the account page's form
	if reg.caller != nil {
		returnTo := "" // a script's request: answered in JSON
		if accountForm {
			returnTo = accountPath(realm) + accountWebAuthnPath
		}
		if err := a.recentAuth(reg.caller, returnTo); err != nil {
			return err
		}
	}
	cred, err := a.finishRegistration(r, realm, reg.user, in)
	if reg.step != nil {
		return a.webauthnEnrolled(w, r, realm, reg.step, cred, err)
	}
	if err == nil {
		a.webauthnCredentialEvent(r, realm, "UPDATE_CREDENTIAL", reg.user, accountSessionID(reg.caller), reg.caller.clientID, cred)
	}
	if accountForm {
		return a.accountWebAuthnRegistered(w, r, reg.caller, in, err)
	}
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, toWebAuthnCredentialRep(cred))
	return nil
}

// finishRegistration verifies a registration response for user and
// stores the credential. Its errors are API errors (a page shows their
// description).
func (a *App) finishRegistration(r *http.Request, realm *store.Realm, user *store.User, in *webauthnRequest) (*store.WebAuthnCredential, error) {
	ctx := r.Context()
	name, err := webauthnCredentialName(in.Name)
	if err != nil {
		return nil, err
	}
	if len(in.Credential) == 0 {
		return nil, apperr.Field("credential", "is required: the PublicKeyCredential navigator.credentials.create() returned, as JSON")
	}
	rp, err := a.relyingParty(realm)
	if err != nil {
		return nil, err
	}
	ceremony, session, err := a.takeCeremony(ctx, realm, in.CeremonyID, store.CeremonyRegister)
	if err != nil {
		return nil, err
	}
	if ceremony.UserID != user.ID {
		return nil, errWebAuthnCeremony
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(in.Credential)
	if err != nil {
		return nil, webauthnRefusal("credential", err)
	}
	u, err := a.loadWebAuthnUser(ctx, realm, user)
	if err != nil {
		return nil, err
	}
	rec, err := rp.CreateCredential(u, *session, parsed)
	if err != nil {
		return nil, webauthnRefusal("credential", err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode WebAuthn credential: %w", err)
	}
	cred := &store.WebAuthnCredential{ID: uuid.NewString(), RealmID: realm.ID, UserID: user.ID, Name: name,
		CredentialID: rec.ID, Data: data, SignCount: int64(rec.Authenticator.SignCount), CreatedAt: a.now().UnixMilli()}
	if err := a.store.AddWebAuthnCredential(ctx, cred); errors.Is(err, store.ErrConflict) {
		return nil, errWebAuthnRegistered
	} else if err != nil {
		return nil, err
	}
	return cred, nil
}

// webauthnRefusal is a response the library refused, described by its
// public details (never its debugging information).
func webauthnRefusal(field string, err error) *apperr.Error {
	detail := "the authenticator's response could not be verified"
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		detail = pe.Details
	}
	return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeInvalidField, Field: field,
		Message: field + ": " + detail, Cause: err}
}

// webauthnCredentialEvent records a credential's registration
// (UPDATE_CREDENTIAL) or removal (REMOVE_CREDENTIAL), as Keycloak names
// them, with the credential type in the details.
func (a *App) webauthnCredentialEvent(r *http.Request, realm *store.Realm, typ string, user *store.User, sessionID, clientID string, c *store.WebAuthnCredential) {
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: typ, UserID: user.ID, SessionID: sessionID, ClientID: clientID,
		IPAddress: a.clientIP(r), Details: map[string]string{"username": user.Username, "credential_type": credentialTypeWebAuthn,
			"credential_id": c.ID, "credential_user_label": c.Name}})
}

// webauthnAvailable tells whether the base URL lets the realm's pages
// offer WebAuthn.
func (a *App) webauthnAvailable() bool {
	_, _, err := a.webauthnHost()
	return err == nil
}
