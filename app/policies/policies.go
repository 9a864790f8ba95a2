// Package policies is the realms' authorization policies and the policy
// decision point over them. A policy permits or denies the requests of its
// target (resource types and action names) whose condition, an expression
// in CEL over the request's subject, resource, action and context, holds;
// deny overrides permit, and a request no policy applies to gets the
// realm's default decision (deny unless the realm chose permit). The same
// decisions answer the admin API's evaluate and test, the OpenID AuthZEN
// 1.0 access evaluation endpoints, and the token endpoint's token exchange
// (resource type token-exchange). See docs/policies.md.
package policies

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/store"
)

// Effect is what a policy does with the requests it applies to, and what
// a decision is.
type Effect string

const (
	Permit Effect = "permit"
	Deny   Effect = "deny"
)

// ResourceTokenExchange is the resource type of the token endpoint's
// token exchanges, which the realm's policies govern (exchange.go).
const ResourceTokenExchange = "token-exchange"

// Deps is what the policies area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the path names ({realm}), or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// ProtocolRealm is Realm for the AuthZEN endpoints: cached, as the
	// protocol endpoints read it, and a disabled realm is not found.
	ProtocolRealm func(r *http.Request) (*store.Realm, error)
	BaseURL       string
	// CallerPermissions are the admin credential's permissions: evaluate
	// and test draw on a stored user's roles, groups and attributes only
	// for a caller who may read users.
	CallerPermissions func(r *http.Request) authz.Set
	// ClientIP is the address of a request's caller, as --trusted-proxies
	// makes it.
	ClientIP func(r *http.Request) string
	// Issuer is the realm's issuer URL, {base}/realms/{name}: the AuthZEN
	// policy decision point's identifier.
	Issuer func(realm *store.Realm) string
	// Caller authenticates an AuthZEN caller (authzen.go): a client's
	// access token or its credentials (Basic), entitled to ask; nil (and
	// no error) when the request carries none.
	Caller func(r *http.Request, realm *store.Realm) (*Caller, error)
}

// Caller is the client an AuthZEN request comes from.
type Caller struct {
	ClientID string // the client's public clientId
	// Entitled: its token carries the scope, or its service account the
	// realm role, that admits a caller (AuthZENScope, AuthZENRole).
	Entitled bool
}

// Service is the policies area: the admin API, the decision point, the
// AuthZEN endpoints.
type Service struct {
	deps     Deps
	programs *programCache
	configs  *store.LookupCache[*realmConfig]      // by realm ID
	subjects *store.LookupCache[*resolvedUser]     // by realm ID and the subject's id
	groups   *store.LookupCache[map[string]string] // by realm ID: group ID → path
}

// New builds the policies area.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{deps: d, programs: newProgramCache(), configs: store.NewLookupCache[*realmConfig](),
		subjects: store.NewLookupCache[*resolvedUser](), groups: store.NewLookupCache[map[string]string]()}
}

// realmConfig is what a decision reads of its realm: the settings, and
// the enabled policies compiled.
type realmConfig struct {
	settings Settings
	policies []*compiled
}

// config reads the realm's settings and enabled policies, cached until a
// write moves the store's generation; a program is compiled once for its
// expression's text (programCache), whatever moves the generation.
func (s *Service) config(ctx context.Context, realm *store.Realm) (*realmConfig, error) {
	return store.Cached(s.deps.Store, s.configs, realm.ID, func() (*realmConfig, error) {
		set, err := s.settings(ctx, realm)
		if err != nil {
			return nil, err
		}
		stored, err := s.deps.Store.ListAuthzPolicies(ctx, realm.ID)
		if err != nil {
			return nil, err
		}
		c := &realmConfig{settings: set}
		for _, sp := range stored {
			if !sp.Enabled {
				continue
			}
			p, err := s.compiledOf(sp)
			if err != nil {
				return nil, err
			}
			c.policies = append(c.policies, p)
		}
		return c, nil
	})
}
