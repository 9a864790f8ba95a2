package httpx

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
)

// ErrorBody is the JSON shape of every error of the admin, account and
// WebAuthn APIs (docs/api-errors.md).
type ErrorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Field       string `json:"field,omitempty"`
	// Errors lists every field at fault when there are several
	// (apperr.Error.Fields).
	Errors []FieldErrorBody `json:"errors,omitempty"`
}

// FieldErrorBody is one field at fault among several.
type FieldErrorBody struct {
	Field       string `json:"field"`
	Description string `json:"error_description"`
}

// Classify is apperr.From that also knows the transport's own failures: a
// body over its limit.
func Classify(err error) *apperr.Error {
	var e *apperr.Error
	var tooBig *http.MaxBytesError
	if !errors.As(err, &e) && errors.As(err, &tooBig) {
		return apperr.New(http.StatusRequestEntityTooLarge, apperr.CodePayloadTooLarge, "request body exceeds %d bytes", tooBig.Limit)
	}
	return apperr.From(err)
}

// LogFailure logs a failed request at the level its status deserves:
// server faults as errors with their cause, refused credentials and
// throttling as warnings (someone may be probing), the rest for debugging.
func LogFailure(log *slog.Logger, r *http.Request, status int, err error) {
	level := slog.LevelDebug
	switch status {
	case http.StatusInternalServerError, http.StatusServiceUnavailable:
		level = slog.LevelError
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		level = slog.LevelWarn
	}
	log.Log(r.Context(), level, "request failed", "method", r.Method, "path", LoggedPath(r), "status", status, "err", err)
}

// WriteError answers err in the APIs' JSON error shape. A server fault is
// logged with its cause and answered without it.
func WriteError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	e := Classify(err)
	LogFailure(log, r, e.Status, err)
	SetRetryAfter(w, e)
	body := ErrorBody{Error: string(e.Code), Description: e.Message, Field: e.Field}
	for _, f := range e.Fields {
		body.Errors = append(body.Errors, FieldErrorBody{Field: f.Field, Description: f.Message})
	}
	WriteJSON(w, e.Status, body)
}

// SetRetryAfter sets Retry-After from e, unless the handler set it: a
// 429 without a wait of its own says a minute.
func SetRetryAfter(w http.ResponseWriter, e *apperr.Error) {
	switch {
	case w.Header().Get("Retry-After") != "":
	case e.RetryAfter > 0:
		RetryAfter(w, e.RetryAfter)
	case e.Status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "60")
	}
}

// RetryAfter sets the Retry-After header to wait, in whole seconds, at
// least one.
func RetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
}
