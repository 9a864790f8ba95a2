package app

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/authz"
)

const policiesPath = "/admin/realms/acme/policies"

// policyDecision is the answer of POST …/policies/evaluate.
type policyDecision struct {
	Decision string
	Reason   string
	Policies []struct {
		ID, Name, Effect, Reason string
		Applied                  bool
	}
}

// policyEnv is realm acme with the people and things the policies of
// the decision table look at:
//   - alice: realm role editor, client role payroll of hr-app, groups
//     /staff/ops, department finance, member of acme-corp;
//   - bob: in /contractors/external;
//   - carol: realm role editor, in /contractors;
//   - dave: nothing.
type policyEnv struct {
	*testServer
	t     *testing.T
	users map[string]string // username → ID
}

func newPolicyEnv(t *testing.T, opts ...func(*Config)) *policyEnv {
	t.Helper()
	return newPolicyEnvOn(t, newTestServer(t, opts...))
}

// newPolicyEnvOn makes the realm of policyEnv on s.
func newPolicyEnvOn(t *testing.T, s *testServer) *policyEnv {
	t.Helper()
	s.createRealm("acme")
	e := &policyEnv{testServer: s, t: t, users: map[string]string{}}
	post := func(path string, body any) map[string]any {
		t.Helper()
		r := s.admin(http.MethodPost, "/admin/realms/acme"+path, body)
		if r.Status != http.StatusCreated && r.Status != http.StatusOK && r.Status != http.StatusNoContent {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		if len(r.Body) > 0 && r.Body[0] == '{' {
			return r.object(t)
		}
		return nil
	}
	post("/custom-attributes", map[string]any{"name": "department", "type": "string"})
	for _, name := range []string{"alice", "bob", "carol", "dave"} {
		body := map[string]any{"username": name, "email": name + "@acme.test"}
		if name == "alice" {
			body["attributes"] = map[string]any{"department": "finance"}
		}
		e.users[name] = s.createUser("acme", body)["id"].(string)
	}
	post("/roles", map[string]any{"name": "editor"})
	post("/clients", map[string]any{"clientId": "hr-app"})
	post("/clients/hr-app/roles", map[string]any{"name": "payroll"})
	for _, name := range []string{"alice", "carol"} {
		post("/users/"+e.users[name]+"/role-mappings/realm", map[string]any{"roleNames": []string{"editor"}})
	}
	post("/users/"+e.users["alice"]+"/role-mappings/clients/hr-app", map[string]any{"roleNames": []string{"payroll"}})
	staff := post("/groups", map[string]any{"name": "staff"})["id"].(string)
	ops := post("/groups/"+staff+"/children", map[string]any{"name": "ops"})["id"].(string)
	contractors := post("/groups", map[string]any{"name": "contractors"})["id"].(string)
	external := post("/groups/"+contractors+"/children", map[string]any{"name": "external"})["id"].(string)
	for user, group := range map[string]string{"alice": ops, "bob": external, "carol": contractors} {
		mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/users/"+e.users[user]+"/groups/"+group, nil), http.StatusOK)
	}
	post("/organizations", map[string]any{"slug": "acme-corp", "name": "Acme Corp"})
	post("/organizations/acme-corp/members", map[string]any{"userId": e.users["alice"]})
	return e
}

// policy creates a policy and answers its ID.
func (e *policyEnv) policy(name, effect string, types, actions []string, condition string) string {
	e.t.Helper()
	r := e.admin(http.MethodPost, policiesPath, map[string]any{"name": name, "effect": effect,
		"target": map[string]any{"resourceTypes": types, "actions": actions}, "condition": condition})
	mustStatus(e.t, r, http.StatusCreated)
	return r.object(e.t)["id"].(string)
}

func (e *policyEnv) evaluate(q map[string]any) policyDecision {
	e.t.Helper()
	r := e.admin(http.MethodPost, policiesPath+"/evaluate", q)
	mustStatus(e.t, r, http.StatusOK)
	var d policyDecision
	r.decode(e.t, &d)
	return d
}

// policyRequest is a request of the table: a user subject (by ID,
// username or email), an action, a resource, its properties and a
// context.
func policyRequest(subject, action, rtype string, props, context map[string]any) map[string]any {
	q := map[string]any{"subject": map[string]any{"type": "user", "id": subject}, "action": map[string]any{"name": action},
		"resource": map[string]any{"type": rtype, "id": "r1"}}
	if props != nil {
		q["resource"].(map[string]any)["properties"] = props
	}
	if context != nil {
		q["context"] = context
	}
	return q
}

func at(hhmm string) map[string]any { return map[string]any{"time": "2026-05-04T" + hhmm + ":00Z"} }

// The decision table: policies on roles, client roles, groups (and their
// subgroups), custom attributes, organizations, time windows, the client
// address, ownership and the risk level, and subjects that are no user;
// deny overrides permit, a failed condition fails closed, and a request
// no policy applies to gets the realm's default.
func TestPolicyDecisionTable(t *testing.T) {
	e := newPolicyEnv(t)
	e.policy("editors edit documents", "permit", []string{"document"}, []string{"edit", "read"}, `"editor" in subject.roles`)
	e.policy("owners read their documents", "permit", []string{"document"}, []string{"read"},
		`resource.properties.ownerID == subject.email`)
	e.policy("no contractors", "deny", []string{"document"}, []string{"*"},
		`subject.groups.exists(g, g == "/contractors" || g.startsWith("/contractors/"))`)
	e.policy("finance approves invoices", "permit", []string{"invoice"}, []string{"approve"},
		`"department" in subject.attributes && "finance" in subject.attributes["department"]`)
	e.policy("members view reports", "permit", []string{"report"}, []string{"view"}, `"acme-corp" in subject.organizations`)
	e.policy("payroll clerks", "permit", []string{"payroll"}, []string{"*"},
		`"hr-app" in subject.clientRoles && "payroll" in subject.clientRoles["hr-app"]`)
	e.policy("payroll in office hours", "deny", []string{"payroll"}, []string{"*"},
		`context.time.getHours("Europe/Paris") < 9 || context.time.getHours("Europe/Paris") >= 18 || context.time.getDayOfWeek() == 0`)
	e.policy("console from the office", "permit", []string{"console"}, []string{"access"},
		`isIP(context.clientAddress) && cidr("10.0.0.0/8").containsIP(ip(context.clientAddress))`)
	e.policy("ops staff deploy", "permit", []string{"pipeline"}, []string{"deploy"},
		`subject.groups.exists(g, g.startsWith("/staff/")) && subject.emailVerified == false`)
	e.policy("gold services call", "permit", []string{"api"}, []string{"call"},
		`subject.type == "service" && subject.properties.tier == "gold"`)
	e.policy("critical risk stops everything", "deny", []string{"*"}, []string{"*"}, `context.riskLevel == "critical"`)
	e.policy("disabled", "permit", []string{"*"}, []string{"*"}, "true")
	mustStatus(t, e.admin(http.MethodPut, policiesPath+"/"+e.policy("everything", "permit", []string{"*"}, []string{"*"}, "true"),
		map[string]any{"name": "everything", "enabled": false, "effect": "permit",
			"target": map[string]any{"resourceTypes": []string{"*"}, "actions": []string{"*"}}}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodDelete, policiesPath+"/"+e.policyID("disabled"), nil), http.StatusNoContent)

	own := func(owner string) map[string]any { return map[string]any{"ownerID": owner} }
	from := func(addr string) map[string]any { return map[string]any{"clientAddress": addr} }
	service := func(tier string) map[string]any {
		return map[string]any{"subject": map[string]any{"type": "service", "id": "billing", "properties": map[string]any{"tier": tier}},
			"action": map[string]any{"name": "call"}, "resource": map[string]any{"type": "api", "id": "orders"}}
	}
	for i, c := range []struct {
		name string
		q    map[string]any
		want string
		by   string // the policy the reason names, if any
	}{
		{"an editor edits", policyRequest("alice", "edit", "document", nil, nil), "permit", "editors edit documents"},
		{"an editor reads", policyRequest("alice", "read", "document", nil, nil), "permit", "editors edit documents"},
		{"an editor by email", policyRequest("alice@acme.test", "edit", "document", nil, nil), "permit", ""},
		{"an editor by ID", policyRequest(e.users["alice"], "edit", "document", nil, nil), "permit", ""},
		{"an editor by username in capitals", policyRequest("ALICE", "edit", "document", nil, nil), "permit", ""},
		{"an editor deletes: no policy covers it", policyRequest("alice", "delete", "document", nil, nil), "deny", ""},
		{"no role, no edit", policyRequest("dave", "edit", "document", nil, nil), "deny", ""},
		{"an unknown subject", policyRequest("nobody", "edit", "document", nil, nil), "deny", ""},
		{"a contractor in a subgroup", policyRequest("bob", "read", "document", own("bob@acme.test"), nil), "deny", "no contractors"},
		{"a contractor who edits", policyRequest("carol", "edit", "document", nil, nil), "deny", "no contractors"},
		{"deny overrides the editor's permit", policyRequest("carol", "read", "document", nil, nil), "deny", "no contractors"},
		{"an owner reads", policyRequest("dave", "read", "document", own("dave@acme.test"), nil), "permit", "owners read their documents"},
		{"an owner by email subject", policyRequest("dave@acme.test", "read", "document", own("dave@acme.test"), nil), "permit", ""},
		{"someone else's document", policyRequest("dave", "read", "document", own("alice@acme.test"), nil), "deny", ""},
		{"an owner's edit is not a read", policyRequest("dave", "edit", "document", own("dave@acme.test"), nil), "deny", ""},
		{"no owner: the condition fails, closed", policyRequest("dave", "read", "document", map[string]any{}, nil), "deny",
			"owners read their documents"},
		{"no owner, but another policy permits", policyRequest("alice", "read", "document", map[string]any{}, nil), "permit",
			"editors edit documents"},
		{"finance approves", policyRequest("alice", "approve", "invoice", nil, nil), "permit", "finance approves invoices"},
		{"no department", policyRequest("dave", "approve", "invoice", nil, nil), "deny", ""},
		{"finance pays: no policy", policyRequest("alice", "pay", "invoice", nil, nil), "deny", ""},
		{"a member views", policyRequest("alice", "view", "report", nil, nil), "permit", "members view reports"},
		{"not a member", policyRequest("bob", "view", "report", nil, nil), "deny", ""},
		{"a clerk at 10:00 in Paris", policyRequest("alice", "read", "payroll", nil, at("08:00")), "permit", "payroll clerks"},
		{"a clerk at 17:59 in Paris", policyRequest("alice", "read", "payroll", nil, at("15:59")), "permit", ""},
		{"a clerk at 18:00 in Paris", policyRequest("alice", "read", "payroll", nil, at("16:00")), "deny", "payroll in office hours"},
		{"a clerk at 08:59 in Paris", policyRequest("alice", "read", "payroll", nil, at("06:59")), "deny", "payroll in office hours"},
		{"a clerk on a Sunday", policyRequest("alice", "read", "payroll",
			nil, map[string]any{"time": "2026-05-03T10:00:00Z"}), "deny", "payroll in office hours"},
		{"a time without seconds", policyRequest("alice", "write", "payroll", nil, map[string]any{"time": "2026-05-04T10:00+02:00"}),
			"permit", ""},
		{"no clerk in office hours", policyRequest("dave", "read", "payroll", nil, at("08:00")), "deny", ""},
		{"no clerk out of hours", policyRequest("bob", "read", "payroll", nil, at("20:00")), "deny", "payroll in office hours"},
		{"a time that is no time fails closed", policyRequest("alice", "read", "payroll", nil, map[string]any{"time": "teatime"}),
			"deny", "payroll in office hours"},
		{"the console from the office", policyRequest("alice", "access", "console", nil, from("10.1.2.3")), "permit",
			"console from the office"},
		{"the console from home", policyRequest("alice", "access", "console", nil, from("192.0.2.10")), "deny", ""},
		{"the console from IPv6", policyRequest("alice", "access", "console", nil, from("2001:db8::1")), "deny", ""},
		{"the console from nowhere", policyRequest("alice", "access", "console", nil, from("")), "deny", ""},
		{"the console from no address at all", policyRequest("alice", "access", "console", nil, from("not an address")), "deny", ""},
		{"ops staff deploy", policyRequest("alice", "deploy", "pipeline", nil, nil), "permit", "ops staff deploy"},
		{"contractors do not deploy", policyRequest("bob", "deploy", "pipeline", nil, nil), "deny", ""},
		{"a gold service", service("gold"), "permit", "gold services call"},
		{"a silver service", service("silver"), "deny", ""},
		{"a service without properties", map[string]any{"subject": map[string]any{"type": "service", "id": "billing"},
			"action": map[string]any{"name": "call"}, "resource": map[string]any{"type": "api", "id": "orders"}}, "deny",
			"gold services call"},
		{"a user is no service", policyRequest("alice", "call", "api", nil, nil), "deny", ""},
		{"critical risk", policyRequest("alice", "edit", "document", nil, map[string]any{"riskLevel": "critical"}), "deny",
			"critical risk stops everything"},
		{"low risk", policyRequest("alice", "edit", "document", nil, map[string]any{"riskLevel": "low"}), "permit", ""},
		{"the disabled policy stays out", policyRequest("dave", "anything", "thing", nil, nil), "deny", ""},
	} {
		t.Run(fmt.Sprintf("%02d %s", i, c.name), func(t *testing.T) {
			d := e.evaluate(c.q)
			if d.Decision != c.want || (c.by != "" && !strings.Contains(d.Reason, `"`+c.by+`"`)) {
				t.Errorf("%s (%s), want %s by %q; outcomes %+v", d.Decision, d.Reason, c.want, c.by, d.Policies)
			}
		})
	}

	// The realm's default decision is for requests no policy applies to:
	// never for one a policy denies, nor one whose permit failed.
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/policy-settings", map[string]any{"defaultDecision": "permit"}),
		http.StatusOK)
	for _, c := range []struct {
		name string
		q    map[string]any
		want string
	}{
		{"no policy covers it", policyRequest("dave", "anything", "thing", nil, nil), "permit"},
		{"a policy covers it but does not hold", policyRequest("dave", "edit", "document", nil, nil), "permit"},
		{"a policy denies", policyRequest("bob", "edit", "document", nil, nil), "deny"},
		{"a permit failed", policyRequest("dave", "read", "document", map[string]any{}, nil), "deny"},
	} {
		if d := e.evaluate(c.q); d.Decision != c.want {
			t.Errorf("default permit, %s: %s (%s), want %s", c.name, d.Decision, d.Reason, c.want)
		}
	}
	var set map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/policy-settings", nil).decode(t, &set)
	if set["defaultDecision"] != "permit" {
		t.Errorf("settings %v", set)
	}
	mustError(t, e.admin(http.MethodPut, "/admin/realms/acme/policy-settings", map[string]any{"defaultDecision": "maybe"}),
		http.StatusBadRequest, "invalid_field", "defaultDecision")
}

func (e *policyEnv) policyID(name string) string {
	e.t.Helper()
	var list []struct{ ID, Name string }
	e.admin(http.MethodGet, policiesPath, nil).decode(e.t, &list)
	for _, p := range list {
		if p.Name == name {
			return p.ID
		}
	}
	e.t.Fatalf("no policy %q", name)
	return ""
}

// The admin API of policies: create, list by name, get, replace, delete;
// names are the realm's own; writes are admin events, evaluations and
// tests (which change nothing) are not.
func TestPolicyAdminAPI(t *testing.T) {
	e := newPolicyEnv(t)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	body := map[string]any{"name": "readers", "description": "anyone reads", "effect": "permit",
		"target": map[string]any{"resourceTypes": []string{"document"}, "actions": []string{"read"}}}
	r := e.admin(http.MethodPost, policiesPath, body)
	mustStatus(t, r, http.StatusCreated)
	var created map[string]any
	r.decode(t, &created)
	id := created["id"].(string)
	if r.Header.Get("Location") != "http://localhost:8080"+policiesPath+"/"+id && !strings.HasSuffix(r.Header.Get("Location"), policiesPath+"/"+id) {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	if created["enabled"] != true || created["condition"] != "" || created["effect"] != "permit" {
		t.Errorf("created %v", created)
	}
	mustError(t, e.admin(http.MethodPost, policiesPath, body), http.StatusConflict, "conflict", "name")
	var got map[string]any
	e.admin(http.MethodGet, policiesPath+"/"+id, nil).decode(t, &got)
	if got["name"] != "readers" || got["description"] != "anyone reads" {
		t.Errorf("got %v", got)
	}
	another := e.policy("another", "deny", []string{"*"}, []string{"delete"}, "true")
	var list []map[string]any
	e.admin(http.MethodGet, policiesPath, nil).decode(t, &list)
	if len(list) != 2 || list[0]["name"] != "another" || list[1]["name"] != "readers" {
		t.Errorf("list %v", list)
	}
	body["name"], body["condition"], body["enabled"] = "another", `subject.id != ""`, false
	mustError(t, e.admin(http.MethodPut, policiesPath+"/"+id, body), http.StatusConflict, "conflict", "name")
	body["name"] = "readers v2"
	r = e.admin(http.MethodPut, policiesPath+"/"+id, body)
	mustStatus(t, r, http.StatusOK)
	var put map[string]any
	r.decode(t, &put)
	if put["name"] != "readers v2" || put["enabled"] != false || put["condition"] != `subject.id != ""` ||
		put["createdTimestamp"] != created["createdTimestamp"] {
		t.Errorf("replaced %v", put)
	}
	if d := e.evaluate(policyRequest("dave", "read", "document", nil, nil)); d.Decision != "deny" || len(d.Policies) != 0 {
		t.Errorf("a disabled policy decided: %+v", d)
	}
	for _, path := range []string{policiesPath + "/" + "7d1c3a52-0000-4000-8000-000000000000", policiesPath + "/not-a-uuid"} {
		mustError(t, e.admin(http.MethodGet, path, nil), http.StatusNotFound, "not_found", "")
		mustError(t, e.admin(http.MethodPut, path, body), http.StatusNotFound, "not_found", "")
		mustError(t, e.admin(http.MethodDelete, path, nil), http.StatusNotFound, "not_found", "")
		mustError(t, e.admin(http.MethodPost, path+"/test", map[string]any{"cases": []any{}}), http.StatusNotFound, "not_found", "")
	}
	mustStatus(t, e.admin(http.MethodPost, policiesPath+"/evaluate", policyRequest("dave", "read", "document", nil, nil)), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPost, policiesPath+"/"+id+"/test", map[string]any{"cases": []any{
		map[string]any{"subject": map[string]any{"type": "user", "id": "dave"}, "action": map[string]any{"name": "read"},
			"resource": map[string]any{"type": "document", "id": "1"}, "expected": "not_applicable"}}}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/policy-settings", map[string]any{"defaultDecision": "deny"}), http.StatusOK)
	mustStatus(t, e.admin(http.MethodDelete, policiesPath+"/"+id, nil), http.StatusNoContent)
	mustError(t, e.admin(http.MethodGet, policiesPath+"/"+id, nil), http.StatusNotFound, "not_found", "")

	var evs []struct{ OperationType, ResourceType, ResourcePath string }
	e.admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceTypes=AUTHORIZATION_POLICY", nil).decode(t, &evs)
	var ops []string
	for _, ev := range evs {
		if ev.ResourceType == "AUTHORIZATION_POLICY" {
			ops = append(ops, ev.OperationType+" "+strings.ReplaceAll(strings.ReplaceAll(ev.ResourcePath, id, "ID"), another, "ANOTHER"))
		}
	}
	slices.Sort(ops)
	want := []string{"CREATE policies/ANOTHER", "CREATE policies/ID", "DELETE policies/ID", "UPDATE policies/ID", "UPDATE policy-settings"}
	if !slices.Equal(ops, want) {
		t.Errorf("admin events %q, want %q", ops, want)
	}
}

// A condition is compiled and type-checked at save: a syntax or type
// error, a condition that is no boolean and one whose cost may pass the
// limit are refused with the line and column, and nothing is stored.
func TestPolicyCompileErrors(t *testing.T) {
	e := newPolicyEnv(t)
	for _, c := range []struct {
		name, condition, message string
	}{
		{"a syntax error", "subject.roles.exists(r,\n  r == ", "line 2, column 8"},
		{"an unknown field", `"x" in subject.rolez`, "line 1, column 15: undefined field 'rolez'"},
		{"an unknown variable", `user.id == "x"`, "line 1, column 1: undeclared reference to 'user'"},
		{"a type error", `subject.email.startsWith(1)`, "line 1, column 25: found no matching overload for 'startsWith'"},
		{"no boolean", `size(subject.roles) + 1`, "must be a boolean expression"},
		{"an unknown function", `subject.id.frobnicate()`, "undeclared reference to 'frobnicate'"},
		{"costly nesting", `subject.roles.all(a, subject.roles.all(b, subject.groups.all(c, a + b + c != "")))`, "over the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.admin(http.MethodPost, policiesPath, map[string]any{"name": c.name, "effect": "deny",
				"target": map[string]any{"resourceTypes": []string{"*"}, "actions": []string{"*"}}, "condition": c.condition})
			mustError(t, r, http.StatusBadRequest, "invalid_field", "condition")
			if !strings.Contains(string(r.Body), c.message) {
				t.Errorf("%s, want it to say %q", r.Body, c.message)
			}
		})
	}
	var list []any
	e.admin(http.MethodGet, policiesPath, nil).decode(t, &list)
	if len(list) != 0 {
		t.Errorf("refused policies were stored: %v", list)
	}
}

// An expression within the limit at save that data makes costly at run
// time stops at the limit and denies.
func TestPolicyCostLimitAtRunTime(t *testing.T) {
	e := newPolicyEnv(t)
	e.policy("pairs", "permit", []string{"batch"}, []string{"run"},
		`resource.properties.items.all(a, resource.properties.items.all(b, a != b || a == b))`)
	items := func(n int) map[string]any {
		list := make([]any, n)
		for i := range list {
			list[i] = fmt.Sprint(i)
		}
		return map[string]any{"items": list}
	}
	if d := e.evaluate(policyRequest("dave", "run", "batch", items(50), nil)); d.Decision != "permit" {
		t.Errorf("50 items: %+v", d)
	}
	d := e.evaluate(policyRequest("dave", "run", "batch", items(2000), nil))
	if d.Decision != "deny" || len(d.Policies) != 1 || d.Policies[0].Applied || !strings.Contains(d.Policies[0].Reason, "cost limit") {
		t.Errorf("2000 items: %+v", d)
	}
}

// A policy's test runs it, enabled or not, on each case and reports its
// outcome against the expected one.
func TestPolicyTest(t *testing.T) {
	e := newPolicyEnv(t)
	id := e.policy("editors edit", "permit", []string{"document"}, []string{"edit"}, `"editor" in subject.roles`)
	mustStatus(t, e.admin(http.MethodPut, policiesPath+"/"+id, map[string]any{"name": "editors edit", "enabled": false,
		"effect": "permit", "target": map[string]any{"resourceTypes": []string{"document"}, "actions": []string{"edit"}},
		"condition": `"editor" in subject.roles`}), http.StatusOK)
	tc := func(name, user, action, expected string) map[string]any {
		return map[string]any{"name": name, "subject": map[string]any{"type": "user", "id": user}, "action": map[string]any{"name": action},
			"resource": map[string]any{"type": "document", "id": "d1"}, "expected": expected}
	}
	r := e.admin(http.MethodPost, policiesPath+"/"+id+"/test", map[string]any{"cases": []any{
		tc("an editor", "alice", "edit", "permit"),
		tc("not an editor", "dave", "edit", "not_applicable"),
		tc("another action", "alice", "read", "not_applicable"),
		tc("wrongly expected", "dave", "edit", "permit"),
	}})
	mustStatus(t, r, http.StatusOK)
	var rep struct {
		PolicyID       string
		Passed, Failed int
		Results        []struct {
			Name, Expected, Outcome, Reason string
			Passed                          bool
		}
	}
	r.decode(t, &rep)
	if rep.PolicyID != id || rep.Passed != 3 || rep.Failed != 1 || len(rep.Results) != 4 {
		t.Fatalf("report %+v", rep)
	}
	if res := rep.Results[3]; res.Passed || res.Outcome != "not_applicable" || res.Expected != "permit" || res.Name != "wrongly expected" {
		t.Errorf("the failed case %+v", res)
	}
	if res := rep.Results[2]; res.Reason != "its target does not cover the request" {
		t.Errorf("the uncovered case %+v", res)
	}
	mustError(t, e.admin(http.MethodPost, policiesPath+"/"+id+"/test", map[string]any{"cases": []any{tc("x", "alice", "edit", "maybe")}}),
		http.StatusBadRequest, "invalid_field", "cases[0].expected")
	mustError(t, e.admin(http.MethodPost, policiesPath+"/"+id+"/test", map[string]any{"cases": []any{}}),
		http.StatusBadRequest, "invalid_field", "cases")
	noSubject := tc("x", "alice", "edit", "permit")
	delete(noSubject, "subject")
	mustError(t, e.admin(http.MethodPost, policiesPath+"/"+id+"/test", map[string]any{"cases": []any{tc("ok", "alice", "edit", "permit"), noSubject}}),
		http.StatusBadRequest, "invalid_field", "cases[1].subject")
}

// Evaluating a user's request draws on their roles, groups and
// attributes: policies:read alone may evaluate other subjects, not users.
func TestPolicyEvaluateNeedsUsersRead(t *testing.T) {
	e := newPolicyEnv(t, authWithAdminUser(nil))
	e.policy("services", "permit", []string{"*"}, []string{"*"}, `subject.type == "service"`)
	tok := authBearer(authLoginFor(t, e.testServer, []authz.Permission{authz.PoliciesRead}))
	r := e.request(http.MethodPost, policiesPath+"/evaluate", policyRequest("alice", "read", "document", nil, nil), tok)
	mustError(t, r, http.StatusForbidden, "forbidden", "")
	if !strings.Contains(string(r.Body), "users:read") {
		t.Errorf("the 403 does not name users:read: %s", r.Body)
	}
	r = e.request(http.MethodPost, policiesPath+"/evaluate", map[string]any{"subject": map[string]any{"type": "service", "id": "s"},
		"action": map[string]any{"name": "x"}, "resource": map[string]any{"type": "y", "id": "z"}}, tok)
	mustStatus(t, r, http.StatusOK)
	tok = authBearer(authLoginFor(t, e.testServer, []authz.Permission{authz.PoliciesRead, authz.UsersRead}))
	mustStatus(t, e.request(http.MethodPost, policiesPath+"/evaluate", policyRequest("alice", "read", "document", nil, nil), tok),
		http.StatusOK)
}

// Bad input on every endpoint of the admin API is a 400 naming the
// field (a 413 for a body past the limit), and nothing is stored: unknown
// fields, a condition of a megabyte, JSON nested past the limit.
func TestPolicyBadInput(t *testing.T) {
	e := newPolicyEnv(t)
	id := e.policy("kept", "permit", []string{"document"}, []string{"read"}, "true")
	valid := func() map[string]any {
		return map[string]any{"name": "new", "effect": "permit", "target": map[string]any{"resourceTypes": []string{"a"},
			"actions": []string{"b"}}, "condition": "true"}
	}
	with := func(k string, v any) map[string]any {
		b := valid()
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	nested := func(depth int) map[string]any {
		var v any = "deep"
		for range depth {
			v = map[string]any{"a": v}
		}
		return v.(map[string]any)
	}
	request := policyRequest("alice", "read", "document", nil, nil)
	deepContext := policyRequest("alice", "read", "document", nil, nested(40))
	deepProps := policyRequest("alice", "read", "document", nested(40), nil)
	bigCondition := `subject.id == "` + strings.Repeat("x", 1_000_000) + `"`
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"an unknown field", http.MethodPost, policiesPath, with("priority", 1), 400, "unknown_field", "priority"},
		{"an unknown field of the target", http.MethodPost, policiesPath,
			with("target", map[string]any{"resourceTypes": []string{"a"}, "actions": []string{"b"}, "scopes": []string{}}), 400,
			"unknown_field", "scopes"},
		{"a field in other case", http.MethodPost, policiesPath, with("Condition", "true"), 400, "unknown_field", "Condition"},
		{"no name", http.MethodPost, policiesPath, with("name", nil), 400, "invalid_field", "name"},
		{"no effect", http.MethodPost, policiesPath, with("effect", "allow"), 400, "invalid_field", "effect"},
		{"no resource types", http.MethodPost, policiesPath, with("target", map[string]any{"actions": []string{"b"}}), 400,
			"invalid_field", "target.resourceTypes"},
		{"an empty action", http.MethodPost, policiesPath, with("target", map[string]any{"resourceTypes": []string{"a"},
			"actions": []string{""}}), 400, "invalid_field", "target.actions"},
		{"a condition of a megabyte", http.MethodPost, policiesPath, with("condition", bigCondition), 400, "invalid_field", "condition"},
		{"a condition past the body limit", http.MethodPost, policiesPath, with("condition", bigCondition+strings.Repeat(" ", 100_000)),
			413, "payload_too_large", ""},
		{"a condition of the wrong type", http.MethodPost, policiesPath, with("condition", 1), 400, "invalid_field", "condition"},
		{"a PUT with an unknown field", http.MethodPut, policiesPath + "/" + id, with("priority", 1), 400, "unknown_field", "priority"},
		{"a PUT of a megabyte", http.MethodPut, policiesPath + "/" + id, with("condition", bigCondition), 400, "invalid_field", "condition"},
		{"an evaluation with an unknown field", http.MethodPost, policiesPath + "/evaluate",
			map[string]any{"subject": request["subject"], "action": request["action"], "resource": request["resource"], "options": 1},
			400, "unknown_field", "options"},
		{"an evaluation without a resource", http.MethodPost, policiesPath + "/evaluate",
			map[string]any{"subject": request["subject"], "action": request["action"]}, 400, "invalid_field", "resource"},
		{"an evaluation without a subject id", http.MethodPost, policiesPath + "/evaluate",
			map[string]any{"subject": map[string]any{"type": "user"}, "action": request["action"], "resource": request["resource"]},
			400, "invalid_field", "subject.id"},
		{"an evaluation nested too deep", http.MethodPost, policiesPath + "/evaluate", deepContext, 400, "invalid_field", "context"},
		{"properties nested too deep", http.MethodPost, policiesPath + "/evaluate", deepProps, 400, "invalid_field",
			"resource.properties"},
		{"a test with an unknown field", http.MethodPost, policiesPath + "/" + id + "/test", map[string]any{"cases": []any{}, "x": 1},
			400, "unknown_field", "x"},
		{"a test nested too deep", http.MethodPost, policiesPath + "/" + id + "/test", map[string]any{"cases": []any{
			map[string]any{"subject": request["subject"], "action": request["action"], "resource": request["resource"],
				"context": nested(40), "expected": "permit"}}}, 400, "invalid_field", "cases[0].context"},
		{"settings with an unknown field", http.MethodPut, "/admin/realms/acme/policy-settings",
			map[string]any{"defaultDecision": "deny", "x": 1}, 400, "unknown_field", "x"},
		{"not JSON", http.MethodPost, policiesPath, "{", 400, "invalid_json", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, e.admin(c.method, c.path, c.body), c.status, c.code, c.field)
		})
	}
	var list []map[string]any
	e.admin(http.MethodGet, policiesPath, nil).decode(t, &list)
	if len(list) != 1 || list[0]["name"] != "kept" || list[0]["condition"] != "true" {
		t.Errorf("the refusals stored something: %v", list)
	}
	var set map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/policy-settings", nil).decode(t, &set)
	if set["defaultDecision"] != "deny" {
		t.Errorf("settings %v", set)
	}
}

// Policies and the realm's settings travel in the realm export; an import
// checks them as the admin API does.
func TestPolicyRealmExport(t *testing.T) {
	e := newPolicyEnv(t)
	e.policy("editors edit", "permit", []string{"document"}, []string{"edit"}, `"editor" in subject.roles`)
	e.policy("no contractors", "deny", []string{"*"}, []string{"*"}, `subject.groups.exists(g, g.startsWith("/contractors"))`)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/policy-settings", map[string]any{"defaultDecision": "permit"}), http.StatusOK)
	r := e.admin(http.MethodGet, "/admin/realms/acme/export", nil)
	mustStatus(t, r, http.StatusOK)
	var doc map[string]any
	r.decode(t, &doc)
	if ps, _ := doc["authorizationPolicies"].([]any); len(ps) != 2 {
		t.Fatalf("exported policies %v", doc["authorizationPolicies"])
	}
	doc["name"] = "copy"
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/import?asCopy=true", doc), http.StatusCreated)
	var orig, copied []map[string]any
	e.admin(http.MethodGet, policiesPath, nil).decode(t, &orig)
	e.admin(http.MethodGet, "/admin/realms/copy/policies", nil).decode(t, &copied)
	if len(copied) != 2 || copied[0]["id"] == orig[0]["id"] {
		t.Fatalf("imported %v", copied)
	}
	for i := range copied {
		for _, k := range []string{"name", "effect", "target", "condition", "createdTimestamp"} {
			if fmt.Sprint(copied[i][k]) != fmt.Sprint(orig[i][k]) {
				t.Errorf("imported %s %v, exported %v", k, copied[i][k], orig[i][k])
			}
		}
	}
	var set map[string]any
	e.admin(http.MethodGet, "/admin/realms/copy/policy-settings", nil).decode(t, &set)
	if set["defaultDecision"] != "permit" {
		t.Errorf("imported settings %v", set)
	}
	for _, c := range []struct {
		name     string
		policies []any
		status   int
		field    string
	}{
		{"a condition that does not compile", []any{map[string]any{"name": "a", "effect": "permit",
			"target": map[string]any{"resourceTypes": []string{"*"}, "actions": []string{"*"}}, "condition": "subject.nope"}},
			400, "authorizationPolicies[0].condition"},
		{"a name twice", []any{orig[0], orig[0]}, 409, "authorizationPolicies[1].name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := map[string]any{"formatVersion": 1, "name": "bad", "authorizationPolicies": c.policies}
			code := "invalid_field"
			if c.status == 409 {
				code = "conflict"
			}
			mustError(t, e.admin(http.MethodPost, "/admin/realms/import?asCopy=true", bad), c.status, code, c.field)
		})
	}
	mustError(t, e.admin(http.MethodGet, "/admin/realms/bad", nil), http.StatusNotFound, "not_found", "")
}
