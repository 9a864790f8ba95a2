package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/authflows"
	"github.com/idenplane/idenplane/app/openapi"
)

// describeAuthFlows describes the realm's authentication flows
// (app/authflows, docs/auth-flows.md).
func describeAuthFlows(describe func(method, path string, o openapi.Op)) {
	const flows, flow1 = "/admin/realms/{realm}/auth-flows", "/admin/realms/{realm}/auth-flows/{id}"
	example := map[string]any{"id": "9a1e…", "alias": "strict", "usage": "browser", "builtIn": false,
		"steps": []map[string]any{{"kind": "username-password", "requirement": "required"},
			{"kind": "totp", "requirement": "conditional", "condition": map[string]any{"role": "admin"}}},
		"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}
	describe(http.MethodPost, flows, openapi.Op{Summary: "Create an authentication flow",
		Description: "400 names the step that makes the flow impossible (`steps[i]…`) and why; 409 for an alias taken.",
		Request:     authflows.FlowBody{}, Status: http.StatusCreated, Response: authflows.FlowRep{}, Example: example})
	describe(http.MethodGet, flows, openapi.Op{Summary: "List the realm's authentication flows", Description: "By alias.",
		Response: []authflows.FlowRep{}})
	describe(http.MethodPost, flows+"/seed-defaults", openapi.Op{Summary: "Create the built-in flows",
		Description: "browser, direct-grant and device, as the server signs people in without a flow; those the realm has are kept, " +
			"so a second call changes nothing. The answer is the built-in flows.",
		Response: []authflows.FlowRep{}})
	describe(http.MethodGet, flow1, openapi.Op{Summary: "Get an authentication flow", Description: "With the clients bound to it.",
		Response: authflows.FlowDetail{}})
	describe(http.MethodPut, flow1, openapi.Op{Summary: "Replace an authentication flow",
		Description: "The whole flow, as a creation gives it. A built-in flow cannot change; a bound one keeps its usage.",
		Request:     authflows.FlowBody{}, Response: authflows.FlowRep{}})
	describe(http.MethodDelete, flow1, openapi.Op{Summary: "Delete an authentication flow",
		Description: "409 naming the clients while any is bound to it; a built-in flow stays.", Status: http.StatusNoContent})
	describe(http.MethodPut, flow1+"/assign-client/{clientId}", openapi.Op{Summary: "Bind a client's sign-ins to a flow",
		Description: "`{clientId}` is an OpenID Connect client's clientId, a SAML service provider's entity ID (URL-escaped) or its id. " +
			"The flow replaces the one the client's sign-ins of that usage followed. Without a body, the browser sign-ins.",
		Request: authflows.AssignBody{}, RequestOptional: true, Status: http.StatusNoContent})
}
