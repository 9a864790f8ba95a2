// Package auditstreams sends a realm's events to the destinations its
// administrators register: a syslog receiver (RFC 5424 over TCP, TLS or
// UDP), an HTTP collector (a JSON array, Splunk HEC or Elastic's _bulk)
// or a local file of JSON lines. Each event of a realm that a stream
// takes becomes one record, numbered by the realm's sequence and written
// in the event's own transaction; each stream keeps a cursor, the last
// sequence it has passed, and a worker sends every stream what lies after
// its cursor, in order, moving it only once the destination has taken
// the batch. A destination that is down catches up when it is back; the
// backlog waits on disk (docs/audit-streams.md).
package auditstreams

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Type is the kind of a stream's destination.
type Type string

// The destinations.
const (
	TypeSyslog Type = "syslog"
	TypeHTTP   Type = "http"
	TypeFile   Type = "file"
)

// Deps is what the audit streams use.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Realm is the realm the admin path names ({realm}), or the not-found
	// error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address: Location headers, and the
	// host name records carry by default.
	BaseURL string
	// Client posts the HTTP batches: the outbound guard's, following no
	// redirect.
	Client *http.Client
	// OutboundAllowed are the non-public networks the server may call
	// (--outbound-allow): syslog receivers are dialled through the same
	// check as the HTTP client's, and an http:// URL is taken only for a
	// loopback address they hold.
	OutboundAllowed []netip.Prefix
	// Dir is the directory file streams write in (--audit-dir); "" and
	// file streams are refused.
	Dir string
	// RetryBase is the wait after a first failure, doubled for each
	// further one up to MaxRetryWait; zero means DefaultRetryBase.
	RetryBase time.Duration
	// AttemptTimeout bounds one batch's sending; zero means
	// DefaultAttemptTimeout.
	AttemptTimeout time.Duration
}

// Service is the audit streams: their admin API, a subscriber of the bus,
// and the delivery worker.
type Service struct {
	deps     Deps
	hostname string                                   // records' HOSTNAME, the base URL's
	enabled  *store.LookupCache[[]*store.AuditStream] // by realm ID
	wake     chan struct{}
}

// New builds the audit streams.
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
	if d.Client == nil {
		d.Client = NewClient(d.OutboundAllowed)
	}
	host := "-" // RFC 5424's NILVALUE
	if u, err := url.Parse(d.BaseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return &Service{deps: d, hostname: host, enabled: store.NewLookupCache[[]*store.AuditStream](), wake: make(chan struct{}, 1)}
}

// NewClient is the HTTP destinations' client: the outbound guard's (no
// non-public address unless allowed, checked after resolution), following
// no redirect: a collector answers where it is registered, and a redirect
// would carry the batch, and its credentials, elsewhere.
func NewClient(allowed []netip.Prefix) *http.Client {
	c := httpx.OutboundClient(DefaultAttemptTimeout, allowed)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// Wake asks the worker for a pass now; a wake already pending is as good
// as a second one.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enabledStreams are the realm's enabled streams, through the cache: most
// realms have none, and every event asks.
func (s *Service) enabledStreams(ctx context.Context, realmID string) ([]*store.AuditStream, error) {
	return store.Cached(s.deps.Store, s.enabled, realmID, func() ([]*store.AuditStream, error) {
		return s.deps.Store.EnabledAuditStreams(ctx, realmID)
	})
}
