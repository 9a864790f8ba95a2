package events_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	rtmetrics "runtime/metrics"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

// benchSeedCount is how many events the export benchmark writes.
const benchSeedCount = 100_000

// eventsBenchSink is a response writer that counts what it is sent and
// keeps none of it, so the benchmark measures the export, not a buffer of
// its output. On each flush it samples the heap, to show that the export's
// memory stays flat however long the file.
type eventsBenchSink struct {
	header   http.Header
	status   int
	bytes    int64
	peakHeap uint64
	sample   []rtmetrics.Sample
}

func newEventsBenchSink() *eventsBenchSink {
	return &eventsBenchSink{header: http.Header{}, sample: []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

func (w *eventsBenchSink) Header() http.Header { return w.header }
func (w *eventsBenchSink) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *eventsBenchSink) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.bytes += int64(len(p))
	return len(p), nil
}

func (w *eventsBenchSink) Flush() {
	rtmetrics.Read(w.sample)
	w.peakHeap = max(w.peakHeap, w.sample[0].Value.Uint64())
}

// BenchmarkAdminEventsExport exports 100,000 admin events, each with a
// user's representation, as CSV. Compare B/op and peak-heap-MB with
// csv-MB: the export streams, so memory does not grow with the file.
func BenchmarkAdminEventsExport(b *testing.B) {
	s := realapp.New(b)
	s.CreateRealm("r")
	realm := s.Realm("r")
	ctx := context.Background()
	err := s.Store.Tx(ctx, func(tx *store.Store) error {
		for i := range benchSeedCount {
			id := uuid.NewString()
			e := &store.AdminEvent{
				ID: uuid.NewString(), RealmID: realm.ID, Time: 1_795_000_000_000 + int64(i), OperationType: "UPDATE",
				ResourceType: "USER", ResourcePath: "users/" + id, AuthType: "user",
				AuthUserID: "c0000000-0000-4000-8000-000000000001", AuthUsername: "root", IPAddress: "192.0.2.1",
				Representation: fmt.Sprintf(`{"id":"%s","username":"user%06d","email":"user%06d@example.com",`+
					`"firstName":"Bench","lastName":"Person %d","enabled":true,"emailVerified":false,`+
					`"requirePasswordReset":false,"createdTimestamp":1795000000000}`, id, i, i, i),
			}
			if err := tx.AddAdminEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed %d admin events: %v", benchSeedCount, err)
	}
	export := func() *eventsBenchSink {
		req := httptest.NewRequest(http.MethodGet, "/admin/realms/r/events/admin/export", nil)
		req.RemoteAddr = apptest.ClientAddr
		req.Header.Set("X-Admin-API-Key", apptest.APIKey)
		sink := newEventsBenchSink()
		s.Handler.ServeHTTP(sink, req)
		if sink.status != http.StatusOK {
			b.Fatalf("export answered %d", sink.status)
		}
		return sink
	}
	b.ReportAllocs()
	var sink *eventsBenchSink
	var peak uint64
	for b.Loop() {
		sink = export()
		peak = max(peak, sink.peakHeap)
	}
	if sink.bytes < benchSeedCount*300 {
		b.Fatalf("export is %d bytes: not every row was written", sink.bytes)
	}
	b.ReportMetric(float64(sink.bytes)/(1<<20), "csv-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
