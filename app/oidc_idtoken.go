package app

import (
	"context"
	"time"

	"github.com/idenplane/idenplane/app/plugins"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// idToken mints the ID token issued beside accessToken: the standard
// claims of OpenID Connect Core §2 and §3.1.3.6, with the claims the
// scope mappers put in ID tokens. nonce is "" on refresh (§12.2). acr is
// the level amr amounts to (acr.go).
func (a *App) idToken(ctx context.Context, g *tokenGrant, in *claimsInput, accessToken, nonce string, amr []string) (string, error) {
	claims := in.build(scopes.IDToken)
	// at_hash depends on the algorithm: hash and sign with the same key.
	key, err := a.signingKeys.Active(ctx, g.realm)
	if err != nil {
		return "", err
	}
	atHash, err := oidc.ClaimHash(accessToken, key.Algorithm)
	if err != nil {
		return "", err
	}
	now := a.now()
	std := map[string]any{
		"iss": a.issuer(g.realm), "sub": g.user.ID, "aud": g.client.ClientID, "azp": g.client.ClientID,
		"exp": now.Add(time.Duration(g.realm.AccessTokenLifespan) * time.Second).Unix(), "iat": now.Unix(),
		"auth_time": g.authTime.Unix(), "at_hash": atHash, "acr": acrOf(amr), "amr": amr,
	}
	if nonce != "" {
		std["nonce"] = nonce
	}
	if g.sid != "" {
		std["sid"] = g.sid
	}
	if g.actor != nil {
		std["act"] = actClaim(g.actor)
	}
	// The standard claims win: an ID token is for its client alone, even
	// when audience mappers widen the access token's audience.
	for k, v := range std {
		claims[k] = v
	}
	addPluginClaims(ctx, a.plugins, g, in, plugins.IDToken, claims)
	return a.signWith(key, "JWT", claims)
}
