package broker_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// The admin API shows a user's federated identities and removes one; the
// user stays, and the next sign-in through the provider is a first one
// again (here: linked by the trusted, verified email).
func TestAdminFederatedIdentities(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, map[string]any{"trustEmail": true})
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	id := e.acmeUser("bob")["id"].(string)
	path := "/admin/realms/acme/users/" + id + "/federated-identity"
	r := e.s.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var links []map[string]any
	r.Decode(t, &links)
	if len(links) != 1 || links[0]["identityProvider"] != "corp" || links[0]["userId"] != "up-123" ||
		links[0]["userName"] != "bob" || links[0]["email"] != "bob@example.test" {
		t.Fatalf("links %s", r.Body)
	}
	apptest.MustError(t, e.s.Admin(http.MethodDelete, path+"/nope", nil), 404, "not_found", "")
	apptest.MustStatus(t, e.s.Admin(http.MethodDelete, path+"/corp", nil), http.StatusNoContent)
	apptest.MustError(t, e.s.Admin(http.MethodDelete, path+"/corp", nil), 404, "not_found", "")
	r = e.s.Admin(http.MethodGet, path, nil)
	if strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("after delete: %s", r.Body)
	}
	apptest.MustError(t, e.s.Admin(http.MethodGet, "/admin/realms/acme/users/nope/federated-identity", nil), 404, "not_found", "")
	if claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t))); claims["sub"] != id {
		t.Fatalf("signed in as %v, want %v", claims["sub"], id)
	}
}

// With storeToken, the upstream's token response is kept (sealed) and the
// application reads it with the user's access token, when the user holds
// the realm role read-token (directly or through a group); without
// storeToken, nothing is kept.
func TestStoredUpstreamToken(t *testing.T) {
	for _, keep := range []bool{true, false} {
		f := newFakeUpstream(t)
		e := newFakeEnv(t, f, map[string]any{"storeToken": keep})
		claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
		read := func() *apptest.Response {
			return e.s.Request(http.MethodGet, "/realms/acme/broker/corp/token", nil, "Authorization: Bearer "+e.accessToken)
		}
		if !keep {
			apptest.MustError(t, read(), 404, "not_found", "")
			continue
		}
		// Without the role: refused, whatever the token.
		apptest.MustError(t, read(), 403, "forbidden", "")
		user := claims["sub"].(string)
		apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "read-token"}), http.StatusCreated)
		// Through a group.
		g := e.s.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "token-readers"})
		apptest.MustStatus(t, g, http.StatusCreated)
		group := g.Object(t)["id"].(string)
		apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/groups/"+group+"/role-mappings/realm",
			map[string]any{"roleNames": []string{"read-token"}}), http.StatusOK)
		apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/users/"+user+"/groups/"+group, nil), http.StatusOK)
		r := read()
		apptest.MustStatus(t, r, http.StatusOK)
		var tok map[string]any
		if err := json.Unmarshal(r.Body, &tok); err != nil {
			t.Fatal(err)
		}
		if at, _ := tok["access_token"].(string); len(at) < 4 || at[:3] != "at-" || tok["id_token"] == nil {
			t.Fatalf("stored token %s", r.Body)
		}
		apptest.MustStatus(t, e.s.Request(http.MethodGet, "/realms/acme/broker/corp/token", nil), http.StatusUnauthorized)
		apptest.MustStatus(t, e.s.Request(http.MethodGet, "/realms/acme/broker/corp/token", nil, "Authorization: Bearer forged"), http.StatusUnauthorized)
		// Out of the group, the role is gone, and so is the read.
		apptest.MustStatus(t, e.s.Admin(http.MethodDelete, "/admin/realms/acme/users/"+user+"/groups/"+group, nil), http.StatusOK)
		apptest.MustError(t, read(), 403, "forbidden", "")
	}
}
