package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/store"
)

const registrationPassword = "registration pass 1"

// registrationServer is a server whose realm acme allows registration,
// records login events and has a mail sender.
func registrationServer(t *testing.T) *testServer {
	t.Helper()
	s := newTestServer(t)
	s.createRealm("acme")
	registrationEnable(t, s, "acme")
	s.setRealmEmail("acme", func(*store.Realm) {})
	return s
}

func registrationEnable(t *testing.T, s *testServer, realm string) {
	t.Helper()
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/"+realm, map[string]any{"registrationAllowed": true}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/"+realm+"/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
}

// registrationUser is a valid registration body; set overrides its fields.
func registrationUser(username string, set map[string]any) map[string]any {
	b := map[string]any{"username": username, "email": username + "@example.test", "password": registrationPassword,
		"firstName": "First", "lastName": "Last"}
	for k, v := range set {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// registrationPost posts body as JSON from address ip.
func registrationPost(s *testServer, path string, body any, ip string) *testResponse {
	s.t.Helper()
	j, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(j))
	req.RemoteAddr = ip + ":1234"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return &testResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// registrationRegister registers from address ip.
func registrationRegister(s *testServer, realm string, body map[string]any, ip string) *testResponse {
	s.t.Helper()
	return registrationPost(s, "/realms/"+realm+"/registration/register", body, ip)
}

func registrationRealmID(t *testing.T, s *testServer) string {
	t.Helper()
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return realm.ID
}

func registrationOutbox(t *testing.T, s *testServer) []*store.OutboxEmail {
	t.Helper()
	var due []*store.OutboxEmail
	err := s.store.ReadTx(context.Background(), func(tx *store.Store) error {
		var err error
		due, err = tx.DueEmails(context.Background(), 1<<62, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return due
}

var registrationLinkToken = regexp.MustCompile(`/realms/acme/verify-email\?token=([A-Za-z0-9_-]+)`)

func registrationMailToken(t *testing.T, m *store.OutboxEmail) string {
	t.Helper()
	match := registrationLinkToken.FindStringSubmatch(m.TextBody)
	if match == nil {
		t.Fatalf("no verification link in %q", m.TextBody)
	}
	return match[1]
}

func registrationStatus(t *testing.T, s *testServer, userID string) string {
	t.Helper()
	st, err := s.store.UserStatus(context.Background(), registrationRealmID(t, s), userID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func registrationEvents(t *testing.T, s *testServer, typ string) []loginEventRep {
	t.Helper()
	var reps []loginEventRep
	res := s.admin(http.MethodGet, "/admin/realms/acme/events?type="+typ, nil)
	mustStatus(t, res, http.StatusOK)
	res.decode(t, &reps)
	return reps
}

func TestRegistrationFieldsAdmin(t *testing.T) {
	s := registrationServer(t)
	base := "/realms/acme/registration/admin/fields"
	res := s.admin(http.MethodPost, base, map[string]any{"key": "phone", "label": "Phone", "type": "tel",
		"required": true, "pattern": `\+[0-9]{6,15}`, "order": 2})
	mustStatus(t, res, http.StatusCreated)
	phone := res.object(t)
	if phone["enabled"] != true || phone["order"] != 2.0 || phone["id"] == "" || len(phone["options"].([]any)) != 0 {
		t.Fatalf("created %v", phone)
	}
	res = s.admin(http.MethodPost, base, map[string]any{"key": "plan", "label": "Plan", "type": "select",
		"options": []string{"free", "pro"}, "order": 1})
	mustStatus(t, res, http.StatusCreated)
	plan := res.object(t)
	mustStatus(t, s.admin(http.MethodPost, base, map[string]any{"key": "secret", "label": "Hidden", "type": "text",
		"enabled": false}), http.StatusCreated)

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"label": "x", "type": "text"}, "key"},
		{map[string]any{"key": "Phone2", "label": "x", "type": "text"}, "key"},
		{map[string]any{"key": "has space", "label": "x", "type": "text"}, "key"},
		{map[string]any{"key": "username", "label": "x", "type": "text"}, "key"},
		{map[string]any{"key": "email", "label": "x", "type": "email"}, "key"},
		{map[string]any{"key": "x1", "type": "text"}, "label"},
		{map[string]any{"key": "x1", "label": "x"}, "type"},
		{map[string]any{"key": "x1", "label": "x", "type": "color"}, "type"},
		{map[string]any{"key": "x1", "label": "x", "type": "text", "pattern": "a(b"}, "pattern"},
		{map[string]any{"key": "x1", "label": "x", "type": "text", "pattern": strings.Repeat("a", 501)}, "pattern"},
		{map[string]any{"key": "x1", "label": "x", "type": "text", "options": []string{"a"}}, "options"},
		{map[string]any{"key": "x1", "label": "x", "type": "select"}, "options"},
		{map[string]any{"key": "x1", "label": "x", "type": "select", "options": []string{"a", "a"}}, "options"},
		{map[string]any{"key": "x1", "label": "x", "type": "text", "required": "yes"}, "required"},
	} {
		mustError(t, s.admin(http.MethodPost, base, tc.body), http.StatusBadRequest, "invalid_field", tc.field)
	}
	mustError(t, s.admin(http.MethodPost, base, map[string]any{"key": "x1", "label": "x", "type": "text", "color": "red"}),
		http.StatusBadRequest, "unknown_field", "color")
	mustError(t, s.admin(http.MethodPost, base, map[string]any{"key": "phone", "label": "x", "type": "text"}),
		http.StatusConflict, "conflict", "key")
	mustError(t, s.admin(http.MethodPost, "/realms/nope/registration/admin/fields", map[string]any{"key": "a", "label": "x", "type": "text"}),
		http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodGet, base, nil), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, s.request(http.MethodPost, "/realms/acme/registration/approve/x", nil), http.StatusUnauthorized, "unauthorized", "")

	var list []registration.RegistrationFieldRep
	res = s.admin(http.MethodGet, base, nil)
	mustStatus(t, res, http.StatusOK)
	res.decode(t, &list)
	if len(list) != 3 || list[0].Key != "secret" || list[1].Key != "plan" || list[2].Key != "phone" {
		t.Fatalf("admin list %+v", list)
	}
	// The public list: enabled fields only, in order.
	var public []registration.RegistrationFormField
	res = s.request(http.MethodGet, "/realms/acme/registration/fields", nil)
	mustStatus(t, res, http.StatusOK)
	res.decode(t, &public)
	if len(public) != 2 || public[0].Key != "plan" || public[1].Key != "phone" || !public[1].Required {
		t.Fatalf("public list %+v", public)
	}

	// PUT replaces; a key taken by another field conflicts.
	res = s.admin(http.MethodPut, base+"/"+plan["id"].(string), map[string]any{"key": "plan", "label": "Your plan",
		"type": "select", "options": []string{"pro"}, "order": 9})
	mustStatus(t, res, http.StatusOK)
	if got := res.object(t); got["label"] != "Your plan" || got["order"] != 9.0 || got["enabled"] != true {
		t.Fatalf("put %v", got)
	}
	mustError(t, s.admin(http.MethodPut, base+"/"+plan["id"].(string), map[string]any{"key": "phone", "label": "x", "type": "text"}),
		http.StatusConflict, "conflict", "key")
	mustError(t, s.admin(http.MethodPut, base+"/nope", map[string]any{"key": "a", "label": "x", "type": "text"}),
		http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPut, base+"/"+plan["id"].(string), map[string]any{"key": "plan", "label": "x",
		"type": "text", "pattern": "["}), http.StatusBadRequest, "invalid_field", "pattern")
	mustStatus(t, s.admin(http.MethodDelete, base+"/"+plan["id"].(string), nil), http.StatusNoContent)
	mustError(t, s.admin(http.MethodDelete, base+"/"+plan["id"].(string), nil), http.StatusNotFound, "not_found", "")

	// Settings.
	res = s.admin(http.MethodGet, "/realms/acme/registration/admin/settings", nil)
	mustStatus(t, res, http.StatusOK)
	if got := res.object(t); got["moderation"] != false {
		t.Fatalf("settings %v", got)
	}
	mustError(t, s.admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{}),
		http.StatusBadRequest, "invalid_field", "moderation")
	mustError(t, s.admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{"moderation": "on"}),
		http.StatusBadRequest, "invalid_field", "moderation")
	mustStatus(t, s.admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{"moderation": true}), http.StatusOK)
	if got := s.admin(http.MethodGet, "/realms/acme/registration/admin/settings", nil).object(t); got["moderation"] != true {
		t.Fatalf("settings after put %v", got)
	}
}

func TestRegistrationRegister(t *testing.T) {
	s := registrationServer(t)
	base := "/realms/acme/registration/admin/fields"
	for _, f := range []map[string]any{
		{"key": "phone", "label": "Phone", "type": "tel", "required": true, "pattern": `\+[0-9]{6,15}`},
		{"key": "plan", "label": "Plan", "type": "select", "options": []string{"free", "pro"}},
		{"key": "age", "label": "Age", "type": "number"},
		{"key": "born", "label": "Born", "type": "date"},
		{"key": "terms", "label": "Terms", "type": "checkbox", "required": true},
		{"key": "work", "label": "Work email", "type": "email"},
		{"key": "off", "label": "Off", "type": "text", "enabled": false},
	} {
		mustStatus(t, s.admin(http.MethodPost, base, f), http.StatusCreated)
	}
	good := map[string]string{"phone": "+3312345678", "terms": "true"}
	for i, tc := range []struct {
		body  map[string]any
		code  string
		field string
	}{
		{registrationUser("u", map[string]any{"attributes": good}), "invalid_field", "username"},
		{registrationUser("has space", map[string]any{"attributes": good}), "invalid_field", "username"},
		{registrationUser("bob", map[string]any{"username": nil, "attributes": good}), "invalid_field", "username"},
		{registrationUser("bob", map[string]any{"password": nil, "attributes": good}), "invalid_field", "password"},
		{registrationUser("bob", map[string]any{"password": "short", "attributes": good}), "invalid_field", "password"},
		{registrationUser("bob", map[string]any{"email": "not-an-email", "attributes": good}), "invalid_field", "email"},
		{registrationUser("bob", nil), "invalid_field", "attributes.phone"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+33123"}}), "invalid_field", "attributes.phone"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "false"}}), "invalid_field", "attributes.terms"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "yes"}}), "invalid_field", "attributes.terms"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "plan": "gold"}}), "invalid_field", "attributes.plan"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "age": "ten"}}), "invalid_field", "attributes.age"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "born": "2020-13-01"}}), "invalid_field", "attributes.born"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "work": "nope"}}), "invalid_field", "attributes.work"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "off": "x"}}), "invalid_field", "attributes.off"},
		{registrationUser("bob", map[string]any{"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "nick": "x"}}), "invalid_field", "attributes.nick"},
		{registrationUser("bob", map[string]any{"attributes": good, "enabled": true}), "unknown_field", "enabled"},
		{registrationUser("bob", map[string]any{"attributes": map[string]any{"phone": 5}}), "invalid_field", "attributes"},
	} {
		res := registrationRegister(s, "acme", tc.body, fmt.Sprintf("198.51.100.%d", i))
		mustError(t, res, http.StatusBadRequest, tc.code, tc.field)
	}

	body := registrationUser("Bob", map[string]any{"email": "Bob@Example.test",
		"attributes": map[string]string{"phone": "+3312345678", "terms": "true", "plan": "pro", "age": "42", "born": "1984-02-29"}})
	res := registrationRegister(s, "acme", body, "203.0.113.1")
	mustStatus(t, res, http.StatusCreated)
	var got registration.RegistrationResult[userRep]
	res.decode(t, &got)
	if got.User.Username != "bob" || got.User.Email != "bob@example.test" || got.User.EmailVerified || !got.User.Enabled ||
		got.Status != "active" || got.ApprovalPending || !got.VerificationEmailSent || got.Attributes["plan"] != "pro" {
		t.Fatalf("registered %+v", got)
	}
	if strings.Contains(string(res.Body), "password") || strings.Contains(string(res.Body), registrationPassword) {
		t.Fatalf("secret in %s", res.Body)
	}
	attrs, err := s.store.UserAttributes(context.Background(), got.User.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attrs) != 5 || attrs["phone"] != "+3312345678" || attrs["terms"] != "true" || attrs["born"] != "1984-02-29" {
		t.Fatalf("stored attributes %v", attrs)
	}
	if st := registrationStatus(t, s, got.User.ID); st != store.UserActive {
		t.Fatalf("status %q", st)
	}
	events := registrationEvents(t, s, "REGISTER")
	if len(events) != 1 || events[0].UserID != got.User.ID || events[0].Details["username"] != "bob" ||
		events[0].IPAddress != "203.0.113.1" {
		t.Fatalf("REGISTER events %+v", events)
	}

	// Duplicates are 409, as in Keycloak.
	mustError(t, registrationRegister(s, "acme", registrationUser("BOB", map[string]any{"email": "other@example.test", "attributes": good}), "203.0.113.2"),
		http.StatusConflict, "conflict", "username")
	mustError(t, registrationRegister(s, "acme", registrationUser("bobby", map[string]any{"email": "bob@example.test", "attributes": good}), "203.0.113.2"),
		http.StatusConflict, "conflict", "email")

	// The mail's link carries a token that verifies the address, once.
	mails := registrationOutbox(t, s)
	if len(mails) != 1 || mails[0].Recipient != "bob@example.test" {
		t.Fatalf("outbox %+v", mails)
	}
	token := registrationMailToken(t, mails[0])
	res = s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{"token": token})
	mustStatus(t, res, http.StatusOK)
	if b := res.object(t); b["emailVerified"] != true || b["email"] != "bob@example.test" {
		t.Fatalf("verify body %v", b)
	}
	u, err := s.store.GetUser(context.Background(), registrationRealmID(t, s), got.User.ID)
	if err != nil || !u.EmailVerified {
		t.Fatalf("user after verify %+v %v", u, err)
	}
	if ev := registrationEvents(t, s, "VERIFY_EMAIL"); len(ev) != 1 || ev[0].UserID != u.ID {
		t.Fatalf("VERIFY_EMAIL events %+v", ev)
	}
	mustError(t, s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{"token": token}),
		http.StatusBadRequest, "invalid_token", "")
	mustError(t, s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{"token": "made-up"}),
		http.StatusBadRequest, "invalid_token", "")
	mustError(t, s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{}),
		http.StatusBadRequest, "invalid_field", "token")
	mustError(t, s.request(http.MethodPost, "/realms/nope/registration/verify-email", map[string]any{"token": token}),
		http.StatusNotFound, "not_found", "")

	// Without a mail sender the registration still succeeds, without mail.
	s.setRealmEmail("acme", func(r *store.Realm) { r.SMTPFrom = "" })
	res = registrationRegister(s, "acme", registrationUser("carol", map[string]any{"attributes": good}), "203.0.113.3")
	mustStatus(t, res, http.StatusCreated)
	if b := res.object(t); b["verificationEmailSent"] != false {
		t.Fatalf("no sender: %s", res.Body)
	}
	if n := len(registrationOutbox(t, s)); n != 1 {
		t.Fatalf("outbox has %d mails", n)
	}
	// A user without email gets none either.
	res = registrationRegister(s, "acme", registrationUser("dan", map[string]any{"email": nil, "attributes": good}), "203.0.113.3")
	mustStatus(t, res, http.StatusCreated)
}

func TestRegistrationDisabledAndUnknownRealm(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": false}), http.StatusOK)
	body := registrationUser("bob", nil)
	mustError(t, registrationRegister(s, "acme", body, "203.0.113.9"), http.StatusForbidden, "registration_disabled", "")
	mustError(t, s.request(http.MethodGet, "/realms/acme/registration/fields", nil), http.StatusForbidden, "registration_disabled", "")
	mustError(t, registrationRegister(s, "nope", body, "203.0.113.9"), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodGet, "/realms/nope/registration/fields", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.request(http.MethodPost, "/realms/nope/registration/resend-verification", map[string]any{"email": "a@b.test"}),
		http.StatusNotFound, "not_found", "")
	for _, p := range []string{"/realms/nope/registration/admin/fields", "/realms/nope/registration/admin/settings",
		"/realms/nope/registration/pending"} {
		mustError(t, s.admin(http.MethodGet, p, nil), http.StatusNotFound, "not_found", "")
	}
	if _, total, err := s.store.ListUsers(context.Background(), registrationRealmID(t, s), store.UserFilter{Limit: 10}); err != nil || total != 0 {
		t.Fatalf("users %d %v", total, err)
	}
	// A disabled realm is unknown to the public endpoints.
	registrationEnable(t, s, "acme")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"enabled": false}), http.StatusOK)
	mustError(t, registrationRegister(s, "acme", body, "203.0.113.9"), http.StatusNotFound, "not_found", "")
}

// Moderation: a pending registration cannot sign in until approved; a
// rejected one never can, and fails exactly as a wrong password does.
func TestRegistrationModeration(t *testing.T) {
	e := newCodeflowEnv(t)
	s := e.testServer
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password"}})
	registrationEnable(t, s, "acme")
	mustStatus(t, s.admin(http.MethodPut, "/realms/acme/registration/admin/settings", map[string]any{"moderation": true}), http.StatusOK)
	grant := func(username string) (int, map[string]any) {
		return e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {username}, "password": {registrationPassword}},
			codeflowBasic("cli", secret))
	}
	var ids []string
	for _, name := range []string{"dave", "erin"} {
		res := registrationRegister(s, "acme", registrationUser(name, nil), "203.0.113.20")
		mustStatus(t, res, http.StatusCreated)
		var got registration.RegistrationResult[userRep]
		res.decode(t, &got)
		if got.Status != "pending" || !got.ApprovalPending {
			t.Fatalf("registered %s", res.Body)
		}
		ids = append(ids, got.User.ID)
		status, body := grant(name)
		codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
		if body["error_description"] != "invalid user credentials" {
			t.Fatalf("pending user's refusal %v differs from a wrong password's", body)
		}
	}
	var pending []pendingUserRep
	res := s.admin(http.MethodGet, "/realms/acme/registration/pending", nil)
	mustStatus(t, res, http.StatusOK)
	res.decode(t, &pending)
	if len(pending) != 2 || pending[0].Username != "dave" || pending[0].Status != "pending" {
		t.Fatalf("pending %s", res.Body)
	}

	res = s.admin(http.MethodPost, "/realms/acme/registration/approve/"+ids[0], nil)
	mustStatus(t, res, http.StatusOK)
	if b := res.object(t); b["status"] != "active" || b["username"] != "dave" {
		t.Fatalf("approve %s", res.Body)
	}
	if status, body := grant("dave"); status != http.StatusOK || body["access_token"] == nil {
		t.Fatalf("approved user's grant %d %v", status, body)
	}
	mustError(t, s.admin(http.MethodPost, "/realms/acme/registration/approve/"+ids[0], nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPost, "/realms/acme/registration/reject/"+ids[0], nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPost, "/realms/acme/registration/approve/"+e.aliceID, nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodPost, "/realms/acme/registration/approve/nope", nil), http.StatusNotFound, "not_found", "")

	res = s.admin(http.MethodPost, "/realms/acme/registration/reject/"+ids[1], nil)
	mustStatus(t, res, http.StatusOK)
	if b := res.object(t); b["status"] != "rejected" {
		t.Fatalf("reject %s", res.Body)
	}
	if st := registrationStatus(t, s, ids[1]); st != store.UserRejected {
		t.Fatalf("rejected user's status %q", st)
	}
	status, body := grant("erin")
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	mustError(t, s.admin(http.MethodPost, "/realms/acme/registration/approve/"+ids[1], nil), http.StatusNotFound, "not_found", "")
	res = s.admin(http.MethodGet, "/realms/acme/registration/pending", nil)
	if string(res.Body) != "[]\n" && string(res.Body) != "[]" {
		t.Fatalf("pending after decisions %s", res.Body)
	}
}

func TestRegistrationResend(t *testing.T) {
	s := registrationServer(t)
	res := registrationRegister(s, "acme", registrationUser("bob", nil), "203.0.113.1")
	mustStatus(t, res, http.StatusCreated)
	first := registrationMailToken(t, registrationOutbox(t, s)[0])

	known := registrationPost(s, "/realms/acme/registration/resend-verification", map[string]any{"email": "BOB@example.test"}, "203.0.113.2")
	unknown := registrationPost(s, "/realms/acme/registration/resend-verification", map[string]any{"email": "nobody@example.test"}, "203.0.113.2")
	mustStatus(t, known, http.StatusAccepted)
	mustStatus(t, unknown, http.StatusAccepted)
	if string(known.Body) != string(unknown.Body) {
		t.Fatalf("answers differ: %s / %s", known.Body, unknown.Body)
	}
	mails := registrationOutbox(t, s)
	if len(mails) != 2 || mails[1].Recipient != "bob@example.test" {
		t.Fatalf("outbox %+v", mails)
	}
	// Only the newest link works.
	mustError(t, s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{"token": first}),
		http.StatusBadRequest, "invalid_token", "")
	if ev := registrationEvents(t, s, "SEND_VERIFY_EMAIL"); len(ev) != 1 || ev[0].Details["email"] != "bob@example.test" {
		t.Fatalf("SEND_VERIFY_EMAIL events %+v", ev)
	}
	second := registrationMailToken(t, mails[1])
	mustStatus(t, s.request(http.MethodPost, "/realms/acme/registration/verify-email", map[string]any{"token": second}), http.StatusOK)
	// A verified user gets nothing more, with the same answer.
	res = registrationPost(s, "/realms/acme/registration/resend-verification", map[string]any{"email": "bob@example.test"}, "203.0.113.3")
	mustStatus(t, res, http.StatusAccepted)
	if string(res.Body) != string(unknown.Body) {
		t.Fatalf("answer %s", res.Body)
	}
	if n := len(registrationOutbox(t, s)); n != 2 {
		t.Fatalf("outbox has %d mails", n)
	}
	mustError(t, registrationPost(s, "/realms/acme/registration/resend-verification", map[string]any{}, "203.0.113.4"),
		http.StatusBadRequest, "invalid_field", "email")
	mustError(t, registrationPost(s, "/realms/acme/registration/resend-verification", map[string]any{"email": "nope"}, "203.0.113.4"),
		http.StatusBadRequest, "invalid_field", "email")
}

func TestRegistrationRateLimits(t *testing.T) {
	s := registrationServer(t)
	for i := range registration.RegisterLimitPerIP {
		res := registrationRegister(s, "acme", registrationUser(fmt.Sprintf("user%d", i), map[string]any{"password": "short"}), "203.0.113.50")
		mustError(t, res, http.StatusBadRequest, "invalid_field", "password")
	}
	res := registrationRegister(s, "acme", registrationUser("late", nil), "203.0.113.50")
	mustError(t, res, http.StatusTooManyRequests, "too_many_requests", "")
	if ra := res.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}
	mustStatus(t, registrationRegister(s, "acme", registrationUser("late", nil), "203.0.113.51"), http.StatusCreated)

	// Resend: per email, then per address.
	path := "/realms/acme/registration/resend-verification"
	for i := range registration.ResendLimitPerEmail {
		mustStatus(t, registrationPost(s, path, map[string]any{"email": "late@example.test"}, fmt.Sprintf("203.0.113.%d", 60+i)), http.StatusAccepted)
	}
	res = registrationPost(s, path, map[string]any{"email": "late@example.test"}, "203.0.113.70")
	mustError(t, res, http.StatusTooManyRequests, "too_many_requests", "")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	for i := range registration.ResendLimitPerIP {
		mustStatus(t, registrationPost(s, path, map[string]any{"email": fmt.Sprintf("x%d@example.test", i)}, "203.0.113.80"), http.StatusAccepted)
	}
	mustError(t, registrationPost(s, path, map[string]any{"email": "y@example.test"}, "203.0.113.80"), http.StatusTooManyRequests, "too_many_requests", "")

	// Verify-email: failed attempts per address.
	for range registration.VerifyEmailLimitPerIP {
		mustError(t, registrationPost(s, "/realms/acme/registration/verify-email", map[string]any{"token": "guess"}, "203.0.113.90"),
			http.StatusBadRequest, "invalid_token", "")
	}
	res = registrationPost(s, "/realms/acme/registration/verify-email", map[string]any{"token": "guess"}, "203.0.113.90")
	mustError(t, res, http.StatusTooManyRequests, "too_many_requests", "")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// A right token from another address still works.
	res = registrationRegister(s, "acme", registrationUser("vera", nil), "203.0.113.91")
	mustStatus(t, res, http.StatusCreated)
	mails := registrationOutbox(t, s)
	mustStatus(t, registrationPost(s, "/realms/acme/registration/verify-email",
		map[string]any{"token": registrationMailToken(t, mails[len(mails)-1])}, "203.0.113.92"), http.StatusOK)
}

// The link in the registration mail opens the hosted verify-email page,
// which verifies the address once.
func TestRegistrationMailLinkVerifiesOnPage(t *testing.T) {
	s := registrationServer(t)
	r := registrationRegister(s, "acme", registrationUser("linda", map[string]any{"email": "linda@example.test"}), "192.0.2.50")
	mustStatus(t, r, http.StatusCreated)
	userID := r.object(t)["user"].(map[string]any)["id"].(string)
	mails := registrationOutbox(t, s)
	if len(mails) != 1 {
		t.Fatalf("outbox holds %d mails, want the verification one", len(mails))
	}
	token := registrationMailToken(t, mails[0])

	page := s.request(http.MethodGet, "/realms/acme/verify-email?token="+token, nil)
	mustStatus(t, page, http.StatusOK)
	if u, err := s.store.GetUser(t.Context(), registrationRealmID(t, s), userID); err != nil || !u.EmailVerified {
		t.Fatalf("after the link: %+v, %v", u, err)
	}
	if again := s.request(http.MethodGet, "/realms/acme/verify-email?token="+token, nil); again.Status != http.StatusBadRequest {
		t.Fatalf("second use of the link: %d", again.Status)
	}
}
