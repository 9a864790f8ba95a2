package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// errTestInternalBody is the one body every unexpected failure answers.
const errTestInternalBody = `{"error":"internal_error","error_description":"internal server error"}` + "\n"

func TestErrorsShapes(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	big := `{"name": "` + strings.Repeat("a", maxBodyBytes) + `"}`

	for _, c := range []struct {
		name         string
		method, path string
		body         any
		headers      []string
		admin        bool
		status       int
		code, field  string
	}{
		{"unknown route", "GET", "/no/such/route", nil, nil, false, 404, "not_found", ""},
		{"unknown admin route", "GET", "/admin/no-such-thing", nil, nil, true, 404, "not_found", ""},
		{"unknown realm", "GET", "/admin/realms/nope", nil, nil, true, 404, "not_found", ""},
		{"unknown user", "GET", "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000", nil, nil, true, 404, "not_found", ""},
		{"method not allowed", "DELETE", "/health", nil, nil, false, 405, "method_not_allowed", ""},
		{"admin method not allowed", "PATCH", "/admin/realms", map[string]any{}, nil, true, 405, "method_not_allowed", ""},
		{"text body", "POST", "/admin/realms", `name=x`, []string{"Content-Type: text/plain"}, true, 415, "unsupported_media_type", ""},
		{"no content type", "POST", "/admin/realms", `{"name":"x"}`, []string{"Content-Type: "}, true, 415, "unsupported_media_type", ""},
		{"too large", "POST", "/admin/realms", big, nil, true, 413, "payload_too_large", ""},
		{"too large put", "PUT", "/admin/realms/acme", big, nil, true, 413, "payload_too_large", ""},
		{"malformed", "POST", "/admin/realms", `{"name": `, nil, true, 400, "invalid_json", ""},
		{"syntax error", "POST", "/admin/realms", `{"name" "x"}`, nil, true, 400, "invalid_json", ""},
		{"trailing data", "POST", "/admin/realms", `{"name":"x"} {}`, nil, true, 400, "invalid_json", ""},
		{"array body", "POST", "/admin/realms", `[]`, nil, true, 400, "invalid_json", ""},
		{"empty body", "POST", "/admin/realms", ` `, nil, true, 400, "invalid_json", ""},
		{"wrong type", "POST", "/admin/realms", `{"name": 5}`, nil, true, 400, "invalid_field", "name"},
		{"unknown field", "POST", "/admin/realms", `{"name": "x", "colour": "red"}`, nil, true, 400, "unknown_field", "colour"},
		{"conflict", "POST", "/admin/realms", map[string]any{"name": "acme"}, nil, true, 409, "conflict", ""},
		{"unauthorized", "GET", "/admin/realms", nil, nil, false, 401, "unauthorized", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r *testResponse
			if c.admin {
				r = s.admin(c.method, c.path, c.body, c.headers...)
			} else {
				r = s.request(c.method, c.path, c.body, c.headers...)
			}
			mustError(t, r, c.status, c.code, c.field)
			// The shape is exactly error, error_description and maybe field.
			body := r.object(t)
			for k := range body {
				if k != "error" && k != "error_description" && k != "field" {
					t.Fatalf("error body has extra key %q: %s", k, r.Body)
				}
			}
		})
	}
	// The oversized create did not create anything.
	r := s.admin(http.MethodGet, "/admin/realms", nil)
	mustStatus(t, r, http.StatusOK)
	var realms []map[string]any
	r.decode(t, &realms)
	if len(realms) != 1 || realms[0]["name"] != "acme" {
		t.Fatalf("realms after the failed requests: %s", r.Body)
	}
}

func TestErrorsMethodNotAllowedListsAllow(t *testing.T) {
	// RFC 9110 §15.5.6: a 405 must list the methods the resource supports.
	s := newTestServer(t)
	s.createRealm("acme")
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/health", "GET"},
		{http.MethodPatch, "/admin/realms", "GET, POST"},
		{http.MethodPost, "/admin/realms/acme", "DELETE, GET, PATCH, PUT"},
		{http.MethodGet, "/admin/auth/login", "POST"},
	} {
		r := s.admin(c.method, c.path, nil)
		mustError(t, r, http.StatusMethodNotAllowed, "method_not_allowed", "")
		if allow := r.Header.Get("Allow"); allow != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, allow, c.allow)
		}
	}
}

// errTestLeaks fails if an error body says anything about the internals.
func errTestLeaks(t *testing.T, body []byte, dir string) {
	t.Helper()
	lower := strings.ToLower(string(body))
	for _, bad := range []string{"sql", "sqlite", ".go", "panic", "goroutine", strings.ToLower(dir)} {
		if strings.Contains(lower, bad) {
			t.Fatalf("error body leaks %q: %s", bad, body)
		}
	}
}

func TestErrorsInternalHidesCause(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	s.createRealm("acme")
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/admin/realms", "/admin/realms/acme", "/admin/realms/acme/users"} {
		r := s.admin(http.MethodGet, path, nil)
		mustError(t, r, http.StatusInternalServerError, "internal_error", "")
		if string(r.Body) != errTestInternalBody {
			t.Fatalf("GET %s body %q, want exactly %q", path, r.Body, errTestInternalBody)
		}
		errTestLeaks(t, r.Body, filepath.Dir(s.dbPath))
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("500 lacks the security headers: %v", r.Header)
		}
	}
	// The cause goes to the log instead.
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "closed") {
		t.Fatalf("the 500's cause was not logged at error level: %s", logs.String())
	}
}

func TestErrorsPanicRecovered(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	panicky := func(w http.ResponseWriter, r *http.Request) error {
		panic("boom: sqlite said no in handler.go (goroutine 7) " + s.dbPath)
	}

	t.Run("recoverPanics", func(t *testing.T) {
		h := s.app.recoverPanics(s.app.handle(panicky))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/realms", nil))
		if rec.Code != http.StatusInternalServerError || rec.Body.String() != errTestInternalBody {
			t.Fatalf("panic answered %d %q, want 500 %q", rec.Code, rec.Body, errTestInternalBody)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		errTestLeaks(t, rec.Body.Bytes(), filepath.Dir(s.dbPath))
		// The panic and its stack go to the log instead.
		if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "panic: boom") ||
			!strings.Contains(logs.String(), "goroutine") {
			t.Fatalf("the panic was not logged with its stack: %s", logs.String())
		}
	})

	t.Run("full handler", func(t *testing.T) {
		// A route added to the real router runs behind every middleware.
		s.app.router.Handle("/admin/test-panic", s.app.handle(panicky)).Methods(http.MethodGet)
		r := s.admin(http.MethodGet, "/admin/test-panic", nil)
		mustError(t, r, http.StatusInternalServerError, "internal_error", "")
		if string(r.Body) != errTestInternalBody {
			t.Fatalf("body %q", r.Body)
		}
		errTestLeaks(t, r.Body, filepath.Dir(s.dbPath))
		errTestSecurityHeaders(t, r, true)
		// The server is fine afterwards.
		mustStatus(t, s.admin(http.MethodGet, "/admin/realms", nil), http.StatusOK)
	})

	t.Run("abort handler passes through", func(t *testing.T) {
		h := s.app.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler re-panicked", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		t.Fatal("ErrAbortHandler was swallowed")
	})
}

func errTestSecurityHeaders(t *testing.T, r *testResponse, admin bool) {
	t.Helper()
	want := map[string]string{
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
	}
	if admin {
		want["Cache-Control"] = "no-store"
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("status %d: header %s = %q, want %q", r.Status, k, got, v)
		}
	}
}

func TestErrorsSecurityHeaders(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, c := range []struct {
		name   string
		r      *testResponse
		status int
		admin  bool
	}{
		{"health", s.request(http.MethodGet, "/health", nil), 200, false},
		{"not found", s.request(http.MethodGet, "/nope", nil), 404, false},
		{"method not allowed", s.request(http.MethodPost, "/health", nil), 405, false},
		{"admin ok", s.admin(http.MethodGet, "/admin/realms/acme", nil), 200, true},
		{"admin created", s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "beta"}), 201, true},
		{"admin export", s.admin(http.MethodGet, "/admin/realms/acme/export", nil), 200, true},
		{"admin no content", s.admin(http.MethodDelete, "/admin/realms/acme/users/00000000-0000-4000-8000-000000000000", nil), 404, true},
		{"admin unauthorized", s.request(http.MethodGet, "/admin/realms", nil), 401, true},
		{"admin bad request", s.admin(http.MethodPost, "/admin/realms", `{`), 400, true},
		{"admin not found", s.admin(http.MethodGet, "/admin/nope", nil), 404, true},
		{"login failure", s.request(http.MethodPost, "/admin/auth/login", `{}`), 400, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustStatus(t, c.r, c.status)
			errTestSecurityHeaders(t, c.r, c.admin)
			if hsts := c.r.Header.Get("Strict-Transport-Security"); hsts != "" {
				t.Fatalf("HSTS %q sent for an http base URL", hsts)
			}
		})
	}

	t.Run("hsts on https", func(t *testing.T) {
		s := newTestServer(t, func(c *Config) { c.BaseURL = "https://id.example.com" })
		r := s.request(http.MethodGet, "/health", nil)
		mustStatus(t, r, http.StatusOK)
		if hsts := r.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(hsts, "max-age=") {
			t.Fatalf("HSTS %q, want max-age", hsts)
		}
		errTestSecurityHeaders(t, r, false)
	})
}

func TestErrorsConflictNamesField(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "alice", "email": "alice@acme.test"})
	r := s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"})
	mustError(t, r, http.StatusConflict, "conflict", "username")
	r = s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alicia", "email": "ALICE@acme.test"})
	mustError(t, r, http.StatusConflict, "conflict", "email")
}

func TestErrorsConflictUsernameContainingEmail(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createUser("acme", map[string]any{"username": "emailer"})
	r := s.admin(http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "emailer"})
	mustError(t, r, http.StatusConflict, "conflict", "username")
}

func TestErrorsPanicCountedInMetrics(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.Logger = slog.New(slog.DiscardHandler) })
	s.app.router.Handle("/admin/test-panic", s.app.handle(func(http.ResponseWriter, *http.Request) error {
		panic("boom")
	})).Methods(http.MethodGet)
	mustStatus(t, s.admin(http.MethodGet, "/admin/test-panic", nil), http.StatusInternalServerError)
	r := s.admin(http.MethodGet, "/admin/metrics", nil)
	mustStatus(t, r, http.StatusOK)
	series := `idenplane_http_requests_total{method="GET",route="/admin/test-panic",status="500"}`
	if v, ok := healthMetricValue(string(r.Body), series); !ok || v != "1" {
		t.Fatalf("%s = %q (found %v), want 1", series, v, ok)
	}
}

// The OpenID Connect endpoints answer any error in OAuth's format: an
// error of the vocabulary by its status, with its wait as Retry-After, a
// body over the limit as invalid_request 413, anything unknown as a bare
// server_error; OAuth errors pass as they are. Both ways out agree: the
// library's (protocolError, with challengeWriter adding the wait) and the
// one written by hand (writeOAuthError).
func TestProtocolErrorClassifies(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct {
		name              string
		err               error
		status            int
		code, description string
		retryAfter        string
	}{
		{"busy", identity.ErrHashBusy, 503, "server_error", identity.ErrHashBusy.Message, "2"},
		{"throttled", apperr.TooMany(3*time.Second, "too many failed sign-ins; try again later"), 429, "invalid_grant",
			"too many failed sign-ins; try again later", "3"},
		{"too large", &http.MaxBytesError{Limit: maxBodyBytes}, 413, "invalid_request", "request body exceeds 1048576 bytes", ""},
		{"refused", apperr.Invalid("parameter scope is repeated"), 400, "invalid_request", "parameter scope is repeated", ""},
		{"unknown realm", apperr.NotFound("realm nope"), 404, "not_found", "realm nope not found", ""},
		{"fault", fmt.Errorf("read keys: %w", io.ErrUnexpectedEOF), 500, "server_error", "internal server error", ""},
		{"OAuth error", oidc.ErrInvalidScope().WithDescription("unknown scope x"), 400, "invalid_scope", "unknown scope x", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/realms/acme/protocol/openid-connect/token", nil)
			library := httptest.NewRecorder()
			failure := &protocolFailure{}
			ctx := context.WithValue(r.Context(), protocolFailureKey{}, failure)
			op.WriteError(&challengeWriter{ResponseWriter: library, realm: "acme", failure: failure}, r,
				s.app.protocolError(ctx, c.err), nil)
			byHand := httptest.NewRecorder()
			s.app.writeOAuthError(byHand, r, c.err)
			for way, rec := range map[string]*httptest.ResponseRecorder{"library": library, "by hand": byHand} {
				var body oauthError
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != c.status ||
					body.Error != c.code || body.Description != c.description {
					t.Errorf("%s: %d %s, want %d %s %q", way, rec.Code, rec.Body, c.status, c.code, c.description)
				}
				if got := rec.Header().Get("Retry-After"); got != c.retryAfter {
					t.Errorf("%s: Retry-After %q, want %q", way, got, c.retryAfter)
				}
			}
		})
	}
}
