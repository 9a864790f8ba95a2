package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// oidcRequester finishes the sign-ins an authorization request started
// through an authentication flow bound to its client, and lands them as a
// password sign-in without a flow lands: the SSO session, the
// organization, consent, the code. A password change owed is the flow's
// last step (signin.OwedSteps).
type oidcRequester struct{ a *App }

func (oidcRequester) Kind() signin.RequesterKind { return signin.RequesterOIDC }

func (o oidcRequester) Finish(w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	a := o.a
	ar, client, err := loadAuthRequest(r.Context(), a.store, a.now(), f.Realm, f.RequesterID(), false)
	if err != nil {
		return err
	}
	sess, err := a.signInBrowser(w, r, f.Realm, client, ar, f.User, browserSignIn{remember: f.Wants.RememberMe, amr: f.AMR(), flow: true})
	if err != nil {
		return err
	}
	f.SessionID = sess.ID
	return a.continueAuthRequest(w, r, f.Realm, client, ar, f.User, sess)
}

// beginFlow starts the sign-in of the authorization request ar through
// def, and answers the URL of its first page.
func beginFlow(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, def *signin.Definition) (string, error) {
	return a.signin.Begin(w, r, realm, signin.Start{Requester: signin.RequesterOIDC, RequesterID: ar.ID, Definition: def,
		Wants:     signin.Wants{Client: client.ClientID, ClientName: clientName(client), LoginHint: ar.LoginHint, OrgHint: ar.OrgHint},
		ExpiresAt: time.UnixMilli(ar.ExpiresAt)})
}

// errUnverifiedBrokered: the provider vouched for a user whose email the
// realm wants verified first.
var errUnverifiedBrokered = pageErr(http.StatusForbidden, apperr.CodeForbidden, "login.error.unverified")

// passBrokeredStep passes the identity-provider step of the flow the
// sign-in f continues: the flow of its authorization request, when that
// has one, or the flow f names (a SAML service provider's, a device
// approval's). The provider's events, the email the realm wants verified,
// the organization the provider serves, then the flow goes on. It answers
// false for a request without a flow, which signs in as the sign-in
// page's does.
func passBrokeredStep(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, f broker.Finish) (bool, error) {
	ctx := r.Context()
	var flow *store.SignInFlow
	var err error
	if f.FlowID != "" { // a flow of another requester than an authorization request
		flow, err = a.store.GetSignInFlow(ctx, realm.ID, f.FlowID, a.now().UnixMilli())
		if errors.Is(err, store.ErrNotFound) {
			return true, errStaleAuthRequest
		}
	} else {
		flow, err = a.store.SignInFlowOf(ctx, realm.ID, string(signin.RequesterOIDC), f.AuthRequestID, a.now().UnixMilli())
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
	}
	if err != nil {
		return true, err
	}
	var wants signin.Wants
	if err := json.Unmarshal(flow.Wants, &wants); err != nil {
		return true, fmt.Errorf("sign-in flow %s: %w", flow.ID, err)
	}
	for _, e := range f.Events {
		e.ClientID = wants.Client
		a.loginEvent(ctx, realm, e)
	}
	if identity.EmailVerificationRequired(realm, f.User) {
		a.loginEvent(ctx, realm, store.LoginEvent{Type: signin.EventLoginError, UserID: f.User.ID, ClientID: wants.Client,
			IPAddress: a.clientIP(r), Error: "email_not_verified", Details: map[string]string{"username": f.User.Username}})
		return true, errUnverifiedBrokered
	}
	if _, err := a.orgs.JoinThroughConnection(ctx, realm, f.ProviderID, f.User); err != nil {
		return true, err
	}
	return true, a.signin.Pass(w, r, realm, flow.ID, []signin.StepKind{signin.KindIdentityProvider, signin.KindOrgDiscovery}, f.User, f.AMR)
}
