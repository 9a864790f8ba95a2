package identity

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
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

// FuzzClientAssertion: a client assertion (RFC 7523) as the token endpoint
// gets it. The parser before the signature check (AssertionSubject) and
// the check itself refuse anything the identity's key did not sign with
// an ErrBadAssertion, never a fault; the only assertions accepted are the
// seeds this process signed, each once (its jti is then used).
func FuzzClientAssertion(f *testing.F) {
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		f.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(f.TempDir(), "idenplane.db"),
		Schema: string(schema), MasterKey: bytes.Repeat([]byte{7}, store.MasterKeySize)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	core := New(Deps{Store: st, Now: func() time.Time { return now }})
	ctx := context.Background()
	realm := &store.Realm{ID: "r1", Name: "acme", Enabled: true, CreatedAt: 1}
	n := &store.NHI{ID: "n1", RealmID: "r1", ClientID: "c1", Kind: NHIService, Name: "svc", State: NHIActive, CreatedAt: 1, UpdatedAt: 1}
	client := NHIClient(n)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := ParsePublicKey(mustJSON(f, jose.JSONWebKey{Key: &ec.PublicKey}))
	jwk, _ := key.MarshalJSON()
	for _, step := range []error{st.CreateRealm(ctx, realm), st.CreateClient(ctx, &client), st.CreateNHI(ctx, n),
		st.CreateNHICredential(ctx, &store.NHICredential{ID: "k1", RealmID: "r1", NHIID: "n1", Type: CredPublicKey,
			PublicKey: string(jwk), KeyID: key.KeyID, CreatedAt: 1})} {
		if step != nil {
			f.Fatal(step)
		}
	}
	const aud = "https://id.example.test/realms/acme"
	signed := map[string]bool{}
	sign := func(claims map[string]any) string {
		signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: ec}, (&jose.SignerOptions{}).WithType("JWT"))
		s, _ := jwt.Signed(signer).Claims(claims).Serialize()
		return s
	}
	good := func() map[string]any {
		return map[string]any{"iss": "svc", "sub": "svc", "aud": aud, "exp": now.Add(time.Minute).Unix(), "jti": uuid.NewString()}
	}
	for _, seed := range []struct {
		change func(map[string]any)
		valid  bool
	}{
		{nil, true},
		{func(c map[string]any) { c["aud"] = []string{"x", aud} }, true},
		{func(c map[string]any) { delete(c, "jti") }, false},
		{func(c map[string]any) { c["exp"] = "soon" }, false},
		{func(c map[string]any) { c["sub"] = "other" }, false},
	} {
		c := good()
		if seed.change != nil {
			seed.change(c)
		}
		a := sign(c)
		signed[a] = seed.valid
		f.Add(a)
	}
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzdmMiLCJpc3MiOiJzdmMifQ.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, assertion string) {
		tok, sub, err := AssertionSubject(assertion)
		var bad *ErrBadAssertion
		if err != nil {
			if !errors.As(err, &bad) {
				t.Fatalf("parse: %v, want an ErrBadAssertion", err)
			}
			return
		}
		if sub != "svc" {
			return // the token endpoint finds no identity of that name
		}
		_, err = core.CheckClientAssertion(ctx, n, tok, []string{aud})
		switch {
		case err == nil && !signed[assertion]:
			t.Fatalf("accepted an assertion not signed here: %q", assertion)
		case err != nil && !errors.As(err, &bad):
			t.Fatalf("check: %v, want an ErrBadAssertion", err)
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzParseCSR: a certificate request is accepted only when it parses,
// its signature is by the key it names, and that key is of an accepted
// type and strength; anything else is a 400 naming csr.
func FuzzParseCSR(f *testing.F) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for _, k := range []crypto.Signer{ec, rs, ed} {
		der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, k)
		f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})))
		der[len(der)-1] ^= 1
		f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})))
	}
	f.Add("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		csr, err := ParseCSR(text)
		if err != nil {
			var e *apperr.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Field != "csr" {
				t.Fatalf("refusal %v, want a 400 on csr", err)
			}
			return
		}
		if csr.CheckSignature() != nil || checkKeyStrength("csr", csr.PublicKey) != nil {
			t.Fatalf("accepted a CSR that does not hold: %+v", csr)
		}
	})
}
