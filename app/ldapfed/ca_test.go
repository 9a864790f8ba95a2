package ldapfed_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
)

// caCert is a self-signed CA certificate, DER.
func caCert(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corp CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func pemCert(der []byte, headers map[string]string) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: headers, Bytes: der}))
}

// A CA certificate that cannot be read is refused with the reason, not
// dropped from the pool: the directory's certificate would fail to verify
// later, with no word of why.
func TestProviderCAUnreadable(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	good, negative := caCert(t), apptest.NegativeSerialCertificate(t)
	tests := []struct{ name, caPem, want string }{
		{"negative serial", negative, "certificate 1 cannot be read: x509: negative serial number"},
		// The pool would take the first and drop the second.
		{"negative serial second", pemCert(good, nil) + negative,
			"certificate 2 cannot be read: x509: negative serial number"},
		{"not DER", pemCert([]byte("junk"), nil), "certificate 1 cannot be read: x509: malformed certificate"},
		{"headers", pemCert(good, map[string]string{"Proc-Type": "4,ENCRYPTED"}), "certificate 1 has PEM headers"},
		{"no certificate", "not a certificate", "must hold PEM certificates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Admin(http.MethodPost, fedPath, with(minimalProvider("corp"), "caPem", tc.caPem))
			apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", "caPem")
			var body httpx.ErrorBody
			r.Decode(t, &body)
			if !strings.Contains(body.Description, tc.want) {
				t.Fatalf("caPem refused with %q, want %q", body.Description, tc.want)
			}
		})
	}
	createProvider(t, s, with(minimalProvider("corp"), "caPem", pemCert(good, nil)))
}
