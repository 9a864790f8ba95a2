package nhi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// A service account's API key at the admin API: the permissions granted,
// in its own realm, and nothing more.
func TestServiceAccountAdminPermissions(t *testing.T) {
	s := newServer(t)
	s.CreateRealm("beta")
	r := s.Admin(http.MethodPost, saPath, map[string]any{"name": "automation", "adminPermissions": []string{"nhi:write", "users:read"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	var sa identityJSON
	r.Decode(t, &sa)
	r = s.Admin(http.MethodPost, saPath+"/"+sa.ID+"/api-keys", map[string]any{})
	apptest.MustStatus(t, r, http.StatusCreated)
	key := r.Object(t)["apiKey"].(string)
	keyID := r.Object(t)["id"].(string)
	as := func(method, path string, body any) *apptest.Response {
		return s.Request(method, path, body, "Authorization: Bearer "+key)
	}
	apptest.MustStatus(t, as(http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	apptest.MustError(t, as(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "eve"}), 403, "forbidden", "")
	apptest.MustError(t, as(http.MethodGet, "/admin/realms/acme/clients", nil), 403, "forbidden", "")
	apptest.MustError(t, as(http.MethodGet, "/admin/realms/beta/users", nil), 401, "unauthorized", "")
	apptest.MustError(t, as(http.MethodGet, "/admin/realms", nil), 401, "unauthorized", "")
	apptest.MustError(t, as(http.MethodGet, "/admin/realms/nope/users", nil), 401, "unauthorized", "")
	apptest.MustError(t, s.Request(http.MethodGet, "/admin/realms/acme/users", nil, "Authorization: Bearer "+key+"x"), 401, "unauthorized", "")

	// It may manage identities, but grant none a permission it lacks, its
	// own account included.
	apptest.MustStatus(t, as(http.MethodPost, saPath, map[string]any{"name": "reader", "adminPermissions": []string{"users:read"}}), http.StatusCreated)
	apptest.MustError(t, as(http.MethodPost, saPath, map[string]any{"name": "writer", "adminPermissions": []string{"users:write"}}), 403, "forbidden", "")
	apptest.MustError(t, as(http.MethodPut, saPath+"/"+sa.ID, map[string]any{"adminPermissions": []string{"nhi:write", "users:read", "roles:write"}}),
		403, "forbidden", "")
	apptest.MustStatus(t, as(http.MethodPut, saPath+"/"+sa.ID, map[string]any{"description": "ci"}), http.StatusOK)
	if got := getIdentity(t, s, sa.ID); len(got.AdminPermissions) != 2 {
		t.Fatalf("permissions after its own update %v", got.AdminPermissions)
	}
	// Nor issue or rotate a credential of an account that holds more: whoever
	// holds it acts with that account's permissions.
	r = s.Admin(http.MethodPost, saPath, map[string]any{"name": "admin-bot", "adminPermissions": []string{"users:read", "users:write"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	wider := r.Object(t)["id"].(string)
	r = s.Admin(http.MethodPost, nhiPath+"/"+wider+"/credentials", map[string]any{"type": "client_secret"})
	apptest.MustStatus(t, r, http.StatusCreated)
	widerSecret := r.Object(t)["id"].(string)
	for _, c := range []struct{ name, path string }{
		{"an API key", saPath + "/" + wider + "/api-keys"},
		{"a client secret", nhiPath + "/" + wider + "/credentials"},
		{"a rotation", nhiPath + "/" + wider + "/credentials/" + widerSecret + "/rotate"},
		{"a certificate", nhiPath + "/" + wider + "/certificate"},
	} {
		body := map[string]any{}
		if c.name == "a client secret" {
			body["type"] = "client_secret"
		}
		r := as(http.MethodPost, c.path, body)
		apptest.MustError(t, r, 403, "forbidden", "")
		if !strings.Contains(string(r.Body), "admin-bot holds the permission users:write") {
			t.Errorf("%s of a wider account refused for another reason: %s", c.name, r.Body)
		}
	}
	r = s.Admin(http.MethodPost, saPath, map[string]any{"name": "reader-bot", "adminPermissions": []string{"users:read"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, as(http.MethodPost, saPath+"/"+r.Object(t)["id"].(string)+"/api-keys", map[string]any{}), http.StatusCreated)

	// Its writes are recorded as its own.
	log := auditLog(t, s, "?action=UPDATE&identityId="+sa.ID)
	if len(log) != 1 || log[0].Actor.Type != "service-account" || log[0].Actor.Name != "automation" {
		t.Errorf("audit of its update %+v", log)
	}

	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"a system permission", map[string]any{"name": "x1", "adminPermissions": []string{"system:manage"}}},
		{"an unknown permission", map[string]any{"name": "x1", "adminPermissions": []string{"users:delete"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, saPath, c.body), 400, "invalid_field", "adminPermissions")
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath, map[string]any{"kind": "bot", "name": "x2", "adminPermissions": []string{"users:read"}}),
		400, "invalid_field", "adminPermissions")

	// Suspended, then with its key revoked: no longer admitted.
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+sa.ID+"/suspend", nil), http.StatusOK)
	apptest.MustError(t, as(http.MethodGet, "/admin/realms/acme/users", nil), 401, "unauthorized", "")
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+sa.ID+"/reactivate", nil), http.StatusOK)
	apptest.MustStatus(t, as(http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPost, saPath+"/"+sa.ID+"/api-keys/"+keyID+"/revoke", nil), http.StatusOK)
	apptest.MustError(t, as(http.MethodGet, "/admin/realms/acme/users", nil), 401, "unauthorized", "")
}
