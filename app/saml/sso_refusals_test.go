package saml_test

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/saml"
)

// authnRequest is an AuthnRequest of the SP to the identity provider, as
// samlsp makes it, unsigned.
func (s *sp) authnRequest(t testing.TB) *crewsaml.AuthnRequest {
	t.Helper()
	method := s.mw.ServiceProvider.SignatureMethod
	s.mw.ServiceProvider.SignatureMethod = ""
	defer func() { s.mw.ServiceProvider.SignatureMethod = method }()
	req, err := s.mw.ServiceProvider.MakeAuthenticationRequest(
		s.mw.ServiceProvider.GetSSOBindingLocation(crewsaml.HTTPRedirectBinding), crewsaml.HTTPRedirectBinding,
		crewsaml.HTTPPostBinding)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// redirect is the identity provider's path and query that carry req over
// HTTP-Redirect, signed with sigAlg when it is not "".
func (s *sp) redirect(t testing.TB, req *crewsaml.AuthnRequest, relayState, sigAlg string) string {
	t.Helper()
	method := s.mw.ServiceProvider.SignatureMethod
	s.mw.ServiceProvider.SignatureMethod = sigAlg
	defer func() { s.mw.ServiceProvider.SignatureMethod = method }()
	u, err := req.Redirect(relayState, &s.mw.ServiceProvider)
	if err != nil {
		t.Fatal(err)
	}
	return ssoPath + "?" + u.RawQuery // where the request goes, whatever its Destination says
}

// postElement is req as an element, with an enveloped signature when sign.
func (s *sp) postElement(t *testing.T, req *crewsaml.AuthnRequest, sign bool) *etree.Element {
	t.Helper()
	if sign {
		method := s.mw.ServiceProvider.SignatureMethod
		s.mw.ServiceProvider.SignatureMethod = dsig.RSASHA256SignatureMethod
		defer func() { s.mw.ServiceProvider.SignatureMethod = method }()
		if err := s.mw.ServiceProvider.SignAuthnRequest(req); err != nil {
			t.Fatal(err)
		}
	}
	return req.Element()
}

func postForm(el *etree.Element, relayState string) string {
	doc := etree.NewDocument()
	doc.SetRoot(el)
	b, _ := doc.WriteToBytes()
	return postRaw(b, relayState)
}

func postRaw(xmlDoc []byte, relayState string) string {
	v := url.Values{"SAMLRequest": {base64.StdEncoding.EncodeToString(xmlDoc)}}
	if relayState != "" {
		v.Set("RelayState", relayState)
	}
	return v.Encode()
}

// deflated is the Redirect binding's encoding of b.
func deflated(b []byte) string {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return url.QueryEscape(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

const ssoPath = "/realms/acme/protocol/saml"

// mustRefusedPage checks a refusal shown on the error page, never sent to
// the SP.
func mustRefusedPage(t *testing.T, r *apptest.Response, status int, words string) {
	t.Helper()
	if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		strings.Contains(string(r.Body), "SAMLResponse") {
		t.Fatalf("status %d %s, want the error page with %d; body: %.400s", r.Status, r.Header.Get("Content-Type"), status, r.Body)
	}
	if !strings.Contains(string(r.Body), words) {
		t.Fatalf("error page does not say %q: %.1500s", words, r.Body)
	}
}

// mustStatusResponse checks a refusal sent to the SP: a SAML Response to
// acs with the status codes.
func mustStatusResponse(t *testing.T, r *apptest.Response, acs, top, second, inResponseTo string) {
	t.Helper()
	p := &page{status: r.Status, body: string(r.Body), url: &url.URL{}}
	f := p.postForm()
	if r.Status != http.StatusOK || f == nil || f.action != acs {
		t.Fatalf("status %d, want a POST form to %s; body %.400s", r.Status, acs, r.Body)
	}
	raw, err := base64.StdEncoding.DecodeString(f.values.Get("SAMLResponse"))
	if err != nil {
		t.Fatal(err)
	}
	var resp crewsaml.Response
	if err := xml.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	sc := resp.Status.StatusCode
	if sc.Value != top || sc.StatusCode == nil || sc.StatusCode.Value != second || resp.InResponseTo != inResponseTo ||
		resp.Assertion != nil || resp.EncryptedAssertion != nil {
		t.Fatalf("response %s", raw)
	}
	if !strings.Contains(string(raw), "<ds:Signature") {
		t.Fatalf("a status response must be signed: %s", raw)
	}
	saml.ValidateXSD(t, saml.SchemaProtocol, raw)
}

func TestSSORefusals(t *testing.T) {
	e := newIdP(t)
	signing := newSP(t, e, spOptions{sign: true})
	plain := newSP(t, e, spOptions{})
	unknown := newSP(t, e, spOptions{})
	apptest.MustStatus(t, e.Admin(http.MethodDelete, "/admin/realms/acme/saml-service-providers/"+unknown.id, nil), http.StatusNoContent)
	disabled := newSP(t, e, spOptions{register: map[string]any{"enabled": false}})
	form := "Content-Type: application/x-www-form-urlencoded"
	rsa256 := dsig.RSASHA256SignatureMethod

	// A good request starts the sign-in; the same request again is a replay.
	good := signing.redirect(t, signing.authnRequest(t), "", rsa256)
	if r := e.Request(http.MethodGet, good, nil); r.Status != http.StatusFound {
		t.Fatalf("a good signed request: %d %.300s", r.Status, r.Body)
	}
	mustRefusedPage(t, e.Request(http.MethodGet, good, nil), 400, "received before")

	tampered := strings.Replace(signing.redirect(t, signing.authnRequest(t), "state-1", rsa256), "RelayState=state-1", "RelayState=state-2", 1)
	signedPOST := func(edit func(*crewsaml.AuthnRequest)) *crewsaml.AuthnRequest {
		req := signing.authnRequest(t)
		if edit != nil {
			edit(req)
		}
		return req
	}
	// Signature wrapping: an evil request around the signed one, with the
	// signature moved to its root; the signature covers the inner one.
	wrapped := func() string {
		inner := signing.postElement(t, signedPOST(nil), true)
		sig := inner.FindElement("./Signature")
		evil := signing.authnRequest(t)
		evil.AssertionConsumerServiceURL = "https://evil.test/acs"
		outer := evil.Element()
		outer.AddChild(sig.Copy())
		ext := outer.CreateElement("samlp:Extensions")
		inner.RemoveChild(sig)
		ext.AddChild(inner)
		return postForm(outer, "")
	}()
	bomb := "?SAMLRequest=" + deflated(bytes.Repeat([]byte("A"), 20<<20))
	doctype := []byte(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>` +
		`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="x" Version="2.0" IssueInstant="` +
		time.Now().UTC().Format(time.RFC3339) + `"><saml:Issuer>&lol2;</saml:Issuer></samlp:AuthnRequest>`)

	for _, tc := range []struct {
		name   string
		method string
		target string // path and query
		body   string
		status int
		words  string
	}{
		{"no SAMLRequest", http.MethodGet, ssoPath, "", 400, "no SAMLRequest"},
		{"not base64", http.MethodGet, ssoPath + "?SAMLRequest=%25%25%25", "", 400, "not base64"},
		{"not deflated", http.MethodGet, ssoPath + "?SAMLRequest=" + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte("<x/>"))), "", 400, "DEFLATE"},
		{"deflate bomb", http.MethodGet, ssoPath + bomb, "", 400, "inflates past"},
		{"DOCTYPE with entities", http.MethodPost, ssoPath, postRaw(doctype, ""), 400, "document type declaration"},
		{"external entity (Redirect)", http.MethodGet, ssoPath + "?SAMLRequest=" + deflated([]byte(`<?xml version="1.0"?>`+
			`<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" `+
			`xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="x" Version="2.0"><saml:Issuer>&x;</saml:Issuer></samlp:AuthnRequest>`)),
			"", 400, "document type declaration"},
		{"unknown SP", http.MethodGet, unknown.redirect(t, unknown.authnRequest(t), "", ""), "", 400, "not a service provider of this realm"},
		{"disabled SP", http.MethodGet, disabled.redirect(t, disabled.authnRequest(t), "", ""), "", 400, "disabled"},
		{"ACS URL not registered", http.MethodGet, plain.redirect(t, func() *crewsaml.AuthnRequest {
			r := plain.authnRequest(t)
			r.AssertionConsumerServiceURL = "https://evil.test/acs"
			return r
		}(), "", ""), "", 400, "registered ACS URL"},
		{"missing signature (Redirect)", http.MethodGet, signing.redirect(t, signing.authnRequest(t), "", ""), "", 400, "unsigned"},
		{"missing signature (POST)", http.MethodPost, ssoPath, postForm(signing.postElement(t, signing.authnRequest(t), false), ""), 400, "unsigned"},
		{"tampered signature (Redirect)", http.MethodGet, tampered, "", 400, "does not verify"},
		{"tampered signature (POST)", http.MethodPost, ssoPath, func() string {
			el := signing.postElement(t, signedPOST(nil), true)
			el.CreateAttr("ForceAuthn", "true")
			return postForm(el, "")
		}(), 400, "does not verify"},
		{"SHA-1 signature", http.MethodGet, signing.redirect(t, signing.authnRequest(t), "", dsig.RSASHA1SignatureMethod), "", 400, "not accepted"},
		{"signature wrapping", http.MethodPost, ssoPath, wrapped, 400, "does not verify"},
		{"stale IssueInstant", http.MethodGet, signing.redirect(t, signedPOST(func(r *crewsaml.AuthnRequest) {
			r.IssueInstant = time.Now().Add(-10 * time.Minute)
		}), "", rsa256), "", 400, "IssueInstant"},
		{"IssueInstant ahead", http.MethodGet, plain.redirect(t, func() *crewsaml.AuthnRequest {
			r := plain.authnRequest(t)
			r.IssueInstant = time.Now().Add(10 * time.Minute)
			return r
		}(), "", ""), "", 400, "IssueInstant"},
		{"wrong Destination", http.MethodGet, signing.redirect(t, signedPOST(func(r *crewsaml.AuthnRequest) {
			r.Destination = e.base + "/realms/other/protocol/saml"
		}), "", rsa256), "", 400, "Destination"},
		{"RelayState over 80 bytes", http.MethodGet, plain.redirect(t, plain.authnRequest(t), strings.Repeat("r", 81), ""), "", 400, "RelayState"},
		{"a response where a request goes", http.MethodGet, ssoPath + "?SAMLRequest=" + deflated([]byte(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>`)), "", 400, "must be an AuthnRequest or a LogoutRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *apptest.Response
			if tc.method == http.MethodPost {
				r = e.Request(http.MethodPost, tc.target, tc.body, form)
			} else {
				r = e.Request(http.MethodGet, tc.target, nil)
			}
			mustRefusedPage(t, r, tc.status, tc.words)
		})
	}

	// Refusals the SP is answered with.
	t.Run("IsPassive without a session", func(t *testing.T) {
		req := plain.authnRequest(t)
		passive := true
		req.IsPassive = &passive
		mustStatusResponse(t, e.Request(http.MethodGet, plain.redirect(t, req, "rs", ""), nil), plain.url+"/saml/acs",
			crewsaml.StatusResponder, crewsaml.StatusNoPassive, req.ID)
	})
	t.Run("NameID format not issued", func(t *testing.T) {
		req := plain.authnRequest(t)
		f := "urn:oasis:names:tc:SAML:2.0:nameid-format:kerberos"
		req.NameIDPolicy.Format = &f
		mustStatusResponse(t, e.Request(http.MethodGet, plain.redirect(t, req, "", ""), nil), plain.url+"/saml/acs",
			crewsaml.StatusRequester, crewsaml.StatusInvalidNameIDPolicy, req.ID)
	})
}

// A change to a service provider holds from the next request, though the
// one before read it: disabled, then deleted, it is refused.
func TestSSOSeesServiceProviderChanges(t *testing.T) {
	e := newIdP(t)
	s := newSP(t, e, spOptions{})
	mustSignedIn(t, newBrowser(t).visit(s.url+"/app", testPassword))
	path := "/admin/realms/acme/saml-service-providers/" + s.id
	apptest.MustStatus(t, e.Admin(http.MethodPut, path, map[string]any{"enabled": false}), http.StatusOK)
	mustRefusedPage(t, e.Request(http.MethodGet, s.redirect(t, s.authnRequest(t), "", ""), nil), 400, "disabled")
	apptest.MustStatus(t, e.Admin(http.MethodDelete, path, nil), http.StatusNoContent)
	mustRefusedPage(t, e.Request(http.MethodGet, s.redirect(t, s.authnRequest(t), "", ""), nil), 400,
		"not a service provider of this realm")
}
