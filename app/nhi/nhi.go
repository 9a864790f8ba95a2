// Package nhi is the admin API of non-human identities (docs/nhi.md):
// services, workloads, devices, bots and AI agents, their lifecycle
// (suspend, reactivate, decommission) and their credentials, and the
// service accounts, which are identities of kind service seen through
// their API keys.
//
// An identity is backed by a client with the client_credentials grant
// and that client's service-account user: the token endpoint serves it as
// it serves any client, and the identity core's client rules
// (identity.CheckNHISecret) decide which of its credentials authenticate
// it and whether its state lets it have tokens. Its roles are the
// service-account user's role mappings.
package nhi

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the area uses.
type Deps struct {
	Store *store.Store
	Core  *identity.Core
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's public address, for the Location of what is
	// created.
	BaseURL string
	// Realm is the realm the request's path names ({realm}), or the
	// not-found error: the app's lookup, so that every area answers an
	// unknown realm alike.
	Realm func(r *http.Request) (*store.Realm, error)
	// NewClient stores a new client on tx as the admin API creates one:
	// with the realm's standard scopes, so that its tokens carry roles, and
	// its service-account user. A clientId taken is a 409 on "clientId".
	NewClient func(ctx context.Context, tx *store.Store, realm *store.Realm, c *store.Client) error
	// Caller is who makes an admin request and from where, for the audit
	// log.
	Caller func(r *http.Request) identity.Actor
	// CallerPermissions are the admin permissions of the request's caller:
	// it grants a service account none beyond them.
	CallerPermissions func(r *http.Request) authz.Set
}

// Service is the area's handlers.
type Service struct {
	deps Deps
}

// New builds the area.
func New(d Deps) *Service { return &Service{deps: d} }

func (s *Service) now() time.Time { return s.deps.Now() }

// view is what a route shows of the identities: all of them, or (the
// service accounts) those of one kind and their credentials of one type.
type view struct {
	kind      string // "" for every kind
	credType  string // "" for every type
	what      string // the resource's name in a 404
	credWhat  string
	credParam string // the path variable of a credential
}

var (
	identitiesView      = view{what: "identity", credWhat: "credential", credParam: "credentialId"}
	serviceAccountsView = view{kind: identity.NHIService, credType: identity.CredAPIKey, what: "service account",
		credWhat: "API key", credParam: "keyId"}
)

type viewKey struct{}

// viewOf is the view of the request's route: the identities' unless
// ServiceAccount set the service accounts'.
func viewOf(r *http.Request) view {
	if v, ok := r.Context().Value(viewKey{}).(view); ok {
		return v
	}
	return identitiesView
}

// ServiceAccount serves h as a route of the service accounts: the
// identities of kind service, seen through their API keys.
func ServiceAccount(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		return h(w, r.WithContext(context.WithValue(r.Context(), viewKey{}, serviceAccountsView)))
	}
}

// identity loads the realm and the identity the path's {id} names, of
// the view's kind.
func (s *Service) identity(r *http.Request) (*store.Realm, *store.NHI, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	v := viewOf(r)
	n, err := httpx.ChildOf(r, realm.ID, "id", v.what, s.deps.Store.GetNHI)
	if err == nil && v.kind != "" && n.Kind != v.kind {
		return nil, nil, apperr.NotFound(v.what + " " + n.ID)
	}
	return realm, n, err
}

// audit records action on n (and its credential credID) by the request's
// caller, on q: the request's transaction, or the pool.
func (s *Service) audit(r *http.Request, q *store.Store, n *store.NHI, credID, action, details string) error {
	return s.deps.Core.AuditNHI(r.Context(), q, n, credID, action, s.deps.Caller(r), details)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// location is the URL of a resource just created under the request's
// collection path.
func (s *Service) location(r *http.Request, id string) string {
	return s.deps.BaseURL + r.URL.Path + "/" + id
}

// checkGrant refuses to grant admin permissions the caller does not hold
// itself: a service account with nhi:write cannot raise its own.
func (s *Service) checkGrant(r *http.Request, before, after []string) error {
	held := s.deps.CallerPermissions(r)
	for _, p := range after {
		if !slices.Contains(before, p) && !held.Has(authz.Permission(p)) {
			return apperr.Forbidden("the permission %s cannot be granted by a caller that does not hold it", p)
		}
	}
	return nil
}

// checkIssue refuses a credential of n to a caller that does not hold
// every admin permission n has: whoever holds the credential acts with
// them, so issuing or rotating it grants them as a grant does.
func (s *Service) checkIssue(r *http.Request, n *store.NHI) error {
	held := s.deps.CallerPermissions(r)
	for _, p := range n.AdminPermissions {
		if !held.Has(authz.Permission(p)) {
			return apperr.Forbidden("%s holds the permission %s: a credential of it cannot be issued by a caller that does not hold it",
				n.Name, p)
		}
	}
	return nil
}

// settle writes the uses of credentials still queued (identity.Core
// writes them behind the requests), so that what an administrator reads
// or deletes includes every use answered so far. A failure is logged: the
// read goes on with what is written.
func (s *Service) settle(ctx context.Context) {
	if err := s.deps.Core.FlushNHIUses(ctx); err != nil {
		s.deps.Log.ErrorContext(ctx, "uses of identities not recorded", "err", err)
	}
}
