package apptest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"sync"

	"github.com/go-jose/go-jose/v4"
)

// rsaKeyBits is the size of the server's RSA signing keys (app.RSAKeyBits).
const rsaKeyBits = 2048

// rsaKeys are the RSA keys the servers of a test binary share, made as
// the first server to need one asks: finding one takes a tenth of a
// second, and every server makes two (its system realm's and a test
// realm's), which was a third of the tests' time.
var rsaKeys struct {
	mu   sync.Mutex
	keys []*rsa.PrivateKey
}

func rsaKey(i int) (*rsa.PrivateKey, error) {
	rsaKeys.mu.Lock()
	defer rsaKeys.mu.Unlock()
	for len(rsaKeys.keys) <= i {
		k, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
		if err != nil {
			return nil, err
		}
		rsaKeys.keys = append(rsaKeys.keys, k)
	}
	return rsaKeys.keys[i], nil
}

// SigningKeys makes one server's signing keys (app.Config.SigningKeys):
// RSA keys from the shared ones, in order, so that a server's own keys
// all differ (a realm's, another realm's, a rotation's); others from
// fresh (app.NewPrivateKey), as they cost nothing.
func SigningKeys(fresh func(jose.SignatureAlgorithm) (crypto.Signer, error)) func(jose.SignatureAlgorithm) (crypto.Signer, error) {
	var (
		mu   sync.Mutex
		next int
	)
	return func(alg jose.SignatureAlgorithm) (crypto.Signer, error) {
		if alg != jose.RS256 {
			return fresh(alg)
		}
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		return rsaKey(i)
	}
}
