package nhi_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
)

type certificateJSON struct {
	credentialJSON
	Certificate   string `json:"certificate"`
	CACertificate string `json:"caCertificate"`
	PrivateKey    string `json:"privateKey"`
}

func csrPEM(t *testing.T, key crypto.Signer) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ignored"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pemOf(t, "CERTIFICATE REQUEST", der)
}

func parseCert(t *testing.T, text string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		t.Fatalf("not PEM: %q", text)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func issueCertificate(t *testing.T, s *apptest.Server, id string, body map[string]any) certificateJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, nhiPath+"/"+id+"/certificate", body)
	apptest.MustStatus(t, r, http.StatusCreated)
	var c certificateJSON
	r.Decode(t, &c)
	return c
}

// A resource server checks a client certificate as docs/nhi.md says: it
// chains to the realm's CA, serves client authentication, is in its
// validity period, and its URI names the identity.
func checkClientCertificate(t *testing.T, cert *x509.Certificate, caPEM string, at time.Time, wantURI string) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(parseCert(t, caPEM))
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("certificate does not verify against the realm CA: %v", err)
	}
	if len(cert.URIs) != 1 || cert.URIs[0].String() != wantURI {
		t.Fatalf("certificate names %v, want %s", cert.URIs, wantURI)
	}
}

func TestIssueCertificateForCSR(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	n := createIdentity(t, s, map[string]any{"kind": "workload", "name": "edge-proxy"})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	c := issueCertificate(t, s, n.ID, map[string]any{"csr": csrPEM(t, key), "name": "mtls", "validityDays": 30})
	cert := parseCert(t, c.Certificate)
	checkClientCertificate(t, cert, c.CACertificate, clk.Now(), "urn:idenplane:realm:acme:nhi:"+n.ID)
	if !cert.PublicKey.(*ecdsa.PublicKey).Equal(&key.PublicKey) || cert.Subject.CommonName != "edge-proxy" || c.PrivateKey != "" ||
		c.Type != "certificate" || c.Name != "mtls" || c.ExpiresTimestamp == nil || *c.ExpiresTimestamp != cert.NotAfter.UnixMilli() ||
		cert.NotAfter.Sub(clk.Now()) != 30*24*time.Hour {
		t.Fatalf("certificate %+v, subject %s, until %s", c.credentialJSON, cert.Subject, cert.NotAfter)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: poolOf(t, c.CACertificate), CurrentTime: clk.Now().Add(31 * 24 * time.Hour),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("certificate verifies after its validity")
	}
	if got := listCredentials(t, s, n.ID)[c.ID]; got.Type != "certificate" || got.State != "active" || got.KeyID != c.KeyID {
		t.Errorf("listed %+v", got)
	}
	// The realm has one CA; another realm has its own.
	again := issueCertificate(t, s, n.ID, map[string]any{"csr": csrPEM(t, key)})
	if again.CACertificate != c.CACertificate {
		t.Error("a second certificate is signed by another CA")
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "beta"}), http.StatusCreated)
	other := s.Admin(http.MethodPost, "/admin/realms/beta/nhi", map[string]any{"kind": "device", "name": "edge-proxy"})
	apptest.MustStatus(t, other, http.StatusCreated)
	r := s.Admin(http.MethodPost, "/admin/realms/beta/nhi/"+other.Object(t)["id"].(string)+"/certificate", map[string]any{})
	apptest.MustStatus(t, r, http.StatusCreated)
	var betaCert certificateJSON
	r.Decode(t, &betaCert)
	if betaCert.CACertificate == c.CACertificate {
		t.Error("two realms share a CA")
	}
	if _, err := parseCert(t, betaCert.Certificate).Verify(x509.VerifyOptions{Roots: poolOf(t, c.CACertificate), CurrentTime: clk.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("beta's certificate verifies against acme's CA")
	}
}

func poolOf(t *testing.T, caPEM string) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(parseCert(t, caPEM))
	return p
}

// Without a CSR the server makes the key and answers it once; the
// certificate's key signs client assertions too.
func TestIssueCertificateWithGeneratedKey(t *testing.T) {
	e := newTokenEnv(t)
	c := issueCertificate(t, e.s, e.n.ID, map[string]any{})
	block, _ := pem.Decode([]byte(c.PrivateKey))
	if block == nil || block.Type != "PRIVATE KEY" {
		t.Fatalf("private key %q", c.PrivateKey)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cert := parseCert(t, c.Certificate)
	if !key.(*ecdsa.PrivateKey).PublicKey.Equal(cert.PublicKey) {
		t.Fatal("the private key is not the certificate's")
	}
	if got := listCredentials(t, e.s, e.n.ID)[c.ID]; got.Type != "certificate" {
		t.Fatalf("listed %+v", got)
	}
	now := e.clk.Now()
	a := assertion(t, key.(crypto.Signer), jose.ES256, c.KeyID, map[string]any{"iss": "billing-worker", "sub": "billing-worker",
		"aud": apptest.BaseURL + "/realms/acme", "exp": now.Add(time.Minute).Unix(), "jti": uuid.NewString()})
	if status, body := e.assertionToken(t, "billing-worker", a); status != http.StatusOK {
		t.Fatalf("assertion by the certificate's key: %d %v", status, body)
	}
}

func TestIssueCertificateRefusals(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "device", "name": "cam"})
	a, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	// A CSR naming b's key, signed by a: its sender does not show it holds b.
	csrA, _ := x509.ParseCertificateRequest(pemBlock(t, csrPEM(t, a)))
	csrB, _ := x509.ParseCertificateRequest(pemBlock(t, csrPEM(t, b)))
	mismatched := pemOf(t, "CERTIFICATE REQUEST", bytes.Replace(csrA.Raw, csrA.RawSubjectPublicKeyInfo, csrB.RawSubjectPublicKeyInfo, 1))
	if _, err := x509.ParseCertificateRequest(pemBlock(t, mismatched)); err != nil {
		t.Fatalf("the spliced CSR must still parse: %v", err)
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	path := nhiPath + "/" + n.ID + "/certificate"
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"a CSR with a mismatched key", map[string]any{"csr": mismatched}, 400, "invalid_field", "csr"},
		{"a CSR of a weak key", map[string]any{"csr": csrPEM(t, small)}, 400, "invalid_field", "csr"},
		{"not PEM", map[string]any{"csr": "hello"}, 400, "invalid_field", "csr"},
		{"a certificate, not a CSR", map[string]any{"csr": pemOf(t, "CERTIFICATE", csrA.Raw)}, 400, "invalid_field", "csr"},
		{"PEM of garbage", map[string]any{"csr": pemOf(t, "CERTIFICATE REQUEST", []byte{1, 2, 3})}, 400, "invalid_field", "csr"},
		{"validity 0", map[string]any{"validityDays": 0}, 400, "invalid_field", "validityDays"},
		{"validity too long", map[string]any{"validityDays": 826}, 400, "invalid_field", "validityDays"},
		{"unknown field", map[string]any{"keyType": "RSA"}, 400, "unknown_field", "keyType"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, path, c.body), c.status, c.code, c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath+"/"+uuid.NewString()+"/certificate", map[string]any{}), 404, "not_found", "")
	if got := len(listCredentials(t, s, n.ID)); got != 0 {
		t.Fatalf("%d credentials after refusals", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+n.ID+"/decommission", nil), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodPost, path, map[string]any{}), 409, "invalid_state", "")
}

func pemBlock(t *testing.T, text string) []byte {
	t.Helper()
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		t.Fatal("not PEM")
	}
	return block.Bytes
}

func TestDeviceCertificates(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	dev := createIdentity(t, s, map[string]any{"kind": "device", "name": "sensor-9"})
	svc := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	path := nhiPath + "/device-certificates"
	r := s.Admin(http.MethodPost, path, map[string]any{"identityId": dev.ID, "validityDays": 365})
	apptest.MustStatus(t, r, http.StatusCreated)
	var c certificateJSON
	r.Decode(t, &c)
	cert := parseCert(t, c.Certificate)
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil ||
		cert.Issuer.String() != cert.Subject.String() || c.CACertificate != "" || cert.IsCA {
		t.Fatalf("not self-signed: %v, issuer %s", err, cert.Issuer)
	}
	// A resource server that pins the device's certificate verifies it
	// against itself.
	checkClientCertificate(t, cert, c.Certificate, clk.Now(), "urn:idenplane:realm:acme:nhi:"+dev.ID)
	block, _ := pem.Decode([]byte(c.PrivateKey))
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil || !key.(*ecdsa.PrivateKey).PublicKey.Equal(cert.PublicKey) {
		t.Fatalf("private key: %v", err)
	}
	if got := listCredentials(t, s, dev.ID)[c.ID]; got.Type != "certificate" || got.State != "active" {
		t.Fatalf("listed %+v", got)
	}
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no identity", map[string]any{}, 400, "invalid_field", "identityId"},
		{"an unknown identity", map[string]any{"identityId": uuid.NewString()}, 400, "invalid_field", "identityId"},
		{"not a device", map[string]any{"identityId": svc.ID}, 400, "invalid_field", "identityId"},
		{"too long", map[string]any{"identityId": dev.ID, "validityDays": 1000}, 400, "invalid_field", "validityDays"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, path, c.body), c.status, c.code, c.field)
		})
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+dev.ID+"/decommission", nil), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodPost, path, map[string]any{"identityId": dev.ID}), 409, "invalid_state", "")
}
