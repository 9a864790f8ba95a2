package store

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tracer starts a span of the store's work named name (store.GetRealm,
// store.Tx) and returns the context the work runs in and the function that
// ends the span with the work's error. The store knows no tracing library:
// the server passes one in (app/telemetry).
type Tracer func(ctx context.Context, name string) (context.Context, func(error))

// SetTracer makes every transaction and every statement run outside one a
// span of t. It must be called before the store is used by more than one
// goroutine. Without it, nothing is traced and nothing is spent on it.
func (s *Store) SetTracer(t Tracer) {
	s.trace = t
	for _, q := range []querier{s.w, s.r} {
		if d, ok := q.(*dbQuerier); ok {
			d.trace = t
		}
	}
}

// storeMethods is how the runtime names the methods of *Store.
var storeMethods = reflect.TypeFor[Store]().PkgPath() + ".(*Store)."

// statementName names a statement by the exported method of *Store that
// runs it (store.GetUserByUsername): the SQL text stays out of the trace,
// as the values bound to it. A statement run from elsewhere is named by its
// first keyword.
func statementName(query string) string {
	var pcs [12]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	for {
		f, more := frames.Next()
		if method, ok := strings.CutPrefix(f.Function, storeMethods); ok {
			// A closure inside the method (CreateSession.func1) is the method's.
			method, _, _ = strings.Cut(method, ".")
			if r, _ := utf8.DecodeRuneInString(method); unicode.IsUpper(r) {
				return "store." + method
			}
		}
		if !more {
			break
		}
	}
	keyword, _, _ := strings.Cut(strings.TrimSpace(query), " ")
	return "store." + strings.ToUpper(keyword)
}
