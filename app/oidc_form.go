package app

import (
	"errors"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
)

// The client endpoints (token, introspection, revocation, device
// authorization) take an application/x-www-form-urlencoded body, and
// answer what goes wrong with it in RFC 6749's error format.

// clientEndpoints are the client endpoints, relative to the issuer.
var clientEndpoints = map[string]bool{
	"/" + pathToken: true, "/" + pathIntrospect: true, "/" + pathRevoke: true, "/" + pathDevice: true,
}

// queryCredentials are the parameters that authenticate a client. RFC
// 6749 §2.3.1 allows them in the request body only: in a URL they end up
// in logs and histories.
var queryCredentials = []string{"client_id", "client_secret", "client_assertion", "client_assertion_type"}

// Shared header values, never changed in place: a handler's Set replaces
// the slice.
var (
	noStoreValue = []string{"no-store"}
	noCacheValue = []string{"no-cache"}
)

// readProtocolForm reads the form of a protocol POST before anything else
// does. Whoever parses a body first gets its error, and the CORS check
// reads client_id from it: a body over the size limit would otherwise
// reach the library as an empty form ("grant_type missing").
func (a *App) readProtocolForm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				if tooBig := (*http.MaxBytesError)(nil); !errors.As(err, &tooBig) {
					err = apperr.Invalid("the request body is not a readable form")
				}
				a.writeOAuthError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkClientForm applies RFC 6749's rules on parameters to a request of
// a client endpoint, whose form readProtocolForm has read: no client
// credentials in the URL (§2.3.1), no parameter twice (§3.1, §3.2). What
// passes is read from the body only, as Keycloak reads it: the library
// would otherwise mix the query in.
func checkClientForm(r *http.Request) error {
	if r.URL.RawQuery != "" {
		query := r.URL.Query()
		for _, name := range queryCredentials {
			if query.Has(name) {
				return apperr.Invalid("%s must be sent in the request body, never in the URL", name)
			}
		}
	}
	if name := repeatedParam(r.PostForm); name != "" {
		return apperr.Invalid("parameter %s is repeated", name)
	}
	r.Form = r.PostForm
	return nil
}

// repeatedParam names a parameter given more than once, the first in
// alphabetical order so that the answer does not vary; "" for none.
func repeatedParam(form map[string][]string) string {
	first := ""
	for name, values := range form {
		if len(values) > 1 && (first == "" || name < first) {
			first = name
		}
	}
	return first
}

// setNoStore marks a response that must not be cached (RFC 6749 §5.1):
// the client endpoints answer with tokens, device codes and what is known
// about a token. Set here, once, for every grant and every answer.
func setNoStore(w http.ResponseWriter) {
	h := w.Header()
	h["Cache-Control"] = noStoreValue
	h["Pragma"] = noCacheValue
}
