package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// WebAuthn in account self-service: GET /webauthn/credentials lists the
// user's security keys and passkeys (JSON for a Bearer caller, the page
// for a browser, which also registers new ones through the ceremony
// endpoints); DELETE /webauthn/credentials/{credentialId} removes one, and
// so does a browser's form post to …/{credentialId}/delete.

const accountWebAuthnDeleteForm = "account-webauthn-delete"

// accountWebAuthnPath is the page's path under /account.
const accountWebAuthnPath = "/webauthn/credentials"

// accountWebAuthnAddPath is where the page links when the sign-in is too
// old to register a key: it signs the browser in again and goes back.
const accountWebAuthnAddPath = accountWebAuthnPath + "/add"

// accountWebAuthnAdd sends a browser whose sign-in is too old for adding
// a key to sign in again, and then, or at once, to the keys' page.
// It serves browsers alone (accountPagesOnly).
func (a *App) accountWebAuthnAdd(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if err := a.recentAuth(c, accountPath(c.realm)+accountWebAuthnPath); err != nil {
		return err
	}
	return accountRedirect(w, r, c.realm, accountWebAuthnPath, "")
}

// accountWebAuthnNotices are the page's notices after a redirect.
var accountWebAuthnNotices = map[string]string{
	"webauthn-added":   "account.webauthn.notice.added",
	"webauthn-removed": "account.webauthn.notice.removed",
}

func (a *App) accountWebAuthnList(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	if !c.api {
		return a.renderAccountWebAuthn(w, r, c, http.StatusOK, ui.AccountWebAuthnView{
			Notice: accountWebAuthnNotices[r.URL.Query().Get("done")]})
	}
	creds, err := a.store.WebAuthnCredentials(r.Context(), c.realm.ID, c.user.ID)
	if err != nil {
		return err
	}
	reps := make([]webauthnCredentialRep, len(creds))
	for i, cred := range creds {
		reps[i] = toWebAuthnCredentialRep(cred)
	}
	httpx.WriteJSON(w, http.StatusOK, reps)
	return nil
}

func (a *App) accountWebAuthnDelete(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	ctx := r.Context()
	if !c.api {
		if err := r.ParseForm(); err != nil {
			return badPage("error.formUnreadable")
		}
		if err := a.pages.CheckCSRF(r, accountWebAuthnDeleteForm, c.session.ID); err != nil {
			return err
		}
	}
	if err := a.recentAuth(c, accountPath(c.realm)+accountWebAuthnPath); err != nil {
		return err
	}
	id := mux.Vars(r)["credentialId"]
	var gone *store.WebAuthnCredential
	creds, err := a.store.WebAuthnCredentials(ctx, c.realm.ID, c.user.ID)
	if err != nil {
		return err
	}
	for _, cred := range creds {
		if cred.ID == id {
			gone = cred
		}
	}
	if gone != nil {
		err = a.store.DeleteWebAuthnCredential(ctx, c.realm.ID, c.user.ID, id)
	}
	switch {
	case gone == nil, errors.Is(err, store.ErrNotFound): // for a browser: removed already, in another tab
		return withPage(apperr.NotFound("WebAuthn credential"), accountGoTo(c.realm, accountWebAuthnPath))
	case err != nil:
		return err
	}
	a.webauthnCredentialEvent(r, c.realm, store.EventRemoveCredential, c.user, accountSessionID(c), c.clientID, gone)
	if c.api {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return accountRedirect(w, r, c.realm, accountWebAuthnPath, "webauthn-removed")
}

// accountWebAuthnRegistered answers the account page's registration form:
// back to the list, or the page again with what went wrong.
func (a *App) accountWebAuthnRegistered(w http.ResponseWriter, r *http.Request, c *accountCaller, in *webauthnRequest, err error) error {
	if err == nil {
		return accountRedirect(w, r, c.realm, accountWebAuthnPath, "webauthn-added")
	}
	v := ui.AccountWebAuthnView{Register: ui.WebAuthnRegisterForm{Name: in.Name}}
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
	return a.renderAccountWebAuthn(w, r, c, status, v)
}

func (a *App) renderAccountWebAuthn(w http.ResponseWriter, r *http.Request, c *accountCaller, status int, v ui.AccountWebAuthnView) error {
	if !a.webauthn.Available() {
		return webauthnrp.ErrUnavailable
	}
	ctx := r.Context()
	creds, err := a.store.WebAuthnCredentials(ctx, c.realm.ID, c.user.ID)
	if err != nil {
		return err
	}
	deleteToken := a.pages.CSRFToken(w, r, c.realm, accountWebAuthnDeleteForm, c.session.ID)
	registerToken := a.pages.CSRFToken(w, r, c.realm, webauthnRegisterForm, c.session.ID)
	base := a.cfg.BaseURL + accountPath(c.realm)
	for _, cred := range creds {
		item := ui.AccountWebAuthnCredential{Name: cred.Name, Created: accountDate(cred.CreatedAt),
			DeleteAction: base + accountWebAuthnPath + "/" + cred.ID + "/delete"}
		if cred.LastUsedAt != 0 {
			used := accountDate(cred.LastUsedAt)
			item.LastUsed = &used
		}
		v.Credentials = append(v.Credentials, item)
	}
	issuer := a.issuer(c.realm)
	v.DeleteCSRFToken, v.AccountURL = deleteToken, base+"/"
	v.Register.Script, v.Register.CSRFToken = a.assets.URL("webauthn.js"), registerToken
	v.Register.OptionsURL, v.Register.Action = issuer+pathWebAuthn+"/register/options", issuer+pathWebAuthn+"/register/verify"
	if !a.authRecent(c) { // reauth.go
		v.ReauthURL = base + accountWebAuthnAddPath
	}
	return a.pages.Render(w, r, status, ui.AccountWebAuthn(a.pages.Page("account.webauthn.title"), v))
}

// accountWebAuthnCredential is the user's WebAuthn credentials as one
// entry of the account's credential types, dated by the first; nil for a
// user without any.
func (a *App) accountWebAuthnCredential(ctx context.Context, realm *store.Realm, user *store.User) (*accountCredential, error) {
	creds, err := a.store.WebAuthnCredentials(ctx, realm.ID, user.ID)
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	return &accountCredential{Type: credentialTypeWebAuthn, CreatedDate: creds[0].CreatedAt}, nil
}

// accountWebAuthnURL is the account page's link to the keys' page, ""
// when the base URL rules WebAuthn out.
func (a *App) accountWebAuthnURL(c *accountCaller) string {
	if !a.webauthn.Available() {
		return ""
	}
	return a.cfg.BaseURL + accountPath(c.realm) + accountWebAuthnPath
}
