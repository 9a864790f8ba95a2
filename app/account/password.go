package account

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Changing the password from the account: the current password is
// required, the new one follows the realm's rules, and every other
// session of the user ends.

// AccountPasswordBody is what POST /account/password takes; the page's
// form has the same field names.
type AccountPasswordBody struct {
	CurrentPassword *string `json:"currentPassword"`
	NewPassword     *string `json:"newPassword"`
	Confirmation    *string `json:"confirmation"`
}

// Password changes the caller's password: 204 for the API, back to
// the account page for a browser.
func (s *Service) Password(w http.ResponseWriter, r *http.Request, c *Caller) error {
	var body AccountPasswordBody
	if c.API {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	} else {
		if err := s.Form(r, c, accountFormPassword); err != nil {
			return err
		}
		body = AccountPasswordBody{CurrentPassword: formValue(r, "currentPassword"),
			NewPassword: formValue(r, "newPassword"), Confirmation: formValue(r, "confirmation")}
	}
	if err := s.changeAccountPassword(r, c, body); err != nil {
		return signin.WithPage(err, func(w http.ResponseWriter, r *http.Request, e *apperr.Error) error {
			v := accountView(c.User)
			text := s.fieldText(r, c.Realm, e)
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
			return s.renderAccount(w, r, c, e.Status, v)
		})
	}
	if c.API {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return accountRedirect(w, r, c.Realm, "/", "password")
}

// changeAccountPassword checks body and stores the new password. The user's
// other sessions end, as a password change is how people shut out whoever
// else may know the old one; the caller's own session stays.
func (s *Service) changeAccountPassword(r *http.Request, c *Caller, body AccountPasswordBody) error {
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
	if err := s.checkNewPassword(c.Realm, c.User, current, password, confirmation); err != nil {
		return err
	}
	if err := s.checkCurrentPassword(ctx, r, c, current); err != nil {
		return err
	}
	hash, err := s.deps.Identity.NewPasswordHash(ctx, c.Realm, c.User, password)
	var refused *identity.PasswordRefused
	if errors.As(err, &refused) { // the history: the rest passed checkNewPassword
		return s.passwordPolicyRefused(c.Realm, refused.Unmet())
	} else if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	var ended []*store.Session
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := s.deps.Identity.SetPassword(ctx, tx, c.Realm, c.User.ID, hash, false); err != nil {
			return err
		}
		ended, err = tx.DeleteOtherUserSessions(ctx, c.Realm.ID, c.User.ID, c.SessionID(), now)
		return err
	})
	if err != nil {
		return err
	}
	s.deps.SessionsEnded(ctx, c.Realm, ended, c.ClientID, map[string]string{"reason": "password-changed"})
	s.deps.LoginEvent(ctx, c.Realm, store.LoginEvent{Type: store.EventUpdatePassword, UserID: c.User.ID, ClientID: c.ClientID,
		SessionID: c.SessionID(), IPAddress: s.deps.ClientIP(r)})
	return nil
}
