package app

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// namedKeyPrincipal admits a named admin API key (app/adminkeys) with its
// permissions; one confined to a realm acts on that realm's routes alone,
// by the rule of a service account's key (confiningRealm).
func namedKeyPrincipal(r *http.Request, key string, keys *adminkeys.Service,
	realmNamed func(context.Context, string) (*store.Realm, error)) (*adminPrincipal, error) {
	k, perms, err := keys.Authenticate(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if k.RealmID != "" {
		realm, err := confiningRealm(r, realmNamed)
		if err != nil {
			return nil, err
		}
		if realm.ID != k.RealmID {
			return nil, apperr.Unauthorized("admin API key %s acts only in its own realm", k.Name)
		}
	}
	return &adminPrincipal{Kind: principalAPIKey, UserID: k.ID, Username: k.Name, Permissions: perms}, nil
}
