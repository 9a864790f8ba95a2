package openapi

// The shapes every route of a group shares, documented once.

// errorResponses are the APIs' error answers, in the body apiError
// references (the Go type of apperr's renderer).
func errorResponses(apiError Schema) map[string]any {
	content := map[string]any{"application/json": map[string]any{"schema": apiError,
		"example": map[string]any{"error": "invalid_request", "error_description": "username is required", "field": "username"}}}
	withPage := map[string]any{"application/json": map[string]any{"schema": apiError}, "text/html": map[string]any{}}
	return map[string]any{
		"Error": map[string]any{"description": "An error: its stable code (error), a message, the field at fault. " +
			"The codes and their statuses are listed in docs/api-errors.md.", "content": content},
		"ErrorOrPage": map[string]any{"description": "An error: JSON to a Bearer caller, an error page to a browser.",
			"content": withPage},
		"Unauthorized": map[string]any{"description": "No credential, or one that is unknown, expired or revoked.",
			"content": content},
		"Forbidden": map[string]any{"description": "The credential lacks the route's permission, or is confined to another realm.",
			"content": content},
		"OAuthError": map[string]any{"description": "An OAuth 2.0 error (RFC 6749 §5.2).",
			"content": map[string]any{"application/json": map[string]any{"schema": Schema{"$ref": "#/components/schemas/OAuthError"},
				"example": map[string]any{"error": "invalid_grant", "error_description": "the code is unknown or used"}}}},
		"SCIMError": map[string]any{"description": "A SCIM error (RFC 7644 §3.12).",
			"content": map[string]any{"application/scim+json": map[string]any{"schema": Schema{"$ref": "#/components/schemas/SCIMError"}}}},
	}
}

var oauthError = Schema{
	"type":     "object",
	"required": []string{"error"},
	"properties": Schema{
		"error":             Schema{"type": "string"},
		"error_description": Schema{"type": "string"},
		"error_uri":         Schema{"type": "string"},
		"state":             Schema{"type": "string"},
	},
}

var scimError = Schema{
	"type":     "object",
	"required": []string{"schemas", "status"},
	"properties": Schema{
		"schemas":  Schema{"type": "array", "items": Schema{"type": "string"}},
		"status":   Schema{"type": "string"},
		"scimType": Schema{"type": "string"},
		"detail":   Schema{"type": "string"},
	},
}

var securitySchemes = map[string]any{
	schemeAdminBearer: map[string]any{"type": "http", "scheme": "bearer",
		"description": "An administrator's access token (POST /admin/auth/login), a named admin API key (ipk_…) or a service account's API key (idp_…)."},
	schemeAdminKey: map[string]any{"type": "apiKey", "in": "header", "name": "X-Admin-API-Key",
		"description": "The bootstrap admin API key or a named admin API key."},
	schemeUserBearer: map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
		"description": "An access token the realm issued to the user."},
	schemeSCIM: map[string]any{"type": "http", "scheme": "bearer", "description": "A SCIM token of the realm."},
	schemeSetupBearer: map[string]any{"type": "http", "scheme": "bearer",
		"description": "The setup wizard's bootstrap token, printed at the first start without an administrator."},
	schemeSetupToken: map[string]any{"type": "apiKey", "in": "header", "name": "X-Setup-Token",
		"description": "The setup wizard's bootstrap token, in a header of its own."},
	schemeClientBasic: map[string]any{"type": "http", "scheme": "basic",
		"description": "A confidential client's id and secret (client_secret_basic)."},
}
