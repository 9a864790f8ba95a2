package broker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// liveServer starts the whole server over HTTP on a loopback port, its
// base URL that address, so that its realms are real OpenID Connect
// providers another realm (or another server) can broker to. With
// allowLoopback, its outbound calls may reach loopback addresses.
func liveServer(t *testing.T, allowLoopback bool, opts ...func(*app.Config)) (*apptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	s := realapp.New(t, append([]func(*app.Config){func(c *app.Config) {
		c.BaseURL = base
		if allowLoopback {
			c.OutboundAllowed = loopback
		}
	}}, opts...)...)
	srv.Config.Handler = s.Handler
	srv.Start()
	t.Cleanup(srv.Close)
	return s, base
}

// createRealm makes a realm, with login and admin events on.
func createRealm(s *apptest.Server, name string) {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": name, "adminEventsEnabled": true, "eventsEnabled": true})
	apptest.MustStatus(s.T, r, http.StatusCreated)
}

// githubProvider is a valid create body of a GitHub provider.
func githubProvider(alias string) map[string]any {
	return map[string]any{"alias": alias, "providerType": "github", "clientId": "gh-client", "clientSecret": "gh-secret-" + alias}
}

// createProvider adds a provider and returns its answer.
func createProvider(s *apptest.Server, realm string, body map[string]any) map[string]any {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms/"+realm+"/identity-providers", body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)
}

// storedProvider reads a provider straight from the store.
func storedProvider(s *apptest.Server, realm, alias string) *store.IdentityProvider {
	s.T.Helper()
	p, err := s.Store.GetIdentityProvider(context.Background(), s.Realm(realm).ID, alias)
	if err != nil {
		s.T.Fatalf("provider %s: %v", alias, err)
	}
	return p
}
