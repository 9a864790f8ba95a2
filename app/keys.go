package app

import (
	"context"
	"crypto"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/store"
)

// signingKey is the key a realm signs tokens with now.
type signingKey struct {
	ID        string // kid
	Algorithm jose.SignatureAlgorithm
	Key       crypto.Signer
}

func (a *App) keyRoutes(admin routeAdder) {
}

// createRealmKeys gives a new realm its first signing key, inside the
// transaction that creates the realm.
func createRealmKeys(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	return nil
}

// realmSigningKey returns the realm's active key.
func (a *App) realmSigningKey(ctx context.Context, realm *store.Realm) (*signingKey, error) {
	return nil, nil
}

// realmPublicKeys returns every key a realm publishes: next, active and
// retired ones still covering live tokens; public halves only.
func (a *App) realmPublicKeys(ctx context.Context, realm *store.Realm) ([]jose.JSONWebKey, error) {
	return nil, nil
}
