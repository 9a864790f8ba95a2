package scim_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

// clock is a settable time for the server under test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// server is the whole server with a settable clock and a realm "acme".
type server struct {
	*apptest.Server
	clock *clock
}

func newServer(t testing.TB) *server {
	t.Helper()
	c := &clock{now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	s := &server{Server: realapp.New(t, func(cfg *app.Config) { cfg.Now = c.Now }), clock: c}
	s.CreateRealm("acme")
	return s
}

// createToken makes a SCIM token of realm over the admin API and returns
// its representation, credential included.
func (s *server) createToken(realm, name string) map[string]any {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms/"+realm+"/scim/tokens", map[string]any{"name": name})
	apptest.MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)
}

// scim sends a SCIM request with the credential (none when empty).
func (s *server) scim(method, path, credential string, body any, headers ...string) *apptest.Response {
	s.T.Helper()
	if credential != "" {
		headers = append(headers, "Authorization: Bearer "+credential)
	}
	if body != nil {
		headers = append(headers, "Content-Type: application/scim+json")
	}
	return s.Request(method, path, body, headers...)
}

// mustSCIMError checks a SCIM error answer (RFC 7644 §3.12): status,
// scimType ("" for none), the media type and the schema.
func mustSCIMError(t testing.TB, r *apptest.Response, status int, scimType string) {
	t.Helper()
	apptest.MustStatus(t, r, status)
	var body map[string]any
	r.Decode(t, &body)
	schemas, _ := body["schemas"].([]any)
	if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
		t.Fatalf("error schemas %v: %s", body["schemas"], r.Body)
	}
	if body["status"] != strconv.Itoa(status) {
		t.Fatalf("error status %v, want the string %q: %s", body["status"], strconv.Itoa(status), r.Body)
	}
	if got, _ := body["scimType"].(string); got != scimType {
		t.Fatalf("scimType %q, want %q: %s", got, scimType, r.Body)
	}
	if d, _ := body["detail"].(string); d == "" {
		t.Fatalf("no detail: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/scim+json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// equalJSON compares two values as JSON documents.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
