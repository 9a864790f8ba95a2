package httpx

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"
)

// secretPathVars are the route variables that carry a credential in the
// path (an organization invitation's token).
var secretPathVars = []string{"token"}

// LoggedPath is the request's path as logs may show it: the value of each
// route variable that carries a credential replaced by the variable's
// name in braces (/invitations/{token}).
func LoggedPath(r *http.Request) string {
	return RedactPath(r.URL.EscapedPath(), mux.Vars(r))
}

// RedactPath is path, escaped, with the values of the credential-bearing
// variables among vars replaced by their names in braces.
func RedactPath(path string, vars map[string]string) string {
	for _, name := range secretPathVars {
		v := vars[name]
		if v == "" {
			continue
		}
		segments := strings.Split(path, "/")
		for i, s := range segments {
			if u, err := url.PathUnescape(s); err == nil && u == v {
				segments[i] = "{" + name + "}"
			}
		}
		path = strings.Join(segments, "/")
	}
	return path
}
