// Package broker is identity brokering: people of a realm sign in with an
// upstream OpenID Connect or OAuth 2.0 provider (a company's provider or a
// social account), and are found, created or linked as users of the realm
// through the identity core. It holds the providers' admin API and their
// place in the realm export, the sign-in through an upstream (login and
// callback) and the federated identities that link users to upstream
// accounts.
//
// Upstream ID tokens are verified with coreos/go-oidc and the OAuth 2.0
// exchanges made with golang.org/x/oauth2 (docs/decisions.md), over the
// server's outbound client: every call has a timeout, and non-public
// addresses are refused unless the server is configured to allow them.
package broker

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Deps is what brokering uses.
type Deps struct {
	// BaseURL is the server's external address, no trailing slash: the
	// callback URL upstream providers send people back to is under it.
	BaseURL string
	Store   *store.Store
	Log     *slog.Logger
	Now     func() time.Time
	// Realm is the realm the request's path names ({realm}), or the
	// not-found error: the app's lookup, so every area answers an unknown
	// realm alike.
	Realm func(r *http.Request) (*store.Realm, error)
	// Client makes the calls to upstream providers: discovery, keys, the
	// token exchange, userinfo. It must time out and refuse internal
	// addresses unless configured otherwise (httpx.OutboundClient).
	Client *http.Client
}

// Service is the brokering area.
type Service struct {
	deps Deps
}

// New builds the brokering area.
func New(d Deps) *Service { return &Service{deps: d} }
