package saml

import (
	"sync"
	"time"
)

const (
	// maxCachedKeys bounds the key cache: one key per realm that signed
	// since the last upkeep (RotateDueKeys), which empties it.
	maxCachedKeys = 4096
	// keyCacheTTL bounds how long a change another process made to the
	// database file goes unseen, as the store's lookup caches do.
	keyCacheTTL = 10 * time.Second
)

// keyCache holds each realm's active key, parsed (parsing an RSA key
// costs more than signing with it), with the store generation it was read
// under. Every change to the keys (a rotation, a deletion) moves the
// generation, so an entry of an older one is read again before use.
type keyCache struct {
	mu     sync.RWMutex
	active map[string]cachedKey // by realm ID
}

type cachedKey struct {
	key  *signingKey
	gen  uint64
	read time.Time
}

func newKeyCache() *keyCache {
	return &keyCache{active: map[string]cachedKey{}}
}

// get returns the realm's cached key, if any, and whether it is current:
// read under gen, the store's generation now, less than keyCacheTTL
// before now.
func (c *keyCache) get(realmID string, gen uint64, now time.Time) (k *signingKey, current bool) {
	c.mu.RLock()
	e, ok := c.active[realmID]
	c.mu.RUnlock()
	return e.key, ok && e.gen == gen && now.Sub(e.read) < keyCacheTTL
}

// put caches k as the realm's active key, read under gen at now.
func (c *keyCache) put(realmID string, gen uint64, now time.Time, k *signingKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.active[realmID]; !ok && len(c.active) >= maxCachedKeys {
		clear(c.active)
	}
	c.active[realmID] = cachedKey{key: k, gen: gen, read: now}
}

func (c *keyCache) clear() {
	c.mu.Lock()
	clear(c.active)
	c.mu.Unlock()
}
