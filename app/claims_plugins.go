package app

import (
	"context"

	"github.com/idenplane/idenplane/app/plugins"
)

// addPluginClaims adds to a token's claims what the plugins' claims hooks
// answer for it (app/plugins), once the issuer's own are in: a plugin
// adds, it never replaces.
func addPluginClaims(ctx context.Context, p *plugins.Service, g *tokenGrant, in *claimsInput, tokenType string, claims map[string]any) {
	roles := append([]string(nil), in.RealmRoles...)
	for client, names := range in.ClientRoles {
		for _, n := range names {
			roles = append(roles, client+"/"+n)
		}
	}
	scopes := make([]string, len(g.scopes))
	for i, sc := range g.scopes {
		scopes[i] = sc.Name
	}
	p.AddClaims(ctx, plugins.ClaimsRequest{Realm: g.realm, ClientID: g.client.ClientID, User: g.user, Roles: roles,
		Scopes: scopes, TokenType: tokenType}, claims)
}
