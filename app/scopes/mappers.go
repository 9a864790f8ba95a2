package scopes

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
	MapperUserProperty   = "oidc-usermodel-property-mapper"
	MapperUserAttribute  = "oidc-usermodel-attribute-mapper"
	MapperHardcoded      = "oidc-hardcoded-claim-mapper"
	MapperRealmRoles     = "oidc-usermodel-realm-role-mapper"
	MapperClientRoles    = "oidc-usermodel-client-role-mapper"
	MapperGroups         = "oidc-group-membership-mapper"
	MapperAudience       = "oidc-audience-mapper"
	MapperFullName       = "oidc-full-name-mapper"
	MapperAllowedOrigins = "oidc-allowed-origins-mapper"
	MapperAudienceRoles  = "oidc-audience-resolve-mapper"
	MapperAddress        = "oidc-address-mapper"
	MapperOrganization   = "oidc-organization-membership-mapper"
	// MapperCustomAttributes puts the realm's custom attributes marked
	// inTokens in the token, each under its name; an Idenplane type.
	MapperCustomAttributes = "idenplane-custom-attributes-mapper"
)

// The protocols a client scope, and a mapper, belong to.
const (
	ProtocolOIDC = "openid-connect"
	ProtocolSAML = "saml"
)

// Mapper config keys, as Keycloak names them.
const (
	CfgClaimName         = "claim.name"
	CfgClaimValue        = "claim.value"
	CfgUserAttribute     = "user.attribute"
	CfgJSONType          = "jsonType.label"
	CfgMultivalued       = "multivalued"
	CfgFullPath          = "full.path"
	CfgClientAudience    = "included.client.audience"
	CfgCustomAudience    = "included.custom.audience"
	CfgRoleClientID      = "usermodel.clientRoleMapping.clientId"
	CfgRealmRolePrefix   = "usermodel.realmRoleMapping.rolePrefix"
	CfgClientRolePrefix  = "usermodel.clientRoleMapping.rolePrefix"
	CfgAddressAttrPrefix = "user.attribute."
)

// TokenKind is the token or response a claim set is built for.
type TokenKind int

const (
	AccessToken TokenKind = iota
	IDToken
	UserinfoResponse
	IntrospectionResponse
)

// Flag is the mapper config key that switches a mapper on or off for k.
func (k TokenKind) Flag() string {
	switch k {
	case IDToken:
		return "id.token.claim"
	case UserinfoResponse:
		return "userinfo.token.claim"
	case IntrospectionResponse:
		return "introspection.token.claim"
	}
	return "access.token.claim"
}

var allTokens = []TokenKind{AccessToken, IDToken, UserinfoResponse, IntrospectionResponse}

// mapperSpec says what one mapper type accepts and where it may act.
type mapperSpec struct {
	required []string    // config keys that must be set
	optional []string    // other config keys it reads
	tokens   []TokenKind // the tokens it can add claims to; each has its flag key
}

// keys lists every config key the type accepts, flags included.
func (s mapperSpec) keys() []string {
	keys := slices.Concat(s.required, s.optional)
	for _, t := range s.tokens {
		keys = append(keys, t.Flag())
	}
	slices.Sort(keys)
	return keys
}

// AddressFields are the members of the OpenID Connect address claim and,
// after the user.attribute. prefix, the config keys naming their attributes.
var AddressFields = []struct{ Claim, Key, Attribute string }{
	{"formatted", "formatted", "formatted"},
	{"street_address", "street", "street"},
	{"locality", "locality", "locality"},
	{"region", "region", "region"},
	{"postal_code", "postal_code", "postal_code"},
	{"country", "country", "country"},
}

// specFor describes a supported mapper type. Roles, origins and
// audiences are about API access, so as in Keycloak those mappers can only
// reach the access token and introspection (the audience mapper the ID
// token too), never userinfo.
func specFor(mapperType string) (mapperSpec, bool) {
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
	accessOnly := []TokenKind{AccessToken, IntrospectionResponse}
	switch mapperType {
	case MapperUserProperty:
		return mapperSpec{[]string{CfgUserAttribute, CfgClaimName}, []string{CfgJSONType}, allTokens}, true
	case MapperUserAttribute:
		return mapperSpec{[]string{CfgUserAttribute, CfgClaimName}, []string{CfgJSONType, CfgMultivalued}, allTokens}, true
	case MapperHardcoded:
		return mapperSpec{[]string{CfgClaimName, CfgClaimValue}, []string{CfgJSONType}, allTokens}, true
	case MapperRealmRoles:
		return mapperSpec{[]string{CfgClaimName}, []string{CfgJSONType, CfgMultivalued, CfgRealmRolePrefix}, allTokens}, true
	case MapperClientRoles:
		return mapperSpec{[]string{CfgClaimName},
			[]string{CfgJSONType, CfgMultivalued, CfgRoleClientID, CfgClientRolePrefix}, allTokens}, true
	case MapperGroups:
		return mapperSpec{[]string{CfgClaimName}, []string{CfgFullPath, CfgMultivalued}, allTokens}, true
	case MapperAudience:
		return mapperSpec{nil, []string{CfgClientAudience, CfgCustomAudience},
			[]TokenKind{AccessToken, IDToken, IntrospectionResponse}}, true
	case MapperFullName:
		return mapperSpec{nil, nil, allTokens}, true
	case MapperAllowedOrigins, MapperAudienceRoles:
		return mapperSpec{nil, nil, accessOnly}, true
	case MapperAddress:
		var keys []string
		for _, f := range AddressFields {
			keys = append(keys, CfgAddressAttrPrefix+f.Key)
		}
		return mapperSpec{nil, keys, allTokens}, true
	case MapperOrganization:
		return mapperSpec{[]string{CfgClaimName}, nil, allTokens}, true
	case MapperCustomAttributes:
		return mapperSpec{nil, nil, allTokens}, true
	}
	return mapperSpec{}, false
}

// AppliesTo says whether m adds to token k: its type must be able to reach
// that token, and its flag for it must not be "false" (unset means on).
func AppliesTo(m *store.ProtocolMapper, k TokenKind) bool {
	spec, ok := specFor(m.MapperType)
	return ok && slices.Contains(spec.tokens, k) && m.Config[k.Flag()] != "false"
}

var mapperTypes = []string{
	MapperUserProperty, MapperUserAttribute, MapperHardcoded, MapperRealmRoles, MapperClientRoles, MapperGroups,
	MapperAudience, MapperFullName, MapperAllowedOrigins, MapperAudienceRoles, MapperAddress, MapperOrganization,
	MapperCustomAttributes,
}

// userProperties are the user fields a property mapper can read.
var userProperties = []string{"username", "email", "firstName", "lastName", "emailVerified", "id", "createdTimestamp"}

var jsonTypes = []string{"String", "long", "int", "boolean", "JSON"}

// ReservedClaims are set by the token issuer itself; a mapper writing one
// could forge identity or validity, so none may.
var ReservedClaims = []string{
	"sub", "iss", "aud", "exp", "iat", "nbf", "jti", "azp", "nonce", "sid", "auth_time", "typ",
	"at_hash", "c_hash", "acr", "amr", "scope", "session_state", "cnf",
}

// ClientIDPlaceholder in a client roles mapper's claim name stands for
// the clientId of each client whose roles it maps, as in Keycloak.
const ClientIDPlaceholder = "${client_id}"

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
		case CfgClaimValue:
			kind = validate.FreeText
		case CfgUserAttribute:
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
	for _, k := range []string{CfgMultivalued, CfgFullPath, "access.token.claim", "id.token.claim",
		"userinfo.token.claim", "introspection.token.claim"} {
		if v, ok := cfg[k]; ok && v != "true" && v != "false" {
			return apperr.Field(field(k), "must be \"true\" or \"false\"")
		}
	}
	if v, ok := cfg[CfgJSONType]; ok && !slices.Contains(jsonTypes, v) {
		return apperr.Field(field(CfgJSONType), "must be one of %s", strings.Join(jsonTypes, ", "))
	}
	if v, ok := cfg[CfgClaimName]; ok {
		if err := CheckClaimName(v, mapperType == MapperClientRoles); err != nil {
			return apperr.Field(field(CfgClaimName), "%s", err)
		}
	}
	if v, ok := cfg[CfgClaimValue]; ok {
		if _, ok := ConvertClaim(cfg[CfgJSONType], v); !ok {
			return apperr.Field(field(CfgClaimValue), "must be a value of type %s", cfg[CfgJSONType])
		}
	}
	switch mapperType {
	case MapperUserProperty:
		if !slices.Contains(userProperties, cfg[CfgUserAttribute]) {
			return apperr.Field(field(CfgUserAttribute), "must be one of %s", strings.Join(userProperties, ", "))
		}
	case MapperAudience:
		client, custom := cfg[CfgClientAudience] != "", cfg[CfgCustomAudience] != ""
		if client == custom {
			return apperr.Field(field(CfgClientAudience), "exactly one of %s and %s must be set", CfgClientAudience, CfgCustomAudience)
		}
	}
	for _, k := range []string{CfgUserAttribute, CfgClientAudience, CfgCustomAudience, CfgRoleClientID,
		CfgRealmRolePrefix, CfgClientRolePrefix} {
		if utf8.RuneCountInString(cfg[k]) > maxConfigKey {
			return apperr.Field(field(k), "must be at most %d characters", maxConfigKey)
		}
	}
	return nil
}

// CheckClaimName accepts a claim name whose dot-separated parts ("\."
// escapes a literal dot) are all non-empty and whose top claim is not one
// the issuer sets. Its characters are ASCII letters, digits and _ - : /
// (so a namespaced claim such as https://acme\.io/roles is possible), and,
// where a client's roles are mapped, the ${client_id} placeholder.
func CheckClaimName(name string, clientIDPlaceholder bool) error {
	if utf8.RuneCountInString(name) > maxConfigKey {
		return fmt.Errorf("must be at most %d characters", maxConfigKey)
	}
	bare := name
	if clientIDPlaceholder {
		bare = strings.ReplaceAll(name, ClientIDPlaceholder, "")
	}
	for i, c := range bare {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("_-:/.", c):
		case c == '\\' && strings.HasPrefix(bare[i+1:], "."):
		default:
			return fmt.Errorf("must be ASCII letters, digits and _ - : / with dots between nested names, not %s", validate.DescribeRune(c))
		}
	}
	path := SplitClaimName(name)
	if slices.Contains(path, "") {
		return fmt.Errorf("must not have an empty part between dots")
	}
	if slices.Contains(ReservedClaims, path[0]) {
		return fmt.Errorf("%q is set by the server and cannot be mapped", path[0])
	}
	return nil
}

// SplitClaimName splits a claim name into the path of nested objects it
// names: "a.b" is b inside a, "a\.b" is one claim named "a.b".
func SplitClaimName(name string) []string {
	if !strings.Contains(name, `\`) {
		// Runs for every mapper of every token: its parts share name.
		return strings.Split(name, ".")
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

// ConvertClaim turns a string into the JSON type a mapper asks for; an
// empty label leaves it a string. ok is false when it does not convert.
func ConvertClaim(label, v string) (any, bool) {
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

// MapperTypeRep is a mapper type as GET .../protocol-mapper-types shows
// it: the config keys it requires and reads, and the flags of the tokens
// it can reach, so that a form can offer exactly those.
type MapperTypeRep struct {
	MapperType string   `json:"mapperType"`
	Protocol   string   `json:"protocol"`
	Required   []string `json:"required"`
	Optional   []string `json:"optional"`
	Tokens     []string `json:"tokens"`
}

// ListMapperTypes answers with the supported mapper types, in the order
// of mapperTypes, for the realm of the path.
func (s *Service) ListMapperTypes(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.deps.Realm(r); err != nil {
		return err
	}
	reps := make([]MapperTypeRep, 0, len(mapperTypes))
	for _, t := range mapperTypes {
		spec := mapperSpecs[t]
		rep := MapperTypeRep{MapperType: t, Protocol: ProtocolOIDC, Required: slices.Clone(spec.required),
			Optional: slices.Clone(spec.optional), Tokens: []string{}}
		if rep.Required == nil {
			rep.Required = []string{}
		}
		if rep.Optional == nil {
			rep.Optional = []string{}
		}
		for _, k := range spec.tokens {
			rep.Tokens = append(rep.Tokens, k.Flag())
		}
		reps = append(reps, rep)
	}
	return httpx.OK(w, reps)
}
