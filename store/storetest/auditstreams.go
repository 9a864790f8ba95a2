package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func auditStreamSuite() []subTest {
	return []subTest{
		{"AuditStreamCRUD", testAuditStreamCRUD},
		{"AuditRecordsCursorAndPurge", testAuditRecords},
	}
}

func testAuditStream(id, realmID string, at int64) *store.AuditStream {
	return &store.AuditStream{ID: id, RealmID: realmID, Type: "http", Events: []string{"user.*"}, Enabled: true,
		Description: "stream " + id, Settings: []byte(`{"url":"https://siem.example.test/` + id + `"}`), Secret: "token-" + id,
		CreatedAt: at, UpdatedAt: at}
}

func addAuditRecords(t *testing.T, s *store.Store, realmID string, n int) {
	t.Helper()
	for i := range n {
		r := &store.AuditRecord{RealmID: realmID, EventID: fmt.Sprintf("evt_%s_%d", realmID, i), EventType: "user.created",
			CreatedAt: int64(100 + i), Payload: []byte(`{"n":` + fmt.Sprint(i) + `}`)}
		if err := s.Tx(testCtx, func(tx *store.Store) error { return tx.AddAuditRecord(testCtx, r) }); err != nil {
			t.Fatal(err)
		}
	}
}

func testAuditStreamCRUD(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	a, b := testAuditStream("a1", sessionsTestRealm, 10), testAuditStream("a2", sessionsTestRealm, 20)
	b.Type, b.Secret, b.Settings = "file", "", []byte(`{"name":"audit.log"}`)
	for _, x := range []*store.AuditStream{a, b, testAuditStream("a3", sessionsTestOther, 5)} {
		if err := s.CreateAuditStream(testCtx, x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetAuditStream(testCtx, sessionsTestRealm, "a1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "audit stream", got, a)
	if _, err := s.GetAuditStream(testCtx, sessionsTestOther, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another realm's stream: %v", err)
	}
	list, err := s.ListAuditStreams(testCtx, sessionsTestRealm)
	if err != nil || len(list) != 2 || list[0].ID != "a1" || list[1].ID != "a2" || list[1].Secret != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if files, _ := s.AuditStreamsOfType(testCtx, "file"); len(files) != 1 || files[0].ID != "a2" {
		t.Fatalf("file streams: %+v", files)
	}
	a.Enabled, a.Secret, a.Events, a.UpdatedAt = false, "rotated", []string{"*"}, 30
	if err := s.UpdateAuditStream(testCtx, a, false); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAuditStream(testCtx, sessionsTestRealm, "a1")
	mustEqual(t, "updated audit stream", got, a)
	if enabled, _ := s.EnabledAuditStreams(testCtx, sessionsTestRealm); len(enabled) != 1 || enabled[0].ID != "a2" {
		t.Fatalf("enabled: %+v", enabled)
	}
	if all, _ := s.AllEnabledAuditStreams(testCtx); len(all) != 2 {
		t.Fatalf("all enabled: %+v", all)
	}
	if err := s.DeleteAuditStream(testCtx, sessionsTestRealm, "a1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuditStream(testCtx, sessionsTestRealm, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.AuditCursor(testCtx, "a1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cursor of a deleted stream: %v", err)
	}
	// A realm's deletion takes its streams and records.
	addAuditRecords(t, s, sessionsTestOther, 2)
	if err := s.DeleteRealm(testCtx, "other"); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.AuditRecordsAfter(testCtx, sessionsTestOther, 0, 10); len(left) != 0 {
		t.Fatalf("records of a deleted realm: %d", len(left))
	}
	if _, err := s.AuditCursor(testCtx, "a3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cursor of a deleted realm's stream: %v", err)
	}
}

// Records are numbered per realm without gaps; a stream starts at its
// realm's last record; records go once every enabled stream passed them.
func testAuditRecords(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	addAuditRecords(t, s, sessionsTestRealm, 3)
	addAuditRecords(t, s, sessionsTestOther, 1)
	if seq, err := s.AuditSequence(testCtx, sessionsTestRealm); err != nil || seq != 3 {
		t.Fatalf("sequence %d %v, want 3", seq, err)
	}
	if seq, _ := s.AuditSequence(testCtx, sessionsTestOther); seq != 1 {
		t.Fatalf("the other realm's sequence %d, want 1", seq)
	}
	a, b := testAuditStream("a1", sessionsTestRealm, 10), testAuditStream("a2", sessionsTestRealm, 20)
	for _, x := range []*store.AuditStream{a, b} {
		if err := s.CreateAuditStream(testCtx, x); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := s.AuditCursor(testCtx, "a1"); err != nil || c.DeliveredSeq != 3 || c.RealmID != sessionsTestRealm {
		t.Fatalf("a new stream's cursor %+v %v, want at 3", c, err)
	}
	addAuditRecords(t, s, sessionsTestRealm, 4)
	recs, err := s.AuditRecordsAfter(testCtx, sessionsTestRealm, 3, 3)
	if err != nil || len(recs) != 3 || recs[0].Seq != 4 || recs[2].Seq != 6 || recs[0].EventType != "user.created" {
		t.Fatalf("records after 3: %+v %v", recs, err)
	}
	if err := s.FailAuditCursor(testCtx, "a1", "connection refused", 500, 600); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceAuditCursor(testCtx, "a2", 7, 510); err != nil {
		t.Fatal(err)
	}
	c, _ := s.AuditCursor(testCtx, "a1")
	if c.DeliveredSeq != 3 || c.Failures != 1 || c.LastError != "connection refused" || c.LastErrorAt != 500 || c.NextAttemptAt != 600 {
		t.Fatalf("failed cursor %+v", c)
	}
	// a1 holds the records back; the other realm has no stream.
	if n, err := s.PurgeAuditRecords(testCtx); err != nil || n != 4 {
		t.Fatalf("purged %d (%v), want the first three and the other realm's", n, err)
	}
	if err := s.AdvanceAuditCursor(testCtx, "a1", 5, 700); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceAuditCursor(testCtx, "a1", 4, 710); err != nil {
		t.Fatal(err)
	}
	cursors, err := s.AuditCursors(testCtx, sessionsTestRealm)
	if err != nil || cursors["a1"].DeliveredSeq != 5 || cursors["a1"].Failures != 0 || cursors["a1"].DeliveredAt != 700 ||
		cursors["a2"].DeliveredSeq != 7 {
		t.Fatalf("cursors %+v %v: a cursor moved back, or kept its failures", cursors, err)
	}
	if n, _ := s.PurgeAuditRecords(testCtx); n != 2 {
		t.Fatalf("purged %d, want 4 and 5", n)
	}
	// Disabled, a1 holds nothing back; enabled again, it starts at the end.
	a.Enabled, a.UpdatedAt = false, 800
	if err := s.UpdateAuditStream(testCtx, a, false); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PurgeAuditRecords(testCtx); n != 2 {
		t.Fatalf("purged %d, want 6 and 7", n)
	}
	addAuditRecords(t, s, sessionsTestRealm, 1)
	a.Enabled = true
	if err := s.UpdateAuditStream(testCtx, a, true); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.AuditCursor(testCtx, "a1"); c.DeliveredSeq != 8 {
		t.Fatalf("restarted cursor at %d, want 8", c.DeliveredSeq)
	}
}
