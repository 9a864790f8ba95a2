package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
)

// authenticateNamedKey admits a named admin API key (app/adminkeys) with
// its permissions; one confined to a realm acts on that realm's routes
// alone, by the rule of a service account's key (confiningRealm).
func (a *App) authenticateNamedKey(r *http.Request, key string) (*adminPrincipal, error) {
	k, perms, err := a.adminKeys.Authenticate(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if k.RealmID != "" {
		realm, err := a.confiningRealm(r)
		if err != nil {
			return nil, err
		}
		if realm.ID != k.RealmID {
			return nil, apperr.Unauthorized("admin API key %s acts only in its own realm", k.Name)
		}
	}
	return &adminPrincipal{Kind: principalAPIKey, UserID: k.ID, Username: k.Name, Permissions: perms}, nil
}
