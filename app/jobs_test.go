package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

func TestRunJobsExpiresEvents(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	logs := newEventsTestLog()
	s := newTestServer(t, func(c *Config) {
		c.Now = func() time.Time { return now }
		c.Logger = slog.New(logs)
	})
	realmID := mustRealmID(t, s, s.createRealm("acme")["name"].(string)) // events kept 604800 s
	week := 7 * 24 * time.Hour
	eventsTestSeedLogin(t, s,
		&store.LoginEvent{ID: "old", RealmID: realmID, Time: now.Add(-week - time.Millisecond).UnixMilli(), Type: "LOGIN"},
		&store.LoginEvent{ID: "new", RealmID: realmID, Time: now.Add(-week).UnixMilli(), Type: "LOGIN"},
	)
	eventsTestSeedAdmin(t, s,
		&store.AdminEvent{ID: "old", RealmID: realmID, Time: now.Add(-8 * 24 * time.Hour).UnixMilli(),
			OperationType: "CREATE", ResourceType: "USER", AuthType: "api-key"},
	)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.app.RunJobs(ctx)
		close(done)
	}()
	// The first run happens at once; its log record says it is over.
	var rec slog.Record
	for rec.Message != "deleted expired events" {
		select {
		case rec = <-logs.signal:
		case <-time.After(10 * time.Second):
			t.Fatal("RunJobs did not delete expired events at start")
		}
	}
	counts := map[string]int64{}
	rec.Attrs(func(a slog.Attr) bool {
		counts[a.Key] = a.Value.Int64()
		return true
	})
	if counts["login"] != 1 || counts["admin"] != 1 || rec.Level != slog.LevelInfo {
		t.Fatalf("logged %v at %v, want login 1 and admin 1 at info", counts, rec.Level)
	}
	if got := eventsTestLoginIDs(s, "acme", ""); got != "new" {
		t.Fatalf("login events left: %s", got)
	}
	if got := eventsTestAdminEvents(s, "acme", ""); len(got) != 0 {
		t.Fatalf("admin events left: %+v", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunJobs did not return when its context ended")
	}
}
