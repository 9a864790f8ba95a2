package app

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// removeWebAuthnCredential removes one of the user's security keys or
// passkeys, by the ID GET .../mfa/status lists: the one a user lost,
// leaving the others. As with every removal of a factor, the user's
// sessions and tokens end, and the removal is the user's
// REMOVE_CREDENTIAL event.
func (a *App) removeWebAuthnCredential(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	id := mux.Vars(r)["credentialId"]
	keys, err := a.store.WebAuthnCredentials(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	var gone *store.WebAuthnCredential
	for _, k := range keys {
		if k.ID == id {
			gone = k
		}
	}
	if gone == nil {
		return apperr.NotFound("WebAuthn credential " + id)
	}
	var ended []*store.Session
	err = a.store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.DeleteWebAuthnCredential(r.Context(), realm.ID, u.ID, id); err != nil {
			return err
		}
		ended, err = a.id.EndUserAccess(r.Context(), tx, realm.ID, u.ID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("WebAuthn credential " + id)
	} else if err != nil {
		return err
	}
	a.backchannelLogout(r.Context(), realm, ended)
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventRemoveCredential, UserID: u.ID, IPAddress: a.clientIP(r),
		Details: map[string]string{"username": u.Username, "by": "admin", "credential_type": credentialTypeWebAuthn,
			"credential_id": gone.ID, "credential_user_label": gone.Name}})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sendResetPasswordEmail mails the user the link of the hosted pages'
// password reset, as "forgot password" does (Keycloak's PUT
// .../reset-password-email): the administrator never learns the new
// password. The token and the mail are written in one transaction.
func (a *App) sendResetPasswordEmail(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	switch {
	case u.Email == "":
		return apperr.Invalid("the user has no email address")
	case !u.Enabled:
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "the user is disabled: enable them first")
	}
	err = a.queueActionMail(r.Context(), nil, realm, u, store.ActionResetPassword, recovery.PathResetPassword, nil,
		resetPasswordMail)
	if errors.Is(err, errMailUnavailable) {
		_, cause := mail.Sender(realm, false)
		return apperr.Invalid("%s", cause.Error())
	} else if err != nil {
		return err
	}
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventSendResetPassword, UserID: u.ID, IPAddress: a.clientIP(r),
		Details: map[string]string{"email": u.Email, "by": "admin"}})
	w.WriteHeader(http.StatusNoContent)
	return nil
}
