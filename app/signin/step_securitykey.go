package signin

import (
	"net/http"

	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/store"
)

// securityKeyStep asks the known user for one of the user's WebAuthn
// credentials as a second factor: the key's presence is enough (a PIN
// prompt would only be in the way), as at the second step of the sign-in
// without a flow.
type securityKeyStep struct {
	keys  Keys
	pages *Pages
}

func (securityKeyStep) Kind() StepKind { return KindSecurityKey }

// AMR: the key's, hwk for a key bound to its device, swk for one that may
// be synced.
func (securityKeyStep) AMR() []string {
	return []string{webauthnrp.AMRHardwareKey, webauthnrp.AMRSoftwareKey}
}
func (securityKeyStep) Events() []EventType { return []EventType{EventLoginError} }

// user is the flow's user with the keys to ask for; the dispatcher offers
// the step only to a user with one (storeSubject.CanPass).
func (s securityKeyStep) user(r *http.Request, f *Flow) (*webauthnrp.User, error) {
	u, err := s.keys.RP.LoginUser(r.Context(), f.Realm, f.User)
	if err == nil && u == nil {
		err = webauthnrp.ErrNoKey
	}
	return u, err
}

func (s securityKeyStep) Show(w http.ResponseWriter, r *http.Request, f *Flow, v View) error {
	u, err := s.user(r, f)
	if err != nil {
		return err
	}
	return s.keys.page(w, r, s.pages, f, v, u, true, http.StatusOK, "")
}

func (s securityKeyStep) Submit(w http.ResponseWriter, r *http.Request, f *Flow, v View) (*store.User, error) {
	u, err := s.user(r, f)
	if err != nil {
		return nil, err
	}
	as, err := s.keys.verify(w, r, s.pages, f, v, u, webauthnrp.AssertionRequest{UserID: f.User.ID, SecondFactor: true})
	if as == nil {
		return nil, err
	}
	f.Prove(as.Key())
	return f.User, nil
}
