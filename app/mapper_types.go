package app

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// Protocol mapper types, by Keycloak's names, so mappers exported from
// Keycloak read the same here.
const (
	mapperUserProperty   = "oidc-usermodel-property-mapper"
	mapperUserAttribute  = "oidc-usermodel-attribute-mapper"
	mapperHardcoded      = "oidc-hardcoded-claim-mapper"
	mapperRealmRoles     = "oidc-usermodel-realm-role-mapper"
	mapperClientRoles    = "oidc-usermodel-client-role-mapper"
	mapperGroups         = "oidc-group-membership-mapper"
	mapperAudience       = "oidc-audience-mapper"
	mapperFullName       = "oidc-full-name-mapper"
	mapperAllowedOrigins = "oidc-allowed-origins-mapper"
	mapperAudienceRoles  = "oidc-audience-resolve-mapper"
	mapperAddress        = "oidc-address-mapper"
	mapperOrganization   = "oidc-organization-membership-mapper"
	// mapperCustomAttributes puts the realm's custom attributes marked
	// inTokens in the token, each under its name; an Idenplane type.
	mapperCustomAttributes = "idenplane-custom-attributes-mapper"
)

const (
	protocolOIDC = "openid-connect"
	protocolSAML = "saml"
)

// Mapper config keys, as Keycloak names them.
const (
	cfgClaimName         = "claim.name"
	cfgClaimValue        = "claim.value"
	cfgUserAttribute     = "user.attribute"
	cfgJSONType          = "jsonType.label"
	cfgMultivalued       = "multivalued"
	cfgFullPath          = "full.path"
	cfgClientAudience    = "included.client.audience"
	cfgCustomAudience    = "included.custom.audience"
	cfgRoleClientID      = "usermodel.clientRoleMapping.clientId"
	cfgRealmRolePrefix   = "usermodel.realmRoleMapping.rolePrefix"
	cfgClientRolePrefix  = "usermodel.clientRoleMapping.rolePrefix"
	cfgAddressAttrPrefix = "user.attribute."
)

// tokenKind is the token or response a claim set is built for.
type tokenKind int

const (
	accessToken tokenKind = iota
	idToken
	userinfoResponse
	introspectionResponse
)

// flag is the mapper config key that switches a mapper on or off for k.
func (k tokenKind) flag() string {
	switch k {
	case idToken:
		return "id.token.claim"
	case userinfoResponse:
		return "userinfo.token.claim"
	case introspectionResponse:
		return "introspection.token.claim"
	}
	return "access.token.claim"
}

var allTokens = []tokenKind{accessToken, idToken, userinfoResponse, introspectionResponse}

// mapperSpec says what one mapper type accepts and where it may act.
type mapperSpec struct {
	required []string    // config keys that must be set
	optional []string    // other config keys it reads
	tokens   []tokenKind // the tokens it can add claims to; each has its flag key
}

// keys lists every config key the type accepts, flags included.
func (s mapperSpec) keys() []string {
	keys := slices.Concat(s.required, s.optional)
	for _, t := range s.tokens {
		keys = append(keys, t.flag())
	}
	slices.Sort(keys)
	return keys
}

// addressFields are the members of the OpenID Connect address claim and,
// after the user.attribute. prefix, the config keys naming their attributes.
var addressFields = []struct{ claim, key, attribute string }{
	{"formatted", "formatted", "formatted"},
	{"street_address", "street", "street"},
	{"locality", "locality", "locality"},
	{"region", "region", "region"},
	{"postal_code", "postal_code", "postal_code"},
	{"country", "country", "country"},
}

// mapperSpecFor describes a supported mapper type. Roles, origins and
// audiences are about API access, so as in Keycloak those mappers can only
// reach the access token and introspection (the audience mapper the ID
// token too), never userinfo.
func mapperSpecFor(mapperType string) (mapperSpec, bool) {
	spec, ok := mapperSpecs[mapperType]
	return spec, ok
}

// mapperSpecs holds describeMapper's answers: every token runs every
// mapper's spec, and building one allocates.
var mapperSpecs = func() map[string]mapperSpec {
	specs := map[string]mapperSpec{}
	for _, t := range mapperTypes {
		specs[t], _ = describeMapper(t)
	}
	return specs
}()

// describeMapper builds the spec of one mapper type.
func describeMapper(mapperType string) (mapperSpec, bool) {
	accessOnly := []tokenKind{accessToken, introspectionResponse}
	switch mapperType {
	case mapperUserProperty:
		return mapperSpec{[]string{cfgUserAttribute, cfgClaimName}, []string{cfgJSONType}, allTokens}, true
	case mapperUserAttribute:
		return mapperSpec{[]string{cfgUserAttribute, cfgClaimName}, []string{cfgJSONType, cfgMultivalued}, allTokens}, true
	case mapperHardcoded:
		return mapperSpec{[]string{cfgClaimName, cfgClaimValue}, []string{cfgJSONType}, allTokens}, true
	case mapperRealmRoles:
		return mapperSpec{[]string{cfgClaimName}, []string{cfgJSONType, cfgMultivalued, cfgRealmRolePrefix}, allTokens}, true
	case mapperClientRoles:
		return mapperSpec{[]string{cfgClaimName},
			[]string{cfgJSONType, cfgMultivalued, cfgRoleClientID, cfgClientRolePrefix}, allTokens}, true
	case mapperGroups:
		return mapperSpec{[]string{cfgClaimName}, []string{cfgFullPath, cfgMultivalued}, allTokens}, true
	case mapperAudience:
		return mapperSpec{nil, []string{cfgClientAudience, cfgCustomAudience},
			[]tokenKind{accessToken, idToken, introspectionResponse}}, true
	case mapperFullName:
		return mapperSpec{nil, nil, allTokens}, true
	case mapperAllowedOrigins, mapperAudienceRoles:
		return mapperSpec{nil, nil, accessOnly}, true
	case mapperAddress:
		var keys []string
		for _, f := range addressFields {
			keys = append(keys, cfgAddressAttrPrefix+f.key)
		}
		return mapperSpec{nil, keys, allTokens}, true
	case mapperOrganization:
		return mapperSpec{[]string{cfgClaimName}, nil, allTokens}, true
	case mapperCustomAttributes:
		return mapperSpec{nil, nil, allTokens}, true
	}
	return mapperSpec{}, false
}

var mapperTypes = []string{
	mapperUserProperty, mapperUserAttribute, mapperHardcoded, mapperRealmRoles, mapperClientRoles, mapperGroups,
	mapperAudience, mapperFullName, mapperAllowedOrigins, mapperAudienceRoles, mapperAddress, mapperOrganization,
	mapperCustomAttributes,
}

// userProperties are the user fields a property mapper can read.
var userProperties = []string{"username", "email", "firstName", "lastName", "emailVerified", "id", "createdTimestamp"}

var jsonTypes = []string{"String", "long", "int", "boolean", "JSON"}

// reservedClaims are set by the token issuer itself; a mapper writing one
// could forge identity or validity, so none may.
var reservedClaims = []string{
	"sub", "iss", "aud", "exp", "iat", "nbf", "jti", "azp", "nonce", "sid", "auth_time", "typ",
	"at_hash", "c_hash", "acr", "amr", "scope", "session_state", "cnf",
}

// clientIDPlaceholderText in a client roles mapper's claim name stands for
// the clientId of each client whose roles it maps, as in Keycloak.
const clientIDPlaceholderText = "${client_id}"

const (
	maxConfigKey   = 255
	maxConfigValue = 4096
)

// validateMapperConfig checks a mapper's config against its type's spec;
// errors name their field as "<prefix>config.<key>".
func validateMapperConfig(prefix, mapperType string, spec mapperSpec, cfg map[string]string) error {
	field := func(k string) string { return prefix + "config." + k }
	accepted := spec.keys()
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if !slices.Contains(accepted, k) {
			return &apperr.Error{Status: http.StatusBadRequest, Code: apperr.CodeUnknownField, Field: field(k),
				Message: fmt.Sprintf("%s: not a setting of %s; it takes %s", field(k), mapperType, strings.Join(accepted, ", "))}
		}
		// A hardcoded claim's value is text of the admin's; the others
		// name things (attributes, clients, prefixes) or are switches.
		kind := validate.SettingText
		switch k {
		case cfgClaimValue:
			kind = validate.FreeText
		case cfgUserAttribute:
			kind = validate.IdentifierText
		}
		if err := validate.Chars(field(k), cfg[k], maxConfigValue, kind); err != nil {
			return err
		}
	}
	for _, k := range spec.required {
		if strings.TrimSpace(cfg[k]) == "" {
			return apperr.Field(field(k), "is required for %s", mapperType)
		}
	}
	for _, k := range []string{cfgMultivalued, cfgFullPath, "access.token.claim", "id.token.claim",
		"userinfo.token.claim", "introspection.token.claim"} {
		if v, ok := cfg[k]; ok && v != "true" && v != "false" {
			return apperr.Field(field(k), "must be \"true\" or \"false\"")
		}
	}
	if v, ok := cfg[cfgJSONType]; ok && !slices.Contains(jsonTypes, v) {
		return apperr.Field(field(cfgJSONType), "must be one of %s", strings.Join(jsonTypes, ", "))
	}
	if v, ok := cfg[cfgClaimName]; ok {
		if err := checkClaimName(v, mapperType == mapperClientRoles); err != nil {
			return apperr.Field(field(cfgClaimName), "%s", err)
		}
	}
	if v, ok := cfg[cfgClaimValue]; ok {
		if _, ok := convertClaim(cfg[cfgJSONType], v); !ok {
			return apperr.Field(field(cfgClaimValue), "must be a value of type %s", cfg[cfgJSONType])
		}
	}
	switch mapperType {
	case mapperUserProperty:
		if !slices.Contains(userProperties, cfg[cfgUserAttribute]) {
			return apperr.Field(field(cfgUserAttribute), "must be one of %s", strings.Join(userProperties, ", "))
		}
	case mapperAudience:
		client, custom := cfg[cfgClientAudience] != "", cfg[cfgCustomAudience] != ""
		if client == custom {
			return apperr.Field(field(cfgClientAudience), "exactly one of %s and %s must be set", cfgClientAudience, cfgCustomAudience)
		}
	}
	for _, k := range []string{cfgUserAttribute, cfgClientAudience, cfgCustomAudience, cfgRoleClientID,
		cfgRealmRolePrefix, cfgClientRolePrefix} {
		if utf8.RuneCountInString(cfg[k]) > maxConfigKey {
			return apperr.Field(field(k), "must be at most %d characters", maxConfigKey)
		}
	}
	return nil
}

// checkClaimName accepts a claim name whose dot-separated parts ("\."
// escapes a literal dot) are all non-empty and whose top claim is not one
// the issuer sets. Its characters are ASCII letters, digits and _ - : /
// (so a namespaced claim such as https://acme\.io/roles is possible), and,
// where a client's roles are mapped, the ${client_id} placeholder.
func checkClaimName(name string, clientIDPlaceholder bool) error {
	if utf8.RuneCountInString(name) > maxConfigKey {
		return fmt.Errorf("must be at most %d characters", maxConfigKey)
	}
	bare := name
	if clientIDPlaceholder {
		bare = strings.ReplaceAll(name, clientIDPlaceholderText, "")
	}
	for i, c := range bare {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("_-:/.", c):
		case c == '\\' && strings.HasPrefix(bare[i+1:], "."):
		default:
			return fmt.Errorf("must be ASCII letters, digits and _ - : / with dots between nested names, not %s", validate.DescribeRune(c))
		}
	}
	path := splitClaimName(name)
	if slices.Contains(path, "") {
		return fmt.Errorf("must not have an empty part between dots")
	}
	if slices.Contains(reservedClaims, path[0]) {
		return fmt.Errorf("%q is set by the server and cannot be mapped", path[0])
	}
	return nil
}

// splitClaimName splits a claim name into the path of nested objects it
// names: "a.b" is b inside a, "a\.b" is one claim named "a.b".
func splitClaimName(name string) []string {
	if !strings.ContainsAny(name, `.\`) {
		return []string{name}
	}
	var parts []string
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch {
		case name[i] == '\\' && i+1 < len(name) && name[i+1] == '.':
			b.WriteByte('.')
			i++
		case name[i] == '.':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(name[i])
		}
	}
	return append(parts, b.String())
}

// convertClaim turns a string into the JSON type a mapper asks for; an
// empty label leaves it a string. ok is false when it does not convert.
func convertClaim(label, v string) (any, bool) {
	switch label {
	case "", "String":
		return v, true
	case "long":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	case "int":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		return int(n), err == nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	case "JSON":
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		var out any
		if dec.Decode(&out) != nil {
			return nil, false
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, false // trailing data
		}
		return out, true
	}
	return nil, false
}

// mapperTypeRep is a mapper type as GET .../protocol-mapper-types shows
// it: the config keys it requires and reads, and the flags of the tokens
// it can reach, so that a form can offer exactly those.
type mapperTypeRep struct {
	MapperType string   `json:"mapperType"`
	Protocol   string   `json:"protocol"`
	Required   []string `json:"required"`
	Optional   []string `json:"optional"`
	Tokens     []string `json:"tokens"`
}

// listMapperTypes answers with the supported mapper types, in the order
// of mapperTypes, for a realm that realmOf finds.
func listMapperTypes(realmOf func(*http.Request) (*store.Realm, error)) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := realmOf(r); err != nil {
			return err
		}
		reps := make([]mapperTypeRep, 0, len(mapperTypes))
		for _, t := range mapperTypes {
			spec := mapperSpecs[t]
			rep := mapperTypeRep{MapperType: t, Protocol: protocolOIDC, Required: slices.Clone(spec.required),
				Optional: slices.Clone(spec.optional), Tokens: []string{}}
			if rep.Required == nil {
				rep.Required = []string{}
			}
			if rep.Optional == nil {
				rep.Optional = []string{}
			}
			for _, k := range spec.tokens {
				rep.Tokens = append(rep.Tokens, k.flag())
			}
			reps = append(reps, rep)
		}
		return httpx.OK(w, reps)
	}
}
