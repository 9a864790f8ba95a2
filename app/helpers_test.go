package app

import (
	"context"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/openapitest"
	"github.com/idenplane/idenplane/store"
)

const testAPIKey = apptest.APIKey

// testServer is the real App over a real SQLite file in t.TempDir(). Its
// requests and checks are apptest's, under the names these tests use.
type testServer struct {
	t       testing.TB
	app     *App
	store   *store.Store
	handler http.Handler
	dbPath  string
}

func testSchema(t testing.TB) string { return apptest.Schema(t) }

// newTestServer starts an App; opts adjust its Config before New.
func newTestServer(t testing.TB, opts ...func(*Config)) *testServer {
	t.Helper()
	st, dbPath := apptest.OpenStore(t)
	cfg := Config{BaseURL: apptest.BaseURL, Version: "test", MasterKey: apptest.MasterKey(), AdminAPIKey: testAPIKey,
		Logger: apptest.Logger(t), SigningKeys: apptest.SigningKeys(NewPrivateKey)}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(context.Background(), st, cfg)
	if err != nil {
		t.Fatalf("new app: %v", err)
	}
	// Every request and answer is checked against the OpenAPI document.
	s := &testServer{t: t, app: a, store: st, handler: openapitest.Handler(t, openapitest.Served(a.Handler()), a.Handler()), dbPath: dbPath}
	if cfg.AdminUser != "" {
		// The admin login's tests sign in by password alone;
		// admin_accounts_test.go holds the second factor the system realm
		// asks by default.
		s.systemMFA(false)
	}
	return s
}

func (s *testServer) web() *apptest.Server {
	return &apptest.Server{T: s.t, Handler: s.handler, Store: s.store, DBPath: s.dbPath}
}

// testResponse is an answer, read whole (apptest.Response).
type testResponse apptest.Response

func (r *testResponse) decode(t testing.TB, v any) {
	t.Helper()
	(*apptest.Response)(r).Decode(t, v)
}

func (r *testResponse) object(t testing.TB) map[string]any {
	t.Helper()
	return (*apptest.Response)(r).Object(t)
}

// request sends a request through the full handler (apptest.Server.Request).
func (s *testServer) request(method, path string, body any, headers ...string) *testResponse {
	s.t.Helper()
	return (*testResponse)(s.web().Request(method, path, body, headers...))
}

// admin sends a request with the admin API key.
func (s *testServer) admin(method, path string, body any, headers ...string) *testResponse {
	s.t.Helper()
	return (*testResponse)(s.web().Admin(method, path, body, headers...))
}

func mustStatus(t testing.TB, r *testResponse, want int) {
	t.Helper()
	apptest.MustStatus(t, (*apptest.Response)(r), want)
}

func mustError(t testing.TB, r *testResponse, status int, code, field string) {
	t.Helper()
	apptest.MustError(t, (*apptest.Response)(r), status, code, field)
}

func (s *testServer) createRealm(name string) map[string]any {
	s.t.Helper()
	return s.web().CreateRealm(name)
}

func (s *testServer) createUser(realm string, fields map[string]any) map[string]any {
	s.t.Helper()
	return s.web().CreateUser(realm, fields)
}
