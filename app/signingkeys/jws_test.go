package signingkeys

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// Key.Sign writes what go-jose's signer wrote before it: a token go-jose
// verifies with the public key, with the same protected header.
func TestSignVerifiesWithGoJose(t *testing.T) {
	payload := []byte(`{"iss":"https://idp.example/realms/r","sub":"u1","aud":"app","exp":1900000000,"name":"Zoë <z@x>"}`)
	for _, alg := range algorithms {
		t.Run(string(alg), func(t *testing.T) {
			priv, err := NewPrivateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			k := &Key{ID: "kid-" + string(alg), Algorithm: alg, Key: priv}
			for _, typ := range []string{"at+jwt", "JWT", "at+jwt"} { // the second at+jwt reads the kept header
				token, err := k.Sign(typ, payload)
				if err != nil {
					t.Fatal(err)
				}
				jws, err := jose.ParseSignedCompact(token, algorithms)
				if err != nil {
					t.Fatalf("parse %s: %v", token, err)
				}
				got, err := jws.Verify(priv.Public())
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				if string(got) != string(payload) {
					t.Errorf("payload %s, want %s", got, payload)
				}
				h := jws.Signatures[0].Protected
				if h.KeyID != k.ID || h.Algorithm != string(alg) || h.ExtraHeaders[jose.HeaderType] != typ {
					t.Errorf("header %+v, want kid %s, alg %s, typ %s", h, k.ID, alg, typ)
				}
				raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
				if err != nil {
					t.Fatal(err)
				}
				if want := `{"alg":"` + string(alg) + `","kid":"` + k.ID + `","typ":"` + typ + `"}`; string(raw) != want {
					t.Errorf("header %s, want %s", raw, want)
				}
			}
		})
	}
}

// A key whose algorithm and private key disagree signs nothing.
func TestSignRefusesAMismatchedKey(t *testing.T) {
	priv, err := NewPrivateKey(jose.EdDSA)
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.HS256} {
		if _, err := (&Key{ID: "k", Algorithm: alg, Key: priv}).Sign("JWT", []byte(`{}`)); err == nil {
			t.Errorf("%s with an Ed25519 key signed", alg)
		}
	}
}
