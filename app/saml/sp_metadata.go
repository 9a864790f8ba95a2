package saml

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"slices"
	"strings"

	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// maxMetadata bounds an SP's metadata document given to the admin API.
const maxMetadata = 256 << 10

// applyMetadata takes what an SP's metadata says of it into sp, replacing
// what sp had: its entity ID, its HTTP-POST assertion consumer service (the
// default one, else the first), its single logout service and that
// endpoint's binding (HTTP-POST, else HTTP-Redirect; none if it lists
// neither), whether its requests must be signed (AuthnRequestsSigned), its
// signing and encryption certificates (none if it lists none), and the
// first NameID format it lists that this server issues. The fields of the
// request body then go over these.
func applyMetadata(sp *store.SAMLServiceProvider, doc string) error {
	ed, err := parseSPMetadata(doc)
	if err != nil {
		return err
	}
	if len(ed.SPSSODescriptors) == 0 {
		return apperr.Field("metadata", "has no SPSSODescriptor")
	}
	d := ed.SPSSODescriptors[0]
	sp.EntityID = ed.EntityID
	if sp.Name == "" {
		sp.Name = ed.EntityID
	}
	var acs *crewsaml.IndexedEndpoint
	for i, e := range d.AssertionConsumerServices {
		if e.Binding != crewsaml.HTTPPostBinding {
			continue
		}
		if acs == nil || (e.IsDefault != nil && *e.IsDefault) {
			acs = &d.AssertionConsumerServices[i]
		}
	}
	if acs == nil {
		return apperr.Field("metadata", "has no AssertionConsumerService with the HTTP-POST binding")
	}
	sp.ACSURL = acs.Location
	sp.SLOURL, sp.SLOBinding = "", store.SLOBindingPOST
	for _, b := range []struct{ urn, name string }{
		{crewsaml.HTTPPostBinding, store.SLOBindingPOST}, {crewsaml.HTTPRedirectBinding, store.SLOBindingRedirect},
	} {
		i := slices.IndexFunc(d.SingleLogoutServices, func(e crewsaml.Endpoint) bool { return e.Binding == b.urn })
		if i >= 0 {
			sp.SLOURL, sp.SLOBinding = d.SingleLogoutServices[i].Location, b.name
			break
		}
	}
	sp.RequestsSigned = d.AuthnRequestsSigned != nil && *d.AuthnRequestsSigned
	var signing, encryption string
	for _, kd := range d.KeyDescriptors {
		if len(kd.KeyInfo.X509Data.X509Certificates) == 0 {
			continue
		}
		der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(kd.KeyInfo.X509Data.X509Certificates[0].Data), ""))
		if err != nil {
			return apperr.Field("metadata", "has a KeyDescriptor whose certificate is not base64")
		}
		p := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		if (kd.Use == "signing" || kd.Use == "") && signing == "" {
			signing = p
		}
		if (kd.Use == "encryption" || kd.Use == "") && encryption == "" {
			encryption = p
		}
	}
	sp.Certificate, sp.EncryptionCertificate = signing, encryption
	if encryption == "" {
		sp.EncryptAssertions = false
	}
	if d.WantAssertionsSigned != nil && *d.WantAssertionsSigned {
		sp.SignAssertions = true
	}
	for _, f := range d.NameIDFormats {
		if slices.Contains(nameIDFormats, strings.TrimSpace(string(f))) {
			sp.NameIDFormat = strings.TrimSpace(string(f))
			break
		}
	}
	return nil
}

// parseSPMetadata reads an EntityDescriptor, refusing a document type
// declaration (no entity is ever expanded) and anything past the limit.
func parseSPMetadata(doc string) (*crewsaml.EntityDescriptor, error) {
	if len(doc) > maxMetadata {
		return nil, apperr.Field("metadata", "must be at most %d bytes", maxMetadata)
	}
	if err := refuseDTD([]byte(doc)); err != nil {
		return nil, apperr.Field("metadata", "%v", err)
	}
	var ed crewsaml.EntityDescriptor
	if err := xml.Unmarshal([]byte(doc), &ed); err != nil {
		return nil, apperr.Field("metadata", "must be an EntityDescriptor: %v", xmlProblem(err))
	}
	return &ed, nil
}

var errDTD = errors.New("must not have a document type declaration (DOCTYPE)")

// refuseDTD refuses a document with a document type declaration: SAML
// forbids them (saml-core §1.3), and a DTD is where entity expansion
// attacks live.
func refuseDTD(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	for {
		tok, err := d.RawToken()
		if err != nil {
			return nil // the parser proper reports malformed XML
		}
		switch t := tok.(type) {
		case xml.Directive:
			if bytes.HasPrefix(bytes.TrimSpace(t), []byte("DOCTYPE")) {
				return errDTD
			}
		case xml.StartElement:
			return nil // no DTD after the root element starts
		}
	}
}

// xmlProblem is a parser error as an admin may read it.
func xmlProblem(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return se.Msg
	}
	return "not well-formed"
}
