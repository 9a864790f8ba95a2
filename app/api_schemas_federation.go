package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/orgs"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// describeFederation describes the routes of organizations, identity
// providers, SAML service providers, and of the clients' secrets, scope
// links and service-account users, client scopes' writes and protocol
// mappers.
func describeFederation(describe func(method, path string, o openapi.Op)) {
	describeOrganizations(describe)
	describeBrokering(describe)
	describeClientScopes(describe)
}

func describeOrganizations(describe func(method, path string, o openapi.Op)) {
	const list, one = "/admin/realms/{realm}/organizations", "/admin/realms/{realm}/organizations/{slug}"
	org := map[string]any{"id": "6b0f2c8e-5d1a-4f7e-9a3b-2c4d5e6f7a8b", "slug": "acme", "name": "Acme",
		"description": "", "enabled": true, "attributes": map[string][]string{},
		"domains": []map[string]any{{"name": "acme.example", "verified": true}}, "createdTimestamp": int64(1767225600000)}
	describe(http.MethodPost, list, openapi.Op{Summary: "Create an organization",
		Description: "The slug is made from the name when left out. A domain is verified through verify-domain, never set.",
		Request:     orgs.OrganizationCreate{}, Status: http.StatusCreated, Response: orgs.OrganizationRep{}, Example: org})
	describe(http.MethodGet, list, openapi.Op{Summary: "List organizations", Response: []orgs.OrganizationRep{},
		Query: []openapi.Param{
			{Name: "search", Description: "A part of the name or of a domain, in any case.", Schema: openapi.Schema{"type": "string"}},
			{Name: "exact", Description: "Match the whole name or domain.", Schema: openapi.Schema{"type": "boolean"}},
			openapi.ParamFirst, openapi.ParamMax,
		}})
	describe(http.MethodGet, one, openapi.Op{Summary: "Get an organization", Response: orgs.OrganizationRep{}, Example: org})
	describe(http.MethodPut, one, openapi.Op{Summary: "Replace an organization's fields",
		Description: "id, slug and createdTimestamp may be sent back but not changed.",
		Request:     orgs.OrganizationRep{}, Response: orgs.OrganizationRep{}})
	describe(http.MethodDelete, one, openapi.Op{Summary: "Delete an organization",
		Description: "Its memberships, invitations, domains and SSO connections go with it; its members stay users of the realm.",
		Status:      http.StatusNoContent})

	describe(http.MethodGet, one+"/members", openapi.Op{Summary: "List an organization's members", Response: []orgs.MemberRep{},
		Query: []openapi.Param{openapi.ParamFirst, openapi.ParamMax}})
	describe(http.MethodPost, one+"/members", openapi.Op{Summary: "Add a user of the realm as a member",
		Description: "An administrator only: the organization's owners and admins invite.",
		Request:     orgs.MemberAdd{}, Status: http.StatusCreated, Response: orgs.MemberRep{},
		Example: map[string]any{"id": "3f1c9d2e-7b4a-4c1d-8e2f-0a1b2c3d4e5f", "username": "alice", "email": "alice@acme.example",
			"enabled": true, "role": orgs.RoleMember, "joinedTimestamp": int64(1767225600000)}})
	describe(http.MethodPut, one+"/members/{userId}", openapi.Op{Summary: "Change a member's role",
		Request: orgs.MemberUpdate{}, Response: orgs.MemberRep{}})
	describe(http.MethodDelete, one+"/members/{userId}", openapi.Op{Summary: "Remove a member",
		Description: "The user stays a user of the realm. The last owner cannot leave.", Status: http.StatusNoContent})

	describe(http.MethodGet, one+"/invitations", openapi.Op{Summary: "List an organization's pending invitations",
		Response: []orgs.InvitationRep{}, Query: []openapi.Param{openapi.ParamFirst, openapi.ParamMax}})
	describe(http.MethodPost, one+"/invitations", openapi.Op{Summary: "Invite an address",
		Description: "The invitation is mailed; its link is in the answer, this once. expiresIn is in seconds.",
		Request:     orgs.InvitationCreate{}, Status: http.StatusCreated, Response: orgs.InvitationRep{}})
	describe(http.MethodDelete, one+"/invitations/{invitationId}", openapi.Op{Summary: "Revoke a pending invitation",
		Status: http.StatusNoContent})
	describe(http.MethodPost, one+"/invitations/{token}/accept", openapi.Op{Summary: "Accept an invitation",
		Description: "By the invited user, with their access token; no body.", Response: orgs.MemberRep{}})

	describe(http.MethodPost, one+"/verify-domain/initiate", openapi.Op{Summary: "Start a domain's verification",
		Description: "A value to publish as a TXT record at the record name.",
		Request:     orgs.DomainBody{}, Response: orgs.DomainChallengeRep{},
		Example: map[string]any{"domain": "acme.example", "recordName": orgs.ChallengePrefix + "acme.example", "recordType": "TXT",
			"recordValue": "idenplane-verification=…", "verified": false}})
	describe(http.MethodPost, one+"/verify-domain", openapi.Op{Summary: "Verify a domain",
		Description: "Looks up the TXT record initiate asked for.", Request: orgs.DomainBody{}, Response: orgs.DomainRep{}})

	const conns = one + "/sso-connections"
	describe(http.MethodGet, conns, openapi.Op{Summary: "List an organization's SSO connections", Response: []orgs.SSOConnectionRep{}})
	describe(http.MethodPost, conns, openapi.Op{Summary: "Connect an identity provider to an organization",
		Request: orgs.SSOConnectionCreate{}, Status: http.StatusCreated, Response: orgs.SSOConnectionRep{},
		Example: map[string]any{"id": "9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "identityProvider": "acme-okta", "enabled": true,
			"domain": "acme.example", "autoJoin": true, "redirectWhenEmailMatches": true, "hideOnLogin": false,
			"createdTimestamp": int64(1767225600000)}})
	describe(http.MethodGet, conns+"/{connectionId}", openapi.Op{Summary: "Get an SSO connection", Response: orgs.SSOConnectionRep{}})
	describe(http.MethodPut, conns+"/{connectionId}", openapi.Op{Summary: "Replace an SSO connection's fields",
		Description: "id, identityProvider and createdTimestamp may be sent back but not changed.",
		Request:     orgs.SSOConnectionRep{}, Response: orgs.SSOConnectionRep{}})
	describe(http.MethodDelete, conns+"/{connectionId}", openapi.Op{Summary: "Delete an SSO connection", Status: http.StatusNoContent})
}

func describeBrokering(describe func(method, path string, o openapi.Op)) {
	const idps, idp1 = "/admin/realms/{realm}/identity-providers", "/admin/realms/{realm}/identity-providers/{alias}"
	describe(http.MethodPost, idps, openapi.Op{Summary: "Create an identity provider",
		Description: "For oidc an issuer is enough: the endpoints come from its discovery document, and discovery says which.",
		Request:     broker.ProviderCreate{}, Status: http.StatusCreated, Response: broker.ProviderRep{},
		Example: map[string]any{"internalId": "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d", "alias": "acme-okta", "displayName": "Acme",
			"providerType": broker.TypeOIDC, "enabled": true, "clientId": "idenplane", "clientSecret": broker.Redacted,
			"authorizationUrl": "https://acme.okta.example/oauth2/v1/authorize", "tokenUrl": "https://acme.okta.example/oauth2/v1/token",
			"userinfoUrl": "https://acme.okta.example/oauth2/v1/userinfo", "jwksUrl": "https://acme.okta.example/oauth2/v1/keys",
			"issuer": "https://acme.okta.example", "defaultScopes": "openid email profile", "trustEmail": false,
			"syncUserProfile": false, "storeToken": false, "claimMapping": map[string]any{}, "logoutUrl": "",
			"upstreamLogout": false, "createdTimestamp": int64(1767225600000),
			"discovery": map[string]any{"url": "https://acme.okta.example/.well-known/openid-configuration",
				"filled": []string{"authorizationUrl", "tokenUrl", "userinfoUrl", "jwksUrl"}}}})
	describe(http.MethodGet, idps, openapi.Op{Summary: "List identity providers", Response: []broker.ProviderRep{}})
	describe(http.MethodPost, idps+"/discover", openapi.Op{Summary: "Read an issuer's discovery document",
		Description: "What a create would take from it; nothing is stored.", Request: broker.DiscoverBody{}, Response: broker.Discovered{}})
	describe(http.MethodGet, idp1, openapi.Op{Summary: "Get an identity provider", Description: "Its client secret redacted.",
		Response: broker.ProviderRep{}})
	describe(http.MethodPut, idp1, openapi.Op{Summary: "Replace an identity provider's fields",
		Description: "A redacted clientSecret keeps the stored one; alias and providerType may be sent back but not changed.",
		Request:     broker.ProviderCreate{}, Response: broker.ProviderRep{}})
	describe(http.MethodDelete, idp1, openapi.Op{Summary: "Delete an identity provider",
		Description: "Answers the deleted provider; its users lose their links to it.", Response: broker.ProviderRep{}})

	const sps, sp1 = "/admin/realms/{realm}/saml-service-providers", "/admin/realms/{realm}/saml-service-providers/{id}"
	describe(http.MethodPost, sps, openapi.Op{Summary: "Create a SAML service provider",
		Description: "From its fields, its metadata, or its metadata's address (fetched once): fields left out come from the metadata.",
		Request:     saml.SPCreate{}, Status: http.StatusCreated, Response: saml.SP{},
		Example: map[string]any{"id": "1d2c3b4a-5f6e-4d7c-8b9a-0f1e2d3c4b5a", "entityId": "https://app.example/saml", "name": "App",
			"enabled": true, "acsUrl": "https://app.example/saml/acs", "sloUrl": "", "sloBinding": store.SLOBindingPOST, "certificate": "",
			"requestsSigned": false, "encryptionCertificate": "", "encryptAssertions": false, "nameIdFormat": saml.NameIDEmail,
			"signAssertions": true, "signResponses": true, "attributeStatements": map[string]string{}, "idpInitiatedSso": false}})
	describe(http.MethodGet, sps, openapi.Op{Summary: "List SAML service providers", Response: []saml.SP{}})
	describe(http.MethodGet, sp1, openapi.Op{Summary: "Get a SAML service provider", Response: saml.SP{}})
	describe(http.MethodPut, sp1, openapi.Op{Summary: "Replace a SAML service provider's fields",
		Description: "metadata, when sent, is read first; the body's other fields override it.",
		Request:     saml.SPUpdate{}, Response: saml.SP{}})
	describe(http.MethodDelete, sp1, openapi.Op{Summary: "Delete a SAML service provider", Status: http.StatusNoContent})
}

func describeClientScopes(describe func(method, path string, o openapi.Op)) {
	const client1 = "/admin/realms/{realm}/clients/{clientId}"
	describe(http.MethodPost, client1+"/regenerate-secret", openapi.Op{Summary: "Give a confidential client a new secret",
		Description: "The new secret is in the answer, this once; the old one stops working.", Response: clients.ClientRep{}})
	describe(http.MethodGet, client1+"/service-account-user", openapi.Op{Summary: "Get a client's service-account user",
		Response: userRep{}})
	for _, kind := range []string{"default", "optional"} {
		path := client1 + "/" + kind + "-client-scopes"
		describe(http.MethodGet, path, openapi.Op{Summary: "List a client's " + kind + " scopes", Response: []clients.LinkedScopeRep{}})
		describe(http.MethodPost, path, openapi.Op{Summary: "Assign a client scope to a client as " + kind,
			Description: "A scope is assigned one way at most.",
			Request:     clients.LinkedScopeAdd{}, Status: http.StatusCreated, Response: clients.LinkedScopeRep{}})
		describe(http.MethodDelete, path+"/{scopeId}", openapi.Op{Summary: "Unassign a client's " + kind + " scope",
			Status: http.StatusNoContent})
	}
	const composites = client1 + "/roles/{roleName}/composites"
	describe(http.MethodPost, composites, openapi.Op{Summary: "Add composites to a client role",
		Description: "All or nothing; answers the role's direct composites after the change.",
		Request:     roles.CompositesBody{}, Response: []roles.RoleRep{}})
	describe(http.MethodDelete, composites, openapi.Op{Summary: "Remove composites from a client role",
		Description: "All or nothing; answers the role's direct composites after the change.",
		Request:     roles.CompositesBody{}, Response: []roles.RoleRep{}})

	const scopesPath, scope1 = "/admin/realms/{realm}/client-scopes", "/admin/realms/{realm}/client-scopes/{scopeId}"
	describe(http.MethodPost, scopesPath, openapi.Op{Summary: "Create a client scope",
		Description: "With its protocol mappers, each as a protocol mapper's create takes it.",
		Request:     scopes.ScopeCreate{}, Status: http.StatusCreated, Response: scopes.ScopeRep{}})
	describe(http.MethodPut, scope1, openapi.Op{Summary: "Replace a client scope's name and description",
		Request: scopes.ScopeUpdate{}, Response: scopes.ScopeRep{}})
	describe(http.MethodDelete, scope1, openapi.Op{Summary: "Delete a client scope",
		Description: "Its mappers and its links to clients go with it.", Status: http.StatusNoContent})

	const mappers = scope1 + "/protocol-mappers"
	describe(http.MethodGet, mappers, openapi.Op{Summary: "List a client scope's protocol mappers", Response: []scopes.MapperRep{}})
	describe(http.MethodPost, mappers, openapi.Op{Summary: "Add a protocol mapper to a client scope",
		Request: scopes.MapperCreate{}, Status: http.StatusCreated, Response: scopes.MapperRep{},
		Example: map[string]any{"id": "7e6d5c4b-3a2f-4e1d-9c8b-7a6f5e4d3c2b", "name": "department", "mapperType": scopes.MapperUserAttribute,
			"protocol": scopes.ProtocolOIDC, "config": map[string]string{scopes.CfgUserAttribute: "department", scopes.CfgClaimName: "department"}}})
	describe(http.MethodGet, mappers+"/{mapperId}", openapi.Op{Summary: "Get a protocol mapper", Response: scopes.MapperRep{}})
	describe(http.MethodPut, mappers+"/{mapperId}", openapi.Op{Summary: "Replace a protocol mapper's name and config",
		Request: scopes.MapperUpdate{}, Response: scopes.MapperRep{}})
	describe(http.MethodDelete, mappers+"/{mapperId}", openapi.Op{Summary: "Delete a protocol mapper", Status: http.StatusNoContent})
	describe(http.MethodGet, "/admin/realms/{realm}/protocol-mapper-types", openapi.Op{Summary: "List the protocol mapper types",
		Description: "Each type's config keys, required and optional, and the tokens it can reach.", Response: []scopes.MapperTypeRep{}})
}
