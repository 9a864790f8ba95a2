package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/groups"
	"github.com/idenplane/idenplane/app/impersonation"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/sessions"
)

// describeUsers describes what hangs under a user (credentials, second
// factors, sessions, consents, groups, role mappings, attributes, links
// to identity providers) and the groups with their members and role
// mappings.
func describeUsers(describe func(method, path string, o openapi.Op)) {
	const user1, group1 = "/admin/realms/{realm}/users/{userId}", "/admin/realms/{realm}/groups/{groupId}"
	page := []openapi.Param{openapi.ParamFirst, openapi.ParamMax}

	// Credentials and mails.
	describe(http.MethodPut, user1+"/reset-password", openapi.Op{Summary: "Set a user's password",
		Description: "`temporary` makes the user change it at the next sign-in. The user's sessions and tokens end.",
		Request:     passwordReset{}, Status: http.StatusNoContent})
	describe(http.MethodPut, user1+"/reset-password-email", openapi.Op{Summary: "Mail a user a password reset link",
		Description: "The link of the hosted pages' password reset; the mail is queued.", Status: http.StatusNoContent})
	describe(http.MethodPost, user1+"/send-verification-email", openapi.Op{Summary: "Mail a user a link that verifies their address",
		Response: mailQueued{}, Example: mailQueued{Message: "verification email queued"}})

	// Second factors.
	describe(http.MethodGet, user1+"/mfa/status", openapi.Op{Summary: "Get a user's second factors", Response: mfaStatusRep{},
		Example: map[string]any{"enabled": true, "required": false, "factors": []string{"otp", "webauthn"},
			"totp":     map[string]any{"userLabel": "phone", "createdDate": int64(1767225600000)},
			"webauthn": []map[string]any{{"id": "b2c1…", "name": "YubiKey", "createdDate": int64(1767225600000)}}, "recoveryCodesRemaining": 8}})
	describe(http.MethodDelete, user1+"/mfa", openapi.Op{Summary: "Remove all of a user's second factors",
		Description: "With the recovery codes; the user's sessions and tokens end.", Status: http.StatusNoContent})
	describe(http.MethodDelete, user1+"/mfa/totp", openapi.Op{Summary: "Remove a user's TOTP credential",
		Description: "The user's sessions and tokens end.", Status: http.StatusNoContent})
	describe(http.MethodDelete, user1+"/mfa/webauthn/{credentialId}", openapi.Op{Summary: "Remove one of a user's security keys or passkeys",
		Description: "By the id GET .../mfa/status lists; the user's sessions and tokens end.", Status: http.StatusNoContent})

	// Impersonation (app/impersonation, docs/impersonation.md).
	describe(http.MethodPost, user1+"/impersonate", openapi.Op{Summary: "Sign in as a user",
		Description: "Starts a short SSO session of the user that names the caller in its tokens (act) and events, and sets " +
			"its cookie on the answer, as Keycloak does. Needs users:impersonate and the realm's impersonationEnabled; " +
			"refused for a disabled user and for one holding an admin permission the caller lacks.",
		Response: impersonation.StartRep{},
		Example:  impersonation.StartRep{Redirect: "https://id.example.com/realms/acme/account"}})
	describe(http.MethodPost, "/admin/realms/{realm}/impersonation/end", openapi.Op{Summary: "End impersonations",
		Description: "Ends the impersonation of the session sessionId, or every one going on of the user userId: " +
			"their sessions, refresh tokens and access tokens end.",
		Request: impersonation.EndBody{}, Status: http.StatusNoContent})

	// Sessions and consents.
	describe(http.MethodGet, user1+"/sessions", openapi.Op{Summary: "List a user's sessions", Response: []sessions.SessionRep{}})
	describe(http.MethodDelete, user1+"/sessions", openapi.Op{Summary: "Log a user out everywhere",
		Description: "Offline sessions stay: they end by revoking their token.", Response: sessions.UserSessionsEndedRep{}})
	describe(http.MethodGet, user1+"/offline-sessions", openapi.Op{Summary: "List a user's offline sessions", Response: []sessions.OfflineSessionRep{}})
	describe(http.MethodDelete, user1+"/offline-sessions/{tokenId}", openapi.Op{Summary: "Revoke a user's offline session",
		Status: http.StatusNoContent})
	describe(http.MethodGet, user1+"/consents", openapi.Op{Summary: "List a user's consents", Response: []sessions.ConsentRep{}})
	describe(http.MethodGet, user1+"/consents/history", openapi.Op{Summary: "List a user's consent grants and revocations, newest first",
		Query: page, Response: []sessions.ConsentEventRep{}})
	describe(http.MethodDelete, user1+"/consents/{clientId}", openapi.Op{Summary: "Withdraw a user's consent to a client",
		Description: "The client's offline tokens for the user are revoked and the user's sessions at the client end.",
		Status:      http.StatusNoContent})

	// Attributes and links to identity providers.
	attributes := openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}}}
	scalar := openapi.Schema{"type": []string{"string", "number", "boolean", "null"}}
	describe(http.MethodGet, user1+"/attributes", openapi.Op{Summary: "Get a user's custom attributes",
		Description: "Each attribute of the realm's schema the user has a value of, as a list of strings.", Response: attributes,
		Example: map[string][]string{"department": {"sales"}}})
	describe(http.MethodPut, user1+"/attributes", openapi.Op{Summary: "Set a user's custom attributes",
		Description: "Each attribute a value or a list of values (strings, numbers, booleans); the answer is the user's attributes after the change.",
		Request: openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"anyOf": []openapi.Schema{scalar,
			{"type": "array", "items": scalar}}}},
		Response: attributes})
	describe(http.MethodGet, user1+"/federated-identity", openapi.Op{Summary: "List a user's links to identity providers",
		Response: []broker.FederatedIdentityRep{}})
	describe(http.MethodDelete, user1+"/federated-identity/{alias}", openapi.Op{Summary: "Unlink a user from an identity provider",
		Status: http.StatusNoContent})

	// Groups.
	const groupsPath = "/admin/realms/{realm}/groups"
	treeExample := []map[string]any{{"id": "6d0e…", "name": "sales", "description": "", "path": "/sales",
		"subGroups": []map[string]any{{"id": "9a4b…", "name": "emea", "description": "", "parentId": "6d0e…", "path": "/sales/emea", "subGroups": []any{}}}}}
	describe(http.MethodGet, groupsPath, openapi.Op{Summary: "List the group tree",
		Description: "The top-level groups, each with its subgroups. `search` keeps the groups whose name holds it, with their ancestors.",
		Query:       append([]openapi.Param{{Name: "search", Description: "A part of a group's name.", Schema: openapi.Schema{"type": "string"}}}, page...),
		Response:    []groups.GroupTreeRep{}, Example: treeExample})
	describe(http.MethodPost, groupsPath, openapi.Op{Summary: "Create a group, or move one to the top level",
		Description: "With `id`, the existing group moves (200); else a new group is made (201), under `parentId` when given.",
		Request:     groups.GroupCreate{}, Status: http.StatusCreated, Response: groups.GroupTreeRep{}, Also: map[int]any{http.StatusOK: groups.GroupTreeRep{}}})
	describe(http.MethodGet, group1, openapi.Op{Summary: "Get a group", Description: "With its subgroups and its direct member and role counts.",
		Response: groups.GroupDetailRep{}})
	describe(http.MethodPut, group1, openapi.Op{Summary: "Replace a group's name and description", Request: groups.GroupUpdate{}, Response: groups.GroupTreeRep{}})
	describe(http.MethodPatch, group1, openapi.Op{Summary: "Change a group's name or description (JSON merge patch)", Request: groups.GroupUpdate{}, Response: groups.GroupTreeRep{}})
	describe(http.MethodDelete, group1, openapi.Op{Summary: "Delete a group and its subgroups",
		Description: "The answer is the group as it was.", Response: groups.GroupTreeRep{}})
	describe(http.MethodGet, group1+"/children", openapi.Op{Summary: "List a group's subgroups", Query: page, Response: []groups.GroupTreeRep{}})
	describe(http.MethodPost, group1+"/children", openapi.Op{Summary: "Create a subgroup, or move a group under this one",
		Description: "With `id`, the existing group moves (200); else a new subgroup is made (201).",
		Request:     groups.GroupBody{}, Status: http.StatusCreated, Response: groups.GroupTreeRep{}, Also: map[int]any{http.StatusOK: groups.GroupTreeRep{}}})
	describe(http.MethodGet, group1+"/members", openapi.Op{Summary: "List a group's direct members", Query: page, Response: []userRep{}})
	describe(http.MethodGet, user1+"/groups", openapi.Op{Summary: "List the groups a user is a direct member of", Response: []groups.GroupRep{}})
	for _, method := range []string{http.MethodPut, http.MethodPost} {
		describe(method, user1+"/groups/{groupId}", openapi.Op{Summary: "Add a user to a group", Response: groups.MembershipRep{}})
	}
	describe(http.MethodDelete, user1+"/groups/{groupId}", openapi.Op{Summary: "Remove a user from a group", Response: groups.MembershipRep{}})

	// Role mappings of users and groups.
	for _, base := range []string{user1 + "/role-mappings", group1 + "/role-mappings"} {
		describe(http.MethodGet, base, openapi.Op{Summary: "List the direct role mappings, realm and client roles", Response: []roles.RoleRep{}})
		for _, s := range []struct{ path, what string }{{base + "/realm", "realm roles"}, {base + "/clients/{clientId}", "roles of the client"}} {
			describe(http.MethodGet, s.path, openapi.Op{Summary: "List the mapped " + s.what, Response: []roles.RoleRep{}})
			describe(http.MethodPost, s.path, openapi.Op{Summary: "Map " + s.what,
				Description: "All or none; the answer is the mappings of the path's roles after the change.",
				Request:     roles.RoleNamesBody{}, Response: []roles.RoleRep{}})
			describe(http.MethodDelete, s.path, openapi.Op{Summary: "Unmap " + s.what,
				Description: "All or none; the answer is the mappings of the path's roles after the change.",
				Request:     roles.RoleNamesBody{}, Response: []roles.RoleRep{}})
			describe(http.MethodGet, s.path+"/composite", openapi.Op{Summary: "List the effective " + s.what,
				Description: "Mapped directly, through groups and their ancestors, and through composites.", Response: []roles.RoleRep{}})
		}
	}
	describe(http.MethodPost, group1+"/role-mappings", openapi.Op{Summary: "Map realm roles to a group",
		Description: "All or none; the answer is the group's direct mappings after the change.", Request: roles.RoleNamesBody{}, Response: []roles.RoleRep{}})
	describe(http.MethodDelete, group1+"/role-mappings", openapi.Op{Summary: "Unmap realm roles from a group",
		Description: "All or none; the answer is the group's direct mappings after the change.", Request: roles.RoleNamesBody{}, Response: []roles.RoleRep{}})
}
