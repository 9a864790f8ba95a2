package broker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// A discovery asked for by itself answers the issuer's endpoints and
// stores nothing; the outbound guard refuses a loopback issuer unless it
// is allowed, and an issuer without a discovery document is a message
// at issuer.
func TestDiscoverEndpoints(t *testing.T) {
	up := httptest.NewServer(nil)
	up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"userinfo_endpoint":%q}`,
			up.URL, up.URL+"/auth", up.URL+"/token", up.URL+"/jwks", up.URL+"/userinfo")
	})
	t.Cleanup(up.Close)
	const path = "/admin/realms/acme/identity-providers/discover"

	guarded := realapp.New(t)
	guarded.CreateRealm("acme")
	apptest.MustError(t, guarded.Admin(http.MethodPost, path, map[string]any{"issuer": up.URL}), 400, "invalid_field", "issuer")

	s := realapp.New(t, func(c *app.Config) { c.OutboundAllowed = loopback })
	s.CreateRealm("acme")
	apptest.MustError(t, s.Admin(http.MethodPost, path, map[string]any{}), 400, "invalid_field", "issuer")
	apptest.MustError(t, s.Admin(http.MethodPost, path, map[string]any{"issuer": up.URL + "/nothing"}), 400, "invalid_field", "issuer")
	r := s.Admin(http.MethodPost, path, map[string]any{"issuer": up.URL})
	apptest.MustStatus(t, r, http.StatusOK)
	got := r.Object(t)
	if got["issuer"] != up.URL || got["tokenUrl"] != up.URL+"/token" || got["authorizationUrl"] != up.URL+"/auth" ||
		got["jwksUrl"] != up.URL+"/jwks" || got["userinfoUrl"] != up.URL+"/userinfo" ||
		got["url"] != up.URL+"/.well-known/openid-configuration" {
		t.Fatalf("discovered %v", got)
	}
	var list []map[string]any
	if s.Admin(http.MethodGet, "/admin/realms/acme/identity-providers", nil).Decode(t, &list); len(list) != 0 {
		t.Fatalf("a discovery stored providers: %v", list)
	}
}
