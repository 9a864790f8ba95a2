package app

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/store"
)

func TestEmailTestEndpointsBadInput(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, path := range []string{"/admin/realms/acme/smtp/test", "/admin/realms/acme/email/test"} {
		mustError(t, s.admin(http.MethodPost, path, map[string]any{}), http.StatusBadRequest, "invalid_field", "to")
		mustError(t, s.admin(http.MethodPost, path, map[string]any{"to": "not an address"}), http.StatusBadRequest, "invalid_field", "to")
		mustError(t, s.admin(http.MethodPost, path, map[string]any{"to": "Bob <bob@example.test>"}), http.StatusBadRequest, "invalid_field", "to")
		mustError(t, s.admin(http.MethodPost, path, map[string]any{"to": "bob@example.test", "cc": "x"}), http.StatusBadRequest, "unknown_field", "cc")
		mustError(t, s.admin(http.MethodPost, path, map[string]any{"to": 5}), http.StatusBadRequest, "invalid_field", "to")
		mustError(t, s.admin(http.MethodPost, path, ""), http.StatusBadRequest, "invalid_json", "")
		mustError(t, s.admin(http.MethodPost, strings.Replace(path, "acme", "nope", 1), map[string]any{"to": "bob@example.test"}),
			http.StatusNotFound, "not_found", "")
		mustError(t, s.request(http.MethodPost, path, map[string]any{"to": "bob@example.test"}), http.StatusUnauthorized, "unauthorized", "")
	}
	// A new realm has no SMTP server.
	res := s.admin(http.MethodPost, "/admin/realms/acme/smtp/test", map[string]any{"to": "bob@example.test"})
	mustError(t, res, http.StatusBadRequest, "invalid_request", "")
	if !strings.Contains(string(res.Body), "smtpHost") {
		t.Fatalf("body %s does not say what to set", res.Body)
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/email/test", map[string]any{"to": "bob@example.test"}),
		http.StatusBadRequest, "invalid_request", "")
	// A provider without its API key is a configuration error, not a delivery failure.
	s.setRealmEmail("acme", func(r *store.Realm) {
		r.EmailProvider, r.EmailProviderConfig = "mailgun", map[string]any{"apiKey": "k"}
	})
	res = s.admin(http.MethodPost, "/admin/realms/acme/email/test", map[string]any{"to": "bob@example.test"})
	mustError(t, res, http.StatusBadRequest, "invalid_request", "")
	if !strings.Contains(string(res.Body), "domain") {
		t.Fatalf("body %s", res.Body)
	}
}

// smtp/test uses the realm's SMTP settings even when its provider is an
// HTTP one, and shows the server's refusal without the password.
func TestSMTPTestEndpoint(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	srv := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "smtp-secret-pw", Mechs: []string{sasl.Plain}},
		nil, false, true)
	s.setRealmEmail("acme", func(r *store.Realm) {
		r.SMTPHost, r.SMTPPort, r.SMTPUser, r.SMTPPassword = srv.Host, srv.Port, "mailer", "smtp-secret-pw"
		r.EmailProvider, r.EmailProviderConfig = "resend", map[string]any{"apiKey": "k", "baseUrl": "http://127.0.0.1:1"}
	})
	res := s.admin(http.MethodPost, "/admin/realms/acme/smtp/test", map[string]any{"to": "bob@example.test"})
	mustStatus(t, res, http.StatusOK)
	if body := res.object(t); body["success"] != true || body["message"] == "" {
		t.Fatalf("body %s", res.Body)
	}
	got := srv.Received()
	if len(got) != 1 || got[0].From != "noreply@acme.test" || got[0].To[0] != "bob@example.test" {
		t.Fatalf("received %+v", got)
	}
	if !strings.Contains(string(got[0].Data), "Subject: Test email from Acme Corp") {
		t.Fatalf("message %s", got[0].Data)
	}

	s.setRealmEmail("acme", func(r *store.Realm) {
		r.SMTPHost, r.SMTPPort, r.SMTPUser, r.SMTPPassword = srv.Host, srv.Port, "mailer", "wrong-secret-pw"
	})
	res = s.admin(http.MethodPost, "/admin/realms/acme/smtp/test", map[string]any{"to": "bob@example.test"})
	mustError(t, res, http.StatusBadGateway, "delivery_failed", "")
	if b := string(res.Body); !strings.Contains(b, "535") || strings.Contains(b, "wrong-secret-pw") {
		t.Fatalf("502 body %s", b)
	}
}

func TestSendVerificationEmailEndpoint(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "firstName": "Alice"})
	nomail := s.createUser("acme", map[string]any{"username": "nomail"})
	path := func(realm, id string) string {
		return "/admin/realms/" + realm + "/users/" + id + "/send-verification-email"
	}

	mustError(t, s.admin(http.MethodPost, path("nope", alice["id"].(string)), nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPost, path("acme", "no-such-user"), nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPost, path("acme", nomail["id"].(string)), nil), http.StatusBadRequest, "invalid_request", "")
	// No sender address yet: said at once rather than failing in the outbox.
	mustError(t, s.admin(http.MethodPost, path("acme", alice["id"].(string)), nil), http.StatusBadRequest, "invalid_request", "")

	s.setRealmEmail("acme", func(r *store.Realm) {})
	res := s.admin(http.MethodPost, path("acme", alice["id"].(string)), nil)
	mustStatus(t, res, http.StatusOK)
	if body := res.object(t); body["message"] != "verification email queued" {
		t.Fatalf("body %s", res.Body)
	}
	due, err := s.store.DueEmails(context.Background(), s.app.now().UnixMilli(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("outbox %v, %v", due, err)
	}
	m := due[0]
	if m.Recipient != "alice@example.test" || m.Subject != "Verify your email address for Acme Corp" {
		t.Fatalf("queued mail %+v", m)
	}
	token := verificationToken(t, m.TextBody)
	if !strings.Contains(m.HTMLBody, "token="+token) || !strings.Contains(m.TextBody, "Hello Alice") {
		t.Fatalf("bodies:\n%s\n%s", m.HTMLBody, m.TextBody)
	}
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.store.ConsumeActionToken(context.Background(), realm.ID, store.HashToken(token), store.ActionVerifyEmail,
		s.app.now().UnixMilli())
	if err != nil || tok.UserID != alice["id"] || tok.Email != "alice@example.test" ||
		tok.ExpiresAt-tok.CreatedAt != mail.VerifyEmailLifetime.Milliseconds() {
		t.Fatalf("token %+v, %v", tok, err)
	}
}

// verificationToken finds the token of the verify-email link in a body.
func verificationToken(t *testing.T, body string) string {
	t.Helper()
	const prefix = "http://localhost:3000/realms/acme/verify-email?token="
	i := strings.Index(body, prefix)
	if i < 0 {
		t.Fatalf("no verification link in %q", body)
	}
	link := strings.Fields(body[i:])[0]
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("link %q: %v", link, err)
	}
	return u.Query().Get("token")
}
