package adminkeys_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const keysPath = "/admin/api-keys"

// clock is the server's clock in a test: it moves when the test says.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time            { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration)   { c.ns.Add(int64(d)) }
func (c *clock) Millis() int64             { return c.Now().UnixMilli() }
func withClock(c *clock) func(*app.Config) { return func(cfg *app.Config) { cfg.Now = c.Now } }

// newServer starts the server on clock c with the realms acme (admin
// events on) and beta.
func newServer(t *testing.T, c *clock) *apptest.Server {
	s := realapp.New(t, withClock(c))
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true})
	apptest.MustStatus(t, r, http.StatusCreated)
	s.CreateRealm("beta")
	return s
}

// keyJSON is a key as the API answers it.
type keyJSON struct {
	ID                       string   `json:"id"`
	Name                     string   `json:"name"`
	Prefix                   string   `json:"prefix"`
	Permissions              []string `json:"permissions"`
	Realm                    string   `json:"realm"`
	State                    string   `json:"state"`
	CreatedAt                int64    `json:"createdAt"`
	CreatedBy                string   `json:"createdBy"`
	ExpiresAt                int64    `json:"expiresAt"`
	LastUsedAt               int64    `json:"lastUsedAt"`
	RevokedAt                int64    `json:"revokedAt"`
	RotatedAt                int64    `json:"rotatedAt"`
	PreviousSecretValidUntil int64    `json:"previousSecretValidUntil"`
	APIKey                   string   `json:"apiKey"`
}

// createKey makes a key from fields with the bootstrap key and returns it.
func createKey(t *testing.T, s *apptest.Server, fields map[string]any) keyJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, keysPath, fields)
	apptest.MustStatus(t, r, http.StatusCreated)
	var k keyJSON
	r.Decode(t, &k)
	if !strings.HasPrefix(k.APIKey, "ipk_"+k.ID+"_") {
		t.Fatalf("created key %s: apiKey %q is not ipk_<id>_<secret>", r.Body, k.APIKey)
	}
	return k
}

// getKey reads a key over the API.
func getKey(t *testing.T, s *apptest.Server, id string) keyJSON {
	t.Helper()
	r := s.Admin(http.MethodGet, keysPath+"/"+id, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var k keyJSON
	r.Decode(t, &k)
	return k
}

// with sends a request with key as X-Admin-API-Key.
func with(s *apptest.Server, key, method, path string, body any) *apptest.Response {
	s.T.Helper()
	return s.Request(method, path, body, "X-Admin-API-Key: "+key)
}

// bearer sends a request with key as Authorization: Bearer.
func bearer(s *apptest.Server, key, method, path string, body any) *apptest.Response {
	s.T.Helper()
	return s.Request(method, path, body, "Authorization: Bearer "+key)
}

// mustRefuse checks an error answer and that its message says why.
func mustRefuse(t *testing.T, r *apptest.Response, status int, code, field, says string) {
	t.Helper()
	apptest.MustError(t, r, status, code, field)
	if !strings.Contains(string(r.Body), says) {
		t.Fatalf("refused for another reason than %q: %s", says, r.Body)
	}
}
