package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// spanRecorder is a Tracer that remembers each span: its name, its
// parent's and whether it ended with an error.
type spanRecorder struct {
	mu    sync.Mutex
	spans []recordedSpan
}

type recordedSpan struct {
	name, parent string
	ended, err   bool
}

type spanKey struct{}

func (r *spanRecorder) trace(ctx context.Context, name string) (context.Context, func(error)) {
	parent, _ := ctx.Value(spanKey{}).(string)
	r.mu.Lock()
	i := len(r.spans)
	r.spans = append(r.spans, recordedSpan{name: name, parent: parent})
	r.mu.Unlock()
	return context.WithValue(ctx, spanKey{}, name), func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.spans[i].ended, r.spans[i].err = true, err != nil
	}
}

func (r *spanRecorder) take() []recordedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.spans
	r.spans = nil
	return out
}

// TestTracer: with a Tracer, each statement outside a transaction is a
// span named by the store's method that runs it, a child of the caller's;
// a transaction is a span, a child of the caller's, and its statements
// are its children; no span holds SQL; each ends, with the error if any.
func TestTracer(t *testing.T) {
	s := newSQLiteTestStore(t)
	rec := &spanRecorder{}
	s.SetTracer(rec.trace)
	ctx := context.WithValue(t.Context(), spanKey{}, "request")

	mustCreateRealm(t, s, testRealm("r1", "acme", 1))
	if _, err := s.GetRealm(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if !slices.Contains(got, recordedSpan{name: "store.GetRealm", parent: "request", ended: true}) {
		t.Fatalf("spans %+v, want store.GetRealm under the request's", got)
	}

	failure := errors.New("undone")
	err := s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.GetRealm(ctx, "acme"); err != nil {
			return err
		}
		return failure
	})
	if !errors.Is(err, failure) {
		t.Fatal(err)
	}
	got = rec.take()
	want := []recordedSpan{{name: "store.Tx", parent: "request", ended: true, err: true},
		{name: "store.GetRealm", parent: "store.Tx", ended: true}}
	if !slices.Equal(got, want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	if err := s.TraceTestClosure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].name != "store.TraceTestClosure" {
		t.Fatalf("spans of a statement run by a closure of a method %+v, want it named by the method", got)
	}
	if err := s.ReadTx(ctx, func(tx *Store) error { _, err := tx.GetRealm(ctx, "acme"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 2 || got[0].name != "store.ReadTx" || got[1].parent != "store.ReadTx" {
		t.Fatalf("spans of a read transaction %+v", got)
	}
	for _, sp := range got {
		if strings.Contains(sp.name, "SELECT") {
			t.Fatalf("span named by its SQL: %+v", sp)
		}
	}
}

// TraceTestClosure runs a statement from a closure, as methods that
// build their statements in one do.
func (s *Store) TraceTestClosure(ctx context.Context) error {
	run := func() error {
		_, err := s.w.ExecContext(ctx, "SELECT 1")
		return err
	}
	return run()
}

// BenchmarkGetRealm measures one statement outside a transaction, the
// path of most reads: untraced, as before tracing existed, and under a
// Tracer that records nothing.
func BenchmarkGetRealm(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(map[bool]string{false: "untraced", true: "traced"}[traced], func(b *testing.B) {
			s := storeTestOpen(b, b.TempDir()+"/b.db", storeTestKey)
			if err := s.CreateRealm(testCtx, testRealm("r1", "acme", 1)); err != nil {
				b.Fatal(err)
			}
			if traced {
				s.SetTracer(func(ctx context.Context, _ string) (context.Context, func(error)) { return ctx, func(error) {} })
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.GetRealm(testCtx, "acme"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
