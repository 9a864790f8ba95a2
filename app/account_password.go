package app

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Changing the password from the account: the current password is
// required, the new one follows the realm's rules, and every other
// session of the user ends.

// accountPasswordBody is what POST /account/password takes; the page's
// form has the same field names.
type accountPasswordBody struct {
	CurrentPassword *string `json:"currentPassword"`
	NewPassword     *string `json:"newPassword"`
	Confirmation    *string `json:"confirmation"`
}

// accountPassword changes the caller's password: 204 for the API, back to
// the account page for a browser.
func (a *App) accountPassword(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
	var body accountPasswordBody
	if c.api {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := a.accountForm(r, c, accountFormPassword); err != nil {
			return err
		}
		body = accountPasswordBody{CurrentPassword: formValue(r, "currentPassword"),
			NewPassword: formValue(r, "newPassword"), Confirmation: formValue(r, "confirmation")}
	}
	if err := a.changeAccountPassword(r, c, body); err != nil {
		return withPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			v := accountView(c.user)
			text := a.fieldText(r, c.realm, e)
			switch e.Field {
			case "currentPassword":
				v.Password.CurrentError = text
			case "newPassword":
				v.Password.NewError = text
			case "confirmation":
				v.Password.ConfirmError = text
			default:
				v.Password.Error = text
			}
			return a.renderAccount(w, r, c, e.Status, v)
		})
	}
	if c.api {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return accountRedirect(w, r, c.realm, "/", "password")
}

// changeAccountPassword checks body and stores the new password. The user's
// other sessions end, as a password change is how people shut out whoever
// else may know the old one; the caller's own session stays.
func (a *App) changeAccountPassword(r *http.Request, c *accountCaller, body accountPasswordBody) error {
	ctx := r.Context()
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	current, password, confirmation := str(body.CurrentPassword), str(body.NewPassword), str(body.Confirmation)
	if current == "" {
		return invalid("currentPassword", "account.error.currentRequired")
	}
	if err := a.checkNewPassword(c.realm, c.user, current, password, confirmation); err != nil {
		return err
	}
	if err := a.checkCurrentPassword(ctx, r, c, current); err != nil {
		return err
	}
	hash, err := a.id.NewPasswordHash(ctx, c.realm, c.user, password)
	var refused *identity.PasswordRefused
	if errors.As(err, &refused) { // the history: the rest passed checkNewPassword
		return a.passwordPolicyRefused(c.realm, refused.Unmet())
	} else if err != nil {
		return err
	}
	now := a.now().UnixMilli()
	var ended []*store.Session
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := a.id.SetPassword(ctx, tx, c.realm, c.user.ID, hash, false); err != nil {
			return err
		}
		ended, err = tx.DeleteOtherUserSessions(ctx, c.realm.ID, c.user.ID, c.sessionID(), now)
		return err
	})
	if err != nil {
		return err
	}
	a.loggedOut(ctx, c.realm, ended, c.clientID, map[string]string{"reason": "password-changed"})
	a.loginEvent(ctx, c.realm, store.LoginEvent{Type: store.EventUpdatePassword, UserID: c.user.ID, ClientID: c.clientID,
		SessionID: c.sessionID(), IPAddress: a.clientIP(r)})
	return nil
}
