package saml_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkSAMLResponse is the identity provider's answer to an
// AuthnRequest of a signed-in browser, over HTTP on loopback: the request
// read and checked, its ID recorded, the SAML session written, the
// assertion built and signed (RSA-2048, SHA-256, exclusive c14n) and the
// POST form rendered. Compare it with BenchmarkSAMLSignFloor, the RSA-2048
// signature alone, measured in the same run.
func BenchmarkSAMLResponse(b *testing.B) {
	e := newIdP(b)
	s := newSP(b, e, spOptions{register: map[string]any{"signAssertions": true, "signResponses": false}})
	br := newBrowser(b)
	mustSignedIn(b, br.visit(s.url+"/app", testPassword))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		target := e.base + s.redirect(b, s.authnRequest(b), "", "")
		b.StartTimer()
		p := br.get(target)
		if p.status != http.StatusOK || !strings.Contains(p.body, "SAMLResponse") {
			b.Fatalf("status %d: %.300s", p.status, p.body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "responses/s")
}

// BenchmarkSAMLSignFloor is one RS256 signature with an RSA-2048 key: the
// floor under a signed assertion.
func BenchmarkSAMLSignFloor(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	digest := sha256.Sum256([]byte("a SignedInfo of about this length, canonicalized"))
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signatures/s")
}
