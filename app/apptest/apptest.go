// Package apptest is the HTTP test support of the server's packages: a
// store over a real SQLite file in t.TempDir(), requests sent through a
// real handler, and the checks of their answers.
//
// Only tests import it (TestLayers checks that no other package depends on
// it). It does not import package app, so that app's own tests can use it
// too; package apptest/realapp builds the whole server over it, for the
// tests of the packages outside app.
package apptest

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
	"github.com/idenplane/idenplane/store/pgtest"
)

const (
	// APIKey is the admin API key of a test server; Admin sends it.
	APIKey = "test-admin-api-key-0123456789abcdef0123456789"
	// BaseURL is a test server's external address.
	BaseURL = "http://localhost:3000"
	// ClientAddr is the peer address of every request a test sends.
	ClientAddr = "192.0.2.1:1234"
)

// MasterKey is a test store's master key.
func MasterKey() []byte { return bytes.Repeat([]byte{7}, store.MasterKeySize) }

// Schema is the repository's schema.sql, found from the test's directory
// upwards, so it serves a test at any depth of the tree.
func Schema(t testing.TB) string {
	t.Helper()
	return schemaFile(t, "schema.sql")
}

// PostgresSchema is the repository's schema_postgres.sql.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	return schemaFile(t, "schema_postgres.sql")
}

func schemaFile(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("read schema: %v", err)
			}
			return string(b)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("read schema: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// OpenStore opens a store over a new SQLite file in t.TempDir(), closed
// when the test ends, and returns it with the file's path. In a run on
// PostgreSQL (pgtest.Rerun) the store is on a database of its own, and
// the path is its URL.
func OpenStore(t testing.TB) (*store.Store, string) {
	t.Helper()
	cfg := store.Config{Path: filepath.Join(t.TempDir(), "idenplane.db"), Schema: Schema(t), MasterKey: MasterKey()}
	if pgtest.OnPostgres() {
		cfg.PostgresSchema = schemaFile(t, "schema_postgres.sql")
		cfg.Path = pgtest.DatabaseFrom(t, "apptest", func(url string) error {
			migrated := cfg
			migrated.Path = url
			st, err := store.Open(context.Background(), migrated)
			if err != nil {
				return err
			}
			return st.Close()
		})
	}
	path := cfg.Path
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// Logger writes warnings and errors to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Server is a handler under test and the store behind it.
type Server struct {
	T       testing.TB
	Handler http.Handler
	Store   *store.Store
	DBPath  string
}

// Response is an answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v, failing the test if it can't.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response %d %s: %v", r.Status, r.Body, err)
	}
}

// Object decodes the body as a JSON object.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	return m
}

// Request sends a request through the handler, from ClientAddr. body may
// be nil, a string or []byte (sent as is) or anything else (sent as JSON).
// headers are "Name: value" strings; a body gets Content-Type
// application/json unless a header sets it.
func (s *Server) Request(method, path string, body any, headers ...string) *Response {
	s.T.Helper()
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
			s.T.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = ClientAddr
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	rec := httptest.NewRecorder()
	s.Handler.ServeHTTP(rec, req)
	return &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Admin sends a request with the admin API key.
func (s *Server) Admin(method, path string, body any, headers ...string) *Response {
	s.T.Helper()
	return s.Request(method, path, body, append([]string{"X-Admin-API-Key: " + APIKey}, headers...)...)
}

// CreateRealm makes a realm with default settings over the admin API and
// returns its JSON.
func (s *Server) CreateRealm(name string) map[string]any {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms", map[string]any{"name": name})
	MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)
}

// CreateUser makes a user from the given fields and returns its JSON.
func (s *Server) CreateUser(realm string, fields map[string]any) map[string]any {
	s.T.Helper()
	r := s.Admin(http.MethodPost, "/admin/realms/"+realm+"/users", fields)
	MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)
}

// Realm reads a realm straight from the store.
func (s *Server) Realm(name string) *store.Realm {
	s.T.Helper()
	realm, err := s.Store.GetRealm(context.Background(), name)
	if err != nil {
		s.T.Fatalf("realm %s: %v", name, err)
	}
	return realm
}

// MustStatus fails the test unless r has the wanted status.
func MustStatus(t testing.TB, r *Response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
}

// MustError checks an error answer of the JSON APIs: status, code, and
// field ("" for none).
func MustError(t testing.TB, r *Response, status int, code, field string) {
	t.Helper()
	MustStatus(t, r, status)
	var body httpx.ErrorBody
	r.Decode(t, &body)
	if body.Error != code || body.Field != field || body.Description == "" {
		t.Fatalf("error body %s, want code %q field %q", r.Body, code, field)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
}
