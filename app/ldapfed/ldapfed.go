// Package ldapfed is LDAP user federation: a realm's directories, whose
// users sign in by binding with their own password, are imported on first
// sign-in and kept in step by full and changed-user syncs.
//
// It plugs into the identity core twice: as a credential source
// (identity.PasswordSource) asked after the local store, and as a caller
// of the core's user writes (CreateUser, UpdateUser, DeleteUser), so that
// imported users obey every rule local ones do. docs/ldap.md describes the
// settings and the decisions.
package ldapfed

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// redacted stands for the bind credential in every answer.
const redacted = "**********"

// Deps is what the federation uses.
type Deps struct {
	Store *store.Store
	// Identity is the identity core, which every user write goes through.
	// A function: the core is built with this package's credential source
	// in it, so it exists only after New.
	Identity func() *identity.Core
	Log      *slog.Logger
	Now      func() time.Time
	// Realm is the realm the request's path names ({realm}), or the
	// not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for Location headers.
	BaseURL string
	// SyncTick is how often the periodic sync looks for due providers;
	// zero means DefaultSyncTick.
	SyncTick time.Duration
	// SessionsEnded tells the rest of the server which sessions a
	// directory's disable of a user ended, once that is committed, for the
	// back-channel logouts that other disables send too. Nil: none.
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
	// Bus takes ldap.sync.finished.
	Bus *bus.Bus
}

// Service is the federation: the admin API's handlers, the credential
// source and the syncs.
type Service struct {
	deps Deps
	// running holds the providers whose sync runs now (by ID): one at a
	// time per provider, whoever asks.
	mu      sync.Mutex
	running map[string]*progress
	conns   *connPool // the sign-ins' connections
}

// sessionsEnded passes on the sessions a committed write ended.
func (s *Service) sessionsEnded(ctx context.Context, realm *store.Realm, ended []*store.Session) {
	if len(ended) > 0 && s.deps.SessionsEnded != nil {
		s.deps.SessionsEnded(context.WithoutCancel(ctx), realm, ended)
	}
}

// New builds the federation.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{deps: d, running: map[string]*progress{}, conns: newConnPool(d.Now)}
}
