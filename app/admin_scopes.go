package app

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// Scopes every new client gets, as Keycloak assigns them: defaults always
// apply, optional ones when the client asks for them.
var (
	newClientDefaultScopes  = []string{"openid", "profile", "email", "roles", "web-origins"}
	newClientOptionalScopes = []string{"address", "phone", "offline_access", "microprofile-jwt"}
)

func (a *App) scopeRoutes(admin routeAdder) {
}

// seedRealm gives a new realm Keycloak's default client scopes and their
// standard mappers, inside the transaction that creates the realm.
func (a *App) seedRealm(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	return nil
}
