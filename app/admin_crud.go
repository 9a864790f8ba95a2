package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The loaders of the admin resources a path names. The answers themselves
// (OK, Created, NoContent, List, ListPage) and the reading of updates
// (ReadUpdate) are in package httpx.

// getter is a store lookup of one resource by its parent's ID (a realm's,
// a client scope's) and its own ID or name.
type getter[T any] func(ctx context.Context, parentID, id string) (T, error)

// pathChild loads, with get, the child of parentID that the path variable
// key names; an unknown one is a 404 that names it: "<what> <id>".
func pathChild[T any](r *http.Request, key, what, parentID string, get getter[T]) (T, error) {
	id := mux.Vars(r)[key]
	v, err := get(r.Context(), parentID, id)
	if errors.Is(err, store.ErrNotFound) {
		var none T
		return none, apperr.NotFound(what + " " + id)
	}
	return v, err
}

// realmChild loads the path's realm, then the resource of it that the path
// variable key names, as pathChild does. An unknown realm is the 404.
func realmChild[T any](a *App, r *http.Request, key, what string, get getter[T]) (*store.Realm, T, error) {
	realm, err := a.realm(r)
	if err != nil {
		var none T
		return nil, none, err
	}
	v, err := pathChild(r, key, what, realm.ID, get)
	return realm, v, err
}
