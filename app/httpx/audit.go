package httpx

import (
	"context"
	"encoding/json"
	"net/http"
)

// An admin event shows the body of the request it records; an action sent
// without one (an impersonation) gives the event what it did instead.

type auditKey struct{}

type auditNote struct{ rep []byte }

// WithAuditNote makes room in r for the representation its handler gives
// the admin event that records it.
func WithAuditNote(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), auditKey{}, &auditNote{}))
}

// NoteAudit sets v, as JSON, as the representation of the admin event of
// r; without room made by WithAuditNote it does nothing.
func NoteAudit(r *http.Request, v any) {
	n, ok := r.Context().Value(auditKey{}).(*auditNote)
	if !ok {
		return
	}
	if b, err := json.Marshal(v); err == nil {
		n.rep = b
	}
}

// AuditNote is the representation NoteAudit set on r; nil for none.
func AuditNote(r *http.Request) []byte {
	if n, ok := r.Context().Value(auditKey{}).(*auditNote); ok {
		return n.rep
	}
	return nil
}
