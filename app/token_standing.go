package app

import (
	"context"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/idenplane/idenplane/store"
)

// An access token's signature and expiry say nothing of what happened
// since it was issued: its session ended (logout, an admin, a refresh
// token revoked or reused), its user disabled or deleted, its client
// disabled, the token itself revoked. Every Bearer check (introspection,
// userinfo, the account and step-up APIs) asks the store, as Keycloak
// does, through one cached lookup so that the JWT path stays a path
// without queries.
//
// The answer is kept by jti under the store's revocation generation,
// which moves after every committed write that may end a token, before
// the request that wrote answers. A check that starts after a revocation
// answered thus reads the new generation, misses, and loads after the
// commit: a revoked token is never reported alive, not even for a moment.
// Creating sessions and sliding them forward (every sign-in and refresh)
// keeps the generation, so under load the entries stay; a session that
// reaches the expiry the entry read is asked again, since it may have
// slid since.
//
// A token an identity obtained with one of its credentials names it in
// credentialClaim, and stands while that credential is not revoked: a
// revoked API key or client secret takes its tokens with it at once, not
// when they expire.

// credentialClaim names the identity's credential (its ID) an access token
// was obtained with.
const credentialClaim = "credential_id"

// accessTokenStands says whether the verified access token with these
// claims still stands.
func (a *App) accessTokenStands(ctx context.Context, realm *store.Realm, claims map[string]any, std *jwt.Claims) (bool, error) {
	if std.ID == "" {
		return false, nil // every access token of ours has one; the cache is keyed by it
	}
	now, key := a.now().UnixMilli(), realm.ID+"\x00"+std.ID
	// Read before the load: a revocation committed during it moves the
	// generation, and the entry put under the older one is never used.
	gen := a.store.RevocationGeneration()
	if until, ok := a.cache.tokenStandings.Get(key, gen, time.Now()); ok && (until == 0 || until > now) {
		return until > now, nil
	}
	azp, _ := claims["azp"].(string)
	sid, _ := claims["sid"].(string)
	cred, _ := claims[credentialClaim].(string)
	t := &store.AccessTokenClaims{RealmID: realm.ID, TokenID: std.ID, UserID: std.Subject, ClientID: azp, SessionID: sid,
		CredentialID: cred}
	if std.IssuedAt != nil {
		t.IssuedAt = std.IssuedAt.Time().Unix()
	}
	until, err := a.store.AccessTokenLiveUntil(ctx, t)
	if err != nil {
		return false, err
	}
	a.cache.tokenStandings.Put(key, until, gen, time.Now())
	return until > now, nil
}
