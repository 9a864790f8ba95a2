package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/idenplane/idenplane/store"
)

// caches are the App's lookups, which the token endpoints read on every
// request (store.LookupCache says when an entry is current; the realm's
// signing keys are app/signingkeys' own). Every value in them is shared
// and must not be changed: the accessors below hand out copies where
// callers might.
type caches struct {
	realms          *store.LookupCache[*store.Realm]         // by name
	clients         *store.LookupCache[*store.Client]        // by realm ID and clientId
	serviceAccounts *store.LookupCache[*store.User]          // by client ID
	linkedScopes    *store.LookupCache[[]*store.ClientScope] // by realm ID, client ID and kind
	userRoles       *store.LookupCache[[]*store.Role]        // by user ID
	groupPaths      *store.LookupCache[[]string]             // by realm ID and user ID
	userCounts      *store.LookupCache[int]                  // by realm ID and filter
	// clientsWithoutNHI lists the clients that back no non-human
	// identity, by client ID (clientNHI).
	clientsWithoutNHI *store.LookupCache[struct{}]
	// tokenStandings are AccessTokenLiveUntil answers, by realm ID and jti,
	// under the store's revocation generation (token_standing.go).
	tokenStandings *store.LookupCache[int64]
}

func newCaches() *caches {
	return &caches{
		realms: store.NewLookupCache[*store.Realm](), clients: store.NewLookupCache[*store.Client](),
		serviceAccounts: store.NewLookupCache[*store.User](), linkedScopes: store.NewLookupCache[[]*store.ClientScope](),
		userRoles: store.NewLookupCache[[]*store.Role](), groupPaths: store.NewLookupCache[[]string](),
		userCounts: store.NewLookupCache[int](), tokenStandings: store.NewLookupCache[int64](),
		clientsWithoutNHI: store.NewLookupCache[struct{}](),
	}
}

// cachedRealm is GetRealm through the cache; the caller gets its own copy.
func (a *App) cachedRealm(ctx context.Context, name string) (*store.Realm, error) {
	r, err := store.Cached(a.store, a.cache.realms, name, func() (*store.Realm, error) { return a.store.GetRealm(ctx, name) })
	if err != nil {
		return nil, err
	}
	c := *r
	return &c, nil
}

// cachedClient is GetClientByClientID through the cache; the caller gets
// its own copy.
func (a *App) cachedClient(ctx context.Context, realmID, clientID string) (*store.Client, error) {
	c, err := store.Cached(a.store, a.cache.clients, realmID+"\x00"+clientID, func() (*store.Client, error) {
		return a.store.GetClientByClientID(ctx, realmID, clientID)
	})
	if err != nil {
		return nil, err
	}
	cp := *c
	return &cp, nil
}

// clientNHI is GetNHIByClient, with the answer that a client backs no
// identity kept: most clients back none, and each of their grants asks
// (a tenth of an ES256 client-credentials grant's CPU). A new identity
// moves the store's generation, so a client that comes to back one is
// seen at once; an identity itself, its state and credentials, is read
// afresh at every use.
func (a *App) clientNHI(ctx context.Context, clientID string) (*store.NHI, error) {
	gen, now := a.store.Generation(), time.Now()
	if _, none := a.cache.clientsWithoutNHI.Get(clientID, gen, now); none {
		// The answer of most client authentications: the bare sentinel,
		// which its callers only test for, spares an error built each time.
		return nil, store.ErrNotFound
	}
	n, err := a.store.GetNHIByClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		a.cache.clientsWithoutNHI.Put(clientID, struct{}{}, gen, now)
	}
	return n, err
}

// serviceAccountUser is the user a client acts as, through the cache.
func (a *App) serviceAccountUser(ctx context.Context, clientID string) (*store.User, error) {
	u, err := store.Cached(a.store, a.cache.serviceAccounts, clientID, func() (*store.User, error) {
		return a.store.GetServiceAccountUser(ctx, clientID)
	})
	if err != nil {
		return nil, err
	}
	cp := *u
	return &cp, nil
}

// linkedScopes is ListLinkedScopes through the cache, as a slice of the
// caller's own (the scopes themselves are shared and read-only).
func (a *App) linkedScopes(ctx context.Context, realmID, clientID, kind string) ([]*store.ClientScope, error) {
	scopes, err := store.Cached(a.store, a.cache.linkedScopes, realmID+"\x00"+clientID+"\x00"+kind, func() ([]*store.ClientScope, error) {
		return a.store.ListLinkedScopes(ctx, realmID, clientID, kind)
	})
	return slices.Clone(scopes), err
}

// effectiveRoles is EffectiveRoles through the cache; read-only.
func (a *App) effectiveRoles(ctx context.Context, userID string) ([]*store.Role, error) {
	return store.Cached(a.store, a.cache.userRoles, userID, func() ([]*store.Role, error) {
		return a.store.EffectiveRoles(ctx, userID)
	})
}

// userGroupPaths are the paths of a user's groups, through the cache;
// read-only.
func (a *App) userGroupPaths(ctx context.Context, realmID, userID string) ([]string, error) {
	return store.Cached(a.store, a.cache.groupPaths, realmID+"\x00"+userID, func() ([]string, error) {
		groups, err := a.store.ListUserGroups(ctx, userID)
		if err != nil || len(groups) == 0 {
			return nil, err
		}
		return groupPaths(ctx, a.store, realmID, groups)
	})
}
