package app

import (
	"net/http"
	"net/http/pprof"
)

// DebugHandler serves the runtime's profiles (CPU, heap, goroutines, block,
// mutex, execution trace) for --debug-addr. It is never part of Handler:
// profiles show memory contents and cost CPU, so they get their own
// listener, which an operator opens on loopback to measure a slow path
// where it runs (docs/performance.md).
func DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // also the named profiles: heap, block, mutex, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
