package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// loginPage shows the sign-in form of a pending authorization request.
// Opened without one, as a bookmark would, it starts a sign-in to the
// realm's account pages, as Keycloak does: the form shows, and the
// account home follows.
func (a *App) loginPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if !r.URL.Query().Has("authRequestID") {
		return a.account.StartSignIn(w, r, realm, account.Path(realm)+"/", "")
	}
	id := r.URL.Query().Get("authRequestID")
	ar, client, err := a.pageAuthRequest(r.Context(), realm, id, false)
	if errors.Is(err, errStaleAuthRequest) {
		// A recovery or register page's way back to a sign-in flow.
		if live, ferr := liveFlow(r.Context(), a, realm, id); live || ferr != nil {
			if ferr == nil {
				http.Redirect(w, r, a.signin.URL(realm, id), http.StatusSeeOther)
			}
			return ferr
		}
	}
	if err != nil {
		return err
	}
	if to, err := a.homeRealmURL(r.Context(), realm, ar.LoginHint, ar); to != "" || err != nil {
		if err == nil {
			http.Redirect(w, r, to, http.StatusSeeOther)
		}
		return err
	}
	return a.renderLoginWith(w, r, realm, client, ar, http.StatusOK, ui.LoginForm{Username: ar.LoginHint})
}

// renderLoginWith shows the login page with f's username, message and
// resend form; the rest is filled in here.
func (a *App) renderLoginWith(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, status int, f ui.LoginForm) error {
	token := a.pages.CSRFToken(w, r, realm, "login", ar.ID)
	var err error
	back := "?" + url.Values{"authRequestID": {ar.ID}}.Encode()
	f.Action, f.AuthRequestID, f.CSRFToken, f.ClientName = a.issuer(realm)+pathLogin, ar.ID, token, clientName(client)
	f.ForgotURL = a.issuer(realm) + recovery.PathForgotPassword + back
	f.Passkey = a.passkeyLogin(realm) // webauthn_login.go
	if f.Providers, err = a.broker.Buttons(r.Context(), realm, ar.ID); err != nil {
		return err
	}
	if f.PasswordOptional, err = a.store.RealmHasSSODiscovery(r.Context(), realm.ID); err != nil {
		return err
	}
	for i := range f.Providers {
		f.Providers[i].Icon = a.assets.ProviderIcon(f.Providers[i].Type)
	}
	if realm.RegistrationAllowed {
		f.RegisterURL = a.issuer(realm) + pathRegister + back
	}
	return a.pages.Render(w, r, status, ui.Login(a.pages.Page("login.title"), f))
}

// login takes the sign-in form: on success the browser gets an SSO
// session and the request goes on to consent or back to the client, or
// first to a required step; on failure the form comes back with a message
// that names no cause a stranger could learn from.
func (a *App) login(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("login.error.unreadable")
	}
	ctx := r.Context()
	ar, client, err := a.pageAuthRequest(ctx, realm, r.PostForm.Get("authRequestID"), false)
	if err != nil {
		return err
	}
	if err := a.pages.CheckCSRF(r, "login", ar.ID); err != nil {
		return err
	}
	username, password := strings.TrimSpace(r.PostForm.Get("username")), r.PostForm.Get("password")
	form := ui.LoginForm{Username: username, RememberMe: r.PostForm.Get("rememberMe") != ""}
	if to, err := a.homeRealmURL(ctx, realm, username, ar); to != "" || err != nil {
		if err == nil {
			http.Redirect(w, r, to, http.StatusSeeOther)
		}
		return err
	}
	if username == "" || password == "" {
		form.Error = "login.error.missing"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusBadRequest, form)
	}
	user, err := a.id.CheckCredentials(ctx, realm, username, password, a.clientIP(r))
	if reason := signin.LoginErrorReason(err); reason != "" {
		e := store.LoginEvent{Type: store.EventLoginError, ClientID: client.ClientID, IPAddress: a.clientIP(r),
			Error: reason, Details: map[string]string{"username": username}}
		if errors.Is(err, identity.ErrUserDisabled) {
			e.UserID = user.ID
		}
		if lockedID, locked := identity.LockedOut(err); locked {
			e.UserID = lockedID
		}
		a.loginEvent(ctx, realm, e)
	}
	var throttled *identity.ThrottledError
	switch {
	// A lockout is an identity.ErrBadCredentials: it answers as a wrong password.
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrUserDisabled):
		form.Error = "login.error.invalid"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusUnauthorized, form)
	case errors.As(err, &throttled):
		httpx.RetryAfter(w, throttled.Wait)
		form.Error = "login.error.throttled"
		return a.renderLoginWith(w, r, realm, client, ar, http.StatusTooManyRequests, form)
	case err != nil:
		return err
	}
	if identity.EmailVerificationRequired(realm, user) {
		return a.recovery.RefuseUnverified(w, r, realm, client, ar, user, username)
	}
	// The second factor comes before any step the account owes, as in
	// Keycloak: a password alone changes nothing.
	if pending, err := a.startSecondFactor(w, r, realm, ar, user, form.RememberMe); pending || err != nil {
		return err
	}
	if identity.PasswordChangeRequired(realm, user, a.now()) {
		return a.startPendingLogin(w, r, realm, ar, user, store.ActionUpdatePassword,
			pendingSignIn{remember: form.RememberMe, amr: loginAMR(false)})
	}
	sess, err := a.signInBrowser(w, r, realm, client, ar, user, browserSignIn{remember: form.RememberMe})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, client, ar, user, sess)
}

// browserSignIn is how a sign-in that passed every step lands in the
// browser.
type browserSignIn struct {
	remember bool // the SSO cookie outlives the browser
	// fresh starts a new SSO session even when the browser has one of the
	// user, as after a password change that ended the user's sessions.
	fresh bool
	// also writes more in the sign-in's transaction, first.
	also func(ctx context.Context, tx *store.Store) error
	// events are recorded, after the sign-in commits, before its LOGIN.
	events []store.LoginEvent
	// amr says how the user authenticated; a password alone when empty.
	amr []string
	// flow says the sign-in went through a flow, whose dispatcher assessed
	// it; the pages without one have it assessed here.
	flow bool
}

// signInBrowser signs user in for ar: an SSO session (the browser's own
// when it is the user's), the request authenticated in it, the cookie,
// and the LOGIN event. A request answered or expired meanwhile is
// errStaleAuthRequest, and nothing is written.
func (a *App) signInBrowser(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, user *store.User, in browserSignIn) (*store.Session, error) {
	ctx := r.Context()
	signIn := a.newSSOLogin(r, realm, user)
	if !in.fresh {
		var err error
		if signIn, err = a.planSSOLogin(r, realm, user); err != nil {
			return nil, err
		}
	}
	sso := signIn.sess
	if len(in.amr) > 0 {
		sso.AMR = in.amr
	}
	var assessed *signin.Flow
	if !in.flow {
		var err error
		if assessed, err = a.signin.PagesFlow(w, r, realm, user, client.ClientID); err != nil {
			return nil, err
		}
		// A policy that acts came after the request: it signs in through
		// the server's own flow, from the application again.
		if risk := assessed.Risk; risk != nil && risk.Action != signin.RiskAllow && risk.Action != signin.RiskNotify {
			return nil, errStaleAuthRequest
		}
	}
	err := a.store.Tx(ctx, func(tx *store.Store) error {
		if in.also != nil {
			if err := in.also(ctx, tx); err != nil {
				return err
			}
		}
		if err := signIn.write(ctx, tx); err != nil {
			return err
		}
		if err := tx.AuthenticateAuthRequest(ctx, realm.ID, ar.ID, user.ID, sso.ID, sso.AuthTime, sso.AMR, sso.LastAccessAt); err != nil {
			return err
		}
		// A sign-in through a provider that signs out upstream too
		// leaves its upstream ID token to the session (app/broker).
		return tx.BindBrokerSession(ctx, ar.ID, sso.ID)
	})
	if errors.Is(err, store.ErrNotFound) { // the request or the session ended meanwhile
		return nil, errStaleAuthRequest
	} else if err != nil {
		return nil, err
	}
	if assessed != nil {
		assessed.SessionID = sso.ID
		if err := a.signin.DirectSucceeded(ctx, assessed); err != nil {
			return nil, err
		}
	}
	a.setSSOCookie(w, realm, signIn, in.remember)
	for _, e := range in.events {
		a.loginEvent(ctx, realm, e)
	}
	login := store.LoginEvent{Type: store.EventLogin, UserID: user.ID, ClientID: client.ClientID, SessionID: sso.ID, IPAddress: a.clientIP(r)}
	if in.remember {
		login.Details = map[string]string{"remember_me": "true"}
	}
	a.loginEvent(ctx, realm, login)
	return sso, nil
}

// continueAuthRequest takes a request just authenticated in sso on to the
// consent page, or back to the client with its code.
func (a *App) continueAuthRequest(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, user *store.User, sso *store.Session) error {
	ar.UserID, ar.SessionID, ar.AuthTime, ar.AMR = user.ID, sso.ID, sso.AuthTime, sso.AMR
	if asked, err := a.orgStep(w, r, realm, client, ar); asked || err != nil { // org_select.go
		return err
	}
	return a.consentOrCode(w, r, realm, client, ar)
}

// consentOrCode takes an authenticated request on to the consent page, or
// back to the client with its code.
func (a *App) consentOrCode(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest) error {
	consent, err := a.needsConsent(r.Context(), realm, client, ar.UserID, ar)
	if err != nil {
		return err
	}
	if consent {
		http.Redirect(w, r, consentURL(a.issuer(realm), ar.ID), http.StatusSeeOther)
		return nil
	}
	return a.issueCode(w, r, realm, ar, nil)
}
