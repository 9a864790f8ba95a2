package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/idenplane/idenplane/store"
)

// The fuzz targets (*_fuzz_test.go) drive the real router, or the parser
// itself where it is a function of its own, against one App per target:
// made once before f.Fuzz, so an input costs a request, not a database.
// `go test` runs their seeds; `make fuzz` runs each for FUZZTIME.

// fuzzEnv is the App a fuzz target shares between its inputs: realm acme
// with tokens that outlive any fuzzing run, and a connection of its own to
// the database that sees the server's commits.
type fuzzEnv struct {
	*testServer
	realm    *store.Realm
	observer *sql.Conn
	log      *fuzzLog
}

// newFuzzEnv starts the App with realm acme, whose tokens live a year so
// that seeds minted now stay valid however long the fuzzing runs.
func newFuzzEnv(f *testing.F) *fuzzEnv {
	f.Helper()
	log := &fuzzLog{}
	s := newTestServer(f, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelError}))
	})
	mustStatus(f, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme",
		"accessTokenLifespan": 365 * 24 * 3600, "refreshTokenLifespan": 365 * 24 * 3600}), http.StatusCreated)
	realm, err := s.store.GetRealm(f.Context(), "acme")
	if err != nil {
		f.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+s.dbPath+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	return &fuzzEnv{testServer: s, realm: realm, observer: conn, log: log}
}

// on is the server for one input: its checks fail t, not the F, whose
// methods must not be called inside the fuzz function.
//
// The rows the last input wrote go into the text indexes first: the
// store would do it within a second, in the background, and that write
// would be taken for one of the next input's (dataVersion).
func (e *fuzzEnv) on(t *testing.T) *testServer {
	if err := e.store.IndexTexts(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.log.reset()
	s := *e.testServer
	s.t = t
	return &s
}

// dataVersion changes whenever another connection (the server's) commits
// a write, and only then: PRAGMA data_version.
func (e *fuzzEnv) dataVersion(t testing.TB) int64 {
	t.Helper()
	var v int64
	if err := e.observer.QueryRowContext(context.Background(), "PRAGMA data_version").Scan(&v); err != nil {
		t.Fatalf("data_version: %v", err)
	}
	return v
}

// client makes a client of acme from fields and returns its secret ("" for
// a public client). The secret is fixed by the client ID rather than
// random: a fuzzing worker runs the setup again, in its own process and
// database, and the seeds it is given, made by the first process, must
// still authenticate there.
func (e *fuzzEnv) client(f *testing.F, fields map[string]any) string {
	f.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/clients", fields)
	mustStatus(f, r, http.StatusCreated)
	c := r.object(f)
	if s, _ := c["secret"].(string); s == "" {
		return ""
	}
	secret := "fuzz-secret-of-" + c["clientId"].(string)
	hash := sha256.Sum256([]byte(secret))
	if err := e.store.SetClientSecretHash(f.Context(), e.realm.ID, c["id"].(string), hash[:]); err != nil {
		f.Fatal(err)
	}
	return secret
}

// user makes a user of acme from fields, signing in with password, and
// returns its ID. The password's hash is argon2id at the lowest cost the
// server accepts (1 MiB, one pass; cheapArgon2Hash), set through the
// store: a target's users sign in thousands of times, and the real hash's
// cost is not what is fuzzed.
func (e *fuzzEnv) user(f *testing.F, fields map[string]any, password string) string {
	f.Helper()
	id := e.createUser("acme", fields)["id"].(string)
	err := e.store.SetUserPassword(f.Context(), e.realm.ID, id, cheapArgon2Hash(password), time.Now().UnixMilli(), false)
	if err != nil {
		f.Fatal(err)
	}
	return id
}

// cheapArgon2Hash hashes password with argon2id at the lowest cost
// parseArgon2id accepts.
func cheapArgon2Hash(password string) string {
	salt := []byte("fuzz-target-salt")
	key := argon2.IDKey([]byte(password), salt, 1, 1024, 1, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=1024,t=1,p=1$%s$%s", argon2.Version, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// fuzzLog keeps what the server logged while one input ran, to show
// beside a failure.
type fuzzLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *fuzzLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *fuzzLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
}

func (l *fuzzLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// send runs one request through the whole handler, as request does, with
// the body and headers given raw; nil when target is no request line a
// server would pass on.
func (s *testServer) send(method, target string, body io.Reader, headers http.Header) *testResponse {
	return s.sendFrom("192.0.2.1:1234", method, target, body, headers)
}

// sendFrom is send from the peer address remote.
func (s *testServer) sendFrom(remote, method, target string, body io.Reader, headers http.Header) *testResponse {
	req := httptest.NewRequest(method, "/", body)
	// httptest.NewRequest panics on a target it cannot parse; a request
	// line that bad never reaches a handler, so it is built by hand here.
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil
	}
	req.URL, req.RequestURI = u, target
	req.RemoteAddr = remote
	for k, v := range headers {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return &testResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// fuzzNoServerError fails on a 5xx, a recovered panic included, showing
// what the server logged.
func (e *fuzzEnv) fuzzNoServerError(t *testing.T, what string, r *testResponse) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s: status %d; body %s\nserver log:\n%s", what, r.Status, r.Body, e.log)
	}
}

// fuzzMustAPIError checks the admin API's one error shape on a 4xx.
func fuzzMustAPIError(t *testing.T, what string, r *testResponse) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: %d with Content-Type %q; body %s", what, r.Status, ct, r.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("%s: %d error body is not JSON: %v; body %s", what, r.Status, err, r.Body)
	}
	code, _ := body["error"].(string)
	desc, _ := body["error_description"].(string)
	if code == "" || desc == "" {
		t.Fatalf("%s: %d error body lacks error or error_description: %s", what, r.Status, r.Body)
	}
	if field, ok := body["field"]; ok {
		if s, _ := field.(string); s == "" {
			t.Fatalf("%s: %d error body has an empty or non-string field: %s", what, r.Status, r.Body)
		}
	}
}

// oauthErrorChars is RFC 6749's character set of an error code (§5.2).
var oauthErrorChars = regexp.MustCompile(`^[\x20-\x21\x23-\x5B\x5D-\x7E]+$`)

// fuzzMustOAuthError checks an error answer of a protocol endpoint: JSON
// with an error code of RFC 6749's characters and a string description.
func fuzzMustOAuthError(t *testing.T, what string, r *testResponse) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: %d with Content-Type %q; body %s", what, r.Status, ct, r.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("%s: %d error body is not JSON: %v; body %s", what, r.Status, err, r.Body)
	}
	code, _ := body["error"].(string)
	if !oauthErrorChars.MatchString(code) {
		t.Fatalf("%s: %d error code %q is not an RFC 6749 error; body %s", what, r.Status, body["error"], r.Body)
	}
	if desc, ok := body["error_description"]; ok {
		if _, ok := desc.(string); !ok {
			t.Fatalf("%s: %d error_description is not a string: %s", what, r.Status, r.Body)
		}
	}
}
