package app

import (
	"context"
	"slices"

	"github.com/idenplane/idenplane/store"
)

// claimOrganizations resolves the memberships an organization mapper puts
// in a token: none unless one of the grant's scopes has such a mapper, so
// that other tokens cost no query; only enabled organizations count.
func (a *App) claimOrganizations(ctx context.Context, g *tokenGrant) ([]store.OrgMembership, error) {
	wanted := slices.ContainsFunc(g.scopes, func(sc *store.ClientScope) bool {
		return slices.ContainsFunc(sc.Mappers, func(m *store.ProtocolMapper) bool { return m.MapperType == mapperOrganization })
	})
	if !wanted {
		return nil, nil
	}
	all, err := a.store.UserOrganizations(ctx, g.user.ID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(m store.OrgMembership) bool { return !m.Enabled }), nil
}
