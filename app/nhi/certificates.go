package nhi

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// NHICertificateRep is the answer that issues a certificate: the credential,
// the CA certificate a resource server trusts (none for a self-signed
// one), and the private key when the server made it, once.
type NHICertificateRep struct {
	NHICredentialRep
	CACertificate string `json:"caCertificate,omitempty"`
	PrivateKey    string `json:"privateKey,omitempty"` // PKCS #8 PEM
}

// NHICertificateBody is the body that issues an identity a certificate.
type NHICertificateBody struct {
	CSR          *string `json:"csr"` // left out: the server makes the key
	Name         *string `json:"name"`
	ValidityDays *int    `json:"validityDays"`
}

// IssueCertificate issues the identity a client certificate signed by the
// realm's CA, for the key of a CSR or for a key it makes and answers once.
func (s *Service) IssueCertificate(w http.ResponseWriter, r *http.Request) error {
	realm, n, err := s.identity(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	var body NHICertificateBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	var pub crypto.PublicKey
	var keyDER []byte
	if body.CSR != nil {
		csr, err := identity.ParseCSR(*body.CSR)
		if err != nil {
			return err
		}
		pub = csr.PublicKey
	} else {
		var key crypto.Signer
		key, keyDER = identity.NewCertificateKey()
		pub = key.Public()
	}
	ca, caKey, err := s.deps.Core.RealmCA(r.Context(), realm)
	if err != nil {
		return err
	}
	cert, err := s.deps.Core.IssueCertificate(realm, n, pub, days(body.ValidityDays), ca, caKey)
	if err != nil {
		return err
	}
	rep, err := s.storeCertificate(r, realm, n, cert, body.Name)
	if err != nil {
		return err
	}
	rep.CACertificate = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
	rep.PrivateKey = pkcs8PEM(keyDER)
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path[:len(r.URL.Path)-len("/certificate")]+"/credentials/"+rep.ID, rep)
}

// DeviceCertificateBody is the body that issues a device a certificate.
type DeviceCertificateBody struct {
	IdentityID   *string `json:"identityId"`
	Name         *string `json:"name"`
	ValidityDays *int    `json:"validityDays"`
}

// DeviceCertificate issues a device identity a self-signed certificate
// with a key made here, answered once: for devices that pin their own
// certificate rather than trust a CA.
func (s *Service) DeviceCertificate(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body DeviceCertificateBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.IdentityID == nil {
		return apperr.Field("identityId", "is required: the device identity the certificate is for")
	}
	n, err := s.deps.Store.GetNHI(r.Context(), realm.ID, *body.IdentityID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.Field("identityId", "no identity %s in this realm", *body.IdentityID)
	} else if err != nil {
		return err
	}
	if n.Kind != identity.NHIDevice {
		return apperr.Field("identityId", "identity %s is of kind %s, not %s", n.Name, n.Kind, identity.NHIDevice)
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	key, keyDER := identity.NewCertificateKey()
	cert, err := s.deps.Core.IssueCertificate(realm, n, key.Public(), days(body.ValidityDays), nil, key)
	if err != nil {
		return err
	}
	rep, err := s.storeCertificate(r, realm, n, cert, body.Name)
	if err != nil {
		return err
	}
	rep.PrivateKey = pkcs8PEM(keyDER)
	return httpx.Created(w, s.deps.BaseURL+"/admin/realms/"+realm.Name+"/nhi/"+n.ID+"/credentials/"+rep.ID, rep)
}

func days(v *int) int {
	if v == nil {
		return identity.DefaultCertificateDays
	}
	return *v
}

func pkcs8PEM(der []byte) string {
	if der == nil {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// storeCertificate keeps cert as a credential of n, with its public key
// (so it may also sign client assertions) and its expiry.
func (s *Service) storeCertificate(r *http.Request, realm *store.Realm, n *store.NHI, cert *x509.Certificate, name *string) (NHICertificateRep, error) {
	jwk := jose.JSONWebKey{Key: cert.PublicKey, Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return NHICertificateRep{}, err
	}
	jwk.KeyID = b64(tp)
	pubJSON, err := jwk.MarshalJSON()
	if err != nil {
		return NHICertificateRep{}, err
	}
	c := &store.NHICredential{Type: identity.CredCertificate, KeyID: jwk.KeyID, PublicKey: string(pubJSON),
		Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})), ExpiresAt: cert.NotAfter.UnixMilli()}
	if name != nil {
		c.Name = *name
	}
	rep, err := s.issue(r, realm, n, c, nil, nil)
	return NHICertificateRep{NHICredentialRep: rep}, err
}
