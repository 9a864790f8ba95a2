package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/attributes"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/scim"
)

// federationProvider is a user federation provider as a creation or an
// update gives it: ldapfed.Input, under a name of its own in the document.
type federationProvider struct{ ldapfed.Input }

// describeSCIM describes SCIM (its administration and the protocol under
// /scim/v2), LDAP user federation and custom attributes.
func describeSCIM(describe func(method, path string, o openapi.Op)) {
	describeSCIMAdmin(describe)
	describeSCIMProtocol(describe)
	describeUserFederation(describe)
	describeCustomAttributes(describe)
}

func describeSCIMAdmin(describe func(method, path string, o openapi.Op)) {
	const tokens, token1 = "/admin/realms/{realm}/scim/tokens", "/admin/realms/{realm}/scim/tokens/{tokenId}"
	describe(http.MethodPost, tokens, openapi.Op{Summary: "Create a SCIM token",
		Description: "The caller must hold users:read, users:write, groups:read and groups:write too: a token grants them. " +
			"The credential is in the answer's `token`, this once.",
		Request: scim.TokenCreate{}, Status: http.StatusCreated, Response: scim.TokenRep{},
		Example: map[string]any{"id": "0b6f…", "name": "Entra ID", "status": "active", "enabled": true,
			"createdAt": int64(1767225600000), "useCount": 0, "token": "0b6f….Zm9v…"}})
	describe(http.MethodGet, tokens, openapi.Op{Summary: "List the SCIM tokens", Response: []scim.TokenRep{}})
	describe(http.MethodGet, token1, openapi.Op{Summary: "Get a SCIM token", Response: scim.TokenRep{}})
	describe(http.MethodDelete, token1, openapi.Op{Summary: "Delete a SCIM token", Status: http.StatusNoContent})
	describe(http.MethodPut, token1+"/revoke", openapi.Op{Summary: "Revoke a SCIM token", Description: "For good: a revoked token is never enabled again.",
		Response: scim.TokenRep{}})
	describe(http.MethodPut, token1+"/enable", openapi.Op{Summary: "Enable a SCIM token", Description: "409 for a revoked token.",
		Response: scim.TokenRep{}})
	describe(http.MethodPut, token1+"/disable", openapi.Op{Summary: "Disable a SCIM token", Description: "409 for a revoked token.",
		Response: scim.TokenRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/scim/status", openapi.Op{Summary: "The realm's provisioning status",
		Description: "Its tokens by status, what SCIM has provisioned, the last request and the latest errors (kept in memory).",
		Response:    scim.StatusRep{}})
	const mappings = "/admin/realms/{realm}/scim/attribute-mappings"
	describe(http.MethodGet, mappings, openapi.Op{Summary: "List the SCIM attribute mappings", Response: []scim.MappingRep{}})
	describe(http.MethodPost, mappings, openapi.Op{Summary: "Map a SCIM attribute",
		Description: "`target` is `firstName`, `lastName` or `attributes.<name>`, a custom attribute of the realm's schema.",
		Request:     scim.MappingCreate{}, Status: http.StatusCreated, Response: scim.MappingRep{},
		Example: map[string]any{"id": "5d2a…", "scimPath": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter",
			"target": "attributes.costCenter", "createdAt": int64(1767225600000)}})
	describe(http.MethodDelete, mappings+"/{mappingId}", openapi.Op{Summary: "Delete a SCIM attribute mapping", Status: http.StatusNoContent})
}

// scimMediaType is the media type of SCIM's answers (RFC 7644 §3.1).
const scimMediaType = "application/scim+json"

// scimRequestTypes are the media types SCIM's requests come in.
var scimRequestTypes = []string{scimMediaType, "application/json"}

func describeSCIMProtocol(describe func(method, path string, o openapi.Op)) {
	stringParam := func(name, desc string) openapi.Param {
		return openapi.Param{Name: name, Description: desc, Schema: openapi.Schema{"type": "string"}}
	}
	shape := []openapi.Param{
		stringParam("attributes", "Only these attributes (comma-separated), with id and schemas (RFC 7644 §3.4.2.5)."),
		stringParam("excludedAttributes", "All attributes but these (comma-separated)."),
	}
	query := append([]openapi.Param{
		stringParam("filter", "A filter (RFC 7644 §3.4.2.2), such as `userName eq \"ada\"`."),
		stringParam("sortBy", "The attribute to sort by."),
		{Name: "sortOrder", Description: "ascending (the default) or descending.", Schema: openapi.Schema{"type": "string"}},
		{Name: "startIndex", Description: "The 1-based index of the first result.", Schema: openapi.Schema{"type": "integer"}},
		{Name: "count", Description: "Results to answer at most (1000 at most); without it, a query matching more than 1000 is refused.",
			Schema: openapi.Schema{"type": "integer"}},
	}, shape...)
	op := func(o openapi.Op) openapi.Op {
		o.ResponseType = scimMediaType
		if o.Request != nil {
			o.RequestTypes = scimRequestTypes
		}
		return o
	}

	for _, base := range []string{"/scim/v2", "/scim/v2/{realm}"} {
		describe(http.MethodGet, base+"/ServiceProviderConfig", op(openapi.Op{Summary: "What the service provider supports (RFC 7643 §5)",
			Response: scim.ServiceProviderConfigRep{}}))
		describe(http.MethodGet, base+"/Schemas", op(openapi.Op{Summary: "List the schemas (RFC 7644 §4)",
			Description: "A realm's list holds the extensions its attribute mappings declare. A filter is refused (403).",
			Response:    scimList(openapi.Schema{"$ref": "#/components/schemas/Schema"})}))
		describe(http.MethodGet, base+"/Schemas/{schemaId}", op(openapi.Op{Summary: "Get a schema by its URN", Response: scim.SchemaRep{}}))
		describe(http.MethodGet, base+"/ResourceTypes", op(openapi.Op{Summary: "List the resource types (RFC 7644 §4)",
			Description: "User and Group. A filter is refused (403).",
			Response:    scimList(openapi.Schema{"$ref": "#/components/schemas/ResourceType"})}))
		describe(http.MethodGet, base+"/ResourceTypes/{resourceTypeId}", op(openapi.Op{Summary: "Get a resource type", Response: scim.ResourceTypeRep{}}))
	}

	user, userIn := scim.UserJSONSchema(false), scim.UserJSONSchema(true)
	const users, user1 = "/scim/v2/{realm}/Users", "/scim/v2/{realm}/Users/{id}"
	describe(http.MethodPost, users, op(openapi.Op{Summary: "Create a user (RFC 7644 §3.3)", Query: shape,
		Request: userIn, Status: http.StatusCreated, Response: user, Example: userExample}))
	describe(http.MethodGet, users, op(openapi.Op{Summary: "Find users (RFC 7644 §3.4.2)", Query: query, Response: scimList(user)}))
	describe(http.MethodPost, users+"/.search", op(openapi.Op{Summary: "Find users, the query in the body (RFC 7644 §3.4.3)",
		Request: searchRequest, Response: scimList(user)}))
	describe(http.MethodGet, user1, op(openapi.Op{Summary: "Get a user", Query: shape, Response: user, Example: userExample}))
	describe(http.MethodPut, user1, op(openapi.Op{Summary: "Replace a user (RFC 7644 §3.5.1)",
		Description: "If-Match, when given, must name the user's version (412 else).", Query: shape, Request: userIn, Response: user}))
	describe(http.MethodPatch, user1, op(openapi.Op{Summary: "Change a user (RFC 7644 §3.5.2)",
		Description: "If-Match, when given, must name the user's version (412 else).", Query: shape, Request: patchRequest, Response: user}))
	describe(http.MethodDelete, user1, op(openapi.Op{Summary: "Delete a user", Status: http.StatusNoContent}))

	group, groupIn := scim.GroupJSONSchema(false), scim.GroupJSONSchema(true)
	const groups, group1 = "/scim/v2/{realm}/Groups", "/scim/v2/{realm}/Groups/{id}"
	describe(http.MethodPost, groups, op(openapi.Op{Summary: "Create a group", Query: shape,
		Request: groupIn, Status: http.StatusCreated, Response: group}))
	describe(http.MethodGet, groups, op(openapi.Op{Summary: "Find groups", Description: "Without members unless `attributes` names them.",
		Query: query, Response: scimList(group)}))
	describe(http.MethodPost, groups+"/.search", op(openapi.Op{Summary: "Find groups, the query in the body",
		Request: searchRequest, Response: scimList(group)}))
	describe(http.MethodGet, group1, op(openapi.Op{Summary: "Get a group", Query: shape, Response: group}))
	describe(http.MethodPut, group1, op(openapi.Op{Summary: "Replace a group", Query: shape, Request: groupIn, Response: group}))
	describe(http.MethodPatch, group1, op(openapi.Op{Summary: "Change a group, its members among them",
		Description: "204 without a body unless `attributes` asks for the group back.", Query: shape,
		Request: patchRequest, Response: group, Also: map[int]any{http.StatusNoContent: nil}}))
	describe(http.MethodDelete, group1, op(openapi.Op{Summary: "Delete a group", Status: http.StatusNoContent}))

	describe(http.MethodPost, "/scim/v2/{realm}/Bulk", op(openapi.Op{Summary: "Run several operations (RFC 7644 §3.7)",
		Description: "At most 100 operations and 1 MiB (413 else). An operation's `data` may name a resource another creates as `bulkId:<id>`.",
		Request:     bulkRequest, Response: scim.BulkResponse{}}))
}

// scimList is RFC 7644 §3.4.2's ListResponse of items.
func scimList(items openapi.Schema) openapi.Schema {
	return openapi.Schema{"type": "object", "additionalProperties": false,
		"required": []string{"schemas", "totalResults", "startIndex", "itemsPerPage", "Resources"},
		"properties": map[string]any{
			"schemas":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"totalResults": map[string]any{"type": "integer"},
			"startIndex":   map[string]any{"type": "integer"},
			"itemsPerPage": map[string]any{"type": "integer"},
			"Resources":    map[string]any{"type": "array", "items": items},
		}}
}

// The protocol's requests (RFC 7644 §3.4.3, §3.5.2, §3.7): SCIM names
// are case-insensitive, so the objects are open.
var (
	stringList    = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	searchRequest = openapi.Schema{"type": "object", "description": "A SearchRequest.", "properties": map[string]any{
		"schemas":            stringList,
		"filter":             map[string]any{"type": "string"},
		"sortBy":             map[string]any{"type": "string"},
		"sortOrder":          map[string]any{"type": "string"},
		"startIndex":         map[string]any{"type": "integer"},
		"count":              map[string]any{"type": "integer"},
		"attributes":         stringList,
		"excludedAttributes": stringList,
	}}
	patchRequest = openapi.Schema{"type": "object", "description": "A PatchOp: at most 100 operations.", "properties": map[string]any{
		"schemas": stringList,
		"Operations": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"op":    map[string]any{"type": "string", "description": "add, replace or remove, in any case."},
			"path":  map[string]any{"type": "string", "description": "An attribute path, which may select values with a filter."},
			"value": map[string]any{},
		}}},
	}}
	bulkRequest = openapi.Schema{"type": "object", "description": "A BulkRequest.", "properties": map[string]any{
		"schemas":      stringList,
		"failOnErrors": map[string]any{"type": "integer", "minimum": 1},
		"Operations": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"method":  map[string]any{"type": "string"},
			"bulkId":  map[string]any{"type": "string", "description": "Required with POST."},
			"version": map[string]any{"type": "string"},
			"path":    map[string]any{"type": "string", "description": "The resource's path under the realm's base: /Users, /Groups/{id}."},
			"data":    map[string]any{"description": "The body the operation would have on its own."},
		}}},
	}}
	userExample = map[string]any{
		"schemas":  []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
		"id":       "3f1c…",
		"userName": "ada",
		"name":     map[string]any{"givenName": "Ada", "familyName": "Lovelace"},
		"active":   true,
		"emails":   []any{map[string]any{"value": "ada@example.com", "primary": true}},
		"meta": map[string]any{"resourceType": "User", "created": "2026-01-01T00:00:00.000Z", "lastModified": "2026-01-01T00:00:00.000Z",
			"location": "https://id.example.com/scim/v2/acme/Users/3f1c…", "version": `W/"9c1e…"`},
	}
)

func describeUserFederation(describe func(method, path string, o openapi.Op)) {
	const feds, fed1 = "/admin/realms/{realm}/user-federation", "/admin/realms/{realm}/user-federation/{id}"
	describe(http.MethodGet, feds, openapi.Op{Summary: "List the user federation providers",
		Description: "In the order sign-ins ask them.", Response: []ldapfed.Provider{}})
	describe(http.MethodPost, feds, openapi.Op{Summary: "Add a user federation provider (LDAP)",
		Description: "Left out, a setting takes its default (the vendor's, for the attributes). The bind credential is never answered.",
		Request:     federationProvider{}, Status: http.StatusCreated, Response: ldapfed.Provider{}})
	describe(http.MethodGet, fed1, openapi.Op{Summary: "Get a user federation provider", Description: "With its syncs' state.",
		Response: ldapfed.Provider{}})
	describe(http.MethodPut, fed1, openapi.Op{Summary: "Replace a user federation provider's settings",
		Description: "Each setting the body names; null returns it to its default, and the redacted bind credential keeps the stored one.",
		Request:     federationProvider{}, Response: ldapfed.Provider{}})
	describe(http.MethodPatch, fed1, openapi.Op{Summary: "Change a user federation provider's settings (JSON merge patch)",
		Request: federationProvider{}, Response: ldapfed.Provider{}})
	describe(http.MethodDelete, fed1, openapi.Op{Summary: "Delete a user federation provider",
		Description: "With the users imported from it, in one transaction.", Status: http.StatusNoContent})
	describe(http.MethodPost, fed1+"/test-connection", openapi.Op{Summary: "Test a provider's connection",
		Description: "Connects with the stored settings, binds, reads the root DSE and counts the users. " +
			"A failure of the directory is an answer too: `success` false, `error` its kind.",
		Response: ldapfed.ConnectionTest{}})
	describe(http.MethodPost, fed1+"/sync", openapi.Op{Summary: "Sync a provider's users now",
		Description: "Answers when the sync ends; 409 while another runs, 503 when the directory fails.",
		Query: []openapi.Param{{Name: "action", Description: "full (the default) or changed: only entries changed since the last sync.",
			Schema: openapi.Schema{"type": "string", "enum": []string{ldapfed.ActionFull, ldapfed.ActionChanged}}}},
		Response: ldapfed.SyncResult{}})
}

func describeCustomAttributes(describe func(method, path string, o openapi.Op)) {
	const attrs, attr1 = "/admin/realms/{realm}/custom-attributes", "/admin/realms/{realm}/custom-attributes/{attributeId}"
	describe(http.MethodPost, attrs, openapi.Op{Summary: "Add a custom attribute to the realm's schema",
		Request: attributes.AttributeBody{}, Status: http.StatusCreated, Response: attributes.AttributeRep{}})
	describe(http.MethodGet, attrs, openapi.Op{Summary: "List the realm's custom attributes", Description: "By name.",
		Response: []attributes.AttributeRep{}})
	describe(http.MethodPut, attrs, openapi.Op{Summary: "Replace the realm's custom attribute schema",
		Description: "An attribute named as an existing one (by id, else by name) is updated; a new one is created; " +
			"one left out is removed. Nothing changes unless all of it is valid.",
		Request: attributes.SchemaBody{}, Response: []attributes.AttributeRep{}})
	describe(http.MethodGet, attr1, openapi.Op{Summary: "Get a custom attribute", Response: attributes.AttributeRep{}})
	describe(http.MethodPut, attr1, openapi.Op{Summary: "Replace a custom attribute",
		Description: "The whole attribute, as a creation gives it; id and createdTimestamp cannot change.",
		Request:     attributes.AttributeBody{}, Response: attributes.AttributeRep{}})
	describe(http.MethodDelete, attr1, openapi.Op{Summary: "Delete a custom attribute",
		Description: "Users keep their values, unseen: the attribute added again shows them again.", Status: http.StatusNoContent})
}
