package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/telemetry"
)

// newAccessLog writes a JSON line per request to w (docs/logs.md).
func newAccessLog(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, nil))
}

// logAccess writes the access log line of a request. It holds no value a
// request carries in its query, where codes, tokens and secrets travel
// (code, state, id_token_hint, key …), only the parameters' names; nor
// the path's own secrets (httpx.RedactPath); nor a header. The path and
// query are those the request came with, before a handler stripped a
// prefix.
func (a *App) logAccess(r *http.Request, rec *statusRecorder, m *matched, elapsed time.Duration) {
	attrs := []slog.Attr{
		slog.String("client", a.clientIP(r)),
		slog.String("method", r.Method),
		slog.String("path", httpx.RedactPath(m.path, m.vars)),
		slog.String("query", queryNames(m.query)),
		slog.Int("status", rec.status),
		slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("route", m.route),
		slog.String("realm", m.realm),
	}
	if id := telemetry.TraceID(r.Context()); id != "" {
		attrs = append(attrs, slog.String("trace_id", id))
	}
	a.accessLog.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// queryNames are the names of a query's parameters, each once, sorted and
// joined by commas.
func queryNames(raw string) string {
	if raw == "" {
		return ""
	}
	var names []string
	for part := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
