package app

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// Concurrent events are all written, each request learns its own event's
// outcome, and one bad event (of a realm that does not exist) loses none
// of the others in its batch.
func TestEventBatchConcurrent(t *testing.T) {
	s := newTestServer(t)
	realmID := mustRealmID(t, s, s.createRealm("acme")["name"].(string))
	const n = 64
	var b eventBatch
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := &store.LoginEvent{ID: fmt.Sprintf("e%02d", i), RealmID: realmID, Time: int64(i), Type: "LOGIN"}
			if i == n/2 {
				e.RealmID = "no-such-realm"
			}
			errs[i] = b.add(context.Background(), s.store, e)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == n/2) {
			t.Errorf("event %d: %v", i, err)
		}
	}
	events, err := s.store.ListLoginEvents(context.Background(), realmID, store.LoginEventFilter{EventWindow: store.EventWindow{Max: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != n-1 {
		t.Fatalf("%d events stored, want %d", len(events), n-1)
	}
}
