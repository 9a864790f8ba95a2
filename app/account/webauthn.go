package account

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// WebAuthn in account self-service: GET /webauthn/credentials lists the
// user's security keys and passkeys (JSON for a Bearer caller, the page
// for a browser, which also registers new ones through the ceremony
// endpoints); DELETE /webauthn/credentials/{credentialId} removes one, and
// so does a browser's form post to …/{credentialId}/delete.

const (
	accountWebAuthnDeleteForm = "account-webauthn-delete"
	// WebAuthnRegisterForm names the account page's registration form in
	// its CSRF token; a sign-in step's forms use the login form's token.
	WebAuthnRegisterForm = "webauthn-register"
	// webauthnPath is where the realm's WebAuthn ceremonies are, under its
	// issuer.
	webauthnPath = "/webauthn"
)

// WebAuthnPath is the page's path under /account.
const WebAuthnPath = "/webauthn/credentials"

// WebAuthnAddPath is where the page links when the sign-in is too
// old to register a key: it signs the browser in again and goes back.
const WebAuthnAddPath = WebAuthnPath + "/add"

// WebAuthnAdd sends a browser whose sign-in is too old for adding
// a key to sign in again, and then, or at once, to the keys' page.
// It serves browsers alone (accountPagesOnly).
func (s *Service) WebAuthnAdd(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if err := s.RecentAuth(c, Path(c.Realm)+WebAuthnPath); err != nil {
		return err
	}
	return accountRedirect(w, r, c.Realm, WebAuthnPath, "")
}

// accountWebAuthnNotices are the page's notices after a redirect.
var accountWebAuthnNotices = map[string]string{
	"webauthn-added":   "account.webauthn.notice.added",
	"webauthn-removed": "account.webauthn.notice.removed",
}

func (s *Service) WebAuthnList(w http.ResponseWriter, r *http.Request, c *Caller) error {
	if !c.API {
		return s.renderAccountWebAuthn(w, r, c, http.StatusOK, ui.AccountWebAuthnView{
			Notice: accountWebAuthnNotices[r.URL.Query().Get("done")]})
	}
	creds, err := s.deps.Store.WebAuthnCredentials(r.Context(), c.Realm.ID, c.User.ID)
	if err != nil {
		return err
	}
	reps := make([]WebauthnCredentialRep, len(creds))
	for i, cred := range creds {
		reps[i] = ToWebAuthnCredentialRep(cred)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

func (s *Service) WebAuthnDelete(w http.ResponseWriter, r *http.Request, c *Caller) error {
	ctx := r.Context()
	if !c.API {
		if err := r.ParseForm(); err != nil {
			return errFormUnreadable
		}
		if err := s.deps.Pages.CheckCSRF(r, accountWebAuthnDeleteForm, c.Session.ID); err != nil {
			return err
		}
	}
	if err := s.RecentAuth(c, Path(c.Realm)+WebAuthnPath); err != nil {
		return err
	}
	id := mux.Vars(r)["credentialId"]
	var gone *store.WebAuthnCredential
	creds, err := s.deps.Store.WebAuthnCredentials(ctx, c.Realm.ID, c.User.ID)
	if err != nil {
		return err
	}
	for _, cred := range creds {
		if cred.ID == id {
			gone = cred
		}
	}
	if gone != nil {
		err = s.deps.Store.DeleteWebAuthnCredential(ctx, c.Realm.ID, c.User.ID, id)
	}
	switch {
	case gone == nil, errors.Is(err, store.ErrNotFound): // for a browser: removed already, in another tab
		return signin.WithPage(apperr.NotFound("WebAuthn credential"), accountGoTo(c.Realm, WebAuthnPath))
	case err != nil:
		return err
	}
	s.WebAuthnCredentialEvent(r, c.Realm, store.EventRemoveCredential, c.User, c.SessionID(), c.ClientID, gone)
	if c.API {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return accountRedirect(w, r, c.Realm, WebAuthnPath, "webauthn-removed")
}

// WebAuthnRegistered answers the account page's registration form:
// back to the list, or the page again with what went wrong.
func (s *Service) WebAuthnRegistered(w http.ResponseWriter, r *http.Request, c *Caller, name string, err error) error {
	if err == nil {
		return accountRedirect(w, r, c.Realm, WebAuthnPath, "webauthn-added")
	}
	v := ui.AccountWebAuthnView{Register: ui.WebAuthnRegisterForm{Name: name}}
	var ae *apperr.Error
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, webauthnrp.ErrCeremony):
		v.Register.Error = "webauthn.error.expired"
	case errors.Is(err, webauthnrp.ErrRegistered):
		v.Register.Error, status = "webauthn.error.registered", http.StatusConflict
	case errors.As(err, &ae) && ae.Field == "name":
		v.Register.NameError = "webauthn.error.name"
	case errors.As(err, &ae) && ae.Status < http.StatusInternalServerError:
		v.Register.Error, status = "webauthn.error.registration", ae.Status
	default:
		return err
	}
	return s.renderAccountWebAuthn(w, r, c, status, v)
}

func (s *Service) renderAccountWebAuthn(w http.ResponseWriter, r *http.Request, c *Caller, status int, v ui.AccountWebAuthnView) error {
	if !s.deps.WebAuthn.Available() {
		return webauthnrp.ErrUnavailable
	}
	ctx := r.Context()
	creds, err := s.deps.Store.WebAuthnCredentials(ctx, c.Realm.ID, c.User.ID)
	if err != nil {
		return err
	}
	deleteToken := s.deps.Pages.CSRFToken(w, r, c.Realm, accountWebAuthnDeleteForm, c.Session.ID)
	registerToken := s.deps.Pages.CSRFToken(w, r, c.Realm, WebAuthnRegisterForm, c.Session.ID)
	base := s.deps.BaseURL + Path(c.Realm)
	for _, cred := range creds {
		item := ui.AccountWebAuthnCredential{Name: cred.Name, Created: accountDate(cred.CreatedAt),
			DeleteAction: base + WebAuthnPath + "/" + cred.ID + "/delete"}
		if cred.LastUsedAt != 0 {
			used := accountDate(cred.LastUsedAt)
			item.LastUsed = &used
		}
		v.Credentials = append(v.Credentials, item)
	}
	issuer := s.issuer(c.Realm)
	v.DeleteCSRFToken, v.AccountURL = deleteToken, base+"/"
	v.Register.Script, v.Register.CSRFToken = s.deps.Assets.URL("webauthn.js"), registerToken
	v.Register.OptionsURL, v.Register.Action = issuer+webauthnPath+"/register/options", issuer+webauthnPath+"/register/verify"
	if !s.AuthRecent(c) { // reauth.go
		v.ReauthURL = base + WebAuthnAddPath
	}
	return s.deps.Pages.Render(w, r, status, ui.AccountWebAuthn(s.deps.Pages.Page("account.webauthn.title"), v))
}

// accountWebAuthnCredential is the user's WebAuthn credentials as one
// entry of the account's credential types, dated by the first; nil for a
// user without any.
func (s *Service) accountWebAuthnCredential(ctx context.Context, realm *store.Realm, user *store.User) (*AccountCredential, error) {
	creds, err := s.deps.Store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	return &AccountCredential{Type: store.CredentialWebAuthn, CreatedDate: creds[0].CreatedAt}, nil
}

// accountWebAuthnURL is the account page's link to the keys' page, ""
// when the base URL rules WebAuthn out.
func (s *Service) accountWebAuthnURL(c *Caller) string {
	if !s.deps.WebAuthn.Available() {
		return ""
	}
	return s.deps.BaseURL + Path(c.Realm) + WebAuthnPath
}

// WebauthnCredentialRep is a WebAuthn credential as its owner (and an
// admin) sees it; never the public key or the record.
type WebauthnCredentialRep struct {
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

// ToWebAuthnCredentialRep is c as its owner sees it.
func ToWebAuthnCredentialRep(c *store.WebAuthnCredential) WebauthnCredentialRep {
	rep := WebauthnCredentialRep{ID: c.ID, Type: store.CredentialWebAuthn, Name: c.Name, CreatedDate: c.CreatedAt,
		LastUsedDate: c.LastUsedAt, SignCount: c.SignCount, Transports: []string{}}
	if rec, err := webauthnrp.DecodeRecord(c); err == nil {
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

// WebAuthnCredentialEvent records a credential's registration
// (UPDATE_CREDENTIAL) or removal (REMOVE_CREDENTIAL), as Keycloak names
// them, with the credential type in the details.
func (s *Service) WebAuthnCredentialEvent(r *http.Request, realm *store.Realm, typ store.EventType, user *store.User, sessionID, clientID string, c *store.WebAuthnCredential) {
	s.deps.LoginEvent(r.Context(), realm, store.LoginEvent{Type: typ, UserID: user.ID, SessionID: sessionID, ClientID: clientID,
		IPAddress: s.deps.ClientIP(r), Details: map[string]string{"username": user.Username, "credential_type": store.CredentialWebAuthn,
			"credential_id": c.ID, "credential_user_label": c.Name}})
}
