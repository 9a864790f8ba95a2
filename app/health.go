package app

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/idenplane/idenplane/app/httpx"
)

func health(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// ready reports whether the database answers, and the heap figures an
// operator sizing the box wants to see.
func (a *App) ready(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	dbErr := a.store.Ping(ctx)
	db := map[string]any{"status": "ok", "latencyMs": float64(time.Since(start).Microseconds()) / 1000}
	status, code := "ok", http.StatusOK
	if dbErr != nil {
		a.log.Error("readiness: database check failed", "err", dbErr)
		db = map[string]any{"status": "unavailable"}
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	httpx.WriteJSON(w, code, map[string]any{
		"status": status,
		"checks": map[string]any{
			"database": db,
			"memory": map[string]any{
				"status":         "ok",
				"heapAllocBytes": m.HeapAlloc,
				"heapInuseBytes": m.HeapInuse,
				"heapSysBytes":   m.HeapSys,
				"heapObjects":    m.HeapObjects,
				"sysBytes":       m.Sys,
				"goroutines":     runtime.NumGoroutine(),
			},
		},
	})
	return nil
}
