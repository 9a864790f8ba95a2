package roles_test

import (
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
)

// The answers that name what a path addresses: the Location of a new role
// (its name escaped as one segment), and each 404, which names the first
// of realm, holder, client and role that the realm does not have.
func TestAnswersNameThePath(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	s.CreateRealm("other")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	alice := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	bob := s.CreateUser("other", map[string]any{"username": "bob"})["id"].(string)
	g := s.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"})
	apptest.MustStatus(t, g, http.StatusCreated)
	staff := g.Object(t)["id"].(string)

	r := s.Admin(http.MethodPost, "/admin/realms/acme/clients/web/roles", map[string]any{"name": "read token"})
	apptest.MustStatus(t, r, http.StatusCreated)
	if got, want := r.Header.Get("Location"), apptest.BaseURL+"/admin/realms/acme/clients/web/roles/read%20token"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}

	users, groups := "/admin/realms/acme/users/", "/admin/realms/acme/groups/"
	for _, tc := range []struct{ method, path, want string }{
		{http.MethodGet, "/admin/realms/nope/roles", "realm nope not found"},
		{http.MethodGet, "/admin/realms/acme/clients/nope/roles", "client nope not found"},
		{http.MethodGet, "/admin/realms/acme/roles/nope", `role "nope" of realm acme not found`},
		{http.MethodGet, "/admin/realms/acme/clients/web/roles/nope/composites", `role "nope" of client web not found`},
		{http.MethodGet, users + bob + "/role-mappings", "user " + bob + " not found"},
		{http.MethodGet, groups + "nope/role-mappings/realm", "group nope not found"},
		{http.MethodGet, users + alice + "/role-mappings/clients/nope", "client nope not found"},
		{http.MethodGet, groups + staff + "/role-mappings/clients/nope/composite", "client nope not found"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := s.Admin(tc.method, tc.path, nil)
			apptest.MustError(t, r, http.StatusNotFound, "not_found", "")
			var body httpx.ErrorBody
			r.Decode(t, &body)
			if body.Description != tc.want {
				t.Errorf("error_description %q, want %q", body.Description, tc.want)
			}
		})
	}
}
