package store

import (
	"bytes"
	"database/sql"
	"os"
	"testing"
)

// Version 32 takes the outbox out of clear: a pending mail written before
// it is sealed and still sent with its bodies, a sent one keeps none, and
// neither's link is left in the database file or its -wal file.
func TestOutboxSealedMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 32)
	createRealmAtOldSchema(t, before, testRealm(testRealmID, "acme", 1000))
	for _, m := range []struct {
		id, link string
		sentAt   any
	}{{"pending", "https://idp.test/reset?token=pendingLinkToken0123456789", nil},
		{"sent", "https://idp.test/reset?token=sentLinkToken0123456789", int64(2000)}} {
		if _, err := before.writerDB.Exec(`INSERT INTO email_outbox (id, realm_id, recipient, subject, html_body,
			text_body, attempts, next_attempt_at, last_error, created_at, sent_at)
			VALUES ($1, $2, 'alice@example.test', 'Reset', $3, $4, 0, 1000, '', 1000, $5)`,
			m.id, testRealmID, "<a href=\""+m.link+"\">", m.link, m.sentAt); err != nil {
			t.Fatal(err)
		}
	}
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	due, err := s.DueEmails(testCtx, 1<<62, 10)
	if err != nil || len(due) != 1 || due[0].ID != "pending" ||
		due[0].TextBody != "https://idp.test/reset?token=pendingLinkToken0123456789" {
		t.Fatalf("pending mail after the upgrade: %+v, %v", due, err)
	}
	sent, err := s.GetOutboxEmail(testCtx, "sent")
	if err != nil || sent.HTMLBody != "" || sent.TextBody != "" || sent.Recipient != "alice@example.test" || sent.SentAt != 2000 {
		t.Fatalf("sent mail after the upgrade: %+v, %v", sent, err)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, token := range []string{"pendingLinkToken0123456789", "sentLinkToken0123456789"} {
			if bytes.Contains(data, []byte(token)) {
				t.Errorf("the database file%s still holds the link with %s in clear", suffix, token)
			}
		}
	}
}

// Another process reading the file through the upgrade (a backup, the
// sqlite3 shell) keeps the old pages in the -wal file for now, but does
// not keep the store from opening with every row sealed.
func TestOutboxSealedWhileAnotherReads(t *testing.T) {
	before, path := openBeforeVersion(t, 32)
	createRealmAtOldSchema(t, before, testRealm(testRealmID, "acme", 1000))
	if _, err := before.writerDB.Exec(`INSERT INTO email_outbox (id, realm_id, recipient, subject, html_body,
		text_body, attempts, next_attempt_at, last_error, created_at)
		VALUES ('pending', $1, 'alice@example.test', 'Reset', '<a>', 'link', 0, 1000, '', 1000)`, testRealmID); err != nil {
		t.Fatal(err)
	}
	before.Close()

	reader, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(100)")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM email_outbox").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the reader's count %d, %v", n, err)
	}

	s := storeTestOpen(t, path, storeTestKey)
	due, err := s.DueEmails(testCtx, 1<<62, 10)
	if err != nil || len(due) != 1 || due[0].TextBody != "link" {
		t.Fatalf("pending mail after the upgrade beside a reader: %+v, %v", due, err)
	}
}
