package orgs_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/orgs"
)

// createProvider adds an OpenID Connect provider to the realm acme, its
// endpoints given so that nothing is fetched.
func createProvider(s *apptest.Server, alias string) {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": alias,
		"providerType": "oidc", "clientId": "c", "clientSecret": "s", "authorizationUrl": "https://idp.test/auth",
		"tokenUrl": "https://idp.test/token", "jwksUrl": "https://idp.test/jwks", "issuer": "https://idp.test"})
	apptest.MustStatus(s.T, r, http.StatusCreated)
}

func ssoPath(slug string) string { return orgsPath + "/" + slug + "/sso-connections" }

func createConnection(s *apptest.Server, slug string, body map[string]any) orgs.SSOConnectionRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, ssoPath(slug), body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	var c orgs.SSOConnectionRep
	r.Decode(s.T, &c)
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, ssoPath(slug)+"/"+c.ID) || !strings.HasPrefix(loc, "http") {
		s.T.Errorf("Location %q", loc)
	}
	return c
}

func listConnections(s *apptest.Server, slug string) []orgs.SSOConnectionRep {
	s.T.Helper()
	r := s.Admin(http.MethodGet, ssoPath(slug), nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var list []orgs.SSOConnectionRep
	r.Decode(s.T, &list)
	return list
}

func TestSSOConnectionCRUD(t *testing.T) {
	s := newServer(t)
	createProvider(s, "corp")
	createProvider(s, "okta")
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})

	// Defaults: enabled, any verified domain, redirect on a matching email.
	c := createConnection(s, "acme", map[string]any{"identityProvider": "corp"})
	if uuid.Validate(c.ID) != nil || c.IdentityProvider != "corp" || !c.Enabled || c.Domain != "ANY" || c.AutoJoin ||
		!c.RedirectWhenEmailMatches || c.HideOnLogin || c.CreatedTimestamp == 0 {
		t.Errorf("created %+v", c)
	}
	d := createConnection(s, "acme", map[string]any{"identityProvider": "okta", "domain": "ACME.test.", "autoJoin": true,
		"enabled": false, "redirectWhenEmailMatches": false, "hideOnLogin": true})
	if d.Domain != "acme.test" || !d.AutoJoin || d.Enabled || d.RedirectWhenEmailMatches || !d.HideOnLogin {
		t.Errorf("created %+v", d)
	}
	if got := listConnections(s, "acme"); len(got) != 2 || got[0] != c || got[1] != d {
		t.Errorf("list %+v", got)
	}
	r := s.Admin(http.MethodGet, ssoPath("acme")+"/"+c.ID, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var got orgs.SSOConnectionRep
	r.Decode(t, &got)
	if got != c {
		t.Errorf("get %+v", got)
	}

	// PUT changes what it names; a GET's answer sent back changes nothing.
	r = s.Admin(http.MethodPut, ssoPath("acme")+"/"+c.ID, map[string]any{"domain": "acme.test", "autoJoin": true})
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &got)
	want := c
	want.Domain, want.AutoJoin = "acme.test", true
	if got != want {
		t.Errorf("updated %+v", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodPut, ssoPath("acme")+"/"+c.ID, got), http.StatusOK)
	if l := listConnections(s, "acme"); l[0] != want {
		t.Errorf("after a round trip %+v", l[0])
	}

	apptest.MustStatus(t, s.Admin(http.MethodDelete, ssoPath("acme")+"/"+d.ID, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, ssoPath("acme")+"/"+d.ID, nil), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, ssoPath("acme")+"/"+d.ID, nil), 404, "not_found", "")
	// The provider stays, free to serve another organization.
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/identity-providers/okta", nil), http.StatusOK)
	createOrg(s, map[string]any{"slug": "bank", "name": "Bank"})
	createConnection(s, "bank", map[string]any{"identityProvider": "okta"})
}

func TestSSOConnectionBadInput(t *testing.T) {
	s := newServer(t)
	createProvider(s, "corp")
	createProvider(s, "okta")
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme", "domains": []any{map[string]any{"name": "acme.test"}}})
	createOrg(s, map[string]any{"slug": "bank", "name": "Bank", "domains": []any{map[string]any{"name": "bank.test"}}})
	c := createConnection(s, "acme", map[string]any{"identityProvider": "corp"})
	one := ssoPath("acme") + "/" + c.ID

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"no provider", http.MethodPost, ssoPath("acme"), map[string]any{}, 400, "invalid_field", "identityProvider"},
		{"unknown provider", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "nope"}, 400, "invalid_field", "identityProvider"},
		{"provider serving another organization", http.MethodPost, ssoPath("bank"), map[string]any{"identityProvider": "corp"}, 409, "conflict", "identityProvider"},
		{"provider serving this organization", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "corp"}, 409, "conflict", "identityProvider"},
		{"another organization's domain", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "okta", "domain": "bank.test"}, 400, "invalid_field", "domain"},
		{"not a domain", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "okta", "domain": "not a domain"}, 400, "invalid_field", "domain"},
		{"lowercase any", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "okta", "domain": "any"}, 400, "invalid_field", "domain"},
		{"mistyped flag", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "okta", "autoJoin": "yes"}, 400, "invalid_field", "autoJoin"},
		{"unknown field", http.MethodPost, ssoPath("acme"), map[string]any{"identityProvider": "okta", "role": "admin"}, 400, "unknown_field", "role"},
		{"unknown organization", http.MethodPost, ssoPath("nope"), map[string]any{"identityProvider": "okta"}, 404, "not_found", ""},
		{"unknown connection", http.MethodGet, ssoPath("acme") + "/" + uuid.NewString(), nil, 404, "not_found", ""},
		{"malformed connection ID", http.MethodGet, ssoPath("acme") + "/x'--", nil, 404, "not_found", ""},
		{"another organization's connection", http.MethodGet, ssoPath("bank") + "/" + c.ID, nil, 404, "not_found", ""},
		{"changed provider", http.MethodPut, one, map[string]any{"identityProvider": "okta"}, 400, "invalid_field", "identityProvider"},
		{"changed id", http.MethodPut, one, map[string]any{"id": uuid.NewString()}, 400, "invalid_field", "id"},
		{"changed creation time", http.MethodPut, one, map[string]any{"createdTimestamp": 1}, 400, "invalid_field", "createdTimestamp"},
		{"update to a domain not the organization's", http.MethodPut, one, map[string]any{"domain": "bank.test"}, 400, "invalid_field", "domain"},
		{"update with a mistyped flag", http.MethodPut, one, map[string]any{"enabled": 1}, 400, "invalid_field", "enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(tc.method, tc.path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	if got := listConnections(s, "acme"); len(got) != 1 || got[0] != c {
		t.Errorf("a refused request changed the connections: %+v", got)
	}
	if got := listConnections(s, "bank"); len(got) != 0 {
		t.Errorf("bank's connections %+v", got)
	}
}

// Deleting the organization or the provider removes the connection, as in
// Keycloak, where the link belongs to the provider.
func TestSSOConnectionCascades(t *testing.T) {
	s := newServer(t)
	createProvider(s, "corp")
	createProvider(s, "okta")
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	createOrg(s, map[string]any{"slug": "bank", "name": "Bank"})
	createConnection(s, "acme", map[string]any{"identityProvider": "corp"})
	createConnection(s, "bank", map[string]any{"identityProvider": "okta"})

	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/identity-providers/corp", nil), http.StatusOK)
	if got := listConnections(s, "acme"); len(got) != 0 {
		t.Errorf("connections of a deleted provider %+v", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/bank", nil), http.StatusNoContent)
	p, err := s.Store.GetIdentityProvider(context.Background(), s.Realm("acme").ID, "okta")
	if err != nil {
		t.Fatalf("the provider of a deleted organization: %v", err)
	}
	if _, err := s.Store.SSOConnectionOfProvider(context.Background(), p.ID); err == nil {
		t.Error("a deleted organization's connection is left")
	}
	// Recreated, the organization has none.
	createOrg(s, map[string]any{"slug": "bank", "name": "Bank"})
	if got := listConnections(s, "bank"); len(got) != 0 {
		t.Errorf("a new organization inherits %+v", got)
	}
}

// Writes are admin events of the organization, addressed by the
// connection's path.
func TestSSOConnectionAdminEvents(t *testing.T) {
	s := newServer(t)
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	createProvider(s, "corp")
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	c := createConnection(s, "acme", map[string]any{"identityProvider": "corp"})
	apptest.MustStatus(t, s.Admin(http.MethodPut, ssoPath("acme")+"/"+c.ID, map[string]any{"autoJoin": true}), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, ssoPath("acme")+"/"+c.ID, nil), http.StatusNoContent)
	r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceTypes=ORGANIZATION", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var evs []struct {
		OperationType, ResourceType, ResourcePath string
	}
	r.Decode(t, &evs)
	want := map[string]bool{}
	for _, e := range evs {
		want[e.OperationType+" "+e.ResourcePath] = true
	}
	for _, k := range []string{"CREATE organizations/acme/sso-connections/" + c.ID, "UPDATE organizations/acme/sso-connections/" + c.ID,
		"DELETE organizations/acme/sso-connections/" + c.ID} {
		if !want[k] {
			t.Errorf("no event %s in %+v", k, evs)
		}
	}
}
