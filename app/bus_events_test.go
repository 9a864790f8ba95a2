package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/bus"
)

// The lifecycle events reach a webhook from where they happen: the admin
// API (a user, a password reset, an NHI credential), the organizations
// (a member added and removed), SCIM (a user provisioned) and the
// sign-in (a success), each once, with its data; a second webhook that
// takes admin.change gets every admin write, SCIM's included.
func TestBusLifecycleEvents(t *testing.T) {
	s, _ := hookTestServer(t)
	typed, changes := newHookReceiver(t), newHookReceiver(t)
	_, typedSecret := s.createHook(t, map[string]any{"url": typed.url,
		"events": []string{"user.*", "credential.*", "login.succeeded", "organization.*", "nhi.*", "scim.*"}})
	changeHook, changeSecret := s.createHook(t, map[string]any{"url": changes.url, "events": []string{"admin.change"}})
	typed.set([]string{typedSecret})
	changes.set([]string{changeSecret})

	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})["id"].(string)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/users/"+alice+"/reset-password",
		map[string]any{"password": "a-long-enough-password"}), http.StatusNoContent)
	if got := s.passwordSignIn("alice", "a-long-enough-password"); got != http.StatusOK {
		t.Fatalf("sign-in: %d", got)
	}
	r := s.admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": "corp", "name": "Corp"})
	mustStatus(t, r, http.StatusCreated)
	org := r.object(t)["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/organizations/corp/members", map[string]any{"userId": alice}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/organizations/corp/members/"+alice, nil), http.StatusNoContent)
	r = s.admin(http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "workload", "name": "worker"})
	mustStatus(t, r, http.StatusCreated)
	nhi := r.object(t)["id"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/nhi/"+nhi+"/credentials", map[string]any{"type": "api_key"})
	mustStatus(t, r, http.StatusCreated)
	credential, apiKey := r.object(t)["id"].(string), r.object(t)["apiKey"].(string)
	r = s.admin(http.MethodPost, "/admin/realms/acme/scim/tokens", map[string]any{"name": "provisioning"})
	mustStatus(t, r, http.StatusCreated)
	scimToken, scimSecret := r.object(t)["id"].(string), r.object(t)["token"].(string)
	r = s.request(http.MethodPost, "/scim/v2/acme/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"carol"}`,
		"Authorization: Bearer "+scimSecret, "Content-Type: application/scim+json")
	mustStatus(t, r, http.StatusCreated)
	carol := r.object(t)["id"].(string)
	s.deliverAll(t)

	want := []bus.Type{bus.UserCreated, bus.CredentialRotated, bus.LoginSucceeded, bus.OrganizationMemberAdded,
		bus.OrganizationMemberRemoved, bus.NHICredentialIssued, bus.SCIMProvisioned, bus.UserCreated}
	got := typed.deliveries()
	var types []bus.Type
	for _, d := range got {
		types = append(types, d.payload.Type)
	}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	data := func(i int) map[string]any {
		b, _ := json.Marshal(got[i].payload.Data)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	for i, check := range []map[string]any{
		{"userId": alice, "source": "admin"},
		{"userId": alice, "credential": "password", "source": "admin"},
		{"userId": alice, "clientId": "cli", "event": "LOGIN"},
		{"organization": "corp", "userId": alice, "role": "member", "via": "admin"},
		{"organization": "corp", "userId": alice, "username": "alice"},
		{"identityKind": "nhi", "identityId": nhi, "credentialId": credential, "type": "api_key"},
		{"operation": "CREATE", "resourceType": "USER", "id": carol},
		{"userId": carol, "source": "scim"},
	} {
		d := data(i)
		for k, v := range check {
			if d[k] != v {
				t.Errorf("%s: %s = %v, want %v (data %v)", types[i], k, d[k], v, d)
			}
		}
		if got[i].payload.ID == "" || got[i].payload.Realm != "acme" {
			t.Errorf("%s without its ID or realm: %+v", types[i], got[i].payload)
		}
	}
	for _, d := range append(got, changes.deliveries()...) {
		b, _ := json.Marshal(d.payload.Data)
		if strings.Contains(string(b), apiKey) || strings.Contains(string(b), scimSecret) {
			t.Fatalf("an event carries a credential's secret: %s", b)
		}
	}

	// Every admin write, by the admin API or SCIM, is an admin.change
	// (the webhook's own creation, committed before its admin event, the
	// first); the sign-in is not.
	var paths []string
	for _, d := range changes.deliveries() {
		if d.payload.Type != bus.AdminChange {
			t.Fatalf("the admin.change webhook got %s", d.payload.Type)
		}
		m := d.payload.Data.(map[string]any)
		paths = append(paths, m["operation"].(string)+" "+m["resourcePath"].(string))
	}
	wantPaths := []string{"CREATE webhooks/" + changeHook, "CREATE users/" + alice, "ACTION users/" + alice + "/reset-password", "CREATE organizations/" + org,
		"CREATE organizations/corp/members/" + alice, "DELETE organizations/corp/members/" + alice, "CREATE nhi/" + nhi,
		"CREATE nhi/" + nhi + "/credentials/" + credential, "CREATE scim/tokens/" + scimToken, "CREATE users/" + carol}
	if !slices.Equal(paths, wantPaths) {
		t.Fatalf("admin changes\n%q\nwant\n%q", paths, wantPaths)
	}
}
