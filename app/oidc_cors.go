package app

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// CORS for browser clients of the realm, from their webOrigins. An allowed
// origin is echoed in Access-Control-Allow-Origin; any other gets no CORS
// header at all, so the browser keeps the response from the page. No
// credentials flag: these endpoints take tokens and secrets in headers and
// forms, never cookies.

// corsPolicy says whose web origins may read an endpoint's answers.
type corsPolicy int

const (
	corsRealm       corsPolicy = iota // any client of the realm's: public documents
	corsCaller                        // the client the request names, by Basic or client_id
	corsTokenClient                   // the client the bearer token was issued to (azp)
)

// corsEndpoints are the protocol paths, relative to the issuer, that
// browsers may call from another origin.
var corsEndpoints = map[string]corsPolicy{
	pathDiscovery:        corsRealm,
	"/" + pathCerts:      corsRealm,
	"/" + pathToken:      corsCaller,
	"/" + pathIntrospect: corsCaller,
	"/" + pathRevoke:     corsCaller,
	"/" + pathUserinfo:   corsTokenClient,
}

// corsMaxAge is how long, in seconds, a browser may reuse a preflight.
const corsMaxAge = "3600"

// cors answers preflights for the protocol routes and adds the CORS
// headers to answers for allowed origins. It runs before the realm is
// loaded for the request, so it loads it itself, only for requests that
// carry an Origin: same-origin and server-side callers pay nothing. An
// unknown or disabled realm passes through, to be refused as usual.
func (a *App) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := mux.Vars(r)["realm"]
		policy, isCORS := corsEndpoints[strings.TrimPrefix(r.URL.Path, "/realms/"+name)]
		if isCORS {
			// The answer depends on the Origin, also for shared caches of
			// the public documents.
			w.Header().Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		if origin == "" && r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		realm, err := a.protocolRealm(r.Context(), name)
		if err != nil {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				a.log.ErrorContext(r.Context(), "CORS: realm lookup failed", "realm", name, "err", err)
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodOptions {
			// A preflight names no client: any of the realm's origins may
			// ask, and the answer itself is then checked per client.
			if a.corsAllowed(r, realm, corsRealm, origin) {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", "GET, POST")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				h.Set("Access-Control-Max-Age", corsMaxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if isCORS && a.corsAllowed(r, realm, policy, origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
		}
		next.ServeHTTP(w, r)
	})
}

// corsAllowed says whether origin may read the answer under policy.
func (a *App) corsAllowed(r *http.Request, realm *store.Realm, policy corsPolicy, origin string) bool {
	origin = normalizeOrigin(origin)
	if origin == "" {
		return false
	}
	ctx := r.Context()
	var clients []*store.Client
	var err error
	switch policy {
	case corsRealm:
		clients, err = a.store.ListClients(ctx, realm.ID)
	case corsCaller, corsTokenClient:
		id := corsClientID(r, policy)
		if id == "" {
			return false
		}
		var c *store.Client
		c, err = a.store.GetClientByClientID(ctx, realm.ID, id)
		clients = []*store.Client{c}
	}
	if errors.Is(err, store.ErrNotFound) {
		return false
	} else if err != nil {
		a.log.ErrorContext(ctx, "CORS: client lookup failed", "realm", realm.Name, "err", err)
		return false
	}
	return slices.ContainsFunc(clients, func(c *store.Client) bool {
		return c.Enabled && slices.Contains(clientWebOrigins(c), origin)
	})
}

// corsClientID is the client a request names. For the bearer token it is
// read without checking the signature: the CORS header only lets the
// page read the answer, and for a forged token that answer is an error.
func corsClientID(r *http.Request, policy corsPolicy) string {
	if policy == corsCaller {
		if id, _, ok := r.BasicAuth(); ok {
			id, _ = url.QueryUnescape(id) // RFC 6749 §2.3.1 form-encodes it
			return id
		}
		return r.PostFormValue("client_id")
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		token = r.PostFormValue("access_token")
	}
	parsed, err := jwt.ParseSigned(strings.TrimSpace(token), signingAlgorithms)
	if err != nil {
		return ""
	}
	var claims struct {
		AZP string `json:"azp"`
	}
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil {
		return ""
	}
	return claims.AZP
}

// clientWebOrigins are the origins a client allows, "+" standing for the
// origins of its http(s) redirect URIs, as Keycloak reads it.
func clientWebOrigins(c *store.Client) []string {
	var out []string
	for _, o := range c.WebOrigins {
		if o != identity.WebOriginsOfRedirects {
			out = append(out, normalizeOrigin(o))
			continue
		}
		for _, uri := range c.RedirectURIs {
			if u, err := url.Parse(uri); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
				out = append(out, normalizeOrigin(u.Scheme+"://"+u.Host))
			}
		}
	}
	return out
}

// normalizeOrigin lowercases an origin and drops a default port, as
// browsers send it; "" for anything that is not a http(s) origin, such as
// the opaque origin "null".
func normalizeOrigin(origin string) string {
	u, err := url.Parse(strings.ToLower(origin))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	host := u.Host
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return u.Scheme + "://" + host
}
