package app

import (
	"net/http"
	"net/url"
	"strconv"
)

func intParam(v, name string, def, min, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, &apiError{Status: http.StatusBadRequest, Code: "invalid_parameter", Field: name,
			Description: name + ": must be an integer between " + strconv.Itoa(min) + " and " + strconv.Itoa(max)}
	}
	return n, nil
}

func boolParam(v, name string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, &apiError{Status: http.StatusBadRequest, Code: "invalid_parameter", Field: name,
		Description: name + ": must be true or false"}
}

// firstMax reads Keycloak's paging parameters: first (offset, default 0)
// and max (page size, default def, at most maxPageSize).
func firstMax(q url.Values, def int) (first, max int, err error) {
	if first, err = intParam(q.Get("first"), "first", 0, 0, 1<<31-1); err != nil {
		return 0, 0, err
	}
	if max, err = intParam(q.Get("max"), "max", def, 1, maxPageSize); err != nil {
		return 0, 0, err
	}
	return first, max, nil
}
