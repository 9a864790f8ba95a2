package apptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// NegativeSerialCertificate is the PEM of a self-signed CA certificate
// whose serial number is -1, as some older CAs issued them: Go refuses to
// create one, and to read one ("x509: negative serial number"). It is
// made with serial 0x7f, whose one-byte INTEGER after the version field is
// then rewritten (the signature no longer matches, which a parse does not
// check).
func NegativeSerialCertificate(t testing.TB) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(0x7f), Subject: pkix.Name{CommonName: "old CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	serial := []byte{0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x01, 0x7f}
	if bytes.Count(der, serial) != 1 {
		t.Fatal("the serial number is not where it was looked for")
	}
	der = bytes.Replace(der, serial, append(serial[:len(serial)-1:len(serial)-1], 0xff), 1)
	if _, err := x509.ParseCertificate(der); err == nil {
		t.Fatal("a certificate with a negative serial number parses")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
