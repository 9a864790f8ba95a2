package app

import (
	"net/http"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// samlFlowLifetime is how long a SAML request's flow may take: as long as
// the request waits for its browser (app/saml).
const samlFlowLifetime = 30 * time.Minute

// samlSignIn sends the browser to sign in for sp, and back to the SAML
// endpoint with state (app/saml's SignIn).
func (a *App) samlSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, state string, force bool) error {
	to, err := beginSAMLFlow(a, w, r, realm, sp, state, force)
	if err == nil {
		http.Redirect(w, r, to, redirectStatus(r))
	}
	return err
}

// beginSAMLFlow starts the sign-in of a SAML request, and answers the URL
// of its first page: the authentication flow bound to sp, else the
// server's own browser sign-in (signin.BrowserDefinition). A browser whose
// SSO session lacks the second factor its user has (the request asks for
// more than the session gives) is asked for that factor alone, as the
// authorization endpoint steps up a session; one with nothing to add goes
// straight back, to be answered as its session allows. ForceAuthn always
// signs in anew.
func beginSAMLFlow(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, state string, force bool) (string, error) {
	ctx := r.Context()
	def, err := signin.Bound(ctx, a.store, realm.ID, store.ClientKindSAML, sp.ID, signin.UsageBrowser)
	if err != nil {
		return "", err
	}
	name := sp.Name
	if name == "" {
		name = sp.EntityID
	}
	start := signin.Start{Requester: signin.RequesterSAML, RequesterID: state, Definition: def,
		Wants: signin.Wants{Client: sp.EntityID, ClientName: name, Fresh: force}, ExpiresAt: a.now().Add(samlFlowLifetime)}
	if def == nil {
		start.Definition = signin.BrowserDefinition()
		sso, user, err := a.ssoSession(r, realm)
		if err != nil {
			return "", err
		}
		if sso != nil && !force && !identity.PasswordChangeRequired(realm, user, a.now()) {
			stepUp, login, err := a.ssoShortfall(ctx, realm, user, sso)
			switch {
			case err != nil:
				return "", err
			case stepUp != "":
				start.Definition, start.User, start.Wants.Session = signin.StepUpDefinition(), user, sso.ID
			case !login:
				return samlResumeURL(a, realm, state), nil
			}
		}
	}
	return a.signin.Begin(w, r, realm, start)
}

// samlResumeURL is where a SAML request's browser comes back to once
// signed in: the SSO endpoint, which answers the request waiting there.
func samlResumeURL(a *App, realm *store.Realm, state string) string {
	return a.cfg.BaseURL + "/realms/" + url.PathEscape(realm.Name) + "/protocol/saml?" + url.Values{"state": {state}}.Encode()
}

// landFlow gives the browser that passed a flow its SSO session, as a
// password sign-in does: the browser's own session when it is the user's,
// the cookie (kept past the browser's closing when the person asked to be
// remembered), the LOGIN event naming the application; and the upstream ID
// token of a provider's step, for the session's sign-out there. A password
// change owed was the flow's last step. A step-up's flow raises the
// session it was for instead.
func landFlow(a *App, w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	ctx := r.Context()
	if f.Wants.Session != "" {
		_, _, err := raiseSession(a, r, f, nil)
		f.SessionID = f.Wants.Session
		return err
	}
	signIn, err := a.planSSOLogin(r, f.Realm, f.User)
	if err != nil {
		return err
	}
	signIn.sess.AMR = f.AMR()
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := signIn.write(ctx, tx); err != nil {
			return err
		}
		return tx.BindBrokerFlowSession(ctx, f.ID(), signIn.sess.ID)
	})
	if err != nil {
		return err
	}
	f.SessionID = signIn.sess.ID
	a.setSSOCookie(w, f.Realm, signIn, f.Wants.RememberMe)
	a.loginEvent(ctx, f.Realm, store.LoginEvent{Type: signin.EventLogin, UserID: f.User.ID, ClientID: f.Wants.Client,
		SessionID: signIn.sess.ID, IPAddress: a.clientIP(r)})
	return nil
}
