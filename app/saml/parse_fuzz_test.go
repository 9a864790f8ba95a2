package saml

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	crewsaml "github.com/crewjam/saml"
)

// FuzzReadMessage drives the reading of a message over both bindings and
// its decoding as an AuthnRequest and a LogoutRequest: it never panics,
// and what it accepts is within the limits and has no DTD.
func FuzzReadMessage(f *testing.F) {
	for _, seed := range []string{
		`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="a" Version="2.0"/>`,
		`<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="l" Version="2.0"><saml:NameID xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">x</saml:NameID></samlp:LogoutRequest>`,
		`<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="a" Version="2.0"><samlp:RequestedAuthnContext Comparison="maximum"><saml:AuthnContextClassRef>https://refeds.org/profile/mfa</saml:AuthnContextClassRef></samlp:RequestedAuthnContext></samlp:AuthnRequest>`,
		`<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="l" Version="2.0"><saml:NameID xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">x</saml:NameID><samlp:SessionIndex>a</samlp:SessionIndex><samlp:SessionIndex>b</samlp:SessionIndex></samlp:LogoutRequest>`,
		`<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>`,
		`<a xmlns:x="1" xmlns:x="2"/>`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestSpeed)
		_, _ = w.Write(msg)
		_ = w.Close()
		get := httptest.NewRequest(http.MethodGet, "/?SAMLRequest="+url.QueryEscape(base64.StdEncoding.EncodeToString(z.Bytes())), nil)
		post := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(url.Values{"SAMLRequest": {base64.StdEncoding.EncodeToString(msg)}}.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, r := range []*http.Request{get, post} {
			m, err := readMessage(r, "SAMLRequest")
			if err != nil {
				continue
			}
			if len(m.xml) > maxMessage || bytes.Contains(m.xml, []byte("<!DOCTYPE")) {
				t.Fatalf("accepted %d bytes: %.100q", len(m.xml), m.xml)
			}
			var ar crewsaml.AuthnRequest
			_ = unmarshalElement(m.root, &ar)
			var lr crewsaml.LogoutRequest
			_ = unmarshalElement(m.root, &lr)
			_ = issuerOf(m.root)
			_ = signaturesIn(m.root, nil)
			_ = sessionIndexes(m.root)
			if ctx, err := requestedContext(m.root); err == nil && ctx != nil {
				// What is accepted can be stated, and comes back as it was kept.
				if ctx.class(2) == "" && ctx.class(1) == "" {
					t.Fatalf("accepted a context no sign-in meets: %+v", ctx)
				}
				back, err := decodeContext(ctx.encode())
				if err != nil || back.Comparison != ctx.Comparison || len(back.Classes) != len(ctx.Classes) {
					t.Fatalf("kept %+v, read back %+v %v", ctx, back, err)
				}
			}
		}
	})
}
