package signin

import (
	"net/http"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
)

// passkeyStep asks for a passkey: a WebAuthn credential that verifies its
// user (PIN or biometrics), and so tells who signs in and proves it at
// once. Without a user named before, any passkey of the realm the
// authenticator holds will do (a discoverable credential: its user
// handle names the user); after a username step, only that user's keys.
type passkeyStep struct {
	keys  Keys
	pages *Pages
	emit  Emitter
}

func (passkeyStep) Kind() StepKind { return KindPasskey }

// AMR: the key's, as the passkey sign-in without a flow says it: hwk for
// a key bound to its device, swk for one that may be synced, and mfa for
// the user it verified.
func (passkeyStep) AMR() []string {
	return []string{webauthnrp.AMRHardwareKey, webauthnrp.AMRSoftwareKey, webauthnrp.AMRMFA}
}
func (passkeyStep) Events() []EventType { return []EventType{EventLoginError} }

// user is whose keys the page asks for: the named user's, or nil for any
// passkey (a user without keys gets the same page as an unknown one).
func (s passkeyStep) user(r *http.Request, f *Flow) (*webauthnrp.User, error) {
	if f.User == nil {
		return nil, nil
	}
	return s.keys.RP.LoginUser(r.Context(), f.Realm, f.User)
}

func (s passkeyStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	u, err := s.user(r, f)
	if err != nil {
		return err
	}
	return s.keys.page(w, r, s.pages, f, v, u, false, http.StatusOK, "")
}

func (s passkeyStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	u, err := s.user(r, f)
	if err != nil {
		return nil, err
	}
	var req webauthnrp.AssertionRequest
	if f.User != nil {
		req.UserID = f.User.ID
	}
	as, err := s.keys.verify(w, r, s.pages, f, v, u, req)
	if as == nil {
		return nil, err
	}
	if identity.EmailVerificationRequired(f.Realm, as.User) {
		s.emit(r.Context(), f.Realm, store.LoginEvent{Type: EventLoginError, UserID: as.User.ID, ClientID: f.Wants.Client,
			IPAddress: v.ClientIP, Error: "email_not_verified", Details: map[string]string{"username": as.User.Username}})
		return nil, s.keys.page(w, r, s.pages, f, v, u, false, http.StatusForbidden, "login.error.unverified")
	}
	f.Prove(as.AMR()...)
	return as.User, nil
}
