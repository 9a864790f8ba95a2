package app

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/store"
)

func (a *App) clientRoutes(admin routeAdder) {
}

// client loads the realm and the client named by {clientId} in the path.
func (a *App) client(r *http.Request) (*store.Realm, *store.Client, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["clientId"]
	c, err := a.store.GetClientByClientID(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, notFound("client " + id)
	}
	return realm, c, err
}
