package scim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// The scimType values of RFC 7644 §3.12 the server answers with.
const (
	typeInvalidFilter = "invalidFilter"
	typeTooMany       = "tooMany"
	typeUniqueness    = "uniqueness"
	typeMutability    = "mutability"
	typeInvalidSyntax = "invalidSyntax"
	typeInvalidPath   = "invalidPath"
	typeNoTarget      = "noTarget"
	typeInvalidValue  = "invalidValue"
	typeInvalidVers   = "invalidVers"
)

// Schema URNs of the protocol's messages.
const (
	schemaError        = "urn:ietf:params:scim:api:messages:2.0:Error"
	schemaListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	schemaPatchOp      = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	schemaSearch       = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
	schemaBulkRequest  = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"
	schemaBulkResponse = "urn:ietf:params:scim:api:messages:2.0:BulkResponse"
)

// mediaType is the content type of every SCIM answer.
const mediaType = "application/scim+json"

// Error is a SCIM error: a status, a scimType where RFC 7644 names one,
// and a detail safe to show.
type Error struct {
	Status int
	Type   string
	Detail string
	Cause  error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("scim %d %s: %s: %v", e.Status, e.Type, e.Detail, e.Cause)
	}
	return fmt.Sprintf("scim %d %s: %s", e.Status, e.Type, e.Detail)
}

func (e *Error) Unwrap() error { return e.Cause }

// fail is a SCIM error of status and scimType typ.
func fail(status int, typ, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Detail: fmt.Sprintf(format, args...)}
}

func badRequest(typ, format string, args ...any) *Error {
	return fail(http.StatusBadRequest, typ, format, args...)
}

// errorBody is RFC 7644 §3.12's error response.
type errorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail"`
}

// asSCIM is err as a SCIM error: its own, or the apperr error it is (the
// identity core's, the store's, the toolkit's) with the scimType its code
// corresponds to.
func asSCIM(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	e := httpx.Classify(err)
	out := &Error{Status: e.Status, Detail: e.Message, Cause: err}
	switch e.Code {
	case apperr.CodeConflict:
		out.Type = typeUniqueness
	case apperr.CodeInvalidJSON, apperr.CodeUnknownField, apperr.CodeUnsupportedMedia:
		out.Type = typeInvalidSyntax
	case apperr.CodeInvalidField, apperr.CodeInvalidParameter, apperr.CodeInvalidRequest:
		out.Type = typeInvalidValue
	}
	if e.Status >= 500 {
		out.Detail = "internal server error"
	}
	return out
}

// render answers err as a SCIM error. A server fault is logged with its
// cause and answered without it.
func (s *Service) render(w http.ResponseWriter, r *http.Request, err error) {
	e := asSCIM(err)
	httpx.LogFailure(s.deps.Log, r, e.Status, err)

	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="SCIM"`)
	}
	if ae := httpx.Classify(err); ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable {
		httpx.SetRetryAfter(w, ae)
	}
	writeSCIM(w, e.Status, errorBody{Schemas: []string{schemaError}, Status: strconv.Itoa(e.Status), ScimType: e.Type,
		Detail: e.Detail})
}

// writeSCIM answers v as SCIM JSON with status.
func writeSCIM(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
