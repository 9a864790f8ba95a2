package app

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/store"
)

// Step-up at the authorization endpoint. A browser whose SSO session is
// at acr 1 while its user has a second factor (ssoShortfall) is asked for
// that factor only, as Keycloak asks only for what is missing: the
// request gets a second step, as after a password, that names the SSO
// session, and the browser goes to the TOTP page or the security key's
// page. Proving the factor raises the session (its amr gains the method,
// its auth_time is now) and the request goes on to consent or its code,
// at acr 2. The step is bound to the browser, as every step is, and to
// the session: it ends with it.

// startStepUp records the step of a stored request ar answered by the SSO
// session sso once its user gives the second factor of step pending, and
// sends the browser to that factor's page.
func (a *App) startStepUp(w http.ResponseWriter, r *http.Request, realm *store.Realm, ar *store.AuthRequest, user *store.User, sso *store.Session, pending string) error {
	browser := a.pages.BrowserSecret(w, r, realm)
	err := a.store.CreateAuthRequestStep(r.Context(), realm.ID, &store.AuthRequestStep{AuthRequestID: ar.ID, UserID: user.ID,
		Pending: pending, BrowserHash: store.HashToken(browser), PasswordAt: sso.AuthTime, SSOSessionID: sso.ID},
		a.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return errSessionEnded // ended since it was read
	} else if err != nil {
		return err
	}
	to := totpURL(a.issuer(realm), ar.ID, false)
	if pending == store.StepWebAuthn {
		to = webauthnStepURL(a.issuer(realm), ar.ID)
	}
	http.Redirect(w, r, to, redirectStatus(r))
	return nil
}

// isStepUp tells a step-up's step from the second step of a sign-in.
func (st *totpState) isStepUp() bool { return st.step.SSOSessionID != "" }

// eventDetails marks a step-up's events as such.
func (st *totpState) eventDetails(details map[string]string) map[string]string {
	if st.isStepUp() {
		details["step_up"] = "true"
	}
	return details
}

// finishStepUp ends a step-up whose factor was proved: method names it
// for the event (totp, recovery-code, webauthn), proved is its amr. The
// browser must still hold the session the step raises.
func (a *App) finishStepUp(w http.ResponseWriter, r *http.Request, realm *store.Realm, st *totpState, method string, proved []string) error {
	ctx := r.Context()
	sso, user, err := a.ssoSession(r, realm)
	if err != nil {
		return err
	}
	if sso == nil || sso.ID != st.step.SSOSessionID || user.ID != st.user.ID {
		return errSessionEnded
	}
	now := a.now().UnixMilli()
	amr := raiseAMR(sso.AMR, proved)
	expires := ssoExpiry(realm, sso, now)
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CompleteAuthRequestStep(ctx, st.ar.ID, st.step.Pending); err != nil {
			return err
		}
		if err := tx.ReauthenticateSession(ctx, realm.ID, sso.ID, now, amr, now, expires); err != nil {
			return err
		}
		return tx.AuthenticateAuthRequest(ctx, realm.ID, st.ar.ID, user.ID, sso.ID, now, amr, now)
	})
	if errors.Is(err, store.ErrNotFound) { // the request, its step or the session ended meanwhile
		return errStaleAuthRequest
	} else if err != nil {
		return err
	}
	sso.AuthTime, sso.AMR, sso.LastAccessAt, sso.ExpiresAt = now, amr, now, expires
	a.stepUpEvent(r, realm, user, st.client.ClientID, sso, method)
	return a.continueAuthRequest(w, r, realm, st.client, st.ar, user, sso)
}

// stepUpEvent records a step-up as the LOGIN it is, in the session it
// raised, marked step_up with the method and the level reached.
func (a *App) stepUpEvent(r *http.Request, realm *store.Realm, user *store.User, clientID string, sso *store.Session, method string) {
	a.loginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLogin, UserID: user.ID, ClientID: clientID, SessionID: sso.ID,
		IPAddress: a.clientIP(r), Details: map[string]string{"username": user.Username, "step_up": "true", "method": method,
			"acr": acrOf(sso.AMR)}})
}
