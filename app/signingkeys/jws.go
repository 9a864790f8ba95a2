package signingkeys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// Tokens are signed here rather than through go-jose's signer and JWT
// builder: those build a signer per token, encode the claims to JSON,
// decode them into a map and encode them again, and encode the header
// three times: about 100 allocations and 8 KB per token, two tokens on
// every grant and refresh. The output is what go-jose writes: the protected header
// {"alg","kid","typ"} in that order, base64url without padding, and for
// ES256 the raw r||s signature of RFC 7518 §3.4.

// header is the base64url of k's protected header for a token of typ.
func (k *Key) header(typ string) (string, error) {
	if h, ok := k.headers.Load(typ); ok {
		return h.(string), nil
	}
	raw, err := json.Marshal(struct {
		Alg jose.SignatureAlgorithm `json:"alg"`
		Kid string                  `json:"kid,omitempty"`
		Typ string                  `json:"typ,omitempty"`
	}{k.Algorithm, k.ID, typ})
	if err != nil {
		return "", fmt.Errorf("header of key %s: %w", k.ID, err)
	}
	h := base64.RawURLEncoding.EncodeToString(raw)
	k.headers.Store(typ, h)
	return h, nil
}

// Sign returns the compact JWS of payload, a token's claims as JSON,
// signed with k and naming typ in its header.
func (k *Key) Sign(typ string, payload []byte) (string, error) {
	h, err := k.header(typ)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	// The signature is at most 256 bytes (RSA-2048): room for it and its
	// dot, so that the token is built in one buffer.
	buf := make([]byte, 0, len(h)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(512))
	buf = append(buf, h...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := k.signature(buf)
	if err != nil {
		return "", fmt.Errorf("sign with key %s: %w", k.ID, err)
	}
	buf = append(buf, '.')
	return string(enc.AppendEncode(buf, sig)), nil
}

// signature signs a JWS signing input with k's algorithm.
func (k *Key) signature(input []byte) ([]byte, error) {
	switch k.Algorithm {
	case jose.RS256:
		priv, ok := k.Key.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("RS256 with a %T", k.Key)
		}
		digest := sha256.Sum256(input)
		// PKCS #1 v1.5 signatures are deterministic: no randomness read.
		return rsa.SignPKCS1v15(nil, priv, crypto.SHA256, digest[:])
	case jose.ES256:
		priv, ok := k.Key.(*ecdsa.PrivateKey)
		if !ok || priv.Curve.Params().BitSize != 256 {
			return nil, fmt.Errorf("ES256 with a %T", k.Key)
		}
		digest := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, priv, digest[:])
		if err != nil {
			return nil, err
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
		return sig, nil
	case jose.EdDSA:
		priv, ok := k.Key.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("EdDSA with a %T", k.Key)
		}
		return ed25519.Sign(priv, input), nil
	}
	return nil, fmt.Errorf("signing algorithm %s is not supported", k.Algorithm)
}
