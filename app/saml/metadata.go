package saml

import (
	"encoding/base64"
	"net/http"

	"github.com/beevik/etree"
	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/store"
)

// The NameID formats the identity provider issues.
const (
	NameIDEmail       = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
	NameIDPersistent  = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
	NameIDTransient   = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
	NameIDUnspecified = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
)

// nameIDFormats in the order the metadata lists them.
var nameIDFormats = []string{NameIDEmail, NameIDPersistent, NameIDTransient, NameIDUnspecified}

const (
	nsMetadata = "urn:oasis:names:tc:SAML:2.0:metadata"
	nsDSig     = "http://www.w3.org/2000/09/xmldsig#"
	protocolNS = "urn:oasis:names:tc:SAML:2.0:protocol"
)

// Descriptor serves the realm's metadata: GET
// /realms/{realm}/protocol/saml/descriptor. It carries no validUntil: a
// service provider that loaded it from a file would stop trusting it on
// that date; the key rotation publishes a next certificate a day before
// it signs, so a provider refreshing daily never misses it.
func (s *Service) Descriptor(w http.ResponseWriter, r *http.Request) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		s.pageError(w, r, nil, err)
		return
	}
	doc, err := s.metadata(r, realm)
	if err != nil {
		s.pageError(w, r, realm, err)
		return
	}
	doc.Indent(2)
	out, err := doc.WriteToBytes()
	if err != nil {
		s.pageError(w, r, realm, err)
		return
	}
	w.Header().Set("Content-Type", "application/samlmetadata+xml")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(out)
}

// metadata builds the realm's EntityDescriptor.
func (s *Service) metadata(r *http.Request, realm *store.Realm) (*etree.Document, error) {
	keys, err := s.publishedKeys(r.Context(), realm)
	if err != nil {
		return nil, err
	}
	settings, err := s.settings(r.Context(), realm)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	ed := doc.CreateElement("md:EntityDescriptor")
	ed.CreateAttr("xmlns:md", nsMetadata)
	ed.CreateAttr("xmlns:ds", nsDSig)
	ed.CreateAttr("entityID", s.entityID(realm))
	idp := ed.CreateElement("md:IDPSSODescriptor")
	idp.CreateAttr("protocolSupportEnumeration", protocolNS)
	want := "false"
	if settings.WantAuthnRequestsSigned {
		want = "true"
	}
	idp.CreateAttr("WantAuthnRequestsSigned", want)
	for _, k := range keys {
		kd := idp.CreateElement("md:KeyDescriptor")
		kd.CreateAttr("use", "signing")
		cert := kd.CreateElement("ds:KeyInfo").CreateElement("ds:X509Data").CreateElement("ds:X509Certificate")
		cert.SetText(base64.StdEncoding.EncodeToString(k.Certificate))
	}
	endpoints := func(name string) {
		for _, b := range []string{crewsaml.HTTPRedirectBinding, crewsaml.HTTPPostBinding} {
			e := idp.CreateElement(name)
			e.CreateAttr("Binding", b)
			e.CreateAttr("Location", s.ssoURL(realm))
		}
	}
	endpoints("md:SingleLogoutService")
	for _, f := range nameIDFormats {
		idp.CreateElement("md:NameIDFormat").SetText(f)
	}
	endpoints("md:SingleSignOnService")
	return doc, nil
}
