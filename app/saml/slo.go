package saml

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Single logout, the identity provider's side (the library has none). A
// service provider's LogoutRequest ends the SSO session it names (see
// logoutSession) at once (its OIDC clients hear of it by back channel); then the browser is sent
// with a signed LogoutRequest to each other service provider of that
// session that has an sloUrl, one after the other, each answering with a
// LogoutResponse here; last, the one that asked gets its LogoutResponse:
// Success, or PartialLogout when another service provider said it could
// not log out. Each message goes with the binding of the provider's
// sloUrl (sloBinding): an HTTP-POST form, or an HTTP-Redirect with the
// query signed. A request with the aslo:Asynchronous extension gets no
// LogoutResponse: the chain ends on the realm's signed-out page. A service
// provider that never answers stops the chain there: the session is
// already ended, only the later providers are not told.

const (
	logoutLifetime = 10 * time.Minute
	maxLogoutChain = 20 // service providers told in one logout
	statusPartial  = "urn:oasis:names:tc:SAML:2.0:status:PartialLogout"
)

// logoutState is a logout under way.
type logoutState struct {
	// The service provider that asked, and its request.
	InitiatorID string `json:"initiatorId"`
	RequestID   string `json:"requestId"`
	RelayState  string `json:"relayState"`
	// Pending are the service providers still to tell; Current the one
	// told last, whose LogoutResponse is awaited.
	Pending []logoutStep `json:"pending"`
	Current *logoutStep  `json:"current,omitempty"`
	Partial bool         `json:"partial,omitempty"`
	// Async: the initiator asked for no LogoutResponse (aslo:Asynchronous).
	Async bool `json:"async,omitempty"`
}

type logoutStep struct {
	SPID         string `json:"spId"`
	NameID       string `json:"nameId"`
	NameIDFormat string `json:"nameIdFormat"`
	SessionIndex string `json:"sessionIndex"`
	RequestID    string `json:"requestId,omitempty"`
}

var errNoSLOURL = errBadMessage("the service provider has no sloUrl to send its LogoutResponse to")

// logoutRequest answers a service provider's LogoutRequest.
func (s *Service) logoutRequest(w http.ResponseWriter, r *http.Request, realm *store.Realm, m *message) error {
	ctx := r.Context()
	issuer := issuerOf(m.root)
	sp, err := s.spByEntityID(ctx, realm.ID, issuer)
	if errors.Is(err, store.ErrNotFound) {
		return errUnknownSP
	} else if err != nil {
		return err
	}
	signed, verified, err := s.checkSignature(r, realm, sp, m)
	if err != nil {
		return err
	}
	var lr crewsaml.LogoutRequest
	if err := unmarshalElement(signed, &lr); err != nil {
		return errBadMessage("the LogoutRequest cannot be read")
	}
	if err := s.checkCommon(lr.ID, lr.Version, lr.IssueInstant, lr.Destination, verified, realm); err != nil {
		return err
	}
	async := asynchronous(signed)
	if sp.SLOURL == "" && !async {
		return errNoSLOURL
	}
	if lr.NameID == nil || strings.TrimSpace(lr.NameID.Value) == "" {
		return errBadMessage("the LogoutRequest must name its principal with a NameID")
	}
	indexes := sessionIndexes(signed)
	if !verified && len(indexes) == 0 {
		// A NameID is no secret (an email address, often): any page could
		// send the browser with it. A SessionIndex is.
		return errUnsignedNoIndex
	}
	if err := s.deps.Store.RecordSAMLRequestID(ctx, realm.ID, sp.EntityID, lr.ID,
		lr.IssueInstant.Add(maxIssueAge+clockSkew)); errors.Is(err, store.ErrConflict) {
		return errReplay(lr.ID)
	} else if err != nil {
		return err
	}
	sess, err := s.logoutSession(r, realm, sp, lr.NameID, indexes)
	if errors.Is(err, errUnknownPrincipal) {
		s.recordLogoutError(r, realm, sp, statusUnknownPrincipal)
		if async {
			return errBadMessage("%v", err)
		}
		httpx.LogFailure(s.deps.Log, r, http.StatusOK, err)
		return s.answerLogout(w, r, realm, sp, lr.ID, m.relayState, crewsaml.Status{
			StatusCode:    crewsaml.StatusCode{Value: crewsaml.StatusRequester, StatusCode: &crewsaml.StatusCode{Value: statusUnknownPrincipal}},
			StatusMessage: &crewsaml.StatusMessage{Value: err.Error()}})
	} else if err != nil {
		return err
	}
	state := &logoutState{InitiatorID: sp.ID, RequestID: lr.ID, RelayState: m.relayState, Async: async}
	if sess != nil {
		others, err := s.deps.Store.ListSAMLSessions(ctx, realm.ID, sess.ID)
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.SPID != sp.ID && len(state.Pending) < maxLogoutChain &&
				!containsStep(state.Pending, o.SPID) {
				state.Pending = append(state.Pending, logoutStep{SPID: o.SPID, NameID: o.NameID,
					NameIDFormat: o.NameIDFormat, SessionIndex: o.SessionIndex})
			}
		}
		if err := s.deps.EndSession(w, r, realm, sess, sp.EntityID); err != nil {
			return err
		}
	}
	return s.nextLogout(w, r, realm, state, "")
}

const statusUnknownPrincipal = "urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal"

var errUnsignedNoIndex = errBadMessage("an unsigned LogoutRequest must name the session it ends with its SessionIndex")

const nsAsyncSLO = "urn:oasis:names:tc:SAML:2.0:protocol:ext:async-slo"

// asynchronous says whether a LogoutRequest carries the aslo:Asynchronous
// extension: its sender wants no LogoutResponse.
func asynchronous(el *etree.Element) bool {
	for _, ext := range el.ChildElements() {
		if ext.Tag != "Extensions" || ext.NamespaceURI() != nsProtocol {
			continue
		}
		for _, c := range ext.ChildElements() {
			if c.Tag == "Asynchronous" && c.NamespaceURI() == nsAsyncSLO {
				return true
			}
		}
	}
	return false
}

var errUnknownPrincipal = errors.New("the LogoutRequest names another principal or session than the one signed in to the service provider")

// logoutSession is the SSO session a LogoutRequest of sp ends: the
// browser's own, when sp signed in to it as the NameID the request names
// (at one of the request's SessionIndexes, when it has any). A browser
// without one (a cross-site POST carries no SameSite=Lax cookie) ends the
// live session a SessionIndex names, when sp signed in to it as that
// NameID. nil and no error: nothing to end, the principal is signed out.
// errUnknownPrincipal: the request names another principal or session
// than the one it would end, which stays.
func (s *Service) logoutSession(r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider,
	nameID *crewsaml.NameID, indexes []string) (*store.Session, error) {
	ctx := r.Context()
	sess, _, err := s.deps.Session(r, realm)
	if err != nil {
		return nil, err
	}
	if sess != nil {
		signIns, err := s.deps.Store.ListSAMLSessions(ctx, realm.ID, sess.ID)
		if err != nil {
			return nil, err
		}
		for _, si := range signIns {
			if si.SPID == sp.ID && sameNameID(si, nameID) && (len(indexes) == 0 || slices.Contains(indexes, si.SessionIndex)) {
				return sess, nil
			}
		}
		return nil, errUnknownPrincipal
	}
	for _, index := range indexes {
		si, err := s.deps.Store.GetSAMLSession(ctx, realm.ID, index)
		if errors.Is(err, store.ErrNotFound) {
			continue // ended, or never was: nothing to end
		} else if err != nil {
			return nil, err
		}
		if si.SPID != sp.ID || !sameNameID(si, nameID) {
			return nil, errUnknownPrincipal
		}
		sso, err := s.deps.Store.GetSession(ctx, realm.ID, si.SSOSessionID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if sso.Kind == store.SessionSSO && sso.Active(s.deps.Now().UnixMilli()) {
			return sso, nil
		}
	}
	return nil, nil
}

// sameNameID says whether a LogoutRequest's NameID is the one of a
// sign-in: the same value, and the same format when the request names one
// other than unspecified (which many providers send for any).
func sameNameID(si *store.SAMLSession, id *crewsaml.NameID) bool {
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(id.Value)), []byte(si.NameID)) != 1 {
		return false
	}
	return id.Format == "" || id.Format == NameIDUnspecified || id.Format == si.NameIDFormat
}

// sessionIndexes are the SessionIndex values of a LogoutRequest (the
// schema allows several; crewjam/saml's type reads one).
func sessionIndexes(el *etree.Element) []string {
	var out []string
	for _, c := range el.ChildElements() {
		if c.Tag == "SessionIndex" && c.NamespaceURI() == nsProtocol {
			out = append(out, strings.TrimSpace(c.Text()))
		}
	}
	return out
}

// recordLogoutError writes the LOGOUT_ERROR event of a refused LogoutRequest of sp.
func (s *Service) recordLogoutError(r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, status string) {
	if s.deps.LoginEvent == nil {
		return
	}
	s.deps.LoginEvent(r.Context(), realm, store.LoginEvent{Type: store.EventLogoutError, ClientID: sp.EntityID, Error: status,
		Details: map[string]string{"protocol": "saml", "sp": sp.EntityID}})
}

func containsStep(steps []logoutStep, spID string) bool {
	for _, st := range steps {
		if st.SPID == spID {
			return true
		}
	}
	return false
}

// nextLogout sends the browser to the next service provider to tell, or,
// when none is left, back to the one that asked.
func (s *Service) nextLogout(w http.ResponseWriter, r *http.Request, realm *store.Realm, state *logoutState, handle string) error {
	ctx := r.Context()
	key, err := s.signingKey(ctx, realm)
	if err != nil {
		return err
	}
	for len(state.Pending) > 0 {
		step := state.Pending[0]
		state.Pending = state.Pending[1:]
		sp, err := s.deps.Store.GetSAMLServiceProvider(ctx, realm.ID, step.SPID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if sp.SLOURL == "" || !sp.Enabled {
			continue
		}
		if handle == "" {
			handle = randomID()
		}
		now := s.deps.Now().UTC()
		req := &crewsaml.LogoutRequest{ID: randomID(), Version: "2.0", IssueInstant: now, Destination: sp.SLOURL,
			Issuer:       &crewsaml.Issuer{Format: formatEntity, Value: s.entityID(realm)},
			NameID:       &crewsaml.NameID{Format: step.NameIDFormat, NameQualifier: s.entityID(realm), SPNameQualifier: sp.EntityID, Value: step.NameID},
			SessionIndex: &crewsaml.SessionIndex{Value: step.SessionIndex}}
		until := now.Add(logoutLifetime)
		req.NotOnOrAfter = &until
		step.RequestID = req.ID
		state.Current = &step
		if err := s.saveLogout(r, realm, handle, state); err != nil {
			return err
		}
		return s.sendLogout(w, r, realm, sp, key, "SAMLRequest", req.Element(), handle)
	}
	if handle != "" {
		sum := sha256.Sum256([]byte(handle))
		if err := s.deps.Store.DeleteSAMLLogout(ctx, sum[:]); err != nil {
			return err
		}
	}
	if state.Async {
		return s.deps.LoggedOut(w, r, realm)
	}
	initiator, err := s.deps.Store.GetSAMLServiceProvider(ctx, realm.ID, state.InitiatorID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && initiator.SLOURL == "") {
		return s.deps.LoggedOut(w, r, realm) // it went meanwhile: the user is told here
	} else if err != nil {
		return err
	}
	var second *crewsaml.StatusCode
	if state.Partial {
		second = &crewsaml.StatusCode{Value: statusPartial}
	}
	return s.answerLogout(w, r, realm, initiator, state.RequestID, state.RelayState,
		crewsaml.Status{StatusCode: crewsaml.StatusCode{Value: crewsaml.StatusSuccess, StatusCode: second}})
}

// answerLogout sends sp its signed LogoutResponse, with status, to its
// LogoutRequest inResponseTo.
func (s *Service) answerLogout(w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider,
	inResponseTo, relayState string, status crewsaml.Status) error {
	key, err := s.signingKey(r.Context(), realm)
	if err != nil {
		return err
	}
	resp := &crewsaml.LogoutResponse{ID: randomID(), InResponseTo: inResponseTo, Version: "2.0",
		IssueInstant: s.deps.Now().UTC(), Destination: sp.SLOURL,
		Issuer: &crewsaml.Issuer{Format: formatEntity, Value: s.entityID(realm)}, Status: status}
	return s.sendLogout(w, r, realm, sp, key, "SAMLResponse", resp.Element(), relayState)
}

// sendLogout hands a logout message (el, unsigned; param SAMLRequest or
// SAMLResponse) to sp's sloUrl with sp's binding: by HTTP-Redirect, its
// query signed; by HTTP-POST, with an enveloped signature.
func (s *Service) sendLogout(w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider,
	key *signingKey, param string, el *etree.Element, relayState string) error {
	if sp.SLOBinding == store.SLOBindingRedirect {
		target, err := redirectURL(key, sp.SLOURL, param, el, relayState)
		if err != nil {
			return err
		}
		http.Redirect(w, r, target, http.StatusFound)
		return nil
	}
	if err := signEnveloped(key, el); err != nil {
		return err
	}
	doc := etree.NewDocument()
	doc.SetRoot(el)
	out, err := doc.WriteToBytes()
	if err != nil {
		return err
	}
	return s.post(w, r, realm, sp.SLOURL, param, out, relayState)
}

func (s *Service) saveLogout(r *http.Request, realm *store.Realm, handle string, state *logoutState) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(handle))
	return s.deps.Store.PutSAMLLogout(r.Context(), realm.ID, sum[:], string(b), s.deps.Now().Add(logoutLifetime))
}

var errStaleLogout = errBadMessage("this logout is unknown, expired or already finished")

// logoutResponse takes a service provider's LogoutResponse to the
// LogoutRequest this identity provider sent it, and goes on with the
// logout.
func (s *Service) logoutResponse(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	m, err := readMessage(r, "SAMLResponse")
	if err != nil {
		return err
	}
	if m.root.Tag != "LogoutResponse" || m.root.NamespaceURI() != nsProtocol {
		return errBadMessage("a SAMLResponse here must be a LogoutResponse")
	}
	// The handle, in RelayState, is the only key to the logout: no cookie
	// binds it, since a service provider's LogoutResponse is a cross-site
	// POST, which carries no SameSite=Lax cookie. Whoever holds it can
	// only make the logout the user asked for go on.
	handle := m.relayState
	if handle == "" {
		return errStaleLogout
	}
	sum := sha256.Sum256([]byte(handle))
	raw, err := s.deps.Store.GetSAMLLogout(r.Context(), realm.ID, sum[:], s.deps.Now())
	if errors.Is(err, store.ErrNotFound) {
		return errStaleLogout
	} else if err != nil {
		return err
	}
	var state logoutState
	if err := json.Unmarshal([]byte(raw), &state); err != nil || state.Current == nil {
		return errStaleLogout
	}
	sp, err := s.deps.Store.GetSAMLServiceProvider(r.Context(), realm.ID, state.Current.SPID)
	if errors.Is(err, store.ErrNotFound) {
		return errStaleLogout
	} else if err != nil {
		return err
	}
	if issuerOf(m.root) != sp.EntityID {
		return errBadMessage("the LogoutResponse's Issuer is not the service provider it was awaited from")
	}
	signed, _, err := s.checkSignature(r, realm, sp, m)
	if err != nil {
		return err
	}
	var lr crewsaml.LogoutResponse
	if err := unmarshalElement(signed, &lr); err != nil {
		return errBadMessage("the LogoutResponse cannot be read")
	}
	if lr.InResponseTo != state.Current.RequestID {
		return errBadMessage("the LogoutResponse answers another request")
	}
	if lr.Status.StatusCode.Value != crewsaml.StatusSuccess {
		state.Partial = true
	}
	state.Current = nil
	return s.nextLogout(w, r, realm, &state, handle)
}
