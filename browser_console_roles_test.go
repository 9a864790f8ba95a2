package main

// The console's pages of roles, groups, client scopes and a client's
// scopes and service account in a real browser: a role made a composite
// of a client's role, a group moved under another and shown nested, a
// scope's mapper opened, a client's linked scopes; axe-core checks every
// page on the way.

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// choose picks the option whose text is option in the select labelled
// label.
func (b *browserTab) choose(label, option string) {
	b.t.Helper()
	id := b.field(label)
	found := browserEval[bool](b, "choose "+option, fmt.Sprintf(`(() => {
		const s = document.getElementById(%s);
		const o = [...s.options].find(o => o.textContent.trim() === %s);
		if (o) { s.value = o.value; }
		return !!o;
	})()`, jsString(string(id)), jsString(option)))
	if !found {
		b.t.Fatalf("no option %q in %s on %s", option, label, b.location())
	}
}

func TestBrowserConsoleRoles(t *testing.T) {
	e := newBrowserEnv(t)
	e.admin(http.MethodPost, "/admin/accounts", map[string]any{"username": "ada", "email": "ada@example.test",
		"password": browserPassword}, http.StatusCreated, nil)
	realm := "/admin/realms/crm"
	e.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "crm", "enabled": true}, http.StatusCreated, nil)
	for _, role := range []string{"clerk", "auditor"} {
		e.admin(http.MethodPost, realm+"/roles", map[string]any{"name": role}, http.StatusCreated, nil)
	}
	e.admin(http.MethodPost, realm+"/clients", map[string]any{"clientId": "desk", "grantTypes": []string{"client_credentials"}},
		http.StatusCreated, nil)
	e.admin(http.MethodPost, realm+"/clients/desk/roles", map[string]any{"name": "refund"}, http.StatusCreated, nil)
	var staff, ops struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, realm+"/groups", map[string]any{"name": "staff"}, http.StatusCreated, &staff)
	e.admin(http.MethodPost, realm+"/groups", map[string]any{"name": "ops"}, http.StatusCreated, &ops)
	var bob struct {
		ID string `json:"id"`
	}
	e.admin(http.MethodPost, realm+"/users", map[string]any{"username": "bob"}, http.StatusCreated, &bob)
	e.admin(http.MethodPut, realm+"/users/"+bob.ID+"/groups/"+ops.ID, nil, http.StatusOK, nil)
	e.admin(http.MethodPost, realm+"/client-scopes", map[string]any{"name": "extra", "protocolMappers": []map[string]any{{
		"name": "tier", "mapperType": "oidc-hardcoded-claim-mapper", "config": map[string]string{"claim.name": "tier",
			"claim.value": "gold"}}}}, http.StatusCreated, nil)

	b := e.browser()
	browserConsoleSignIn(e, b)

	// A role made a composite of a client's role.
	b.open("console-roles", e.srv.base+"/console/realms/crm/roles")
	b.click("console-role", "clerk")
	b.choose("Add a realm or client role", "desk › refund")
	b.submit("console-role-composite", "Add a realm or client role")
	b.mustShow("The role is added to the composite.", "desk › refund")
	var composites []struct {
		Name     string `json:"name"`
		ClientID string `json:"clientId"`
	}
	e.admin(http.MethodGet, realm+"/roles/clerk/composites", nil, http.StatusOK, &composites)
	if len(composites) != 1 || composites[0].Name != "refund" || composites[0].ClientID != "desk" {
		t.Fatalf("the composites stored: %+v", composites)
	}

	// A group moved under another, then shown nested in the tree.
	b.open("console-groups", e.srv.base+"/console/realms/crm/groups")
	b.click("console-group", "ops")
	b.mustShow("bob")
	b.choose("New parent", "/staff")
	b.submit("console-group-moved", "New parent")
	b.mustShow("The group is moved.")
	var moved struct {
		Path string `json:"path"`
	}
	e.admin(http.MethodGet, realm+"/groups/"+ops.ID, nil, http.StatusOK, &moved)
	if moved.Path != "/staff/ops" {
		t.Fatalf("the group's path after the move: %q", moved.Path)
	}
	b.open("console-groups-tree", e.srv.base+"/console/realms/crm/groups")
	if rows := b.rows(); !slices.ContainsFunc(rows, func(r string) bool { return r == "ops\t/staff/ops\tDelete" }) {
		t.Errorf("the tree's rows: %q", rows)
	}
	if nested := browserEval[bool](b, "nested row", `!!document.querySelector('td.depth-1 a')`); !nested {
		t.Error("the subgroup's row is not indented under its parent")
	}
	b.click("console-group-parent", "staff")
	b.mustShow("ops")

	// A client scope and its mapper.
	b.open("console-scopes", e.srv.base+"/console/realms/crm/client-scopes")
	b.click("console-scope", "extra")
	b.click("console-mapper", "tier")
	if v := b.value("claim.value"); v != "gold" {
		t.Errorf("the mapper's claim value shown: %q", v)
	}

	// The client's linked scopes and its service account's roles.
	b.open("console-client", e.srv.base+"/console/realms/crm/clients/desk")
	b.click("console-client-access", "Client scopes and service account roles")
	b.mustShow("Default client scopes", "profile", "Service account roles")
	b.do("wait", chromedp.WaitVisible(`#serviceAccountRoles-heading`))
}
