package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/store"
)

// newSAML builds the SAML identity provider (the module app/saml) with
// what it takes of the server: the realm lookups, the key rotation
// schedule and the error page.
func (a *App) newSAML() *saml.Service {
	return saml.New(saml.Deps{Store: a.store, Log: a.log, Now: a.now, BaseURL: a.cfg.BaseURL,
		Realm: a.samlRealm, AdminRealm: a.realm, RotationDays: a.samlRotationDays, ErrorPage: a.samlErrorPage})
}

// samlRealm is the enabled realm of a SAML protocol path.
func (a *App) samlRealm(r *http.Request) (*store.Realm, error) {
	realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoRealm
	}
	return realm, err
}

// samlRotationDays is the realm's key rotation period, which its SAML key
// follows as its OIDC keys do.
func (a *App) samlRotationDays(ctx context.Context, realmID string) (int, error) {
	ks, err := a.keySettings(ctx, realmID)
	if err != nil {
		return 0, err
	}
	return ks.RotationDays, nil
}

// samlErrorPage is the error page of the SAML endpoints, in the realm's
// theme when there is a realm.
func (a *App) samlErrorPage(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error) {
	if realm != nil {
		r = withRealm(r, realm)
	}
	a.renderPageError(w, r, err)
}
