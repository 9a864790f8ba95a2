package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// eventsTestLog keeps the info-and-above records an App logs, and signals
// each on a channel so a test can wait for one without sleeping.
type eventsTestLog struct {
	mu      sync.Mutex
	records []slog.Record
	signal  chan slog.Record
}

func newEventsTestLog() *eventsTestLog { return &eventsTestLog{signal: make(chan slog.Record, 100)} }

func (h *eventsTestLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *eventsTestLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *eventsTestLog) WithGroup(string) slog.Handler                { return h }

func (h *eventsTestLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	select {
	case h.signal <- r.Clone():
	default:
	}
	return nil
}

// find returns the first record at level with message msg.
func (h *eventsTestLog) find(level slog.Level, msg string) (slog.Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Level == level && r.Message == msg {
			return r, true
		}
	}
	return slog.Record{}, false
}

// eventsTestRealm creates a realm with admin events on (or off) over the API.
func eventsTestRealm(s *testServer, name string, adminEvents bool) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": name, "adminEventsEnabled": adminEvents})
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}

// eventsTestAdminEvents lists a realm's admin events, with an optional query.
func eventsTestAdminEvents(s *testServer, realm, query string) []adminEventRep {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/admin-events"+query, nil)
	mustStatus(s.t, r, http.StatusOK)
	var out []adminEventRep
	r.decode(s.t, &out)
	return out
}

// eventsTestRep decodes an event's representation.
func eventsTestRep(t *testing.T, e adminEventRep) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Representation, &m); err != nil {
		t.Fatalf("representation %s: %v", e.Representation, err)
	}
	return m
}

func TestAdminEventResourceType(t *testing.T) {
	for _, c := range []struct{ template, want string }{
		{"/admin/realms", "REALM"},
		{"/admin/realms/import", "REALM"},
		{"/admin/realms/{realm}", "REALM"},
		{"/admin/realms/{realm}/events", "REALM"},
		{"/admin/realms/{realm}/users", "USER"},
		{"/admin/realms/{realm}/users/{userId}", "USER"},
		{"/admin/realms/{realm}/users/{userId}/reset-password", "USER"},
		{"/admin/realms/{realm}/users/{userId}/send-verification-email", "USER"},
		{"/admin/realms/{realm}/users/{userId}/role-mappings", "REALM_ROLE_MAPPING"},
		{"/admin/realms/{realm}/users/{userId}/role-mappings/realm", "REALM_ROLE_MAPPING"},
		{"/admin/realms/{realm}/users/{userId}/role-mappings/clients/{clientId}", "CLIENT_ROLE_MAPPING"},
		{"/admin/realms/{realm}/users/{userId}/groups/{groupId}", "GROUP_MEMBERSHIP"},
		{"/admin/realms/{realm}/clients", "CLIENT"},
		{"/admin/realms/{realm}/clients/{clientId}", "CLIENT"},
		{"/admin/realms/{realm}/clients/{clientId}/regenerate-secret", "CLIENT"},
		{"/admin/realms/{realm}/clients/{clientId}/roles", "CLIENT_ROLE"},
		{"/admin/realms/{realm}/clients/{clientId}/roles/{roleName}", "CLIENT_ROLE"},
		{"/admin/realms/{realm}/clients/{clientId}/roles/{roleName}/composites", "CLIENT_ROLE"},
		{"/admin/realms/{realm}/clients/{clientId}/default-client-scopes", "CLIENT_SCOPE_CLIENT_MAPPING"},
		{"/admin/realms/{realm}/clients/{clientId}/default-client-scopes/{scopeId}", "CLIENT_SCOPE_CLIENT_MAPPING"},
		{"/admin/realms/{realm}/clients/{clientId}/optional-client-scopes", "CLIENT_SCOPE_CLIENT_MAPPING"},
		{"/admin/realms/{realm}/clients/{clientId}/optional-client-scopes/{scopeId}", "CLIENT_SCOPE_CLIENT_MAPPING"},
		{"/admin/realms/{realm}/roles", "REALM_ROLE"},
		{"/admin/realms/{realm}/roles/{roleName}", "REALM_ROLE"},
		{"/admin/realms/{realm}/roles/{roleName}/composites", "REALM_ROLE"},
		{"/admin/realms/{realm}/groups", "GROUP"},
		{"/admin/realms/{realm}/groups/{groupId}", "GROUP"},
		{"/admin/realms/{realm}/groups/{groupId}/children", "GROUP"},
		{"/admin/realms/{realm}/groups/{groupId}/role-mappings", "REALM_ROLE_MAPPING"},
		{"/admin/realms/{realm}/groups/{groupId}/role-mappings/realm", "REALM_ROLE_MAPPING"},
		{"/admin/realms/{realm}/groups/{groupId}/role-mappings/clients/{clientId}", "CLIENT_ROLE_MAPPING"},
		{"/admin/realms/{realm}/client-scopes", "CLIENT_SCOPE"},
		{"/admin/realms/{realm}/client-scopes/{scopeId}", "CLIENT_SCOPE"},
		{"/admin/realms/{realm}/client-scopes/{scopeId}/protocol-mappers", "PROTOCOL_MAPPER"},
		{"/admin/realms/{realm}/client-scopes/{scopeId}/protocol-mappers/{mapperId}", "PROTOCOL_MAPPER"},
		// Routes without a rule are named for their collection.
		{"/admin/realms/{realm}/organizations/{slug}/members/{userId}", "ORGANIZATION"},
		{"/admin/realms/{realm}/risk-policies/{id}/toggle", "RISK_POLICY"},
		{"/admin/realms/{realm}/policies", "AUTHORIZATION_POLICY"},
		{"/admin/realms/{realm}/policies/{id}", "AUTHORIZATION_POLICY"},
		{"/admin/realms/{realm}/policy-settings", "AUTHORIZATION_POLICY"},
		{"/admin/realms/{realm}/identity-providers", "IDENTITY_PROVIDER"},
		{"/admin/realms/{realm}/nhi/{id}/suspend", "NHI"},
		{"/admin/realms/{realm}/themes/{themeId}/restore/{version}", "THEME"},
	} {
		if got := adminResourceType(c.template); got != c.want {
			t.Errorf("adminResourceType(%s) = %s, want %s", c.template, got, c.want)
		}
	}
}

func TestAdminEventOperation(t *testing.T) {
	for _, c := range []struct{ method, template, want string }{
		{http.MethodPost, "/admin/realms", "CREATE"},
		{http.MethodPost, "/admin/realms/import", "CREATE"},
		{http.MethodPost, "/admin/realms/{realm}/users", "CREATE"},
		{http.MethodPost, "/admin/realms/{realm}/users/{userId}/role-mappings/realm", "CREATE"},
		{http.MethodPut, "/admin/realms/{realm}/users/{userId}", "UPDATE"},
		{http.MethodPatch, "/admin/realms/{realm}", "UPDATE"},
		{http.MethodPut, "/admin/realms/{realm}/users/{userId}/groups/{groupId}", "UPDATE"},
		{http.MethodDelete, "/admin/realms/{realm}/users/{userId}", "DELETE"},
		{http.MethodDelete, "/admin/realms/{realm}/events", "DELETE"},
		{http.MethodPost, "/admin/realms/{realm}/clients/{clientId}/regenerate-secret", "ACTION"},
		{http.MethodPut, "/admin/realms/{realm}/users/{userId}/reset-password", "ACTION"},
		{http.MethodPut, "/admin/realms/{realm}/users/{userId}/send-verification-email", "ACTION"},
		{http.MethodPost, "/admin/realms/{realm}/nhi/{id}/suspend", "ACTION"},
		{http.MethodPatch, "/admin/realms/{realm}/risk-policies/{id}/toggle", "ACTION"},
		{http.MethodPost, "/admin/realms/{realm}/themes/{themeId}/publish", "ACTION"},
		{http.MethodPost, "/admin/realms/{realm}/themes/{themeId}/restore/{version}", "ACTION"},
		{http.MethodPost, "/admin/realms/{realm}/themes/assets/upload", "CREATE"},
	} {
		if got := adminOperation(c.method, c.template); got != c.want {
			t.Errorf("adminOperation(%s %s) = %s, want %s", c.method, c.template, got, c.want)
		}
	}
}

func TestAdminEventRedaction(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"top-level secrets", `{"password":"p","secret":"s","smtpPassword":"x","clientSecret":"c","name":"n"}`,
			`{"clientSecret":"**********","name":"n","password":"**********","secret":"**********","smtpPassword":"**********"}`},
		{"names containing key, token", `{"apiKey":"k","refreshToken":"t","keyId":"i","monkeyName":"m"}`,
			`{"apiKey":"**********","keyId":"**********","monkeyName":"**********","refreshToken":"**********"}`},
		{"nested objects and arrays", `{"a":{"b":[{"password":"p","ok":"v"}]},"list":[{"x":{"Secret":"s"}}]}`,
			`{"a":{"b":[{"ok":"v","password":"**********"}]},"list":[{"x":{"Secret":"**********"}}]}`},
		{"everything under a secret key", `{"secrets":{"a":"1","b":["2",{"c":"3"}]}}`,
			`{"secrets":{"a":"**********","b":["**********",{"c":"**********"}]}}`},
		{"settings with secret-sounding names stay", `{"accessTokenLifespan":300,"passwordMinLength":8,"requirePasswordReset":true,"tokenTtl":1.50}`,
			`{"accessTokenLifespan":300,"passwordMinLength":8,"requirePasswordReset":true,"tokenTtl":1.50}`},
		{"empty and null secrets stay", `{"password":"","secret":null}`, `{"password":"","secret":null}`},
		{"array body", `[{"name":"admin","clientSecret":"s"}]`, `[{"clientSecret":"**********","name":"admin"}]`},
		{"markup is not escaped", `{"description":"<b>&</b>"}`, `{"description":"<b>&</b>"}`},
		{"not JSON", `password=p`, ``},
		{"empty", ``, ``},
	} {
		if got := redactedJSON([]byte(c.in)); got != c.want {
			t.Errorf("%s: redactedJSON(%s)\n got %s\nwant %s", c.name, c.in, got, c.want)
		}
	}
}

func TestAdminEventsRecordWrites(t *testing.T) {
	s := newTestServer(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "adminEventsEnabled": true, "smtpPassword": "smtp-secret",
		"emailProvider": "sendgrid", "emailProviderConfig": map[string]any{"apiKey": "sg-key", "region": "eu"},
	}), http.StatusCreated)
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}

	// Reads and failed writes record nothing.
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme", nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/users", `{"username":`), http.StatusBadRequest, "invalid_json", "")
	mustError(t, s.admin(http.MethodPut, "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000",
		map[string]any{"firstName": "x"}), http.StatusNotFound, "not_found", "")

	created := s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice", "email": "alice@acme.test"})
	mustStatus(t, created, http.StatusCreated)
	userID := created.object(t)["id"].(string)
	if loc := created.Header.Get("Location"); !strings.HasSuffix(loc, "/admin/realms/acme/users/"+userID) {
		t.Fatalf("Location %q lost through the event recorder", loc)
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"}),
		http.StatusConflict, "conflict", "username")
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/users/"+userID, map[string]any{"firstName": "Alice"}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/users/"+userID+"/reset-password",
		map[string]any{"password": "hunter2hunter2", "temporary": true}), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "Acme <Inc>"}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+userID, nil), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/events", nil), http.StatusNoContent)

	events := eventsTestAdminEvents(s, "acme", "")
	type summary struct{ op, resource, path string }
	var got []summary
	for _, e := range events {
		got = append(got, summary{e.OperationType, e.ResourceType, e.ResourcePath})
		if e.RealmID != realm.ID || e.AuthDetails != (authDetailsRep{Type: "api-key", Username: "bootstrap", IPAddress: "192.0.2.1"}) || e.ID == "" || e.Time == 0 {
			t.Fatalf("event %+v: wrong realm, auth details, id or time", e)
		}
	}
	want := []summary{
		{"DELETE", "REALM", "events"},
		{"DELETE", "USER", "users/" + userID},
		{"UPDATE", "REALM", ""},
		{"ACTION", "USER", "users/" + userID + "/reset-password"},
		{"UPDATE", "USER", "users/" + userID},
		{"CREATE", "USER", "users/" + userID},
		{"CREATE", "REALM", ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Time > events[i-1].Time {
			t.Fatalf("events not newest first: %d then %d", events[i-1].Time, events[i].Time)
		}
	}

	// Representations: creates and updates show the response, others the
	// request; secrets never show.
	realmRep := eventsTestRep(t, events[6])
	if realmRep["name"] != "acme" || realmRep["smtpPassword"] != redacted || realmRep["accessTokenLifespan"] != 300.0 {
		t.Fatalf("realm create representation %v", realmRep)
	}
	if cfg := realmRep["emailProviderConfig"].(map[string]any); cfg["apiKey"] != redacted || cfg["region"] != "eu" {
		t.Fatalf("realm create provider config %v", cfg)
	}
	if rep := eventsTestRep(t, events[5]); rep["id"] != userID || rep["username"] != "alice" || rep["email"] != "alice@acme.test" {
		t.Fatalf("user create representation %v", rep)
	}
	if rep := eventsTestRep(t, events[4]); rep["firstName"] != "Alice" || rep["username"] != "alice" {
		t.Fatalf("user update representation %v", rep)
	}
	if rep := eventsTestRep(t, events[3]); len(rep) != 2 || rep["password"] != redacted || rep["temporary"] != true {
		t.Fatalf("reset-password representation %v", rep)
	}
	if rep := eventsTestRep(t, events[2]); rep["displayName"] != "Acme <Inc>" {
		t.Fatalf("realm update representation %v", rep)
	}
	for _, i := range []int{0, 1} {
		if string(events[i].Representation) != "null" {
			t.Fatalf("delete without a body: representation %s, want null", events[i].Representation)
		}
	}
	for _, e := range events {
		for _, secret := range []string{"smtp-secret", "sg-key", "hunter2hunter2"} {
			if strings.Contains(string(e.Representation), secret) {
				t.Fatalf("event %s %s shows a secret: %s", e.OperationType, e.ResourcePath, e.Representation)
			}
		}
	}
}

func TestAdminEventsOnlyWhenEnabled(t *testing.T) {
	s := newTestServer(t)
	eventsTestRealm(s, "quiet", false)
	eventsTestRealm(s, "loud", true)
	s.createUser("quiet", map[string]any{"username": "alice"})
	s.createUser("loud", map[string]any{"username": "bob"})
	if got := eventsTestAdminEvents(s, "quiet", ""); len(got) != 0 {
		t.Fatalf("realm with admin events off recorded %d events", len(got))
	}
	got := eventsTestAdminEvents(s, "loud", "")
	if len(got) != 2 || got[0].ResourceType != "USER" || got[1].ResourceType != "REALM" {
		t.Fatalf("loud realm events %+v, want a user then a realm create", got)
	}
	// Deleting a realm records nothing, and fails nothing. Every event is
	// of a realm, so the two realms' are all the events there can be.
	quietID, loudID := mustRealmID(t, s, "quiet"), mustRealmID(t, s, "loud")
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/loud", nil), http.StatusOK)
	for _, id := range []string{quietID, loudID} {
		if events, err := s.store.ListAdminEvents(context.Background(), id, store.AdminEventFilter{}); err != nil || len(events) != 0 {
			t.Fatalf("%d admin events left after the realm delete (%v)", len(events), err)
		}
	}
}

func TestAdminEventsImport(t *testing.T) {
	s := newTestServer(t)
	body := map[string]any{"formatVersion": 1, "name": "imported", "adminEventsEnabled": true,
		"users": []any{map[string]any{"username": "alice"}}}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import", body), http.StatusCreated)
	events := eventsTestAdminEvents(s, "imported", "")
	if len(events) != 1 || events[0].OperationType != "CREATE" || events[0].ResourceType != "REALM" || events[0].ResourcePath != "" {
		t.Fatalf("import events %+v, want one realm create", events)
	}
	if rep := eventsTestRep(t, events[0]); rep["name"] != "imported" || rep["adminEventsEnabled"] != true {
		t.Fatalf("import representation %v", rep)
	}
	// Overwriting replaces the realm, and its events go with the old one.
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", body), http.StatusCreated)
	if events := eventsTestAdminEvents(s, "imported", ""); len(events) != 1 {
		t.Fatalf("after overwrite: %d events, want the one import", len(events))
	}
	// A failed import records nothing anywhere.
	mustError(t, s.admin(http.MethodPost, "/admin/realms/import", body), http.StatusConflict, "conflict", "")
	if events := eventsTestAdminEvents(s, "imported", ""); len(events) != 1 {
		t.Fatalf("after a failed import: %d events", len(events))
	}
}

func TestAdminEventsAdminUser(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.AdminUser, c.AdminPassword = "root", "correct horse battery" })
	login := s.request(http.MethodPost, "/admin/auth/login", map[string]any{"username": "root", "password": "correct horse battery"})
	mustStatus(t, login, http.StatusOK)
	lo := login.object(t)
	token, user := lo["accessToken"].(string), lo["user"].(map[string]any)
	r := s.request(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true},
		"Authorization: Bearer "+token)
	mustStatus(t, r, http.StatusCreated)
	events := eventsTestAdminEvents(s, "acme", "")
	want := authDetailsRep{Type: "user", UserID: user["id"].(string), Username: "root", IPAddress: "192.0.2.1"}
	if len(events) != 1 || events[0].AuthDetails != want {
		t.Fatalf("events %+v, want one by %+v", events, want)
	}
	// authUserId filters on it.
	if got := eventsTestAdminEvents(s, "acme", "?authUserId="+want.UserID); len(got) != 1 {
		t.Fatalf("authUserId filter: %d events", len(got))
	}
	if got := eventsTestAdminEvents(s, "acme", "?authUserId=00000000-0000-4000-8000-000000000000"); len(got) != 0 {
		t.Fatalf("authUserId of nobody: %d events", len(got))
	}
}

func TestAdminEventsWriteFailureStillAnswers(t *testing.T) {
	logs := newEventsTestLog()
	s := newTestServer(t, func(c *Config) { c.Logger = slog.New(logs) })
	eventsTestRealm(s, "acme", true)
	writer, _ := s.store.DBs()
	if _, err := writer.Exec("DROP TABLE admin_events"); err != nil {
		t.Fatal(err)
	}
	r := s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"})
	mustStatus(t, r, http.StatusCreated)
	if r.object(t)["username"] != "alice" {
		t.Fatalf("response body %s", r.Body)
	}
	if _, err := s.store.GetUserByUsername(context.Background(), mustRealmID(t, s, "acme"), "alice"); err != nil {
		t.Fatalf("the user was not created: %v", err)
	}
	if _, ok := logs.find(slog.LevelError, "admin event not recorded"); !ok {
		t.Fatal("the failed event write was not logged at error level")
	}
}

// eventsTestSeedAdmin inserts admin events straight through the store.
func eventsTestSeedAdmin(t *testing.T, s *testServer, events ...*store.AdminEvent) {
	t.Helper()
	err := s.store.Tx(context.Background(), func(tx *store.Store) error {
		for _, e := range events {
			if err := tx.AddAdminEvent(context.Background(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
