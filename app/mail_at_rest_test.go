package app

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/store"
)

// mailTokenPattern finds the single-use token of a mailed link: a reset
// or verification link's token parameter, an invitation link's last step.
var mailTokenPattern = regexp.MustCompile(`(?:token=|/invitations/)([A-Za-z0-9_-]{20,})`)

// mailedToken is the token of the link in the text part of m, as a mail
// client decodes it.
func mailedToken(t *testing.T, m apptest.SMTPMessage) string {
	t.Helper()
	text := m.Text(t)
	tok := mailTokenPattern.FindStringSubmatch(text)
	if tok == nil {
		t.Fatalf("no link with a token in the mail to %v: %s", m.To, text)
	}
	return tok[1]
}

// mustHoldNoToken fails when a file holds any of tokens.
func mustHoldNoToken(t *testing.T, what, path string, tokens map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	for kind, token := range tokens {
		if bytes.Contains(data, []byte(token)) {
			t.Errorf("%s holds the %s link's token in clear", what, kind)
		}
	}
}

// No live link at rest: the links a password reset, a verification and
// an invitation mail, read from the mails a real SMTP server received,
// are in neither the database file nor its -wal file, nor in a backup
// made without the master key, whether the mail waits in the outbox or
// was sent.
func TestMailedLinksNotAtRest(t *testing.T) {
	smtp := apptest.StartSMTPServer(t, &apptest.SMTPServer{}, nil, false, false)
	e := recoveryEnv(t, func(r *store.Realm) { r.SMTPHost, r.SMTPPort = smtp.Host, smtp.Port })
	ctx := context.Background()
	const alice = "alice@example.test"

	// The reset, asked on the hosted pages as a browser does.
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s1"))
	forgot := b.get(recoveryHref(t, login, "Forgot password?"))
	recoveryMustContain(t, b.submit(forgot, map[string]string{"login": alice}), http.StatusOK, "If an account matches")
	// The verification and the invitation, through the admin API.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/send-verification-email", nil), http.StatusOK)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations",
		map[string]any{"slug": "acme-corp", "name": "Acme Corp"}), http.StatusCreated)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/organizations/acme-corp/invitations",
		map[string]any{"email": "bob@example.test", "role": "member"}), http.StatusCreated)

	// Pending: the outbox holds the links, sealed.
	pending := map[string]string{}
	for _, m := range recoveryOutbox(e) {
		tok := mailTokenPattern.FindStringSubmatch(m.TextBody)
		if tok == nil {
			t.Fatalf("queued %s mail without a link: %q", m.Template, m.TextBody)
		}
		pending[m.Template] = tok[1]
	}
	if len(pending) != 3 {
		t.Fatalf("queued mails %v, want a reset, a verification and an invitation", pending)
	}
	mustHoldNoToken(t, "the database file, mail pending,", e.dbPath, pending)
	mustHoldNoToken(t, "the -wal file, mail pending,", e.dbPath+"-wal", pending)

	if n := e.app.mail.DeliverDue(ctx); n != 3 {
		t.Fatalf("sent %d mails, want 3", n)
	}
	smtp.WaitFor(t, "bob@example.test")
	received := map[string]bool{}
	for _, m := range smtp.Received() {
		received[mailedToken(t, m)] = true
	}
	for kind, token := range pending {
		if !received[token] {
			t.Fatalf("the %s link was not among the mails received", kind)
		}
	}
	mustHoldNoToken(t, "the database file", e.dbPath, pending)
	mustHoldNoToken(t, "the -wal file", e.dbPath+"-wal", pending)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := e.store.Backup(ctx, backup, nil); err != nil { // what backup --without-key writes
		t.Fatal(err)
	}
	mustHoldNoToken(t, "a backup without the key", backup, pending)

	// What stays of a sent mail: who, which kind, when.
	for _, m := range recoveryOutboxAll(t, e) {
		if m.SentAt == 0 || m.HTMLBody != "" || m.TextBody != "" || m.Template == "" || m.Recipient == "" {
			t.Errorf("sent mail kept as %+v, want its recipient, template and time without bodies", m)
		}
	}
}

// recoveryOutboxAll is every outbox row of acme, whatever its state.
func recoveryOutboxAll(t *testing.T, e *codeflowEnv) []*store.OutboxEmail {
	t.Helper()
	realm, err := e.store.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var out []*store.OutboxEmail
	for _, to := range []string{"alice@example.test", "bob@example.test"} {
		mails, err := e.store.EmailsTo(context.Background(), realm.ID, to)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mails {
			full, err := e.store.GetOutboxEmail(context.Background(), m.ID)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, full)
		}
	}
	return out
}

// The hourly upkeep deletes the record of a mail sent more than
// mail.Retention ago, and not before.
func TestOutboxRecordsExpire(t *testing.T) {
	s, clock, p, alice := outboxTestServer(t)
	ctx := context.Background()
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/users/"+alice+"/send-verification-email", nil), http.StatusOK)
	e := outboxOnly(t, s)
	if n := s.app.mail.DeliverDue(ctx); n != 1 || p.count() != 1 {
		t.Fatalf("sent %d with %d requests", n, p.count())
	}
	clock.advance(mail.Retention)
	s.app.expireSessions(ctx)
	if _, err := s.store.GetOutboxEmail(ctx, e.ID); err != nil {
		t.Fatalf("the record was deleted at the retention's end, not after: %v", err)
	}
	clock.advance(time.Millisecond)
	s.app.expireSessions(ctx)
	if _, err := s.store.GetOutboxEmail(ctx, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the record outlived its retention: %v", err)
	}
}
