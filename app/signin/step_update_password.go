package signin

import (
	"context"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// updatePasswordStep is the password change a user owes (an administrator
// asked for one, or the password expired): no flow names it, every flow
// ends with it when it is owed. The user's other sessions end with the
// old password, as Keycloak's "sign out from other devices" does by
// default: whoever knew it is out.
type updatePasswordStep struct {
	core  *identity.Core
	store *store.Store
	pages *Pages
	emit  Emitter
	now   func() time.Time
	// ended tells the clients of the sessions the change ended.
	ended func(ctx context.Context, realm *store.Realm, sessions []*store.Session)
}

func (updatePasswordStep) Kind() StepKind      { return KindUpdatePassword }
func (updatePasswordStep) AMR() []string       { return nil }
func (updatePasswordStep) Events() []EventType { return []EventType{EventUpdatePassword} }

func (s updatePasswordStep) Owed(_ context.Context, f *Flow) (bool, error) {
	return identity.PasswordChangeRequired(f.Realm, f.User, s.now()), nil
}

func (s updatePasswordStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, form ui.ChangePasswordForm) error {
	form.Action, form.CSRFToken = v.Action+stepQuery(v), v.CSRF
	form.Username, form.MinLength = f.User.Username, identity.PasswordMinLength(f.Realm)
	return s.pages.Render(w, r, status, ui.ChangePassword(s.pages.Page("changePassword.title"), form))
}

func (s updatePasswordStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.page(w, r, f, v, http.StatusOK, ui.ChangePasswordForm{})
}

func (s updatePasswordStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx, realm, user := r.Context(), f.Realm, f.User
	hash, form, err := s.pages.CheckNewPassword(r, s.core, realm, user, r.PostForm.Get("password"), r.PostForm.Get("confirm"))
	if err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, s.page(w, r, f, v, http.StatusBadRequest, form)
	}
	var ended []*store.Session
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := s.core.SetPassword(ctx, tx, realm, user.ID, hash, false); err != nil {
			return err
		}
		ended, err = tx.DeleteUserSessions(ctx, realm.ID, user.ID, s.now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	s.emit(ctx, realm, store.LoginEvent{Type: EventUpdatePassword, UserID: user.ID, ClientID: f.Wants.Client,
		IPAddress: v.ClientIP, Details: map[string]string{"reason": "change-password"}})
	s.ended(ctx, realm, ended)
	// The dispatcher asks again whether a change is owed: of the user as
	// the change left it.
	return s.store.GetUser(ctx, realm.ID, user.ID)
}
