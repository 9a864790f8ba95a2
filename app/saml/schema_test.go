package saml_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/idenplane/idenplane/app/saml"
)

// What the identity provider sends is valid against the OASIS protocol
// schema: signed Responses (response, assertion, both), one with an
// encrypted assertion, a status Response, and the LogoutRequest and
// LogoutResponse of a single logout.
func TestMessagesValidAgainstSchema(t *testing.T) {
	e := newIdP(t)
	both := newSP(t, e, spOptions{})
	assertionOnly := newSP(t, e, spOptions{register: map[string]any{"signResponses": false, "signAssertions": true}})
	encrypted := newSP(t, e, spOptions{register: map[string]any{"encryptAssertions": true}})
	b := newBrowser(t)
	mustSignedIn(t, b.visit(both.url+"/app", testPassword))
	mustSignedIn(t, b.visit(assertionOnly.url+"/app", ""))
	mustSignedIn(t, b.visit(encrypted.url+"/app", ""))
	if p := b.visit(both.url+"/logout", ""); !strings.Contains(p.body, "logged out") {
		t.Fatalf("logout: %d %.300s", p.status, p.body)
	}

	// A status Response: NoPassive to a browser without a session.
	req := both.authnRequest(t)
	passive := true
	req.IsPassive = &passive
	p := &page{url: &url.URL{}}
	r := e.Request(http.MethodGet, both.redirect(t, req, "", ""), nil)
	p.status, p.body = r.Status, string(r.Body)
	f := p.postForm()
	if f == nil {
		t.Fatalf("no status response: %d %.300s", r.Status, r.Body)
	}
	raw, err := base64.StdEncoding.DecodeString(f.values.Get("SAMLResponse"))
	if err != nil {
		t.Fatal(err)
	}
	b.posted = append(b.posted, postedMessage{action: f.action, xml: raw})

	seen := map[string]int{}
	for _, m := range b.posted {
		if strings.HasPrefix(m.action, e.base) {
			continue // a service provider's request to the identity provider
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(m.xml); err != nil {
			t.Fatal(err)
		}
		kind := doc.Root().Tag
		switch {
		case doc.FindElement("//EncryptedAssertion") != nil:
			kind += " with an encrypted assertion"
		case doc.FindElement("//Assertion/Signature") != nil && doc.FindElement("/Response/Signature") != nil:
			kind += " signed, with a signed assertion"
		case doc.FindElement("//Assertion/Signature") != nil:
			kind += " with a signed assertion"
		case doc.FindElement("//StatusCode/StatusCode") != nil:
			kind += " with a status"
		}
		seen[kind]++
		saml.ValidateXSD(t, saml.SchemaProtocol, m.xml)
	}
	for _, want := range []string{"Response signed, with a signed assertion", "Response with a signed assertion",
		"Response with an encrypted assertion", "Response with a status", "LogoutRequest", "LogoutResponse"} {
		if seen[want] == 0 {
			t.Errorf("no %s was checked (checked: %v)", want, seen)
		}
	}
}
