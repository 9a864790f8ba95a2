package apperr

import (
	"fmt"
	"time"
)

// The constructors: every *Error is made here, so that a code always
// comes with its status.

// New is an error of any code with the given status.
func New(status int, code Code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a well-formed request that is not allowed as sent.
func Invalid(format string, args ...any) *Error {
	return New(400, CodeInvalidRequest, format, args...)
}

// InvalidJSON is a body that is not the JSON object the endpoint takes.
func InvalidJSON(format string, args ...any) *Error {
	return New(400, CodeInvalidJSON, format, args...)
}

// Field is an invalid value of one request field.
func Field(field, format string, args ...any) *Error {
	return &Error{Status: 400, Code: CodeInvalidField, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// UnknownField is a field the endpoint does not take.
func UnknownField(field string) *Error {
	return &Error{Status: 400, Code: CodeUnknownField, Field: field, Message: field + ": not accepted by this endpoint"}
}

// Parameter is a malformed or out-of-range query parameter.
func Parameter(name, format string, args ...any) *Error {
	return &Error{Status: 400, Code: CodeInvalidParameter, Field: name, Message: name + ": " + fmt.Sprintf(format, args...)}
}

// Unauthorized is a request without valid credentials.
func Unauthorized(format string, args ...any) *Error {
	return New(401, CodeUnauthorized, format, args...)
}

// Forbidden is an authenticated caller not allowed to do this.
func Forbidden(format string, args ...any) *Error {
	return New(403, CodeForbidden, format, args...)
}

// NotFound is an unknown resource, named by what.
func NotFound(what string) *Error {
	return New(404, CodeNotFound, "%s not found", what)
}

// Conflict is a duplicate; field names the clashing field, if one does.
func Conflict(field, format string, args ...any) *Error {
	return &Error{Status: 409, Code: CodeConflict, Field: field, Message: fmt.Sprintf(format, args...)}
}

// TooMany is a caller that must wait before it tries again.
func TooMany(wait time.Duration, format string, args ...any) *Error {
	e := New(429, CodeTooManyRequests, format, args...)
	e.RetryAfter = wait
	return e
}

// Busy is a server too loaded to answer now; the caller may retry after wait.
func Busy(wait time.Duration, format string, args ...any) *Error {
	e := New(503, CodeUnavailable, format, args...)
	e.RetryAfter = wait
	return e
}

// Gone is an endpoint closed for good (a finished setup wizard).
func Gone(format string, args ...any) *Error {
	return New(410, CodeGone, format, args...)
}
