// Package setup is the first-run setup wizard (docs/setup.md): while no
// administrator exists, the server prints a one-time bootstrap token, and
// whoever holds it creates the first administrator, the first realm, its
// outgoing mail and its first application, through the JSON API under
// /setup-wizard or the hosted page that drives the same steps. Completing
// or skipping the wizard closes it for good: from then on every one of its
// endpoints answers 410 Gone.
//
// The steps make things as the admin API does, through what app wires in:
// the administrator through app/adminaccounts, the realm through the
// realm creation of POST /admin/realms, the client through app/clients'
// storage, the test mail through app/mail's sender. This package imports
// none of those modules.
package setup

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Path is where the wizard lives: its page, and its API below.
const Path = "/setup-wizard"

// NewAdmin is the first administrator the admin-account step makes.
type NewAdmin struct {
	Username, Email, FirstName, LastName, Password string
}

// Realms make and change realms as POST and PUT /admin/realms do: the same
// defaults, checks (the outbound guard on the SMTP host among them),
// signing keys and seeded scopes.
type Realms interface {
	// Defaults is a new realm's settings before any field is given.
	Defaults() store.Realm
	// Create checks and stores a new realm; a name taken is a 409.
	Create(ctx context.Context, realm *store.Realm) error
	// Update checks and stores realm, which was before as read.
	Update(ctx context.Context, realm, before *store.Realm) error
}

// Deps is what the wizard uses.
type Deps struct {
	Store   *store.Store
	Log     *slog.Logger
	Now     func() time.Time
	BaseURL string
	// Stdout is where the bootstrap token is printed, once.
	Stdout io.Writer
	// Pages render the hosted page under the pages' security policy; its
	// forms' CSRF tokens are MACs of the pages' key.
	Pages *signin.Pages
	// Script is the URL of setup.js, which takes the token from the
	// printed address's fragment into the page's form.
	Script string
	// SecureCookies: the server is served over TLS.
	SecureCookies bool
	// ClientIP is the caller's address, for the token check's rate limit.
	ClientIP func(r *http.Request) string
	// Throttle counts wrong tokens per address, as the admin login's
	// failures are counted.
	Throttle identity.FailureCounter
	// CreateAdmin makes an administrator holding every permission
	// (app/adminaccounts), checking the system realm's password policy,
	// and answers its ID.
	CreateAdmin func(ctx context.Context, a NewAdmin) (string, error)
	Realms      Realms
	// NewClient stores a validated new client on tx with the realm's
	// standard scopes (app/clients).
	NewClient func(ctx context.Context, tx *store.Store, realm *store.Realm, c *store.Client) error
	// SendTestMail sends a test message to to through the realm's SMTP
	// server at once (app/mail), in the language r asks for. Its error is
	// the one the admin API's smtp/test answers.
	SendTestMail func(r *http.Request, realm *store.Realm, to string) error
	// Issuer is a realm's OpenID Connect issuer.
	Issuer func(realm *store.Realm) string
	// ConsoleURL is the admin console's address, where a finished wizard
	// sends the administrator.
	ConsoleURL string
}

// Service is the setup wizard.
type Service struct{ deps Deps }

// New builds the wizard.
func New(d Deps) *Service { return &Service{deps: d} }
