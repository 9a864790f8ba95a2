package signin

import (
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// passwordStep asks for a username (or email) and its password: it tells
// who signs in and proves it. Its page is the sign-in page without a flow:
// remember me, the forgot-password and register links, the other ways
// the flow offers with it.
type passwordStep struct {
	core  *identity.Core
	pages *Pages
	emit  Emitter
	deps  StepDeps
}

func (passwordStep) Kind() StepKind      { return KindUsernamePassword }
func (passwordStep) AMR() []string       { return []string{"pwd"} }
func (passwordStep) Events() []EventType { return []EventType{EventLoginError} }

func (s passwordStep) form(f *Flow, v View, username, errKey string) ui.LoginForm {
	form := ui.LoginForm{Action: v.Action + stepQuery(v), CSRFToken: v.CSRF, ClientName: f.Wants.ClientName,
		Username: username, Error: errKey, RememberMe: f.Wants.RememberMe, Others: v.Ways}
	if s.deps.ForgotURL != nil {
		form.ForgotURL = s.deps.ForgotURL(f.Realm, f.ID())
	}
	if f.Realm.RegistrationAllowed && s.deps.RegisterURL != nil {
		form.RegisterURL = s.deps.RegisterURL(f.Realm, f.ID())
	}
	return form
}

func (s passwordStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	return s.pages.Render(w, r, http.StatusOK, ui.Login(s.pages.Page("login.title"), s.form(f, v, f.Wants.LoginHint, "")))
}

func (s passwordStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	ctx := r.Context()
	username, password := strings.TrimSpace(r.PostForm.Get("username")), r.PostForm.Get("password")
	f.Wants.RememberMe = r.PostForm.Get("rememberMe") != ""
	again := func(status int, key string) (*store.User, error) {
		return nil, s.pages.Render(w, r, status, ui.Login(s.pages.Page("login.title"), s.form(f, v, username, key)))
	}
	if username == "" || password == "" {
		return again(http.StatusBadRequest, "login.error.missing")
	}
	user, err := s.core.CheckCredentials(ctx, f.Realm, username, password, v.ClientIP)
	userID := ""
	if errors.Is(err, identity.ErrUserDisabled) {
		userID = user.ID
	}
	s.emit.stepFailed(ctx, f, v, userID, username, err)
	var throttled *identity.ThrottledError
	switch {
	// A lockout is an identity.ErrBadCredentials: it answers as a wrong password.
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrUserDisabled):
		return again(http.StatusUnauthorized, "login.error.invalid")
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		return again(http.StatusTooManyRequests, "login.error.throttled")
	case err != nil:
		return nil, err
	}
	if identity.EmailVerificationRequired(f.Realm, user) {
		s.emit(ctx, f.Realm, store.LoginEvent{Type: EventLoginError, UserID: user.ID, ClientID: f.Wants.Client,
			IPAddress: v.ClientIP, Error: "email_not_verified", Details: map[string]string{"username": username}})
		return again(http.StatusForbidden, "login.error.unverified")
	}
	return user, nil
}
