package nhi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestCreateIdentity(t *testing.T) {
	s := newServer(t)
	alice := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	r := s.Admin(http.MethodPost, nhiPath, map[string]any{"kind": "workload", "name": "billing-worker",
		"description": "bills", "owner": map[string]any{"type": "user", "id": alice},
		"metadata": map[string]any{"team": "payments", "k8s/namespace": "billing"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	var n identityJSON
	r.Decode(t, &n)
	if n.ID == "" || n.Kind != "workload" || n.Name != "billing-worker" || n.Description != "bills" || n.State != "active" ||
		n.ClientID != "billing-worker" || n.ServiceAccountUserID == "" || n.Owner == nil || n.Owner.ID != alice ||
		n.Metadata["k8s/namespace"] != "billing" || n.CreatedTimestamp == 0 || n.LastUsedTimestamp != nil {
		t.Fatalf("created %s", r.Body)
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, nhiPath+"/"+n.ID) {
		t.Errorf("Location %q", loc)
	}
	if got := getIdentity(t, s, n.ID); got.Name != n.Name || got.ServiceAccountUserID != n.ServiceAccountUserID {
		t.Errorf("read back %+v", got)
	}
	// The backing client: confidential, client_credentials only, no secret.
	c := s.Admin(http.MethodGet, "/admin/realms/acme/clients/billing-worker", nil)
	apptest.MustStatus(t, c, http.StatusOK)
	cj := c.Object(t)
	if cj["clientType"] != "CONFIDENTIAL" || cj["serviceAccountsEnabled"] != true || cj["enabled"] != true {
		t.Errorf("backing client %s", c.Body)
	}
	sa := s.Admin(http.MethodGet, "/admin/realms/acme/clients/billing-worker/service-account-user", nil)
	apptest.MustStatus(t, sa, http.StatusOK)
	if sa.Object(t)["id"] != n.ServiceAccountUserID {
		t.Errorf("service-account user %s, identity says %s", sa.Body, n.ServiceAccountUserID)
	}
	// The roles of the identity are its service-account user's.
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "billing"}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/users/"+n.ServiceAccountUserID+"/role-mappings/realm",
		map[string]any{"roleNames": []string{"billing"}}), http.StatusOK)
}

func TestCreateIdentityRefusals(t *testing.T) {
	s := newServer(t)
	createIdentity(t, s, map[string]any{"kind": "service", "name": "taken"})
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}), http.StatusCreated)
	group := s.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "ops"})
	apptest.MustStatus(t, group, http.StatusCreated)
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no name", map[string]any{"kind": "bot"}, 400, "invalid_field", "name"},
		{"no kind", map[string]any{"name": "x1"}, 400, "invalid_field", "kind"},
		{"unknown kind", map[string]any{"kind": "robot", "name": "x1"}, 400, "invalid_field", "kind"},
		{"name with a space", map[string]any{"kind": "bot", "name": "my bot"}, 400, "invalid_field", "name"},
		{"name too short", map[string]any{"kind": "bot", "name": "x"}, 400, "invalid_field", "name"},
		{"name of an identity", map[string]any{"kind": "bot", "name": "taken"}, 409, "conflict", "name"},
		{"name of a client", map[string]any{"kind": "bot", "name": "web"}, 409, "conflict", "name"},
		{"owner of no type", map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"id": "u"}}, 400, "invalid_field", "owner.type"},
		{"owner of another type", map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"type": "team", "id": "u"}}, 400, "invalid_field", "owner.type"},
		{"owner without id", map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"type": "user"}}, 400, "invalid_field", "owner.id"},
		{"unknown owner user", map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"type": "user", "id": uuid.NewString()}}, 400, "invalid_field", "owner.id"},
		{"unknown owner group", map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"type": "group", "id": uuid.NewString()}}, 400, "invalid_field", "owner.id"},
		{"metadata key with a space", map[string]any{"kind": "bot", "name": "x1", "metadata": map[string]any{"a b": "c"}}, 400, "invalid_field", "metadata"},
		{"metadata value not a string", map[string]any{"kind": "bot", "name": "x1", "metadata": map[string]any{"a": 1}}, 400, "invalid_field", "metadata"},
		{"state set at creation", map[string]any{"kind": "bot", "name": "x1", "state": "suspended"}, 400, "unknown_field", "state"},
		{"not an object", `[]`, 400, "invalid_json", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, nhiPath, c.body), c.status, c.code, c.field)
		})
	}
	// Nothing of the refused ones was kept: one identity, and no client x1.
	var list []identityJSON
	s.Admin(http.MethodGet, nhiPath, nil).Decode(t, &list)
	if len(list) != 1 {
		t.Errorf("identities after refusals: %+v", list)
	}
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/clients/x1", nil), http.StatusNotFound)
	// A group owns as well as a user does.
	createIdentity(t, s, map[string]any{"kind": "bot", "name": "x1", "owner": map[string]any{"type": "group", "id": group.Object(t)["id"]}})
}

func TestListIdentities(t *testing.T) {
	s := newServer(t)
	alice := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	for _, n := range []map[string]any{
		{"kind": "service", "name": "api-gateway"},
		{"kind": "device", "name": "sensor-1", "owner": map[string]any{"type": "user", "id": alice}},
		{"kind": "device", "name": "sensor-2"},
		{"kind": "ai_agent", "name": "Support-Agent"},
	} {
		createIdentity(t, s, n)
	}
	suspended := createIdentity(t, s, map[string]any{"kind": "bot", "name": "builder"})
	apptest.MustStatus(t, s.Admin(http.MethodPost, nhiPath+"/"+suspended.ID+"/suspend", nil), http.StatusOK)
	for _, c := range []struct{ query, want string }{
		{"", "Support-Agent api-gateway builder sensor-1 sensor-2"},
		{"?kind=device", "sensor-1 sensor-2"},
		{"?state=suspended", "builder"},
		{"?state=active&kind=bot", ""},
		{"?owner=" + alice, "sensor-1"},
		{"?search=SENS", "sensor-1 sensor-2"},
		{"?search=agent", "Support-Agent"},
		{"?search=%25", ""},
		{"?first=1&max=2", "api-gateway builder"},
	} {
		var list []identityJSON
		r := s.Admin(http.MethodGet, nhiPath+c.query, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &list)
		names := make([]string, len(list))
		for i, n := range list {
			names[i] = n.Name
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("list%s: %q, want %q", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ query, field string }{
		{"?kind=robot", "kind"}, {"?state=gone", "state"}, {"?max=-1", "max"}, {"?first=x", "first"},
	} {
		apptest.MustError(t, s.Admin(http.MethodGet, nhiPath+c.query, nil), 400, "invalid_parameter", c.field)
	}
	apptest.MustError(t, s.Admin(http.MethodGet, "/admin/realms/nope/nhi", nil), 404, "not_found", "")
}

func TestUpdateIdentity(t *testing.T) {
	s := newServer(t)
	alice := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc", "description": "old",
		"metadata": map[string]any{"a": "1"}})
	path := nhiPath + "/" + n.ID
	r := s.Admin(http.MethodPut, path, map[string]any{"description": "new", "owner": map[string]any{"type": "user", "id": alice},
		"metadata": map[string]any{"b": "2"}})
	apptest.MustStatus(t, r, http.StatusOK)
	got := getIdentity(t, s, n.ID)
	if got.Description != "new" || got.Owner == nil || got.Owner.ID != alice || len(got.Metadata) != 1 || got.Metadata["b"] != "2" ||
		got.Name != "svc" || got.Kind != "service" {
		t.Fatalf("after PUT: %+v", got)
	}
	// A field left out stays; null returns it to its default.
	apptest.MustStatus(t, s.Admin(http.MethodPut, path, map[string]any{"owner": nil}), http.StatusOK)
	if got := getIdentity(t, s, n.ID); got.Owner != nil || got.Description != "new" {
		t.Fatalf("after owner null: %+v", got)
	}
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		code       string
		field      string
	}{
		{"name is fixed", path, map[string]any{"name": "other"}, 400, "unknown_field", "name"},
		{"kind is fixed", path, map[string]any{"kind": "bot"}, 400, "unknown_field", "kind"},
		{"state moves by actions", path, map[string]any{"state": "suspended"}, 400, "unknown_field", "state"},
		{"unknown owner", path, map[string]any{"owner": map[string]any{"type": "group", "id": "g"}}, 400, "invalid_field", "owner.id"},
		{"unknown identity", nhiPath + "/" + uuid.NewString(), map[string]any{"description": "x"}, 404, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPut, c.path, c.body), c.status, c.code, c.field)
		})
	}
	if got := getIdentity(t, s, n.ID); got.Description != "new" || got.Owner != nil {
		t.Fatalf("a refused update changed %+v", got)
	}
}

func TestIdentityStates(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "bot", "name": "ci-bot"})
	path := nhiPath + "/" + n.ID
	for _, step := range []struct {
		action, state string
		enabled       bool
	}{
		{"suspend", "suspended", false},
		{"suspend", "suspended", false}, // again: no change
		{"reactivate", "active", true},
		{"reactivate", "active", true},
		{"suspend", "suspended", false},
		{"decommission", "decommissioned", false},
	} {
		r := s.Admin(http.MethodPost, path+"/"+step.action, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		var got identityJSON
		r.Decode(t, &got)
		if got.State != step.state || getIdentity(t, s, n.ID).State != step.state {
			t.Fatalf("%s: state %s, want %s", step.action, got.State, step.state)
		}
		if e := clientEnabled(t, s, "ci-bot"); e != step.enabled {
			t.Fatalf("%s: backing client enabled %v, want %v", step.action, e, step.enabled)
		}
	}
	// Decommissioning is final: every later write is a 409.
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, path + "/reactivate", nil},
		{http.MethodPost, path + "/suspend", nil},
		{http.MethodPost, path + "/decommission", nil},
		{http.MethodPut, path, map[string]any{"description": "x"}},
		{http.MethodDelete, path, nil},
	} {
		apptest.MustError(t, s.Admin(w.method, w.path, w.body), http.StatusConflict, "invalid_state", "")
	}
	if got := getIdentity(t, s, n.ID); got.State != "decommissioned" || got.Description != "" {
		t.Fatalf("after refused writes: %+v", got)
	}
	// Its name stays taken.
	apptest.MustError(t, s.Admin(http.MethodPost, nhiPath, map[string]any{"kind": "bot", "name": "ci-bot"}), 409, "conflict", "name")
	for _, action := range []string{"suspend", "reactivate", "decommission"} {
		apptest.MustError(t, s.Admin(http.MethodPost, nhiPath+"/"+uuid.NewString()+"/"+action, nil), 404, "not_found", "")
	}
}

func TestDeleteIdentity(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "device", "name": "cam-7"})
	apptest.MustStatus(t, s.Admin(http.MethodDelete, nhiPath+"/"+n.ID, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, nhiPath+"/"+n.ID, nil), 404, "not_found", "")
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/clients/cam-7", nil), http.StatusNotFound)
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/users/"+n.ServiceAccountUserID, nil), http.StatusNotFound)
	apptest.MustError(t, s.Admin(http.MethodDelete, nhiPath+"/"+n.ID, nil), 404, "not_found", "")
	// The name is free again.
	createIdentity(t, s, map[string]any{"kind": "device", "name": "cam-7"})
}

// Every write is an admin event of resource type NHI; the state changes
// are actions.
func TestIdentityAdminEvents(t *testing.T) {
	s := newServer(t)
	n := createIdentity(t, s, map[string]any{"kind": "service", "name": "svc"})
	path := nhiPath + "/" + n.ID
	apptest.MustStatus(t, s.Admin(http.MethodPut, path, map[string]any{"description": "d"}), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPost, path+"/suspend", nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPost, path+"/decommission", nil), http.StatusOK)
	r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=NHI", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var events []struct {
		OperationType string `json:"operationType"`
		ResourcePath  string `json:"resourcePath"`
	}
	r.Decode(t, &events)
	var got []string
	for _, e := range events {
		got = append(got, e.OperationType+" "+e.ResourcePath)
	}
	want := []string{"ACTION nhi/" + n.ID + "/decommission", "ACTION nhi/" + n.ID + "/suspend", "UPDATE nhi/" + n.ID, "CREATE nhi/" + n.ID}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("admin events %v, want %v", got, want)
	}
}
