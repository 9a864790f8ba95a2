package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/idenplane/idenplane/store"
)

// The token endpoints read the same few rows on every request: the realm,
// the client, its scopes and their mappers, the service account and its
// roles, the realm's keys. Those reads cost more than the signature of an
// ES256 token, so they are cached here.
//
// An entry is good while the store's generation is the one it was read
// under (the generation moves after any committed write to such data, by
// any path of this process) and for at most cacheTTL, which bounds how
// long a change made by another process on the same database file (an
// `idenplane import` beside the server) goes unseen.

const (
	cacheTTL = 10 * time.Second
	// cacheMaxEntries bounds each cache; a full cache starts over. The
	// per-user caches see as many keys as there are signed-in users.
	cacheMaxEntries = 10_000
)

type cacheEntry[V any] struct {
	v       V
	gen     uint64
	expires time.Time
}

type lookupCache[V any] struct {
	mu      sync.RWMutex
	entries map[string]cacheEntry[V]
}

func newLookupCache[V any]() *lookupCache[V] {
	return &lookupCache[V]{entries: map[string]cacheEntry[V]{}}
}

func (c *lookupCache[V]) get(key string, gen uint64, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || e.gen != gen || now.After(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *lookupCache[V]) put(key string, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= cacheMaxEntries {
		clear(c.entries)
	}
	c.entries[key] = cacheEntry[V]{v: v, gen: gen, expires: now.Add(cacheTTL)}
}

// cached returns the entry for key, loading it on a miss. The generation
// is read before the load: a write committed during the load moves it, and
// the entry stored under the older generation is never used.
func cached[V any](st *store.Store, c *lookupCache[V], key string, load func() (V, error)) (V, error) {
	gen, now := st.Generation(), time.Now()
	if v, ok := c.get(key, gen, now); ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.put(key, v, gen, now)
	return v, nil
}

// caches are the App's lookups; every value in them is shared and must
// not be changed: the accessors below hand out copies where callers might.
type caches struct {
	realms          *lookupCache[*store.Realm]         // by name
	clients         *lookupCache[*store.Client]        // by realm ID and clientId
	serviceAccounts *lookupCache[*store.User]          // by client ID
	linkedScopes    *lookupCache[[]*store.ClientScope] // by realm ID, client ID and kind
	userRoles       *lookupCache[[]*store.Role]        // by user ID
	groupPaths      *lookupCache[[]string]             // by realm ID and user ID
	activeKeys      *lookupCache[*store.SigningKey]    // by realm ID
	publicKeys      *lookupCache[[]publishedKey]       // by realm ID
	userCounts      *lookupCache[int]                  // by realm ID and filter
	// clientsWithoutNHI lists the clients that back no non-human
	// identity, by client ID (clientNHI).
	clientsWithoutNHI *lookupCache[struct{}]
	// tokenStandings are AccessTokenLiveUntil answers, by realm ID and jti,
	// under the store's revocation generation (token_standing.go).
	tokenStandings *lookupCache[int64]
}

func newCaches() *caches {
	return &caches{
		realms: newLookupCache[*store.Realm](), clients: newLookupCache[*store.Client](),
		serviceAccounts: newLookupCache[*store.User](), linkedScopes: newLookupCache[[]*store.ClientScope](),
		userRoles: newLookupCache[[]*store.Role](), groupPaths: newLookupCache[[]string](),
		activeKeys: newLookupCache[*store.SigningKey](), publicKeys: newLookupCache[[]publishedKey](),
		userCounts: newLookupCache[int](), tokenStandings: newLookupCache[int64](),
		clientsWithoutNHI: newLookupCache[struct{}](),
	}
}

// cachedRealm is GetRealm through the cache; the caller gets its own copy.
func (a *App) cachedRealm(ctx context.Context, name string) (*store.Realm, error) {
	r, err := cached(a.store, a.cache.realms, name, func() (*store.Realm, error) { return a.store.GetRealm(ctx, name) })
	if err != nil {
		return nil, err
	}
	c := *r
	return &c, nil
}

// cachedClient is GetClientByClientID through the cache; the caller gets
// its own copy.
func (a *App) cachedClient(ctx context.Context, realmID, clientID string) (*store.Client, error) {
	c, err := cached(a.store, a.cache.clients, realmID+"\x00"+clientID, func() (*store.Client, error) {
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
	if _, none := a.cache.clientsWithoutNHI.get(clientID, gen, now); none {
		return nil, fmt.Errorf("identity of client %s: %w", clientID, store.ErrNotFound)
	}
	n, err := a.store.GetNHIByClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		a.cache.clientsWithoutNHI.put(clientID, struct{}{}, gen, now)
	}
	return n, err
}

// serviceAccountUser is the user a client acts as, through the cache.
func (a *App) serviceAccountUser(ctx context.Context, clientID string) (*store.User, error) {
	u, err := cached(a.store, a.cache.serviceAccounts, clientID, func() (*store.User, error) {
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
	scopes, err := cached(a.store, a.cache.linkedScopes, realmID+"\x00"+clientID+"\x00"+kind, func() ([]*store.ClientScope, error) {
		return a.store.ListLinkedScopes(ctx, realmID, clientID, kind)
	})
	return slices.Clone(scopes), err
}

// effectiveRoles is EffectiveRoles through the cache; read-only.
func (a *App) effectiveRoles(ctx context.Context, userID string) ([]*store.Role, error) {
	return cached(a.store, a.cache.userRoles, userID, func() ([]*store.Role, error) {
		return a.store.EffectiveRoles(ctx, userID)
	})
}

// userGroupPaths are the paths of a user's groups, through the cache;
// read-only.
func (a *App) userGroupPaths(ctx context.Context, realmID, userID string) ([]string, error) {
	return cached(a.store, a.cache.groupPaths, realmID+"\x00"+userID, func() ([]string, error) {
		groups, err := a.store.ListUserGroups(ctx, userID)
		if err != nil || len(groups) == 0 {
			return nil, err
		}
		return groupPaths(ctx, a.store, realmID, groups)
	})
}
