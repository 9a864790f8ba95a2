package saml

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// SP is a service provider as the admin API shows it and the realm export
// writes it; only the export sets createdTimestamp.
type SP struct {
	ID                    string            `json:"id"`
	EntityID              string            `json:"entityId"`
	Name                  string            `json:"name"`
	Enabled               bool              `json:"enabled"`
	ACSURL                string            `json:"acsUrl"`
	SLOURL                string            `json:"sloUrl"`
	SLOBinding            string            `json:"sloBinding"`
	Certificate           string            `json:"certificate"`
	RequestsSigned        bool              `json:"requestsSigned"`
	EncryptionCertificate string            `json:"encryptionCertificate"`
	EncryptAssertions     bool              `json:"encryptAssertions"`
	NameIDFormat          string            `json:"nameIdFormat"`
	SignAssertions        bool              `json:"signAssertions"`
	SignResponses         bool              `json:"signResponses"`
	AttributeStatements   map[string]string `json:"attributeStatements"`
	IDPInitiated          bool              `json:"idpInitiatedSso"`
	CreatedTimestamp      *int64            `json:"createdTimestamp,omitempty"` // export only
}

// ToSP is sp as the admin API shows it.
func ToSP(sp *store.SAMLServiceProvider) SP {
	return SP{ID: sp.ID, EntityID: sp.EntityID, Name: sp.Name, Enabled: sp.Enabled, ACSURL: sp.ACSURL,
		SLOURL: sp.SLOURL, SLOBinding: sp.SLOBinding, Certificate: sp.Certificate, RequestsSigned: sp.RequestsSigned, EncryptionCertificate: sp.EncryptionCertificate,
		EncryptAssertions: sp.EncryptAssertions, NameIDFormat: sp.NameIDFormat, SignAssertions: sp.SignAssertions,
		SignResponses: sp.SignResponses, AttributeStatements: sp.AttributeStatements, IDPInitiated: sp.IDPInitiated}
}

// ExportSP is sp as the realm export writes it.
func ExportSP(sp *store.SAMLServiceProvider) SP {
	out := ToSP(sp)
	out.CreatedTimestamp = &sp.CreatedAt
	return out
}

// spCreate is the body that creates a service provider: the spec's fields,
// and beyond them the SP's metadata, from which the fields left out are
// taken.
type spCreate struct {
	EntityID              *string           `json:"entityId"`
	Name                  *string           `json:"name"`
	Enabled               *bool             `json:"enabled"`
	ACSURL                *string           `json:"acsUrl"`
	SLOURL                *string           `json:"sloUrl"`
	SLOBinding            *string           `json:"sloBinding"`
	Certificate           *string           `json:"certificate"`
	RequestsSigned        *bool             `json:"requestsSigned"`
	EncryptionCertificate *string           `json:"encryptionCertificate"`
	EncryptAssertions     *bool             `json:"encryptAssertions"`
	NameIDFormat          *string           `json:"nameIdFormat"`
	SignAssertions        *bool             `json:"signAssertions"`
	SignResponses         *bool             `json:"signResponses"`
	AttributeStatements   map[string]string `json:"attributeStatements"`
	IDPInitiated          *bool             `json:"idpInitiatedSso"`
	Metadata              *string           `json:"metadata"`
}

// ImportSP is a service provider in a realm import: the representation,
// with an ID and creation time that may be left out.
type ImportSP struct {
	ID               *string `json:"id"`
	CreatedTimestamp *int64  `json:"createdTimestamp"`
	spCreate
}

const (
	maxEntityID       = 1024 // SAML's entityID is at most 1024 characters
	maxSPName         = 255
	maxCertificate    = 16 << 10
	maxAttributes     = 50
	maxAttributeName  = 255
	maxAttributeValue = 255
)

// The sources of attribute values (attributeStatements maps an attribute
// name to one): a user field, a custom attribute of the user, the user's
// realm roles, one client's roles, the user's groups.
const (
	SourceUsername      = "username"
	SourceEmail         = "email"
	SourceFirstName     = "firstName"
	SourceLastName      = "lastName"
	SourceFullName      = "fullName"
	SourceID            = "id"
	SourceEmailVerified = "emailVerified"
	SourceRealmRoles    = "realmRoles"
	SourceGroups        = "groups"
	prefixAttribute     = "attribute:"   // attribute:<key>
	prefixClientRoles   = "clientRoles:" // clientRoles:<clientId>
)

var userSources = []string{SourceUsername, SourceEmail, SourceFirstName, SourceLastName, SourceFullName, SourceID,
	SourceEmailVerified, SourceRealmRoles, SourceGroups}

// newSP is a service provider with the spec's defaults, from a create
// body: the metadata's values first, then the body's fields over them.
func newSP(id, realmID string, body *spCreate, createdAt int64) (*store.SAMLServiceProvider, error) {
	sp := &store.SAMLServiceProvider{ID: id, RealmID: realmID, Enabled: true, NameIDFormat: NameIDEmail,
		SLOBinding: store.SLOBindingPOST, SignAssertions: true, SignResponses: true,
		AttributeStatements: map[string]string{}, CreatedAt: createdAt}
	if body.Metadata != nil {
		if err := applyMetadata(sp, *body.Metadata); err != nil {
			return nil, err
		}
	}
	applyCreate(sp, body)
	if body.Metadata == nil && body.RequestsSigned == nil {
		// Given by hand, a certificate is there to check signatures.
		sp.RequestsSigned = sp.Certificate != ""
	}
	if sp.EntityID == "" {
		return nil, apperr.Field("entityId", "is required")
	}
	if sp.Name == "" && body.Name == nil {
		return nil, apperr.Field("name", "is required")
	}
	if sp.ACSURL == "" {
		return nil, apperr.Field("acsUrl", "is required")
	}
	return sp, validateSP(sp)
}

func applyCreate(sp *store.SAMLServiceProvider, b *spCreate) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setBool := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&sp.EntityID, b.EntityID)
	set(&sp.Name, b.Name)
	setBool(&sp.Enabled, b.Enabled)
	set(&sp.ACSURL, b.ACSURL)
	set(&sp.SLOURL, b.SLOURL)
	set(&sp.SLOBinding, b.SLOBinding)
	set(&sp.Certificate, b.Certificate)
	setBool(&sp.RequestsSigned, b.RequestsSigned)
	set(&sp.EncryptionCertificate, b.EncryptionCertificate)
	setBool(&sp.EncryptAssertions, b.EncryptAssertions)
	set(&sp.NameIDFormat, b.NameIDFormat)
	setBool(&sp.SignAssertions, b.SignAssertions)
	setBool(&sp.SignResponses, b.SignResponses)
	if b.AttributeStatements != nil {
		sp.AttributeStatements = b.AttributeStatements
	}
	setBool(&sp.IDPInitiated, b.IDPInitiated)
}

// validateSP checks every rule of a service provider.
func validateSP(sp *store.SAMLServiceProvider) error {
	if sp.EntityID == "" {
		return apperr.Field("entityId", "is required")
	}
	if err := validate.URIChars("entityId", sp.EntityID); err != nil {
		return err
	}
	if len(sp.EntityID) > maxEntityID {
		return apperr.Field("entityId", "must be at most %d characters", maxEntityID)
	}
	if strings.TrimSpace(sp.Name) == "" {
		return apperr.Field("name", "is required")
	}
	if err := validate.DisplayName("name", sp.Name, maxSPName); err != nil {
		return err
	}
	if err := endpointURL("acsUrl", sp.ACSURL); err != nil {
		return err
	}
	if sp.SLOURL != "" {
		if err := endpointURL("sloUrl", sp.SLOURL); err != nil {
			return err
		}
	}
	if sp.SLOBinding != store.SLOBindingPOST && sp.SLOBinding != store.SLOBindingRedirect {
		return apperr.Field("sloBinding", "must be %s or %s", store.SLOBindingPOST, store.SLOBindingRedirect)
	}
	if sp.RequestsSigned && sp.Certificate == "" {
		return apperr.Field("requestsSigned", "needs the SP's certificate (or metadata with a signing key)")
	}
	for _, c := range []struct{ field, pem string }{
		{"certificate", sp.Certificate}, {"encryptionCertificate", sp.EncryptionCertificate},
	} {
		if c.pem == "" {
			continue
		}
		if _, err := parseCertificate(c.pem); err != nil {
			return apperr.Field(c.field, "must be an X.509 certificate in PEM: %v", err)
		}
	}
	if sp.EncryptAssertions && sp.EncryptionCertificate == "" {
		return apperr.Field("encryptAssertions", "needs the SP's encryptionCertificate (or metadata with an encryption key)")
	}
	if !slices.Contains(nameIDFormats, sp.NameIDFormat) {
		return apperr.Field("nameIdFormat", "must be one of %s", strings.Join(nameIDFormats, ", "))
	}
	return validateAttributes(sp.AttributeStatements)
}

// endpointURL accepts an absolute https URL, or http for a loopback host
// (localhost, 127.0.0.1, [::1]): the SP's endpoints get assertions.
func endpointURL(field, s string) error {
	if err := validate.HTTPURL(field, s); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || !validate.URIHost(u) || u.Fragment != "" || u.User != nil {
		return apperr.Field(field, "must be an absolute https URL without user information or fragment")
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return apperr.Field(field, "must be https (http only for localhost, 127.0.0.1 or [::1])")
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
}

// parseCertificate reads one PEM CERTIFICATE block.
func parseCertificate(s string) (*x509.Certificate, error) {
	if len(s) > maxCertificate {
		return nil, fmt.Errorf("longer than %d bytes", maxCertificate)
	}
	block, rest := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM CERTIFICATE block")
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, fmt.Errorf("text after the certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a readable certificate: %w", err)
	}
	return cert, nil
}

func validateAttributes(attrs map[string]string) error {
	if len(attrs) > maxAttributes {
		return apperr.Field("attributeStatements", "must have at most %d attributes", maxAttributes)
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		field := "attributeStatements." + name
		if err := validate.Identifier("attributeStatements", name, maxAttributeName); err != nil || strings.TrimSpace(name) == "" {
			return apperr.Field("attributeStatements", "attribute names must be 1 to %d visible characters", maxAttributeName)
		}
		src := attrs[name]
		switch {
		case slices.Contains(userSources, src):
		case strings.HasPrefix(src, prefixAttribute) && len(src) > len(prefixAttribute):
			if err := validate.Identifier(field, src, maxAttributeValue); err != nil {
				return err
			}
		case strings.HasPrefix(src, prefixClientRoles) && len(src) > len(prefixClientRoles):
			if err := validate.Identifier(field, src, maxAttributeValue); err != nil {
				return err
			}
		default:
			return apperr.Field(field, "must be one of %s, %s<key> or %s<clientId>", strings.Join(userSources, ", "),
				prefixAttribute, prefixClientRoles)
		}
	}
	return nil
}

// ImportedSP is a service provider of a realm import, checked as the admin
// API checks one, with the ID it gets.
func ImportedSP(in *ImportSP, id, realmID string, createdAt int64) (*store.SAMLServiceProvider, error) {
	return newSP(id, realmID, &in.spCreate, createdAt)
}
