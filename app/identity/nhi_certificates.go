package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The certificates of non-human identities: X.509 client certificates
// (RFC 5280) signed by the realm's internal CA for a CSR (RFC 2986) or a
// key made here, and self-signed device certificates. The CA is made when
// it first signs; its key is sealed with the master key by the store.

const (
	caLifetime = 10 * 365 * 24 * time.Hour
	// MaxCertificateDays follows the CA/Browser Forum's former cap for
	// TLS certificates: long enough for devices, short enough to rotate.
	MaxCertificateDays     = 825
	DefaultCertificateDays = 90
	backdate               = time.Minute // for clocks a little behind
	maxCSRText             = 16 << 10
)

// IdentityURI names an identity in its certificates' subjectAltName, the
// one name a resource server checks: the realm and the identity's ID.
func IdentityURI(realm *store.Realm, n *store.NHI) string {
	return "urn:idenplane:realm:" + url.PathEscape(realm.Name) + ":nhi:" + n.ID
}

// ParseCSR reads a PEM certificate request and checks its signature, the
// proof that its sender holds the private key of the public key it names:
// a request whose signature does not match its key is refused. Its key
// must be of an accepted type and strength. Only its key is used; the
// subject and names of the certificate are the identity's.
func ParseCSR(text string) (*x509.CertificateRequest, error) {
	if len(text) > maxCSRText {
		return nil, apperr.Field("csr", "must be at most %d bytes", maxCSRText)
	}
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST" {
		return nil, apperr.Field("csr", "must be a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, apperr.Field("csr", "is not a readable certificate request")
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, apperr.Field("csr", "its signature does not match its public key: it must be signed by the key it names")
	}
	if err := checkKeyStrength("csr", csr.PublicKey); err != nil {
		return nil, err
	}
	return csr, nil
}

// NewCertificateKey makes the key of a certificate the caller asked the
// server to make: ECDSA P-256.
func NewCertificateKey() (crypto.Signer, []byte) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // never fails: crypto/rand aborts instead
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return k, der
}

// RealmCA is the realm's CA certificate and key, made on first use. Two
// first uses at once both make one; the first stored wins and the other
// reads it.
func (c *Core) RealmCA(ctx context.Context, realm *store.Realm) (*x509.Certificate, crypto.Signer, error) {
	ca, err := c.store.GetRealmCA(ctx, realm.ID)
	if errors.Is(err, store.ErrNotFound) {
		ca, err = c.newRealmCA(ctx, realm)
	}
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode([]byte(ca.Certificate))
	if block == nil {
		return nil, nil, fmt.Errorf("CA certificate of realm %s: not PEM", realm.Name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate of realm %s: %w", realm.Name, err)
	}
	key, err := x509.ParsePKCS8PrivateKey(ca.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("CA key of realm %s: %w", realm.Name, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("CA key of realm %s cannot sign", realm.Name)
	}
	return cert, signer, nil
}

func (c *Core) newRealmCA(ctx context.Context, realm *store.Realm) (*store.RealmCA, error) {
	key, der := NewCertificateKey()
	now := c.now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: realm.Name + " identities CA", Organization: []string{"Idenplane"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("make CA of realm %s: %w", realm.Name, err)
	}
	ca := &store.RealmCA{RealmID: realm.ID, Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})),
		PrivateKey: der, CreatedAt: now.UnixMilli()}
	err = c.store.CreateRealmCA(ctx, ca)
	if errors.Is(err, store.ErrConflict) {
		return c.store.GetRealmCA(ctx, realm.ID)
	}
	return ca, err
}

func randomSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n.Add(n, big.NewInt(1)) // positive, never zero
}

// IssueCertificate makes identity n a client certificate for pub, valid
// for days, signed by issuer with issuerKey, or self-signed when issuer
// is nil (signer then being the certificate's own key). Its subject is
// the identity's name in the realm; its one name is IdentityURI; it
// serves client authentication only. A CA-signed one ends no later than
// its CA.
func (c *Core) IssueCertificate(realm *store.Realm, n *store.NHI, pub crypto.PublicKey, days int,
	issuer *x509.Certificate, signer crypto.Signer) (*x509.Certificate, error) {
	if days < 1 || days > MaxCertificateDays {
		return nil, apperr.Field("validityDays", "must be between 1 and %d", MaxCertificateDays)
	}
	now := c.now()
	uri, err := url.Parse(IdentityURI(realm, n))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: n.Name, Organization: []string{realm.Name}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(time.Duration(days) * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		URIs:                  []*url.URL{uri},
	}
	parent := tmpl
	if issuer != nil {
		parent = issuer
		if tmpl.NotAfter.After(issuer.NotAfter) {
			tmpl.NotAfter = issuer.NotAfter
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("issue certificate of identity %s: %w", n.Name, err)
	}
	return x509.ParseCertificate(der)
}
