package main

// These tests build the real binary once (TestMain) and run it as a child
// process: configuration checks, the small commands, first start, backup
// beside a live server, export/import, and a SIGKILL in the middle of a
// burst of writes. Every wait is bounded; no assertion depends on timing.

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
)

// cliBinary is the idenplane binary TestMain built.
var cliBinary string

// cliWaitBound caps every wait for a child process. It is a safety net
// against hangs, never an expectation of speed.
const cliWaitBound = 90 * time.Second

// cliAPIKey is an admin API key for servers started with IDENPLANE_ADMIN_API_KEY.
const cliAPIKey = "cli-test-admin-api-key-0123456789abcdef"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "idenplane-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	cliBinary = filepath.Join(dir, "idenplane")
	build := exec.Command("go", "build", "-o", cliBinary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// cliEnv is the test's environment without any IDENPLANE_ variable, plus extra.
func cliEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDENPLANE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// cliMasterKey is a fresh IDENPLANE_MASTER_KEY value: 32 bytes in hex.
func cliMasterKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return hex.EncodeToString(k)
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// cliRun runs the binary to completion in dir with env (see cliEnv) and stdin.
func cliRun(t *testing.T, dir string, env []string, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliWaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBinary, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run idenplane %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("idenplane %v did not finish: %v", args, ctx.Err())
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// cliLog is an io.Writer that keeps what a child writes and wakes a waiter
// on every write.
type cliLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notify chan struct{}
}

func newCLILog() *cliLog { return &cliLog{notify: make(chan struct{}, 1)} }

func (l *cliLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *cliLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// cliServer is `idenplane serve` running as a child process.
type cliServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	db     string
	base   string // http://127.0.0.1:PORT
	stdout *cliLog
	stderr *cliLog
	done   chan struct{} // closed when the process has exited and its output is copied
}

// cliFreeAddr picks a free loopback port by listening on port 0 and closing.
func cliFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// cliStartServer starts `idenplane serve` on db and a free loopback port and
// waits until /health/live answers. env holds extra NAME=value settings. A
// start that lost its port to another process is retried on a new one.
func cliStartServer(t *testing.T, db string, env ...string) *cliServer {
	t.Helper()
	stdout := newCLILog() // shared by the attempts: a key line printed by one is kept
	for attempt := 1; ; attempt++ {
		s := cliLaunch(t, db, stdout, env)
		err := s.waitReady()
		if err == nil {
			return s
		}
		if attempt < 3 && strings.Contains(s.stderr.String(), "address already in use") {
			continue
		}
		t.Fatalf("server did not become ready: %v\nstderr:\n%s", err, s.stderr)
	}
}

func cliLaunch(t *testing.T, db string, stdout *cliLog, env []string) *cliServer {
	t.Helper()
	addr := cliFreeAddr(t)
	return cliLaunchAt(t, db, stdout, env, addr, "http://"+addr)
}

// cliLaunchAt starts `idenplane serve` on db listening on addr, with
// baseURL as its public address: its own, or a fleet's.
func cliLaunchAt(t *testing.T, db string, stdout *cliLog, env []string, addr, baseURL string) *cliServer {
	t.Helper()
	s := &cliServer{t: t, db: db, base: "http://" + addr, stdout: stdout, stderr: newCLILog(), done: make(chan struct{})}
	s.cmd = exec.Command(cliBinary, "serve", "--addr", addr, "--base-url", baseURL, "--db", db)
	s.cmd.Dir = filepath.Dir(db)
	if store.IsPostgres(db) {
		s.cmd.Dir = t.TempDir()
	}
	s.cmd.Env = cliEnv(env...)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	s.cmd.WaitDelay = 10 * time.Second
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		if !s.exited() {
			_ = s.cmd.Process.Kill()
			<-s.done // bounded: the process is gone and WaitDelay caps the copying
		}
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", s.base, s.stderr)
		}
	})
	return s
}

func (s *cliServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// waitReady polls /health/live a bounded number of times.
func (s *cliServer) waitReady() error {
	client := &http.Client{Timeout: 5 * time.Second}
	for range 600 {
		if s.exited() {
			return fmt.Errorf("server exited with code %d", s.cmd.ProcessState.ExitCode())
		}
		resp, err := client.Get(s.base + "/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("/health/live never answered 200")
}

// waitStdoutLine waits for a stdout line containing substr and returns it.
func (s *cliServer) waitStdoutLine(substr string) string {
	s.t.Helper()
	deadline := time.NewTimer(cliWaitBound)
	defer deadline.Stop()
	for {
		for line := range strings.Lines(s.stdout.String()) {
			if strings.Contains(line, substr) {
				return strings.TrimSpace(line)
			}
		}
		select {
		case <-s.stdout.notify:
		case <-s.done:
			if strings.Contains(s.stdout.String(), substr) {
				continue
			}
			s.t.Fatalf("server exited without printing %q; stdout:\n%s", substr, s.stdout)
		case <-deadline.C:
			s.t.Fatalf("no stdout line containing %q; stdout:\n%s", substr, s.stdout)
		}
	}
}

// waitExit waits, bounded, for the process to end and returns its state.
func (s *cliServer) waitExit() *os.ProcessState {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(cliWaitBound):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Fatalf("server did not exit")
	}
	return s.cmd.ProcessState
}

// stop sends SIGTERM and returns the exit code (-1 when killed by a signal).
func (s *cliServer) stop() int {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM: %v", err)
	}
	return s.waitExit().ExitCode()
}

// stopGracefully stops the server and requires exit code 0.
func (s *cliServer) stopGracefully() {
	s.t.Helper()
	if code := s.stop(); code != 0 {
		s.t.Fatalf("exit code after SIGTERM = %d, want 0; stderr:\n%s", code, s.stderr)
	}
}

var cliClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second},
}

// do sends a request; key, when set, goes in X-Admin-API-Key; body, when
// not nil, is sent as JSON. It never fails the test, so goroutines may use it.
func (s *cliServer) do(method, path, key string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Admin-API-Key", key)
	}
	resp, err := cliClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// oidcPost posts form to one of the realm's OpenID Connect endpoints as
// the client (a public one when secret is empty) and answers the status
// and the body.
func (s *cliServer) oidcPost(realm, endpoint, clientID, secret string, form url.Values) (int, []byte) {
	s.t.Helper()
	if secret == "" {
		form.Set("client_id", clientID)
	}
	req, err := http.NewRequest(http.MethodPost, s.base+"/realms/"+realm+"/protocol/openid-connect/"+endpoint,
		strings.NewReader(form.Encode()))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.SetBasicAuth(clientID, secret)
	}
	resp, err := cliClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s: %v", endpoint, err)
	}
	return resp.StatusCode, body
}

// must sends a request and fails the test unless it answers want.
func (s *cliServer) must(method, path, key string, body any, want int) []byte {
	s.t.Helper()
	status, data, err := s.do(method, path, key, body)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		s.t.Fatalf("%s %s: status %d, want %d; body: %s", method, path, status, want, data)
	}
	return data
}

type cliUserList struct {
	Total int `json:"total"`
	Users []struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"users"`
}

// usernames lists every user of a realm, page by page.
func (s *cliServer) usernames(realm, key string) []string {
	s.t.Helper()
	var names []string
	for skip := 0; ; skip += 1000 {
		var page cliUserList
		data := s.must(http.MethodGet, fmt.Sprintf("/admin/realms/%s/users?limit=1000&skip=%d", realm, skip), key, nil, http.StatusOK)
		if err := json.Unmarshal(data, &page); err != nil {
			s.t.Fatalf("decode user list: %v", err)
		}
		for _, u := range page.Users {
			names = append(names, u.Username)
		}
		if len(page.Users) < 1000 || skip > 1_000_000 {
			if len(names) != page.Total {
				s.t.Fatalf("listed %d users, total says %d", len(names), page.Total)
			}
			return names
		}
	}
}

func TestCLIConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  []string
		want []string // each must appear in stderr
	}{
		{name: "addr without port", args: []string{"--addr", "nonsense"}, want: []string{"--addr"}},
		{name: "addr port out of range", args: []string{"--addr", "127.0.0.1:99999"}, want: []string{"--addr"}},
		{name: "addr from env", env: []string{"IDENPLANE_ADDR=nonsense"}, want: []string{"--addr", "IDENPLANE_ADDR"}},
		{name: "log format xml", args: []string{"--log-format", "xml"}, want: []string{"--log-format"}},
		{name: "log format from env", env: []string{"IDENPLANE_LOG_FORMAT=xml"}, want: []string{"--log-format", "IDENPLANE_LOG_FORMAT"}},
		{name: "base url ftp", args: []string{"--base-url", "ftp://x"}, want: []string{"--base-url"}},
		{name: "base url from env", env: []string{"IDENPLANE_BASE_URL=ftp://x"}, want: []string{"--base-url", "IDENPLANE_BASE_URL"}},
		{name: "base url with query", args: []string{"--base-url", "http://x/?a=b"}, want: []string{"--base-url"}},
		{name: "empty db", args: []string{"--db", ""}, want: []string{"--db"}},
		{name: "short master key", env: []string{"IDENPLANE_MASTER_KEY=short"}, want: []string{"IDENPLANE_MASTER_KEY"}},
		{name: "admin user without password", env: []string{"IDENPLANE_ADMIN_USER=admin"}, want: []string{"IDENPLANE_ADMIN_USER"}},
		{name: "admin password without user", env: []string{"IDENPLANE_ADMIN_PASSWORD=long-enough-password"}, want: []string{"IDENPLANE_ADMIN_PASSWORD"}},
		{name: "short admin password", env: []string{"IDENPLANE_ADMIN_USER=admin", "IDENPLANE_ADMIN_PASSWORD=short"}, want: []string{"IDENPLANE_ADMIN_PASSWORD"}},
		{name: "short admin api key", env: []string{"IDENPLANE_ADMIN_API_KEY=too-short"}, want: []string{"IDENPLANE_ADMIN_API_KEY"}},
		{name: "metrics public not a bool", env: []string{"IDENPLANE_METRICS_PUBLIC=maybe"}, want: []string{"IDENPLANE_METRICS_PUBLIC"}},
		{name: "trusted proxy not an address", args: []string{"--trusted-proxies", "10.0.0.0/8, proxy.example, 10.0.0.0/33"},
			want: []string{"--trusted-proxies", `"proxy.example"`, `"10.0.0.0/33"`}},
		{name: "trusted proxies from env", env: []string{"IDENPLANE_TRUSTED_PROXIES=192.0.2.300"}, want: []string{"--trusted-proxies", "IDENPLANE_TRUSTED_PROXIES"}},
		{name: "dns resolver without port", args: []string{"--dns-resolver", "127.0.0.1"}, want: []string{"--dns-resolver"}},
		{name: "dns resolver from env", env: []string{"IDENPLANE_DNS_RESOLVER=ns.example"}, want: []string{"--dns-resolver", "IDENPLANE_DNS_RESOLVER"}},
		{name: "plugins dir missing", args: []string{"--plugins-dir", "/nonexistent/plugins"}, want: []string{"--plugins-dir"}},
		{name: "plugins dir from env", env: []string{"IDENPLANE_PLUGINS_DIR=main.go"}, want: []string{"--plugins-dir", "IDENPLANE_PLUGINS_DIR"}},
		{name: "debug addr without port", args: []string{"--debug-addr", "127.0.0.1"}, want: []string{"--debug-addr"}},
		{name: "debug addr from env", env: []string{"IDENPLANE_DEBUG_ADDR=localhost"}, want: []string{"--debug-addr", "IDENPLANE_DEBUG_ADDR"}},
		{name: "audit dir relative", args: []string{"--audit-dir", "audit"}, want: []string{"--audit-dir"}},
		{name: "audit dir from env, absent", env: []string{"IDENPLANE_AUDIT_DIR=/nonexistent/audit"}, want: []string{"--audit-dir", "IDENPLANE_AUDIT_DIR"}},
		{name: "no readers", args: []string{"--db-readers", "0"}, want: []string{"--db-readers"}},
		{name: "readers from env", env: []string{"IDENPLANE_DB_READERS=many"}, want: []string{"--db-readers", "IDENPLANE_DB_READERS"}},
		{name: "connection lifetime not a duration", args: []string{"--db-conn-lifetime", "1 hour"}, want: []string{"--db-conn-lifetime"}},
		{name: "statement timeout on SQLite", args: []string{"--db-statement-timeout", "30s"}, want: []string{"--db-statement-timeout", "PostgreSQL"}},
		{name: "PostgreSQL without a master key", args: []string{"--db", "postgres://db.invalid/idenplane"}, want: []string{"--master-key-file"}},
		{name: "upgrade mode unknown", args: []string{"--upgrade", "later"}, want: []string{"--upgrade", `"later"`}},
		{name: "upgrade mode from env", env: []string{"IDENPLANE_UPGRADE=Manual"}, want: []string{"--upgrade", "IDENPLANE_UPGRADE"}},
		{
			name: "several at once",
			args: []string{"--addr", "nonsense", "--log-format", "xml", "--base-url", "ftp://x", "--trusted-proxies", "nonsense"},
			env:  []string{"IDENPLANE_MASTER_KEY=short", "IDENPLANE_ADMIN_USER=admin"},
			want: []string{"--addr", "--log-format", "--base-url", "--trusted-proxies", "IDENPLANE_MASTER_KEY", "IDENPLANE_ADMIN_USER"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"serve", "--db", filepath.Join(dir, "idenplane.db")}, tc.args...)
			res := cliRun(t, dir, cliEnv(tc.env...), "", args...)
			if res.code == 0 {
				t.Fatalf("exit code 0, want non-zero; stderr:\n%s", res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, res.stderr)
				}
			}
			// A bad setting stops the server before it touches the database.
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("invalid config left files behind: %v", entries)
			}
		})
	}

	t.Run("non-serve commands check their settings too", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		res := cliRun(t, dir, cliEnv("IDENPLANE_MASTER_KEY=short"), "", "export", "--db", filepath.Join(dir, "x.db"), "--log-format", "xml", "--realm", "acme")
		if res.code == 0 {
			t.Fatalf("exit code 0, want non-zero")
		}
		for _, w := range []string{"--log-format", "IDENPLANE_MASTER_KEY"} {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("stderr does not name %q:\n%s", w, res.stderr)
			}
		}
	})

	t.Run("unknown flag", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		res := cliRun(t, dir, cliEnv(), "", "serve", "--no-such-flag")
		if res.code == 0 || !strings.Contains(res.stderr, "no-such-flag") {
			t.Fatalf("code %d, stderr:\n%s", res.code, res.stderr)
		}
	})
}

// --trusted-proxies reaches the server: behind the proxy (here the test
// itself, on loopback), the address it forwards for is the client's.
func TestCLITrustedProxies(t *testing.T) {
	dir := t.TempDir()
	s := cliStartServer(t, filepath.Join(dir, "idenplane.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey, "IDENPLANE_TRUSTED_PROXIES=127.0.0.0/8, ::1")
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "acme", "adminEventsEnabled": true}, http.StatusCreated)
	req, err := http.NewRequest(http.MethodPost, s.base+"/admin/realms/acme/roles", strings.NewReader(`{"name":"viewer"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Admin-API-Key", cliAPIKey)
	req.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9")
	resp, err := cliClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create role: status %d", resp.StatusCode)
	}
	var events []struct {
		AuthDetails struct {
			IPAddress string `json:"ipAddress"`
		} `json:"authDetails"`
	}
	if err := json.Unmarshal(s.must(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=REALM_ROLE", cliAPIKey, nil, http.StatusOK), &events); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].AuthDetails.IPAddress != "203.0.113.9" {
		t.Fatalf("admin events %+v, want the role's from 203.0.113.9", events)
	}
}

// --debug-addr serves the runtime's profiles, block and mutex ones
// sampling, on loopback when given a bare port, and never on the server's
// own address.
func TestCLIDebugAddr(t *testing.T) {
	dir := t.TempDir()
	_, port, err := net.SplitHostPort(cliFreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	s := cliStartServer(t, filepath.Join(dir, "idenplane.db"), "IDENPLANE_DEBUG_ADDR=:"+port)
	debug := "http://127.0.0.1:" + port
	if log := s.stderr.String(); !strings.Contains(log, "127.0.0.1:"+port) {
		t.Fatalf("no profiles line on loopback in the log:\n%s", log)
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := cliClient.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	for _, c := range []struct{ path, want string }{
		{"/debug/pprof/", "mutex"},
		{"/debug/pprof/mutex?debug=1", "sampling period=100"},
		{"/debug/pprof/block?debug=1", "--- contention:"},
		{"/debug/pprof/heap?debug=1", "heap profile:"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile:"},
	} {
		if status, body := get(debug + c.path); status != http.StatusOK || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, want 200 with %q:\n%.300s", c.path, status, c.want, body)
		}
	}
	if status, _ := get(s.base + "/debug/pprof/"); status != http.StatusNotFound {
		t.Errorf("the server's own address answers /debug/pprof/ with %d, want 404", status)
	}
}

func TestCLIVersion(t *testing.T) {
	res := cliRun(t, t.TempDir(), cliEnv(), "", "version")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "idenplane ") {
		t.Fatalf("code %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

func TestCLIRoutes(t *testing.T) {
	dir := t.TempDir()
	res := cliRun(t, dir, cliEnv(), "", "routes")
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("code %d, want 0 and nothing on stderr; stderr:\n%s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("routes are not sorted:\n%s", res.stdout)
	}
	lineRE := regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) /[A-Za-z0-9/{}._-]*$`)
	for _, l := range lines {
		if !lineRE.MatchString(l) {
			t.Errorf("line %q is not METHOD PATH", l)
		}
	}
	for _, want := range []string{
		"GET /health", "GET /health/live", "GET /health/ready", "POST /admin/realms", "GET /admin/realms/{realm}",
		"POST /admin/realms/{realm}/users", "DELETE /admin/realms/{realm}/users/{userId}",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("routes lack %q:\n%s", want, res.stdout)
		}
	}
	if n := len(slices.Compact(slices.Clone(lines))); n != len(lines) {
		t.Errorf("duplicate routes:\n%s", res.stdout)
	}
	// Listing routes touches no real data.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("routes left files in its working directory: %v", entries)
	}
}

func TestCLIUnknownCommand(t *testing.T) {
	res := cliRun(t, t.TempDir(), cliEnv(), "", "frobnicate")
	if res.code == 0 {
		t.Fatalf("exit code 0 for an unknown command")
	}
	if !strings.Contains(res.stderr, `unknown command "frobnicate"`) || !strings.Contains(res.stderr, "Usage:") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
}

func TestCLIFirstStart(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "idenplane.db")

	s := cliStartServer(t, db)
	line := s.waitStdoutLine("Admin API key")
	key := line[strings.LastIndex(line, " ")+1:]
	if len(key) < 32 {
		t.Fatalf("admin key %q from line %q is too short", key, line)
	}
	s.must(http.MethodGet, "/admin/realms", key, nil, http.StatusOK)
	s.must(http.MethodGet, "/admin/realms", "", nil, http.StatusUnauthorized)
	s.must(http.MethodGet, "/admin/realms", key+"x", nil, http.StatusUnauthorized)
	s.must(http.MethodPost, "/admin/realms", key, map[string]any{"name": "first"}, http.StatusCreated)

	info, err := os.Stat(db + ".key")
	if err != nil {
		t.Fatalf("master key file: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("master key file mode %v, want 0600", perm)
	}
	keyFile, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := hex.DecodeString(strings.TrimSpace(string(keyFile))); err != nil || len(k) != 32 {
		t.Errorf("master key file does not hold 32 bytes in hex: %q", keyFile)
	}
	s.stopGracefully()
	if n := strings.Count(s.stdout.String(), "Admin API key"); n != 1 {
		t.Errorf("first start printed the key line %d times", n)
	}

	// Restart: the key is not printed again, the same key works, and the
	// master key file is kept as it was.
	s2 := cliStartServer(t, db)
	s2.must(http.MethodGet, "/admin/realms/first", key, nil, http.StatusOK)
	s2.stopGracefully() // output is fully copied once the process has exited
	if strings.Contains(s2.stdout.String(), "Admin API key") {
		t.Errorf("restart printed the admin key again:\n%s", s2.stdout)
	}
	if again, _ := os.ReadFile(db + ".key"); !bytes.Equal(again, keyFile) {
		t.Errorf("master key file changed on restart")
	}
}

func TestCLIBackupWhileRunning(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	target := filepath.Join(dir, "backup.db")
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}

	s := cliStartServer(t, db, env...)
	var realm struct{ ID string }
	data := s.must(http.MethodPost, "/admin/realms", cliAPIKey,
		map[string]any{"name": "bk", "smtpHost": "smtp.example.com", "smtpPassword": "smtp-secret"}, http.StatusCreated)
	if err := json.Unmarshal(data, &realm); err != nil {
		t.Fatal(err)
	}
	want := []string{"user0", "user1", "user2", "user3", "user4"}
	for i, name := range want {
		body := map[string]any{"username": name, "email": name + "@example.com"}
		if i == 0 {
			body["password"] = "correct horse battery staple"
		}
		s.must(http.MethodPost, "/admin/realms/bk/users", cliAPIKey, body, http.StatusCreated)
	}

	res := cliRun(t, dir, cliEnv(), "", "backup", "--without-key", "--db", db, target)
	if res.code != 0 {
		t.Fatalf("backup: code %d, stderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "backed up") {
		t.Errorf("backup stderr: %s", res.stderr)
	}
	// The live server keeps serving, and what it writes now is not in the copy.
	s.must(http.MethodPost, "/admin/realms/bk/users", cliAPIKey, map[string]any{"username": "after-backup"}, http.StatusCreated)

	again := cliRun(t, dir, cliEnv(), "", "backup", "--without-key", "--db", db, target)
	if again.code == 0 || !strings.Contains(again.stderr, "already exists") {
		t.Errorf("backup to an existing file: code %d, stderr:\n%s", again.code, again.stderr)
	}

	keyFile, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target+".key", keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	restored := cliStartServer(t, target, env...)
	var got struct {
		ID           string `json:"id"`
		SMTPPassword string `json:"smtpPassword"`
	}
	if err := json.Unmarshal(restored.must(http.MethodGet, "/admin/realms/bk", cliAPIKey, nil, http.StatusOK), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != realm.ID || got.SMTPPassword != "**********" {
		t.Errorf("restored realm %+v, want id %s with a (redacted) SMTP password", got, realm.ID)
	}
	if names := restored.usernames("bk", cliAPIKey); !slices.Equal(names, want) {
		t.Errorf("restored users %v, want %v", names, want)
	}
	if names := s.usernames("bk", cliAPIKey); len(names) != len(want)+1 {
		t.Errorf("live users %v", names)
	}
	restored.stopGracefully()
	s.stopGracefully()
}

func TestCLIExportImport(t *testing.T) {
	dir := t.TempDir()
	masterKey := "IDENPLANE_MASTER_KEY=" + cliMasterKey(t) // the same for every database here
	env := cliEnv(masterKey)
	dbA := filepath.Join(dir, "a.db")

	s := cliStartServer(t, dbA, masterKey, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{
		"name": "acme", "displayName": "Acme", "smtpHost": "smtp.example.com", "smtpPassword": "smtp-secret",
	}, http.StatusCreated)
	s.must(http.MethodPost, "/admin/realms/acme/users", cliAPIKey,
		map[string]any{"username": "alice", "email": "alice@example.com", "password": "correct horse battery staple"}, http.StatusCreated)
	s.must(http.MethodPost, "/admin/realms/acme/users", cliAPIKey, map[string]any{"username": "bob", "firstName": "Bob"}, http.StatusCreated)
	s.must(http.MethodPost, "/admin/realms/acme/users", cliAPIKey, map[string]any{"username": "carol", "enabled": false}, http.StatusCreated)
	s.stopGracefully()
	if _, err := os.Stat(dbA + ".key"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("with IDENPLANE_MASTER_KEY set, no key file should be made; stat: %v", err)
	}

	export := func(db string, extra ...string) string {
		t.Helper()
		res := cliRun(t, dir, env, "", append([]string{"export", "--db", db, "--realm", "acme"}, extra...)...)
		if res.code != 0 {
			t.Fatalf("export %s: code %d, stderr:\n%s", db, res.code, res.stderr)
		}
		return res.stdout
	}
	full := export(dbA, "--include-users", "--include-secrets")
	var doc struct {
		FormatVersion int    `json:"formatVersion"`
		Name          string `json:"name"`
		SMTPPassword  string `json:"smtpPassword"`
		Users         []struct {
			Username    string `json:"username"`
			Credentials []struct {
				Type string `json:"type"`
				Hash string `json:"hash"`
			} `json:"credentials"`
		} `json:"users"`
	}
	if err := json.Unmarshal([]byte(full), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, full)
	}
	if doc.FormatVersion != 1 || doc.Name != "acme" || doc.SMTPPassword != "smtp-secret" || len(doc.Users) != 3 {
		t.Fatalf("export: %s", full)
	}
	for i, name := range []string{"alice", "bob", "carol"} {
		if doc.Users[i].Username != name {
			t.Errorf("users[%d] = %q, want %q", i, doc.Users[i].Username, name)
		}
	}
	if c := doc.Users[0].Credentials; len(c) != 1 || c[0].Type != "password" || !strings.HasPrefix(c[0].Hash, "$argon2id$") {
		t.Errorf("alice's credentials: %+v", c)
	}

	redacted := export(dbA, "--include-users")
	if strings.Contains(redacted, "smtp-secret") || strings.Contains(redacted, "$argon2id$") || !strings.Contains(redacted, `"**********"`) {
		t.Errorf("export without --include-secrets shows secrets:\n%s", redacted)
	}
	if res := cliRun(t, dir, env, "", "export", "--db", dbA, "--realm", "nope"); res.code == 0 || !strings.Contains(res.stderr, "not found") {
		t.Errorf("export of a missing realm: code %d, stderr:\n%s", res.code, res.stderr)
	}
	if res := cliRun(t, dir, env, "", "export", "--db", dbA); res.code == 0 || !strings.Contains(res.stderr, "--realm") {
		t.Errorf("export without --realm: code %d, stderr:\n%s", res.code, res.stderr)
	}

	file := filepath.Join(dir, "acme.json")
	if err := os.WriteFile(file, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	dbB := filepath.Join(dir, "b.db")
	res := cliRun(t, dir, env, "", "import", "--db", dbB, file)
	if res.code != 0 || !strings.Contains(res.stdout, "imported realm acme") {
		t.Fatalf("import: code %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := export(dbB, "--include-users", "--include-secrets"); got != full {
		t.Errorf("export after import differs from the original:\n%s\nwant:\n%s", got, full)
	}

	res = cliRun(t, dir, env, "", "import", "--db", dbB, file)
	if res.code == 0 || !strings.Contains(res.stderr, "already exists") {
		t.Errorf("second import without --overwrite: code %d, stderr:\n%s", res.code, res.stderr)
	}
	res = cliRun(t, dir, env, "", "import", "--db", dbB, "--overwrite", file)
	if res.code != 0 || !strings.Contains(res.stdout, "imported realm acme") {
		t.Errorf("import --overwrite: code %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := export(dbB, "--include-users", "--include-secrets"); got != full {
		t.Errorf("export after import --overwrite differs from the original:\n%s", got)
	}

	dbC := filepath.Join(dir, "c.db")
	res = cliRun(t, dir, env, full, "import", "--db", dbC, "-")
	if res.code != 0 || !strings.Contains(res.stdout, "imported realm acme") {
		t.Fatalf("import -: code %d, stdout %q, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if got := export(dbC, "--include-users", "--include-secrets"); got != full {
		t.Errorf("export after import from stdin differs from the original:\n%s", got)
	}

	if res := cliRun(t, dir, env, "{", "import", "--db", filepath.Join(dir, "d.db"), "-"); res.code == 0 {
		t.Errorf("import of malformed JSON succeeded: %s", res.stdout)
	}
}

// TestCLIKillDuringWrites kills the server with SIGKILL in the middle of a
// burst of user creates and checks that every create it acknowledged with
// 201 survived, and that the database file is sound.
func TestCLIKillDuringWrites(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "crash.db")
		listed, acknowledged := cliKillDuringWrites(t, db, nil)
		cliCheckSQLiteFile(t, db, listed, acknowledged)
	})
	t.Run("postgres", func(t *testing.T) {
		cliKillDuringWrites(t, pgtest.Database(t), []string{"IDENPLANE_MASTER_KEY=" + cliMasterKey(t)})
	})
}

// cliKillDuringWrites creates users from several workers, kills the
// server with SIGKILL mid-burst, restarts it on db and checks that every
// create answered 201 is there. It answers how many users the restarted
// server listed, and how many creates were acknowledged.
func cliKillDuringWrites(t *testing.T, db string, extraEnv []string) (listed, acknowledged int) {
	const (
		workers       = 8
		killAfter     = 200  // acknowledged creates before the kill
		maxPerWorker  = 5000 // bounds each worker if the kill never lands
		acknowledgeOK = http.StatusCreated
	)
	env := append([]string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}, extraEnv...)

	s := cliStartServer(t, db, env...)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "crash"}, http.StatusCreated)

	var (
		mu        sync.Mutex
		acked     []string
		ackCount  atomic.Int64
		killed    atomic.Bool
		reachKill = make(chan struct{})
		closeOnce sync.Once
		wg        sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range maxPerWorker {
				name := fmt.Sprintf("w%d-user%05d", w, i)
				status, body, err := s.do(http.MethodPost, "/admin/realms/crash/users", cliAPIKey, map[string]any{"username": name})
				if err != nil || status != acknowledgeOK {
					if !killed.Load() {
						t.Errorf("create %s before the kill: status %d, err %v, body %s", name, status, err, body)
					}
					return // after the kill every request fails: stop
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if ackCount.Add(1) >= killAfter {
					closeOnce.Do(func() { close(reachKill) })
				}
			}
		})
	}
	workersDone := make(chan struct{})
	go func() { wg.Wait(); close(workersDone) }()

	select {
	case <-reachKill:
	case <-workersDone:
		t.Fatalf("the burst ended before %d creates were acknowledged", killAfter)
	case <-time.After(cliWaitBound):
		t.Fatalf("fewer than %d creates acknowledged", killAfter)
	}
	killed.Store(true)
	ackedAtKill := ackCount.Load()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	state := s.waitExit()
	if ws, ok := state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("server exit state %v, want killed by SIGKILL", state)
	}
	select {
	case <-workersDone:
	case <-time.After(cliWaitBound):
		t.Fatalf("workers did not stop after the kill")
	}
	mu.Lock()
	recorded := slices.Clone(acked)
	mu.Unlock()
	t.Logf("%d creates answered 201 before the kill (%d when SIGKILL was sent)", len(recorded), ackedAtKill)

	// Restart on the same database: every acknowledged user is there.
	s2 := cliStartServer(t, db, env...)
	names := s2.usernames("crash", cliAPIKey)
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	var lost []string
	for _, n := range recorded {
		if !have[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged users lost after SIGKILL, e.g. %v", len(lost), len(recorded), lost[:min(5, len(lost))])
	}
	// The exact lookup agrees for one of them.
	probe := recorded[len(recorded)-1]
	var one cliUserList
	if err := json.Unmarshal(s2.must(http.MethodGet, "/admin/realms/crash/users?exact=true&username="+url.QueryEscape(probe), cliAPIKey, nil, http.StatusOK), &one); err != nil {
		t.Fatal(err)
	}
	if one.Total != 1 || len(one.Users) != 1 || one.Users[0].Username != probe {
		t.Errorf("exact lookup of %s: %+v", probe, one)
	}
	t.Logf("%d users in the realm after restart", len(names))
	s2.stopGracefully()
	return len(names), len(recorded)
}

// cliCheckSQLiteFile checks the file a killed server left: intact, and
// holding the users the restarted server listed.
func cliCheckSQLiteFile(t *testing.T, db string, listed, acknowledged int) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var verdict string
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if verdict != "ok" {
		t.Errorf("integrity_check = %q, want ok", verdict)
	}
	var count int
	if err := conn.QueryRow("SELECT count(*) FROM users u JOIN realms r ON r.id = u.realm_id WHERE r.name = 'crash'").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != listed || count < acknowledged {
		t.Errorf("users in the file: %d; listed %d; acknowledged %d", count, listed, acknowledged)
	}
}

// The tests below pin bugs found while writing these tests.

// TestCLIBackupOfMissingDatabaseFails: a mistyped --db must not yield a
// successful, empty backup.
func TestCLIBackupOfMissingDatabaseFails(t *testing.T) {
	dir := t.TempDir()
	res := cliRun(t, dir, cliEnv(), "", "backup", "--without-key", "--db", filepath.Join(dir, "typo.db"), filepath.Join(dir, "out.db"))
	if res.code == 0 {
		t.Errorf("backup of a missing database exited 0; stderr:\n%s", res.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("backup of a missing database left files behind: %v", entries)
	}
}

// TestCLIImportFlagAfterFile: the usage text shows `import FILE ... [--overwrite]`.
func TestCLIImportFlagAfterFile(t *testing.T) {
	dir := t.TempDir()
	env := cliEnv("IDENPLANE_MASTER_KEY=" + cliMasterKey(t))
	file := filepath.Join(dir, "r.json")
	if err := os.WriteFile(file, []byte(`{"formatVersion": 1, "name": "acme"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	for range 2 {
		res := cliRun(t, dir, env, "", "import", "--db", db, file, "--overwrite")
		if res.code != 0 || !strings.Contains(res.stdout, "imported realm acme") {
			t.Fatalf("import FILE --overwrite: code %d, stderr:\n%s", res.code, res.stderr)
		}
	}
}

// TestCLIImportRenamedExport: an export whose realm was renamed keeps the
// realm's id; the import names the realm that holds it, in words, and
// --as-copy imports it beside that realm.
func TestCLIImportRenamedExport(t *testing.T) {
	dir := t.TempDir()
	env := cliEnv("IDENPLANE_MASTER_KEY=" + cliMasterKey(t))
	db := filepath.Join(dir, "x.db")
	const realmID, clientID = "5567eeab-f2ef-46c7-8607-eb571e462228", "0d3c1f4e-6a0b-4b8e-9d51-8f3a2c7e1b90"
	write := func(name, doc string) string {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	original := write("acme.json", `{"formatVersion": 1, "id": "`+realmID+`", "name": "acme", "clients": [{"id": "`+clientID+`", "clientId": "app"}]}`)
	renamed := write("renamed.json", `{"formatVersion": 1, "id": "`+realmID+`", "name": "acme2", "clients": [{"id": "`+clientID+`", "clientId": "app"}]}`)
	newRealmID := write("new-id.json", `{"formatVersion": 1, "id": "9b2f6c1a-3e4d-4f5a-8b6c-7d8e9f0a1b2c", "name": "acme3", "clients": [{"id": "`+clientID+`", "clientId": "app"}]}`)
	if res := cliRun(t, dir, env, "", "import", "--db", db, original); res.code != 0 {
		t.Fatalf("import: code %d, stderr:\n%s", res.code, res.stderr)
	}
	for _, tc := range []struct{ file, want string }{
		{renamed, "realm acme already has id " + realmID},
		{newRealmID, "another realm has a client with id " + clientID},
	} {
		res := cliRun(t, dir, env, "", "import", "--db", db, tc.file)
		lower := strings.ToLower(res.stderr)
		if res.code == 0 || !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "--as-copy") ||
			strings.Contains(lower, "constraint") || strings.Contains(lower, "sqlite") || strings.Contains(lower, "sql:") {
			t.Errorf("import %s: code %d, stderr:\n%s", filepath.Base(tc.file), res.code, res.stderr)
		}
	}
	if res := cliRun(t, dir, env, "", "import", "--db", db, "--as-copy", "--overwrite", renamed); res.code == 0 {
		t.Errorf("import --as-copy --overwrite succeeded: %s", res.stdout)
	}
	for _, file := range []string{renamed, newRealmID} {
		res := cliRun(t, dir, env, "", "import", "--db", db, "--as-copy", file)
		if res.code != 0 || !strings.Contains(res.stdout, "imported realm acme") {
			t.Errorf("import --as-copy %s: code %d, stderr:\n%s", filepath.Base(file), res.code, res.stderr)
		}
	}
	for _, realm := range []string{"acme", "acme2", "acme3"} {
		if res := cliRun(t, dir, env, "", "export", "--db", db, "--realm", realm); res.code != 0 || !strings.Contains(res.stdout, `"clientId": "app"`) {
			t.Errorf("export %s: code %d, stdout %s, stderr:\n%s", realm, res.code, res.stdout, res.stderr)
		}
	}
}

// TestCLIMissingKeyFileOnExistingDatabase: a database whose .key file was
// not restored must not get a fresh master key silently.
func TestCLIMissingKeyFileOnExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey}
	s := cliStartServer(t, db, env...)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "sec", "smtpPassword": "smtp-secret"}, http.StatusCreated)
	s.stopGracefully()
	if err := os.Remove(db + ".key"); err != nil {
		t.Fatal(err)
	}

	s2 := cliLaunch(t, db, newCLILog(), env)
	if err := s2.waitReady(); err == nil {
		status, body, _ := s2.do(http.MethodGet, "/admin/realms/sec", cliAPIKey, nil)
		t.Fatalf("server started on an existing database without its master key file; GET realm: %d %s", status, body)
	}
	if !strings.Contains(s2.stderr.String(), ".key") {
		t.Errorf("exit code %d; stderr does not name the key file:\n%s", s2.cmd.ProcessState.ExitCode(), s2.stderr)
	}
	if _, err := os.Stat(db + ".key"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a new master key file was made for an existing database")
	}
}

// TestAdminCreateCommand: `idenplane admin create` makes an administrator
// with the permissions given and prints a one-time enrolment link, which
// the server then serves as the page where the password is chosen.
func TestAdminCreateCommand(t *testing.T) {
	dir := t.TempDir()
	masterKey := "IDENPLANE_MASTER_KEY=" + cliMasterKey(t)
	db := filepath.Join(dir, "a.db")
	res := cliRun(t, dir, cliEnv(masterKey), "", "admin", "create", "--db", db, "--base-url", "https://id.example.test",
		"--permissions", "users:read,realm:read", "--email", "ada@example.test", "ada")
	if res.code != 0 {
		t.Fatalf("admin create: code %d, stderr:\n%s", res.code, res.stderr)
	}
	m := regexp.MustCompile(`https://id\.example\.test(/realms/idenplane-admin/reset-password\?token=[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(res.stdout)
	if m == nil || !strings.Contains(res.stdout, "Created administrator ada (realm:read, users:read)") {
		t.Fatalf("admin create printed:\n%s", res.stdout)
	}
	for _, bad := range [][]string{
		{"admin", "create", "--db", db, "ada"},                                                   // taken
		{"admin", "create", "--db", db, "--permissions", "users:fly", "bea"},                     // unknown permission
		{"admin", "create", "--db", db, "--realm", "nope", "--permissions", "users:read", "cid"}, // unknown realm
		{"admin", "create", "--db", db},                                                          // no name
	} {
		if res := cliRun(t, dir, cliEnv(masterKey), "", bad...); res.code == 0 {
			t.Errorf("%v: succeeded, stdout %s", bad, res.stdout)
		}
	}

	s := cliStartServer(t, db, masterKey, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	resp, err := http.Get(s.base + m[1])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `name="password"`) {
		t.Fatalf("enrolment link: status %d\n%s", resp.StatusCode, page)
	}
	var accounts []struct {
		Username    string   `json:"username"`
		Permissions []string `json:"permissions"`
		CreatedBy   string   `json:"createdBy"`
	}
	if err := json.Unmarshal(s.must(http.MethodGet, "/admin/accounts", cliAPIKey, nil, http.StatusOK), &accounts); err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 1 || accounts[0].Username != "ada" || strings.Join(accounts[0].Permissions, ",") != "realm:read,users:read" ||
		accounts[0].CreatedBy != "cli" {
		t.Fatalf("accounts %+v", accounts)
	}
}

// On PostgreSQL the server takes its master key from configuration and
// never makes one; backup and restore, which write SQLite files, refuse
// and name the tools that do it; and what a server wrote, a restarted one
// reads with the same key.
func TestCLIPostgres(t *testing.T) {
	// The server trusts local connections: the password is there to be
	// kept out of the log.
	db, dir := strings.Replace(pgtest.Database(t), "postgres@", "postgres:hunter2@", 1), t.TempDir()
	res := cliRun(t, dir, cliEnv(), "", "serve", "--db", db)
	if res.code == 0 || !strings.Contains(res.stderr, "--master-key-file") {
		t.Fatalf("serve on PostgreSQL without a key: exit %d, stderr %s", res.code, res.stderr)
	}
	keyFile := filepath.Join(dir, "master.key")
	if err := os.WriteFile(keyFile, []byte(cliMasterKey(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey, "IDENPLANE_MASTER_KEY_FILE=" + keyFile}
	// migrate before a rollout: the schema is made, and says its version.
	if res := cliRun(t, dir, cliEnv(env...), "", "migrate", "--db", db); res.code != 0 ||
		!regexp.MustCompile(`is at schema version [1-9][0-9]*\n`).MatchString(res.stdout) || strings.Contains(res.stdout, "hunter2") {
		t.Fatalf("migrate: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	s := cliStartServer(t, db, append(env, "IDENPLANE_DB_READERS=2", "IDENPLANE_DB_CONN_LIFETIME=5m", "IDENPLANE_DB_STATEMENT_TIMEOUT=30s")...)
	if strings.Contains(s.stderr.String(), "hunter2") || !strings.Contains(s.stderr.String(), "postgres://postgres:xxxxx@") {
		t.Fatalf("the log shows the database's password, or not the database: %s", s.stderr)
	}
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "pg", "smtpHost": "smtp.pg.test",
		"smtpPassword": "sealed-secret"}, http.StatusCreated)
	s.must(http.MethodPost, "/admin/realms/pg/users", cliAPIKey, map[string]any{"username": "ann"}, http.StatusCreated)
	s.stopGracefully()
	if _, err := os.Stat(db + ".key"); err == nil {
		t.Fatal("a key file was made beside the database URL")
	}

	s = cliStartServer(t, db, env...)
	if got := s.usernames("pg", cliAPIKey); !slices.Equal(got, []string{"ann"}) {
		t.Fatalf("users after a restart: %v", got)
	}
	s.stopGracefully()

	for _, args := range [][]string{
		{"backup", "--without-key", "--db", db, filepath.Join(dir, "out.db")},
		{"restore", "--db", db, filepath.Join(dir, "out.db")},
	} {
		res := cliRun(t, dir, cliEnv(env...), "", args...)
		if res.code == 0 || !strings.Contains(res.stderr, "pg_") {
			t.Errorf("%s on PostgreSQL: exit %d, stderr %s; want a refusal naming pg_dump or pg_restore", args[0], res.code, res.stderr)
		}
	}
}

// Readiness follows the database: while PostgreSQL is away /health/ready
// answers 503, and so does a write (the database is unavailable, not the
// request wrong); once it is back, 200 again, with no restart of the
// server, whose next write lands.
func TestCLIPostgresReadinessFollowsDatabase(t *testing.T) {
	pg := pgtest.NewServer(t)
	db := pg.Database(t)
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey, "IDENPLANE_MASTER_KEY=" + cliMasterKey(t)}
	s := cliStartServer(t, db, env...)
	ready := func() int {
		status, _, err := s.do(http.MethodGet, "/health/ready", "", nil)
		if err != nil {
			t.Fatalf("readiness: %v", err)
		}
		return status
	}
	until := func(want int) {
		t.Helper()
		deadline := time.Now().Add(cliWaitBound)
		for got := ready(); got != want; got = ready() {
			if time.Now().After(deadline) {
				t.Fatalf("readiness stayed %d, want %d", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	until(http.StatusOK)
	pg.Stop(t)
	until(http.StatusServiceUnavailable)
	if status, _, _ := s.do(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "away"}); status != http.StatusServiceUnavailable {
		t.Errorf("a write while the database is away: %d, want 503", status)
	}
	pg.Start(t)
	until(http.StatusOK)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "back"}, http.StatusCreated)
	if s.exited() {
		t.Fatal("the server exited while its database was away")
	}
	s.stopGracefully()
}

// TestCLIImportFrom: `import --from keycloak FILE` and `import --from auth0
// --realm NAME USERS PASSWORDS` import the fixtures of ../shared/fixtures as
// the admin API does, printing the report; a dry run writes nothing.
func TestCLIImportFrom(t *testing.T) {
	fixtures := filepath.Join("..", "shared", "fixtures")
	if _, err := os.Stat(filepath.Join(fixtures, "keycloak")); err != nil {
		fixtures = filepath.Join("..", "..", "shared", "fixtures") // a work tree one level further down
	}
	if _, err := os.Stat(filepath.Join(fixtures, "keycloak")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("../shared/fixtures is missing, and CI=true needs it")
		}
		t.Skip("../shared/fixtures is missing: the Keycloak and Auth0 exports")
	}
	fixtures, _ = filepath.Abs(fixtures)
	dir := t.TempDir()
	env := cliEnv("IDENPLANE_MASTER_KEY=" + cliMasterKey(t))
	db := filepath.Join(dir, "x.db")
	spa := filepath.Join(fixtures, "keycloak", "quickstart-spa.json")
	users, passwords := filepath.Join(fixtures, "auth0", "users.ndjson"), filepath.Join(fixtures, "auth0", "passwords.ndjson")
	res := cliRun(t, dir, env, "", "import", "--db", db, "--from", "keycloak", "--dry-run", spa)
	if res.code != 0 || !strings.Contains(res.stdout, "dry run") {
		t.Fatalf("dry run: code %d, stdout %s, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = cliRun(t, dir, env, "", "import", "--db", db, "--from", "keycloak", spa)
	if res.code != 0 || !strings.Contains(res.stdout, "imported into realm quickstart: ") || !strings.Contains(res.stdout, "2 user") ||
		!strings.Contains(res.stdout, "skipped clients[0].redirectUris[0]") {
		t.Fatalf("import --from keycloak: code %d, stdout %s, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = cliRun(t, dir, env, "", "import", "--db", db, "--from", "auth0", "--realm", "quickstart", users, passwords)
	if res.code != 0 || !strings.Contains(res.stdout, "5 user") {
		t.Fatalf("import --from auth0: code %d, stdout %s, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if res := cliRun(t, dir, env, "", "export", "--db", db, "--realm", "quickstart", "--include-users"); res.code != 0 ||
		!strings.Contains(res.stdout, `"username": "johndoe"`) || !strings.Contains(res.stdout, `"username": "alice"`) {
		t.Fatalf("export: code %d, stdout %.600s, stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, args := range [][]string{{"--from", "auth0", users}, {"--from", "ldap", spa}, {"--from", "keycloak", spa, users}} {
		if res := cliRun(t, dir, env, "", append([]string{"import", "--db", db}, args...)...); res.code == 0 {
			t.Errorf("import %v succeeded: %s", args, res.stdout)
		}
	}
}
