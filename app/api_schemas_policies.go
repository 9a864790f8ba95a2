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

// authzenEntity is the schema of an AuthZEN subject, resource or action:
// its required key, an id where it has one, and properties; unknown keys
// are ignored, as the API asks (Authorization API 1.0 §12.1.1).
func authzenEntity(keys ...string) openapi.Schema {
	props := map[string]any{"properties": openapi.Schema{"type": "object"}}
	for _, k := range keys {
		props[k] = openapi.Schema{"type": "string"}
	}
	return openapi.Schema{"type": "object", "properties": props}
}

// authzenRequest is an Access Evaluation request; with evaluations, the
// Access Evaluations request.
func authzenRequest(batch bool) openapi.Schema {
	props := map[string]any{"subject": authzenEntity("type", "id"), "action": authzenEntity("name"),
		"resource": authzenEntity("type", "id"), "context": openapi.Schema{"type": "object"}}
	if !batch {
		return openapi.Schema{"type": "object", "properties": props}
	}
	one := openapi.Schema{"type": "object", "properties": props}
	all := map[string]any{"evaluations": openapi.Schema{"type": "array", "items": one},
		"options": openapi.Schema{"type": "object", "properties": map[string]any{"evaluations_semantic": openapi.Schema{
			"type": "string", "enum": []string{policies.ExecuteAll, policies.DenyOnFirstDeny, policies.PermitOnFirstPermit}}}}}
	for k, v := range props {
		all[k] = v
	}
	return openapi.Schema{"type": "object", "properties": all}
}

// describeAuthZEN describes the realm's OpenID AuthZEN 1.0 decision point
// (docs/policies.md).
func describeAuthZEN(describe func(method, path string, o openapi.Op)) {
	const auth = " The caller is a client of the realm, by its access token (Bearer) or its credentials (Basic), entitled " +
		"by the scope `authzen` or the realm role `authzen` (else 401, or 403); `X-Request-ID` is echoed."
	describe(http.MethodPost, "/realms/{realm}"+policies.PathEvaluation, openapi.Op{Summary: "AuthZEN: evaluate one access request",
		Description: "The Access Evaluation API of OpenID AuthZEN Authorization API 1.0, decided by the realm's policies." + auth,
		Request:     authzenRequest(false), Response: policies.AccessDecision{},
		Example: map[string]any{"decision": true, "context": map[string]any{"id": "0",
			"reason_admin": map[string]any{"en": `permitted by policy "editors edit"`}}}})
	describe(http.MethodPost, "/realms/{realm}"+policies.PathEvaluations, openapi.Op{Summary: "AuthZEN: evaluate a batch of access requests",
		Description: "The Access Evaluations API: the top-level `subject`, `action`, `resource` and `context` are the defaults " +
			"of each evaluation; `options.evaluations_semantic` is `execute_all` (the default), `deny_on_first_deny` or " +
			"`permit_on_first_permit`. Without evaluations, one decision, as the Access Evaluation API." + auth,
		Request: authzenRequest(true), Response: policies.EvaluationsResponse{}})
	meta := openapi.Op{Summary: "AuthZEN: the policy decision point's metadata", Response: policies.Metadata{},
		Description: "Its identifier is the realm's issuer; public."}
	describe(http.MethodGet, "/realms/{realm}"+policies.PathMetadata, meta)
	describe(http.MethodGet, policies.PathMetadata+"/realms/{realm}", meta)
}
