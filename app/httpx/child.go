package httpx

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
)

// Child loads the resource the route variable varName names with get. A
// resource get does not find is a 404 naming it as what and the ID
// ("custom attribute 42 not found"); any other error comes back as get
// gave it. A route without varName is a wiring mistake: an internal error,
// and get is not called.
func Child[T any](r *http.Request, varName, what string, get func(ctx context.Context, id string) (T, error)) (T, error) {
	id, ok := mux.Vars(r)[varName]
	if !ok {
		var zero T
		return zero, fmt.Errorf("httpx: route %s has no variable %q", LoggedPath(r), varName)
	}
	v, err := get(r.Context(), id)
	if apperr.IsNotFound(err) {
		var zero T
		return zero, apperr.NotFound(what + " " + id)
	}
	return v, err
}

// ChildOf is Child for a getter keyed by its parent's ID and then the
// resource's, as a realm's resources are in the store.
func ChildOf[T any](r *http.Request, parentID, varName, what string, get func(ctx context.Context, parentID, id string) (T, error)) (T, error) {
	return Child(r, varName, what, func(ctx context.Context, id string) (T, error) { return get(ctx, parentID, id) })
}
