package orgs_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/orgs"
)

// members lists "username:role" of an organization's members.
func members(s *apptest.Server, slug, query string) []string {
	s.T.Helper()
	r := s.Admin(http.MethodGet, orgsPath+"/"+slug+"/members"+query, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var list []orgs.MemberRep
	r.Decode(s.T, &list)
	out := []string{}
	for _, m := range list {
		out = append(out, m.Username+":"+m.Role)
	}
	return out
}

// addMember adds a user with a role.
func addMember(s *apptest.Server, slug, userID, role string) {
	s.T.Helper()
	apptest.MustStatus(s.T, s.Admin(http.MethodPost, orgsPath+"/"+slug+"/members",
		map[string]any{"userId": userID, "role": role}), http.StatusCreated)
}

func userID(s *apptest.Server, realm, username string) string {
	s.T.Helper()
	return s.CreateUser(realm, map[string]any{"username": username, "email": username + "@example.test"})["id"].(string)
}

func TestMembers(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	createOrg(s, map[string]any{"slug": "bank", "name": "Bank"})
	alice, bob, carol := userID(s, "acme", "alice"), userID(s, "acme", "bob"), userID(s, "acme", "carol")

	r := s.Admin(http.MethodPost, orgsPath+"/acme/members", map[string]any{"userId": alice, "role": "owner"})
	apptest.MustStatus(t, r, http.StatusCreated)
	var m orgs.MemberRep
	r.Decode(t, &m)
	if m.ID != alice || m.Username != "alice" || m.Email != "alice@example.test" || m.Role != "owner" || !m.Enabled || m.JoinedTimestamp == 0 {
		t.Errorf("added %+v", m)
	}
	if loc := r.Header.Get("Location"); loc != apptest.BaseURL+orgsPath+"/acme/members/"+alice {
		t.Errorf("Location %q", loc)
	}
	// The role defaults to member; a user may belong to several organizations.
	apptest.MustStatus(t, s.Admin(http.MethodPost, orgsPath+"/acme/members", map[string]any{"userId": bob}), http.StatusCreated)
	addMember(s, "acme", carol, "admin")
	addMember(s, "bank", bob, "owner")
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"alice:owner", "bob:member", "carol:admin"}) {
		t.Errorf("members %v", got)
	}
	if got := members(s, "acme", "?first=1&max=1"); !slices.Equal(got, []string{"bob:member"}) {
		t.Errorf("page %v", got)
	}

	r = s.Admin(http.MethodPut, orgsPath+"/acme/members/"+bob, map[string]any{"role": "admin"})
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Decode(t, &m); m.Role != "admin" || m.Username != "bob" {
		t.Errorf("updated %+v", m)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme/members/"+carol, nil), http.StatusNoContent)
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"alice:owner", "bob:admin"}) {
		t.Errorf("after changes %v", got)
	}
	// The user left, and stays a user.
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/users/"+carol, nil), http.StatusOK)
	// Deleting a user ends their memberships; deleting an organization keeps its members.
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/users/"+bob, nil), http.StatusNoContent)
	if got := members(s, "bank", ""); len(got) != 0 {
		t.Errorf("a deleted user's membership: %v", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme", nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/users/"+alice, nil), http.StatusOK)
}

func TestLastOwner(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	alice, bob := userID(s, "acme", "alice"), userID(s, "acme", "bob")
	addMember(s, "acme", alice, "owner")
	addMember(s, "acme", bob, "member")

	apptest.MustError(t, s.Admin(http.MethodDelete, orgsPath+"/acme/members/"+alice, nil), 409, "last_owner", "role")
	apptest.MustError(t, s.Admin(http.MethodPut, orgsPath+"/acme/members/"+alice, map[string]any{"role": "admin"}), 409, "last_owner", "role")
	// An owner re-given the owner role is no change.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme/members/"+alice, map[string]any{"role": "owner"}), http.StatusOK)
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"alice:owner", "bob:member"}) {
		t.Errorf("refused changes changed %v", got)
	}
	// With a second owner, the first may go.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme/members/"+bob, map[string]any{"role": "owner"}), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme/members/"+alice, map[string]any{"role": "member"}), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodDelete, orgsPath+"/acme/members/"+bob, nil), 409, "last_owner", "role")
	apptest.MustStatus(t, s.Admin(http.MethodDelete, orgsPath+"/acme/members/"+alice, nil), http.StatusNoContent)
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"bob:owner"}) {
		t.Errorf("members %v", got)
	}
}

func TestMembersBadInput(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	alice := userID(s, "acme", "alice")
	addMember(s, "acme", alice, "owner")
	s.CreateRealm("other")
	stranger := userID(s, "other", "stranger")
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients",
		map[string]any{"clientId": "svc", "grantTypes": []string{"client_credentials"}}), http.StatusCreated)
	r := s.Admin(http.MethodGet, "/admin/realms/acme/clients/svc/service-account-user", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	robot := r.Object(t)["id"].(string)

	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		status       int
		code, field  string
	}{
		{"unknown organization", http.MethodPost, "/nope/members", map[string]any{"userId": alice}, 404, "not_found", ""},
		{"no user", http.MethodPost, "/acme/members", map[string]any{"role": "member"}, 400, "invalid_field", "userId"},
		{"malformed user", http.MethodPost, "/acme/members", map[string]any{"userId": "x' OR 1=1"}, 400, "invalid_field", "userId"},
		{"unknown user", http.MethodPost, "/acme/members", map[string]any{"userId": uuid.NewString()}, 404, "not_found", "userId"},
		{"another realm's user", http.MethodPost, "/acme/members", map[string]any{"userId": stranger}, 404, "not_found", "userId"},
		{"service account", http.MethodPost, "/acme/members", map[string]any{"userId": robot}, 400, "invalid_field", "userId"},
		{"already a member", http.MethodPost, "/acme/members", map[string]any{"userId": alice}, 409, "conflict", "userId"},
		{"unknown role", http.MethodPost, "/acme/members", map[string]any{"userId": stranger, "role": "king"}, 400, "invalid_field", "role"},
		{"role not a string", http.MethodPost, "/acme/members", map[string]any{"userId": alice, "role": 1}, 400, "invalid_field", "role"},
		{"unknown field", http.MethodPost, "/acme/members", map[string]any{"userId": alice, "roles": []string{"x"}}, 400, "unknown_field", "roles"},
		{"update without role", http.MethodPut, "/acme/members/" + alice, map[string]any{}, 400, "invalid_field", "role"},
		{"update to unknown role", http.MethodPut, "/acme/members/" + alice, map[string]any{"role": "Owner"}, 400, "invalid_field", "role"},
		{"update of a non-member", http.MethodPut, "/acme/members/" + stranger, map[string]any{"role": "admin"}, 404, "not_found", ""},
		{"removal of a non-member", http.MethodDelete, "/acme/members/" + uuid.NewString(), nil, 404, "not_found", ""},
		{"list with a bad page", http.MethodGet, "/acme/members?max=0", nil, 400, "invalid_parameter", "max"},
		{"list of an unknown organization", http.MethodGet, "/nope/members", nil, 404, "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(tc.method, orgsPath+tc.path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"alice:owner"}) {
		t.Errorf("members after refused requests %v", got)
	}
}

// The owner and admin roles read their organization: a caller holding
// organizations:write without organizations:read gives neither, by adding
// a member, changing a role or inviting.
func TestRoleGrantNeedsRead(t *testing.T) {
	s := newServer(t)
	createOrg(s, map[string]any{"slug": "acme", "name": "Acme"})
	alice := userID(s, "acme", "alice")
	key := func(name string, perms ...string) func(method, path string, body any) *apptest.Response {
		r := s.Admin(http.MethodPost, "/admin/realms/acme/service-accounts", map[string]any{"name": name, "adminPermissions": perms})
		apptest.MustStatus(t, r, http.StatusCreated)
		r = s.Admin(http.MethodPost, "/admin/realms/acme/service-accounts/"+r.Object(t)["id"].(string)+"/api-keys", map[string]any{})
		apptest.MustStatus(t, r, http.StatusCreated)
		bearer := "Authorization: Bearer " + r.Object(t)["apiKey"].(string)
		return func(method, path string, body any) *apptest.Response { return s.Request(method, path, body, bearer) }
	}
	writer := key("writer", "organizations:write")
	refused := func(r *apptest.Response, role string) {
		t.Helper()
		apptest.MustError(t, r, http.StatusForbidden, "forbidden", "")
		if want := "the " + role + " role holds the permission organizations:read"; !strings.Contains(string(r.Body), want) {
			t.Errorf("refused for another reason than %q: %s", want, r.Body)
		}
	}
	for _, role := range []string{"owner", "admin"} {
		refused(writer(http.MethodPost, orgsPath+"/acme/members", map[string]any{"userId": alice, "role": role}), role)
		refused(writer(http.MethodPost, orgsPath+"/acme/invitations", map[string]any{"email": "eve@example.test", "role": role}), role)
	}
	apptest.MustStatus(t, writer(http.MethodPost, orgsPath+"/acme/members", map[string]any{"userId": alice}), http.StatusCreated)
	refused(writer(http.MethodPut, orgsPath+"/acme/members/"+alice, map[string]any{"role": "admin"}), "admin")

	manager := key("manager", "organizations:read", "organizations:write")
	apptest.MustStatus(t, manager(http.MethodPut, orgsPath+"/acme/members/"+alice, map[string]any{"role": "admin"}), http.StatusOK)
	if got := members(s, "acme", ""); !slices.Equal(got, []string{"alice:admin"}) {
		t.Fatalf("members %v", got)
	}
}
