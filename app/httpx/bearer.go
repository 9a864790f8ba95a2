package httpx

import (
	"net/http"
	"strings"
)

// BearerToken is the token of an Authorization: Bearer header, "" for none.
func BearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
