package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/store"
)

// Serving is what serve runs: the App, or, while the database waits for an
// upgrade (--upgrade=manual on a schema older than this binary's), the
// upgrade endpoints alone (pendingHandler), until an upgrade builds the
// App over the migrated database and takes its place.
type Serving struct {
	ctx      context.Context // serve's: the App built after an upgrade lives as long
	st       *store.Store
	cfg      Config
	upgrades *upgrade.Service
	handler  atomic.Pointer[http.Handler]
	app      atomic.Pointer[App]
	built    chan struct{} // closed once app is set
	once     sync.Once
}

// Start builds what serve runs over st: the App at once when the database
// is at this binary's schema, else the server of a waiting upgrade. ctx is
// the server's own, which the App keeps.
func Start(ctx context.Context, st *store.Store, cfg Config) (*Serving, error) {
	s := &Serving{ctx: ctx, st: st, cfg: cfg, built: make(chan struct{})}
	log, now := cfg.Logger, cfg.Now
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	s.upgrades = newUpgrades(st, cfg, log, now, s.build)
	s.cfg.upgrades = s.upgrades
	pending, err := s.upgrades.Pending(ctx)
	if err != nil {
		return nil, err
	}
	if !pending {
		if err := s.build(ctx); err != nil {
			return nil, err
		}
		return s, nil
	}
	h, err := pendingHandler(ctx, st, s.cfg, log, s.upgrades)
	if err != nil {
		return nil, err
	}
	s.handler.Store(&h)
	v, _ := st.SchemaVersion(ctx)
	log.Warn("the database waits for an upgrade (--upgrade=manual): serving /health and /admin/upgrade only until POST /admin/upgrade",
		"schemaVersion", v, "binarySchemaVersion", st.LatestSchemaVersion())
	return s, nil
}

// build makes the App over the database, now at this binary's schema, and
// serves it from the next request on.
func (s *Serving) build(context.Context) error {
	a, err := New(s.ctx, s.st, s.cfg)
	if err != nil {
		return fmt.Errorf("start the server: %w", err)
	}
	h := a.Handler()
	s.app.Store(a)
	s.handler.Store(&h)
	s.once.Do(func() { close(s.built) })
	return nil
}

// ServeHTTP serves a request with the App, or the server of a waiting
// upgrade until there is one.
func (s *Serving) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.handler.Load()).ServeHTTP(w, r)
}

// App is the server once the database is at this binary's schema; nil
// while an upgrade waits.
func (s *Serving) App() *App { return s.app.Load() }

// Upgrades is the upgrade module, which says whether a rollback closed
// the store (Stopping).
func (s *Serving) Upgrades() *upgrade.Service { return s.upgrades }

// RunJobs runs the App's background jobs until ctx ends, once there is an
// App: none run on a database that waits for its upgrade.
func (s *Serving) RunJobs(ctx context.Context) {
	select {
	case <-s.built:
		s.App().RunJobs(ctx)
	case <-ctx.Done():
	}
}
