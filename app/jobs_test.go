package app

import (
	"context"
	"errors"
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
	realmID := mustRealmID(t, s, s.createRealm("acme")["name"].(string)) // events kept 604800 s by default
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
	// The realm's own creation, at now, is kept: admin events are on in a
	// new realm.
	if got := eventsTestAdminEvents(s, "acme", ""); len(got) != 1 || got[0].ResourceType != "REALM" {
		t.Fatalf("admin events left: %+v, want the realm's creation alone", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunJobs did not return when its context ended")
	}
}

func TestRunJobsExpiresSessions(t *testing.T) {
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := newTestServer(t, func(c *Config) { c.Now = func() time.Time { return clock } })
	realm := s.createRealm("acme")
	user := s.createUser("acme", map[string]any{"username": "alice"})
	ctx := t.Context()
	realmID, userID := realm["id"].(string), user["id"].(string)
	now := clock.UnixMilli()
	for id, expires := range map[string]int64{"00000000-0000-4000-8000-000000000001": now - 1, "00000000-0000-4000-8000-000000000002": now + 60_000} {
		if err := s.store.CreateSession(ctx, &store.Session{ID: id, RealmID: realmID, UserID: userID, Kind: store.SessionSSO,
			StartedAt: now - 120_000, LastAccessAt: now - 120_000, ExpiresAt: expires, AuthTime: now - 120_000}); err != nil {
			t.Fatal(err)
		}
	}
	for jti, expires := range map[string]int64{"old": now - 1, "live": now + 60_000} {
		if err := s.store.RevokeAccessToken(ctx, realmID, jti, expires); err != nil {
			t.Fatal(err)
		}
	}
	client := &store.Client{ID: "00000000-0000-4000-8000-0000000000c1", RealmID: realmID, ClientID: "tv",
		ClientType: "CONFIDENTIAL", Enabled: true, CreatedAt: now}
	if err := s.store.CreateClient(ctx, client); err != nil {
		t.Fatal(err)
	}
	// Device codes stay one lifetime past expiry, then go.
	for code, expires := range map[string]int64{"BBBB-BBBB": now - deviceCodeLifetime.Milliseconds() - 1, "CCCC-CCCC": now - 1} {
		if err := s.store.CreateDeviceAuthorization(ctx, &store.DeviceAuthorization{DeviceCodeHash: store.HashToken(code),
			UserCode: code, RealmID: realmID, ClientID: client.ID, Interval: 5, CreatedAt: expires - 600_000, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
	}
	// Different kinds: a new token of a kind cancels the user's older one.
	for kind, expires := range map[string]int64{"reset-password": now - 1, "verify-email": now + 60_000} {
		if err := s.store.CreateActionToken(ctx, &store.ActionToken{Hash: store.HashToken(kind), RealmID: realmID, UserID: userID,
			Kind: kind, Email: "a@example.com", CreatedAt: now - 120_000, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
	}
	s.app.expireSessions(ctx)
	// alice's are all the tokens there are.
	if tokens, err := s.store.UserActionTokens(ctx, realmID, userID); err != nil || len(tokens) != 1 || tokens[0].Kind != "verify-email" {
		t.Fatalf("action tokens after the purge: %d, %v; want the live one only", len(tokens), err)
	}
	if _, err := s.store.DeviceAuthorizationByUserCode(ctx, realmID, "BBBB-BBBB"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("long-expired device authorization kept: %v", err)
	}
	if _, err := s.store.DeviceAuthorizationByUserCode(ctx, realmID, "CCCC-CCCC"); err != nil {
		t.Fatalf("recently expired device authorization purged: %v", err)
	}
	if _, err := s.store.GetSession(ctx, realmID, "00000000-0000-4000-8000-000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired session kept: %v", err)
	}
	if _, err := s.store.GetSession(ctx, realmID, "00000000-0000-4000-8000-000000000002"); err != nil {
		t.Fatalf("live session deleted: %v", err)
	}
	// A purged revocation belonged to a token already expired; a live one stays.
	if revoked, err := s.store.AccessTokenRevoked(ctx, "live"); err != nil || !revoked {
		t.Fatalf("live revocation purged: %v %v", revoked, err)
	}
	if revoked, err := s.store.AccessTokenRevoked(ctx, "old"); err != nil || revoked {
		t.Fatalf("expired revocation kept: %v %v", revoked, err)
	}
}
