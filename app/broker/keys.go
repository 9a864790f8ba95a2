package broker

import (
	"context"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
)

// keySets holds one go-oidc remote key set per key URL, for the life of
// the process: a key set caches the upstream's keys and fetches them again
// when a token names a key it does not hold, which is how an upstream's
// key rotation reaches us.
type keySets struct {
	mu   sync.Mutex
	sets map[string]*oidc.RemoteKeySet
}

func (k *keySets) get(ctx context.Context, url string) *oidc.RemoteKeySet {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sets == nil {
		k.sets = map[string]*oidc.RemoteKeySet{}
	}
	ks, ok := k.sets[url]
	if !ok {
		ks = oidc.NewRemoteKeySet(ctx, url)
		k.sets[url] = ks
	}
	return ks
}
