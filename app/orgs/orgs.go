// Package orgs is the realm's organizations (Keycloak's, addressed by
// slug): their CRUD and search, members with their roles, invitations by
// email and the verification of their email domains.
package orgs

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the organizations area uses.
type Deps struct {
	Store *store.Store
	// Bus takes the organization.member events.
	Bus *bus.Bus
	Log *slog.Logger
	Now func() time.Time
	// Realm is the realm the request's path names ({realm}), or the
	// not-found error: the app's lookup, so that every area answers an
	// unknown realm alike.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a
	// new resource.
	BaseURL string
	// Issuer is a realm's issuer URL, under which its hosted pages are.
	Issuer func(*store.Realm) string
	// SendInvitation puts the invitation mail in the realm's outbox
	// through tx, or answers why the realm cannot send it.
	SendInvitation func(ctx context.Context, tx *store.Store, realm *store.Realm, m InvitationMail) error
	// MailQueued tells the mail sender, after the commit, that mail waits.
	MailQueued func()
	// LookupTXT asks the configured DNS resolver for the TXT records at a
	// name (net.Resolver.LookupTXT).
	LookupTXT func(ctx context.Context, name string) ([]string, error)
	// CallerRole is the caller's role in the path's organization when an
	// owner or admin of it calls with their own token; "" for an admin
	// credential, which may do anything.
	CallerRole func(r *http.Request) string
	// CallerPermissions are the admin permissions of the request's caller:
	// the owner and admin roles are given only by a caller holding what
	// they hold.
	CallerPermissions func(r *http.Request) authz.Set
}

// Service is the organizations area: the admin API's handlers.
type Service struct {
	deps Deps
}

// New builds the organizations area.
func New(d Deps) *Service { return &Service{deps: d} }

// organization loads the realm and the organization that {slug} names.
func (s *Service) organization(r *http.Request) (*store.Realm, *store.Organization, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	o, err := httpx.ChildOf(r, realm.ID, "slug", "organization", s.deps.Store.GetOrganization)
	return realm, o, err
}
