package app

import (
	"crypto"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/signingkeys"
)

// The signing keys are app/signingkeys'. These names stay here for the
// packages that start the server and may not import a module (main.go,
// app/apptest/realapp, app/loadtest).

// RSAKeyBits is the size of the RSA keys the server makes.
const RSAKeyBits = signingkeys.RSAKeyBits

// KeyMaker makes the private key of a new signing key of alg.
type KeyMaker = signingkeys.KeyMaker

// NewPrivateKey makes a fresh private key of alg from crypto/rand: the
// server's KeyMaker unless Config.SigningKeys names another.
func NewPrivateKey(alg jose.SignatureAlgorithm) (crypto.Signer, error) {
	return signingkeys.NewPrivateKey(alg)
}
