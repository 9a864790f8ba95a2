package orgs_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// scopedToken signs a user in with the password grant of the client web,
// asking for scope.
func scopedToken(t *testing.T, s *apptest.Server, secret, username, password, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}, "scope": {scope}}
	r := s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("web:"+secret)))
	apptest.MustStatus(t, r, http.StatusOK)
	return r.Object(t)["access_token"].(string)
}

// An owner or admin of an organization manages its members and invitations
// with their own token, and nothing else.
func TestOrganizationAdmins(t *testing.T) {
	s, _ := newMailServer(t)
	secret, alice := passwordClient(t, s)
	createOrg(s, map[string]any{"slug": "acme-corp", "name": "Acme Corp"})
	createOrg(s, map[string]any{"slug": "other", "name": "Other"})
	user := func(name string) string {
		return s.CreateUser("acme", map[string]any{"username": name, "email": name + "@example.test", "password": "correct horse 1"})["id"].(string)
	}
	bob, carol, dave := user("bob"), user("carol"), user("dave")
	addMember(s, "acme-corp", alice, "owner")
	addMember(s, "acme-corp", carol, "admin")
	addMember(s, "acme-corp", bob, "member")
	addMember(s, "other", dave, "owner")
	token := func(name string) string {
		return "Authorization: Bearer " + scopedToken(t, s, secret, name, "correct horse 1", "openid organization")
	}
	owner, admin, member := token("alice"), token("carol"), token("bob")
	noScope := "Authorization: Bearer " + scopedToken(t, s, secret, "alice", "correct horse 1", "openid")
	as := func(who, method, path string, body any) *apptest.Response {
		return s.Request(method, orgsPath+path, body, who)
	}

	// The owner lists, changes and invites; only an administrator adds a
	// user directly, without the user's consent.
	apptest.MustStatus(t, as(owner, http.MethodGet, "/acme-corp/members", nil), http.StatusOK)
	for _, who := range []string{owner, admin} {
		r := as(who, http.MethodPost, "/acme-corp/members", map[string]any{"userId": dave, "role": "member"})
		apptest.MustError(t, r, 403, "forbidden", "")
		if d := r.Object(t)["error_description"]; !strings.Contains(d.(string), "only an administrator adds them directly") {
			t.Fatalf("adding directly: %v", d)
		}
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, orgsPath+"/acme-corp/members", map[string]any{"userId": dave, "role": "admin"}), http.StatusCreated)
	apptest.MustStatus(t, as(owner, http.MethodPut, "/acme-corp/members/"+carol, map[string]any{"role": "owner"}), http.StatusOK)
	apptest.MustStatus(t, as(owner, http.MethodPost, "/acme-corp/invitations", map[string]any{"email": "eve@example.test"}), http.StatusCreated)
	apptest.MustStatus(t, as(owner, http.MethodGet, "/acme-corp/invitations", nil), http.StatusOK)
	// An admin manages members but not owners.
	apptest.MustStatus(t, as(admin, http.MethodPut, "/acme-corp/members/"+bob, map[string]any{"role": "admin"}), http.StatusOK)
	daveAdmin := token("dave")
	apptest.MustStatus(t, as(daveAdmin, http.MethodPut, "/acme-corp/members/"+bob, map[string]any{"role": "member"}), http.StatusOK)
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"make an owner", http.MethodPut, "/acme-corp/members/" + bob, map[string]any{"role": "owner"}},
		{"demote an owner", http.MethodPut, "/acme-corp/members/" + alice, map[string]any{"role": "member"}},
		{"remove an owner", http.MethodDelete, "/acme-corp/members/" + alice, nil},
		{"invite an owner", http.MethodPost, "/acme-corp/invitations", map[string]any{"email": "x@example.test", "role": "owner"}},
	} {
		t.Run("admin may not "+tc.name, func(t *testing.T) {
			apptest.MustError(t, as(daveAdmin, tc.method, tc.path, tc.body), 403, "forbidden", "")
		})
	}

	// Nothing outside their organization's members and invitations.
	for _, tc := range []struct {
		name, who, method, path string
		status                  int
		code                    string
	}{
		{"a member", member, http.MethodGet, "/acme-corp/members", 403, "forbidden"},
		{"a member adding", member, http.MethodPost, "/acme-corp/invitations", 403, "forbidden"},
		{"a token without the scope", noScope, http.MethodGet, "/acme-corp/members", 403, "forbidden"},
		{"another organization", owner, http.MethodGet, "/other/members", 403, "forbidden"},
		{"an unknown organization", owner, http.MethodGet, "/nope/members", 403, "forbidden"},
		{"the organization itself", owner, http.MethodGet, "/acme-corp", 401, "unauthorized"},
		{"its deletion", owner, http.MethodDelete, "/acme-corp", 401, "unauthorized"},
		{"the list of organizations", owner, http.MethodGet, "", 401, "unauthorized"},
		{"domain verification", owner, http.MethodPost, "/acme-corp/verify-domain/initiate", 401, "unauthorized"},
		{"sso connections", owner, http.MethodGet, "/acme-corp/sso-connections", 401, "unauthorized"},
		{"a forged token", "Authorization: Bearer a.b.c", http.MethodGet, "/acme-corp/members", 401, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, as(tc.who, tc.method, tc.path, map[string]any{"domain": "x.test", "email": "y@example.test"}), tc.status, tc.code, "")
		})
	}
	apptest.MustError(t, s.Request(http.MethodGet, "/admin/realms/acme/users", nil, owner), 401, "unauthorized", "")

	// A role taken away takes the power with it, whatever the token says.
	apptest.MustStatus(t, s.Admin(http.MethodPut, orgsPath+"/acme-corp/members/"+dave, map[string]any{"role": "member"}), http.StatusOK)
	apptest.MustError(t, as(daveAdmin, http.MethodGet, "/acme-corp/members", nil), 403, "forbidden", "")
	if got := members(s, "acme-corp", ""); !slices.Equal(got, []string{"alice:owner", "bob:member", "carol:owner", "dave:member"}) {
		t.Errorf("members %v", got)
	}
}
