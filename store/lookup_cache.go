package store

import (
	"sync"
	"time"
)

// The token endpoints read the same few rows on every request: the realm,
// the client, its scopes and their mappers, the service account and its
// roles, the realm's keys. Those reads cost more than the signature of an
// ES256 token, so the server keeps them in lookup caches.
//
// An entry is good while the store's generation is the one it was read
// under (the generation moves after any committed write to such data, by
// any path of this process) and for at most lookupTTL, which bounds how
// long a change made by another process on the same database file (an
// `idenplane import` beside the server) goes unseen.

const (
	lookupTTL = 10 * time.Second
	// lookupMaxEntries bounds each cache; a full cache starts over. The
	// per-user caches see as many keys as there are signed-in users.
	lookupMaxEntries = 10_000
)

type lookupEntry[V any] struct {
	v       V
	gen     uint64
	expires time.Time
}

// LookupCache holds values read from the store under the generation they
// were read at. The values are shared: callers must not change them.
type LookupCache[V any] struct {
	mu      sync.RWMutex
	entries map[string]lookupEntry[V]
}

// NewLookupCache returns an empty cache.
func NewLookupCache[V any]() *LookupCache[V] {
	return &LookupCache[V]{entries: map[string]lookupEntry[V]{}}
}

// Get returns the entry for key if it was put under gen and has not
// expired at now.
func (c *LookupCache[V]) Get(key string, gen uint64, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || e.gen != gen || now.After(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put stores v for key under gen, read at now.
func (c *LookupCache[V]) Put(key string, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= lookupMaxEntries {
		clear(c.entries)
	}
	c.entries[key] = lookupEntry[V]{v: v, gen: gen, expires: now.Add(lookupTTL)}
}

// Cached returns the entry for key, loading it on a miss. The generation
// is read before the load: a write committed during the load moves it, and
// the entry stored under the older generation is never used.
func Cached[V any](st *Store, c *LookupCache[V], key string, load func() (V, error)) (V, error) {
	gen, now := st.Generation(), time.Now()
	if v, ok := c.Get(key, gen, now); ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.Put(key, v, gen, now)
	return v, nil
}
