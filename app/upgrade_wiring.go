package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/adminkeys"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/store"
)

// newUpgrades builds the upgrade module over st; upgraded builds the rest
// of the server once a database that waited is migrated (Start's).
func newUpgrades(st *store.Store, cfg Config, log *slog.Logger, now func() time.Time, upgraded func(context.Context) error) *upgrade.Service {
	mode := cfg.Upgrade
	if mode == "" {
		mode = upgrade.ModeAuto
	}
	// clientIP reads the settings alone (the trusted proxies), which a
	// server whose upgrade waits has too.
	settings := &App{cfg: cfg}
	return upgrade.New(upgrade.Deps{Store: st, Log: log, Now: now, BaseURL: cfg.BaseURL, Mode: mode,
		BinaryVersion: cfg.Version, Upgraded: upgraded, Shutdown: cfg.Shutdown,
		Caller: func(r *http.Request) upgrade.Actor {
			act := upgrade.Actor{IP: settings.clientIP(r)}
			if p := principalFrom(r.Context()); p != nil {
				act.Type, act.ID, act.Name = p.Kind, p.UserID, p.Username
			}
			return act
		}})
}

// errPendingCredential answers a credential other than the bootstrap key
// while an upgrade waits: checking it would read tables the older schema
// may not have as this binary reads them.
var errPendingCredential = apperr.Unauthorized("while the database waits for an upgrade, only the bootstrap admin API key " +
	"(X-Admin-API-Key) is accepted: named keys, tokens and the console work again after POST /admin/upgrade")

// pendingHandler is the server while the database waits for an upgrade
// (--upgrade=manual on an older schema): the health checks, and the
// upgrade endpoints to the bootstrap admin API key, whose hash
// IDENPLANE_ADMIN_API_KEY gives or the oldest of tables holds. Everything
// else answers 503 upgrade_pending (upgrade.Service.Gate). Nothing of it
// writes to the database but the upgrade itself.
func pendingHandler(ctx context.Context, st *store.Store, cfg Config, log *slog.Logger, up *upgrade.Service) (http.Handler, error) {
	keyHash, err := bootstrapKeyHash(ctx, st, cfg.AdminAPIKey)
	if err != nil {
		return nil, err
	}
	if keyHash == nil {
		log.Warn("no admin API key: set IDENPLANE_ADMIN_API_KEY to call the upgrade endpoints")
	}
	// The middleware and error pages read the settings and the log alone.
	lite := &App{cfg: cfg, log: log}
	r := mux.NewRouter()
	r.NotFoundHandler = lite.handle(func(w http.ResponseWriter, r *http.Request) error {
		return apperr.NotFound("route " + r.Method + " " + r.URL.Path)
	})
	r.MethodNotAllowedHandler = lite.handle(func(w http.ResponseWriter, req *http.Request) error {
		return apperr.New(http.StatusMethodNotAllowed, apperr.CodeMethodNotAllowed, "%s is not allowed on %s", req.Method, req.URL.Path)
	})
	r.Handle("/health", lite.handle(health)).Methods(http.MethodGet)
	r.Handle("/health/live", lite.handle(health)).Methods(http.MethodGet)
	r.Handle("/health/ready", lite.handle(pendingReady(st))).Methods(http.MethodGet)
	upgradeRoutes(func(method, path string, perm authz.Permission, h httpx.HandlerFunc) {
		r.Handle(path, lite.handle(bootstrapKeyOnly(keyHash, perm, h))).Methods(method)
	}, up)
	return lite.recoverPanics(lite.securityHeaders(limitBody(up.Gate(r)))), nil
}

// bootstrapKeyHash is the hash of the bootstrap admin API key: of
// IDENPLANE_ADMIN_API_KEY when it is set, else the stored one; nil when
// there is none (a database whose first start made none cannot wait for
// an upgrade: it would have had to be migrated).
func bootstrapKeyHash(ctx context.Context, st *store.Store, configured string) ([]byte, error) {
	if configured != "" {
		h := sha256.Sum256([]byte(configured))
		return h[:], nil
	}
	h, err := st.AdminAPIKeyHash(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the admin API key: %w", err)
	}
	return h, nil
}

// bootstrapKeyOnly admits the bootstrap admin API key, as requireAdmin
// does, and nothing else (errPendingCredential).
func bootstrapKeyOnly(keyHash []byte, perm authz.Permission, next httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key := r.Header.Get("X-Admin-API-Key")
		if key == "" && r.Header.Get("Authorization") == "" {
			return errUnauthorized
		}
		h := sha256.Sum256([]byte(key))
		if key == "" || keyHash == nil || subtle.ConstantTimeCompare(h[:], keyHash) != 1 {
			return errPendingCredential
		}
		p := &adminPrincipal{Kind: principalAPIKey, Username: adminkeys.BootstrapName, Permissions: authz.Everything()}
		if !p.Permissions.Has(perm) {
			return apperr.Forbidden("this credential lacks the permission %s", perm)
		}
		return next(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

// pendingReady is /health/ready while the database waits for an upgrade:
// not ready, so that a load balancer sends nothing here, with the
// database's answer and the versions.
func pendingReady(st *store.Store) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		db := map[string]any{"status": "ok"}
		if err := st.Ping(ctx); err != nil {
			db = map[string]any{"status": "unavailable"}
		}
		v, _ := st.SchemaVersion(ctx)
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{
			"status": "upgrade-pending",
			"checks": map[string]any{
				"database": db,
				"upgrade": map[string]any{"status": "pending", "schemaVersion": v,
					"binarySchemaVersion": st.LatestSchemaVersion()},
			},
		})
		return nil
	}
}
