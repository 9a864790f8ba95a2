package nhi_test

import (
	"encoding/base64"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

const nhiPath = "/admin/realms/acme/nhi"

// clock is the server's clock in a test: it moves when the test says,
// and by step at every reading once a test sets one.
type clock struct{ ns, step atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time            { return time.Unix(0, c.ns.Add(c.step.Load())) }
func (c *clock) Advance(d time.Duration)   { c.ns.Add(int64(d)) }
func (c *clock) Millis() int64             { return c.Now().UnixMilli() }
func withClock(c *clock) func(*app.Config) { return func(cfg *app.Config) { cfg.Now = c.Now } }

// newServer starts the server with the realm acme, admin events on.
func newServer(t *testing.T, opts ...func(*app.Config)) *apptest.Server {
	s := realapp.New(t, opts...)
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true})
	apptest.MustStatus(t, r, http.StatusCreated)
	return s
}

// identityJSON is an identity as the API answers it.
type identityJSON struct {
	ID                   string            `json:"id"`
	Kind                 string            `json:"kind"`
	Name                 string            `json:"name"`
	Description          string            `json:"description"`
	Owner                *ownerJSON        `json:"owner"`
	Metadata             map[string]string `json:"metadata"`
	State                string            `json:"state"`
	ClientID             string            `json:"clientId"`
	ServiceAccountUserID string            `json:"serviceAccountUserId"`
	CredentialPolicyID   string            `json:"credentialPolicyId"`
	AdminPermissions     []string          `json:"adminPermissions"`
	CreatedTimestamp     int64             `json:"createdTimestamp"`
	UpdatedTimestamp     int64             `json:"updatedTimestamp"`
	LastUsedTimestamp    *int64            `json:"lastUsedTimestamp"`
}

type ownerJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// createIdentity makes an identity from fields and returns it.
func createIdentity(t *testing.T, s *apptest.Server, fields map[string]any) identityJSON {
	t.Helper()
	r := s.Admin(http.MethodPost, nhiPath, fields)
	apptest.MustStatus(t, r, http.StatusCreated)
	var n identityJSON
	r.Decode(t, &n)
	return n
}

// getIdentity reads an identity over the API.
func getIdentity(t *testing.T, s *apptest.Server, id string) identityJSON {
	t.Helper()
	r := s.Admin(http.MethodGet, nhiPath+"/"+id, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var n identityJSON
	r.Decode(t, &n)
	return n
}

// clientEnabled says whether the client with clientId is enabled.
func clientEnabled(t *testing.T, s *apptest.Server, clientID string) bool {
	t.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/acme/clients/"+clientID, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	return r.Object(t)["enabled"].(bool)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
