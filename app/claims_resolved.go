package app

import (
	"context"
	"slices"
	"strconv"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// The claims of organizations and custom attributes.

// claimOrganizations resolves the memberships an organization mapper puts
// in a token: none unless one of the grant's scopes has such a mapper, so
// that other tokens cost no query; only enabled organizations count, and
// of those the one the grant's sign-in settled on, if it did.
func (a *App) claimOrganizations(ctx context.Context, g *tokenGrant) ([]store.OrgMembership, error) {
	if !hasMapper(g, scopes.MapperOrganization) {
		return nil, nil
	}
	all, err := a.store.UserOrganizations(ctx, g.user.ID)
	if err != nil {
		return nil, err
	}
	// The organization the sign-in settled on (org_select.go), while the
	// user is still its member; else every membership.
	return slices.DeleteFunc(all, func(m store.OrgMembership) bool {
		return !m.Enabled || g.org.Made && m.OrgID != g.org.ID
	}), nil
}

// hasMapper says whether one of the grant's scopes has a mapper of the type.
func hasMapper(g *tokenGrant, mapperType string) bool {
	return scopesHaveMapper(g.scopes, mapperType)
}

// scopesHaveMapper says whether one of the scopes has a mapper of the type.
func scopesHaveMapper(scopes []*store.ClientScope, mapperType string) bool {
	return slices.ContainsFunc(scopes, func(sc *store.ClientScope) bool {
		return slices.ContainsFunc(sc.Mappers, func(m *store.ProtocolMapper) bool { return m.MapperType == mapperType })
	})
}

// claimCustomAttributes resolves the values a custom attributes mapper
// puts in a token: the user's values of the schema's attributes marked
// inTokens, a number as a number, a boolean as a boolean, a multivalued
// attribute as a list. Values of attributes no longer in the schema stay
// out. None unless a scope of the grant has such a mapper.
func (a *App) claimCustomAttributes(ctx context.Context, g *tokenGrant) (map[string]any, error) {
	if !hasMapper(g, scopes.MapperCustomAttributes) {
		return nil, nil
	}
	schema, err := a.store.ListCustomAttributes(ctx, g.realm.ID)
	if err != nil {
		return nil, err
	}
	held, err := a.store.UserCustomAttributes(ctx, g.user.ID)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, attr := range schema {
		vals := held[attr.Name]
		if !attr.InTokens || len(vals) == 0 {
			continue
		}
		typed := make([]any, len(vals))
		for i, v := range vals {
			typed[i] = attributeClaimValue(attr.Type, v)
		}
		if attr.Multivalued {
			out[attr.Name] = typed
		} else {
			out[attr.Name] = typed[0]
		}
	}
	return out, nil
}

// attributeClaimValue is a stored value as its claim holds it.
func attributeClaimValue(typ, v string) any {
	switch typ {
	case identity.AttrNumber:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case identity.AttrBoolean:
		return v == "true"
	}
	return v
}
