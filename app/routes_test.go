package app

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/authz"
)

// Every route the router serves is in the table with the access it asks,
// and the table holds nothing the router does not serve: a route
// registered around the table fails here.
func TestRouteTableDeclaresAccess(t *testing.T) {
	s := newTestServer(t)
	served := map[string]bool{}
	err := s.app.router.Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := r.GetPathTemplate()
		if err != nil {
			t.Errorf("a route without a path template: %v", err)
			return nil
		}
		methods, err := r.GetMethods()
		if err != nil {
			t.Errorf("route %s accepts every method: name them", tpl)
			return nil
		}
		for _, m := range methods {
			served[m+" "+tpl] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]access{}
	for _, rt := range s.app.table {
		key := rt.method + " " + rt.path
		if _, dup := declared[key]; dup {
			t.Errorf("%s is in the table twice", key)
		}
		declared[key] = rt.access
		if !served[key] {
			t.Errorf("%s is in the table but not served", key)
		}
		switch rt.access.kind {
		case accessPublic, accessUser, accessSCIM, accessConsole, accessSetup:
			if rt.access.perm != "" {
				t.Errorf("%s is %s but names the permission %s", key, rt.access.kind, rt.access.perm)
			}
		case accessAdmin:
			if rt.access.perm != authz.Authenticated && !slices.Contains(authz.All, rt.access.perm) {
				t.Errorf("%s asks for the unknown permission %q", key, rt.access.perm)
			}
		default:
			t.Errorf("%s has no access declared", key)
		}
	}
	for key := range served {
		if _, ok := declared[key]; !ok {
			t.Errorf("%s is served but not in the table: register it in routes.go with its access", key)
		}
	}
	// Everything under /admin but the login, the acceptance of an
	// organization's invitation (by the invited user), the client SDK's
	// posts of continuous verification (by the signed-in user) and the
	// public API document is an admin route.
	userRoutes := []string{"POST /admin/realms/{realm}/organizations/{slug}/invitations/{token}/accept",
		"POST /admin/realms/{realm}/continuous-verification/device-posture",
		"POST /admin/realms/{realm}/continuous-verification/network-context",
		"POST /admin/realms/{realm}/continuous-verification/behavioral/samples"}
	for key, acc := range declared {
		_, path, _ := strings.Cut(key, " ")
		userRoute := slices.Contains(userRoutes, key) && acc.kind == accessUser
		document := slices.Contains([]string{pathOpenAPI, pathOpenAPIJSON, pathOpenAPIYAML}, path) && key[:4] == "GET "
		if strings.HasPrefix(path, "/admin/") && key != "POST /admin/auth/login" && !userRoute && !document && acc.kind != accessAdmin {
			t.Errorf("%s is %s, want an admin route", key, acc.kind)
		}
	}
}

// Every admin route answers 401 without credentials, with a garbage one
// and with another realm's API key (a service account's, or a named admin
// key confined there), and 403 to a credential holding every permission
// but the one it asks or only an unrelated one, whether an admin's token,
// a named admin API key, or a service account's API key (which outside a
// realm is no credential: 401); every route of a signed-in person answers an API
// caller without credentials 401.
func TestRoutePermissionsEnforced(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	s.createRealm("acme")
	s.createRealm("beta")
	userID := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	realmAll := realmPermissions()
	accounts := 0
	apiKey := func(realm string, perms []authz.Permission) string {
		accounts++
		r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/service-accounts", map[string]any{
			"name": fmt.Sprintf("caller-%d", accounts), "adminPermissions": permNames(perms)})
		mustStatus(t, r, http.StatusCreated)
		r = s.admin(http.MethodPost, "/admin/realms/"+realm+"/service-accounts/"+r.object(t)["id"].(string)+"/api-keys", map[string]any{})
		mustStatus(t, r, http.StatusCreated)
		return authBearer(r.object(t)["apiKey"].(string))
	}
	otherRealmKey := apiKey("beta", realmAll)
	namedKey := func(realm string, perms []string) string {
		accounts++
		body := map[string]any{"name": fmt.Sprintf("caller-%d", accounts), "permissions": perms}
		if realm != "" {
			body["realm"] = realm
		}
		r := s.admin(http.MethodPost, "/admin/api-keys", body)
		mustStatus(t, r, http.StatusCreated)
		return authBearer(r.object(t)["apiKey"].(string))
	}
	otherRealmNamedKey := namedKey("beta", permNames(realmAll))
	namedLacking := map[authz.Permission]string{}
	garbage := []string{"Authorization: Bearer garbage", "X-Admin-API-Key: garbage", "Authorization: Basic cm9vdDpyb290",
		"Authorization: Bearer idp_0123456789ab_" + strings.Repeat("A", 43), "Authorization: Bearer " + uuid.NewString() + ".forged"}
	keysLacking := map[authz.Permission]string{}
	keyLacking := func(p authz.Permission) string {
		if _, ok := keysLacking[p]; !ok {
			keysLacking[p] = apiKey("acme", slices.DeleteFunc(slices.Clone(realmAll), func(q authz.Permission) bool { return q == p }))
		}
		return keysLacking[p]
	}
	// An unrelated permission: a read of another area.
	unrelated := func(p authz.Permission) authz.Permission {
		if p == authz.EventsRead {
			return authz.SessionsRead
		}
		return authz.EventsRead
	}
	onlyTokens, onlyKeys := map[authz.Permission]string{}, map[authz.Permission]string{}
	for _, q := range []authz.Permission{authz.EventsRead, authz.SessionsRead} {
		onlyTokens[q] = authBearer(authLoginFor(t, s, []authz.Permission{q}))
		onlyKeys[q] = apiKey("acme", []authz.Permission{q})
	}

	// One token per permission left out, each signed in for all the others.
	lacking := map[authz.Permission]string{}
	tokenLacking := func(p authz.Permission) string {
		if tok, ok := lacking[p]; ok {
			return tok
		}
		r := s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": authTestAdminUser,
			"password": authTestAdminPassword, "permissions": authz.Names(authz.Everything().Without(p))})
		mustStatus(t, r, http.StatusOK)
		var body struct {
			AccessToken string   `json:"accessToken"`
			Permissions []string `json:"permissions"`
		}
		r.decode(t, &body)
		if slices.Contains(body.Permissions, string(p)) || len(body.Permissions) != len(authz.All)-1 {
			t.Fatalf("signed in without %s, the token holds %v", p, body.Permissions)
		}
		lacking[p] = body.AccessToken
		return body.AccessToken
	}

	var admin, user, scim, consolePages, setupRoutes int
	for _, rt := range s.app.table {
		path := authFillPath(t, rt.path, "acme", userID)
		var body any
		if rt.method == http.MethodPost || rt.method == http.MethodPut || rt.method == http.MethodPatch {
			body = map[string]any{}
		}
		switch rt.access.kind {
		case accessAdmin:
			admin++
			for _, cred := range append([]string{"", otherRealmKey, otherRealmNamedKey}, garbage...) {
				if r := s.request(rt.method, path, body, cred); r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), `"unauthorized"`) {
					t.Errorf("%s %s with %q: %d %s, want 401 unauthorized", rt.method, path, cred, r.Status, r.Body)
				}
			}
			if rt.access.perm == authz.Authenticated {
				continue
			}
			q := unrelated(rt.access.perm)
			if _, ok := namedLacking[rt.access.perm]; !ok {
				namedLacking[rt.access.perm] = namedKey("", authz.Names(authz.Everything().Without(rt.access.perm)))
			}
			creds := []string{authBearer(tokenLacking(rt.access.perm)), namedLacking[rt.access.perm], onlyTokens[q], onlyKeys[q]}
			if slices.Contains(realmAll, rt.access.perm) {
				creds = append(creds, keyLacking(rt.access.perm))
			} else {
				creds = append(creds, keyLacking(authz.SystemManage)) // every permission a service account may hold
			}
			for i, cred := range creds {
				r := s.request(rt.method, path, body, cred)
				if i >= 3 && !strings.Contains(rt.path, "{realm}") {
					mustError(t, r, http.StatusUnauthorized, "unauthorized", "") // an API key acts only in a realm
					continue
				}
				mustError(t, r, http.StatusForbidden, "forbidden", "")
				if !strings.Contains(string(r.Body), string(rt.access.perm)) {
					t.Errorf("%s %s: the 403 does not name %s: %s", rt.method, rt.path, rt.access.perm, r.Body)
				}
			}
		case accessUser:
			user++
			r := s.request(rt.method, path, body, "Accept: application/json")
			if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s without credentials: %d %q, want 401 with a Bearer challenge", rt.method, path,
					r.Status, r.Header.Get("WWW-Authenticate"))
			}
		case accessConsole:
			// No console session, or a forged one: the sign-in, and nothing
			// done (a form post is not read at all).
			consolePages++
			for _, cred := range [][]string{nil, {"Cookie: idenplane_console=" + strings.Repeat("A", 120)}} {
				r := s.request(rt.method, path, body, cred...)
				if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/console/login") {
					t.Errorf("%s %s with %q: %d to %q, want 303 to the console's sign-in", rt.method, path, cred, r.Status,
						r.Header.Get("Location"))
				}
			}
		case accessSetup:
			// An administrator exists: the setup wizard is closed, to
			// every credential.
			setupRoutes++
			for _, cred := range append([]string{"", "X-Admin-API-Key: " + testAPIKey}, garbage...) {
				if r := s.request(rt.method, path, body, cred); r.Status != http.StatusGone || !strings.Contains(string(r.Body), `"gone"`) {
					t.Errorf("%s %s with %q: %d %s, want 410 gone", rt.method, path, cred, r.Status, r.Body)
				}
			}
		case accessSCIM:
			scim++
			for _, cred := range [][]string{nil, {"Authorization: Bearer " + uuid.NewString() + ".forged"}} {
				r := s.request(rt.method, path, body, cred...)
				if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), `"status":"401"`) {
					t.Errorf("%s %s with %q: %d %s, want a 401 SCIM error", rt.method, path, cred, r.Status, r.Body)
				}
			}
		}
	}
	if scim == 0 || consolePages == 0 || setupRoutes == 0 {
		t.Fatalf("checked %d SCIM, %d console and %d setup wizard routes", scim, consolePages, setupRoutes)
	}
	if admin < 100 || user < 10 {
		t.Fatalf("checked %d admin and %d user routes: the table is not what this test thinks", admin, user)
	}
	// The control: a token holding the permission opens the route.
	r := s.request(http.MethodGet, "/admin/realms/acme/users", nil, authBearer(tokenLacking(authz.UsersWrite)))
	mustStatus(t, r, http.StatusOK)
}

// A token signed in for fewer permissions is refused the others, and an
// unknown permission is refused at sign-in.
func TestAdminTokenNarrowed(t *testing.T) {
	s := newTestServer(t, authWithAdminUser(nil))
	s.createRealm("acme")
	r := s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": authTestAdminUser,
		"password": authTestAdminPassword, "permissions": []string{"realm:read", "users:read"}})
	mustStatus(t, r, http.StatusOK)
	token := r.object(t)["accessToken"].(string)
	mustStatus(t, s.request(http.MethodGet, "/admin/realms/acme/users", nil, authBearer(token)), http.StatusOK)
	mustStatus(t, s.request(http.MethodGet, "/admin/realms/acme", nil, authBearer(token)), http.StatusOK)
	mustError(t, s.request(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "bob"}, authBearer(token)),
		http.StatusForbidden, "forbidden", "")
	mustError(t, s.request(http.MethodGet, "/admin/realms", nil, authBearer(token)), http.StatusForbidden, "forbidden", "")
	me := s.request(http.MethodGet, "/admin/auth/me", nil, authBearer(token)).object(t)
	if got, _ := me["permissions"].([]any); len(got) != 2 || got[0] != "realm:read" || got[1] != "users:read" {
		t.Fatalf("me %v, want permissions [realm:read users:read]", me)
	}

	r = s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": authTestAdminUser,
		"password": authTestAdminPassword, "permissions": []string{"users:read", "root"}})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "permissions")

	// No permission named is refused: the token would carry no list, which
	// reads as every permission.
	r = s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": authTestAdminUser,
		"password": authTestAdminPassword, "permissions": []string{}})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "permissions")
	if !strings.Contains(string(r.Body), "at least one") {
		t.Fatalf("an empty list refused for another reason: %s", r.Body)
	}
}
