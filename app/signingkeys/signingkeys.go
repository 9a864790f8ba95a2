// Package signingkeys is the realms' token signing keys: their generation,
// the active key and its parsed form, the published key set, scheduled
// and immediate rotation, the rotation job, and their admin API. The token
// endpoints read the active key and the key set on every request, through
// the store's lookup caches: every key write moves the store's generation,
// which is what makes them read again.
package signingkeys

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Deps is what the signing keys use.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// MakeKey makes the private keys of new signing keys; nil, NewPrivateKey.
	MakeKey KeyMaker
}

// Service is the realms' signing keys.
type Service struct {
	deps   Deps
	parsed *keyCache                             // parsed private keys by kid
	active *store.LookupCache[*store.SigningKey] // by realm ID
	public *store.LookupCache[[]publishedKey]    // by realm ID
}

// New builds the signing keys' service.
func New(d Deps) *Service {
	if d.MakeKey == nil {
		d.MakeKey = NewPrivateKey
	}
	return &Service{deps: d, parsed: newKeyCache(),
		active: store.NewLookupCache[*store.SigningKey](), public: store.NewLookupCache[[]publishedKey]()}
}
