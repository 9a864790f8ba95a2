package app

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/store"
)

func (a *App) groupRoutes(admin routeAdder) {
}

// group loads the realm and the group named by {groupId} in the path.
func (a *App) group(r *http.Request) (*store.Realm, *store.Group, error) {
	realm, err := a.realm(r)
	if err != nil {
		return nil, nil, err
	}
	id := mux.Vars(r)["groupId"]
	g, err := a.store.GetGroup(r.Context(), realm.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, notFound("group " + id)
	}
	return realm, g, err
}
