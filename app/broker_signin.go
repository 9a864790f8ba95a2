package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// What brokering (app/broker) needs of the hosted sign-in: the browser's
// cookie its sign-ins are bound to, the pages, and the end of a sign-in,
// which is the same as a password sign-in's.

func (a *App) brokerDeps() broker.Deps {
	timeout := a.cfg.OutboundTimeout
	if timeout <= 0 {
		timeout = defaultOutboundTimeout
	}
	return broker.Deps{BaseURL: a.cfg.BaseURL, Store: a.store, Log: a.log, Now: a.now, Realm: a.realm,
		Client: a.tracing.Client(httpx.OutboundClient(timeout, a.cfg.OutboundAllowed)), OutboundAllowed: a.cfg.OutboundAllowed, Core: a.id, ClientIP: a.clientIP,
		LoginEvent: a.loginEvent, SignIn: a.brokerSignIn, Pages: a.pages}
}

// signInURL is where a request that needs a sign-in goes: the flow the
// client follows (signin.Engine.Definition), else the sign-in page. The
// identity provider its idp hint (kc_idp_hint, or idp_hint) names, when
// the realm has it enabled, goes first, but for a client bound to a flow
// of its own, which signs in through it whatever the hint.
func (a *App) signInURL(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest) (string, error) {
	def, fallback, err := a.signin.Definition(r.Context(), realm, store.ClientKindOIDC, client.ID, signin.UsageBrowser)
	if err != nil {
		return "", err
	}
	to := ""
	if def != nil {
		// The flow is begun first, so that the provider's callback passes
		// its step.
		if to, err = beginFlow(a, w, r, realm, client, ar, def); err != nil || !fallback {
			return to, err
		}
	}
	hint := r.Form.Get("kc_idp_hint")
	if hint == "" {
		hint = r.Form.Get("idp_hint")
	}
	hinted, err := a.broker.HintedLoginURL(r.Context(), realm, hint, ar.ID)
	switch {
	case hinted != "" || err != nil:
		return hinted, err
	case to != "":
		return to, nil
	}
	return a.oidcClient(realm, client).LoginURL(ar.ID), nil
}

// brokerToken answers the upstream tokens kept for the caller, an
// application with the user's access token.
func (a *App) brokerToken(w http.ResponseWriter, r *http.Request, c *account.Caller) error {
	if !c.API {
		return account.ErrNoToken
	}
	return a.broker.StoredToken(w, r, c.Realm, c.User)
}

// brokerSignIn signs in a user an upstream provider vouched for, for the
// authorization request f names, as a password sign-in does after the
// password: a refused unverified email, the second factor the user or
// realm requires, a password change owed; then the SSO session (amr fed)
// and on to the application.
func (a *App) brokerSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, f broker.Finish) error {
	if passed, err := passBrokeredStep(a, w, r, realm, f); passed || err != nil {
		return err
	}
	ar, client, err := a.pageAuthRequest(r.Context(), realm, f.AuthRequestID, false)
	if err != nil {
		return err
	}
	user := f.User
	for i := range f.Events {
		f.Events[i].ClientID = client.ClientID
	}
	for _, e := range f.Events {
		a.loginEvent(r.Context(), realm, e)
	}
	if identity.EmailVerificationRequired(realm, user) {
		return a.recovery.RefuseUnverified(w, r, realm, client, ar, user, user.Username)
	}
	// The provider's word makes the user a member of the organization it
	// serves; the realm's own second factor is a later step of the sign-in.
	if _, err := a.orgs.JoinThroughConnection(r.Context(), realm, f.ProviderID, user); err != nil {
		return err
	}
	if !f.SecondFactorDone {
		if pending, err := a.startSecondStep(w, r, realm, ar, user, false, true); pending || err != nil {
			return err
		}
	}
	if identity.PasswordChangeRequired(realm, user, a.now()) {
		return a.startPendingLogin(w, r, realm, ar, user, store.ActionUpdatePassword, pendingSignIn{amr: f.AMR})
	}
	sso, err := a.signInBrowser(w, r, realm, client, ar, user, browserSignIn{amr: f.AMR})
	if err != nil {
		return err
	}
	return a.continueAuthRequest(w, r, realm, client, ar, user, sso)
}
