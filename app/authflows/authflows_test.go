package authflows_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/signin"
)

const flowsPath = "/admin/realms/acme/auth-flows"

// newServer is a server with realm acme, which records admin events, an
// OpenID Connect client "web" and a SAML service provider of entity ID
// https://sp.test/metadata.
func newServer(t *testing.T) (*apptest.Server, string) {
	t.Helper()
	s := realapp.New(t)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{"https://web.test/cb"}}), http.StatusCreated)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{"entityId": "https://sp.test/metadata",
		"name": "Wiki", "acsUrl": "https://sp.test/acs"})
	apptest.MustStatus(t, r, http.StatusCreated)
	return s, r.Object(t)["id"].(string)
}

// strict is a browser flow: a password, then TOTP for admins.
func strict(alias string) map[string]any {
	return map[string]any{"alias": alias, "description": "admins give a code", "usage": "browser", "steps": []any{
		map[string]any{"kind": "username-password", "requirement": "required"},
		map[string]any{"kind": "totp", "requirement": "conditional", "condition": map[string]any{"role": "admin"}},
	}}
}

func create(s *apptest.Server, body map[string]any) authflows.FlowRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, flowsPath, body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	var f authflows.FlowRep
	r.Decode(s.T, &f)
	if loc := r.Header.Get("Location"); loc != apptest.BaseURL+flowsPath+"/"+f.ID {
		s.T.Fatalf("Location %q", loc)
	}
	return f
}

func get(s *apptest.Server, id string) authflows.FlowDetail {
	s.T.Helper()
	r := s.Admin(http.MethodGet, flowsPath+"/"+id, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var d authflows.FlowDetail
	r.Decode(s.T, &d)
	return d
}

func assign(s *apptest.Server, flowID, client string, body any) *apptest.Response {
	s.T.Helper()
	return s.Admin(http.MethodPut, flowsPath+"/"+flowID+"/assign-client/"+url.PathEscape(client), body)
}

func TestFlowCRUD(t *testing.T) {
	s, _ := newServer(t)
	f := create(s, strict("strict"))
	want := signin.Definition{ID: f.ID, Alias: "strict", Description: "admins give a code", Usage: signin.UsageBrowser, Steps: []signin.DefinitionStep{
		{Kind: signin.KindUsernamePassword, Requirement: signin.Required},
		{Kind: signin.KindTOTP, Requirement: signin.Conditional, Condition: &signin.Condition{Role: "admin"}},
	}}
	if !reflect.DeepEqual(f.Definition, want) || f.CreatedTimestamp == 0 || f.UpdatedTimestamp != f.CreatedTimestamp {
		t.Fatalf("created %+v", f)
	}
	d := get(s, f.ID)
	if !reflect.DeepEqual(d.FlowRep, f) || d.Clients == nil || len(d.Clients) != 0 {
		t.Fatalf("read back %+v", d)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, flowsPath, strict("strict")), http.StatusConflict, "conflict", "alias")
	other := create(s, strict("other"))

	// PUT replaces; a body read from GET may go back as it is.
	changed := d
	changed.Alias, changed.Description = "stricter", ""
	changed.Steps = append(changed.Steps, signin.DefinitionStep{Kind: signin.KindTerms, Requirement: signin.Required})
	r := s.Admin(http.MethodPut, flowsPath+"/"+f.ID, changed)
	apptest.MustStatus(t, r, http.StatusOK)
	var updated authflows.FlowRep
	r.Decode(t, &updated)
	if updated.Alias != "stricter" || updated.Description != "" || len(updated.Steps) != 3 || updated.CreatedTimestamp != f.CreatedTimestamp {
		t.Fatalf("updated %+v", updated)
	}
	renamed := strict("other")
	apptest.MustError(t, s.Admin(http.MethodPut, flowsPath+"/"+f.ID, renamed), http.StatusConflict, "conflict", "alias")
	renamed["id"] = other.ID
	apptest.MustError(t, s.Admin(http.MethodPut, flowsPath+"/"+f.ID, renamed), http.StatusBadRequest, "invalid_field", "id")
	builtIn := strict("mine")
	builtIn["builtIn"] = true
	apptest.MustError(t, s.Admin(http.MethodPost, flowsPath, builtIn), http.StatusBadRequest, "invalid_field", "builtIn")

	var list []authflows.FlowRep
	r = s.Admin(http.MethodGet, flowsPath, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &list)
	if len(list) != 2 || list[0].Alias != "other" || list[1].Alias != "stricter" {
		t.Fatalf("list %+v", list)
	}

	apptest.MustStatus(t, s.Admin(http.MethodDelete, flowsPath+"/"+f.ID, nil), http.StatusNoContent)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, flowsPath + "/" + f.ID},
		{http.MethodPut, flowsPath + "/" + f.ID},
		{http.MethodDelete, flowsPath + "/" + f.ID},
		{http.MethodPut, flowsPath + "/" + f.ID + "/assign-client/web"},
		{http.MethodGet, "/admin/realms/nope/auth-flows"},
		{http.MethodPost, "/admin/realms/nope/auth-flows/seed-defaults"},
	} {
		var body any
		if c.method == http.MethodPut && !strings.Contains(c.path, "assign-client") {
			body = strict("x")
		}
		apptest.MustError(t, s.Admin(c.method, c.path, body), http.StatusNotFound, "not_found", "")
	}
}

func TestImpossibleFlowsRefused(t *testing.T) {
	s, _ := newServer(t)
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
		says  string
	}{
		{"no steps", map[string]any{"alias": "a", "usage": "browser", "steps": []any{}}, "steps", "has no steps"},
		{"a second factor first", map[string]any{"alias": "a", "usage": "browser", "steps": []any{
			map[string]any{"kind": "totp", "requirement": "required"},
			map[string]any{"kind": "username-password", "requirement": "required"}}},
			"steps[0].kind", "needs the user"},
		{"a username alone", map[string]any{"alias": "a", "usage": "browser", "steps": []any{
			map[string]any{"kind": "username", "requirement": "required"}}},
			"steps[0].kind", "names the user without proof"},
		{"an unknown provider", map[string]any{"alias": "a", "usage": "browser", "steps": []any{
			map[string]any{"kind": "idp-redirect", "requirement": "required", "provider": "github"}}},
			"steps[0].provider", `no identity provider "github"`},
		{"a page in a direct grant", map[string]any{"alias": "a", "usage": "direct-grant", "steps": []any{
			map[string]any{"kind": "username-password", "requirement": "required"},
			map[string]any{"kind": "email-otp", "requirement": "required"}}},
			"steps[1].kind", "no pages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Admin(http.MethodPost, flowsPath, c.body)
			apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", c.field)
			var e httpx.ErrorBody
			r.Decode(t, &e)
			if !strings.Contains(e.Description, c.says) {
				t.Errorf("description %q, want it to say %q", e.Description, c.says)
			}
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, flowsPath, map[string]any{"alias": "a", "usage": "browser", "steps": []any{
		map[string]any{"kind": "passkey", "requirement": "required", "factor": 2}}}), http.StatusBadRequest, "unknown_field", "factor")

	// A provider of the realm is accepted.
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "github",
		"providerType": "github", "clientId": "gh-client", "clientSecret": "gh-secret"}), http.StatusCreated)
	named := create(s, map[string]any{"alias": "a", "usage": "browser", "steps": []any{
		map[string]any{"kind": "idp-redirect", "requirement": "required", "provider": "github"}}})
	// And stays while the flow names it.
	r := s.Admin(http.MethodDelete, "/admin/realms/acme/identity-providers/github", nil)
	apptest.MustError(t, r, http.StatusConflict, "conflict", "")
	if !strings.Contains(string(r.Body), "named by the authentication flows a") {
		t.Fatalf("the refusal names no flow: %s", r.Body)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, flowsPath+"/"+named.ID, nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/identity-providers/github", nil), http.StatusOK)
}

func TestSeedDefaults(t *testing.T) {
	s, _ := newServer(t)
	seed := func() []authflows.FlowRep {
		r := s.Admin(http.MethodPost, flowsPath+"/seed-defaults", nil)
		apptest.MustStatus(t, r, http.StatusOK)
		var out []authflows.FlowRep
		r.Decode(t, &out)
		return out
	}
	first := seed()
	defs := signin.DefaultDefinitions()
	if len(first) != len(defs) {
		t.Fatalf("seeded %+v", first)
	}
	for i, f := range first {
		want := defs[i]
		want.ID = f.ID
		if !reflect.DeepEqual(f.Definition, want) || f.ID == "" {
			t.Errorf("seeded %+v, want %+v", f.Definition, want)
		}
	}
	if again := seed(); !reflect.DeepEqual(again, first) {
		t.Fatalf("a second seed answered %+v, first %+v", again, first)
	}
	var list []authflows.FlowRep
	s.Admin(http.MethodGet, flowsPath, nil).Decode(t, &list)
	if len(list) != 3 {
		t.Fatalf("after two seeds %+v", list)
	}
	// The built-in flows are the server's: they neither change nor go.
	browser := first[0]
	apptest.MustError(t, s.Admin(http.MethodPut, flowsPath+"/"+browser.ID, strict("browser")), http.StatusBadRequest, "invalid_field", "builtIn")
	apptest.MustError(t, s.Admin(http.MethodDelete, flowsPath+"/"+browser.ID, nil), http.StatusBadRequest, "invalid_field", "builtIn")

	// A realm's own flow under a built-in alias is not seeded over.
	s2, _ := newServer(t)
	r := s2.Admin(http.MethodPost, flowsPath, strict("device"))
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustError(t, s2.Admin(http.MethodPost, flowsPath+"/seed-defaults", nil), http.StatusConflict, "conflict", "alias")
	var none []authflows.FlowRep
	s2.Admin(http.MethodGet, flowsPath, nil).Decode(t, &none)
	if len(none) != 1 {
		t.Fatalf("a refused seed wrote %+v", none)
	}
}

func TestAssignClient(t *testing.T) {
	s, spID := newServer(t)
	f := create(s, strict("strict"))
	grant := create(s, map[string]any{"alias": "grant", "usage": "direct-grant", "steps": []any{
		map[string]any{"kind": "username-password", "requirement": "required"}}})

	discovery := create(s, map[string]any{"alias": "discovery", "usage": "browser", "steps": []any{
		map[string]any{"kind": "org-discovery", "requirement": "required"}}})
	device := create(s, map[string]any{"alias": "device", "usage": "device", "steps": []any{
		map[string]any{"kind": "username-password", "requirement": "required"}}})
	deviceIdP := create(s, map[string]any{"alias": "device-idp", "usage": "device", "steps": []any{
		map[string]any{"kind": "idp-redirect", "requirement": "required"}}})
	apptest.MustStatus(t, assign(s, f.ID, "web", nil), http.StatusNoContent) // the browser sign-ins by default
	apptest.MustStatus(t, assign(s, grant.ID, "web", map[string]any{"usage": "direct-grant"}), http.StatusNoContent)
	// An entity ID holding "/" is escaped twice: the router decodes once
	// and takes no "/" in a segment.
	spName := url.PathEscape("https://sp.test/metadata")
	apptest.MustStatus(t, assign(s, f.ID, spName, map[string]any{"usage": "browser"}), http.StatusNoContent)
	want := []authflows.BoundClient{
		{Kind: "oidc", ClientID: "web", ID: storedClientID(s, "web"), Usage: signin.UsageBrowser},
		{Kind: "saml", ClientID: "https://sp.test/metadata", ID: spID, Usage: signin.UsageBrowser},
	}
	if got := get(s, f.ID).Clients; !reflect.DeepEqual(got, want) {
		t.Fatalf("clients of the flow %+v, want %+v", got, want)
	}
	if got := get(s, grant.ID).Clients; len(got) != 1 || got[0].Usage != signin.UsageDirectGrant {
		t.Fatalf("clients of the grant flow %+v", got)
	}
	// A provider's step, through a SAML service provider's sign-in or a
	// device approval: the provider's callback passes the flow itself.
	apptest.MustStatus(t, assign(s, discovery.ID, spName, nil), http.StatusNoContent)
	apptest.MustStatus(t, assign(s, deviceIdP.ID, "web", map[string]any{"usage": "device"}), http.StatusNoContent)
	apptest.MustStatus(t, assign(s, device.ID, "web", map[string]any{"usage": "device"}), http.StatusNoContent)
	if got := get(s, device.ID).Clients; len(got) != 1 || got[0].Usage != signin.UsageDevice || got[0].ClientID != "web" {
		t.Fatalf("clients of the device flow %+v", got)
	}
	// A service provider is named by its id too, and one whose entity ID
	// has no "/" by the entity ID escaped once.
	apptest.MustStatus(t, assign(s, f.ID, spID, nil), http.StatusNoContent)
	r := s.Admin(http.MethodPost, "/admin/realms/acme/saml-service-providers", map[string]any{"entityId": "urn:example:wiki",
		"name": "Urn", "acsUrl": "https://urn.test/acs"})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, assign(s, f.ID, "urn:example:wiki", nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/saml-service-providers/"+r.Object(t)["id"].(string), nil), http.StatusNoContent)

	// Another flow replaces the one the client followed.
	other := create(s, strict("other"))
	apptest.MustStatus(t, assign(s, other.ID, "web", map[string]any{"usage": "browser"}), http.StatusNoContent)
	if got := get(s, f.ID).Clients; len(got) != 1 || got[0].Kind != "saml" {
		t.Fatalf("web still bound to strict: %+v", got)
	}

	for _, c := range []struct {
		name, flow, client string
		body               any
		status             int
		code, field        string
	}{
		{"a password grant of a service provider", grant.ID, spName, map[string]any{"usage": "direct-grant"},
			http.StatusBadRequest, "invalid_field", "usage"},
		{"a browser flow for the password grant", f.ID, "web", map[string]any{"usage": "direct-grant"},
			http.StatusBadRequest, "invalid_field", "usage"},
		{"a grant flow for the pages", grant.ID, "web", nil, http.StatusBadRequest, "invalid_field", "usage"},
		{"a usage a client has not", f.ID, "web", map[string]any{"usage": "kiosk"}, http.StatusBadRequest, "invalid_field", "usage"},
		{"device approvals of a service provider", device.ID, spName, map[string]any{"usage": "device"},
			http.StatusBadRequest, "invalid_field", "usage"},
		{"a browser flow for device approvals", f.ID, "web", map[string]any{"usage": "device"}, http.StatusBadRequest, "invalid_field", "usage"},
		{"an unknown field", f.ID, "web", map[string]any{"use": "browser"}, http.StatusBadRequest, "unknown_field", "use"},
		{"an unknown client", f.ID, "nope", nil, http.StatusNotFound, "not_found", ""},
		{"an unknown flow", "9a1e0000-0000-4000-8000-000000000000", "web", nil, http.StatusNotFound, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, assign(s, c.flow, c.client, c.body), c.status, c.code, c.field)
		})
	}

	// A bound flow stays, and keeps its usage, until its clients follow another.
	r = s.Admin(http.MethodDelete, flowsPath+"/"+f.ID, nil)
	apptest.MustError(t, r, http.StatusConflict, "conflict", "")
	if !strings.Contains(string(r.Body), "https://sp.test/metadata (browser)") {
		t.Fatalf("the refusal names no client: %s", r.Body)
	}
	asGrant := strict("strict")
	asGrant["usage"], asGrant["steps"] = "direct-grant", []any{map[string]any{"kind": "username-password", "requirement": "required"}}
	apptest.MustError(t, s.Admin(http.MethodPut, flowsPath+"/"+f.ID, asGrant), http.StatusConflict, "conflict", "usage")

	// Deleting the service provider ends its binding; the flow can go.
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/saml-service-providers/"+spID, nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, flowsPath+"/"+f.ID, nil), http.StatusNoContent)
	// And deleting the client ends its bindings.
	apptest.MustStatus(t, s.Admin(http.MethodDelete, "/admin/realms/acme/clients/web", nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodDelete, flowsPath+"/"+grant.ID, nil), http.StatusNoContent)
}

func storedClientID(s *apptest.Server, clientID string) string {
	s.T.Helper()
	c, err := s.Store.GetClientByClientID(s.T.Context(), s.Realm("acme").ID, clientID)
	if err != nil {
		s.T.Fatal(err)
	}
	return c.ID
}

func TestFlowAdminEvents(t *testing.T) {
	s, _ := newServer(t)
	f := create(s, strict("strict"))
	apptest.MustStatus(t, s.Admin(http.MethodPut, flowsPath+"/"+f.ID, strict("stricter")), http.StatusOK)
	apptest.MustStatus(t, assign(s, f.ID, "web", nil), http.StatusNoContent)
	apptest.MustStatus(t, s.Admin(http.MethodPost, flowsPath+"/seed-defaults", nil), http.StatusOK)
	apptest.MustStatus(t, s.Admin(http.MethodPost, flowsPath, strict("gone")), http.StatusCreated)
	r := s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=AUTH_FLOW", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var evs []struct{ OperationType, ResourcePath string }
	r.Decode(t, &evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.OperationType+" "+strings.TrimPrefix(e.ResourcePath, "auth-flows/"+f.ID))
	}
	want := []string{"CREATE auth-flows/", "ACTION auth-flows/seed-defaults", "UPDATE /assign-client/web", "UPDATE ", "CREATE "}
	if len(got) != len(want) || !strings.HasPrefix(got[0], want[0]) || !reflect.DeepEqual(got[1:], want[1:]) {
		t.Fatalf("admin events %q, want %q", got, want)
	}
}

// The flows and their bindings travel in the realm export, and an import
// binds them again to the file's clients by clientId and entity ID.
func TestFlowsInRealmExport(t *testing.T) {
	s, _ := newServer(t)
	f := create(s, strict("strict"))
	apptest.MustStatus(t, s.Admin(http.MethodPost, flowsPath+"/seed-defaults", nil), http.StatusOK)
	apptest.MustStatus(t, assign(s, f.ID, "web", nil), http.StatusNoContent)
	apptest.MustStatus(t, assign(s, f.ID, url.PathEscape("https://sp.test/metadata"), nil), http.StatusNoContent)
	export := s.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, export, http.StatusOK)
	var doc map[string]any
	export.Decode(t, &doc)
	doc["name"] = "copy"
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", doc), http.StatusCreated)

	var copied []authflows.FlowRep
	s.Admin(http.MethodGet, "/admin/realms/copy/auth-flows", nil).Decode(t, &copied)
	if len(copied) != 4 {
		t.Fatalf("imported flows %+v", copied)
	}
	var strictCopy authflows.FlowRep
	for _, c := range copied {
		if c.Alias == "strict" {
			strictCopy = c
		}
	}
	if strictCopy.ID == "" || strictCopy.ID == f.ID || !reflect.DeepEqual(strictCopy.Steps, f.Steps) || strictCopy.CreatedTimestamp != f.CreatedTimestamp {
		t.Fatalf("imported %+v, from %+v", strictCopy, f)
	}
	r := s.Admin(http.MethodGet, "/admin/realms/copy/auth-flows/"+strictCopy.ID, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var d authflows.FlowDetail
	r.Decode(t, &d)
	var bound []string
	for _, c := range d.Clients {
		bound = append(bound, c.Kind+" "+c.ClientID+" "+string(c.Usage))
	}
	if strings.Join(bound, ", ") != "oidc web browser, saml https://sp.test/metadata browser" {
		t.Fatalf("imported bindings %q", bound)
	}

	// An import is checked as the admin API checks.
	for _, c := range []struct {
		name  string
		flows []any
		field string
	}{
		{"an impossible flow", []any{map[string]any{"alias": "a", "usage": "browser", "steps": []any{}}}, "authFlows[0].steps"},
		{"a client not in the file", []any{map[string]any{"alias": "a", "usage": "browser", "steps": []any{
			map[string]any{"kind": "username-password", "requirement": "required"}},
			"clients": []any{map[string]any{"kind": "oidc", "clientId": "web", "usage": "browser"}}}}, "authFlows[0].clients[0].clientId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := map[string]any{"formatVersion": 1, "name": "bad", "authFlows": c.flows}
			apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import", bad), http.StatusBadRequest, "invalid_field", c.field)
		})
	}
	twice, _ := json.Marshal(strict("a"))
	var flow map[string]any
	_ = json.Unmarshal(twice, &flow)
	dup := map[string]any{"formatVersion": 1, "name": "bad", "authFlows": []any{flow, flow}}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import", dup), http.StatusConflict, "conflict", "authFlows[1].alias")
}

// A binding is checked whenever its client's next sign-in would meet new
// steps: when it is made, when its flow's steps change, when a realm is
// imported. A WebAuthn step on a server whose base URL is an IP address
// (where browsers hold no ceremony) is refused with the step named, and
// nothing changes.
func TestBindingsTheSignInCannotFollow(t *testing.T) {
	passkeyOnly := func(alias string) map[string]any {
		return map[string]any{"alias": alias, "usage": "browser", "steps": []any{
			map[string]any{"kind": "passkey", "requirement": "required"}}}
	}
	t.Run("steps changed under a service provider", func(t *testing.T) {
		// A service provider's sign-ins run every kind of step, an
		// organization's provider too: its callback passes the flow.
		s, _ := newServer(t)
		f := create(s, strict("strict"))
		apptest.MustStatus(t, assign(s, f.ID, url.PathEscape("https://sp.test/metadata"), nil), http.StatusNoContent)
		discovery := strict("strict")
		discovery["steps"] = []any{map[string]any{"kind": "org-discovery", "requirement": "required"}}
		apptest.MustStatus(t, s.Admin(http.MethodPut, flowsPath+"/"+f.ID, discovery), http.StatusOK)
		if got := get(s, f.ID); len(got.Steps) != 1 || got.Steps[0].Kind != signin.KindOrgDiscovery || len(got.Clients) != 1 {
			t.Fatalf("flow after the change %+v", got)
		}
	})
	t.Run("WebAuthn on a host name", func(t *testing.T) {
		s, _ := newServer(t)
		apptest.MustStatus(t, assign(s, create(s, passkeyOnly("passkeys")).ID, "web", nil), http.StatusNoContent)
	})
	t.Run("WebAuthn on an IP address", func(t *testing.T) {
		s := realapp.New(t, func(c *app.Config) { c.BaseURL = "http://192.0.2.7:3000" })
		apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme"}), http.StatusCreated)
		apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
			"redirectUris": []string{"https://web.test/cb"}}), http.StatusCreated)
		created := func(body map[string]any) string {
			r := s.Admin(http.MethodPost, flowsPath, body)
			apptest.MustStatus(t, r, http.StatusCreated)
			return r.Object(t)["id"].(string)
		}
		// Written, not bound: an export from a server with a host name reads.
		passkeys := created(passkeyOnly("passkeys"))
		r := assign(s, passkeys, "web", nil)
		apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", "steps[0].kind")
		if !strings.Contains(string(r.Body), "--base-url") {
			t.Fatalf("the refusal does not say what to change: %s", r.Body)
		}
		f := created(strict("strict"))
		apptest.MustStatus(t, assign(s, f, "web", nil), http.StatusNoContent)
		key := strict("strict")
		key["steps"] = append(key["steps"].([]any), map[string]any{"kind": "webauthn", "requirement": "required"})
		apptest.MustError(t, s.Admin(http.MethodPut, flowsPath+"/"+f, key), http.StatusBadRequest, "invalid_field", "steps[2].kind")
		bound := passkeyOnly("p")
		bound["clients"] = []any{map[string]any{"kind": "oidc", "clientId": "web", "usage": "browser"}}
		doc := map[string]any{"formatVersion": 1, "name": "bad", "clients": []any{map[string]any{"clientId": "web",
			"redirectUris": []string{"https://web.test/cb"}}}, "authFlows": []any{bound}}
		apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import", doc), http.StatusBadRequest, "invalid_field",
			"authFlows[0].clients[0].steps[0].kind")
	})
}
