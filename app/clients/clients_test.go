package clients_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
)

const acme = "/admin/realms/acme/clients"

// The answers that name what a path addresses: the Location of a new
// client, and each 404, which names the first of realm, client and linked
// scope that the realm does not have.
func TestAnswersNameThePath(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	r := s.Admin(http.MethodPost, acme, map[string]any{"clientId": "web", "clientType": "PUBLIC"})
	apptest.MustStatus(t, r, http.StatusCreated)
	if got, want := r.Header.Get("Location"), apptest.BaseURL+acme+"/web"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	const scope = "00000000-0000-4000-8000-000000000000"
	for _, tc := range []struct{ method, path, want string }{
		{http.MethodGet, "/admin/realms/nope/clients/web", "realm nope not found"},
		{http.MethodGet, acme + "/nope", "client nope not found"},
		{http.MethodDelete, acme + "/nope", "client nope not found"},
		{http.MethodGet, acme + "/nope/default-client-scopes", "client nope not found"},
		{http.MethodGet, acme + "/web/service-account-user",
			"client web has no service-account user: its grantTypes do not include client_credentials"},
		{http.MethodDelete, acme + "/web/optional-client-scopes/" + scope,
			"client scope " + scope + " is not a optional scope of client web"},
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

// A confidential client's secret is in the answers to create and
// regenerate-secret only, a new one each time; a client with the
// client_credentials grant has its service-account user, shown as the
// users' API shows a user.
func TestSecretShownOnceAndServiceAccount(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	r := s.Admin(http.MethodPost, acme, map[string]any{"clientId": "svc", "grantTypes": []string{"client_credentials"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	first, _ := r.Object(t)["secret"].(string)
	if first == "" {
		t.Fatalf("create answered no secret: %s", r.Body)
	}
	r = s.Admin(http.MethodGet, acme+"/svc", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if _, ok := r.Object(t)["secret"]; ok {
		t.Errorf("GET shows the secret: %s", r.Body)
	}
	r = s.Admin(http.MethodPost, acme+"/svc/regenerate-secret", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if second, _ := r.Object(t)["secret"].(string); second == "" || second == first {
		t.Errorf("regenerate-secret answered secret %q after %q", second, first)
	}

	r = s.Admin(http.MethodGet, acme+"/svc/service-account-user", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	sa := r.Object(t)
	if sa["username"] != "service-account-svc" || sa["id"] == nil || sa["enabled"] != true {
		t.Errorf("service-account user %s", r.Body)
	}
	user := s.Admin(http.MethodGet, "/admin/realms/acme/users/"+sa["id"].(string), nil)
	apptest.MustStatus(t, user, http.StatusOK)
	if !bytes.Equal(r.Body, user.Body) {
		t.Errorf("service-account user %s, as a user %s", r.Body, user.Body)
	}
}

// The realm export writes a client's service-account user with its roles
// by name, after the fields the API shows, in this order.
func TestExportWritesTheServiceAccount(t *testing.T) {
	s := realapp.New(t)
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPost, acme, map[string]any{"clientId": "svc",
		"grantTypes": []string{"client_credentials"}}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "reader"}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, acme+"/svc/roles", map[string]any{"name": "write"}), http.StatusCreated)
	sa := s.Admin(http.MethodGet, acme+"/svc/service-account-user", nil).Object(t)
	user := "/admin/realms/acme/users/" + sa["id"].(string) + "/role-mappings"
	apptest.MustStatus(t, s.Admin(http.MethodPost, user+"/realm", map[string]any{"roleNames": []string{"reader"}}), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPost, user+"/clients/svc", map[string]any{"roleNames": []string{"write"}}), http.StatusOK)

	r := s.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var export struct {
		Clients []map[string]json.RawMessage `json:"clients"`
	}
	r.Decode(t, &export)
	for _, c := range export.Clients {
		if string(c["clientId"]) != `"svc"` {
			continue
		}
		var got bytes.Buffer
		if err := json.Compact(&got, c["serviceAccount"]); err != nil {
			t.Fatal(err)
		}
		want := `{"id":"` + sa["id"].(string) + `","username":"service-account-svc","enabled":true,"createdTimestamp":` +
			jsonNumber(t, sa["createdTimestamp"]) + `,"realmRoles":["reader"],"clientRoles":{"svc":["write"]}}`
		if got.String() != want {
			t.Errorf("serviceAccount\n%s\nwant\n%s", got.String(), want)
		}
		return
	}
	t.Fatalf("export has no client svc: %s", r.Body)
}

func jsonNumber(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
