// Package scim is the SCIM 2.0 service provider (RFC 7643, RFC 7644) of a
// realm, at /scim/v2/{realm}: its users and groups, provisioned by an
// identity provider such as Microsoft Entra ID or Okta, and the admin API
// of the realm's SCIM tokens.
//
// Every user write goes through the identity core (app/identity), so the
// rules of users (names, conflicts, the password policy) hold for SCIM as
// for every other path. SCIM requests authenticate with a token of the
// realm (Endpoint); their errors are SCIM errors (RFC 7644 §3.12).
package scim

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the SCIM area uses.
type Deps struct {
	Store    *store.Store
	Identity *identity.Core
	Log      *slog.Logger
	Now      func() time.Time
	// BaseURL is the server's external address, for the resources'
	// meta.location.
	BaseURL string
	// Realm is the realm the admin path names ({realm}), or the not-found
	// error: the app's lookup, so every area answers an unknown realm alike.
	Realm func(r *http.Request) (*store.Realm, error)
	// ClientIP is the address of a request's client, for admin events.
	ClientIP func(*http.Request) string
	// SessionsEnded tells the rest of the server which sessions a
	// deactivation ended (the back-channel logout of their clients).
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session)
	// CallerPermissions are the admin permissions of an admin request's
	// caller: a token is created only by a caller holding what it amounts
	// to (TokenPermissions).
	CallerPermissions func(r *http.Request) authz.Set
	// Bus takes every provisioning write: scim.provisioned, admin.change,
	// and the user events of the users it creates, replaces and deletes.
	Bus *bus.Bus
}

// Service is the SCIM area: the SCIM endpoints and the token admin API.
type Service struct {
	deps   Deps
	errors recentErrors
}

// New builds the SCIM area.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{deps: d}
}
