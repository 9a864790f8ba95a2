package app

import (
	"context"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// The token endpoint's signing cost per algorithm: finding the realm's
// active key (one indexed query; the parsed key comes from the cache) and
// signing a typical access token.
func BenchmarkSignRS256(b *testing.B) { keysBenchSign(b, jose.RS256) }
func BenchmarkSignES256(b *testing.B) { keysBenchSign(b, jose.ES256) }
func BenchmarkSignEdDSA(b *testing.B) { keysBenchSign(b, jose.EdDSA) }

func keysBenchSign(b *testing.B, alg jose.SignatureAlgorithm) {
	s := newTestServer(b)
	s.createRealm("acme")
	mustStatus(b, s.admin("POST", "/admin/realms/acme/keys/rotate", map[string]any{"algorithm": alg, "immediate": true}), 200)
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		b.Fatal(err)
	}
	keysTestSign(b, s, realm, keysTestPayload) // fills the cache
	b.ReportAllocs()
	for b.Loop() {
		keysTestSign(b, s, realm, keysTestPayload)
	}
}
