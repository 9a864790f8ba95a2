package app

import (
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// samlFlowLifetime is how long a SAML request's flow may take: as long as
// the request waits for its browser (app/saml).
const samlFlowLifetime = 30 * time.Minute

// beginSAMLFlow starts the authentication flow bound to sp, and answers
// the URL of its first page; "" when sp has none and its sign-ins go
// through the realm's sign-in page.
func beginSAMLFlow(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, state string, force bool) (string, error) {
	def, err := signin.Bound(r.Context(), a.store, realm.ID, store.ClientKindSAML, sp.ID, signin.UsageBrowser)
	if def == nil || err != nil {
		return "", err
	}
	name := sp.Name
	if name == "" {
		name = sp.EntityID
	}
	return a.signin.Begin(w, r, realm, signin.Start{Requester: signin.RequesterSAML, RequesterID: state, Definition: def,
		Wants: signin.Wants{Client: sp.EntityID, ClientName: name, Fresh: force}, ExpiresAt: a.now().Add(samlFlowLifetime)})
}

// landFlow gives the browser that passed a flow its SSO session, as a
// password sign-in does: the browser's own session when it is the user's,
// the cookie, the LOGIN event naming the application; and the upstream ID
// token of a provider's step, for the session's sign-out there. A password
// change owed was the flow's last step.
func landFlow(a *App, w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	ctx := r.Context()
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
	a.setSSOCookie(w, f.Realm, signIn, false)
	a.loginEvent(ctx, f.Realm, store.LoginEvent{Type: signin.EventLogin, UserID: f.User.ID, ClientID: f.Wants.Client,
		SessionID: signIn.sess.ID, IPAddress: a.clientIP(r)})
	return nil
}
