package saml

import (
	"context"
	"errors"
	"net/http"

	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The module's renderer. A request the service provider can be answered
// for (it is checked: a known, enabled SP, its registered ACS URL, a valid
// signature where one is due) gets a SAML Response with the status that
// says what went wrong, POSTed to that ACS URL; anything else, including
// every failure to trust the request, gets the realm's HTML error page.
// Neither shows a fault's cause.

// statusError is a refusal the service provider is told of in a SAML
// Response to req.
type statusError struct {
	req     *request
	top     string // Requester (default) or Responder
	second  string // the second-level status code, e.g. NoPassive
	message string
}

func (e *statusError) Error() string { return "SAML status " + e.second + ": " + e.message }

// fail answers err: a SAML Response for a statusError, else the error
// page. A status response that cannot be built falls back to the page.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error) {
	var se *statusError
	if errors.As(err, &se) {
		if se.req.sp != nil && se.req.sp.ID != "" {
			s.recordLogin(r, realm, se.req.sp, nil, nil, se.second)
		}
		perr := s.statusResponse(w, r, realm, se)
		if perr == nil {
			return
		}
		err = perr
	}
	s.pageError(w, r, realm, err)
}

func (s *Service) statusResponse(w http.ResponseWriter, r *http.Request, realm *store.Realm, se *statusError) error {
	key, err := s.signingKey(r.Context(), realm)
	if err != nil {
		return err
	}
	top := se.top
	if top == "" {
		top = crewsaml.StatusRequester
	}
	status := crewsaml.Status{StatusCode: crewsaml.StatusCode{Value: top,
		StatusCode: &crewsaml.StatusCode{Value: se.second}}}
	if se.message != "" {
		status.StatusMessage = &crewsaml.StatusMessage{Value: se.message}
	}
	resp := s.response(realm, se.req, s.deps.Now().UTC(), status)
	out, err := s.finishResponse(key, se.req.sp, resp, nil)
	if err != nil {
		return err
	}
	httpx.LogFailure(s.deps.Log, r, http.StatusOK, se)
	return s.post(w, r, realm, se.req.acsURL, "SAMLResponse", out, se.req.relayState)
}

// pageError answers a browser that cannot be sent back to a service
// provider (no valid request names one) with the realm's error page.
func (s *Service) pageError(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error) {
	s.deps.ErrorPage(w, r, realm, err)
}

// settings are the realm's SAML settings, cached under the store's
// generation (store.Cached). The value is shared: it must not be changed.
func (s *Service) settings(ctx context.Context, realm *store.Realm) (*store.SAMLSettings, error) {
	return store.Cached(s.deps.Store, s.realmSettings, realm.ID, func() (*store.SAMLSettings, error) {
		return s.deps.Store.GetSAMLSettings(ctx, realm.ID)
	})
}

// recordLogin writes the LOGIN (or, with errCode, LOGIN_ERROR) event of a
// SAML sign-in at sp.
func (s *Service) recordLogin(r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, user *store.User,
	sess *store.Session, errCode string) {
	if s.deps.LoginEvent != nil {
		s.deps.LoginEvent(r.Context(), realm, loginEvent(sp, user, sess, errCode))
	}
}

// loginEvent is the LOGIN (or, with errCode, LOGIN_ERROR) event of a SAML
// sign-in at sp; user and sess may be nil.
func loginEvent(sp *store.SAMLServiceProvider, user *store.User, sess *store.Session, errCode string) store.LoginEvent {
	e := store.LoginEvent{Type: store.EventLogin, ClientID: sp.EntityID,
		Details: map[string]string{"protocol": "saml", "sp": sp.EntityID}}
	if user != nil {
		e.UserID = user.ID
	}
	if sess != nil {
		e.SessionID = sess.ID
	}
	if errCode != "" {
		e.Type, e.Error = store.EventLoginError, errCode
	}
	return e
}
