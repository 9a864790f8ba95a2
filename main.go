// Command idenplane is a self-contained identity and access management server.
package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/store"
)

//go:embed schema.sql
var schema string

// defaultMemoryLimit is the Go heap's soft limit unless GOMEMLIMIT sets
// one. Every password hash allocates 19 MiB that is garbage the moment it
// is done, and without a limit the collector lets the heap grow to twice
// its last live size before it runs: a login storm held the RSS near
// 180 MB. Near the limit the collector runs sooner instead; the limit is
// soft, so a larger live heap (a big export) is slowed, never refused.
// It leaves room for every hash slot's buffer: closer to the live heap,
// the collector and the page faults of memory handed back and taken again
// cost password sign-ins an eighth of their rate (at 104 MiB on 2 cores).
func defaultMemoryLimit() int64 {
	return 80<<20 + int64(runtime.GOMAXPROCS(0))*app.HashMemory
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "idenplane:", err)
		os.Exit(1)
	}
}

const usage = `Usage: idenplane [command] [flags]

Commands:
  serve                 run the server (the default)
  routes                print every route as "METHOD PATH"
  version               print the version
  backup FILE           write a consistent copy of the database to FILE
  export --realm NAME   print a realm as JSON [--include-users] [--include-secrets]
  import FILE           create a realm from an export ("-" reads stdin) [--overwrite]
  loadtest              seed a throw-away database, start the server and measure it

Run "idenplane COMMAND -h" for a command's flags.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stdout, stderr)
	case "routes":
		return printRoutes(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "idenplane", version)
		return nil
	case "backup":
		return backup(args, stderr)
	case "export":
		return exportRealm(args, stdout, stderr)
	case "import":
		return importRealm(args, stdin, stdout, stderr)
	case "loadtest":
		return loadTest(args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// config is every setting, each a flag with an environment twin.
type config struct {
	addr, db, baseURL, logFormat string
	masterKeyEnv                 string
	adminAPIKey                  string
	adminUser, adminPassword     string
	metricsPublic                string
	trustedProxies               string
	trustedPrefixes              []netip.Prefix // trustedProxies, read by validate
}

func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *config) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{
		masterKeyEnv:  os.Getenv("IDENPLANE_MASTER_KEY"),
		adminAPIKey:   os.Getenv("IDENPLANE_ADMIN_API_KEY"),
		adminUser:     os.Getenv("IDENPLANE_ADMIN_USER"),
		adminPassword: os.Getenv("IDENPLANE_ADMIN_PASSWORD"),
		metricsPublic: os.Getenv("IDENPLANE_METRICS_PUBLIC"),
	}
	fs.StringVar(&c.db, "db", envOr("IDENPLANE_DB", "./idenplane.db"), "SQLite database file (IDENPLANE_DB)")
	fs.StringVar(&c.logFormat, "log-format", envOr("IDENPLANE_LOG_FORMAT", "text"), "log format, text or json (IDENPLANE_LOG_FORMAT)")
	return fs, c
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// validate checks every setting and reports all failures at once, each
// naming its setting.
func (c *config) validate(serving bool) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.db == "" {
		bad("--db (IDENPLANE_DB) must not be empty")
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		bad("--log-format (IDENPLANE_LOG_FORMAT) must be text or json, not %q", c.logFormat)
	}
	if _, err := c.masterKeyFromEnv(); err != nil {
		errs = append(errs, err)
	}
	if !serving {
		return errors.Join(errs...)
	}
	if _, port, err := net.SplitHostPort(c.addr); err != nil {
		bad("--addr (IDENPLANE_ADDR) must be host:port or :port, not %q", c.addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("--addr (IDENPLANE_ADDR) has an invalid port %q", port)
	}
	if u, err := url.Parse(c.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		bad("--base-url (IDENPLANE_BASE_URL) must be an absolute http or https URL without query or fragment, not %q", c.baseURL)
	}
	if c.metricsPublic != "" {
		if _, err := strconv.ParseBool(c.metricsPublic); err != nil {
			bad("IDENPLANE_METRICS_PUBLIC must be true or false, not %q", c.metricsPublic)
		}
	}
	if prefixes, err := app.ParseTrustedProxies(c.trustedProxies); err != nil {
		bad("--trusted-proxies (IDENPLANE_TRUSTED_PROXIES): %v", err)
	} else {
		c.trustedPrefixes = prefixes
	}
	if c.adminAPIKey != "" && len(c.adminAPIKey) < 32 {
		bad("IDENPLANE_ADMIN_API_KEY must be at least 32 characters")
	}
	if (c.adminUser == "") != (c.adminPassword == "") {
		bad("IDENPLANE_ADMIN_USER and IDENPLANE_ADMIN_PASSWORD must be set together")
	}
	if c.adminPassword != "" && len(c.adminPassword) < 12 {
		bad("IDENPLANE_ADMIN_PASSWORD must be at least 12 characters")
	}
	return errors.Join(errs...)
}

func (c *config) masterKeyFromEnv() ([]byte, error) {
	if c.masterKeyEnv == "" {
		return nil, nil
	}
	for _, decode := range []func(string) ([]byte, error){
		hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString,
	} {
		if k, err := decode(c.masterKeyEnv); err == nil && len(k) == store.MasterKeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("IDENPLANE_MASTER_KEY must be %d bytes in hex or base64", store.MasterKeySize)
}

// masterKey is IDENPLANE_MASTER_KEY, or else the key file beside the
// database, made with the database on first start. It is kept out of the
// database on purpose: a copy of the database alone reveals no secret.
func (c *config) masterKey() ([]byte, error) {
	if k, err := c.masterKeyFromEnv(); k != nil || err != nil {
		return k, err
	}
	path := c.db + ".key"
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat(c.db); statErr == nil {
			return nil, fmt.Errorf("master key file %s is missing for the existing database %s: restore it or set IDENPLANE_MASTER_KEY", path, c.db)
		}
		return createKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read master key: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(k) != store.MasterKeySize {
		return nil, fmt.Errorf("master key file %s must hold %d bytes in hex", path, store.MasterKeySize)
	}
	return k, nil
}

func createKeyFile(path string) ([]byte, error) {
	k := make([]byte, store.MasterKeySize)
	_, _ = rand.Read(k)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create master key file: %w", err)
	}
	if _, err := fmt.Fprintln(f, hex.EncodeToString(k)); err != nil {
		f.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	return k, f.Close()
}

func (c *config) logger(w io.Writer) *slog.Logger {
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// openExistingStore opens the database for commands that only read it, and
// refuses to make an empty one.
func (c *config) openExistingStore(ctx context.Context) (*store.Store, error) {
	if _, err := os.Stat(c.db); err != nil {
		return nil, fmt.Errorf("database %s: %w", c.db, err)
	}
	st, _, err := c.openStore(ctx)
	return st, err
}

func (c *config) openStore(ctx context.Context) (*store.Store, []byte, error) {
	key, err := c.masterKey()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, store.Config{Path: c.db, Schema: schema, MasterKey: key})
	return st, key, err
}

func (c *config) newApp(ctx context.Context, st *store.Store, key []byte, stdout io.Writer, log *slog.Logger) (*app.App, error) {
	return app.New(ctx, st, app.Config{
		BaseURL: strings.TrimRight(c.baseURL, "/"), Version: version, MasterKey: key,
		MetricsPublic: c.metricsPublic == "true" || c.metricsPublic == "1",
		AdminAPIKey:   c.adminAPIKey, AdminUser: c.adminUser, AdminPassword: c.adminPassword,
		TrustedProxies: c.trustedPrefixes,
		Stdout:         stdout, Logger: log,
	})
}

func serveFlags(name string, stderr io.Writer) (*flag.FlagSet, *config) {
	fs, c := newFlagSet(name, stderr)
	fs.StringVar(&c.addr, "addr", envOr("IDENPLANE_ADDR", ":3000"), "listen address (IDENPLANE_ADDR)")
	fs.StringVar(&c.baseURL, "base-url", envOr("IDENPLANE_BASE_URL", "http://localhost:3000"), "external base URL (IDENPLANE_BASE_URL)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", os.Getenv("IDENPLANE_TRUSTED_PROXIES"),
		"comma-separated addresses and CIDR ranges of reverse proxies whose X-Forwarded-For and Forwarded headers are believed (IDENPLANE_TRUSTED_PROXIES)")
	return fs, c
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs, c := serveFlags("serve", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := c.validate(true); err != nil {
		return err
	}
	log := c.logger(stderr)
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit())
	}
	// The OpenID Connect library logs through the default logger only.
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	st, key, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := c.newApp(ctx, st, key, stdout, log)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              c.addr,
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	log.Info("idenplane listening", "addr", ln.Addr().String(), "db", c.db, "baseURL", c.baseURL, "version", version)
	go a.RunJobs(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

func printRoutes(args []string, stdout, stderr io.Writer) error {
	fs, c := serveFlags("routes", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// A throw-away database: listing routes touches no real data.
	dir, err := os.MkdirTemp("", "idenplane-routes")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	key := make([]byte, store.MasterKeySize)
	st, err := store.Open(context.Background(), store.Config{Path: dir + "/routes.db", Schema: schema, MasterKey: key})
	if err != nil {
		return err
	}
	defer st.Close()
	c.adminAPIKey = strings.Repeat("x", 32)
	a, err := c.newApp(context.Background(), st, key, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	routes := a.Routes()
	slices.Sort(routes)
	for _, r := range routes {
		fmt.Fprintln(stdout, r)
	}
	return nil
}

// parseWithArg parses flags given before or after the one positional argument.
func parseWithArg(fs *flag.FlagSet, args []string, usage string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", errors.New(usage)
	}
	arg := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return "", err
	}
	if fs.NArg() != 0 {
		return "", errors.New(usage)
	}
	return arg, nil
}

func backup(args []string, stderr io.Writer) error {
	fs, c := newFlagSet("backup", stderr)
	target, err := parseWithArg(fs, args, "usage: idenplane backup [--db FILE] TARGET")
	if err != nil {
		return err
	}
	if err := c.validate(false); err != nil {
		return err
	}
	if _, err := os.Stat(target); err == nil {
		return fmt.Errorf("backup target %s already exists", target)
	}
	st, err := c.openExistingStore(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Backup(context.Background(), target); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "backed up %s to %s (keep %s.key, or IDENPLANE_MASTER_KEY, safe too: it decrypts the secrets)\n", c.db, target, c.db)
	return nil
}

func exportRealm(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("export", stderr)
	realm := fs.String("realm", "", "realm to export")
	users := fs.Bool("include-users", false, "include the realm's users")
	secrets := fs.Bool("include-secrets", false, "include secrets: SMTP password, provider keys, password hashes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *realm == "" {
		return errors.New("export: --realm is required")
	}
	if err := c.validate(false); err != nil {
		return err
	}
	st, err := c.openExistingStore(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	data, err := app.ExportRealm(context.Background(), st, *realm, *users, *secrets)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, string(data))
	return err
}

func importRealm(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("import", stderr)
	overwrite := fs.Bool("overwrite", false, "replace an existing realm of the same name")
	file, err := parseWithArg(fs, args, "usage: idenplane import [--overwrite] FILE")
	if err != nil {
		return err
	}
	if err := c.validate(false); err != nil {
		return err
	}
	var data []byte
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	st, _, err := c.openStore(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	realm, err := app.ImportRealm(context.Background(), st, data, *overwrite, time.Now())
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	fmt.Fprintf(stdout, "imported realm %s\n", realm.Name)
	return nil
}

func loadTest(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 10*time.Second, "how long each scenario is measured, after a warm-up")
	concurrency := fs.Int("concurrency", 32, "connections per scenario")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run (default all): "+strings.Join(app.LoadTestScenarios(), ","))
	users := fs.Int("users", 100_000, "users seeded into the realm the page and lookup scenarios read (the targets name 1000000)")
	sessions := fs.Int("sessions", 100_000, "active SSO sessions seeded")
	storm := fs.Int("storm", 200, "connections of the password-grant storm")
	jsonOut := fs.Bool("json", false, "print the results as JSON")
	noEvents := fs.Bool("no-events", false, "leave login events off in the realms (they are on by default)")
	inProcess := fs.Bool("in-process", false, "run the server in this process instead of as a child (RSS and CPU then include the load generator)")
	profile := fs.String("profile", "", "write a CPU profile per scenario into this directory (runs the server in-process)")
	dir := fs.String("dir", "", "directory for the database (default: a temporary one, removed afterwards)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("loadtest takes no arguments")
	}
	cfg := app.LoadTestConfig{Schema: schema, Version: version, Duration: *duration, Concurrency: *concurrency,
		Users: *users, Sessions: *sessions, StormConcurrency: *storm, JSON: *jsonOut, NoEvents: *noEvents, ProfileDir: *profile,
		Dir: *dir, Progress: stderr}
	if *scenarios != "" {
		cfg.Scenarios = strings.Split(*scenarios, ",")
	}
	if !*inProcess && *profile == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the idenplane binary to start: %w", err)
		}
		cfg.Executable = exe
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return app.RunLoadTest(ctx, cfg, stdout)
}
