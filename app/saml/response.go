package saml

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/store"
)

const (
	// assertionLifetime bounds an assertion's use: SubjectConfirmationData
	// and Conditions NotOnOrAfter.
	assertionLifetime = 5 * time.Minute
	formatEntity      = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"
	methodBearer      = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
	attrNameBasic     = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
	// The AuthnContextClassRef of a sign-in: a password over TLS, or the
	// REFEDS MFA profile for a two-factor sign-in (the server's acr 2: two
	// kinds of factor, or a passkey that verified its user).
	classPassword = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
	classMFA      = "https://refeds.org/profile/mfa"
)

// randomID is 160 random bits in hex, prefixed so that it is an NCName.
func randomID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return "_" + hex.EncodeToString(b)
}

// respond sends the signed-in user to the service provider: a Response
// with an assertion about them, through the browser (HTTP-POST), once the
// sign-in is written.
func (s *Service) respond(w http.ResponseWriter, r *http.Request, realm *store.Realm, req *request, sess *store.Session,
	user *store.User) error {
	ctx := r.Context()
	format := req.nameIDFormat
	if format == "" {
		format = req.sp.NameIDFormat
	}
	nameID, err := s.nameID(realm, req, sess, user, format)
	if err != nil {
		return err
	}
	now := s.deps.Now().UTC()
	index := randomID()
	// The write waits on a disk flush, the signature and the page on the
	// CPU, so they run at once; the page is held until the write has
	// committed, and dropped if the write refuses the request.
	written := s.startWrite(ctx, realm, req, &store.SAMLSession{SessionIndex: index, RealmID: realm.ID,
		SSOSessionID: sess.ID, SPID: req.sp.ID, NameID: nameID, NameIDFormat: format, CreatedAt: now.UnixMilli()},
		loginEvent(req.sp, user, sess, ""))
	page := holdResponse(w)
	out, err := s.signedResponse(ctx, realm, req, sess, user, nameID, format, index, now)
	if err == nil {
		err = s.post(page, r, realm, req.acsURL, "SAMLResponse", out, req.relayState)
	}
	done := <-written
	if done.err != nil {
		return done.err
	}
	if err != nil {
		return err
	}
	done.committed()
	return page.release(w)
}

// signedResponse is the Response to req with its assertion, signed and
// encrypted as the SP asks, serialized.
func (s *Service) signedResponse(ctx context.Context, realm *store.Realm, req *request, sess *store.Session,
	user *store.User, nameID, format, index string, now time.Time) ([]byte, error) {
	attrs, err := s.attributes(ctx, realm, req.sp, user)
	if err != nil {
		return nil, err
	}
	a := s.assertion(realm, req, sess, nameID, format, index, attrs, now)
	key, err := s.signingKey(ctx, realm)
	if err != nil {
		return nil, err
	}
	assertionEl := a.Element()
	if req.sp.SignAssertions {
		if err := signEnveloped(key, assertionEl); err != nil {
			return nil, err
		}
	}
	if req.sp.EncryptAssertions {
		if assertionEl, err = encryptAssertion(req.sp, assertionEl); err != nil {
			return nil, err
		}
	}
	resp := s.response(realm, req, now, crewsaml.Status{StatusCode: crewsaml.StatusCode{Value: crewsaml.StatusSuccess}})
	return s.finishResponse(key, req.sp, resp, assertionEl)
}

// rank is the strength of a session's sign-in: 2 for two factors, else 1
// (authn_context.go).
func (s *Service) rank(sess *store.Session) int {
	if s.deps.TwoFactors != nil && s.deps.TwoFactors(sess.AMR) {
		return 2
	}
	return 1
}

// assertion is the statement about the user the service provider gets.
func (s *Service) assertion(realm *store.Realm, req *request, sess *store.Session, nameID, format, index string,
	attrs []crewsaml.Attribute, now time.Time) *crewsaml.Assertion {
	until := now.Add(assertionLifetime)
	sessionEnd := time.UnixMilli(sess.ExpiresAt).UTC()
	class := req.context.class(s.rank(sess))
	a := &crewsaml.Assertion{ID: randomID(), IssueInstant: now, Version: "2.0",
		Issuer: crewsaml.Issuer{Format: formatEntity, Value: s.entityID(realm)},
		Subject: &crewsaml.Subject{
			NameID: &crewsaml.NameID{Format: format, NameQualifier: s.entityID(realm), SPNameQualifier: req.sp.EntityID,
				Value: nameID},
			// No Address: saml2int has it left out, and strict providers
			// refuse the host:port the library would write.
			SubjectConfirmations: []crewsaml.SubjectConfirmation{{Method: methodBearer,
				SubjectConfirmationData: &crewsaml.SubjectConfirmationData{InResponseTo: req.requestID,
					NotOnOrAfter: until, Recipient: req.acsURL}}},
		},
		Conditions: &crewsaml.Conditions{NotBefore: now.Add(-clockSkew), NotOnOrAfter: until,
			AudienceRestrictions: []crewsaml.AudienceRestriction{{Audience: crewsaml.Audience{Value: req.sp.EntityID}}}},
		AuthnStatements: []crewsaml.AuthnStatement{{AuthnInstant: time.UnixMilli(sess.AuthTime).UTC(),
			SessionIndex: index, SessionNotOnOrAfter: &sessionEnd,
			AuthnContext: crewsaml.AuthnContext{AuthnContextClassRef: &crewsaml.AuthnContextClassRef{Value: class}}}},
	}
	if len(attrs) > 0 {
		a.AttributeStatements = []crewsaml.AttributeStatement{{Attributes: attrs}}
	}
	return a
}

// response is the Response envelope of an answer to req.
func (s *Service) response(realm *store.Realm, req *request, now time.Time, status crewsaml.Status) *crewsaml.Response {
	return &crewsaml.Response{ID: randomID(), InResponseTo: req.requestID, Version: "2.0", IssueInstant: now,
		Destination: req.acsURL, Issuer: &crewsaml.Issuer{Format: formatEntity, Value: s.entityID(realm)}, Status: status}
}

// finishResponse puts the assertion (if any) in the response, signs the
// response when the SP asks it, and serializes it.
func (s *Service) finishResponse(key *signingKey, sp *store.SAMLServiceProvider, resp *crewsaml.Response,
	assertionEl *etree.Element) ([]byte, error) {
	el := resp.Element()
	if assertionEl != nil {
		el.AddChild(assertionEl)
	}
	// An error response carries no assertion and is always signed, so the
	// SP can trust its status.
	if sp.SignResponses || assertionEl == nil {
		if err := signEnveloped(key, el); err != nil {
			return nil, err
		}
	}
	doc := etree.NewDocument()
	doc.SetRoot(el)
	return doc.WriteToBytes()
}

// encryptAssertion wraps a (signed) assertion in an EncryptedAssertion for
// the SP's encryption key: AES-128-GCM for the content (XML Encryption 1.1:
// the IV, the ciphertext and the tag in one CipherValue), RSA-OAEP
// (rsa-oaep-mgf1p, SHA-1 digest: what every SP stack decrypts) for the key.
// crewjam/saml's own GCM encrypter is not used: it encrypts zeros.
func encryptAssertion(sp *store.SAMLServiceProvider, assertionEl *etree.Element) (*etree.Element, error) {
	cert, err := parseCertificate(sp.EncryptionCertificate)
	if err != nil {
		return nil, fmt.Errorf("encryption certificate of SAML SP %s: %w", sp.ID, err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("encryption certificate of SAML SP %s: a %T key, not RSA", sp.ID, cert.PublicKey)
	}
	doc := etree.NewDocument()
	doc.SetRoot(assertionEl)
	plain, err := doc.WriteToBytes()
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	iv := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(iv)
	sealed := gcm.Seal(iv, iv, plain, nil)
	wrapped, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, key, nil)
	if err != nil {
		return nil, fmt.Errorf("encrypt assertion key: %w", err)
	}

	out := etree.NewElement("saml:EncryptedAssertion")
	out.CreateAttr("xmlns:saml", "urn:oasis:names:tc:SAML:2.0:assertion")
	data := out.CreateElement("xenc:EncryptedData")
	data.CreateAttr("xmlns:xenc", nsXMLEnc)
	data.CreateAttr("Id", randomID())
	data.CreateAttr("Type", nsXMLEnc+"Element")
	data.CreateElement("xenc:EncryptionMethod").CreateAttr("Algorithm", "http://www.w3.org/2009/xmlenc11#aes128-gcm")
	ki := data.CreateElement("ds:KeyInfo")
	ki.CreateAttr("xmlns:ds", nsDSig)
	ek := ki.CreateElement("xenc:EncryptedKey")
	em := ek.CreateElement("xenc:EncryptionMethod")
	em.CreateAttr("Algorithm", nsXMLEnc+"rsa-oaep-mgf1p")
	em.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", nsDSig+"sha1")
	ek.CreateElement("xenc:CipherData").CreateElement("xenc:CipherValue").SetText(base64.StdEncoding.EncodeToString(wrapped))
	data.CreateElement("xenc:CipherData").CreateElement("xenc:CipherValue").SetText(base64.StdEncoding.EncodeToString(sealed))
	return out, nil
}

const nsXMLEnc = "http://www.w3.org/2001/04/xmlenc#"

// post hands a message to the SP through the browser: the page that
// POSTs it, which submits itself and has a button for browsers without
// script.
func (s *Service) post(w http.ResponseWriter, r *http.Request, realm *store.Realm, target, param string, msg []byte,
	relayState string) error {
	params := url.Values{param: {base64.StdEncoding.EncodeToString(msg)}}
	if relayState != "" {
		params.Set("RelayState", relayState)
	}
	return s.deps.PostForm(w, r, realm, target, params)
}

// nameID is the user's NameID in format for req's SP: the email address,
// the username (unspecified), an opaque value stable per user and SP
// (persistent), or one stable per SSO session and SP (transient).
func (s *Service) nameID(realm *store.Realm, req *request, sess *store.Session, user *store.User,
	format string) (string, error) {
	switch format {
	case NameIDEmail:
		if user.Email == "" {
			return "", &statusError{req: req, top: crewsaml.StatusResponder, second: crewsaml.StatusInvalidNameIDPolicy,
				message: "the user has no email address"}
		}
		return user.Email, nil
	case NameIDUnspecified:
		return user.Username, nil
	case NameIDPersistent:
		return s.opaqueID(realm.ID, req.sp.EntityID, user.ID), nil
	case NameIDTransient:
		// Derived rather than looked up among the session's earlier
		// sign-ins: that read grew with each of them. Keyed by the session,
		// it is new in the next one and links nothing across sessions.
		return s.opaqueID("transient", realm.ID, req.sp.EntityID, sess.ID), nil
	}
	return "", errors.New("unknown NameID format " + format)
}

// opaqueID is the HMAC-SHA256 of parts under the NameID key, base64url.
func (s *Service) opaqueID(parts ...string) string {
	mac := hmac.New(sha256.New, s.deps.NameIDKey)
	mac.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// attributes are the SP's attribute statements for user, each attribute
// with its values (one per role or group), left out when it has none.
func (s *Service) attributes(ctx context.Context, realm *store.Realm, sp *store.SAMLServiceProvider, user *store.User) ([]crewsaml.Attribute, error) {
	if len(sp.AttributeStatements) == 0 {
		return nil, nil
	}
	var (
		custom map[string]string
		roles  []*store.Role
		groups []*store.Group
		err    error
	)
	names := make([]string, 0, len(sp.AttributeStatements))
	for n := range sp.AttributeStatements {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []crewsaml.Attribute
	for _, name := range names {
		src := sp.AttributeStatements[name]
		var values []string
		switch {
		case src == SourceUsername:
			values = []string{user.Username}
		case src == SourceEmail:
			values = []string{user.Email}
		case src == SourceFirstName:
			values = []string{user.FirstName}
		case src == SourceLastName:
			values = []string{user.LastName}
		case src == SourceFullName:
			values = []string{strings.TrimSpace(user.FirstName + " " + user.LastName)}
		case src == SourceID:
			values = []string{user.ID}
		case src == SourceEmailVerified:
			values = []string{fmt.Sprint(user.EmailVerified)}
		case strings.HasPrefix(src, prefixAttribute):
			if custom == nil {
				if custom, err = s.deps.Store.UserAttributes(ctx, user.ID); err != nil {
					return nil, err
				}
			}
			values = []string{custom[strings.TrimPrefix(src, prefixAttribute)]}
		case src == SourceRealmRoles || strings.HasPrefix(src, prefixClientRoles):
			if roles == nil {
				if roles, err = s.deps.Store.EffectiveRoles(ctx, user.ID); err != nil {
					return nil, err
				}
			}
			clientID := ""
			if c, ok := strings.CutPrefix(src, prefixClientRoles); ok {
				client, err := s.deps.Store.GetClientByClientID(ctx, realm.ID, c)
				if errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return nil, err
				}
				clientID = client.ID
			}
			for _, role := range roles {
				if role.ClientID == clientID {
					values = append(values, role.Name)
				}
			}
		case src == SourceGroups:
			if groups == nil {
				if groups, err = s.deps.Store.ListUserGroups(ctx, user.ID); err != nil {
					return nil, err
				}
			}
			for _, g := range groups {
				values = append(values, g.Name)
			}
		}
		values = slices.DeleteFunc(values, func(v string) bool { return v == "" })
		if len(values) == 0 {
			continue
		}
		slices.Sort(values)
		attr := crewsaml.Attribute{Name: name, NameFormat: attrNameBasic}
		for _, v := range values {
			attr.Values = append(attr.Values, crewsaml.AttributeValue{Type: "xs:string", Value: v})
		}
		out = append(out, attr)
	}
	return out, nil
}
