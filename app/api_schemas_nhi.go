package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/nhi"
	"github.com/idenplane/idenplane/app/openapi"
)

// describeNHI describes the non-human identities and their service
// accounts (app/nhi), the named admin API keys (app/adminkeys), the
// administrators' accounts (app/adminaccounts) and the admin session.
func describeNHI(describe func(method, path string, o openapi.Op)) {
	str := openapi.Schema{"type": "string"}
	days := openapi.Param{Name: "days", Description: "The days to count back from today (default 30).",
		Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": 366}}
	identityQuery := func(withKind bool) []openapi.Param {
		q := []openapi.Param{
			{Name: "state", Schema: openapi.Schema{"type": "string",
				"enum": []string{identity.NHIActive, identity.NHISuspended, identity.NHIDecommissioned}}},
			{Name: "owner", Description: "The id of the owning user or group.", Schema: str},
			{Name: "search", Description: "A part of the name.", Schema: str},
			openapi.ParamFirst, openapi.ParamMax,
		}
		if withKind {
			q = append([]openapi.Param{{Name: "kind", Schema: openapi.Schema{"type": "string", "enum": identity.NHIKinds}}}, q...)
		}
		return q
	}
	identityExample := map[string]any{"id": "5b0e…", "kind": "workload", "name": "billing-sync", "description": "Nightly billing export",
		"owner": map[string]any{"type": "user", "id": "3f1c…"}, "metadata": map[string]any{"team": "billing"}, "state": "active",
		"clientId": "billing-sync", "serviceAccountUserId": "9a2d…", "credentialPolicyId": "", "adminPermissions": []string{},
		"createdTimestamp": int64(1767225600000), "updatedTimestamp": int64(1767225600000), "lastUsedTimestamp": nil}
	credentialExample := map[string]any{"id": "c41a…", "type": "client_secret", "name": "ci", "scopes": []string{},
		"state": "active", "createdTimestamp": int64(1767225600000), "expiresTimestamp": nil, "revokedTimestamp": nil,
		"lastUsedTimestamp": nil, "secret": "s3cr3t…"}

	// The identities and, through the kind service, the service accounts.
	for _, v := range []struct {
		base, cred, what, credWhat string
		kind                       bool
	}{
		{"/admin/realms/{realm}/nhi", "/credentials", "identity", "credential", true},
		{"/admin/realms/{realm}/service-accounts", "/api-keys", "service account", "API key", false},
	} {
		one := v.base + "/{id}"
		creds, cred1 := one+v.cred, one+v.cred+"/{credentialId}"
		if !v.kind {
			cred1 = one + v.cred + "/{keyId}"
		}
		describe(http.MethodPost, v.base, openapi.Op{Summary: "Create a " + v.what,
			Description: "With its backing client (clientId: the name) and service-account user.",
			Request:     nhi.IdentityCreate{}, Status: http.StatusCreated, Response: nhi.IdentityRep{}, Example: identityExample})
		describe(http.MethodGet, v.base, openapi.Op{Summary: "List " + v.what + "s", Description: "By name, a page at a time.",
			Query: identityQuery(v.kind), Response: []nhi.IdentityRep{}})
		describe(http.MethodGet, one, openapi.Op{Summary: "Get a " + v.what, Response: nhi.IdentityRep{}, Example: identityExample})
		describe(http.MethodPut, one, openapi.Op{Summary: "Replace a " + v.what + "'s description, owner, metadata, policy and permissions",
			Request: nhi.IdentityUpdate{}, Response: nhi.IdentityRep{}})
		describe(http.MethodDelete, one, openapi.Op{Summary: "Delete a " + v.what, Description: "With its client and credentials; a decommissioned one is kept.",
			Status: http.StatusNoContent})
		describe(http.MethodPost, creds, openapi.Op{Summary: "Issue a " + v.credWhat,
			Description: "A secret or an API key is in the answer, this once.",
			Request:     nhi.NHICredentialCreate{}, Status: http.StatusCreated, Response: nhi.NHICredentialRep{}, Example: credentialExample})
		describe(http.MethodGet, creds, openapi.Op{Summary: "List a " + v.what + "'s " + v.credWhat + "s", Description: "Oldest first, never a secret.",
			Response: []nhi.NHICredentialRep{}})
		describe(http.MethodPost, cred1+"/revoke", openapi.Op{Summary: "Revoke a " + v.credWhat, Response: nhi.NHICredentialRep{}})
		describe(http.MethodPost, cred1+"/rotate", openapi.Op{Summary: "Rotate a " + v.credWhat,
			Description: "Issues a replacement (its secret in the answer, once) and revokes the old one at once or after the grace period.",
			Request:     nhi.NHICredentialRotation{}, RequestOptional: true, Status: http.StatusCreated, Response: nhi.NHICredentialRep{}})
	}
	const ids, id1 = "/admin/realms/{realm}/nhi", "/admin/realms/{realm}/nhi/{id}"
	for _, action := range []string{"suspend", "reactivate", "decommission"} {
		describe(http.MethodPost, id1+"/"+action, openapi.Op{Summary: "Move an identity to its next state: " + action,
			Response: nhi.IdentityRep{}})
	}
	describe(http.MethodGet, id1+"/stats", openapi.Op{Summary: "An identity's use by day", Query: []openapi.Param{days},
		Response: nhi.NHIStatsRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/service-accounts/{id}/metrics", openapi.Op{Summary: "A service account's use in total",
		Query: []openapi.Param{days}, Response: nhi.NHIMetricsRep{}})
	describe(http.MethodPost, id1+"/certificate", openapi.Op{Summary: "Issue an identity a client certificate",
		Description: "For a CSR's key, or for a key the server makes and answers this once.",
		Request:     nhi.NHICertificateBody{}, Status: http.StatusCreated, Response: nhi.NHICertificateRep{}})
	describe(http.MethodPost, ids+"/device-certificates", openapi.Op{Summary: "Issue a device a client certificate",
		Request: nhi.DeviceCertificateBody{}, Status: http.StatusCreated, Response: nhi.NHICertificateRep{}})
	describe(http.MethodPost, ids+"/devices/bulk-register", openapi.Op{Summary: "Register devices in bulk",
		Description: "A result per device; with allOrNothing, none is registered unless all are.",
		Request:     nhi.BulkRegisterBody{}, Response: nhi.BulkAnswer{}})
	describe(http.MethodGet, ids+"/rotation-status", openapi.Op{Summary: "Credentials due, overdue and expired", Response: nhi.RotationStatusRep{}})

	const policies, policy1 = ids + "/credential-policies", ids + "/credential-policies/{policyId}"
	describe(http.MethodPost, policies, openapi.Op{Summary: "Create a credential policy", Request: nhi.NHIPolicyBody{},
		Status: http.StatusCreated, Response: nhi.NHIPolicyRep{}})
	describe(http.MethodGet, policies, openapi.Op{Summary: "List credential policies", Response: []nhi.NHIPolicyRep{}})
	describe(http.MethodGet, policy1, openapi.Op{Summary: "Get a credential policy", Response: nhi.NHIPolicyRep{}})
	describe(http.MethodPut, policy1, openapi.Op{Summary: "Replace a credential policy's fields", Request: nhi.NHIPolicyBody{},
		Response: nhi.NHIPolicyRep{}})
	describe(http.MethodDelete, policy1, openapi.Op{Summary: "Delete a credential policy", Status: http.StatusNoContent})
	describe(http.MethodGet, policy1+"/rotation-status", openapi.Op{Summary: "A policy's credentials due, overdue and expired",
		Response: nhi.RotationStatusRep{}})

	dateOrTime := openapi.Schema{"type": "string", "description": "A date (YYYY-MM-DD, UTC) or an RFC 3339 time."}
	describe(http.MethodGet, ids+"/audit-logs", openapi.Op{Summary: "Read the identities' audit log", Description: "Newest first, a page at a time.",
		Query: []openapi.Param{{Name: "identityId", Schema: str}, {Name: "credentialId", Schema: str},
			{Name: "action", Description: "An action, in any case.", Schema: str}, {Name: "actorId", Schema: str},
			{Name: "dateFrom", Schema: dateOrTime}, {Name: "dateTo", Description: "A date takes in the whole day.", Schema: dateOrTime},
			openapi.ParamFirst, openapi.ParamMax},
		Response: []nhi.NHIAuditRep{}})
	describe(http.MethodDelete, ids+"/audit-logs", openapi.Op{Summary: "Delete audit records",
		Description: "Those before `before`, or all of them without it; the answer says how many went.",
		Query:       []openapi.Param{{Name: "before", Schema: dateOrTime}}, Response: nhi.AuditDeletion{}})

	const keys, key1 = "/admin/api-keys", "/admin/api-keys/{id}"
	describe(http.MethodPost, keys, openapi.Op{Summary: "Create a named admin API key", Description: "The key is in the answer, this once.",
		Request: adminkeys.APIKeyCreate{}, Status: http.StatusCreated, Response: adminkeys.APIKeyRep{}})
	describe(http.MethodGet, keys, openapi.Op{Summary: "List the admin API keys", Response: []adminkeys.APIKeyRep{}})
	describe(http.MethodGet, key1, openapi.Op{Summary: "Get an admin API key", Response: adminkeys.APIKeyRep{}})
	describe(http.MethodPost, key1+"/rotate", openapi.Op{Summary: "Rotate an admin API key",
		Description: "The new key is in the answer, this once; the old one works on for graceSeconds.",
		Request:     adminkeys.APIKeyRotation{}, RequestOptional: true, Response: adminkeys.APIKeyRep{}})
	describe(http.MethodDelete, key1, openapi.Op{Summary: "Revoke an admin API key", Status: http.StatusNoContent})

	const accounts, account1 = "/admin/accounts", "/admin/accounts/{id}"
	describe(http.MethodPost, accounts, openapi.Op{Summary: "Create an administrator's account",
		Description: "Without a password, the answer has a one-time enrolment link.",
		Request:     adminaccounts.AdminAccountCreate{}, Status: http.StatusCreated, Response: adminaccounts.AdminAccountRep{}})
	describe(http.MethodGet, accounts, openapi.Op{Summary: "List the administrators' accounts", Response: []adminaccounts.AdminAccountRep{}})
	describe(http.MethodGet, account1, openapi.Op{Summary: "Get an administrator's account", Response: adminaccounts.AdminAccountRep{}})
	describe(http.MethodPut, account1, openapi.Op{Summary: "Change an administrator's account", Request: adminaccounts.AdminAccountUpdate{},
		Response: adminaccounts.AdminAccountRep{}})
	describe(http.MethodDelete, account1, openapi.Op{Summary: "Delete an administrator's account", Status: http.StatusNoContent})
	describe(http.MethodGet, account1+"/sessions", openapi.Op{Summary: "List an administrator's sign-in sessions",
		Response: []adminaccounts.AdminSessionRep{}})
	describe(http.MethodDelete, account1+"/sessions", openapi.Op{Summary: "End an administrator's sessions and their tokens",
		Status: http.StatusNoContent})
	describe(http.MethodPost, account1+"/enrolment", openapi.Op{Summary: "Make a new enrolment link",
		Description: "The earlier link stops working.", Response: adminaccounts.Enrolment{}})

	describe(http.MethodGet, "/admin/auth/me", openapi.Op{Summary: "Who the caller is", Response: adminMeRep{},
		Example: map[string]any{"type": "user", "id": "3f1c…", "username": "admin", "email": "admin@example.com",
			"createdTimestamp": int64(1767225600000), "tokenExpiresAt": "2026-01-01T00:15:00Z", "permissions": []string{"users:read"}}})
	describe(http.MethodPost, "/admin/auth/logout", openapi.Op{Summary: "End the caller's admin token", Status: http.StatusNoContent})
}
