package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/idenplane/idenplane/store"
)

// apiError is an error with a public face: a status, a stable code, a
// description safe to show, and for validation failures the field at fault.
// The cause, if any, is for the log only.
type apiError struct {
	Status      int
	Code        string
	Description string
	Field       string
	Cause       error
}

func (e *apiError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Description, e.Cause)
	}
	return e.Code + ": " + e.Description
}

func (e *apiError) Unwrap() error { return e.Cause }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Description: fmt.Sprintf(format, args...)}
}

// fieldError reports an invalid value of one request field.
func fieldError(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "invalid_field", Field: field,
		Description: field + ": " + fmt.Sprintf(format, args...)}
}

func notFound(what string) *apiError {
	return errorf(http.StatusNotFound, "not_found", "%s not found", what)
}

var errUnauthorized = errorf(http.StatusUnauthorized, "unauthorized", "missing or invalid admin credentials")

type errorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Field       string `json:"field,omitempty"`
}

// classify turns any handler error into its public form. Store sentinels
// that reach here unwrapped by a handler still get the right status.
func classify(err error) *apiError {
	var ae *apiError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, "payload_too_large", "request body exceeds %d bytes", tooBig.Limit)
	case errors.Is(err, store.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: "not_found", Description: "resource not found", Cause: err}
	case errors.Is(err, store.ErrConflict):
		return &apiError{Status: http.StatusConflict, Code: "conflict", Description: "resource already exists", Cause: err}
	default:
		return &apiError{Status: http.StatusInternalServerError, Code: "internal_error", Description: "internal server error", Cause: err}
	}
}

// ErrorMessage is err as a command shows it: a fault of the input in the
// words the API answers with, without the cause behind it (driver text,
// for one), and anything else whole, for the operator to act on.
func ErrorMessage(err error) string {
	if ae := classify(err); ae.Status < http.StatusInternalServerError {
		return ae.Description
	}
	return err.Error()
}

// writeError answers with the one error shape of the API. Server errors are
// logged with their cause and answered without it.
func (a *App) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := classify(err)
	level := slog.LevelDebug
	switch ae.Status {
	case http.StatusInternalServerError, http.StatusServiceUnavailable:
		level = slog.LevelError
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		level = slog.LevelWarn // worth seeing: someone may be probing credentials
	}
	a.log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "status", ae.Status, "err", err)
	if ae.Status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "60")
	}
	if errors.Is(err, errHashBusy) {
		retryAfter(w, hashRetryAfter)
	}
	writeJSON(w, ae.Status, errorBody{Error: ae.Code, Description: ae.Description, Field: ae.Field})
}
