package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/risk"
)

// describeRisk describes the risk assessments, policies and settings
// (docs/risk.md).
func describeRisk(describe func(method, path string, o openapi.Op)) {
	const assessments, policies, policy1 = "/admin/realms/{realm}/risk-assessments", "/admin/realms/{realm}/risk-policies",
		"/admin/realms/{realm}/risk-policies/{id}"
	describe(http.MethodGet, assessments, openapi.Op{Summary: "List risk assessments",
		Description: "One per sign-in, newest first. Filters: `user` (a user's ID), `level`, `signal` (present), `from` and `to` " +
			"(Unix milliseconds, `to` excluded); paged with `first` and `max`.", Response: []risk.Assessment{}})
	describe(http.MethodGet, assessments+"/dashboard", openapi.Op{Summary: "Count risk assessments",
		Description: "By level and by signal present, over `from`–`to` (Unix milliseconds; the last 24 hours by default).",
		Response:    risk.Dashboard{}})
	describe(http.MethodGet, assessments+"/{id}", openapi.Op{Summary: "Get a risk assessment",
		Description: "Each signal's state and contribution, the weights in force, the policy that decided and its action.",
		Response:    risk.Assessment{}})
	describe(http.MethodPost, policies, openapi.Op{Summary: "Create a risk policy",
		Description: "Conditions all hold for the policy to match; the enabled policies of a `scope` decide by `priority`, " +
			"lowest first, the first match deciding. `scope`: `sign-in` (the default), whose `action` is `allow`, `mfa`, " +
			"`deny` or `notify`; or `session`, whose `action` is `allow`, `notify`, `step-up` or `end-session`.",
		Request: risk.PolicyInput{}, Status: http.StatusCreated, Response: risk.Policy{},
		Example: map[string]any{"id": "3c9a…", "name": "travellers give a code", "description": "", "enabled": true, "priority": 10,
			"conditions": map[string]any{"signals": []string{"impossible_travel"}}, "action": "mfa", "scope": "sign-in",
			"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000)}})
	describe(http.MethodGet, policies, openapi.Op{Summary: "List the risk policies", Description: "In the order they decide.",
		Response: []risk.Policy{}})
	describe(http.MethodGet, policy1, openapi.Op{Summary: "Get a risk policy", Response: risk.Policy{}})
	describe(http.MethodPut, policy1, openapi.Op{Summary: "Replace a risk policy", Request: risk.PolicyInput{}, Response: risk.Policy{}})
	describe(http.MethodDelete, policy1, openapi.Op{Summary: "Delete a risk policy",
		Description: "The assessments it decided keep its ID and name.", Status: http.StatusNoContent})
	describe(http.MethodPatch, policy1+"/toggle", openapi.Op{Summary: "Enable or disable a risk policy",
		Description: "`{\"enabled\": true|false}` sets it; no body, or `{}`, flips it.", Request: risk.Toggle{}, RequestOptional: true, Response: risk.Policy{}})
	describe(http.MethodPatch, policy1+"/priority", openapi.Op{Summary: "Move a risk policy", Description: "`{\"priority\": n}`.",
		Request: risk.Priority{}, Response: risk.Policy{}})
	describe(http.MethodGet, "/admin/realms/{realm}/risk-settings", openapi.Op{Summary: "Get the realm's risk settings",
		Description: "Weights, level thresholds, allow and deny lists; the defaults until written.", Response: risk.Settings{}})
	describe(http.MethodPut, "/admin/realms/{realm}/risk-settings", openapi.Op{Summary: "Replace the realm's risk settings",
		Description: "Fields left out keep their defaults.", Request: risk.Settings{}, Response: risk.Settings{}})
	describeSessionRisk(describe)
}
