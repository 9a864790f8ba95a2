package identity

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/apperr"
)

// FuzzParsePublicKey: an uploaded public key (a JWK object or a PEM string)
// is accepted only as a public key of an accepted type and strength, with
// a kid, which reads back as the same key; anything else is a 400 naming
// publicKey.
func FuzzParsePublicKey(f *testing.F) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	ed, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	for _, k := range []any{&ec.PublicKey, &rs.PublicKey, ed, ec, edPriv} {
		b, _ := jose.JSONWebKey{Key: k, KeyID: "k"}.MarshalJSON()
		f.Add(b)
	}
	der, _ := x509.MarshalPKIXPublicKey(&rs.PublicKey)
	for _, typ := range []string{"PUBLIC KEY", "CERTIFICATE", "RSA PRIVATE KEY"} {
		s, _ := json.Marshal(string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})))
		f.Add(s)
	}
	for _, s := range []string{`{}`, `{"kty":"oct","k":"AA"}`, `{"kty":"EC","crv":"P-256","x":"","y":""}`, `null`, `7`, `"x"`, `[]`,
		`{"kty":"RSA","n":"AQAB","e":"AQAB"}`, `{"kty":"EC","crv":"P-256","x":"AA","y":"AA","d":"AA"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		key, err := ParsePublicKey(raw)
		if err != nil {
			var e *apperr.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Field != "publicKey" {
				t.Fatalf("refusal %v, want a 400 on publicKey", err)
			}
			return
		}
		if !key.IsPublic() || key.KeyID == "" || len(KeyAlgorithms(key.Key)) == 0 {
			t.Fatalf("accepted %+v", key)
		}
		b, err := key.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted key does not marshal: %v", err)
		}
		again, err := ParsePublicKey(b)
		if err != nil || again.KeyID != key.KeyID {
			t.Fatalf("stored form %s reads back as %+v, %v", b, again, err)
		}
	})
}
