package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The change-password step of a sign-in. A user whose password must
// change (identity.PasswordChangeRequired) and who typed it right does
// not get a code yet: the request is held as a pending login, bound to the
// browser, and the browser is sent here. Once the new password is set the
// sign-in goes on exactly as a login does.

const pathChangePassword = "/change-password"

// errNoPendingStep: the browser has no sign-in waiting for this step.
var errNoPendingStep = badPage("changePassword.error.noStep")

// browserHash identifies the browser by its CSRF cookie, which every form
// post already carries; nil when it has none.
func browserHash(r *http.Request) []byte {
	c, err := r.Cookie(signin.CSRFCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	return store.HashToken(c.Value)
}

// pendingSignIn is how a sign-in held for a required step got there.
type pendingSignIn struct {
	remember bool     // the SSO cookie is to outlive the browser
	amr      []string // how the user authenticated so far
	// also writes more in the transaction that holds the sign-in, first,
	// such as the end of the second-factor step it comes from.
	also func(ctx context.Context, tx *store.Store) error
}

// startPendingLogin holds a request whose user passed the sign-in's
// checks until the step action is done, and sends the browser to its
// page.
func (a *App) startPendingLogin(w http.ResponseWriter, r *http.Request, realm *store.Realm, ar *store.AuthRequest, user *store.User, action string, in pendingSignIn) error {
	browser := browserHash(r)
	if browser == nil {
		return signin.ErrCSRF // the login form's check passed, so this cannot happen
	}
	ctx := r.Context()
	now := a.now().UnixMilli()
	err := a.store.Tx(ctx, func(tx *store.Store) error {
		if in.also != nil {
			if err := in.also(ctx, tx); err != nil {
				return err
			}
		}
		return tx.SavePendingLogin(ctx, &store.PendingLogin{AuthRequestID: ar.ID, RealmID: realm.ID, UserID: user.ID,
			Action: action, BrowserHash: browser, RememberMe: in.remember, AMR: in.amr, CreatedAt: now}, now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errStaleAuthRequest
	} else if err != nil {
		return err
	}
	http.Redirect(w, r, a.issuer(realm)+pathChangePassword+"?"+url.Values{"authRequestID": {ar.ID}}.Encode(),
		http.StatusSeeOther)
	return nil
}

// pendingStep is a sign-in of this browser waiting for action: its
// request, client, pending login and user, or errNoPendingStep.
type pendingStep struct {
	ar     *store.AuthRequest
	client *store.Client
	login  *store.PendingLogin
	user   *store.User
}

func (a *App) pendingStep(ctx context.Context, r *http.Request, realm *store.Realm, authRequestID, action string) (*pendingStep, error) {
	// A step owed after a sign-in's checks, through an authentication flow
	// or not: the pending login, bound to the browser, is its proof.
	ar, client, err := loadAuthRequest(ctx, a.store, a.now(), realm, authRequestID, false)
	signin.FormsLeaveServer(ctx)
	if errors.Is(err, errStaleAuthRequest) {
		return nil, errNoPendingStep
	} else if err != nil {
		return nil, err
	}
	if ar.UserID != "" { // signed in meanwhile, by this step or another login
		return nil, errNoPendingStep
	}
	p, err := a.store.GetPendingLogin(ctx, realm.ID, ar.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoPendingStep
	} else if err != nil {
		return nil, err
	}
	browser := browserHash(r)
	if p.Action != action || browser == nil || subtle.ConstantTimeCompare(browser, p.BrowserHash) != 1 {
		return nil, errNoPendingStep
	}
	user, err := a.store.GetUser(ctx, realm.ID, p.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoPendingStep
	} else if err != nil {
		return nil, err
	}
	status, err := a.store.UserStatus(ctx, realm.ID, user.ID)
	if err != nil {
		return nil, err
	}
	if !user.Enabled || status != store.UserActive { // disabled since the password was typed
		return nil, errNoPendingStep
	}
	return &pendingStep{ar: ar, client: client, login: p, user: user}, nil
}

func (a *App) renderChangePassword(w http.ResponseWriter, r *http.Request, realm *store.Realm, step *pendingStep, status int, f ui.ChangePasswordForm) error {
	token := a.pages.CSRFToken(w, r, realm, "change-password", step.ar.ID)
	f.Action, f.AuthRequestID, f.CSRFToken = a.issuer(realm)+pathChangePassword, step.ar.ID, token
	f.Username, f.MinLength = step.user.Username, max(identity.MinPasswordLength, realm.PasswordMinLength)
	return a.pages.Render(w, r, status, ui.ChangePassword(a.pages.Page("changePassword.title"), f))
}

func (a *App) changePasswordPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	step, err := a.pendingStep(r.Context(), r, realm, r.URL.Query().Get("authRequestID"), store.ActionUpdatePassword)
	if err != nil {
		return err
	}
	return a.renderChangePassword(w, r, realm, step, http.StatusOK, ui.ChangePasswordForm{})
}

// changePassword sets the new password of a pending sign-in, then signs
// the user in and goes on to consent or the code. The user's other
// sessions end, as Keycloak's "sign out from other devices" does by
// default: whoever knew the old password is out.
func (a *App) changePassword(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("error.formUnreadable")
	}
	ctx := r.Context()
	arID := r.PostForm.Get("authRequestID")
	if err := a.pages.CheckCSRF(r, "change-password", arID); err != nil {
		return err
	}
	step, err := a.pendingStep(ctx, r, realm, arID, store.ActionUpdatePassword)
	if err != nil {
		return err
	}
	user := step.user
	hash, form, err := a.pages.CheckNewPassword(r, a.id, realm, user, r.PostForm.Get("password"), r.PostForm.Get("confirm"))
	if err != nil {
		return err
	}
	if hash == "" {
		return a.renderChangePassword(w, r, realm, step, http.StatusBadRequest, form)
	}
	now := a.now().UnixMilli()
	var ended []*store.Session
	sso, err := a.signInBrowser(w, r, realm, step.client, step.ar, user, browserSignIn{
		remember: step.login.RememberMe,
		fresh:    true,
		amr:      step.login.AMR, // a password alone for a step saved before amr was kept
		also: func(ctx context.Context, tx *store.Store) error {
			// Gone once used: a second post of the form finds no step.
			if err := tx.DeletePendingLogin(ctx, realm.ID, step.ar.ID, user.ID); err != nil {
				return err
			}
			if err := a.id.SetPassword(ctx, tx, realm, user.ID, hash, false); err != nil {
				return err
			}
			var err error
			ended, err = tx.DeleteUserSessions(ctx, realm.ID, user.ID, now)
			return err
		},
		events: []store.LoginEvent{{Type: store.EventUpdatePassword, UserID: user.ID, ClientID: step.client.ClientID,
			IPAddress: a.clientIP(r), Details: map[string]string{"reason": "change-password"}}},
	})
	if errors.Is(err, errStaleAuthRequest) {
		return errNoPendingStep
	} else if err != nil {
		return err
	}
	a.backchannelLogout(ctx, realm, ended)
	return a.continueAuthRequest(w, r, realm, step.client, step.ar, user, sso)
}

// loginAMR is how a browser sign-in authenticated: by password, and by a
// one-time code when it passed the second-factor step.
func loginAMR(secondFactor bool) []string {
	if secondFactor {
		return []string{amrPassword, amrOTP}
	}
	return []string{amrPassword}
}
