package app

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.opentelemetry.io/otel/trace"

	"github.com/idenplane/idenplane/app/telemetry"
)

// maxBodyBytes caps every request body.
const maxBodyBytes = 1 << 20

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			limit := int64(maxBodyBytes)
			if isImportPath(r.URL.Path) {
				limit = maxImportBytes
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// isImportPath says whether a request imports a realm or users, whose
// bodies may be as large as an export.
func isImportPath(path string) bool {
	switch {
	case path == "/admin/realms/import", strings.HasPrefix(path, "/admin/migration/"):
		return true
	case strings.HasPrefix(path, "/admin/realms/") && strings.HasSuffix(path, "/users/import"):
		return strings.Count(path, "/") == 5
	}
	return false
}

func (a *App) securityHeaders(next http.Handler) http.Handler {
	hsts := strings.HasPrefix(a.cfg.BaseURL, "https://")
	headers := http.Header{
		"X-Content-Type-Options":     {"nosniff"},
		"X-Frame-Options":            {"DENY"},
		"Referrer-Policy":            {"no-referrer"},
		"Content-Security-Policy":    {"default-src 'none'; frame-ancestors 'none'"},
		"Cross-Origin-Opener-Policy": {"same-origin"},
	}
	if hsts {
		headers["Strict-Transport-Security"] = []string{"max-age=63072000; includeSubDomains"}
	}
	noStore := []string{"no-store"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The values are shared by every response and never changed in
		// place: a handler's Set replaces a slice, an Add outgrows it.
		h := w.Header()
		for k, v := range headers {
			h[k] = v
		}
		if strings.HasPrefix(r.URL.Path, "/admin") {
			h["Cache-Control"] = noStore
		}
		next.ServeHTTP(w, r)
	})
}

func (a *App) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				a.writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler wrote, and how many bytes
// of body, for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// matched is what the router found for a request: its route template and
// realm, which recordRoute fills in for measure.
type matched struct {
	route, realm string
	vars         map[string]string
	path, query  string // as the request came, for the access log
}

type routeKey struct{}

// measure counts and times requests by route template, never by raw path,
// so label cardinality stays bounded whatever clients send; it starts and
// ends the request's span when tracing is on, and writes its access log
// line when that is on.
func (a *App) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		a.metrics.inFlight.Inc()
		defer a.metrics.inFlight.Dec()
		var span trace.Span
		if a.tracing != nil {
			r, span = a.tracing.StartServer(r, a.clientIP(r))
		}
		m := &matched{route: "unmatched"}
		if a.accessLog != nil {
			m.path, m.query = r.URL.EscapedPath(), r.URL.RawQuery
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeKey{}, m)))
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		elapsed := time.Since(start)
		a.metrics.observe(r.Method, m.route, rec.status, elapsed)
		if span != nil {
			telemetry.EndServer(span, r.Method, m.route, rec.status)
		}
		if a.accessLog != nil {
			a.logAccess(r, rec, m, elapsed)
		}
		a.log.Debug("request", "method", r.Method, "route", m.route, "status", rec.status, "duration", elapsed)
	})
}

// recordRoute runs after the router matched, and tells measure the
// template and the realm.
func recordRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m, ok := r.Context().Value(routeKey{}).(*matched); ok {
			if tpl, err := mux.CurrentRoute(r).GetPathTemplate(); err == nil {
				m.route = tpl
			}
			m.vars = mux.Vars(r)
			m.realm = m.vars["realm"]
		}
		next.ServeHTTP(w, r)
	})
}
