package registration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

// acme is a server whose realm acme allows registration and can send mail.
func acme(t *testing.T) *apptest.Server {
	t.Helper()
	s := realapp.New(t)
	s.CreateRealm("acme")
	apptest.MustStatus(t, s.Admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true,
		"displayName": "Acme Corp", "smtpFrom": "noreply@acme.test"}), http.StatusOK)
	return s
}

// post sends body as JSON from its own address, so that no test meets the
// per-address limits by accident.
func post(s *apptest.Server, path string, body any, ip string) *apptest.Response {
	s.T.Helper()
	j, err := json.Marshal(body)
	if err != nil {
		s.T.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(j))
	req.RemoteAddr = ip + ":1234"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler.ServeHTTP(rec, req)
	return &apptest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

func register(s *apptest.Server, username string, attrs map[string]string, ip string) *apptest.Response {
	return post(s, "/realms/acme/registration/register", map[string]any{"username": username, "email": username + "@example.test",
		"password": "registration pass 1", "firstName": "First", "lastName": "Last", "attributes": attrs}, ip)
}

// The answers holding a user hold it as the admin API shows it: the
// register answer's user, and a pending user, which adds its status and
// its registration fields' values.
func TestAnswersHoldTheAdminUser(t *testing.T) {
	s := acme(t)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/realms/acme/registration/admin/fields",
		map[string]any{"key": "team", "label": "Team", "type": "text"}), http.StatusCreated)
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{"moderation": true}), http.StatusOK)

	r := register(s, "ann", map[string]string{"team": "blue"}, "10.0.0.1")
	apptest.MustStatus(t, r, http.StatusCreated)
	var got struct {
		User   map[string]any `json:"user"`
		Status string         `json:"status"`
	}
	r.Decode(t, &got)
	id, _ := got.User["id"].(string)
	admin := s.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil)
	apptest.MustStatus(t, admin, http.StatusOK)
	want := admin.Object(t)
	if !sameJSON(got.User, want) {
		t.Errorf("register answered the user %v, the admin API %v", got.User, want)
	}
	if got.Status != store.UserPending {
		t.Errorf("status %q, want pending", got.Status)
	}

	list := s.Admin(http.MethodGet, "/realms/acme/registration/pending", nil)
	apptest.MustStatus(t, list, http.StatusOK)
	var pending []map[string]any
	list.Decode(t, &pending)
	if len(pending) != 1 {
		t.Fatalf("pending %s", list.Body)
	}
	wantPending := map[string]any{"status": "pending", "attributes": map[string]any{"team": "blue"}}
	for k, v := range want {
		if k != "attributes" {
			wantPending[k] = v
		}
	}
	if !sameJSON(pending[0], wantPending) {
		t.Errorf("pending user %v, want %v", pending[0], wantPending)
	}
	approved := s.Admin(http.MethodPost, "/realms/acme/registration/approve/"+id, nil)
	apptest.MustStatus(t, approved, http.StatusOK)
	if st := approved.Object(t)["status"]; st != "active" {
		t.Errorf("approved user's status %v", st)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, "/realms/acme/registration/reject/"+id, nil), http.StatusNotFound, "not_found", "")
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

var linkToken = regexp.MustCompile(`/realms/acme/verify-email\?token=([A-Za-z0-9_-]+)`)

// verifyMails are the verification mails in the outbox, oldest first.
func verifyMails(t *testing.T, s *apptest.Server) []*store.OutboxEmail {
	t.Helper()
	var due []*store.OutboxEmail
	err := s.Store.ReadTx(context.Background(), func(tx *store.Store) error {
		var err error
		due, err = tx.DueEmails(context.Background(), 1<<62, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(due, func(m *store.OutboxEmail) bool { return m.Template != "verify-email" })
}

// The verification mail is in the language the new user chose in the
// form, else the one the registration asked in; a resend is in the
// stored user's language; a link verifies the address once.
func TestVerificationMailsAndLinks(t *testing.T) {
	s := acme(t)
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/realms/acme/registration/admin/fields",
		map[string]any{"key": "locale", "label": "Language", "type": "select", "options": []string{"de", "fr"}}), http.StatusCreated)

	apptest.MustStatus(t, register(s, "ann", map[string]string{"locale": "de"}, "10.0.0.1"), http.StatusCreated)
	req := httptest.NewRequest(http.MethodPost, "/realms/acme/registration/register", strings.NewReader(
		`{"username":"ben","email":"ben@example.test","password":"registration pass 1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", "fr")
	req.RemoteAddr = "10.0.0.2:1234"
	rec := httptest.NewRecorder()
	s.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("register ben: %d %s", rec.Code, rec.Body)
	}
	subjects := func() map[string][]string {
		by := map[string][]string{}
		for _, m := range verifyMails(t, s) {
			by[m.Recipient] = append(by[m.Recipient], m.Subject)
		}
		return by
	}
	de, fr := "Bestätigen Sie Ihre E-Mail-Adresse für Acme Corp", "Vérifiez votre adresse e-mail pour Acme Corp"
	if got, want := subjects(), map[string][]string{"ann@example.test": {de}, "ben@example.test": {fr}}; !sameJSON(got, want) {
		t.Fatalf("verification mails %q, want %q", got, want)
	}

	// A resend asked in no language writes to ann in hers.
	apptest.MustStatus(t, post(s, "/realms/acme/registration/resend-verification", map[string]any{"email": "ann@example.test"}, "10.0.0.3"),
		http.StatusAccepted)
	if got := subjects()["ann@example.test"]; !sameJSON(got, []string{de, de}) {
		t.Fatalf("ann's mails after the resend %q", got)
	}

	var last *store.OutboxEmail
	for _, m := range verifyMails(t, s) {
		if m.Recipient == "ann@example.test" && (last == nil || m.CreatedAt >= last.CreatedAt) {
			last = m
		}
	}
	m := linkToken.FindStringSubmatch(last.TextBody)
	if m == nil {
		t.Fatalf("no link in %q", last.TextBody)
	}
	ok := post(s, "/realms/acme/registration/verify-email", map[string]any{"token": m[1]}, "10.0.0.4")
	apptest.MustStatus(t, ok, http.StatusOK)
	if got := string(ok.Body); !strings.Contains(got, `"emailVerified":true`) || !strings.Contains(got, `"email":"ann@example.test"`) {
		t.Errorf("verify-email answered %s", got)
	}
	apptest.MustError(t, post(s, "/realms/acme/registration/verify-email", map[string]any{"token": m[1]}, "10.0.0.4"),
		http.StatusBadRequest, "invalid_token", "")
}
