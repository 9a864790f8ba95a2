package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/app/clients"
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
func claimsTestInput(token tokenKind, scopes ...*store.ClientScope) claimsInput {
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
		Scopes:     scopes,
	}
}

// claimsTestMapper makes a mapper from config pairs.
func claimsTestMapper(name, mapperType string, kv ...string) *store.ProtocolMapper {
	return &store.ProtocolMapper{ID: "id-" + name, Name: name, MapperType: mapperType, Protocol: protocolOIDC,
		Config: withConfig(map[string]string{}, kv...)}
}

func claimsTestScope(name string, mappers ...*store.ProtocolMapper) *store.ClientScope {
	return &store.ClientScope{ID: "scope-" + name, Name: name, Protocol: protocolOIDC, Mappers: mappers}
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
		{"property username", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "username", cfgClaimName, "preferred_username")},
			nil, map[string]any{"preferred_username": "alice"}},
		{"property id", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "id", cfgClaimName, "uid")},
			nil, map[string]any{"uid": "2b3c4d5e-0000-4000-8000-000000000001"}},
		{"property emailVerified as boolean", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "emailVerified", cfgClaimName, "email_verified", cfgJSONType, "boolean")},
			nil, map[string]any{"email_verified": true}},
		{"property emailVerified false", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "emailVerified", cfgClaimName, "email_verified", cfgJSONType, "boolean")},
			func(in *claimsInput) { in.User.EmailVerified = false }, map[string]any{"email_verified": false}},
		{"property emailVerified as String", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "emailVerified", cfgClaimName, "ev", cfgJSONType, "String")},
			nil, map[string]any{"ev": "true"}},
		{"property createdTimestamp as long", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "createdTimestamp", cfgClaimName, "created", cfgJSONType, "long")},
			nil, map[string]any{"created": 1_700_000_000_123}},
		{"property createdTimestamp as int does not fit", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "createdTimestamp", cfgClaimName, "created", cfgJSONType, "int")},
			nil, map[string]any{}},
		{"property empty email gives no claim", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "email", cfgClaimName, "email")},
			func(in *claimsInput) { in.User.Email = "" }, map[string]any{}},
		{"property unknown gives no claim", []*store.ProtocolMapper{m("a", mapperUserProperty, cfgUserAttribute, "nickname", cfgClaimName, "nick")},
			nil, map[string]any{}},

		// Attribute mappers.
		{"attribute single", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "nickname", cfgClaimName, "nickname")},
			nil, map[string]any{"nickname": "ally"}},
		{"attribute missing", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "middleName", cfgClaimName, "middle_name")},
			nil, map[string]any{}},
		{"attribute multivalued keeps order", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "pets", cfgClaimName, "pets", cfgMultivalued, "true")},
			nil, map[string]any{"pets": []any{"cat", "dog"}}},
		{"attribute not multivalued takes the first", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "pets", cfgClaimName, "pet", cfgMultivalued, "false")},
			nil, map[string]any{"pet": "cat"}},
		{"attribute multivalued long skips what does not convert", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "scores", cfgClaimName, "scores", cfgMultivalued, "true", cfgJSONType, "long")},
			nil, map[string]any{"scores": []any{1, 3}}},
		{"attribute long that does not convert", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "nickname", cfgClaimName, "n", cfgJSONType, "long")},
			nil, map[string]any{}},
		{"attribute int out of range", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "big", cfgClaimName, "n", cfgJSONType, "int")},
			nil, map[string]any{}},
		{"attribute long in range", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "big", cfgClaimName, "n", cfgJSONType, "long")},
			nil, map[string]any{"n": 9999999999}},
		{"attribute boolean any case", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "phoneNumberVerified", cfgClaimName, "v", cfgJSONType, "boolean")},
			nil, map[string]any{"v": true}},
		{"attribute boolean that does not convert", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "shouty", cfgClaimName, "v", cfgJSONType, "boolean")},
			nil, map[string]any{}},
		{"attribute JSON", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "prefs", cfgClaimName, "prefs", cfgJSONType, "JSON")},
			nil, map[string]any{"prefs": map[string]any{"theme": "dark", "sizes": []any{1, 2}}}},
		{"attribute JSON that does not parse", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "pets", cfgClaimName, "p", cfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"attribute reads built-in username", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "username", cfgClaimName, "upn")},
			nil, map[string]any{"upn": "alice"}},
		{"attribute reads built-in lastName", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "lastName", cfgClaimName, "family_name")},
			nil, map[string]any{"family_name": "Liddell"}},
		{"attribute with no user attributes", []*store.ProtocolMapper{m("a", mapperUserAttribute, cfgUserAttribute, "nickname", cfgClaimName, "nickname")},
			func(in *claimsInput) { in.User.Attributes = nil }, map[string]any{}},

		// Hardcoded claims and claim names.
		{"hardcoded string", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "tier", cfgClaimValue, "gold")},
			nil, map[string]any{"tier": "gold"}},
		{"hardcoded long", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "level", cfgClaimValue, "7", cfgJSONType, "long")},
			nil, map[string]any{"level": 7}},
		{"hardcoded int", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "level", cfgClaimValue, "-7", cfgJSONType, "int")},
			nil, map[string]any{"level": -7}},
		{"hardcoded JSON", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "cfg", cfgClaimValue, `{"a":[1,"b"],"c":null}`, cfgJSONType, "JSON")},
			nil, map[string]any{"cfg": map[string]any{"a": []any{1, "b"}, "c": nil}}},
		{"hardcoded JSON null gives no claim", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "cfg", cfgClaimValue, `null`, cfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"hardcoded JSON with trailing data", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "cfg", cfgClaimValue, `{"a":1}]`, cfgJSONType, "JSON")},
			nil, map[string]any{}},
		{"hardcoded bad long is skipped", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "level", cfgClaimValue, "seven", cfgJSONType, "long")},
			nil, map[string]any{}},
		{"nested claim name", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "org.plan.tier", cfgClaimValue, "gold")},
			nil, map[string]any{"org": map[string]any{"plan": map[string]any{"tier": "gold"}}}},
		{"escaped dot is literal", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, `https://example\.com/tier`, cfgClaimValue, "gold")},
			nil, map[string]any{"https://example.com/tier": "gold"}},
		{"escaped and nested", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, `a\.b.c`, cfgClaimValue, "x")},
			nil, map[string]any{"a.b": map[string]any{"c": "x"}}},
		{"siblings share their parent", []*store.ProtocolMapper{
			m("a", mapperHardcoded, cfgClaimName, "org.tier", cfgClaimValue, "gold"),
			m("b", mapperHardcoded, cfgClaimName, "org.name", cfgClaimValue, "acme")},
			nil, map[string]any{"org": map[string]any{"tier": "gold", "name": "acme"}}},
		{"a scalar in the way is kept", []*store.ProtocolMapper{
			m("a", mapperHardcoded, cfgClaimName, "org", cfgClaimValue, "acme"),
			m("b", mapperHardcoded, cfgClaimName, "org.tier", cfgClaimValue, "gold")},
			nil, map[string]any{"org": "acme"}},
		{"the later mapper by name wins a scalar", []*store.ProtocolMapper{
			m("b", mapperHardcoded, cfgClaimName, "tier", cfgClaimValue, "silver"),
			m("a", mapperHardcoded, cfgClaimName, "tier", cfgClaimValue, "gold")},
			nil, map[string]any{"tier": "silver"}},
		{"reserved claims are never written", []*store.ProtocolMapper{
			m("a", mapperHardcoded, cfgClaimName, "sub", cfgClaimValue, "root"),
			m("b", mapperHardcoded, cfgClaimName, "aud.x", cfgClaimValue, "x"),
			m("c", mapperUserProperty, cfgUserAttribute, "username", cfgClaimName, "iss")},
			nil, map[string]any{}},
		{"empty claim name parts are skipped", []*store.ProtocolMapper{m("a", mapperHardcoded, cfgClaimName, "a..b", cfgClaimValue, "x")},
			nil, map[string]any{}},

		// Roles.
		{"realm roles multivalued", []*store.ProtocolMapper{m("a", mapperRealmRoles, cfgClaimName, "realm_access.roles", cfgMultivalued, "true")},
			nil, map[string]any{"realm_access": map[string]any{"roles": []any{"admin", "offline_access", "user"}}}},
		{"realm roles not multivalued", []*store.ProtocolMapper{m("a", mapperRealmRoles, cfgClaimName, "role")},
			nil, map[string]any{"role": "admin"}},
		{"realm roles with prefix", []*store.ProtocolMapper{m("a", mapperRealmRoles, cfgClaimName, "roles", cfgMultivalued, "true", cfgRealmRolePrefix, "realm:")},
			nil, map[string]any{"roles": []any{"realm:admin", "realm:offline_access", "realm:user"}}},
		{"no realm roles, no claim", []*store.ProtocolMapper{m("a", mapperRealmRoles, cfgClaimName, "realm_access.roles", cfgMultivalued, "true")},
			func(in *claimsInput) { in.RealmRoles = nil }, map[string]any{}},
		{"two role mappers share a claim", []*store.ProtocolMapper{
			m("a", mapperRealmRoles, cfgClaimName, "roles", cfgMultivalued, "true"),
			m("b", mapperClientRoles, cfgClaimName, "roles", cfgMultivalued, "true", cfgRoleClientID, "billing")},
			nil, map[string]any{"roles": []any{"admin", "offline_access", "payer", "user"}}},
		{"client roles per client", []*store.ProtocolMapper{m("a", mapperClientRoles, cfgClaimName, "resource_access.${client_id}.roles", cfgMultivalued, "true")},
			nil, map[string]any{"resource_access": map[string]any{
				"app":                     map[string]any{"roles": []any{"editor", "viewer"}},
				"billing":                 map[string]any{"roles": []any{"payer"}},
				"https://api.example.com": map[string]any{"roles": []any{"read"}},
			}}},
		{"client roles of one client", []*store.ProtocolMapper{m("a", mapperClientRoles, cfgClaimName, "app_roles", cfgMultivalued, "true", cfgRoleClientID, "app", cfgClientRolePrefix, "app:")},
			nil, map[string]any{"app_roles": []any{"app:editor", "app:viewer"}}},
		{"client roles of a client without any", []*store.ProtocolMapper{m("a", mapperClientRoles, cfgClaimName, "r", cfgMultivalued, "true", cfgRoleClientID, "unused")},
			nil, map[string]any{}},
		{"client roles into one claim", []*store.ProtocolMapper{m("a", mapperClientRoles, cfgClaimName, "client_roles", cfgMultivalued, "true")},
			nil, map[string]any{"client_roles": []any{"editor", "payer", "read", "viewer"}}},
		{"no client roles, no claim", []*store.ProtocolMapper{m("a", mapperClientRoles, cfgClaimName, "resource_access.${client_id}.roles", cfgMultivalued, "true")},
			func(in *claimsInput) { in.ClientRoles = nil }, map[string]any{}},

		// Groups.
		{"groups full path by default", []*store.ProtocolMapper{m("a", mapperGroups, cfgClaimName, "groups")},
			nil, map[string]any{"groups": []any{"/admins", "/staff/engineering"}}},
		{"groups by name", []*store.ProtocolMapper{m("a", mapperGroups, cfgClaimName, "groups", cfgFullPath, "false")},
			nil, map[string]any{"groups": []any{"admins", "engineering"}}},
		{"groups single valued", []*store.ProtocolMapper{m("a", mapperGroups, cfgClaimName, "group", cfgMultivalued, "false")},
			nil, map[string]any{"group": "/admins"}},
		{"no groups, no claim", []*store.ProtocolMapper{m("a", mapperGroups, cfgClaimName, "groups")},
			func(in *claimsInput) { in.GroupPaths = nil }, map[string]any{}},

		// Audiences.
		{"audience of a client", []*store.ProtocolMapper{m("a", mapperAudience, cfgClientAudience, "billing")},
			nil, map[string]any{"aud": "billing"}},
		{"audiences merge", []*store.ProtocolMapper{
			m("a", mapperAudience, cfgClientAudience, "billing"),
			m("b", mapperAudience, cfgCustomAudience, "https://custom.example.com"),
			m("c", mapperAudience, cfgClientAudience, "billing")},
			nil, map[string]any{"aud": []any{"billing", "https://custom.example.com"}}},
		{"audience resolve", []*store.ProtocolMapper{m("a", mapperAudienceRoles)},
			nil, map[string]any{"aud": []any{"billing", "https://api.example.com"}}},
		{"audience resolve with only the client's own roles", []*store.ProtocolMapper{m("a", mapperAudienceRoles)},
			func(in *claimsInput) { in.ClientRoles = map[string][]string{"app": {"viewer"}} }, map[string]any{}},
		{"audience resolve merges with an audience mapper", []*store.ProtocolMapper{
			m("a", mapperAudienceRoles), m("b", mapperAudience, cfgCustomAudience, "zeta")},
			nil, map[string]any{"aud": []any{"billing", "https://api.example.com", "zeta"}}},

		// Full name, origins, address.
		{"full name", []*store.ProtocolMapper{m("a", mapperFullName)}, nil, map[string]any{"name": "Alice Liddell"}},
		{"full name of a first name", []*store.ProtocolMapper{m("a", mapperFullName)},
			func(in *claimsInput) { in.User.LastName = "" }, map[string]any{"name": "Alice"}},
		{"full name of a last name", []*store.ProtocolMapper{m("a", mapperFullName)},
			func(in *claimsInput) { in.User.FirstName = "" }, map[string]any{"name": "Liddell"}},
		{"no names, no full name", []*store.ProtocolMapper{m("a", mapperFullName)},
			func(in *claimsInput) { in.User.FirstName, in.User.LastName = "", "" }, map[string]any{}},
		{"allowed origins with redirect origins", []*store.ProtocolMapper{m("a", mapperAllowedOrigins)},
			nil, map[string]any{"allowed-origins": []any{"https://app.example.com", "https://cb.example.com"}}},
		{"allowed origins wildcard", []*store.ProtocolMapper{m("a", mapperAllowedOrigins)},
			func(in *claimsInput) { in.WebOrigins = []string{"*"} }, map[string]any{"allowed-origins": []any{"*"}}},
		{"no origins, no claim", []*store.ProtocolMapper{m("a", mapperAllowedOrigins)},
			func(in *claimsInput) { in.WebOrigins = []string{"+"}; in.RedirectOrigins = nil }, map[string]any{}},
		{"address", []*store.ProtocolMapper{m("a", mapperAddress)},
			nil, map[string]any{"address": map[string]any{"street_address": "1 Main St", "locality": "Springfield", "country": "US"}}},
		{"address with a renamed attribute", []*store.ProtocolMapper{m("a", mapperAddress, cfgAddressAttrPrefix+"country", "land")},
			nil, map[string]any{"address": map[string]any{"street_address": "1 Main St", "locality": "Springfield", "country": "Wonderland"}}},
		{"no address attributes, no claim", []*store.ProtocolMapper{m("a", mapperAddress)},
			func(in *claimsInput) { in.User.Attributes = nil }, map[string]any{}},

		// What is not run.
		{"unknown mapper type", []*store.ProtocolMapper{m("a", "oidc-script-mapper", cfgClaimName, "x", cfgClaimValue, "y")},
			nil, map[string]any{}},
		{"SAML mapper", []*store.ProtocolMapper{{Name: "a", MapperType: mapperHardcoded, Protocol: protocolSAML,
			Config: map[string]string{cfgClaimName: "x", cfgClaimValue: "y"}}}, nil, map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := claimsTestInput(accessToken, claimsTestScope("s", c.mappers...))
			if c.edit != nil {
				c.edit(&in)
			}
			mustEqualJSON(t, "claims", buildClaims(in), c.want)
		})
	}
}

func TestClaimsTokenFlags(t *testing.T) {
	m := claimsTestMapper
	on := map[tokenKind]bool{accessToken: true, idToken: true, userinfoResponse: true, introspectionResponse: true}
	cases := []struct {
		name   string
		mapper *store.ProtocolMapper
		want   map[tokenKind]bool
	}{
		{"unset flags mean every token", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v"), on},
		{"access off", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v", "access.token.claim", "false"),
			map[tokenKind]bool{idToken: true, userinfoResponse: true, introspectionResponse: true}},
		{"id off", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v", "id.token.claim", "false"),
			map[tokenKind]bool{accessToken: true, userinfoResponse: true, introspectionResponse: true}},
		{"userinfo off", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v", "userinfo.token.claim", "false"),
			map[tokenKind]bool{accessToken: true, idToken: true, introspectionResponse: true}},
		{"introspection off", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v", "introspection.token.claim", "false"),
			map[tokenKind]bool{accessToken: true, idToken: true, userinfoResponse: true}},
		{"only the access token", m("a", mapperHardcoded, cfgClaimName, "x", cfgClaimValue, "v", "id.token.claim", "false",
			"userinfo.token.claim", "false", "introspection.token.claim", "false", "access.token.claim", "true"),
			map[tokenKind]bool{accessToken: true}},
		{"allowed origins never reach the ID token or userinfo", m("a", mapperAllowedOrigins), map[tokenKind]bool{accessToken: true, introspectionResponse: true}},
		{"audience resolve never reaches the ID token or userinfo", m("a", mapperAudienceRoles), map[tokenKind]bool{accessToken: true, introspectionResponse: true}},
		{"audience never reaches userinfo", m("a", mapperAudience, cfgCustomAudience, "x"),
			map[tokenKind]bool{accessToken: true, idToken: true, introspectionResponse: true}},
		{"audience off for the ID token", m("a", mapperAudience, cfgCustomAudience, "x", "id.token.claim", "false"),
			map[tokenKind]bool{accessToken: true, introspectionResponse: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, token := range allTokens {
				claims := buildClaims(claimsTestInput(token, claimsTestScope("s", c.mapper)))
				if got := len(claims) > 0; got != c.want[token] {
					t.Errorf("%s: claims %v, want present=%v", token.flag(), claims, c.want[token])
				}
			}
		})
	}
}

func TestClaimsConvertTypes(t *testing.T) {
	cases := []struct {
		label, in string
		want      any
		ok        bool
	}{
		{"", "x", "x", true},
		{"String", " 1 ", " 1 ", true},
		{"long", "-9223372036854775808", int64(-9223372036854775808), true},
		{"long", "9223372036854775808", nil, false},
		{"long", "1.5", nil, false},
		{"int", "2147483647", 2147483647, true},
		{"int", "2147483648", nil, false},
		{"boolean", "TRUE", true, true},
		{"boolean", "false", false, true},
		{"boolean", "1", nil, false},
		{"JSON", `[1, "a"]`, []any{json.Number("1"), "a"}, true},
		{"JSON", `"s"`, "s", true},
		{"JSON", `{`, nil, false},
		{"JSON", `1 2`, nil, false},
		{"JSON", ``, nil, false},
		{"float", "1", nil, false},
	}
	for _, c := range cases {
		got, ok := convertClaim(c.label, c.in)
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("convertClaim(%q, %q) = %#v, %v; want %#v, %v", c.label, c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestClaimsSplitName(t *testing.T) {
	for in, want := range map[string][]string{
		"sub_claim":        {"sub_claim"},
		"a.b.c":            {"a", "b", "c"},
		`a\.b`:             {"a.b"},
		`a\.b.c`:           {"a.b", "c"},
		`a\b`:              {`a\b`},
		"a..b":             {"a", "", "b"},
		"a.":               {"a", ""},
		`trailing\`:        {`trailing\`},
		"resource_access.": {"resource_access", ""},
	} {
		if got := splitClaimName(in); !slices.Equal(got, want) {
			t.Errorf("splitClaimName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClaimsDeterministic builds the same claims whatever the order of the
// scopes, mappers and input lists.
func TestClaimsDeterministic(t *testing.T) {
	scopes := claimsTestDefaultScopes()
	want := buildClaims(claimsTestInput(accessToken, scopes...))
	for i := range 20 {
		shuffled := slices.Clone(scopes)
		for j := range shuffled {
			k := (j*7 + i*3) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		for _, s := range shuffled {
			s.Mappers = slices.Clone(s.Mappers)
			slices.Reverse(s.Mappers)
		}
		in := claimsTestInput(accessToken, shuffled...)
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
	var scopes []*store.ClientScope
	for _, t := range defaultClientScopes() {
		s := &store.ClientScope{ID: "scope-" + t.name, Name: t.name, Protocol: protocolOIDC}
		for _, mt := range t.mappers {
			s.Mappers = append(s.Mappers, &store.ProtocolMapper{ID: fmt.Sprintf("%s/%s", t.name, mt.name),
				ScopeID: s.ID, Name: mt.name, MapperType: mt.mapperType, Protocol: protocolOIDC, Config: mt.config})
		}
		scopes = append(scopes, s)
	}
	return scopes
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
	want := map[tokenKind]map[string]any{
		accessToken:           access,
		introspectionResponse: access,
		idToken:               profileEmailPhone,
		userinfoResponse:      profileEmailPhone,
	}
	for _, token := range allTokens {
		t.Run(token.flag(), func(t *testing.T) {
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
	got := buildClaims(claimsTestInput(accessToken, defaults...))
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
	in := claimsTestInput(accessToken, claimsTestDefaultScopes()...)
	for b.Loop() {
		buildClaims(in)
	}
}
