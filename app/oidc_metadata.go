package app

import (
	"net/http"

	"github.com/gorilla/mux"
)

// metadataAlias serves the OpenID Connect discovery document at the paths
// where OAuth clients look for RFC 8414 authorization server metadata:
// the well-known path with the issuer's path after it (§3.1), and the
// issuer's own well-known path, which Keycloak serves.
func metadataAlias(discovery http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path, r.URL.RawPath = "/realms/"+mux.Vars(r)["realm"]+pathDiscovery, ""
		discovery.ServeHTTP(w, r)
	})
}
