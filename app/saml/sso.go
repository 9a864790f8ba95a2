package saml

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

const (
	// maxIssueAge is how old an AuthnRequest or LogoutRequest may be, and
	// clockSkew how far ahead of this server's clock.
	maxIssueAge = 5 * time.Minute
	clockSkew   = time.Minute
	// waitLifetime is how long a request waits for its browser to sign in.
	waitLifetime = 30 * time.Minute
	// waitCookiePrefix names the cookie that binds a waiting request to its
	// browser.
	waitCookiePrefix = "idenplane_saml_"
	nsProtocol       = "urn:oasis:names:tc:SAML:2.0:protocol"
)

// SSO serves GET and POST /realms/{realm}/protocol/saml: an AuthnRequest
// or a LogoutRequest (SAMLRequest), a LogoutResponse (SAMLResponse), or
// the browser's return from signing in (state).
func (s *Service) SSO(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	realm, err := s.deps.Realm(r)
	if err != nil {
		s.pageError(w, r, nil, err)
		return
	}
	if err := s.sso(w, r, realm); err != nil {
		s.fail(w, r, realm, err)
	}
}

func (s *Service) sso(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	has := func(k string) bool {
		if r.Method == http.MethodPost {
			return r.PostFormValue(k) != "" || r.PostForm.Has(k)
		}
		return r.URL.Query().Has(k)
	}
	switch {
	case has("SAMLRequest"):
		m, err := readMessage(r, "SAMLRequest")
		if err != nil {
			return err
		}
		switch {
		case m.root.Tag == "AuthnRequest" && m.root.NamespaceURI() == nsProtocol:
			return s.authnRequest(w, r, realm, m)
		case m.root.Tag == "LogoutRequest" && m.root.NamespaceURI() == nsProtocol:
			return s.logoutRequest(w, r, realm, m)
		}
		return errBadMessage("a SAMLRequest must be an AuthnRequest or a LogoutRequest")
	case has("SAMLResponse"):
		return s.logoutResponse(w, r, realm)
	case r.Method == http.MethodGet && r.URL.Query().Has("state"):
		return s.resume(w, r, realm)
	}
	return errBadMessage("no SAMLRequest")
}

// request is a checked AuthnRequest, or an unsolicited response's stand-in
// (RequestID ""), and where and how it is answered.
type request struct {
	sp           *store.SAMLServiceProvider
	requestID    string
	acsURL       string
	relayState   string
	nameIDFormat string // asked for; '' for the SP's own
	forceAuthn   bool
	isPassive    bool
	context      *authnContext // RequestedAuthnContext; nil for none
	// seenUntil: the request's ID is still to be recorded (until then) in
	// the replay cache, in the transaction of the answer's own write, so
	// that answering costs one commit.
	seenUntil time.Time
}

// recordRequest records req's ID in the replay cache, within tx; an ID
// seen before refuses the request.
func (s *Service) recordRequest(ctx context.Context, tx *store.Store, realm *store.Realm, req *request) error {
	if req.seenUntil.IsZero() {
		return nil
	}
	err := tx.RecordSAMLRequestID(ctx, realm.ID, req.sp.EntityID, req.requestID, req.seenUntil)
	if errors.Is(err, store.ErrConflict) {
		return errReplay(req.requestID)
	}
	return err
}

func errReplay(id string) error { return errBadMessage("request %s was received before", id) }

// authnRequest checks an AuthnRequest and answers it: at once for a
// browser signed in, else after the hosted sign-in.
func (s *Service) authnRequest(w http.ResponseWriter, r *http.Request, realm *store.Realm, m *message) error {
	// The browser's session is read while the request is checked: both
	// wait on the database, and the answer's write waits for both.
	found := make(chan browserSession, 1)
	go func() {
		var b browserSession
		b.sess, b.user, b.err = s.deps.Session(r, realm)
		found <- b
	}()
	req, err := s.checkAuthnRequest(r, realm, m)
	b := <-found
	if err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	sess, user := b.sess, b.user
	// A session below the context asked for is stepped up through the
	// hosted sign-in, which asks a user with a second factor for it.
	enough := sess != nil && req.context.class(s.rank(sess)) != ""
	switch {
	case req.isPassive && (!enough || req.forceAuthn):
		if err := s.recordRequest(r.Context(), s.deps.Store, realm, req); err != nil {
			return err
		}
		return &statusError{req: req, top: crewsaml.StatusResponder, second: crewsaml.StatusNoPassive,
			message: "the user is not signed in as the request asks, and the request does not let the identity provider ask"}
	case enough && !req.forceAuthn:
		return s.respond(w, r, realm, req, sess, user)
	}
	return s.waitForSignIn(w, r, realm, req)
}

// browserSession is the outcome of Deps.Session.
type browserSession struct {
	sess *store.Session
	user *store.User
	err  error
}

// checkAuthnRequest applies every check of an AuthnRequest that decides
// whether the service provider may be answered at all; what fails here is
// shown on an error page, never sent to an address the request named.
func (s *Service) checkAuthnRequest(r *http.Request, realm *store.Realm, m *message) (*request, error) {
	issuer := issuerOf(m.root)
	if issuer == "" {
		return nil, errBadMessage("the AuthnRequest has no Issuer")
	}
	sp, err := s.spByEntityID(r.Context(), realm.ID, issuer)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnknownSP
	} else if err != nil {
		return nil, err
	}
	if !sp.Enabled {
		return nil, errSPDisabled
	}
	signed, verified, err := s.checkSignature(r, realm, sp, m)
	if err != nil {
		return nil, err
	}
	var ar crewsaml.AuthnRequest
	if err := unmarshalElement(signed, &ar); err != nil {
		return nil, errBadMessage("the AuthnRequest cannot be read")
	}
	if err := s.checkCommon(ar.ID, ar.Version, ar.IssueInstant, ar.Destination, verified, realm); err != nil {
		return nil, err
	}
	if ar.AssertionConsumerServiceURL != "" && ar.AssertionConsumerServiceURL != sp.ACSURL {
		return nil, errBadMessage("AssertionConsumerServiceURL is not the service provider's registered ACS URL")
	}
	if ar.ProtocolBinding != "" && ar.ProtocolBinding != bindingPOST {
		return nil, errBadMessage("ProtocolBinding must be HTTP-POST, the binding responses are sent with")
	}
	req := &request{sp: sp, requestID: ar.ID, acsURL: sp.ACSURL, relayState: m.relayState,
		forceAuthn: ar.ForceAuthn != nil && *ar.ForceAuthn, isPassive: ar.IsPassive != nil && *ar.IsPassive,
		seenUntil: ar.IssueInstant.Add(maxIssueAge + clockSkew)}
	rac, err := requestedContext(signed)
	if errors.Is(err, errNoAuthnContext) {
		if err := s.recordRequest(r.Context(), s.deps.Store, realm, req); err != nil {
			return nil, err
		}
		return nil, &statusError{req: req, top: crewsaml.StatusRequester, second: crewsaml.StatusNoAuthnContext,
			message: err.Error()}
	} else if err != nil {
		return nil, err
	}
	req.context = rac
	if p := ar.NameIDPolicy; p != nil && p.Format != nil && *p.Format != NameIDUnspecified && *p.Format != "" {
		req.nameIDFormat = *p.Format
		if !supportedFormat(*p.Format) {
			if err := s.recordRequest(r.Context(), s.deps.Store, realm, req); err != nil {
				return nil, err
			}
			return nil, &statusError{req: req, top: crewsaml.StatusRequester, second: crewsaml.StatusInvalidNameIDPolicy,
				message: "NameID format " + *p.Format + " is not issued"}
		}
	}
	return req, nil
}

// checkSignature verifies a message of sp, and returns the element to
// read (the one the signature covers) and whether it was signed. A
// signature that comes is verified when sp has a certificate; one must
// come when sp's requests must be signed (requestsSigned), or the realm
// wants every request signed.
func (s *Service) checkSignature(r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, m *message) (*etree.Element, bool, error) {
	settings, err := s.settings(r.Context(), realm)
	if err != nil {
		return nil, false, err
	}
	realmWants := settings.WantAuthnRequestsSigned && (m.root.Tag == "AuthnRequest" || m.root.Tag == "LogoutRequest")
	if sp.Certificate == "" {
		if realmWants {
			return nil, false, errBadMessage("the realm wants signed requests and the service provider has no certificate")
		}
		return m.root, false, nil
	}
	cert, err := parseCertificate(sp.Certificate)
	if err != nil {
		return nil, false, err // validated when stored
	}
	switch {
	case m.binding == bindingRedirect && m.signature != nil:
		if err := verifyRedirect(m, cert); err != nil {
			return nil, false, err
		}
		return m.root, true, nil
	case len(signaturesIn(m.root, nil)) > 0:
		// POST, or a Redirect message that kept its XML signature (as
		// crewjam/saml's service provider sends its LogoutRequests): the
		// enveloped signature is as good, over the same element.
		signed, err := verifyEnveloped(m.root, cert, s.deps.Now())
		return signed, err == nil, err
	case sp.RequestsSigned || realmWants:
		return nil, false, errNoSignature
	}
	return m.root, false, nil
}

// checkCommon checks what AuthnRequests and LogoutRequests share: an ID,
// version 2.0, an IssueInstant neither stale nor ahead, and a Destination
// that is this endpoint (required on a signed message, saml-bindings
// §3.4.5.2 and §3.5.5.2).
func (s *Service) checkCommon(id, version string, issued time.Time, dest string, signed bool, realm *store.Realm) error {
	if id == "" || len(id) > 256 {
		return errBadMessage("the request's ID is missing or longer than 256 characters")
	}
	if version != "2.0" {
		return errBadMessage("Version must be 2.0")
	}
	now := s.deps.Now()
	if issued.IsZero() || now.Sub(issued) > maxIssueAge || issued.Sub(now) > clockSkew {
		return errBadMessage("IssueInstant %s is not within %s of now", issued.UTC().Format(time.RFC3339), maxIssueAge)
	}
	if dest == "" && signed {
		return errBadMessage("a signed request must name its Destination")
	}
	if dest != "" && dest != s.ssoURL(realm) {
		return errBadMessage("Destination %q is not this endpoint", dest)
	}
	return nil
}

func supportedFormat(f string) bool {
	for _, g := range nameIDFormats {
		if f == g {
			return true
		}
	}
	return false
}

// issuerOf is the text of the root's saml:Issuer child.
func issuerOf(root *etree.Element) string {
	for _, c := range root.ChildElements() {
		if c.Tag == "Issuer" && c.NamespaceURI() == "urn:oasis:names:tc:SAML:2.0:assertion" {
			return strings.TrimSpace(c.Text())
		}
	}
	return ""
}

// unmarshalElement decodes el (and only el) into v.
func unmarshalElement(el *etree.Element, v any) error {
	doc := etree.NewDocument()
	doc.SetRoot(el.Copy())
	b, err := doc.WriteToBytes()
	if err != nil {
		return err
	}
	return xml.Unmarshal(b, v)
}

var (
	errUnknownSP  = errBadMessage("the request's Issuer is not a service provider of this realm")
	errSPDisabled = errBadMessage("the service provider is disabled")
	errStaleWait  = apperr.New(http.StatusBadRequest, apperr.CodeInvalidRequest,
		"this sign-in is unknown, expired or already answered: go back to the application and start again")
)

// waitForSignIn keeps the request, binds it to the browser with a cookie,
// and sends the browser to the hosted sign-in, which returns it to resume.
func (s *Service) waitForSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, req *request) error {
	handle := randomID()
	now := s.deps.Now()
	sum := sha256.Sum256([]byte(handle))
	err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := s.recordRequest(r.Context(), tx, realm, req); err != nil {
			return err
		}
		return tx.CreateSAMLAuthRequest(r.Context(), &store.SAMLAuthRequest{IDHash: sum[:], RealmID: realm.ID,
			SPID: req.sp.ID, RequestID: req.requestID, ACSURL: req.acsURL, RelayState: req.relayState,
			NameIDFormat: req.nameIDFormat, ForceAuthn: req.forceAuthn, AuthnContext: req.context.encode(),
			CreatedAt: now.UnixMilli(),
			ExpiresAt: now.Add(waitLifetime).UnixMilli()})
	})
	if err != nil {
		return err
	}
	http.SetCookie(w, s.waitCookie(realm, handle, int(waitLifetime.Seconds())))
	return s.deps.SignIn(w, r, realm, req.sp, waitKey(handle), req.forceAuthn)
}

// waitKey names a waiting request's cookie: the start of its handle's
// hash, so that sign-ins of several tabs do not clash. It is what the
// sign-in carries back (state): the handle itself stays in the cookie.
func waitKey(handle string) string {
	sum := sha256.Sum256([]byte(handle))
	return hex.EncodeToString(sum[:8])
}

// waitCookie binds a waiting request to the browser that sent it.
func (s *Service) waitCookie(realm *store.Realm, handle string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: waitCookiePrefix + waitKey(handle), Value: handle,
		Path: "/realms/" + realm.Name + "/protocol/saml", MaxAge: maxAge, HttpOnly: true,
		Secure: strings.HasPrefix(s.deps.BaseURL, "https://"), SameSite: http.SameSiteLaxMode}
}

// resume answers a request once its browser is back from signing in.
func (s *Service) resume(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	key := r.URL.Query().Get("state")
	if len(key) != 16 || strings.Trim(key, "0123456789abcdef") != "" {
		return errStaleWait
	}
	c, err := r.Cookie(waitCookiePrefix + key)
	if err != nil || subtle.ConstantTimeCompare([]byte(waitKey(c.Value)), []byte(key)) != 1 {
		return errStaleWait
	}
	handle := c.Value
	http.SetCookie(w, s.waitCookie(realm, handle, -1))
	sum := sha256.Sum256([]byte(handle))
	ar, err := s.deps.Store.TakeSAMLAuthRequest(r.Context(), realm.ID, sum[:], s.deps.Now())
	if errors.Is(err, store.ErrNotFound) {
		return errStaleWait
	} else if err != nil {
		return err
	}
	sp, err := s.deps.Store.GetSAMLServiceProvider(r.Context(), realm.ID, ar.SPID)
	if errors.Is(err, store.ErrNotFound) {
		return errStaleWait
	} else if err != nil {
		return err
	}
	if !sp.Enabled || sp.ACSURL != ar.ACSURL || (ar.RequestID == "" && !sp.IDPInitiated) {
		return errStaleWait // changed while the user signed in
	}
	rac, err := decodeContext(ar.AuthnContext)
	if err != nil {
		return err
	}
	req := &request{sp: sp, requestID: ar.RequestID, acsURL: ar.ACSURL, relayState: ar.RelayState,
		nameIDFormat: ar.NameIDFormat, forceAuthn: ar.ForceAuthn, context: rac}
	sess, user, err := s.deps.Session(r, realm)
	if err != nil {
		return err
	}
	if sess == nil || (ar.ForceAuthn && sess.AuthTime < ar.CreatedAt) {
		return &statusError{req: req, top: crewsaml.StatusResponder, second: crewsaml.StatusAuthnFailed,
			message: "the user did not sign in"}
	}
	if req.context.class(s.rank(sess)) == "" { // no second factor to step up with
		return noAuthnContext(req)
	}
	return s.respond(w, r, realm, req, sess, user)
}

// IDPInitiated serves GET /realms/{realm}/protocol/saml/clients/{id}: an
// unsolicited Response to the SP of that ID, when the SP allows it
// (idpInitiatedSso), after the hosted sign-in if the browser has no SSO
// session. RelayState, at most 80 bytes, goes along (many SPs read it as
// the page to land on).
func (s *Service) IDPInitiated(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	realm, err := s.deps.Realm(r)
	if err != nil {
		s.pageError(w, r, nil, err)
		return
	}
	if err := s.idpInitiated(w, r, realm); err != nil {
		s.fail(w, r, realm, err)
	}
}

var errNoIDPInitiated = apperr.NotFound("SAML service provider with IdP-initiated sign-in")

func (s *Service) idpInitiated(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	id := mux.Vars(r)["id"]
	if uuid.Validate(id) != nil {
		return errNoIDPInitiated
	}
	sp, err := s.deps.Store.GetSAMLServiceProvider(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return errNoIDPInitiated
	} else if err != nil {
		return err
	}
	if !sp.Enabled || !sp.IDPInitiated {
		return errNoIDPInitiated
	}
	q := r.URL.Query()
	if len(q["RelayState"]) > 1 || len(q.Get("RelayState")) > maxRelayState {
		return errBadMessage("RelayState must be given at most once, of at most %d bytes", maxRelayState)
	}
	req := &request{sp: sp, acsURL: sp.ACSURL, relayState: q.Get("RelayState")}
	sess, user, err := s.deps.Session(r, realm)
	if err != nil {
		return err
	}
	if sess != nil {
		return s.respond(w, r, realm, req, sess, user)
	}
	return s.waitForSignIn(w, r, realm, req)
}
