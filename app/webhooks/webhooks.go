// Package webhooks sends a realm's events to the HTTPS endpoints its
// administrators register, signed as Standard Webhooks
// (https://www.standardwebhooks.com): each event for each webhook that
// takes it is a message written in the transaction of the event itself,
// sent and retried from that outbox by a worker, in order per webhook
// (docs/webhooks.md).
package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Deps is what the webhooks area uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the admin path names ({realm}), or the not-found
	// error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for Location headers.
	BaseURL string
	// Client makes the deliveries: the outbound guard's, following no
	// redirect.
	Client *http.Client
	// OutboundAllowed are the non-public networks the server may call
	// (--outbound-allow): an http:// URL is taken only for a loopback
	// address they hold.
	OutboundAllowed []netip.Prefix
	// RetryBase is the wait before the first retry, doubled for each
	// further one up to an hour; zero means DefaultRetryBase.
	RetryBase time.Duration
	// AttemptTimeout bounds one attempt; zero means DefaultAttemptTimeout.
	AttemptTimeout time.Duration
	// Bus takes webhook.disabled; the webhooks take the bus's events as
	// one of its subscribers.
	Bus *bus.Bus
}

// Service is the webhooks area: its admin API, a subscriber of the bus,
// and the delivery worker.
type Service struct {
	deps    Deps
	enabled *store.LookupCache[[]*store.Webhook] // by realm ID
	wake    chan struct{}
}

// New builds the webhooks area.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.RetryBase <= 0 {
		d.RetryBase = DefaultRetryBase
	}
	if d.AttemptTimeout <= 0 {
		d.AttemptTimeout = DefaultAttemptTimeout
	}
	return &Service{deps: d, enabled: store.NewLookupCache[[]*store.Webhook](), wake: make(chan struct{}, 1)}
}

// Wake asks the worker for a pass now; a wake already pending is as good
// as a second one.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enabledWebhooks are the realm's enabled webhooks, through the cache:
// most realms have none, and every event asks.
func (s *Service) enabledWebhooks(ctx context.Context, realmID string) ([]*store.Webhook, error) {
	return store.Cached(s.deps.Store, s.enabled, realmID, func() ([]*store.Webhook, error) {
		return s.deps.Store.EnabledWebhooks(ctx, realmID)
	})
}

// NewClient is the deliveries' client: the outbound guard's (no non-public
// address unless allowed, checked after resolution), following no
// redirect: a receiver answers where it is registered.
func NewClient(allowed []netip.Prefix) *http.Client {
	c := httpx.OutboundClient(DefaultAttemptTimeout, allowed)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}
