package saml_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/idenplane/idenplane/app/apptest"
)

// shibbolethMetadata is a Shibboleth SP 3 metadata document as its
// metadata generator writes it, with entityID in place of its own.
func shibbolethMetadata(t *testing.T, entityID string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "saml", "shibboleth-sp3-metadata.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(raw), `entityID="https://sp.example.org/shibboleth"`, `entityID="`+entityID+`"`, 1)
}

// shibbolethAuthnRequest is the AuthnRequest a stock Shibboleth SP sends
// over HTTP-Redirect: unsigned.
func shibbolethAuthnRequest(e *idp, entityID string) []byte {
	return fmt.Appendf(nil, `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" `+
		`AssertionConsumerServiceURL="https://sp.example.org/Shibboleth.sso/SAML2/POST" Destination="%s" ID="_%d" `+
		`IssueInstant="%s" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Version="2.0">`+
		`<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">%s</saml:Issuer>`+
		`<samlp:NameIDPolicy AllowCreate="1"/></samlp:AuthnRequest>`,
		ssoURLOf(e), time.Now().UnixNano(), time.Now().UTC().Format(time.RFC3339), entityID)
}

// A Shibboleth SP registered from its metadata: its logout goes to its
// HTTP-POST endpoint (HTTP-Redirect when it lists no other), its
// certificate is kept, and its requests need a signature only when its
// metadata says AuthnRequestsSigned.
func TestShibbolethSPFromMetadata(t *testing.T) {
	e := newIdP(t)
	for i, tc := range []struct {
		name           string
		edit           func(string) string
		sloURL         string
		sloBinding     string
		requestsSigned bool
	}{
		{"as generated", func(s string) string { return s },
			"https://sp.example.org/Shibboleth.sso/SLO/POST", "HTTP-POST", false},
		{"AuthnRequestsSigned false", func(s string) string {
			return strings.Replace(s, "<md:SPSSODescriptor ", `<md:SPSSODescriptor AuthnRequestsSigned="false" `, 1)
		}, "https://sp.example.org/Shibboleth.sso/SLO/POST", "HTTP-POST", false},
		{"a KeyDescriptor without use", func(s string) string {
			return strings.Replace(s, ` use="signing"`, "", 1)
		}, "https://sp.example.org/Shibboleth.sso/SLO/POST", "HTTP-POST", false},
		{"AuthnRequestsSigned true", func(s string) string {
			return strings.Replace(s, "<md:SPSSODescriptor ", `<md:SPSSODescriptor AuthnRequestsSigned="true" `, 1)
		}, "https://sp.example.org/Shibboleth.sso/SLO/POST", "HTTP-POST", true},
		{"single logout by HTTP-Redirect only", func(s string) string {
			return strings.Replace(s, `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" `+
				`Location="https://sp.example.org/Shibboleth.sso/SLO/POST"/>`, "", 1)
		}, "https://sp.example.org/Shibboleth.sso/SLO/Redirect", "HTTP-Redirect", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entityID := fmt.Sprintf("https://sp.example.org/shibboleth/%d", i)
			r := e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers",
				map[string]any{"metadata": tc.edit(shibbolethMetadata(t, entityID))})
			apptest.MustStatus(t, r, http.StatusCreated)
			got := r.Object(t)
			if got["sloUrl"] != tc.sloURL || got["sloBinding"] != tc.sloBinding || got["requestsSigned"] != tc.requestsSigned ||
				got["acsUrl"] != "https://sp.example.org/Shibboleth.sso/SAML2/POST" || got["certificate"] == "" ||
				got["encryptionCertificate"] == "" {
				t.Fatalf("registered as %v", got)
			}
			signIn := e.Request(http.MethodGet, ssoPath+"?SAMLRequest="+deflated(shibbolethAuthnRequest(e, entityID)), nil)
			if tc.requestsSigned {
				mustRefusedPage(t, signIn, http.StatusBadRequest, "this one is unsigned")
			} else if signIn.Status != http.StatusFound {
				t.Fatalf("the SP's unsigned AuthnRequest: %d %.600s", signIn.Status, signIn.Body)
			}
		})
	}

	// A refresh of the metadata, which leaves AuthnRequestsSigned out,
	// keeps the signed requests an admin asked for; the body decides.
	entityID := "https://sp.example.org/shibboleth/refreshed"
	r := e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers",
		map[string]any{"metadata": shibbolethMetadata(t, entityID)})
	apptest.MustStatus(t, r, http.StatusCreated)
	path := "/admin/realms/acme/saml-service-providers/" + r.Object(t)["id"].(string)
	apptest.MustStatus(t, e.Admin(http.MethodPut, path, map[string]any{"requestsSigned": true}), http.StatusOK)
	r = e.Admin(http.MethodPut, path, map[string]any{"metadata": shibbolethMetadata(t, entityID)})
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Object(t)["requestsSigned"] != true {
		t.Fatalf("a metadata refresh turned signed requests off: %s", r.Body)
	}
	mustRefusedPage(t, e.Request(http.MethodGet, ssoPath+"?SAMLRequest="+deflated(shibbolethAuthnRequest(e, entityID)), nil),
		http.StatusBadRequest, "this one is unsigned")
	r = e.Admin(http.MethodPut, path, map[string]any{"metadata": shibbolethMetadata(t, entityID), "requestsSigned": false})
	if apptest.MustStatus(t, r, http.StatusOK); r.Object(t)["requestsSigned"] != false {
		t.Fatalf("requestsSigned false in the body beside the metadata: %s", r.Body)
	}

	// requestsSigned is the admin's to set, and needs a certificate.
	r = e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{
		"entityId": "https://hand.test", "name": "by hand", "acsUrl": "https://hand.test/acs", "requestsSigned": true})
	apptest.MustStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "requestsSigned") {
		t.Fatalf("requestsSigned without a certificate: %s", r.Body)
	}
	r = e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{
		"entityId": "https://hand.test", "name": "by hand", "acsUrl": "https://hand.test/acs", "sloUrl": "https://hand.test/slo",
		"sloBinding": "SOAP"})
	apptest.MustStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "sloBinding") {
		t.Fatalf("a sloBinding of neither binding: %s", r.Body)
	}
}

// A single logout through service providers of either binding: one that
// takes logout messages by HTTP-Redirect only gets its LogoutRequest so
// (a POST would end on its error page and stop the chain), and every
// provider's session ends.
func TestSingleLogoutThroughRedirectSPs(t *testing.T) {
	e := newIdP(t)
	redirectOnly := []string{crewsaml.HTTPRedirectBinding}
	first := newSP(t, e, spOptions{})
	second := newSP(t, e, spOptions{sign: true, sloBindings: redirectOnly})
	third := newSP(t, e, spOptions{sloBindings: redirectOnly})
	initiatorRedirect := newSP(t, e, spOptions{sloBindings: redirectOnly})
	for _, s := range []*sp{second, third, initiatorRedirect} {
		var got map[string]any
		e.Admin(http.MethodGet, "/admin/realms/acme/saml-service-providers/"+s.id, nil).Decode(t, &got)
		if got["sloBinding"] != "HTTP-Redirect" {
			t.Fatalf("an SP that lists HTTP-Redirect alone is registered with %v", got["sloBinding"])
		}
	}

	for _, initiator := range []*sp{first, initiatorRedirect} {
		b := newBrowser(t)
		for _, s := range []*sp{first, second, third, initiatorRedirect} {
			mustSignedIn(t, b.visit(s.url+"/app", testPassword))
		}
		before := map[*sp]int{}
		for _, s := range []*sp{first, second, third, initiatorRedirect} {
			before[s] = len(s.logoutRequests)
		}
		p := b.visit(initiator.url+"/logout", "")
		if p.status != http.StatusOK || !strings.Contains(p.body, "logged out; RelayState=sp-state") {
			t.Fatalf("the logout did not come back to the SP that asked: %d %s %.300s", p.status, p.url, p.body)
		}
		for _, s := range []*sp{first, second, third, initiatorRedirect} {
			s.mu.Lock()
			told := len(s.logoutRequests) - before[s]
			s.mu.Unlock()
			if want := map[bool]int{true: 0, false: 1}[s == initiator]; told != want {
				t.Fatalf("SP %s got %d LogoutRequests, want %d", s.url, told, want)
			}
			// Signed out at the SP and at the identity provider: its
			// application sends the browser to the sign-in again.
			if p := b.visit(s.url+"/app", ""); !strings.Contains(p.body, `name="password"`) {
				t.Fatalf("still signed in at %s after the logout: %d %s %.200s", s.url, p.status, p.url, p.body)
			}
		}
		if n := e.sessionsOf(t, e.alice); n != 0 {
			t.Fatalf("%d sessions left", n)
		}
	}
}

// withAsynchronous is a LogoutRequest with the aslo:Asynchronous extension.
func withAsynchronous(t *testing.T, doc []byte) []byte {
	return editXML(t, doc, func(root *etree.Element) {
		ext := etree.NewElement("samlp:Extensions")
		ext.CreateElement("aslo:Asynchronous").CreateAttr("xmlns:aslo", "urn:oasis:names:tc:SAML:2.0:protocol:ext:async-slo")
		root.InsertChildAt(root.FindElement("./Issuer").Index()+1, ext)
	})
}

// A LogoutRequest with the aslo:Asynchronous extension ends the session
// and tells the other SPs, and its sender gets no LogoutResponse: the
// browser ends on the realm's signed-out page.
func TestAsynchronousLogout(t *testing.T) {
	e := newIdP(t)
	s, other := newSP(t, e, spOptions{}), newSP(t, e, spOptions{sloBindings: []string{crewsaml.HTTPRedirectBinding}})
	b := newBrowser(t)
	at := mustSignedIn(t, b.visit(s.url+"/app", testPassword))
	mustSignedIn(t, b.visit(other.url+"/app", ""))
	// One that names no session of the browser's is refused on the error
	// page, since the SP hears nothing back.
	_, wrong := s.logoutRequestXML(t, at.NameID, "", "_unknown")
	p := b.get(e.base + ssoPath + "?SAMLRequest=" + deflated(withAsynchronous(t, wrong)) + "&RelayState=rs")
	mustRefusedPage(t, &apptest.Response{Status: p.status, Body: []byte(p.body), Header: http.Header{"Content-Type": {"text/html"}}},
		http.StatusBadRequest, "names another principal or session")
	if e.sessionsOf(t, e.alice) != 1 {
		t.Fatal("an asynchronous LogoutRequest naming another session ended this one")
	}
	_, doc := s.logoutRequestXML(t, at.NameID, "", at.Attributes["SessionIndex"]...)
	p = b.visit(e.base+ssoPath+"?SAMLRequest="+deflated(withAsynchronous(t, doc))+"&RelayState=rs", "")
	if p.status != http.StatusOK || p.url.Host != mustParse(t, e.base).Host || strings.Contains(p.body, "SAMLResponse") ||
		strings.Contains(p.body, "logged out; RelayState") {
		t.Fatalf("an asynchronous logout was answered: %d %s %.400s", p.status, p.url, p.body)
	}
	for _, posted := range b.posted {
		if strings.Contains(string(posted.xml), "LogoutResponse") {
			t.Fatalf("a LogoutResponse went to %s", posted.action)
		}
	}
	if len(other.logoutRequests) != 1 || e.sessionsOf(t, e.alice) != 0 {
		t.Fatalf("the other SP got %d LogoutRequests; %d sessions left", len(other.logoutRequests), e.sessionsOf(t, e.alice))
	}
}

// An unsigned LogoutRequest must name the session it ends by its
// SessionIndex: the NameID alone (an email address) is known to any page
// that would send the browser with it.
func TestUnsignedLogoutNeedsSessionIndex(t *testing.T) {
	e := newIdP(t)
	s := newSP(t, e, spOptions{})
	b := newBrowser(t)
	at := mustSignedIn(t, b.visit(s.url+"/app", testPassword))
	for _, binding := range []string{"Redirect", "POST"} {
		_, doc := s.logoutRequestXML(t, at.NameID, "")
		var r *apptest.Response
		if binding == "Redirect" {
			p := b.get(e.base + ssoPath + "?SAMLRequest=" + deflated(doc) + "&RelayState=rs")
			r = &apptest.Response{Status: p.status, Body: []byte(p.body), Header: http.Header{"Content-Type": {"text/html"}}}
		} else {
			r = e.Request(http.MethodPost, ssoPath, postRaw(doc, "rs"), "Content-Type: application/x-www-form-urlencoded")
		}
		mustRefusedPage(t, r, http.StatusBadRequest, "must name the session it ends with its SessionIndex")
		if e.sessionsOf(t, e.alice) != 1 {
			t.Fatalf("%s: an unsigned LogoutRequest without a SessionIndex ended the session", binding)
		}
	}
	// Signed, the NameID is enough.
	signing := newSP(t, e, spOptions{sign: true})
	atSigning := mustSignedIn(t, b.visit(signing.url+"/app", ""))
	req, err := signing.mw.ServiceProvider.MakeLogoutRequest(ssoURLOf(e), atSigning.NameID)
	if err != nil {
		t.Fatal(err)
	}
	if req.Signature == nil || req.Signature.FindElement(".//SignatureMethod").SelectAttrValue("Algorithm", "") != dsig.RSASHA256SignatureMethod {
		t.Fatal("the SP did not sign with RSA-SHA256")
	}
	p := b.visit(req.Redirect("rs").String(), "")
	if e.sessionsOf(t, e.alice) != 0 {
		t.Fatalf("a signed LogoutRequest naming the NameID did not end the session: %d %s", p.status, p.url)
	}
}

// sloBinding and requestsSigned go through the realm export and import as
// they were: a service provider with a certificate and unsigned requests
// stays so.
func TestServiceProviderSettingsThroughRealmExport(t *testing.T) {
	e := newIdP(t)
	entityID := "https://sp.example.org/shibboleth"
	md := strings.Replace(shibbolethMetadata(t, entityID), `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" `+
		`Location="https://sp.example.org/Shibboleth.sso/SLO/POST"/>`, "", 1)
	r := e.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{"metadata": md})
	apptest.MustStatus(t, r, http.StatusCreated)
	id := r.Object(t)["id"].(string)
	export := e.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, export, http.StatusOK)
	apptest.MustStatus(t, e.Admin(http.MethodDelete, "/admin/realms/acme/saml-service-providers/"+id, nil), http.StatusNoContent)
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/import?overwrite=true", export.Body), http.StatusCreated)
	var sps []map[string]any
	e.Admin(http.MethodGet, "/admin/realms/acme/saml-service-providers", nil).Decode(t, &sps)
	if len(sps) != 1 || sps[0]["entityId"] != entityID || sps[0]["requestsSigned"] != false || sps[0]["certificate"] == "" ||
		sps[0]["sloBinding"] != "HTTP-Redirect" || sps[0]["sloUrl"] != "https://sp.example.org/Shibboleth.sso/SLO/Redirect" {
		t.Fatalf("after the import: %v", sps)
	}
	signIn := e.Request(http.MethodGet, ssoPath+"?SAMLRequest="+deflated(shibbolethAuthnRequest(e, entityID)), nil)
	if signIn.Status != http.StatusFound {
		t.Fatalf("the SP's unsigned AuthnRequest after the import: %d %.600s", signIn.Status, signIn.Body)
	}
}

// A service provider with a certificate whose requests need no signature:
// an unsigned request is taken, and a signature that comes is checked.
func TestOptionalSignatureIsChecked(t *testing.T) {
	e := newIdP(t)
	s := newSP(t, e, spOptions{sign: true, register: map[string]any{"requestsSigned": false}})
	rsa256 := dsig.RSASHA256SignatureMethod
	if r := e.Request(http.MethodGet, s.redirect(t, s.authnRequest(t), "", ""), nil); r.Status != http.StatusFound {
		t.Fatalf("an unsigned request: %d %.300s", r.Status, r.Body)
	}
	if r := e.Request(http.MethodGet, s.redirect(t, s.authnRequest(t), "", rsa256), nil); r.Status != http.StatusFound {
		t.Fatalf("a signed request: %d %.300s", r.Status, r.Body)
	}
	tampered := strings.Replace(s.redirect(t, s.authnRequest(t), "state-1", rsa256), "RelayState=state-1", "RelayState=state-2", 1)
	mustRefusedPage(t, e.Request(http.MethodGet, tampered, nil), http.StatusBadRequest, "does not verify")
	mustRefusedPage(t, e.Request(http.MethodGet, s.redirect(t, s.authnRequest(t), "", dsig.RSASHA1SignatureMethod), nil),
		http.StatusBadRequest, "not accepted")
}
