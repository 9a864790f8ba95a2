package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const testAPIKey = "test-admin-api-key-0123456789abcdef0123456789"

// testServer is the real App over a real SQLite file in t.TempDir().
type testServer struct {
	t       testing.TB
	app     *App
	store   *store.Store
	handler http.Handler
	dbPath  string
}

func testSchema(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	return string(b)
}

// newTestServer starts an App; opts adjust its Config before New.
func newTestServer(t testing.TB, opts ...func(*Config)) *testServer {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "idenplane.db")
	key := bytes.Repeat([]byte{7}, store.MasterKeySize)
	st, err := store.Open(context.Background(), store.Config{Path: dbPath, Schema: testSchema(t), MasterKey: key})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := Config{
		BaseURL: "http://localhost:3000", Version: "test", MasterKey: key, AdminAPIKey: testAPIKey,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(context.Background(), st, cfg)
	if err != nil {
		t.Fatalf("new app: %v", err)
	}
	return &testServer{t: t, app: a, store: st, handler: a.Handler(), dbPath: dbPath}
}

type testResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode unmarshals the response body into v, failing the test if it can't.
func (r *testResponse) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response %d %s: %v", r.Status, r.Body, err)
	}
}

// object decodes the body as a JSON object.
func (r *testResponse) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// request sends a request through the full handler. body may be nil, a
// string or []byte (sent as is) or anything else (sent as JSON). headers
// are "Name: value" strings; a body gets Content-Type application/json
// unless a header sets it.
func (s *testServer) request(method, path string, body any, headers ...string) *testResponse {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = "192.0.2.1:1234"
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return &testResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// admin sends a request with the admin API key.
func (s *testServer) admin(method, path string, body any, headers ...string) *testResponse {
	s.t.Helper()
	return s.request(method, path, body, append([]string{"X-Admin-API-Key: " + testAPIKey}, headers...)...)
}

// mustStatus fails the test unless r has the wanted status.
func mustStatus(t testing.TB, r *testResponse, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
}

// mustError checks an error response: status, code, and field ("" for none).
func mustError(t testing.TB, r *testResponse, status int, code, field string) {
	t.Helper()
	mustStatus(t, r, status)
	var body httpx.ErrorBody
	r.decode(t, &body)
	if body.Error != code || body.Field != field || body.Description == "" {
		t.Fatalf("error body %s, want code %q field %q", r.Body, code, field)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
}

// createRealm makes a realm with default settings and returns its JSON.
func (s *testServer) createRealm(name string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": name})
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}

// createUser makes a user from the given fields and returns its JSON.
func (s *testServer) createUser(realm string, fields map[string]any) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/"+realm+"/users", fields)
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}
