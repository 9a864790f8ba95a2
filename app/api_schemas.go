package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/scopes"
)

// apiSchemas describes routes of the table beyond their access and error
// shape: their bodies as the Go types their handlers read and write, and
// their query parameters. The key is the table's method and path. A route
// without an entry is in the document by its status classes and errors;
// docs/api.md says how to add one.
func apiSchemas() map[string]openapi.Op {
	ops := map[string]openapi.Op{}
	describe := func(method, path string, o openapi.Op) { ops[method+" "+path] = o }
	describeRoutes(describe)
	return ops
}

// userWrite is the body of a user's PUT and PATCH: its representation,
// each attribute's values a list or one string.
type userWrite struct {
	userRep
	Attributes map[string]any `json:"attributes"`
}

// describeRoutes describes the typed routes, each through describe.
func describeRoutes(describe func(method, path string, o openapi.Op)) {
	status := openapi.Schema{"type": "object", "required": []string{"status"},
		"properties": map[string]any{"status": map[string]any{"type": "string", "enum": []string{"ok"}}}}
	describe(http.MethodGet, "/health", openapi.Op{Summary: "Liveness", Response: status})
	describe(http.MethodGet, "/health/live", openapi.Op{Summary: "Liveness", Response: status})
	readiness := openapi.Schema{"type": "object", "required": []string{"status", "checks"}, "properties": map[string]any{
		"status": map[string]any{"type": "string", "enum": []string{"ok", "unavailable", "upgrade-pending"}},
		"checks": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object",
			"required": []string{"status"}, "properties": map[string]any{"status": map[string]any{"type": "string"}}}},
	}}
	describe(http.MethodGet, "/health/ready", openapi.Op{Summary: "Readiness: the database answers",
		Description: "503 with the same body when a check fails, or while the database waits for an upgrade (`upgrade-pending`, docs/upgrade.md).", Response: readiness,
		Also: map[int]any{http.StatusServiceUnavailable: readiness}})
	const users, user1 = "/admin/realms/{realm}/users", "/admin/realms/{realm}/users/{userId}"
	describe(http.MethodPost, users, openapi.Op{Summary: "Create a user", Request: userCreate{}, Status: http.StatusCreated, Response: userRep{}})
	describe(http.MethodGet, users, openapi.Op{Summary: "Find users", Response: userPage{}, Query: []openapi.Param{
		{Name: "search", Description: "A part of the username, email or name.", Schema: openapi.Schema{"type": "string"}},
		{Name: "username", Schema: openapi.Schema{"type": "string"}},
		{Name: "email", Schema: openapi.Schema{"type": "string"}},
		{Name: "exact", Description: "Match username and email exactly.", Schema: openapi.Schema{"type": "boolean"}},
		{Name: "enabled", Schema: openapi.Schema{"type": "boolean"}},
		{Name: "skip", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
		{Name: "limit", Schema: openapi.Schema{"type": "integer", "minimum": 1}},
	}})
	describe(http.MethodGet, user1, openapi.Op{Summary: "Get a user", Response: userRep{}})
	describe(http.MethodPut, user1, openapi.Op{Summary: "Replace a user's fields", Request: userWrite{}, Response: userRep{}})
	describe(http.MethodPatch, user1, openapi.Op{Summary: "Change a user's fields (JSON merge patch)", Request: userWrite{}, Response: userRep{}})
	describe(http.MethodDelete, user1, openapi.Op{Summary: "Delete a user", Status: http.StatusNoContent})

	const realms, realm1 = "/admin/realms", "/admin/realms/{realm}"
	describe(http.MethodPost, realms, openapi.Op{Summary: "Create a realm", Request: realmCreate{}, Status: http.StatusCreated, Response: realmRep{}})
	describe(http.MethodGet, realms, openapi.Op{Summary: "List the realms", Response: []realmRep{}})
	describe(http.MethodGet, realm1, openapi.Op{Summary: "Get a realm's settings", Response: realmRep{}})
	describe(http.MethodPut, realm1, openapi.Op{Summary: "Replace a realm's settings", Request: realmRep{}, Response: realmRep{}})
	describe(http.MethodPatch, realm1, openapi.Op{Summary: "Change a realm's settings (JSON merge patch)", Request: realmRep{}, Response: realmRep{}})

	const clientList, client1 = "/admin/realms/{realm}/clients", "/admin/realms/{realm}/clients/{clientId}"
	describe(http.MethodPost, clientList, openapi.Op{Summary: "Create a client", Description: "A confidential client's secret is in the answer, this once.",
		Request: clients.ClientCreate{}, Status: http.StatusCreated, Response: clients.ClientRep{}})
	describe(http.MethodGet, clientList, openapi.Op{Summary: "List clients", Response: []clients.ClientRep{},
		Query: []openapi.Param{{Name: "clientId", Description: "Only the client with exactly this clientId.", Schema: openapi.Schema{"type": "string"}}}})
	describe(http.MethodGet, client1, openapi.Op{Summary: "Get a client", Response: clients.ClientRep{}})
	describe(http.MethodPut, client1, openapi.Op{Summary: "Replace a client's fields", Request: clients.ClientRep{}, Response: clients.ClientRep{}})
	describe(http.MethodPatch, client1, openapi.Op{Summary: "Change a client's fields (JSON merge patch)", Request: clients.ClientRep{}, Response: clients.ClientRep{}})
	describe(http.MethodDelete, client1, openapi.Op{Summary: "Delete a client", Status: http.StatusNoContent})

	for _, base := range []string{"/admin/realms/{realm}/roles", client1 + "/roles"} {
		one := base + "/{roleName}"
		describe(http.MethodPost, base, openapi.Op{Summary: "Create a role", Request: roles.RoleCreate{}, Status: http.StatusCreated, Response: roles.RoleRep{}})
		describe(http.MethodGet, base, openapi.Op{Summary: "List roles", Response: []roles.RoleRep{}})
		describe(http.MethodGet, one, openapi.Op{Summary: "Get a role", Response: roles.RoleRep{}})
		describe(http.MethodPut, one, openapi.Op{Summary: "Replace a role's fields", Request: roles.RoleRep{}, Response: roles.RoleRep{}})
		describe(http.MethodPatch, one, openapi.Op{Summary: "Change a role's fields (JSON merge patch)", Request: roles.RoleRep{}, Response: roles.RoleRep{}})
		describe(http.MethodDelete, one, openapi.Op{Summary: "Delete a role", Status: http.StatusNoContent})
		describe(http.MethodGet, one+"/composites", openapi.Op{Summary: "List a role's composites", Response: []roles.RoleRep{}})
	}

	const scopesPath, scope1 = "/admin/realms/{realm}/client-scopes", "/admin/realms/{realm}/client-scopes/{scopeId}"
	describe(http.MethodGet, scopesPath, openapi.Op{Summary: "List client scopes", Response: []scopes.ScopeRep{}})
	describe(http.MethodGet, scope1, openapi.Op{Summary: "Get a client scope", Response: scopes.ScopeRep{}})

	describe(http.MethodPost, "/admin/auth/login", openapi.Op{Summary: "Sign an administrator in",
		Description: "With the system realm's password and its TOTP code when the account has one; `permissions` narrows the token.",
		Request:     adminLoginBody{}, Response: adminSession{},
		Example: map[string]any{"accessToken": "eyJhbGciOi…", "tokenType": "Bearer", "expiresIn": 900,
			"user": map[string]any{"id": "3f1c…", "username": "admin", "createdTimestamp": int64(1767225600000)}, "permissions": []string{"users:read"}}})
	describeAccount(describe)
	describeRegistration(describe)
	describeFederation(describe)
	describeNHI(describe)
	describeSCIM(describe)
	describeWebhooks(describe)
	describePlugins(describe)
	describeAuditStreams(describe)
	describeRisk(describe)
	describePolicies(describe)
	describeAuthZEN(describe)
	describeThemes(describe)
	describeProtocol(describe)
	describeUsers(describe)
	describeAuthFlows(describe)
	describeMigration(describe)
	describeSetup(describe)
	describeSystem(describe)
	describeUpgrade(describe)
}
