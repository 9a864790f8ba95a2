// Package adminkeys is the admin API of named admin API keys: keys for
// automation, each with a name, its own permissions, optionally one realm
// it is confined to and an expiry, rotated without a restart (the old
// secret may keep working for a grace period while a job switches). The
// bootstrap key (IDENPLANE_ADMIN_API_KEY, or the one printed at the first
// start) stays beside them, in app.
//
// A key is ipk_<id>_<secret>: the ID finds its row, and the SHA-256 of the
// whole key is compared in constant time. Authenticate checks one; the
// app's admin middleware calls it and confines a key to its realm.
package adminkeys

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's public address, for the Location of a key
	// created.
	BaseURL string
	// Caller is who makes an admin request, recorded as a key's creator.
	Caller func(r *http.Request) identity.Actor
	// CallerPermissions are the admin permissions of the request's caller:
	// it makes no key holding one it lacks.
	CallerPermissions func(r *http.Request) authz.Set
}

// Service is the area's handlers and the check of a key.
type Service struct {
	deps Deps
}

// New builds the area.
func New(d Deps) *Service { return &Service{deps: d} }

func (s *Service) now() time.Time { return s.deps.Now() }
