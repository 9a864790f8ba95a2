package app

import (
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/signingkeys"
)

// The protocol's forms and answers that RFCs define, or that the library
// writes as maps, as Schemas. A form names what the endpoint reads; other
// parameters are ignored, as RFC 6749 §3.1 asks, so forms allow them.
var (
	formString = openapi.Schema{"type": "string"}

	// clientAuthForm is a client's credentials in the form (RFC 6749
	// §2.3.1, RFC 7523 §2.2): with Basic instead, or a public client's id.
	clientAuthForm = map[string]any{
		"client_id":             formString,
		"client_secret":         formString,
		"client_assertion":      openapi.Schema{"type": "string", "description": "A signed JWT (private_key_jwt)."},
		"client_assertion_type": openapi.Schema{"type": "string", "enum": []string{"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}},
	}

	tokenForm = formOf([]string{"grant_type"}, map[string]any{
		"grant_type": openapi.Schema{"type": "string", "enum": []string{string(oidc.GrantTypeCode), string(oidc.GrantTypeRefreshToken),
			string(oidc.GrantTypeClientCredentials), "password", string(oidc.GrantTypeDeviceCode), string(oidc.GrantTypeTokenExchange)}},
		"code":          openapi.Schema{"type": "string", "description": "authorization_code: the code the redirect carried."},
		"redirect_uri":  openapi.Schema{"type": "string", "description": "authorization_code: the redirect_uri of the authorization request."},
		"code_verifier": openapi.Schema{"type": "string", "description": "authorization_code: the PKCE verifier (S256)."},
		"refresh_token": openapi.Schema{"type": "string", "description": "refresh_token: the refresh token to redeem."},
		"username":      openapi.Schema{"type": "string", "description": "password: the user's username or email."},
		"password":      openapi.Schema{"type": "string", "description": "password: the user's password."},
		"device_code":   openapi.Schema{"type": "string", "description": "device_code: the device_code of the device authorization."},
		"scope":         openapi.Schema{"type": "string", "description": "Space-separated scopes, at most those granted."},
		"subject_token": openapi.Schema{"type": "string", "description": "token-exchange (RFC 8693): an access token of the realm."},
		"subject_token_type": openapi.Schema{"type": "string", "description": "token-exchange: " + string(oidc.AccessTokenType) + " (or " +
			string(oidc.JWTTokenType) + ")."},
		"actor_token":          openapi.Schema{"type": "string", "description": "token-exchange: the actor's access token (delegation)."},
		"actor_token_type":     openapi.Schema{"type": "string", "description": "token-exchange: as subject_token_type."},
		"requested_token_type": openapi.Schema{"type": "string", "description": "token-exchange: " + string(oidc.AccessTokenType) + "."},
		"audience":             openapi.Schema{"type": "string", "description": "token-exchange: a clientId of the realm the token is for; repeated for several."},
		"resource":             openapi.Schema{"type": "string", "description": "token-exchange: as audience."},
	})

	// tokenTypeHintForm is the body of introspection (RFC 7662 §2.1) and
	// revocation (RFC 7009 §2.1).
	tokenTypeHintForm = formOf([]string{"token"}, map[string]any{
		"token":           formString,
		"token_type_hint": openapi.Schema{"type": "string", "enum": []string{"access_token", "refresh_token"}},
	})

	deviceAuthForm = formOf(nil, map[string]any{"scope": formString})

	// logoutForm is RP-initiated logout's (OpenID Connect RP-Initiated
	// Logout 1.0 §2) and its confirmation's, or a client's logout by
	// refresh token, authenticated as at the token endpoint.
	logoutParams = map[string]any{
		"id_token_hint":            formString,
		"post_logout_redirect_uri": formString,
		"state":                    formString,
		"ui_locales":               formString,
		"logout_hint":              formString,
	}
	logoutForm = formOf(nil, merged(logoutParams, map[string]any{
		"refresh_token": openapi.Schema{"type": "string", "description": "A client's logout: its refresh token, whose session ends."},
		"csrf":          openapi.Schema{"type": "string", "description": "The confirmation page's token."},
		"action":        formString,
	}))

	backchannelForm = formOf([]string{"logout_token"}, map[string]any{
		"logout_token": openapi.Schema{"type": "string", "description": "A logout token (OpenID Connect Back-Channel Logout 1.0 §2.4) signed by a provider the realm brokers."},
	})

	userinfoForm = openapi.Schema{"type": "object", "properties": map[string]any{
		"access_token": openapi.Schema{"type": "string", "description": "The access token, when not in the Authorization header (RFC 6750 §2.2)."}}}

	// introspection is RFC 7662 §2.2's answer: active alone for a token
	// that is not, else the token's claims.
	introspection = openapi.Schema{"type": "object", "required": []string{"active"}, "properties": map[string]any{
		"active":     openapi.Schema{"type": "boolean"},
		"scope":      openapi.Schema{"type": "string"},
		"client_id":  openapi.Schema{"type": "string"},
		"username":   openapi.Schema{"type": "string"},
		"token_type": openapi.Schema{"type": "string"},
		"exp":        openapi.Schema{"type": "integer"},
		"iat":        openapi.Schema{"type": "integer"},
		"nbf":        openapi.Schema{"type": "integer"},
		"sub":        openapi.Schema{"type": "string"},
		"aud":        openapi.Schema{"anyOf": []openapi.Schema{{"type": "string"}, {"type": "array", "items": openapi.Schema{"type": "string"}}}},
		"iss":        openapi.Schema{"type": "string"},
		"jti":        openapi.Schema{"type": "string"},
	}}

	// userinfo is the claims the token's scopes release (OpenID Connect
	// Core §5.3.2); sub is always there.
	userinfo = openapi.Schema{"type": "object", "required": []string{"sub"}, "properties": map[string]any{
		"sub":                openapi.Schema{"type": "string"},
		"preferred_username": openapi.Schema{"type": "string"},
		"email":              openapi.Schema{"type": "string"},
		"email_verified":     openapi.Schema{"type": "boolean"},
		"name":               openapi.Schema{"type": "string"},
	}}

	// jwks is RFC 7517 §5's set of the realm's public keys.
	jwks = openapi.Schema{"type": "object", "required": []string{"keys"}, "additionalProperties": false, "properties": map[string]any{
		"keys": openapi.Schema{"type": "array", "items": openapi.Schema{"type": "object", "required": []string{"kty"}, "properties": map[string]any{
			"kty": openapi.Schema{"type": "string"},
			"kid": openapi.Schema{"type": "string"},
			"use": openapi.Schema{"type": "string"},
			"alg": openapi.Schema{"type": "string"},
			"n":   openapi.Schema{"type": "string"},
			"e":   openapi.Schema{"type": "string"},
			"crv": openapi.Schema{"type": "string"},
			"x":   openapi.Schema{"type": "string"},
			"y":   openapi.Schema{"type": "string"},
		}}},
	}}

	htmlPage = openapi.Schema{"type": "string"}
)

// formOf is a form's Schema: its named parameters and the client's
// credentials.
// tokenAnswer is the token endpoint's answer: RFC 6749 §5.1's, with RFC
// 8693's issued_token_type for a token exchange.
type tokenAnswer struct {
	oidc.AccessTokenResponse
	IssuedTokenType oidc.TokenType `json:"issued_token_type,omitempty"`
}

func formOf(required []string, props map[string]any) openapi.Schema {
	sc := openapi.Schema{"type": "object", "properties": merged(clientAuthForm, props)}
	if len(required) > 0 {
		sc["required"] = required
	}
	return sc
}

func merged(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// describeProtocol describes the OpenID Connect and OAuth 2.0 endpoints,
// the WebAuthn and step-up APIs, and the realm-wide admin routes of keys,
// lockouts, composites, import and export, mail tests and the server's
// own documents.
func describeProtocol(describe func(method, path string, o openapi.Op)) {
	const realm = "/realms/{realm}"
	preflight := func(path string) {
		describe(http.MethodOptions, path, openapi.Op{Summary: "CORS preflight",
			Description: "Answers the CORS headers when the Origin is a web origin of one of the realm's clients, none otherwise.",
			Status:      http.StatusNoContent})
	}

	discovery := openapi.Op{Summary: "Discovery: the realm's provider metadata",
		Description: "OpenID Connect Discovery 1.0 §3; the same document at RFC 8414's addresses.",
		Response:    &oidc.DiscoveryConfiguration{}}
	for _, p := range []string{realm + pathDiscovery, realm + pathOAuthMetadata, pathOAuthMetadata + realm} {
		describe(http.MethodGet, p, discovery)
		preflight(p)
	}

	describe(http.MethodGet, realm+"/"+pathCerts, openapi.Op{Summary: "The realm's public signing keys (JWKS)",
		Description: "Keys being introduced and retired keys whose tokens still live are published beside the active one.",
		Response:    jwks})
	preflight(realm + "/" + pathCerts)

	describe(http.MethodPost, realm+"/"+pathToken, openapi.Op{Summary: "Token endpoint",
		Description: "RFC 6749 §3.2, for the grants authorization_code (with PKCE), refresh_token, client_credentials, password, " +
			"device_code (RFC 8628 §3.4) and token-exchange (RFC 8693, decided by the realm's policies: docs/policies.md). What " +
			"the answer holds depends on the grant: refresh_token only when the client has that grant (never for " +
			"client_credentials nor an exchange), id_token only for the openid scope, issued_token_type for an exchange.",
		Form: tokenForm, Response: &tokenAnswer{},
		Example: map[string]any{"access_token": "eyJhbGciOi…", "token_type": "Bearer", "expires_in": 300,
			"refresh_token": "8xLOxBtZp8…", "id_token": "eyJhbGciOi…", "scope": "openid profile email"}})
	preflight(realm + "/" + pathToken)

	describe(http.MethodPost, realm+"/"+pathIntrospect, openapi.Op{Summary: "Token introspection (RFC 7662)",
		Description: "For an authenticated confidential client. Access tokens answer their claims, refresh tokens and API keys " +
			"their details; anything unknown, expired, revoked or not the caller's is `{\"active\": false}`.",
		Form: tokenTypeHintForm, Response: introspection,
		Example: map[string]any{"active": true, "token_type": "Bearer", "client_id": "app", "sub": "3f1c…", "scope": "openid email",
			"exp": 1767226500, "iat": 1767226200, "iss": "https://id.example.com/realms/acme"}})
	preflight(realm + "/" + pathIntrospect)

	describe(http.MethodPost, realm+"/"+pathRevoke, openapi.Op{Summary: "Token revocation (RFC 7009)",
		Description: "200 without a body for a token that is not the caller's too: the caller learns nothing of other tokens.",
		Form:        tokenTypeHintForm})
	preflight(realm + "/" + pathRevoke)

	describe(http.MethodPost, realm+"/"+pathDevice, openapi.Op{Summary: "Device authorization (RFC 8628)",
		Form: deviceAuthForm, Response: &oidc.DeviceAuthorizationResponse{},
		Example: map[string]any{"device_code": "Ag_Ea…", "user_code": "WDJB-MJHT", "verification_uri": "https://id.example.com/realms/acme/device",
			"verification_uri_complete": "https://id.example.com/realms/acme/device?user_code=WDJB-MJHT", "expires_in": 600, "interval": 5}})

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		userinfoOp := openapi.Op{Summary: "UserInfo", Description: "The claims the token's scopes release, as JSON (OpenID Connect Core §5.3).",
			Response: userinfo,
			Example:  map[string]any{"sub": "3f1c…", "preferred_username": "alice", "email": "alice@example.com", "email_verified": true}}
		if method == http.MethodPost {
			userinfoOp.Form, userinfoOp.RequestOptional = userinfoForm, true
		}
		describe(method, realm+"/"+pathUserinfo, userinfoOp)
	}
	preflight(realm + "/" + pathUserinfo)

	var logoutQuery []openapi.Param
	for _, name := range []string{"id_token_hint", "post_logout_redirect_uri", "state", "ui_locales", "logout_hint", "client_id"} {
		logoutQuery = append(logoutQuery, openapi.Param{Name: name, Schema: formString})
	}
	describe(http.MethodGet, realm+"/"+pathLogout, openapi.Op{Summary: "RP-initiated logout",
		Description: "With a valid id_token_hint the session ends and the browser goes to post_logout_redirect_uri (302); " +
			"without, a page asks to confirm. A refused request is an error page.",
		Query: logoutQuery, Response: htmlPage, ResponseType: "text/html"})
	describe(http.MethodPost, realm+"/"+pathLogout, openapi.Op{Summary: "Logout: a browser's confirmation, or a client's by refresh token",
		Description: "A browser's form answers as the GET does. A client sending its refresh token (and authenticating as at " +
			"the token endpoint) ends that session and revokes the token's family: 204.",
		Form: logoutForm, RequestOptional: true, Response: htmlPage, ResponseType: "text/html",
		Also: map[int]any{http.StatusNoContent: nil}})
	describe(http.MethodPost, realm+"/"+pathBackchannelLogout, openapi.Op{Summary: "Back-channel logout from a brokered provider",
		Description: "Ends the sessions the logout token names: the sid's, else every session of the sub. 200 without a body.",
		Form:        backchannelForm})

	const webauthn = realm + pathWebAuthn
	webauthnForm := openapi.Schema{"type": "object", "properties": map[string]any{
		"ceremonyId": formString, "name": formString, "username": formString, "authRequestID": formString,
		"credential": openapi.Schema{"type": "string", "description": "The PublicKeyCredential as JSON."},
		"csrf":       formString, "rememberMe": formString,
	}}
	describe(http.MethodPost, webauthn+"/register/options", openapi.Op{Summary: "Begin registering a security key or passkey",
		Description: "For a sign-in's enrolment step (authRequestID) or the signed-in account (its Bearer token and a recent sign-in). " +
			"publicKey is the PublicKeyCredentialCreationOptions (WebAuthn Level 3 §5.4).",
		Request: webauthnRequest{}, Form: webauthnForm, RequestOptional: true, Response: webauthnOptionsRep{}})
	describe(http.MethodPost, webauthn+"/register/verify", openapi.Op{Summary: "Register a security key or passkey",
		Request: webauthnRequest{}, Form: webauthnForm, Status: http.StatusCreated, Response: account.WebauthnCredentialRep{}})
	describe(http.MethodPost, webauthn+"/authenticate/options", openapi.Op{Summary: "Begin an authentication with a key",
		Description: "With a username, that user's keys; without, any passkey of the realm; with authRequestID, a sign-in's second factor. " +
			"publicKey is the PublicKeyCredentialRequestOptions.",
		Request: webauthnRequest{}, Form: webauthnForm, RequestOptional: true, Response: webauthnOptionsRep{}})
	describe(http.MethodPost, webauthn+"/authenticate/verify", openapi.Op{Summary: "Check an assertion",
		Description: "As JSON, says whose key answered; as a browser's form, signs in and sends the browser on.",
		Request:     webauthnRequest{}, Form: webauthnForm, Response: webauthnVerifiedRep{}})

	describe(http.MethodGet, realm+pathStepUp+"/challenge", openapi.Op{Summary: "What the user can step up with",
		Description: "The session's present level and the methods the user has; for keys, the options of a ceremony to answer in verify.",
		Response:    stepUpChallengeRep{}})
	describe(http.MethodPost, realm+pathStepUp+"/verify", openapi.Op{Summary: "Step up with a second factor",
		Description: "A TOTP code, or an assertion of the ceremony the challenge began; the session's level afterwards.",
		Request:     stepUpVerifyInput{}, Response: stepUpRep{}})

	describe(http.MethodGet, "/admin/realms/{realm}/saml/settings", openapi.Op{Summary: "Get the realm's SAML identity provider settings",
		Response: saml.Settings{}})
	describe(http.MethodPut, "/admin/realms/{realm}/saml/settings", openapi.Op{Summary: "Change the realm's SAML identity provider settings",
		Request: saml.Settings{}, Response: saml.Settings{}})

	describe(http.MethodGet, realm+"/broker/{alias}/token", openapi.Op{Summary: "The upstream tokens kept for the caller",
		Description: "The token response the identity provider gave at the user's last sign-in through it, as it gave it, " +
			"for a provider with storeToken; the user needs the realm role read-token.",
		Response: openapi.Schema{"type": "object"}})

	const role1 = "/admin/realms/{realm}/roles/{roleName}"
	describe(http.MethodPost, role1+"/composites", openapi.Op{Summary: "Add composites to a role",
		Description: "All or nothing; answers the role's direct composites after the change.",
		Request:     roles.CompositesBody{}, Response: []roles.RoleRep{}})
	describe(http.MethodDelete, role1+"/composites", openapi.Op{Summary: "Take composites from a role",
		Description: "Answers the role's direct composites after the change.",
		Request:     roles.CompositesBody{}, Response: []roles.RoleRep{}})

	describe(http.MethodDelete, "/admin/realms/{realm}", openapi.Op{Summary: "Delete a realm",
		Description: "Answers the realm as it was. The system realm is never deleted (409).", Response: realmRep{}})

	const keys = "/admin/realms/{realm}/keys"
	describe(http.MethodGet, keys, openapi.Op{Summary: "List the realm's signing keys",
		Description: "Next keys first, then the active one, then retired ones, newest first; public halves only.", Response: []signingkeys.KeyRep{}})
	describe(http.MethodPost, keys+"/rotate", openapi.Op{Summary: "Rotate the realm's signing key",
		Description: "Publishes a next key that signs once published long enough, or at once with immediate; answers the realm's keys.",
		Request:     signingkeys.KeyRotateRequest{}, RequestOptional: true, Response: []signingkeys.KeyRep{}})
	describe(http.MethodGet, keys+"/config", openapi.Op{Summary: "Get the realm's key rotation settings", Response: signingkeys.KeyConfigRep{}})
	describe(http.MethodPut, keys+"/config", openapi.Op{Summary: "Change the realm's key rotation settings",
		Description: "A new algorithm schedules a rotation to a key of it.", Request: signingkeys.KeyConfigRep{}, Response: signingkeys.KeyConfigRep{}})

	const bruteForce = "/admin/realms/{realm}/brute-force"
	describe(http.MethodGet, bruteForce+"/locked-users", openapi.Op{Summary: "List the users locked out now",
		Query: []openapi.Param{openapi.ParamFirst, openapi.ParamMax}, Response: []lockedUserRep{}})
	for _, p := range []string{bruteForce + "/users/{userId}/unlock", bruteForce + "/users/{userId}"} {
		describe(http.MethodPost, p, openapi.Op{Summary: "Unlock a user",
			Description: "Lifts the lockout and forgets the failures counted; a user who is not locked is no error.",
			Status:      http.StatusNoContent})
	}

	describe(http.MethodGet, pathOpenAPIJSON, openapi.Op{Summary: "This document, as JSON", Response: openapi.Schema{"type": "object"}})
	describe(http.MethodGet, pathOpenAPIYAML, openapi.Op{Summary: "This document, as YAML",
		Response: openapi.Schema{"type": "string"}, ResponseType: "application/yaml"})
	describe(http.MethodGet, "/admin/metrics", openapi.Op{Summary: "Prometheus metrics",
		Description: "The text exposition format; public when the server is configured so.",
		Response:    openapi.Schema{"type": "string"}, ResponseType: "text/plain"})

	boolParam := func(name, desc string) openapi.Param {
		return openapi.Param{Name: name, Description: desc, Schema: openapi.Schema{"type": "boolean"}}
	}
	describe(http.MethodPost, "/admin/realms/import", openapi.Op{Summary: "Import a realm from an export",
		Query: []openapi.Param{
			boolParam("overwrite", "Replace a realm of the same name."),
			boolParam("asCopy", "Import under a new name with new ids."),
		},
		Request: realmImport{}, Status: http.StatusCreated, Response: realmRep{}})
	describe(http.MethodGet, "/admin/realms/{realm}/export", openapi.Op{Summary: "Export a realm",
		Description: "The realm as a file to import: its settings and what it holds; users and secrets only when asked, " +
			"and only for a credential holding the permissions of what the file then carries.",
		Query: []openapi.Param{
			boolParam("includeUsers", "With the users (needs users:read too)."),
			boolParam("includeSecrets", "With the secrets the admin API never shows (needs realm:write, clients:write, identity-providers:write, and users:write with the users)."),
		},
		Response: realmExport{}})

	mailTest := openapi.Op{Request: testMailBody{}, Response: testMailResult{},
		Description: "Sends at once and answers the provider's outcome: a failed delivery is a 502 saying why."}
	mailTest.Summary = "Send a test email through the realm's SMTP server"
	describe(http.MethodPost, "/admin/realms/{realm}/smtp/test", mailTest)
	mailTest.Summary = "Send a test email through the realm's email provider"
	describe(http.MethodPost, "/admin/realms/{realm}/email/test", mailTest)
}
