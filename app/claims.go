package app

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// claimUser is what mappers may read of a user.
type claimUser struct {
	ID               string
	Username         string
	Email            string
	EmailVerified    bool
	FirstName        string
	LastName         string
	CreatedTimestamp int64 // Unix milliseconds
	Attributes       map[string][]string
}

// claimsInput is everything the claims of one token depend on. The caller
// resolves it (effective roles, group paths, the scopes the request
// applies) so building the claims needs no store, clock or I/O.
type claimsInput struct {
	Token scopes.TokenKind
	User  claimUser
	// ClientID is the clientId of the client the token is for.
	ClientID string
	// WebOrigins are the client's allowed web origins; "+" stands for the
	// origins of its redirect URIs, given in RedirectOrigins.
	WebOrigins      []string
	RedirectOrigins []string
	RealmRoles      []string            // effective realm role names
	ClientRoles     map[string][]string // effective client role names by clientId
	GroupPaths      []string            // "/parent/child"
	Scopes          []*store.ClientScope
	// Organizations are the user's memberships of enabled organizations,
	// resolved only when a scope has an organization mapper.
	Organizations []store.OrgMembership
	// CustomAttributes are the user's values of the schema's attributes
	// marked inTokens, as their claims hold them; resolved only when a
	// scope has a custom attributes mapper.
	CustomAttributes map[string]any
	// mappers are orderedMappers(Scopes), for the tokens of one grant to
	// share; nil, each build orders them.
	mappers []*store.ProtocolMapper
}

// buildClaims runs the mappers of the applied scopes for one token and
// returns the claims they produce. It is deterministic: scopes and mappers
// run in name order and every list it builds is sorted. A value a mapper
// cannot convert to its JSON type is left out rather than failing the token.
func buildClaims(in claimsInput) map[string]any {
	b := claimBuilder{in: &in, claims: map[string]any{}}
	mappers := in.mappers
	if mappers == nil {
		mappers = orderedMappers(in.Scopes)
	}
	for _, m := range mappers {
		if scopes.AppliesTo(m, in.Token) {
			b.apply(m)
		}
	}
	switch auds := sortedUnique(b.audience); len(auds) {
	case 0:
	case 1:
		b.claims["aud"] = auds[0] // a single audience is a string, as Keycloak writes it
	default:
		b.claims["aud"] = toAnyList(auds)
	}
	return b.claims
}

// build runs the mappers for one kind of token over in, which it leaves
// as it was: the tokens of one grant share it.
func (in *claimsInput) build(kind scopes.TokenKind) map[string]any {
	one := *in
	one.Token = kind
	return buildClaims(one)
}

// orderedMappers lists the OpenID Connect mappers of the scopes, by scope
// name then mapper name, so the result never depends on the caller's order.
func orderedMappers(clientScopes []*store.ClientScope) []*store.ProtocolMapper {
	sorted := slices.Clone(clientScopes)
	slices.SortStableFunc(sorted, func(a, b *store.ClientScope) int { return cmp.Compare(a.Name, b.Name) })
	var out []*store.ProtocolMapper
	for _, s := range sorted {
		if s.Protocol != scopes.ProtocolOIDC {
			continue
		}
		mappers := slices.Clone(s.Mappers)
		slices.SortStableFunc(mappers, func(a, b *store.ProtocolMapper) int { return cmp.Compare(a.Name, b.Name) })
		for _, m := range mappers {
			if m.Protocol == scopes.ProtocolOIDC {
				out = append(out, m)
			}
		}
	}
	return out
}

type claimBuilder struct {
	in       *claimsInput
	claims   map[string]any
	audience []string
}

func (b *claimBuilder) apply(m *store.ProtocolMapper) {
	cfg := m.Config
	u := &b.in.User
	switch m.MapperType {
	case scopes.MapperUserProperty:
		if v, ok := userProperty(u, cfg[scopes.CfgUserAttribute]); ok {
			b.setValues(cfg, cfg[scopes.CfgClaimName], []string{v}, false)
		}
	case scopes.MapperUserAttribute:
		b.setValues(cfg, cfg[scopes.CfgClaimName], userAttribute(u, cfg[scopes.CfgUserAttribute]), cfg[scopes.CfgMultivalued] == "true")
	case scopes.MapperHardcoded:
		b.setValues(cfg, cfg[scopes.CfgClaimName], []string{cfg[scopes.CfgClaimValue]}, false)
	case scopes.MapperRealmRoles:
		roles := prefixed(cfg[scopes.CfgRealmRolePrefix], b.in.RealmRoles)
		b.setValues(cfg, cfg[scopes.CfgClaimName], roles, cfg[scopes.CfgMultivalued] == "true")
	case scopes.MapperClientRoles:
		only := cfg[scopes.CfgRoleClientID]
		for _, clientID := range slices.Sorted(maps.Keys(b.in.ClientRoles)) {
			if only != "" && clientID != only {
				continue
			}
			roles := prefixed(cfg[scopes.CfgClientRolePrefix], b.in.ClientRoles[clientID])
			b.setValuesAt(cfg, clientRolePath(cfg[scopes.CfgClaimName], clientID), roles, cfg[scopes.CfgMultivalued] == "true")
		}
	case scopes.MapperGroups:
		var groups []string
		for _, p := range b.in.GroupPaths {
			if strings.Trim(p, "/") != "" {
				groups = append(groups, groupName(p, cfg[scopes.CfgFullPath] != "false"))
			}
		}
		b.setValues(cfg, cfg[scopes.CfgClaimName], sortedUnique(groups), cfg[scopes.CfgMultivalued] != "false")
	case scopes.MapperAudience:
		if v := cmp.Or(cfg[scopes.CfgClientAudience], cfg[scopes.CfgCustomAudience]); v != "" {
			b.audience = append(b.audience, v)
		}
	case scopes.MapperAudienceRoles:
		// Keycloak's rule: every other client whose roles the token carries.
		for clientID, roles := range b.in.ClientRoles {
			if clientID != b.in.ClientID && len(roles) > 0 {
				b.audience = append(b.audience, clientID)
			}
		}
	case scopes.MapperFullName:
		if name := strings.TrimSpace(u.FirstName + " " + u.LastName); name != "" {
			b.set([]string{"name"}, name)
		}
	case scopes.MapperAllowedOrigins:
		var origins []string
		for _, o := range b.in.WebOrigins {
			if o == "+" {
				origins = append(origins, b.in.RedirectOrigins...)
			} else {
				origins = append(origins, o)
			}
		}
		if origins = sortedUnique(origins); len(origins) > 0 {
			b.set([]string{"allowed-origins"}, toAnyList(origins))
		}
	case scopes.MapperAddress:
		address := map[string]any{}
		for _, f := range scopes.AddressFields {
			attr := cmp.Or(cfg[scopes.CfgAddressAttrPrefix+f.Key], f.Attribute)
			if v := userAttribute(u, attr); len(v) > 0 && v[0] != "" {
				address[f.Claim] = v[0]
			}
		}
		if len(address) > 0 {
			b.set([]string{"address"}, address)
		}
	case scopes.MapperOrganization:
		// Keycloak's claim, by alias (here the slug), with the ID and the
		// member's role in each.
		orgs := map[string]any{}
		for _, o := range b.in.Organizations {
			orgs[o.Slug] = map[string]any{"id": o.OrgID, "role": o.Role}
		}
		if len(orgs) > 0 {
			b.set(scopes.SplitClaimName(cfg[scopes.CfgClaimName]), orgs)
		}
	case scopes.MapperCustomAttributes:
		for _, name := range slices.Sorted(maps.Keys(b.in.CustomAttributes)) {
			if !slices.Contains(scopes.ReservedClaims, name) {
				b.set([]string{name}, b.in.CustomAttributes[name])
			}
		}
	}
}

// setValues sets the claim a mapper names to values converted to its JSON
// type: all of them if multivalued, else the first, as Keycloak does.
// Nothing is set when no value converts.
func (b *claimBuilder) setValues(cfg map[string]string, claimName string, values []string, multivalued bool) {
	if !strings.ContainsAny(claimName, `.\`) {
		// Most claims are top-level: their path needs no slice of its own.
		path := [1]string{claimName}
		b.setValuesAt(cfg, path[:], values, multivalued)
		return
	}
	b.setValuesAt(cfg, scopes.SplitClaimName(claimName), values, multivalued)
}

func (b *claimBuilder) setValuesAt(cfg map[string]string, path []string, values []string, multivalued bool) {
	label := cfg[scopes.CfgJSONType]
	if !multivalued {
		if len(values) == 0 {
			return
		}
		if v, ok := scopes.ConvertClaim(label, values[0]); ok && v != nil {
			b.set(path, v)
		}
		return
	}
	var list []any
	for _, s := range values {
		if v, ok := scopes.ConvertClaim(label, s); ok && v != nil {
			list = append(list, v)
		}
	}
	if len(list) > 0 {
		b.set(path, list)
	}
}

// set puts v at path, creating the objects along it. Two lists at one path
// merge, so two role mappers may share a claim; otherwise the later mapper
// wins. A path through a claim that is not an object, or into a claim the
// issuer owns, is skipped.
func (b *claimBuilder) set(path []string, v any) {
	if len(path) == 0 || slices.Contains(path, "") || slices.Contains(scopes.ReservedClaims, path[0]) {
		return
	}
	obj := b.claims
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p]
		if !ok {
			child := map[string]any{}
			obj[p] = child
			obj = child
			continue
		}
		if obj, ok = next.(map[string]any); !ok {
			return
		}
	}
	last := path[len(path)-1]
	if old, ok := obj[last].([]any); ok {
		if list, ok := v.([]any); ok {
			v = mergeLists(old, list)
		}
	}
	obj[last] = v
}

// mergeLists appends the items of b not already in a; an all-string result
// is sorted, keeping role lists deterministic whatever the mapper order.
func mergeLists(a, b []any) []any {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.ContainsFunc(out, func(x any) bool { return reflect.DeepEqual(x, v) }) {
			out = append(out, v)
		}
	}
	strs := make([]string, 0, len(out))
	for _, v := range out {
		s, ok := v.(string)
		if !ok {
			return out
		}
		strs = append(strs, s)
	}
	slices.Sort(strs)
	return toAnyList(strs)
}

// clientRolePath is the claim path of one client's roles: the claim name
// with ${client_id} replaced in each part, after splitting, so a clientId
// with dots (a URL, say) stays one key.
func clientRolePath(claimName, clientID string) []string {
	path := scopes.SplitClaimName(claimName)
	for i, p := range path {
		path[i] = strings.ReplaceAll(p, scopes.ClientIDPlaceholder, clientID)
	}
	return path
}

// userProperty reads a built-in user field as a string; ok is false when
// the user has no value.
func userProperty(u *claimUser, property string) (string, bool) {
	switch property {
	case "id":
		return u.ID, u.ID != ""
	case "username":
		return u.Username, u.Username != ""
	case "email":
		return u.Email, u.Email != ""
	case "firstName":
		return u.FirstName, u.FirstName != ""
	case "lastName":
		return u.LastName, u.LastName != ""
	case "emailVerified":
		return strconv.FormatBool(u.EmailVerified), true
	case "createdTimestamp":
		return strconv.FormatInt(u.CreatedTimestamp, 10), u.CreatedTimestamp != 0
	}
	return "", false
}

// userAttribute reads a user attribute. As in Keycloak's user profile,
// username, email, firstName and lastName are attributes too.
func userAttribute(u *claimUser, name string) []string {
	switch name {
	case "username", "email", "firstName", "lastName":
		if v, ok := userProperty(u, name); ok {
			return []string{v}
		}
		return nil
	}
	return u.Attributes[name]
}

// groupName is a group's full path ("/a/b") or, without fullPath, its own
// name ("b").
func groupName(path string, fullPath bool) string {
	path = "/" + strings.Trim(path, "/")
	if fullPath {
		return path
	}
	return path[strings.LastIndex(path, "/")+1:]
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range sortedUnique(names) {
		out = append(out, prefix+n)
	}
	return out
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(v string) bool { return v == "" })
}

func toAnyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
