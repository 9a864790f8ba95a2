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
	"context"

	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
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
	// OutboundAllowed are the non-public addresses Client may still reach
	// (Config.OutboundAllowed): a provider whose endpoints resolve to
	// another one is refused when saved.
	OutboundAllowed []netip.Prefix
	// Core is the identity core: brokering creates and updates users
	// through it, and checks the password that confirms a link.
	Core *identity.Core
	// ClientIP is the address of the request's caller, for events.
	ClientIP func(r *http.Request) string
	// LoginEvent records a login event (app/events' writer).
	LoginEvent func(context.Context, *store.Realm, store.LoginEvent)
	// SignIn finishes a sign-in the way a password sign-in finishes: the
	// second factor the user or realm requires, the SSO session, then on
	// to the application.
	SignIn func(w http.ResponseWriter, r *http.Request, realm *store.Realm, f Finish) error
	// Pages are the realm's hosted pages: brokering's pages, the form
	// tokens, and the browser's own random cookie, which a sign-in through
	// a provider is bound to as the realm's other sign-in steps are.
	Pages *signin.Pages
}

// Finish is a sign-in through a provider handed to Deps.SignIn.
type Finish struct {
	// What the sign-in continues: an authorization request, or a sign-in
	// flow of another requester; exactly one.
	AuthRequestID string
	FlowID        string
	User          *store.User
	// ProviderID is the provider the user signed in with.
	ProviderID string
	// SecondFactorDone: the second factor was checked here already (a
	// link confirmed with password and code).
	SecondFactorDone bool
	// AMR is how the user authenticated: fed, and what else was checked.
	AMR []string
	// Events are recorded first: how the provider found the user.
	Events []store.LoginEvent
}

// Service is the brokering area.
type Service struct {
	deps Deps
	keys keySets
}

// New builds the brokering area.
func New(d Deps) *Service { return &Service{deps: d} }
