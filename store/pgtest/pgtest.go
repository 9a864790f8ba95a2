// Package pgtest runs a real PostgreSQL server for tests: Debian's
// postgresql package, in a temporary directory, on a free loopback port.
// A test package starts it on first use (Database) and stops it when its
// tests end (Main). Without PostgreSQL a test is skipped with a message;
// under CI=true that is a failure.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// server is the test binary's one PostgreSQL: starting one costs about a
// second, so the tests of a package share it, each in a database of its
// own.
type server struct {
	once      sync.Once
	templates sync.Map // name: *template
	dir       string
	bin       string
	port      int
	asUser    string // the user the server runs as, when the tests run as root
	err       error
	started   bool
	next      atomic.Int64
}

var shared server // the package's tests share one server: see server

// Main runs a test package's tests and then stops the server they
// started, if any: call it from TestMain, os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	shared.stop()
	return code
}

// Database answers the URL of a new, empty database on the shared server,
// dropped when t ends.
func Database(t testing.TB) string {
	t.Helper()
	ready(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), shared.next.Add(1))
	if err := shared.exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { _ = shared.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	return shared.url(name)
}

// template is a kind of database tests ask for by name: made once, and
// kept in a pool of copies that tests take and give back emptied.
type template struct {
	once sync.Once
	name string
	err  error
	mu   sync.Mutex
	free []string // copies no test holds, emptied
}

// DatabaseFrom answers the URL of a database that prepare made (given its
// URL), with every table but schema_version empty: the first time a test
// asks for the template called name, prepare runs once; each test then
// takes a copy no other test holds, and gives it back emptied when it
// ends. Emptying a database costs a small part of what making or
// migrating one does.
func DatabaseFrom(t testing.TB, name string, prepare func(url string) error) string {
	t.Helper()
	ready(t)
	v, _ := shared.templates.LoadOrStore(name, &template{})
	tpl := v.(*template)
	tpl.once.Do(func() {
		tpl.name = fmt.Sprintf("tpl%d_%d", os.Getpid(), shared.next.Add(1))
		if tpl.err = shared.exec("CREATE DATABASE " + tpl.name); tpl.err == nil {
			tpl.err = prepare(shared.url(tpl.name))
		}
	})
	if tpl.err != nil {
		t.Fatalf("template database %s: %v", name, tpl.err)
	}
	tpl.mu.Lock()
	var db string
	if n := len(tpl.free); n > 0 {
		db, tpl.free = tpl.free[n-1], tpl.free[:n-1]
	}
	tpl.mu.Unlock()
	if db == "" {
		db = fmt.Sprintf("t%d_%d", os.Getpid(), shared.next.Add(1))
		if err := shared.exec("CREATE DATABASE " + db + " TEMPLATE " + tpl.name); err != nil {
			t.Fatalf("create database %s: %v", db, err)
		}
	}
	t.Cleanup(func() {
		if err := empty(shared.url(db)); err != nil {
			_ = shared.exec("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)")
			return
		}
		tpl.mu.Lock()
		tpl.free = append(tpl.free, db)
		tpl.mu.Unlock()
	})
	return shared.url(db)
}

// empty deletes the rows of every table of the database but
// schema_version, with the foreign keys' triggers off (the rows all go):
// on tables of a few rows, a third of what TRUNCATE takes.
func empty(url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	var deletes string
	err = db.QueryRow(`SELECT coalesce(string_agg('DELETE FROM ' || quote_ident(table_name), '; '), '') FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_version'`).Scan(&deletes)
	if err != nil || deletes == "" {
		return err
	}
	_, err = db.Exec("BEGIN; SET LOCAL session_replication_role = replica; " + deletes + "; COMMIT")
	return err
}

func (s *server) exec(statement string) error {
	db, err := sql.Open("pgx", s.url("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(context.Background(), statement)
	return err
}

// ready starts the shared server on first use; without PostgreSQL it
// skips t, or fails it under CI=true.
func ready(t testing.TB) {
	t.Helper()
	shared.once.Do(shared.start)
	if shared.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL: %v", shared.err)
		}
		t.Skipf("PostgreSQL unavailable (install Debian's postgresql package): %v", shared.err)
	}
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// binDir finds the server's programs: Debian installs each major version
// under /usr/lib/postgresql/N/bin; the newest wins.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no pg_ctl under /usr/lib/postgresql/*/bin or on PATH")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func (s *server) start() {
	if s.bin, s.err = binDir(); s.err != nil {
		return
	}
	if s.dir, s.err = os.MkdirTemp("", "idenplane-pg-"); s.err != nil {
		return
	}
	// PostgreSQL refuses to run as root: the directory and the server go
	// to the postgres user.
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		u, err := user.Lookup(s.asUser)
		if err != nil {
			s.err = fmt.Errorf("running as root, and no postgres user: %w", err)
			return
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if s.err = os.Chown(s.dir, uid, gid); s.err != nil {
			return
		}
	}
	if s.port, s.err = freePort(); s.err != nil {
		return
	}
	data := filepath.Join(s.dir, "data")
	if s.err = s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync"); s.err != nil {
		return
	}
	if s.err = s.pgctlStart(); s.err != nil {
		return
	}
	s.started = true
}

// pgctlStart starts the server on its data directory and port. fsync is
// off: a test's database is thrown away; the server's own durability is
// PostgreSQL's, not what these tests check.
func (s *server) pgctlStart() error {
	opts := fmt.Sprintf("-k %s -p %d -h 127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=400", s.dir, s.port)
	return s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start")
}

func (s *server) pgctlStop() error {
	return s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
}

func (s *server) stop() {
	if !s.started {
		return
	}
	_ = s.pgctlStop()
	_ = os.RemoveAll(s.dir)
}

// Server is a PostgreSQL server of one test's own, which the test may
// stop and start again (on the same port, with its databases), to see
// what a client does while its database is away.
type Server struct{ s *server }

// NewServer starts a server for t, stopped and removed when t ends; it
// skips t without PostgreSQL, or fails it under CI=true.
func NewServer(t testing.TB) *Server {
	t.Helper()
	ready(t) // the shared server tells whether PostgreSQL is there at all
	own := &server{}
	own.start()
	if own.err != nil {
		t.Fatalf("PostgreSQL: %v", own.err)
	}
	t.Cleanup(own.stop)
	return &Server{s: own}
}

// Database is the URL of a new database on the server.
func (v *Server) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), v.s.next.Add(1))
	if err := v.s.exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return v.s.url(name)
}

// Stop stops the server at once, as a crash or a network cut would
// look to its clients.
func (v *Server) Stop(t testing.TB) {
	t.Helper()
	if err := v.s.pgctlStop(); err != nil {
		t.Fatal(err)
	}
}

// Start starts the stopped server again.
func (v *Server) Start(t testing.TB) {
	t.Helper()
	if err := v.s.pgctlStart(); err != nil {
		t.Fatal(err)
	}
}

func (s *server) run(program string, args ...string) error {
	path := filepath.Join(s.bin, program)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("%s: %w: %s %s", program, err, strings.TrimSpace(string(out)), log)
	}
	return nil
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// EnvTestDB names the environment variable under which a test binary's
// helpers open their stores on PostgreSQL (apptest.OpenStore): set to
// "postgres" by Rerun.
const EnvTestDB = "IDENPLANE_TEST_DB"

// OnPostgres says whether this test binary runs its stores on PostgreSQL.
func OnPostgres() bool { return os.Getenv(EnvTestDB) == "postgres" }

// Rerun runs the tests of this binary that pattern matches (go test's
// -run) again in a child process whose stores are on PostgreSQL, and
// fails t if any of them fails or none ran. The child starts its own
// server; the package's TestMain must be Main's. In the child itself Rerun
// skips.
func Rerun(t *testing.T, pattern string) {
	t.Helper()
	if OnPostgres() {
		t.Skip("this run is the one on PostgreSQL")
	}
	ready(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", pattern, "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), EnvTestDB+"=postgres")
	out, err := cmd.CombinedOutput()
	passed := strings.Count(string(out), "\n--- PASS: ")
	if strings.HasPrefix(string(out), "--- PASS: ") {
		passed++
	}
	if err != nil || passed == 0 {
		t.Fatalf("the tests %s on PostgreSQL: %v, %d passed:\n%s", pattern, err, passed, tail(string(out), 200))
	}
	t.Logf("%d tests passed on PostgreSQL", passed)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
