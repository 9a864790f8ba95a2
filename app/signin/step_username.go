package signin

import (
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// usernameStep asks for a username (or email) alone: it tells who signs
// in and proves nothing, for a later step (a passkey, a code) to prove.
// An unknown, disabled or service-account login moves the flow on all
// the same, with nobody named (Unnamed), so that the answer never tells
// it from a user's: the step after it, which must prove a user, fails.
type usernameStep struct {
	core  *identity.Core
	pages *Pages
}

func (usernameStep) Kind() StepKind      { return KindUsername }
func (usernameStep) AMR() []string       { return nil }
func (usernameStep) Events() []EventType { return nil }

func (s usernameStep) page(w http.ResponseWriter, r *http.Request, f *Flow, v View, status int, username, errKey string) error {
	return s.pages.Render(w, r, status, ui.LoginUsername(s.pages.Page("login.title"), ui.LoginForm{Action: v.Action + stepQuery(v),
		CSRFToken: v.CSRF, ClientName: f.Wants.ClientName, Username: username, Error: errKey, Others: v.Ways}))
}

func (s usernameStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.page(w, r, f, v, http.StatusOK, f.Wants.LoginHint, "")
}

func (s usernameStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	username := strings.TrimSpace(r.PostForm.Get("username"))
	if username == "" {
		return nil, s.page(w, r, f, v, http.StatusBadRequest, "", "login.error.username")
	}
	user, err := s.core.FindLoginUser(r.Context(), f.Realm, username)
	if err != nil {
		return nil, err
	}
	if user == nil || !user.Enabled || user.ServiceAccountClientID != "" {
		return Unnamed, nil
	}
	return user, nil
}
