package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// testRealm stores a realm with its defaults and the given event settings.
func testRealm(t *testing.T, st *store.Store, name string, eventsEnabled bool, types ...string) *store.Realm {
	t.Helper()
	r := &store.Realm{ID: uuid.NewString(), Name: name, Enabled: true, AccessTokenLifespan: 300, RefreshTokenLifespan: 1800,
		OfflineTokenLifespan: 2592000, EventsExpiration: 604800, EventsEnabled: eventsEnabled, EnabledEventTypes: types,
		CreatedAt: time.Now().UnixMilli()}
	if err := st.CreateRealm(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func loginEvents(t *testing.T, st *store.Store, realmID string) []*store.LoginEvent {
	t.Helper()
	list, err := st.ListLoginEvents(context.Background(), realmID, store.LoginEventFilter{EventWindow: store.EventWindow{Max: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// Concurrent events are all written, each request learns its own event's
// outcome, and one bad event (of a realm that does not exist) loses none
// of the others in its batch.
func TestEventBatchConcurrent(t *testing.T) {
	st, _ := apptest.OpenStore(t)
	realmID := testRealm(t, st, "acme", true).ID
	const n = 64
	b := New(Deps{Store: st}).newEventBatcher()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := &store.LoginEvent{ID: fmt.Sprintf("e%02d", i), RealmID: realmID, Time: int64(i), Type: "LOGIN"}
			if i == n/2 {
				e.RealmID = "no-such-realm"
			}
			errs[i] = b.Do(context.Background(), &record{realm: &store.Realm{ID: e.RealmID}, event: e, keep: true})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == n/2) {
			t.Errorf("event %d: %v", i, err)
		}
	}
	if got := len(loginEvents(t, st, realmID)); got != n-1 {
		t.Fatalf("%d events stored, want %d", got, n-1)
	}
}

// recordLog keeps the messages logged at error level.
type recordLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *recordLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *recordLog) WithGroup(string) slog.Handler                { return h }
func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}

// Record keeps an event only when its realm records events of its type,
// fills in the ID, the realm and the time from the clock, and logs a
// failed write instead of returning it.
func TestRecord(t *testing.T) {
	st, _ := apptest.OpenStore(t)
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	logs := &recordLog{}
	s := New(Deps{Store: st, Log: slog.New(logs), Now: func() time.Time { return now }})
	on := testRealm(t, st, "on", true)
	off := testRealm(t, st, "off", false)
	chosen := testRealm(t, st, "chosen", true, "REFRESH_TOKEN")
	ctx := t.Context()

	s.Record(ctx, on, store.LoginEvent{Type: "LOGIN", UserID: "u1", IPAddress: "192.0.2.9", RealmID: "ignored", Time: 7})
	s.Record(ctx, on, store.LoginEvent{Type: "REFRESH_TOKEN"}) // not kept by default
	s.Record(ctx, off, store.LoginEvent{Type: "LOGIN"})
	s.Record(ctx, chosen, store.LoginEvent{Type: "LOGIN"}) // not among the realm's types
	s.Record(ctx, chosen, store.LoginEvent{Type: "REFRESH_TOKEN"})
	s.Record(ctx, nil, store.LoginEvent{Type: "LOGIN"})

	got := loginEvents(t, st, on.ID)
	if len(got) != 1 {
		t.Fatalf("realm with events on: %d events, want the LOGIN alone", len(got))
	}
	e := got[0]
	if e.Type != "LOGIN" || e.RealmID != on.ID || e.Time != now.UnixMilli() || e.UserID != "u1" || e.IPAddress != "192.0.2.9" {
		t.Fatalf("event %+v", e)
	}
	if id, err := uuid.Parse(e.ID); err != nil || id.Version() != 7 {
		t.Fatalf("event ID %q is not a version 7 UUID", e.ID)
	}
	if n := len(loginEvents(t, st, off.ID)); n != 0 {
		t.Fatalf("realm with events off: %d events", n)
	}
	if c := loginEvents(t, st, chosen.ID); len(c) != 1 || c[0].Type != "REFRESH_TOKEN" {
		t.Fatalf("realm recording REFRESH_TOKEN alone: %+v", c)
	}

	// A write that fails is logged; the caller goes on.
	if err := st.DeleteRealm(ctx, on.Name); err != nil {
		t.Fatal(err)
	}
	s.Record(ctx, on, store.LoginEvent{Type: "LOGIN"})
	if !slices.ContainsFunc(logs.msgs, func(m string) bool { return strings.Contains(m, "login event not recorded") }) {
		t.Fatalf("failed write not logged: %q", logs.msgs)
	}
}

// RecordIn writes the event in the caller's transaction: it commits with
// the caller's write and goes with its rollback; a write of the event that
// fails is logged and undone alone, and the caller's write commits.
func TestRecordIn(t *testing.T) {
	st, _ := apptest.OpenStore(t)
	logs := &recordLog{}
	s := New(Deps{Store: st, Log: slog.New(logs), Now: time.Now})
	on := testRealm(t, st, "on", true)
	ctx := t.Context()
	record := func(realm *store.Realm, fail error) error {
		var committed func()
		err := st.Tx(ctx, func(tx *store.Store) error {
			var err error
			if committed, err = s.RecordIn(ctx, tx, realm, store.LoginEvent{Type: "LOGIN", UserID: "u1"}); err != nil {
				return err
			}
			return cmp.Or(fail, tx.CreateRealm(ctx, &store.Realm{ID: uuid.NewString(), Name: uuid.NewString()[:8],
				Enabled: true, CreatedAt: time.Now().UnixMilli()}))
		})
		if err == nil {
			committed()
		}
		return err
	}

	if err := record(on, nil); err != nil {
		t.Fatal(err)
	}
	if got := loginEvents(t, st, on.ID); len(got) != 1 || got[0].UserID != "u1" || got[0].RealmID != on.ID {
		t.Fatalf("events after the commit: %+v, want the LOGIN", got)
	}
	boom := errors.New("boom")
	if err := record(on, boom); !errors.Is(err, boom) {
		t.Fatalf("record with a failing write: %v", err)
	}
	if n := len(loginEvents(t, st, on.ID)); n != 1 {
		t.Fatalf("%d events after a rollback, want the first alone", n)
	}

	realms, err := st.ListRealms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone := &store.Realm{ID: uuid.NewString(), Name: "gone", EventsEnabled: true}
	if err := record(gone, nil); err != nil {
		t.Fatalf("an event that cannot be written failed its caller: %v", err)
	}
	if after, err := st.ListRealms(ctx); err != nil || len(after) != len(realms)+1 {
		t.Fatalf("%d realms after (%v), want the caller's write kept beside %d", len(after), err, len(realms))
	}
	if !slices.ContainsFunc(logs.msgs, func(m string) bool { return strings.Contains(m, "login event not recorded") }) {
		t.Fatalf("failed write not logged: %q", logs.msgs)
	}
}
