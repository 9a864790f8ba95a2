package app

import (
	"reflect"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// claimsTestUser is the sample user of the claim tests.
func claimsTestUser() claimUser {
	return claimUser{
		ID: "2b3c4d5e-0000-4000-8000-000000000001", Username: "alice", Email: "alice@example.com", EmailVerified: true,
		FirstName: "Alice", LastName: "Liddell", CreatedTimestamp: 1_700_000_000_123,
		Attributes: map[string][]string{
			"nickname":            {"ally"},
			"locale":              {"en"},
			"phoneNumber":         {"+1 555 0100"},
			"phoneNumberVerified": {"true"},
			"pets":                {"cat", "dog"},
			"scores":              {"1", "x", "3"},
			"prefs":               {`{"theme":"dark","sizes":[1,2]}`},
			"shouty":              {"YES"},
			"street":              {"1 Main St"},
			"locality":            {"Springfield"},
			"country":             {"US"},
			"land":                {"Wonderland"},
			"big":                 {"9999999999"},
		},
	}
}

// claimsTestInput is a request by client "app" with the given scopes.
func claimsTestInput(token scopes.TokenKind, clientScopes ...*store.ClientScope) claimsInput {
	return claimsInput{
		Token:           token,
		User:            claimsTestUser(),
		ClientID:        "app",
		WebOrigins:      []string{"https://app.example.com", "+"},
		RedirectOrigins: []string{"https://cb.example.com", "https://app.example.com"},
		RealmRoles:      []string{"user", "admin", "offline_access", "admin"},
		ClientRoles: map[string][]string{
			"app":                     {"viewer", "editor"},
			"billing":                 {"payer"},
			"https://api.example.com": {"read"},
			"unused":                  {},
		},
		GroupPaths: []string{"/staff/engineering", "/admins", "/"},
		Scopes:     clientScopes,
	}
}

// claimsTestMapper makes a mapper from config pairs.
func claimsTestMapper(name, mapperType string, kv ...string) *store.ProtocolMapper {
	return &store.ProtocolMapper{ID: "id-" + name, Name: name, MapperType: mapperType, Protocol: scopes.ProtocolOIDC,
		Config: claimsTestConfig(kv...)}
}

// claimsTestConfig makes a mapper config from key, value pairs.
func claimsTestConfig(kv ...string) map[string]string {
	cfg := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

// claimsTestTokens are the tokens and responses claims are built for.
var claimsTestTokens = []scopes.TokenKind{scopes.AccessToken, scopes.IDToken, scopes.UserinfoResponse, scopes.IntrospectionResponse}

func claimsTestScope(name string, mappers ...*store.ProtocolMapper) *store.ClientScope {
	return &store.ClientScope{ID: "scope-" + name, Name: name, Protocol: scopes.ProtocolOIDC, Mappers: mappers}
}

func TestClaimsMappers(t *testing.T) {
	m := claimsTestMapper
	cases := []struct {
		name    string
		mappers []*store.ProtocolMapper
		edit    func(*claimsInput)
		want    map[string]any
	}{
		// Property mappers.
		{"property username", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "username", scopes.CfgClaimName, "preferred_username")},
			nil, map[string]any{"preferred_username": "alice"}},
		{"property id", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "id", scopes.CfgClaimName, "uid")},
			nil, map[string]any{"uid": "2b3c4d5e-0000-4000-8000-000000000001"}},
		{"property emailVerified as boolean", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "emailVerified", scopes.CfgClaimName, "email_verified", scopes.CfgJSONType, "boolean")},
			nil, map[string]any{"email_verified": true}},
		{"property emailVerified false", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "emailVerified", scopes.CfgClaimName, "email_verified", scopes.CfgJSONType, "boolean")},
			func(in *claimsInput) { in.User.EmailVerified = false }, map[string]any{"email_verified": false}},
		{"property emailVerified as String", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "emailVerified", scopes.CfgClaimName, "ev", scopes.CfgJSONType, "String")},
			nil, map[string]any{"ev": "true"}},
		{"property createdTimestamp as long", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "createdTimestamp", scopes.CfgClaimName, "created", scopes.CfgJSONType, "long")},
			nil, map[string]any{"created": 1_700_000_000_123}},
		{"property createdTimestamp as int does not fit", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "createdTimestamp", scopes.CfgClaimName, "created", scopes.CfgJSONType, "int")},
			nil, map[string]any{}},
		{"property empty email gives no claim", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "email", scopes.CfgClaimName, "email")},
			func(in *claimsInput) { in.User.Email = "" }, map[string]any{}},
		{"property unknown gives no claim", []*store.ProtocolMapper{m("a", scopes.MapperUserProperty, scopes.CfgUserAttribute, "nickname", scopes.CfgClaimName, "nick")},
			nil, map[string]any{}},

		// Attribute mappers.
		{"attribute single", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "nickname", scopes.CfgClaimName, "nickname")},
			nil, map[string]any{"nickname": "ally"}},
		{"attribute missing", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "middleName", scopes.CfgClaimName, "middle_name")},
			nil, map[string]any{}},
		{"attribute multivalued keeps order", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "pets", scopes.CfgClaimName, "pets", scopes.CfgMultivalued, "true")},
			nil, map[string]any{"pets": []any{"cat", "dog"}}},
		{"attribute not multivalued takes the first", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "pets", scopes.CfgClaimName, "pet", scopes.CfgMultivalued, "false")},
			nil, map[string]any{"pet": "cat"}},
		{"attribute multivalued long skips what does not convert", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "scores", scopes.CfgClaimName, "scores", scopes.CfgMultivalued, "true", scopes.CfgJSONType, "long")},
			nil, map[string]any{"scores": []any{1, 3}}},
		{"attribute long that does not convert", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "nickname", scopes.CfgClaimName, "n", scopes.CfgJSONType, "long")},
			nil, map[string]any{}},
		{"attribute int out of range", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "big", scopes.CfgClaimName, "n", scopes.CfgJSONType, "int")},
			nil, map[string]any{}},
		{"attribute long in range", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "big", scopes.CfgClaimName, "n", scopes.CfgJSONType, "long")},
			nil, map[string]any{"n": 9999999999}},
		{"attribute boolean any case", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "phoneNumberVerified", scopes.CfgClaimName, "v", scopes.CfgJSONType, "boolean")},
			nil, map[string]any{"v": true}},
		{"attribute boolean that does not convert", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "shouty", scopes.CfgClaimName, "v", scopes.CfgJSONType, "boolean")},
			nil, map[string]any{}},
		{"attribute JSON", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "prefs", scopes.CfgClaimName, "prefs", scopes.CfgJSONType, "JSON")},
			nil, map[string]any{"prefs": map[string]any{"theme": "dark", "sizes": []any{1, 2}}}},
		{"attribute JSON that does not parse", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "pets", scopes.CfgClaimName, "p", scopes.CfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"attribute reads built-in username", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "username", scopes.CfgClaimName, "upn")},
			nil, map[string]any{"upn": "alice"}},
		{"attribute reads built-in lastName", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "lastName", scopes.CfgClaimName, "family_name")},
			nil, map[string]any{"family_name": "Liddell"}},
		{"attribute with no user attributes", []*store.ProtocolMapper{m("a", scopes.MapperUserAttribute, scopes.CfgUserAttribute, "nickname", scopes.CfgClaimName, "nickname")},
			func(in *claimsInput) { in.User.Attributes = nil }, map[string]any{}},

		// Hardcoded claims and claim names.
		{"hardcoded string", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "tier", scopes.CfgClaimValue, "gold")},
			nil, map[string]any{"tier": "gold"}},
		{"hardcoded long", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "level", scopes.CfgClaimValue, "7", scopes.CfgJSONType, "long")},
			nil, map[string]any{"level": 7}},
		{"hardcoded int", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "level", scopes.CfgClaimValue, "-7", scopes.CfgJSONType, "int")},
			nil, map[string]any{"level": -7}},
		{"hardcoded JSON", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "cfg", scopes.CfgClaimValue, `{"a":[1,"b"],"c":null}`, scopes.CfgJSONType, "JSON")},
			nil, map[string]any{"cfg": map[string]any{"a": []any{1, "b"}, "c": nil}}},
		{"hardcoded JSON null gives no claim", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "cfg", scopes.CfgClaimValue, `null`, scopes.CfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"hardcoded JSON with trailing data", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "cfg", scopes.CfgClaimValue, `{"a":1}]`, scopes.CfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"hardcoded bad long is skipped", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "level", scopes.CfgClaimValue, "seven", scopes.CfgJSONType, "long")},
			nil, map[string]any{}},
		{"nested claim name", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "org.plan.tier", scopes.CfgClaimValue, "gold")},
			nil, map[string]any{"org": map[string]any{"plan": map[string]any{"tier": "gold"}}}},
		{"escaped dot is literal", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, `https://example\.com/tier`, scopes.CfgClaimValue, "gold")},
			nil, map[string]any{"https://example.com/tier": "gold"}},
		{"escaped and nested", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, `a\.b.c`, scopes.CfgClaimValue, "x")},
			nil, map[string]any{"a.b": map[string]any{"c": "x"}}},
		{"siblings share their parent", []*store.ProtocolMapper{
			m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "org.tier", scopes.CfgClaimValue, "gold"),
			m("b", scopes.MapperHardcoded, scopes.CfgClaimName, "org.name", scopes.CfgClaimValue, "acme")},
			nil, map[string]any{"org": map[string]any{"tier": "gold", "name": "acme"}}},
		{"a scalar in the way is kept", []*store.ProtocolMapper{
			m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "org", scopes.CfgClaimValue, "acme"),
			m("b", scopes.MapperHardcoded, scopes.CfgClaimName, "org.tier", scopes.CfgClaimValue, "gold")},
			nil, map[string]any{"org": "acme"}},
		{"the later mapper by name wins a scalar", []*store.ProtocolMapper{
			m("b", scopes.MapperHardcoded, scopes.CfgClaimName, "tier", scopes.CfgClaimValue, "silver"),
			m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "tier", scopes.CfgClaimValue, "gold")},
			nil, map[string]any{"tier": "silver"}},
		{"reserved claims are never written", []*store.ProtocolMapper{
			m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "sub", scopes.CfgClaimValue, "root"),
			m("b", scopes.MapperHardcoded, scopes.CfgClaimName, "aud.x", scopes.CfgClaimValue, "x"),
			m("c", scopes.MapperUserProperty, scopes.CfgUserAttribute, "username", scopes.CfgClaimName, "iss")},
			nil, map[string]any{}},
		{"empty claim name parts are skipped", []*store.ProtocolMapper{m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "a..b", scopes.CfgClaimValue, "x")},
			nil, map[string]any{}},

		// Roles.
		{"realm roles multivalued", []*store.ProtocolMapper{m("a", scopes.MapperRealmRoles, scopes.CfgClaimName, "realm_access.roles", scopes.CfgMultivalued, "true")},
			nil, map[string]any{"realm_access": map[string]any{"roles": []any{"admin", "offline_access", "user"}}}},
		{"realm roles not multivalued", []*store.ProtocolMapper{m("a", scopes.MapperRealmRoles, scopes.CfgClaimName, "role")},
			nil, map[string]any{"role": "admin"}},
		{"realm roles with prefix", []*store.ProtocolMapper{m("a", scopes.MapperRealmRoles, scopes.CfgClaimName, "roles", scopes.CfgMultivalued, "true", scopes.CfgRealmRolePrefix, "realm:")},
			nil, map[string]any{"roles": []any{"realm:admin", "realm:offline_access", "realm:user"}}},
		{"no realm roles, no claim", []*store.ProtocolMapper{m("a", scopes.MapperRealmRoles, scopes.CfgClaimName, "realm_access.roles", scopes.CfgMultivalued, "true")},
			func(in *claimsInput) { in.RealmRoles = nil }, map[string]any{}},
		{"two role mappers share a claim", []*store.ProtocolMapper{
			m("a", scopes.MapperRealmRoles, scopes.CfgClaimName, "roles", scopes.CfgMultivalued, "true"),
			m("b", scopes.MapperClientRoles, scopes.CfgClaimName, "roles", scopes.CfgMultivalued, "true", scopes.CfgRoleClientID, "billing")},
			nil, map[string]any{"roles": []any{"admin", "offline_access", "payer", "user"}}},
		{"client roles per client", []*store.ProtocolMapper{m("a", scopes.MapperClientRoles, scopes.CfgClaimName, "resource_access.${client_id}.roles", scopes.CfgMultivalued, "true")},
			nil, map[string]any{"resource_access": map[string]any{
				"app":                     map[string]any{"roles": []any{"editor", "viewer"}},
				"billing":                 map[string]any{"roles": []any{"payer"}},
				"https://api.example.com": map[string]any{"roles": []any{"read"}},
			}}},
		{"client roles of one client", []*store.ProtocolMapper{m("a", scopes.MapperClientRoles, scopes.CfgClaimName, "app_roles", scopes.CfgMultivalued, "true", scopes.CfgRoleClientID, "app", scopes.CfgClientRolePrefix, "app:")},
			nil, map[string]any{"app_roles": []any{"app:editor", "app:viewer"}}},
		{"client roles of a client without any", []*store.ProtocolMapper{m("a", scopes.MapperClientRoles, scopes.CfgClaimName, "r", scopes.CfgMultivalued, "true", scopes.CfgRoleClientID, "unused")},
			nil, map[string]any{}},
		{"client roles into one claim", []*store.ProtocolMapper{m("a", scopes.MapperClientRoles, scopes.CfgClaimName, "client_roles", scopes.CfgMultivalued, "true")},
			nil, map[string]any{"client_roles": []any{"editor", "payer", "read", "viewer"}}},
		{"no client roles, no claim", []*store.ProtocolMapper{m("a", scopes.MapperClientRoles, scopes.CfgClaimName, "resource_access.${client_id}.roles", scopes.CfgMultivalued, "true")},
			func(in *claimsInput) { in.ClientRoles = nil }, map[string]any{}},

		// Groups.
		{"groups full path by default", []*store.ProtocolMapper{m("a", scopes.MapperGroups, scopes.CfgClaimName, "groups")},
			nil, map[string]any{"groups": []any{"/admins", "/staff/engineering"}}},
		{"groups by name", []*store.ProtocolMapper{m("a", scopes.MapperGroups, scopes.CfgClaimName, "groups", scopes.CfgFullPath, "false")},
			nil, map[string]any{"groups": []any{"admins", "engineering"}}},
		{"groups single valued", []*store.ProtocolMapper{m("a", scopes.MapperGroups, scopes.CfgClaimName, "group", scopes.CfgMultivalued, "false")},
			nil, map[string]any{"group": "/admins"}},
		{"no groups, no claim", []*store.ProtocolMapper{m("a", scopes.MapperGroups, scopes.CfgClaimName, "groups")},
			func(in *claimsInput) { in.GroupPaths = nil }, map[string]any{}},

		// Audiences.
		{"audience of a client", []*store.ProtocolMapper{m("a", scopes.MapperAudience, scopes.CfgClientAudience, "billing")},
			nil, map[string]any{"aud": "billing"}},
		{"audiences merge", []*store.ProtocolMapper{
			m("a", scopes.MapperAudience, scopes.CfgClientAudience, "billing"),
			m("b", scopes.MapperAudience, scopes.CfgCustomAudience, "https://custom.example.com"),
			m("c", scopes.MapperAudience, scopes.CfgClientAudience, "billing")},
			nil, map[string]any{"aud": []any{"billing", "https://custom.example.com"}}},
		{"audience resolve", []*store.ProtocolMapper{m("a", scopes.MapperAudienceRoles)},
			nil, map[string]any{"aud": []any{"billing", "https://api.example.com"}}},
		{"audience resolve with only the client's own roles", []*store.ProtocolMapper{m("a", scopes.MapperAudienceRoles)},
			func(in *claimsInput) { in.ClientRoles = map[string][]string{"app": {"viewer"}} }, map[string]any{}},
		{"audience resolve merges with an audience mapper", []*store.ProtocolMapper{
			m("a", scopes.MapperAudienceRoles), m("b", scopes.MapperAudience, scopes.CfgCustomAudience, "zeta")},
			nil, map[string]any{"aud": []any{"billing", "https://api.example.com", "zeta"}}},

		// Full name, origins, address.
		{"full name", []*store.ProtocolMapper{m("a", scopes.MapperFullName)}, nil, map[string]any{"name": "Alice Liddell"}},
		{"full name of a first name", []*store.ProtocolMapper{m("a", scopes.MapperFullName)},
			func(in *claimsInput) { in.User.LastName = "" }, map[string]any{"name": "Alice"}},
		{"full name of a last name", []*store.ProtocolMapper{m("a", scopes.MapperFullName)},
			func(in *claimsInput) { in.User.FirstName = "" }, map[string]any{"name": "Liddell"}},
		{"no names, no full name", []*store.ProtocolMapper{m("a", scopes.MapperFullName)},
			func(in *claimsInput) { in.User.FirstName, in.User.LastName = "", "" }, map[string]any{}},
		{"allowed origins with redirect origins", []*store.ProtocolMapper{m("a", scopes.MapperAllowedOrigins)},
			nil, map[string]any{"allowed-origins": []any{"https://app.example.com", "https://cb.example.com"}}},
		{"allowed origins wildcard", []*store.ProtocolMapper{m("a", scopes.MapperAllowedOrigins)},
			func(in *claimsInput) { in.WebOrigins = []string{"*"} }, map[string]any{"allowed-origins": []any{"*"}}},
		{"no origins, no claim", []*store.ProtocolMapper{m("a", scopes.MapperAllowedOrigins)},
			func(in *claimsInput) { in.WebOrigins = []string{"+"}; in.RedirectOrigins = nil }, map[string]any{}},
		{"address", []*store.ProtocolMapper{m("a", scopes.MapperAddress)},
			nil, map[string]any{"address": map[string]any{"street_address": "1 Main St", "locality": "Springfield", "country": "US"}}},
		{"address with a renamed attribute", []*store.ProtocolMapper{m("a", scopes.MapperAddress, scopes.CfgAddressAttrPrefix+"country", "land")},
			nil, map[string]any{"address": map[string]any{"street_address": "1 Main St", "locality": "Springfield", "country": "Wonderland"}}},
		{"no address attributes, no claim", []*store.ProtocolMapper{m("a", scopes.MapperAddress)},
			func(in *claimsInput) { in.User.Attributes = nil }, map[string]any{}},

		// What is not run.
		{"unknown mapper type", []*store.ProtocolMapper{m("a", "oidc-script-mapper", scopes.CfgClaimName, "x", scopes.CfgClaimValue, "y")},
			nil, map[string]any{}},
		{"SAML mapper", []*store.ProtocolMapper{{Name: "a", MapperType: scopes.MapperHardcoded, Protocol: scopes.ProtocolSAML,
			Config: map[string]string{scopes.CfgClaimName: "x", scopes.CfgClaimValue: "y"}}}, nil, map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := claimsTestInput(scopes.AccessToken, claimsTestScope("s", c.mappers...))
			if c.edit != nil {
				c.edit(&in)
			}
			mustEqualJSON(t, "claims", buildClaims(in), c.want)
		})
	}
}

func TestClaimsTokenFlags(t *testing.T) {
	m := claimsTestMapper
	on := map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IDToken: true, scopes.UserinfoResponse: true, scopes.IntrospectionResponse: true}
	cases := []struct {
		name   string
		mapper *store.ProtocolMapper
		want   map[scopes.TokenKind]bool
	}{
		{"unset flags mean every token", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v"), on},
		{"access off", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v", "access.token.claim", "false"),
			map[scopes.TokenKind]bool{scopes.IDToken: true, scopes.UserinfoResponse: true, scopes.IntrospectionResponse: true}},
		{"id off", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v", "id.token.claim", "false"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.UserinfoResponse: true, scopes.IntrospectionResponse: true}},
		{"userinfo off", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v", "userinfo.token.claim", "false"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IDToken: true, scopes.IntrospectionResponse: true}},
		{"introspection off", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v", "introspection.token.claim", "false"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IDToken: true, scopes.UserinfoResponse: true}},
		{"only the access token", m("a", scopes.MapperHardcoded, scopes.CfgClaimName, "x", scopes.CfgClaimValue, "v", "id.token.claim", "false",
			"userinfo.token.claim", "false", "introspection.token.claim", "false", "access.token.claim", "true"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true}},
		{"allowed origins never reach the ID token or userinfo", m("a", scopes.MapperAllowedOrigins), map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IntrospectionResponse: true}},
		{"audience resolve never reaches the ID token or userinfo", m("a", scopes.MapperAudienceRoles), map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IntrospectionResponse: true}},
		{"audience never reaches userinfo", m("a", scopes.MapperAudience, scopes.CfgCustomAudience, "x"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IDToken: true, scopes.IntrospectionResponse: true}},
		{"audience off for the ID token", m("a", scopes.MapperAudience, scopes.CfgCustomAudience, "x", "id.token.claim", "false"),
			map[scopes.TokenKind]bool{scopes.AccessToken: true, scopes.IntrospectionResponse: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, token := range claimsTestTokens {
				claims := buildClaims(claimsTestInput(token, claimsTestScope("s", c.mapper)))
				if got := len(claims) > 0; got != c.want[token] {
					t.Errorf("%s: claims %v, want present=%v", token.Flag(), claims, c.want[token])
				}
			}
		})
	}
}

// TestClaimsDeterministic builds the same claims whatever the order of the
// scopes, mappers and input lists.
func TestClaimsDeterministic(t *testing.T) {
	defaults := claimsTestDefaultScopes()
	want := buildClaims(claimsTestInput(scopes.AccessToken, defaults...))
	for i := range 20 {
		shuffled := slices.Clone(defaults)
		for j := range shuffled {
			k := (j*7 + i*3) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		for _, s := range shuffled {
			s.Mappers = slices.Clone(s.Mappers)
			slices.Reverse(s.Mappers)
		}
		in := claimsTestInput(scopes.AccessToken, shuffled...)
		slices.Reverse(in.RealmRoles)
		slices.Reverse(in.GroupPaths)
		slices.Reverse(in.ClientRoles["app"])
		got := buildClaims(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %v\nwant %v", i, got, want)
		}
	}
}

// claimsTestDefaultScopes is the seeded scopes as the store returns them.
func claimsTestDefaultScopes() []*store.ClientScope {
	defaults := scopes.Defaults(&store.Realm{})
	for _, s := range defaults {
		s.ID = "scope-" + s.Name
		for _, m := range s.Mappers {
			m.ID, m.ScopeID = s.Name+"/"+m.Name, s.ID
		}
	}
	return defaults
}

// TestClaimsDefaultScopes checks that the seeded scopes give the claims
// Keycloak's would for the same user, token by token.
func TestClaimsDefaultScopes(t *testing.T) {
	profileEmailPhone := map[string]any{
		"name": "Alice Liddell", "given_name": "Alice", "family_name": "Liddell", "preferred_username": "alice",
		"nickname": "ally", "locale": "en", "email": "alice@example.com", "email_verified": true,
		"phone_number": "+1 555 0100", "phone_number_verified": true,
		"address": map[string]any{"street_address": "1 Main St", "locality": "Springfield", "country": "US"},
		"upn":     "alice", "groups": []any{"admin", "offline_access", "user"},
	}
	access := cloneMap(profileEmailPhone, map[string]any{
		"realm_access": map[string]any{"roles": []any{"admin", "offline_access", "user"}},
		"resource_access": map[string]any{
			"app":                     map[string]any{"roles": []any{"editor", "viewer"}},
			"billing":                 map[string]any{"roles": []any{"payer"}},
			"https://api.example.com": map[string]any{"roles": []any{"read"}},
		},
		"aud":             []any{"billing", "https://api.example.com"},
		"allowed-origins": []any{"https://app.example.com", "https://cb.example.com"},
	})
	want := map[scopes.TokenKind]map[string]any{
		scopes.AccessToken:           access,
		scopes.IntrospectionResponse: access,
		scopes.IDToken:               profileEmailPhone,
		scopes.UserinfoResponse:      profileEmailPhone,
	}
	for _, token := range claimsTestTokens {
		t.Run(token.Flag(), func(t *testing.T) {
			mustEqualJSON(t, "claims", buildClaims(claimsTestInput(token, claimsTestDefaultScopes()...)), want[token])
		})
	}

	// A client asking only for the default scopes of a new client gets no
	// phone, address or microprofile claims.
	var defaults []*store.ClientScope
	for _, s := range claimsTestDefaultScopes() {
		if slices.Contains(clients.NewClientDefaultScopes, s.Name) {
			defaults = append(defaults, s)
		}
	}
	got := buildClaims(claimsTestInput(scopes.AccessToken, defaults...))
	for _, claim := range []string{"phone_number", "address", "upn", "groups"} {
		if _, ok := got[claim]; ok {
			t.Errorf("default scopes alone gave %s: %v", claim, got)
		}
	}
	for _, claim := range []string{"realm_access", "resource_access", "preferred_username", "email", "aud", "allowed-origins"} {
		if _, ok := got[claim]; !ok {
			t.Errorf("default scopes alone lack %s: %v", claim, got)
		}
	}
}

// BenchmarkClaimsDefaultScopes is the claim work of one access token with
// every seeded scope applied.
func BenchmarkClaimsDefaultScopes(b *testing.B) {
	in := claimsTestInput(scopes.AccessToken, claimsTestDefaultScopes()...)
	for b.Loop() {
		buildClaims(in)
	}
}
