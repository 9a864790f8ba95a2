// Package apperr is the one error vocabulary of the server: every failure
// a caller may see is an *Error with a status, a stable code, a message
// safe to show, optionally the request field at fault and how long to
// wait, and a private cause for the log. Handlers and the identity core
// return these; each route group's renderer (JSON, OAuth, HTML page, and
// later SCIM and SAML) decides the shape on the wire.
//
// The package imports nothing of HTTP: a status is a number here, so the
// identity core can speak this vocabulary without depending on a server.
package apperr

import (
	"errors"
	"fmt"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Error is an error with a public face. Message is shown to the caller;
// Cause only ever reaches the log.
type Error struct {
	Status     int
	Code       Code
	Message    string
	Field      string        // the request field at fault, if one is
	RetryAfter time.Duration // when set, the caller may try again after it
	// Key, when set, names the message in the hosted pages' catalogues
	// (ui/messages), with Args for its {0}, {1}…: a page shows that, in its
	// reader's language; an API answers Message, or Key's English text
	// when Message is empty.
	Key  string
	Args []any
	// Fields, when set, are every field at fault, each with its message,
	// for a request checked whole (a user's attributes against the
	// realm's schema): the caller learns of all of them at once.
	Fields []FieldError
	Cause  error
}

// FieldError is one field at fault among several.
type FieldError struct {
	Field   string
	Message string
	Key     string // what a page shows beside the field: a message key; "" for none
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Key
	}
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, msg, e.Cause)
	}
	return string(e.Code) + ": " + msg
}

func (e *Error) Unwrap() error { return e.Cause }

// WithKey is a copy of e that pages show as key, with args (see Key).
func (e *Error) WithKey(key string, args ...any) *Error {
	c := *e
	c.Key, c.Args = key, args
	return &c
}

// WithCause is a copy of e that carries cause for the log.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// databaseRetry is when a caller refused for a database out of reach is
// told to try again.
const databaseRetry = 5 * time.Second

// From turns any error into its public form. Store sentinels that reach a
// renderer unwrapped still get the right status; anything unknown is an
// internal error whose message says nothing of its cause.
func From(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: 404, Code: CodeNotFound, Message: "resource not found", Cause: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: 409, Code: CodeConflict, Message: "resource already exists", Cause: err}
	case store.Unavailable(err):
		e := Busy(databaseRetry, "the database is unavailable; try again shortly")
		e.Cause = err
		return e
	default:
		return &Error{Status: 500, Code: CodeInternal, Message: "internal server error", Cause: err}
	}
}

// Message is err as a command line shows it: a fault of the input in the
// words the API answers with, without the cause behind it (driver text,
// for one), and anything else whole, for the operator to act on.
func Message(err error) string {
	if e := From(err); e.Status < 500 {
		return e.Message
	}
	return err.Error()
}

// Under moves a field error under prefix, as a nested document (a realm
// import's list item) names it; any other error comes back as it is.
func Under(err error, prefix string) error {
	var ae *Error
	if !errors.As(err, &ae) || ae.Field == "" {
		return err
	}
	out := *ae
	out.Field = prefix + "." + ae.Field
	out.Message = prefix + "." + ae.Message
	return &out
}

// IsNotFound says whether err is, or wraps, the store's not-found: the
// row asked for does not exist. Layers that may not import the store (the
// HTTP toolkit) ask here.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
