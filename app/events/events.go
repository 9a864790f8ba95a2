// Package events is the realm's event log: which login events a realm
// keeps and the writer that records them, and the admin API that lists,
// exports as CSV, clears and configures login and admin events.
//
// Admin events are recorded by the admin routes' middleware in package app,
// which knows the route table and the caller; this package reads them.
package events

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the events area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the request's path names ({realm}), or the
	// not-found error: the app's lookup, so that every area answers an
	// unknown realm alike.
	Realm func(r *http.Request) (*store.Realm, error)
	// ValidateRealm checks a realm whose event settings changed by all the
	// rules of a realm's settings.
	ValidateRealm func(*store.Realm) error
	// DefaultRealm holds a new realm's settings: a PUT of the events
	// configuration falls back to them for the fields it leaves out.
	DefaultRealm store.Realm
	// SystemRealm says whether a realm is the administrators': their
	// sign-ins have a log line of their own.
	SystemRealm func(*store.Realm) bool
	// Bus takes every login event (bus.OfLogin), in the transaction that
	// writes it when the realm keeps it, whether or not it does. nil
	// publishes nothing.
	Bus *bus.Bus
}

// Service is the events area: Record, the login event writer every area
// takes, and the admin API's handlers.
type Service struct {
	deps  Deps
	batch *store.Batcher[*record]
}

// New builds the events area.
func New(d Deps) *Service {
	s := &Service{deps: d}
	s.batch = s.newEventBatcher()
	return s
}
