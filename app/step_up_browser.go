package app

import (
	"errors"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Step-up at the authorization endpoint. A browser whose SSO session is
// at acr 1 while its user has a second factor (ssoShortfall) is asked for
// that factor only, as Keycloak asks only for what is missing: a flow of
// the sign-in (signin.StepUpDefinition) for the session's user, whose
// pages offer the second factors the user set up. Proving one raises the
// session (its amr gains the method, its auth_time is now) and the request
// goes on to consent or its code, at acr 2. The flow is bound to the
// browser, as every flow is, and to the session: it ends with it.

// beginStepUp starts the step-up of the SSO session sso, for the stored
// request ar of client, and sends the browser to its page.
func beginStepUp(a *App, w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, user *store.User, sso *store.Session) error {
	to, err := a.signin.Begin(w, r, realm, signin.Start{Requester: signin.RequesterStepUp, RequesterID: ar.ID,
		Definition: signin.StepUpDefinition(), User: user, ExpiresAt: time.UnixMilli(ar.ExpiresAt),
		Wants: signin.Wants{Client: client.ClientID, ClientName: clientName(client), Session: sso.ID}})
	if err != nil {
		return err
	}
	http.Redirect(w, r, to, redirectStatus(r))
	return nil
}

// stepUpRequester ends a step-up whose factor was proved: the browser
// must still hold the session the step raises.
type stepUpRequester struct{ a *App }

func (stepUpRequester) Kind() signin.RequesterKind { return signin.RequesterStepUp }

func (o stepUpRequester) Finish(w http.ResponseWriter, r *http.Request, f *signin.Flow) error {
	a, realm, ctx := o.a, f.Realm, r.Context()
	ar, client, err := loadAuthRequest(ctx, a.store, a.now(), realm, f.RequesterID(), false)
	if err != nil {
		return err
	}
	sso, user, err := raiseSession(a, r, f, func(tx *store.Store, sso *store.Session, now int64) error {
		return tx.AuthenticateAuthRequest(ctx, realm.ID, ar.ID, f.User.ID, sso.ID, now, sso.AMR, now)
	})
	if err != nil {
		return err
	}
	f.SessionID = sso.ID
	return a.continueAuthRequest(w, r, realm, client, ar, user, sso)
}

// raiseSession gives the SSO session a step-up's flow f raises (the
// browser must still hold it) what f proved: its amr gains the method,
// its auth_time is now. also writes the requester's own change in the
// same transaction, with the session as raised.
func raiseSession(a *App, r *http.Request, f *signin.Flow, also func(tx *store.Store, sso *store.Session, now int64) error) (*store.Session, *store.User, error) {
	ctx, realm := r.Context(), f.Realm
	sso, user, err := a.ssoSession(r, realm)
	if err != nil {
		return nil, nil, err
	}
	if sso == nil || sso.ID != f.Wants.Session || user.ID != f.User.ID {
		return nil, nil, errSessionEnded
	}
	now := a.now().UnixMilli()
	raised := *sso
	raised.AuthTime, raised.AMR, raised.LastAccessAt, raised.ExpiresAt = now, raiseAMR(sso.AMR, f.AMR()), now, ssoExpiry(realm, sso, now)
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.ReauthenticateSession(ctx, realm.ID, sso.ID, now, raised.AMR, now, raised.ExpiresAt); err != nil {
			return err
		}
		if also == nil {
			return nil
		}
		return also(tx, &raised, now)
	})
	if errors.Is(err, store.ErrNotFound) { // the request or the session ended meanwhile
		return nil, nil, errStaleAuthRequest
	} else if err != nil {
		return nil, nil, err
	}
	a.stepUpEvent(r, realm, user, f.Wants.Client, &raised, stepUpMethod(f))
	return &raised, user, nil
}

// stepUpMethod names the factor a step-up's flow passed, for its event:
// totp, recovery-code or webauthn, as the kinds of its steps are named.
func stepUpMethod(f *signin.Flow) string {
	for _, i := range f.Passed() {
		if i < len(f.Def.Steps) {
			return string(f.Def.Steps[i].Kind)
		}
	}
	return ""
}

// stepUpEvent records a step-up as the LOGIN it is, in the session it
// raised, marked step_up with the method and the level reached.
func (a *App) stepUpEvent(r *http.Request, realm *store.Realm, user *store.User, clientID string, sso *store.Session, method string) {
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLogin, UserID: user.ID, ClientID: clientID, SessionID: sso.ID,
		IPAddress: a.clientIP(r), Details: map[string]string{"username": user.Username, "step_up": "true", "method": method,
			"acr": acrOf(sso.AMR)}})
}
