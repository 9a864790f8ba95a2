package httpx

import "net/http"

// The answers every admin resource gives, and the one way its updates are
// read. Handlers end with one of these, so a reader sees the status at a
// glance: OK, Created with its Location, NoContent after a deletion, List
// or ListPage for a collection.

// OK answers v as JSON with 200.
func OK(w http.ResponseWriter, v any) error {
	WriteJSON(w, http.StatusOK, v)
	return nil
}

// Created answers a new resource, v, with 201 and its URL in Location.
func Created(w http.ResponseWriter, location string, v any) error {
	w.Header().Set("Location", location)
	WriteJSON(w, http.StatusCreated, v)
	return nil
}

// NoContent answers 204, as a deletion does.
func NoContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Reps shows each item with rep. The result is never nil, so a collection
// without items is the JSON array [], never null.
func Reps[T, R any](items []T, rep func(T) R) []R {
	out := make([]R, len(items))
	for i, item := range items {
		out[i] = rep(item)
	}
	return out
}

// List answers items, each shown with rep, as a JSON array with 200.
func List[T, R any](w http.ResponseWriter, items []T, rep func(T) R) error {
	return OK(w, Reps(items, rep))
}

// ListPage answers one page of a collection: it reads the page the query
// asks for (first and max, max defaulting to def: see FirstMax), loads it
// with load, and answers it as List does. A bad parameter is a 400 before
// anything is loaded.
func ListPage[T, R any](w http.ResponseWriter, r *http.Request, def int, load func(first, max int) ([]T, error), rep func(T) R) error {
	first, max, err := FirstMax(r.URL.Query(), def)
	if err != nil {
		return err
	}
	items, err := load(first, max)
	if err != nil {
		return err
	}
	return List(w, items, rep)
}

// ReadUpdate reads the body of a PUT or PATCH and applies it, as Update
// does, to current, the resource as the API shows it: PUT replaces each
// field the body names, PATCH merges the body in (RFC 7386). defaults names
// the fields an update may change and what each returns to when set to
// null (nil: the type's zero value). The result is decoded strictly into a
// U, so a mistyped field is a 400 naming it.
func ReadUpdate[U any](r *http.Request, current any, defaults map[string]any) (U, error) {
	var upd U
	body, err := ReadBody(r)
	if err != nil {
		return upd, err
	}
	fields, err := AsJSONMap(current, defaults)
	if err != nil {
		return upd, err
	}
	err = Update(body, fields, defaults, r.Method == http.MethodPatch, &upd)
	return upd, err
}
