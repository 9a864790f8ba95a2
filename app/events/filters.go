package events

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const defaultEventPageSize = 100

// eventParamError is a 400 naming the query parameter at fault.
func eventParamError(name, format string, args ...any) *apperr.Error {
	e := apperr.New(http.StatusBadRequest, apperr.CodeInvalidParameter, name+": "+format, args...)
	e.Field = name
	return e
}

// eventDate reads dateFrom or dateTo as Unix milliseconds: an ISO 8601 date
// (a UTC day) or an RFC 3339 time. A date as the upper bound takes in its
// whole day.
func eventDate(q url.Values, name string, upper bool) (*int64, error) {
	v := q.Get(name)
	if v == "" {
		return nil, nil
	}
	var ms int64
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.AddDate(0, 0, 1).Add(-time.Millisecond)
		}
		ms = d.UnixMilli()
	} else if t, err := time.Parse(time.RFC3339, v); err == nil {
		ms = t.UnixMilli()
	} else {
		return nil, eventParamError(name, "must be a date (2026-11-21) or an RFC 3339 time (2026-11-21T10:00:00Z)")
	}
	return &ms, nil
}

// eventListParam reads a parameter that may repeat and may hold comma-separated
// values, each of which must pass valid.
func eventListParam(q url.Values, name string, valid func(string) bool, want string) ([]string, error) {
	var out []string
	for _, v := range q[name] {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if !valid(item) {
				return nil, eventParamError(name, "%q is not %s", item, want)
			}
			out = append(out, item)
		}
	}
	return out, nil
}

// eventUUIDParam reads an optional parameter that must be a UUID.
func eventUUIDParam(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if v == "" {
		return "", nil
	}
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return "", eventParamError(name, "must be a UUID")
	}
	return strings.ToLower(v), nil
}

// eventWindow reads dateFrom, dateTo, first and max: a page of
// defaultEventPageSize for a query, but every matching event for an export
// unless max is given.
func eventWindow(q url.Values, export bool, w *store.EventWindow) error {
	var err error
	if w.From, err = eventDate(q, "dateFrom", false); err != nil {
		return err
	}
	if w.To, err = eventDate(q, "dateTo", true); err != nil {
		return err
	}
	if w.From != nil && w.To != nil && *w.From > *w.To {
		return eventParamError("dateFrom", "must not be after dateTo")
	}
	if !export {
		w.First, w.Max, err = httpx.FirstMax(q, defaultEventPageSize)
		return err
	}
	if w.First, err = httpx.IntParam(q.Get("first"), "first", 0, 0, 1<<31-1); err != nil {
		return err
	}
	w.Max, err = httpx.IntParam(q.Get("max"), "max", 0, 1, 1<<31-1)
	return err
}
