package saml_test

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/saml"
)

// The descriptor is valid against the OASIS metadata schema, and has what
// this identity provider publishes: the elements, their namespaces and
// order, the certificate, and crewjam/saml's reader, which the service
// providers of the tests use, takes it.
func TestDescriptor(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	r := s.Request(http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/samlmetadata+xml" {
		t.Fatalf("Content-Type %q", ct)
	}
	saml.ValidateXSD(t, saml.SchemaMetadata, r.Body)
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(r.Body); err != nil {
		t.Fatalf("metadata is not XML: %v", err)
	}
	const md, ds = "urn:oasis:names:tc:SAML:2.0:metadata", "http://www.w3.org/2000/09/xmldsig#"
	root := doc.Root()
	if root.Tag != "EntityDescriptor" || root.NamespaceURI() != md {
		t.Fatalf("root %s in %s", root.Tag, root.NamespaceURI())
	}
	entityID := apptest.BaseURL + "/realms/acme"
	if got := root.SelectAttrValue("entityID", ""); got != entityID {
		t.Fatalf("entityID %q, want %q", got, entityID)
	}
	if root.SelectAttr("validUntil") != nil {
		t.Fatal("validUntil would expire a copy of the metadata kept in a file")
	}
	if len(root.ChildElements()) != 1 {
		t.Fatalf("EntityDescriptor has %d children, want the IDPSSODescriptor alone", len(root.ChildElements()))
	}
	idp := root.ChildElements()[0]
	if idp.Tag != "IDPSSODescriptor" || idp.NamespaceURI() != md {
		t.Fatalf("descriptor %s", idp.Tag)
	}
	if got := idp.SelectAttrValue("protocolSupportEnumeration", ""); got != "urn:oasis:names:tc:SAML:2.0:protocol" {
		t.Fatalf("protocolSupportEnumeration %q", got)
	}
	if got := idp.SelectAttrValue("WantAuthnRequestsSigned", ""); got != "false" {
		t.Fatalf("WantAuthnRequestsSigned %q by default", got)
	}

	// The schema's sequence: KeyDescriptor*, SingleLogoutService*,
	// NameIDFormat*, SingleSignOnService+.
	order := []string{"KeyDescriptor", "SingleLogoutService", "NameIDFormat", "SingleSignOnService"}
	last := -1
	var formats []string
	endpoints := map[string][]string{}
	for _, c := range idp.ChildElements() {
		i := slices.Index(order, c.Tag)
		if i < 0 || i < last || c.NamespaceURI() != md {
			t.Fatalf("element %s out of the schema's order %v", c.Tag, order)
		}
		last = i
		switch c.Tag {
		case "NameIDFormat":
			formats = append(formats, c.Text())
		case "SingleLogoutService", "SingleSignOnService":
			if got := c.SelectAttrValue("Location", ""); got != entityID+"/protocol/saml" {
				t.Fatalf("%s Location %q", c.Tag, got)
			}
			endpoints[c.Tag] = append(endpoints[c.Tag], c.SelectAttrValue("Binding", ""))
		case "KeyDescriptor":
			if use := c.SelectAttrValue("use", ""); use != "signing" {
				t.Fatalf("KeyDescriptor use %q", use)
			}
			certEl := c.FindElement("./KeyInfo/X509Data/X509Certificate")
			if certEl == nil || certEl.NamespaceURI() != ds {
				t.Fatalf("KeyDescriptor without a ds:X509Certificate")
			}
			der, err := base64.StdEncoding.DecodeString(certEl.Text())
			if err != nil {
				t.Fatal(err)
			}
			cert, err := x509.ParseCertificate(der)
			if err != nil {
				t.Fatalf("certificate: %v", err)
			}
			pub, ok := cert.PublicKey.(*rsa.PublicKey)
			if !ok || pub.N.BitLen() != 2048 {
				t.Fatalf("certificate key %T, want RSA-2048", cert.PublicKey)
			}
			if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
				t.Fatalf("certificate is not self-signed: %v", err)
			}
		}
	}
	wantFormats := []string{"urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
		"urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
		"urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"}
	if !slices.Equal(formats, wantFormats) {
		t.Fatalf("NameID formats %v", formats)
	}
	bindings := []string{crewsaml.HTTPRedirectBinding, crewsaml.HTTPPostBinding}
	for _, e := range []string{"SingleSignOnService", "SingleLogoutService"} {
		if !slices.Equal(endpoints[e], bindings) {
			t.Fatalf("%s bindings %v", e, endpoints[e])
		}
	}

	// A service provider's reader takes it.
	var ed crewsaml.EntityDescriptor
	if err := xml.Unmarshal(r.Body, &ed); err != nil {
		t.Fatalf("crewjam/saml cannot read the metadata: %v", err)
	}
	if ed.EntityID != entityID || len(ed.IDPSSODescriptors) != 1 || len(ed.IDPSSODescriptors[0].KeyDescriptors) != 1 {
		t.Fatalf("as read by crewjam/saml: %+v", ed)
	}

	// The same key is published on every request, and another realm has its own.
	again := s.Request(http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil)
	if string(again.Body) != string(r.Body) {
		t.Fatal("the metadata changed between two requests")
	}
	s.CreateRealm("beta")
	other := s.Request(http.MethodGet, "/realms/beta/protocol/saml/descriptor", nil)
	apptest.MustStatus(t, other, http.StatusOK)
	if cert := certOf(t, other.Body); cert == certOf(t, r.Body) {
		t.Fatal("two realms share a SAML key")
	}

	// With signed requests wanted, still valid, and it says so.
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/saml/settings",
		map[string]any{"wantAuthnRequestsSigned": true}), http.StatusOK)
	signed := s.Request(http.MethodGet, "/realms/acme/protocol/saml/descriptor", nil)
	apptest.MustStatus(t, signed, http.StatusOK)
	saml.ValidateXSD(t, saml.SchemaMetadata, signed.Body)
	if !strings.Contains(string(signed.Body), `WantAuthnRequestsSigned="true"`) {
		t.Fatalf("WantAuthnRequestsSigned not published: %s", signed.Body)
	}
}

func certOf(t *testing.T, metadata []byte) string {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(metadata); err != nil {
		t.Fatal(err)
	}
	el := doc.FindElement("//X509Certificate")
	if el == nil {
		t.Fatal("no certificate")
	}
	return strings.TrimSpace(el.Text())
}

func TestDescriptorOfUnknownRealm(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	s.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"enabled": false})
	for _, path := range []string{"/realms/nope/protocol/saml/descriptor", "/realms/acme/protocol/saml/descriptor"} {
		r := s.Request(http.MethodGet, path, nil, "Accept: text/html")
		apptest.MustStatus(t, r, http.StatusNotFound)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("%s: Content-Type %q, want the error page", path, ct)
		}
	}
}
