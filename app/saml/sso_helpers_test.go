package saml_test

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	dsig "github.com/russellhaering/goxmldsig"
	"golang.org/x/net/html"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/identity"
)

// idp is the server under test, listening on a loopback port so that a
// real service provider and a browser can reach it.
type idp struct {
	*apptest.Server
	base  string
	alice string // the user's ID

	// spPorts are the ports its service providers have listened on. An SP's
	// entity ID is its address, and the realm refuses a second SP with the
	// same one: a port that an earlier subtest's SP closed is not taken again.
	mu      sync.Mutex
	spPorts map[string]bool
}

// listenSP listens on a loopback port no earlier SP of e had.
func (e *idp) listenSP(t testing.TB) net.Listener {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var taken []net.Listener // held open until a new port comes, so that none comes back
	defer func() {
		for _, ln := range taken {
			ln.Close()
		}
	}()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		if !e.spPorts[port] {
			e.spPorts[port] = true
			return ln
		}
		taken = append(taken, ln)
	}
}

const (
	testUser     = "alice"
	testPassword = "correct horse battery"
)

func newIdP(t testing.TB, opts ...func(*app.Config)) *idp {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := realapp.New(t, append([]func(*app.Config){func(c *app.Config) { c.BaseURL = base }}, opts...)...)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.Handler}}
	srv.Start()
	t.Cleanup(srv.Close)
	s.CreateRealm("acme")
	alice := s.CreateUser("acme", map[string]any{"username": testUser, "email": "alice@example.test", "firstName": "Alice",
		"lastName": "Liddell", "password": testPassword, "emailVerified": true})
	return &idp{Server: s, base: base, alice: alice["id"].(string), spPorts: map[string]bool{}}
}

func (e *idp) metadata(t testing.TB) *crewsaml.EntityDescriptor {
	t.Helper()
	r := e.Request(http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var ed crewsaml.EntityDescriptor
	if err := xml.Unmarshal(r.Body, &ed); err != nil {
		t.Fatal(err)
	}
	return &ed
}

// sp is crewjam/saml's samlsp as a real service provider, with an
// application at /app that shows who signed in.
type sp struct {
	mw   *samlsp.Middleware
	url  string
	id   string // its ID at the identity provider
	keys *testKeyPair

	// postSLO: its single logout service takes HTTP-POST; one that does
	// not answers a POST with a 500, as Shibboleth's SLO/Redirect does.
	postSLO bool

	mu             sync.Mutex
	logoutRequests []crewsaml.LogoutRequest // the identity provider's, received
}

type spOptions struct {
	binding      string // of the AuthnRequest; "" for HTTP-Redirect
	sign         bool   // sign AuthnRequests (and register the certificate)
	nameIDFormat crewsaml.NameIDFormat
	forceAuthn   bool
	register     map[string]any // fields of the registration beyond the metadata
	// sloBindings its metadata lists its single logout service with;
	// HTTP-POST and HTTP-Redirect when nil.
	sloBindings []string
}

func newSP(t testing.TB, e *idp, o spOptions) *sp {
	t.Helper()
	ln := e.listenSP(t)
	root, _ := url.Parse("http://" + ln.Addr().String())
	keys := newTestKeyPair(t, "sp")
	sloBindings := o.sloBindings
	if sloBindings == nil {
		sloBindings = []string{crewsaml.HTTPPostBinding, crewsaml.HTTPRedirectBinding}
	}
	mw, err := samlsp.New(samlsp.Options{URL: *root, Key: keys.key, Certificate: keys.cert, IDPMetadata: e.metadata(t),
		SignRequest: o.sign, ForceAuthn: o.forceAuthn, LogoutBindings: sloBindings,
		// Cookies do not tell ports apart: each SP on 127.0.0.1 needs a name of its own.
		CookieName: "sp_" + root.Port()})
	if err != nil {
		t.Fatal(err)
	}
	mw.Binding = o.binding
	if o.sign {
		mw.ServiceProvider.SignatureMethod = dsig.RSASHA256SignatureMethod // its default is SHA-1, which is refused
	}
	if o.nameIDFormat != "" {
		mw.ServiceProvider.AuthnNameIDFormat = o.nameIDFormat
	}
	out := &sp{mw: mw, url: root.String(), keys: keys, postSLO: slices.Contains(sloBindings, crewsaml.HTTPPostBinding)}
	mux := http.NewServeMux()
	mux.Handle("/saml/", mw)
	mux.HandleFunc("/saml/slo", out.slo)
	mux.HandleFunc("/logout", out.logout)
	mux.Handle("/app", mw.RequireAccount(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := samlsp.SessionFromContext(r.Context())
		claims, _ := s.(samlsp.JWTSessionClaims)
		_ = json.NewEncoder(w).Encode(map[string]any{"nameID": claims.Subject, "attributes": claims.Attributes})
	})))
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	srv.Start()
	t.Cleanup(srv.Close)

	md, err := xml.Marshal(mw.ServiceProvider.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"metadata": string(md), "name": "samlsp"}
	for k, v := range o.register {
		body[k] = v
	}
	r := e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", body)
	apptest.MustStatus(t, r, http.StatusCreated)
	out.id = r.Object(t)["id"].(string)
	return out
}

// logout starts the SP's single logout: its session goes, and the browser
// goes to the identity provider with a LogoutRequest naming the session's
// NameID and SessionIndex (signed when the SP signs its requests).
func (s *sp) logout(w http.ResponseWriter, r *http.Request) {
	sess, err := s.mw.Session.GetSession(r)
	if err != nil {
		http.Error(w, "not signed in", http.StatusUnauthorized)
		return
	}
	claims := sess.(samlsp.JWTSessionClaims)
	_ = s.mw.Session.DeleteSession(w, r)
	sp := &s.mw.ServiceProvider
	method := sp.SignatureMethod
	sp.SignatureMethod = ""
	req, err := sp.MakeLogoutRequest(sp.GetSLOBindingLocation(crewsaml.HTTPRedirectBinding), claims.Subject)
	sp.SignatureMethod = method
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if index := claims.Attributes.Get("SessionIndex"); index != "" {
		req.SessionIndex = &crewsaml.SessionIndex{Value: index}
	}
	if method != "" {
		if err := sp.SignLogoutRequest(req); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	http.Redirect(w, r, req.Redirect("sp-state").String(), http.StatusFound)
}

// slo is the SP's single logout service, over HTTP-POST and HTTP-Redirect:
// the identity provider's LogoutResponse ends the SP's logout; its
// LogoutRequest (another SP's logout) is checked against the identity
// provider's certificate, recorded, ends the SP's session, and is
// answered.
func (s *sp) slo(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && !s.postSLO {
		http.Error(w, "this endpoint takes HTTP-Redirect messages only", http.StatusInternalServerError)
		return
	}
	_ = r.ParseForm()
	param := "SAMLRequest"
	if r.Form.Has("SAMLResponse") {
		param = "SAMLResponse"
	}
	el, err := s.idpMessage(r, param)
	if err != nil {
		http.Error(w, "bad "+param+": "+err.Error(), http.StatusBadRequest)
		return
	}
	d := etree.NewDocument()
	d.SetRoot(el)
	b, _ := d.WriteToBytes()
	if param == "SAMLResponse" {
		var resp crewsaml.LogoutResponse
		if err := xml.Unmarshal(b, &resp); err != nil || resp.Status.StatusCode.Value != crewsaml.StatusSuccess {
			http.Error(w, fmt.Sprintf("bad LogoutResponse: %v %s", err, b), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "logged out; RelayState="+r.Form.Get("RelayState"))
		return
	}
	var lr crewsaml.LogoutRequest
	if err := xml.Unmarshal(b, &lr); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.logoutRequests = append(s.logoutRequests, lr)
	s.mu.Unlock()
	_ = s.mw.Session.DeleteSession(w, r)
	u, err := s.mw.ServiceProvider.MakeRedirectLogoutResponse(lr.ID, r.Form.Get("RelayState"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// idpMessage is the identity provider's message param of r, its signature
// checked: in the query by HTTP-Redirect (deflated, the signature over the
// query), in the form by HTTP-POST (the signature enveloped).
func (s *sp) idpMessage(r *http.Request, param string) (*etree.Element, error) {
	var certs []*x509.Certificate
	for _, kd := range s.mw.ServiceProvider.IDPMetadata.IDPSSODescriptors[0].KeyDescriptors {
		der, _ := base64.StdEncoding.DecodeString(kd.KeyInfo.X509Data.X509Certificates[0].Data)
		if c, err := x509.ParseCertificate(der); err == nil {
			certs = append(certs, c)
		}
	}
	raw, err := base64.StdEncoding.DecodeString(r.Form.Get(param))
	if err != nil {
		return nil, err
	}
	if r.Method == http.MethodGet {
		if raw, err = io.ReadAll(flate.NewReader(bytes.NewReader(raw))); err != nil {
			return nil, err
		}
		q := r.URL.Query()
		if q.Get("SigAlg") != dsig.RSASHA256SignatureMethod {
			return nil, fmt.Errorf("SigAlg %q", q.Get("SigAlg"))
		}
		sig, err := base64.StdEncoding.DecodeString(q.Get("Signature"))
		if err != nil {
			return nil, err
		}
		// The octets signed, as they came: param, RelayState, SigAlg.
		var signed []string
		for _, name := range []string{param, "RelayState", "SigAlg"} {
			for part := range strings.SplitSeq(r.URL.RawQuery, "&") {
				if strings.HasPrefix(part, name+"=") {
					signed = append(signed, part)
				}
			}
		}
		sum := sha256.Sum256([]byte(strings.Join(signed, "&")))
		ok := false
		for _, c := range certs {
			ok = ok || rsa.VerifyPKCS1v15(c.PublicKey.(*rsa.PublicKey), crypto.SHA256, sum[:], sig) == nil
		}
		if !ok {
			return nil, errors.New("the query signature does not verify")
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(raw); err != nil {
			return nil, err
		}
		if doc.Root().FindElement("./Signature") != nil {
			return nil, errors.New("a Redirect message keeps its XML signature")
		}
		return doc.Root(), nil
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		return nil, err
	}
	vc := dsig.NewDefaultValidationContext(&dsig.MemoryX509CertificateStore{Roots: certs})
	return vc.Validate(doc.Root())
}

// browser is an HTTP client with a cookie jar that does what a person's
// browser does on the pages it meets: it submits the SAML POST forms (as
// their script would), and signs in on the login page.
type browser struct {
	t      testing.TB
	client *http.Client
	user   string // who signs in; testUser when ""
	// totpSecret answers the sign-in's second-factor step, when set.
	totpSecret string
	// stopAtResponse: a SAML Response is recorded and not delivered.
	stopAtResponse bool
	// posted are the SAML messages the browser carried by POST forms, as
	// their XML, to the form's action.
	posted []postedMessage
}

type postedMessage struct {
	action string
	xml    []byte
}

func newBrowser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, client: &http.Client{Jar: jar}}
}

// page is an answer as the browser saw it.
type page struct {
	status int
	url    *url.URL
	body   string
}

func (b *browser) get(u string) *page {
	b.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.read(resp)
}

func (b *browser) read(resp *http.Response) *page {
	b.t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &page{status: resp.StatusCode, url: resp.Request.URL, body: string(body)}
}

func (b *browser) submit(p *page, f *form) *page {
	b.t.Helper()
	action, err := p.url.Parse(f.action)
	if err != nil {
		b.t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, action.String(), strings.NewReader(f.values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.read(resp)
}

// visit opens u and goes on through the pages: SAML POST forms are
// submitted, the login page is filled with password (and the TOTP page
// with a code of totpSecret, when set: the next period's, since a code
// is taken once).
func (b *browser) visit(u, password string) *page {
	b.t.Helper()
	return b.walk(b.get(u), password)
}

// walk goes on from p as visit does. The pages of an authentication flow
// (/signin/) are filled in as the sign-in page is.
func (b *browser) walk(p *page, password string) *page {
	b.t.Helper()
	for range 10 {
		f := p.postForm()
		switch {
		case f == nil:
			return p
		case f.values.Has("SAMLResponse") || f.values.Has("SAMLRequest"):
			msg := f.values.Get("SAMLResponse") + f.values.Get("SAMLRequest")
			if raw, err := base64.StdEncoding.DecodeString(msg); err == nil {
				b.posted = append(b.posted, postedMessage{action: f.action, xml: raw})
			}
			if b.stopAtResponse && f.values.Has("SAMLResponse") {
				return p
			}
		case (f.values.Has("authRequestID") || strings.Contains(p.url.Path, "/signin/")) && strings.Contains(p.body, `name="password"`):
			if password == "" {
				return p
			}
			user := b.user
			if user == "" {
				user = testUser
			}
			f.values.Set("username", user)
			f.values.Set("password", password)
		case (f.values.Has("authRequestID") || strings.Contains(p.url.Path, "/signin/")) && f.values.Has("code") && b.totpSecret != "":
			f.values.Set("code", totpCode(b.t, b.totpSecret, time.Now().Add(30*time.Second)))
		default:
			return p
		}
		p = b.submit(p, f)
	}
	b.t.Fatalf("the browser went round: %s %.300s", p.url, p.body)
	return nil
}

// form is a page's first POST form and the values it would send.
type form struct {
	action string
	values url.Values
}

func (p *page) postForm() *form {
	doc, err := html.Parse(strings.NewReader(p.body))
	if err != nil {
		return nil
	}
	var found *form
	var walk func(n *html.Node, in *form)
	walk = func(n *html.Node, in *form) {
		if n.Type == html.ElementNode && n.Data == "form" && found == nil && strings.EqualFold(attr(n, "method"), "post") {
			found = &form{action: attr(n, "action"), values: url.Values{}}
			in = found
		}
		if in != nil && n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") != "" {
			typ := attr(n, "type")
			if typ != "checkbox" || hasAttr(n, "checked") {
				in.values.Set(attr(n, "name"), attr(n, "value"))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, nil)
	return found
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// signedIn is what the SP's application shows: who signed in, with which
// attributes.
type signedIn struct {
	NameID     string              `json:"nameID"`
	Attributes map[string][]string `json:"attributes"`
}

func mustSignedIn(t testing.TB, p *page) signedIn {
	t.Helper()
	var out signedIn
	if p.status != http.StatusOK || json.Unmarshal([]byte(p.body), &out) != nil || out.NameID == "" {
		t.Fatalf("not signed in at the SP: %d %s %.500s", p.status, p.url, p.body)
	}
	return out
}

// totpCode is the authenticator app's code of secret at t.
func totpCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: identity.TOTPPeriod, Digits: otp.DigitsSix,
		Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}
