package saml_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// fuzzAuthnRequest is an AuthnRequest of the fuzz server's SP, as an SP
// would send it.
func fuzzAuthnRequest(id, extra string) string {
	return `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="` +
		id + `" Version="2.0" IssueInstant="` + time.Now().UTC().Format(time.RFC3339) + `" Destination="` + apptest.BaseURL +
		`/realms/acme/protocol/saml" AssertionConsumerServiceURL="https://sp.test/acs" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"` +
		extra + `><saml:Issuer>https://sp.test</saml:Issuer><samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient" AllowCreate="true"/></samlp:AuthnRequest>`
}

// FuzzSAMLRequest sends any message as the SAMLRequest of both bindings:
// the answer is a redirect to the realm's sign-in, a POST form to the SP's
// registered ACS URL, or an error page; never a server error.
func FuzzSAMLRequest(f *testing.F) {
	s := realapp.New(f)
	s.CreateRealm("acme")
	apptest.MustStatus(f, s.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{
		"entityId": "https://sp.test", "name": "SP", "acsUrl": "https://sp.test/acs", "sloUrl": "https://sp.test/slo"}),
		http.StatusCreated)
	for _, seed := range []string{
		fuzzAuthnRequest("_a1", ""),
		fuzzAuthnRequest("_a2", ` IsPassive="true"`),
		fuzzAuthnRequest("_a3", ` ForceAuthn="true" AssertionConsumerServiceIndex="1"`),
		strings.Replace(fuzzAuthnRequest("_a4", ""), "https://sp.test/acs", "https://evil.test/acs", 1),
		strings.Replace(fuzzAuthnRequest("_a5", ""), "transient", "kerberos", 1),
		strings.Replace(fuzzAuthnRequest("_a6", ""), "</samlp:AuthnRequest>", `<samlp:RequestedAuthnContext Comparison="minimum">`+
			`<saml:AuthnContextClassRef>https://refeds.org/profile/mfa</saml:AuthnContextClassRef></samlp:RequestedAuthnContext></samlp:AuthnRequest>`, 1),
		strings.Replace(fuzzAuthnRequest("_a7", ""), "</samlp:AuthnRequest>", `<samlp:RequestedAuthnContext Comparison="better">`+
			`<saml:AuthnContextClassRef>urn:x</saml:AuthnContextClassRef><saml:AuthnContextDeclRef>urn:y</saml:AuthnContextDeclRef></samlp:RequestedAuthnContext></samlp:AuthnRequest>`, 1),
		`<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_l1" Version="2.0" IssueInstant="` +
			time.Now().UTC().Format(time.RFC3339) + `"><saml:Issuer>https://sp.test</saml:Issuer><saml:NameID>alice</saml:NameID><samlp:SessionIndex>_s</samlp:SessionIndex></samlp:LogoutRequest>`,
		`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&b;</samlp:AuthnRequest>`,
		`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:samlp="urn:x"/>`,
		`<AuthnRequest xmlns="urn:oasis:names:tc:SAML:2.0:protocol"><Issuer xmlns="urn:oasis:names:tc:SAML:2.0:assertion">https://sp.test</Issuer><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/></AuthnRequest>`,
		"", "<", "\x00",
	} {
		f.Add([]byte(seed), "rs")
	}
	f.Fuzz(func(t *testing.T, msg []byte, relayState string) {
		s := *s
		s.T = t
		post := url.Values{"SAMLRequest": {base64.StdEncoding.EncodeToString(msg)}, "RelayState": {relayState}}
		check(t, s.Request(http.MethodPost, "/realms/acme/protocol/saml", post.Encode(), "Content-Type: application/x-www-form-urlencoded"))
		check(t, s.Request(http.MethodGet, "/realms/acme/protocol/saml?SAMLRequest="+deflated(msg)+"&RelayState="+url.QueryEscape(relayState), nil))
	})
}

func check(t *testing.T, r *apptest.Response) {
	t.Helper()
	switch {
	case r.Status == http.StatusFound || r.Status == http.StatusSeeOther:
		if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, apptest.BaseURL+"/realms/acme/signin/") {
			t.Fatalf("redirect to %s", loc)
		}
	case r.Status == http.StatusOK:
		p := &page{status: r.Status, body: string(r.Body), url: &url.URL{}}
		if f := p.postForm(); f == nil || (f.action != "https://sp.test/acs" && f.action != "https://sp.test/slo") {
			t.Fatalf("200 that is not a form to the SP: %.300s", r.Body)
		}
	case r.Status >= 400 && r.Status < 500:
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || bytes.Contains(r.Body, []byte("goroutine")) {
			t.Fatalf("%d not an error page: %.300s", r.Status, r.Body)
		}
	default:
		t.Fatalf("status %d: %.300s", r.Status, r.Body)
	}
}
