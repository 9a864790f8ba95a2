package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/policies"
)

// describePolicies describes the authorization policies, their evaluation
// and test, and the realm's policy settings (docs/policies.md).
func describePolicies(describe func(method, path string, o openapi.Op)) {
	const list, one = "/admin/realms/{realm}/policies", "/admin/realms/{realm}/policies/{id}"
	example := map[string]any{"id": "5b0e…", "name": "editors edit", "description": "", "enabled": true, "effect": "permit",
		"target":           map[string]any{"resourceTypes": []string{"document"}, "actions": []string{"edit"}},
		"condition":        `"editor" in subject.roles && resource.properties.ownerID == subject.email`,
		"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}
	describe(http.MethodPost, list, openapi.Op{Summary: "Create an authorization policy",
		Description: "`effect`: `permit` or `deny`; `target`: the resource types and actions it applies to (`*` is any); " +
			"`condition`: a CEL expression over `subject`, `resource`, `action` and `context`, compiled and type-checked here " +
			"(an error names its line and column), its cost bounded.",
		Request: policies.PolicyInput{}, Status: http.StatusCreated, Response: policies.Policy{}, Example: example})
	describe(http.MethodGet, list, openapi.Op{Summary: "List the authorization policies", Description: "By name.",
		Response: []policies.Policy{}})
	describe(http.MethodGet, one, openapi.Op{Summary: "Get an authorization policy", Response: policies.Policy{}})
	describe(http.MethodPut, one, openapi.Op{Summary: "Replace an authorization policy", Request: policies.PolicyInput{},
		Response: policies.Policy{}})
	describe(http.MethodDelete, one, openapi.Op{Summary: "Delete an authorization policy", Status: http.StatusNoContent})
	describe(http.MethodPost, list+"/evaluate", openapi.Op{Summary: "Evaluate a request against the realm's policies",
		Description: "Deny overrides permit; a request no policy applies to gets the realm's default decision. Answers the " +
			"decision, its reason, and each policy whose target covers the request with whether it applied and why. A subject " +
			"of type `user` is resolved to the realm's user, which needs `users:read` too.",
		Request: policies.EvaluateInput{}, Response: policies.Decision{},
		Example: map[string]any{"decision": "permit", "reason": `permitted by policy "editors edit"`, "policies": []any{
			map[string]any{"id": "5b0e…", "name": "editors edit", "effect": "permit", "applied": true, "reason": "its condition holds"}}}})
	describe(http.MethodPost, one+"/test", openapi.Op{Summary: "Test an authorization policy on cases",
		Description: "Runs the policy, enabled or not, on each case and reports its outcome (`permit`, `deny`, " +
			"`not_applicable`, or `error`) against the expected one.",
		Request: policies.TestInput{}, Response: policies.TestReport{}})
	describe(http.MethodGet, "/admin/realms/{realm}/policy-settings", openapi.Op{Summary: "Get the realm's policy settings",
		Description: "`defaultDecision`: the decision of a request no policy applies to (`deny` until written).",
		Response:    policies.Settings{}})
	describe(http.MethodPut, "/admin/realms/{realm}/policy-settings", openapi.Op{Summary: "Replace the realm's policy settings",
		Request: policies.Settings{}, Response: policies.Settings{}})
}
