package upgrade

import (
	"net/http"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// Retry-After of the gate's refusals: an upgrade waits for a person; a
// rollback's stop takes seconds, then another binary answers.
const (
	pendingRetry  = time.Minute
	stoppingRetry = 10 * time.Second
)

// Gate answers 503 upgrade_pending, with Retry-After, to every request but
// the health checks and the upgrade endpoints while the database waits
// for an upgrade: the server's code reads columns an older schema lacks,
// so nothing else of it may run, reads included. Once a rollback has
// closed the store, only the liveness checks pass.
func (s *Service) Gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case s.stopping.Load() && path != "/health" && path != "/health/live":
			e := apperr.New(http.StatusServiceUnavailable, apperr.CodeUpgradePending,
				"the database was rolled back to its snapshot: this server is stopping; the binary of the snapshot's schema version starts on it next")
			e.RetryAfter = stoppingRetry
			unavailable(w, e)
		case (s.pending.Load() || s.restart.Load()) && !passesPending(path):
			e := apperr.New(http.StatusServiceUnavailable, apperr.CodeUpgradePending,
				"the database waits for an upgrade to schema version %d (--upgrade=manual): until POST /admin/upgrade, this "+
					"server answers only /health and /admin/upgrade (docs/upgrade.md)", s.deps.Store.LatestSchemaVersion())
			if s.restart.Load() {
				e.Message = "the database is upgraded, but the server could not start on it: restart the server"
			}
			e.RetryAfter = pendingRetry
			unavailable(w, e)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// passesPending says whether a path is served while an upgrade waits.
func passesPending(path string) bool {
	return path == "/health" || strings.HasPrefix(path, "/health/") ||
		path == "/admin/upgrade" || strings.HasPrefix(path, "/admin/upgrade/")
}

// unavailable answers e in the APIs' error shape without logging it: a
// server whose upgrade waits would log every request of its probes.
func unavailable(w http.ResponseWriter, e *apperr.Error) {
	httpx.SetRetryAfter(w, e)
	httpx.WriteJSON(w, e.Status, httpx.ErrorBody{Error: string(e.Code), Description: e.Message})
}
