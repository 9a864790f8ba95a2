package httpx

import (
	"net/url"
	"strconv"

	"github.com/idenplane/idenplane/app/apperr"
)

// Paging defaults of the listings.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// IntParam reads an integer query parameter, def when absent.
func IntParam(v, name string, def, min, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, apperr.Parameter(name, "must be an integer between %d and %d", min, max)
	}
	return n, nil
}

// BoolParam reads a true/false query parameter, false when absent.
func BoolParam(v, name string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, apperr.Parameter(name, "must be true or false")
}

// FirstMax reads Keycloak's paging parameters: first (offset, default 0)
// and max (page size, default def, at most MaxPageSize).
func FirstMax(q url.Values, def int) (first, max int, err error) {
	if first, err = IntParam(q.Get("first"), "first", 0, 0, 1<<31-1); err != nil {
		return 0, 0, err
	}
	if max, err = IntParam(q.Get("max"), "max", def, 1, MaxPageSize); err != nil {
		return 0, 0, err
	}
	return first, max, nil
}
