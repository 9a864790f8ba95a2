package app

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/store"
)

// finishSignIn signs a user in for an authorization request once every
// factor is checked: the browser gets its SSO session, authenticated by
// amr, and the request goes on to consent or back to the client with its
// code. also, when set, runs in the transaction that authenticates the
// request: a second step completes there, so it completes once.
func (a *App) finishSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client,
	ar *store.AuthRequest, user *store.User, amr []string, also func(tx *store.Store) error) error {
	ctx := r.Context()
	signIn, err := a.planSSOLogin(r, realm, user)
	if err != nil {
		return err
	}
	sso := signIn.sess
	sso.AMR = amr
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if err := signIn.write(ctx, tx); err != nil {
			return err
		}
		return tx.AuthenticateAuthRequest(ctx, realm.ID, ar.ID, user.ID, sso.ID, sso.AuthTime, sso.AMR, sso.LastAccessAt)
	})
	if errors.Is(err, store.ErrNotFound) { // the request, the step or the session ended meanwhile
		return errStaleAuthRequest
	} else if err != nil {
		return err
	}
	a.setSSOCookie(w, realm, signIn)
	a.loginEvent(ctx, realm, store.LoginEvent{Type: "LOGIN", UserID: user.ID, ClientID: client.ClientID,
		SessionID: sso.ID, IPAddress: clientIP(r)})
	ar.UserID, ar.SessionID, ar.AuthTime, ar.AMR = user.ID, sso.ID, sso.AuthTime, sso.AMR
	consent, err := a.needsConsent(ctx, client, user.ID, ar)
	if err != nil {
		return err
	}
	if consent {
		http.Redirect(w, r, consentURL(a.issuer(realm), ar.ID), http.StatusSeeOther)
		return nil
	}
	return a.issueCode(w, r, realm, ar, nil)
}
