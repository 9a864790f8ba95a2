package app

import (
	"errors"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The hosted register page. The login page links to it with its
// authorization request, so that a new user goes on signing in to the
// application; it works without one too. It registers through
// registration.Service.RegisterUser, as the public API does.

const pathRegister = "/register"

var errRegistrationClosed = pageErr(http.StatusNotFound, apperr.CodeNotFound, "register.error.closed")

// registerFormFields is the page's view of the realm's enabled fields,
// with the values and errors of a post.
func registerFormFields(fields []*store.RegistrationField, values map[string]string, errs map[string]string) []ui.RegisterField {
	out := make([]ui.RegisterField, 0, len(fields))
	for _, f := range fields {
		name := "attributes." + f.Key
		out = append(out, ui.RegisterField{Name: name, ID: "attr-" + f.Key, Label: f.Label, Type: f.Type,
			Required: f.Required, Pattern: f.Pattern, Options: f.Options, Value: values[f.Key], Error: errs[name]})
	}
	return out
}

func (a *App) renderRegister(w http.ResponseWriter, r *http.Request, realm *store.Realm, status int, fields []*store.RegistrationField, f ui.RegisterForm, values map[string]string) error {
	token := a.pages.CSRFToken(w, r, realm, "register", f.AuthRequestID)
	f.Action, f.CSRFToken, f.LoginURL = a.issuer(realm)+pathRegister, token, a.loginURL(realm, f.AuthRequestID)
	f.EmailRequired, f.MinLength = realm.RequireEmailVerification, max(identity.MinPasswordLength, realm.PasswordMinLength)
	f.Fields = registerFormFields(fields, values, f.Errors)
	schema, err := a.registration.Attributes(r.Context(), realm, fields)
	if err != nil {
		return err
	}
	f.Fields = append(f.Fields, signin.AttributeFields(schema, values, f.Errors)...)
	return a.pages.Render(w, r, status, ui.Register(a.pages.Page("register.title"), f))
}

func (a *App) registerPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if !realm.RegistrationAllowed {
		return errRegistrationClosed
	}
	arID, err := a.liveAuthRequestID(r.Context(), realm, r.URL.Query().Get("authRequestID"))
	if err != nil {
		return err
	}
	fields, err := a.store.ListRegistrationFields(r.Context(), realm.ID, true)
	if err != nil {
		return err
	}
	return a.renderRegister(w, r, realm, http.StatusOK, fields, ui.RegisterForm{AuthRequestID: arID}, nil)
}

// registerForm takes the register form. Invalid fields bring it back with
// each one's message and what was typed, passwords aside. A new active
// user whose email needs no verification is signed in and goes on with
// the sign-in it came from; otherwise a page says what happens next.
func (a *App) registerForm(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if !realm.RegistrationAllowed {
		return errRegistrationClosed
	}
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	arID := r.PostForm.Get("authRequestID")
	if err := a.pages.CheckCSRF(r, "register", arID); err != nil {
		return err
	}
	arID, err := a.liveAuthRequestID(ctx, realm, arID)
	if err != nil {
		return err
	}
	fields, err := a.store.ListRegistrationFields(ctx, realm.ID, true)
	if err != nil {
		return err
	}
	schema, err := a.registration.Attributes(ctx, realm, fields)
	if err != nil {
		return err
	}
	values := map[string]string{}
	for _, f := range fields {
		values[f.Key] = strings.TrimSpace(r.PostForm.Get("attributes." + f.Key))
	}
	for _, attr := range schema {
		values[attr.Name] = strings.TrimSpace(r.PostForm.Get("attributes." + attr.Name))
	}
	confirm := r.PostForm.Get("confirm")
	reg := registration.Registration{Locale: signin.RequestLocale(a.messages, r), Username: strings.TrimSpace(r.PostForm.Get("username")), Email: strings.TrimSpace(r.PostForm.Get("email")),
		FirstName: strings.TrimSpace(r.PostForm.Get("firstName")), LastName: strings.TrimSpace(r.PostForm.Get("lastName")),
		Password: r.PostForm.Get("password"), Confirm: &confirm, Attributes: values}
	form := ui.RegisterForm{AuthRequestID: arID, Username: reg.Username, Email: reg.Email, FirstName: reg.FirstName,
		LastName: reg.LastName, Errors: map[string]string{}}

	done, err := a.registration.RegisterUser(ctx, realm, fields, reg, a.clientIP(r))
	var invalid registration.Invalid
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &invalid):
		for _, p := range invalid {
			if _, seen := form.Errors[p.Err.Field]; !seen {
				form.Errors[p.Err.Field] = p.Key
				if p.Unmet != nil {
					form.Errors[p.Err.Field] = a.pages.PasswordText(r, realm, p.Unmet)
				}
			}
		}
		form.Error = "register.error.form"
		return a.renderRegister(w, r, realm, http.StatusBadRequest, fields, form, values)
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		form.Error = "register.error.throttled"
		return a.renderRegister(w, r, realm, http.StatusTooManyRequests, fields, form, values)
	case err != nil:
		return err
	}

	back := a.loginURL(realm, arID)
	switch {
	case done.Status == store.UserPending:
		n := ui.Notice{Title: "register.pending.title", Message: "register.pending.message"}
		if done.Mailed {
			n.Message = "register.pending.messageVerify"
		}
		return a.pages.Render(w, r, http.StatusOK, ui.NoticePage(a.pages.Page(n.Title), n))
	case realm.RequireEmailVerification:
		n := ui.Notice{Title: "register.verify.title", Message: "register.verify.message", Arg: done.User.Email,
			LinkURL: back, LinkText: "register.backToLogin"}
		if !done.Mailed {
			n.Message = "register.verify.noMail"
		}
		return a.pages.Render(w, r, http.StatusOK, ui.NoticePage(a.pages.Page(n.Title), n))
	}
	ar, client, err := a.pageAuthRequest(ctx, realm, arID, false)
	if errors.Is(err, errStaleAuthRequest) { // none, or it expired while the form was filled in
		// A sign-in flow's register link: the new password passes its
		// password step, and the flow goes on.
		if live, err := liveFlow(ctx, a, realm, arID); live || err != nil {
			if err != nil {
				return err
			}
			return a.signin.Pass(w, r, realm, arID, []signin.StepKind{signin.KindUsernamePassword}, done.User, nil)
		}
		n := ui.Notice{Title: "register.done.title", Message: "register.done.message"}
		return a.pages.Render(w, r, http.StatusOK, ui.NoticePage(a.pages.Page(n.Title), n))
	} else if err != nil {
		return err
	}
	// A realm that requires a second factor has the new user enrol one
	// before the sign-in completes.
	if pending, err := a.startSecondFactor(w, r, realm, ar, done.User, false); pending || err != nil {
		return err
	}
	sso, err := a.signInBrowser(w, r, realm, client, ar, done.User, browserSignIn{})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, client, ar, done.User, sso)
}
