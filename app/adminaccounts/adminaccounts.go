// Package adminaccounts is the admin API of administrators as people:
// users of the system realm (app/system_realm.go) with an admin account
// saying what each may administer (every permission, one realm's, read
// only, or any listed set). An account is made with a one-time enrolment
// link (a password link of the system realm: the second factor is asked
// at the first console sign-in, which the realm requires by default), or
// with a password given; it is disabled, deleted, and its sessions are
// listed and ended. Signing in is the hosted pages'; the app's admin
// middleware admits an account's tokens (Principal).
package adminaccounts

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// EnrolmentLifetime is how long an enrolment link works.
const EnrolmentLifetime = 24 * time.Hour

// Deps is what the area uses.
type Deps struct {
	Store *store.Store
	Core  *identity.Core
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's public address, for links and Locations.
	BaseURL string
	// SystemRealm is the realm administrators are users of.
	SystemRealm func(context.Context) (*store.Realm, error)
	// Caller is who makes an admin request, recorded as an account's
	// creator; CallerPermissions what it holds: it grants none it lacks.
	Caller            func(r *http.Request) identity.Actor
	CallerPermissions func(r *http.Request) authz.Set
	// SessionsEnded is told of sessions a disable or an end of sessions
	// ended, for their back-channel logouts.
	SessionsEnded func(context.Context, *store.Realm, []*store.Session)
}

// Service is the area's handlers.
type Service struct{ deps Deps }

// New builds the area.
func New(d Deps) *Service { return &Service{deps: d} }
