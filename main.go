// Command idenplane is a self-contained identity and access management server.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/adminaccounts"
	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/completion"
	"github.com/idenplane/idenplane/app/configfile"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/loadtest"
	"github.com/idenplane/idenplane/app/migration"
	"github.com/idenplane/idenplane/app/telemetry"
	"github.com/idenplane/idenplane/app/tlsserver"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

//go:embed schema.sql
var schema string

//go:embed schema_postgres.sql
var postgresSchema string

// defaultMemoryLimit is the Go heap's soft limit unless GOMEMLIMIT sets
// one: the heap's live part (about 16 MiB under a sign-in storm besides
// the hashes), plus each hash slot's working memory (19 MiB, kept from one
// hash to the next), plus room for a few megabytes of garbage between
// collections. Without a limit the collector lets the heap grow to twice
// its live size, the hashes' memory included. The limit is soft, so a
// larger live heap (a big export) is slowed, never refused. Measured on 2
// cores under a 200-connection storm: 64 MiB held the RSS at 92 MB with no
// loss of sign-ins; at 58 MiB the collector ran so often that half the
// storm was refused.
func defaultMemoryLimit() int64 {
	return 28<<20 + int64(runtime.GOMAXPROCS(0))*identity.HashMemory
}

// version, commit and date are set at build time with -ldflags
// "-X main.version=… -X main.commit=… -X main.date=…" (make build, make
// release). A build without them shows the commit and time the go command
// recorded, when it built from a checkout.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "idenplane:", err)
		os.Exit(1)
	}
}

// errUsage: the command line could not be understood. What was wrong, and
// the usage, are already on stderr; the exit status is 2, as the flag
// package's own is.
var errUsage = errors.New("usage error")

// commandInfo is one command: its arguments and what it does, for the
// usage texts.
type commandInfo struct{ name, args, about string }

func commandList() []commandInfo {
	return []commandInfo{
		{"serve", "[flags]", "run the server (the command when none is given)"},
		{"routes", "[flags]", `print every route as "METHOD PATH"`},
		{"version", "", "print the version, commit and build date (also --version)"},
		{"health", "[flags]", "ask the server on this machine whether it is ready; exit status 0 if so (a container's health check)"},
		{"migrate", "[flags]", "bring the database's schema to this version's, then exit (serve does it too, at start)"},
		{"backup", "[flags] FILE", "write the database, and its master key sealed under a passphrase, to one file; safe while the server runs"},
		{"restore", "[flags] FILE", "put a backup back as the database and its master key; never over a database in use"},
		{"export", "--realm NAME [flags]", "print a realm as JSON"},
		{"import", "[flags] FILE [FILE]", `create a realm from an export ("-" reads stdin); --from keycloak|auth0 imports another product's`},
		{"copy", "--from FILE_OR_URL --to FILE_OR_URL [flags]", "copy a whole database, sessions and events included, into an empty one: SQLite to PostgreSQL, or back; safe while a server runs on the source"},
		{"loadtest", "[flags]", "seed a throw-away database, start the server and measure it"},
		{"admin", "create [flags] NAME", "create an administrator and print a one-time enrolment link"},
		{"config", "check|example [flags]", "check a configuration file and show the settings it gives, or print a commented example"},
		{"completion", "bash|zsh|fish", "print the shell's completion script of the commands and their flags"},
		{"help", "[COMMAND]", "print this, or a command's flags"},
	}
}

func findCommand(name string) (commandInfo, bool) {
	for _, c := range commandList() {
		if c.name == name {
			return c, true
		}
	}
	return commandInfo{}, false
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "Usage: idenplane [command] [flags]\n\nCommands:\n")
	for _, c := range commandList() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.about)
	}
	fmt.Fprint(w, "\nRun \"idenplane COMMAND -h\" for a command's flags.\n")
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			cmd, args = "help", args[1:]
		case "-version", "--version":
			cmd, args = "version", args[1:]
		default:
			if !strings.HasPrefix(args[0], "-") {
				cmd, args = args[0], args[1:]
			}
		}
	}
	err := runCommand(cmd, args, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the help asked for is printed
	}
	return err
}

func runCommand(cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cmd {
	case "serve":
		return serve(args, stdout, stderr)
	case "routes":
		return printRoutes(args, stdout, stderr)
	case "version":
		return printVersion(args, stdout, stderr)
	case "health":
		return probeHealth(args, stdout, stderr)
	case "migrate":
		return migrate(args, stdout, stderr)
	case "backup":
		return backup(args, stdout, stderr)
	case "restore":
		return restore(args, stdout, stderr)
	case "export":
		return exportRealm(args, stdout, stderr)
	case "import":
		return importRealm(args, stdin, stdout, stderr)
	case "copy":
		return copyDatabase(args, stdout, stderr)
	case "loadtest":
		return loadTest(args, stdout, stderr)
	case "admin":
		return adminCreate(args, stdout, stderr)
	case "config":
		return configCommand(args, stdout, stderr)
	case "completion":
		return printCompletion(args, stdout, stderr)
	case "help":
		if len(args) == 0 || slices.Contains([]string{"help", "-h", "-help", "--help"}, args[0]) {
			printUsage(stdout)
			return nil
		}
		if _, ok := findCommand(args[0]); ok && len(args) == 1 {
			return runCommand(args[0], []string{"-h"}, stdin, stdout, stderr)
		}
		cmd = strings.Join(args, " ")
	}
	fmt.Fprintf(stderr, "idenplane: unknown command %q\n\n", cmd)
	printUsage(stderr)
	return errUsage
}

// parseFlags parses a command's flags. Help asked for (-h, --help) goes to
// stdout and ends the command with flag.ErrHelp, which run turns into
// exit status 0; a mistake goes to stderr with the usage, as errUsage.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Usage = func() { printCommandUsage(fs) }
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(out.Bytes())
		return flag.ErrHelp
	case err != nil:
		_, _ = stderr.Write(out.Bytes())
		return errUsage
	}
	return applyConfigFile(fs)
}

// printCommandUsage writes a command's synopsis, purpose and flags to the
// flag set's output.
func printCommandUsage(fs *flag.FlagSet) {
	c, _ := findCommand(fs.Name())
	w := fs.Output()
	fmt.Fprintf(w, "Usage: idenplane %s\n\n%s.\n", strings.TrimSpace(c.name+" "+c.args), strings.ToUpper(c.about[:1])+c.about[1:])
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, "\nFlags:\n")
		fs.PrintDefaults()
	}
}

// usageFailure reports a command line that parsed but makes no sense.
func usageFailure(fs *flag.FlagSet, stderr io.Writer, format string, args ...any) error {
	fmt.Fprintf(stderr, "idenplane %s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.SetOutput(stderr)
	printCommandUsage(fs)
	return errUsage
}

// parseNoArgs parses the flags of a command that takes no other arguments.
func parseNoArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageFailure(fs, stderr, "unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func printVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	c, d := buildStamp()
	fmt.Fprintf(stdout, "idenplane %s (commit %s, built %s)\n", version, c, d)
	return nil
}

// buildStamp is the commit and build date stamped by -ldflags, else those
// the go command recorded from the checkout, else "unknown".
func buildStamp() (string, string) {
	c, d := commit, date
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.time" && d == "":
				d = s.Value
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return c, d
}

// config is every setting, each a flag with an environment twin.
type config struct {
	addr, db, baseURL, logFormat string
	masterKeyEnv                 string
	masterKeyFile                string // "": beside a SQLite database; required on PostgreSQL without IDENPLANE_MASTER_KEY
	dbReaders, dbConnLifetime    string
	dbStatementTimeout           string
	dbPool                       dbPool // the three above, read by validate
	adminAPIKey                  string
	adminUser, adminPassword     string
	metricsPublic                string
	trustedProxies               string
	trustedPrefixes              []netip.Prefix // trustedProxies, read by validate
	outboundAllow                string
	geoIPDB                      string
	ipDenyFile                   string
	outboundPrefixes             []netip.Prefix // outboundAllow, read by validate
	dnsResolver                  string
	pluginsDir                   string
	auditDir                     string // where file audit streams write
	debugAddr                    string // empty: no profiles served
	tlsCert, tlsKey              string // PEM files; empty: no TLS from files
	acmeDomain, acmeEmail        string
	acmeDomains                  []string // acmeDomain, read by validate
	acmeDirectory                string
	accessLog                    string       // "", stdout, stderr or a file
	otlpEndpoint                 string       // "": no tracing
	upgradeFlag                  string       // --upgrade: auto or manual
	upgradeMode                  upgrade.Mode // upgradeFlag, read by validate
	// Opened by serve from the two above, for newApp.
	accessLogWriter io.Writer
	tracer          trace.TracerProvider
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
	fs.String(configFlag, os.Getenv("IDENPLANE_CONFIG"), "TOML file (YAML when named .yaml or .yml) of settings named as these flags; a flag or its environment variable beats it (IDENPLANE_CONFIG)")
	fs.StringVar(&c.db, "db", envOr("IDENPLANE_DB", "./idenplane.db"), "SQLite database file, or a postgres:// URL (IDENPLANE_DB)")
	fs.StringVar(&c.masterKeyFile, "master-key-file", os.Getenv("IDENPLANE_MASTER_KEY_FILE"),
		"file holding the master key in hex; default: the database file's name with .key, made on first start; required on PostgreSQL unless IDENPLANE_MASTER_KEY is set (IDENPLANE_MASTER_KEY_FILE)")
	fs.StringVar(&c.logFormat, "log-format", envOr("IDENPLANE_LOG_FORMAT", "text"), "log format, text or json (IDENPLANE_LOG_FORMAT)")
	return fs, c
}

// configFlag names the configuration file (app/configfile).
const configFlag = "config"

// flagEnv is the environment variable of a flag: IDENPLANE_BASE_URL for
// --base-url.
func flagEnv(name string) string {
	return "IDENPLANE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// configKeys says whether a key is a setting of the configuration file:
// a flag of serve, the command with them all, but the file itself.
func configKeys() func(string) bool {
	fs, _ := serveFlags("serve", io.Discard)
	return func(key string) bool { return key != configFlag && fs.Lookup(key) != nil }
}

// applyConfigFile sets, from the file --config names, each flag of fs
// given neither on the command line nor by its environment variable. A
// setting of another command's flag is left for that command.
func applyConfigFile(fs *flag.FlagSet) error {
	f := fs.Lookup(configFlag)
	if f == nil || f.Value.String() == "" {
		return nil
	}
	path := f.Value.String()
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	settings, err := configfile.Parse(path, data, configKeys())
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, st := range settings {
		if fs.Lookup(st.Key) == nil || given[st.Key] {
			continue
		}
		if _, set := os.LookupEnv(flagEnv(st.Key)); set {
			continue
		}
		if err := fs.Set(st.Key, st.Value); err != nil {
			return fmt.Errorf("config %s: line %d: %s: %w", path, st.Line, st.Key, err)
		}
	}
	return nil
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
	if store.IsPostgres(c.db) && c.masterKeyEnv == "" && c.masterKeyFile == "" {
		bad("--master-key-file (IDENPLANE_MASTER_KEY_FILE) or IDENPLANE_MASTER_KEY is required with a PostgreSQL database: " +
			"every server on it must share one key, so none is made (make one with: openssl rand -hex 32 > master.key)")
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
	} else {
		// The scheme in lower case, as the parser reads it: the server
		// tells https by its prefix (Secure cookies, links, the issuer).
		c.baseURL = u.Scheme + c.baseURL[len(u.Scheme):]
	}
	if c.metricsPublic != "" {
		if _, err := strconv.ParseBool(c.metricsPublic); err != nil {
			bad("IDENPLANE_METRICS_PUBLIC must be true or false, not %q", c.metricsPublic)
		}
	}
	if c.dnsResolver != "" {
		if _, port, err := net.SplitHostPort(c.dnsResolver); err != nil || port == "" {
			bad("--dns-resolver (IDENPLANE_DNS_RESOLVER) must be host:port, not %q", c.dnsResolver)
		}
	}
	if c.pluginsDir != "" {
		if fi, err := os.Stat(c.pluginsDir); err != nil || !fi.IsDir() {
			bad("--plugins-dir (IDENPLANE_PLUGINS_DIR) must be a directory, not %q", c.pluginsDir)
		}
	}
	if c.debugAddr != "" {
		if _, port, err := net.SplitHostPort(c.debugAddr); err != nil || port == "" {
			bad("--debug-addr (IDENPLANE_DEBUG_ADDR) must be host:port or :port, not %q", c.debugAddr)
		} else {
			c.debugAddr = debugListenAddr(c.debugAddr)
		}
	}
	if prefixes, err := app.ParseTrustedProxies(c.trustedProxies); err != nil {
		bad("--trusted-proxies (IDENPLANE_TRUSTED_PROXIES): %v", err)
	} else {
		c.trustedPrefixes = prefixes
	}
	if prefixes, err := app.ParseTrustedProxies(c.outboundAllow); err != nil {
		bad("--outbound-allow (IDENPLANE_OUTBOUND_ALLOW): %v", err)
	} else {
		c.outboundPrefixes = prefixes
	}
	if c.auditDir != "" {
		if st, err := os.Stat(c.auditDir); !filepath.IsAbs(c.auditDir) || err != nil || !st.IsDir() {
			bad("--audit-dir (IDENPLANE_AUDIT_DIR) must be the absolute path of a directory, not %q", c.auditDir)
		}
	}
	if c.otlpEndpoint != "" {
		if u, err := url.Parse(c.otlpEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			bad("--otlp-endpoint (IDENPLANE_OTLP_ENDPOINT) must be an absolute http or https URL without query or fragment, not %q", c.otlpEndpoint)
		}
	}
	if m, err := upgrade.ParseMode(c.upgradeFlag); err != nil {
		bad("--upgrade (IDENPLANE_UPGRADE) %v", err)
	} else {
		c.upgradeMode = m
	}
	errs = append(errs, c.validateTLS()...)
	errs = append(errs, c.validateDBPool()...)
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
	if c.masterKeyFile != "" {
		return readKeyFile(c.masterKeyFile)
	}
	path := c.db + ".key"
	k, err := readKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat(c.db); statErr == nil {
			return nil, fmt.Errorf("master key file %s is missing for the existing database %s: restore it or set IDENPLANE_MASTER_KEY", path, c.db)
		}
		return createKeyFile(path)
	}
	return k, err
}

// readKeyFile reads a master key file; its error is os.ErrNotExist when
// there is none.
func readKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
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
	// 0600 exactly, whatever the umask took away.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
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

// acmeCacheDir keeps the certificates ACME issues: beside a SQLite
// database, or in the working directory with PostgreSQL.
func (c *config) acmeCacheDir() string {
	if store.IsPostgres(c.db) {
		return "acme"
	}
	return filepath.Join(filepath.Dir(c.db), "acme")
}

func (c *config) logger(w io.Writer) *slog.Logger {
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// openExistingStore opens the database for commands that only read it, and
// refuses to make an empty one.
func (c *config) openExistingStore(ctx context.Context) (*store.Store, []byte, error) {
	if store.IsPostgres(c.db) {
		return c.openStore(ctx)
	}
	if _, err := os.Stat(c.db); err != nil {
		return nil, nil, fmt.Errorf("database %s: %w", c.db, err)
	}
	return c.openStore(ctx)
}

// openStore opens the database marked in use, so that restore refuses to
// replace it while this process has it open.
func (c *config) openStore(ctx context.Context) (*store.Store, []byte, error) {
	key, err := c.masterKey()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, store.Config{Path: c.db, Schema: schema, PostgresSchema: postgresSchema, MasterKey: key, Lock: true,
		Readers: c.dbPool.readers, ConnMaxLifetime: c.dbPool.connLifetime, StatementTimeout: c.dbPool.statementTimeout,
		DeferMigrations: c.upgradeMode == upgrade.ModeManual})
	if errors.Is(err, store.ErrInUse) {
		return nil, nil, fmt.Errorf("%w: a restore is under way", err)
	}
	return st, key, err
}

func (c *config) newApp(ctx context.Context, st *store.Store, key []byte, stdout io.Writer, log *slog.Logger) (*app.App, error) {
	return app.New(ctx, st, c.appConfig(key, stdout, log))
}

func (c *config) appConfig(key []byte, stdout io.Writer, log *slog.Logger) app.Config {
	commit, built := buildStamp()
	return app.Config{
		BaseURL: strings.TrimRight(c.baseURL, "/"), Version: version, Commit: commit, BuildDate: built, MasterKey: key,
		MetricsPublic: c.metricsPublic == "true" || c.metricsPublic == "1",
		AdminAPIKey:   c.adminAPIKey, AdminUser: c.adminUser, AdminPassword: c.adminPassword,
		TrustedProxies: c.trustedPrefixes, OutboundAllowed: c.outboundPrefixes, DNSResolver: c.dnsResolver,
		PluginsDir: c.pluginsDir, AuditDir: c.auditDir, GeoIPDB: c.geoIPDB, IPDenyFile: c.ipDenyFile, Stdout: stdout, Logger: log, AccessLog: c.accessLogWriter, Tracer: c.tracer,
		Upgrade: c.upgradeMode,
	}
}

func serveFlags(name string, stderr io.Writer) (*flag.FlagSet, *config) {
	fs, c := newFlagSet(name, stderr)
	fs.StringVar(&c.addr, "addr", envOr("IDENPLANE_ADDR", ":3000"), "listen address (IDENPLANE_ADDR)")
	fs.StringVar(&c.baseURL, "base-url", envOr("IDENPLANE_BASE_URL", "http://localhost:3000"), "external base URL (IDENPLANE_BASE_URL)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", os.Getenv("IDENPLANE_TRUSTED_PROXIES"),
		"comma-separated addresses and CIDR ranges of reverse proxies whose X-Forwarded-For and Forwarded headers are believed (IDENPLANE_TRUSTED_PROXIES)")
	fs.StringVar(&c.outboundAllow, "outbound-allow", os.Getenv("IDENPLANE_OUTBOUND_ALLOW"),
		"comma-separated non-public addresses and CIDR ranges (loopback, private, link-local) that outbound calls (identity providers, HTTP mail providers, back-channel logout) may reach; none by default (IDENPLANE_OUTBOUND_ALLOW)")
	fs.StringVar(&c.geoIPDB, "geoip-db", os.Getenv("IDENPLANE_GEOIP_DB"),
		"a MaxMind-format City database (GeoLite2-City.mmdb) that places sign-ins for the risk assessments' country and travel signals; empty: those signals are unknown (IDENPLANE_GEOIP_DB)")
	fs.StringVar(&c.ipDenyFile, "ip-deny-file", os.Getenv("IDENPLANE_IP_DENY_FILE"),
		"a file of addresses and CIDR ranges, one a line, whose sign-ins carry the risk signal ip_denylisted; read again when it changes (IDENPLANE_IP_DENY_FILE)")
	fs.StringVar(&c.dnsResolver, "dns-resolver", os.Getenv("IDENPLANE_DNS_RESOLVER"),
		"host:port of the DNS server that organization domain verification asks; empty: the system's (IDENPLANE_DNS_RESOLVER)")
	fs.StringVar(&c.pluginsDir, "plugins-dir", os.Getenv("IDENPLANE_PLUGINS_DIR"),
		"directory of WebAssembly plugins, one directory each with plugin.json and plugin.wasm (docs/plugins.md); empty: none (IDENPLANE_PLUGINS_DIR)")
	fs.StringVar(&c.auditDir, "audit-dir", os.Getenv("IDENPLANE_AUDIT_DIR"),
		"absolute path of the directory where audit streams of type file write; empty: file streams are refused (IDENPLANE_AUDIT_DIR)")
	fs.StringVar(&c.debugAddr, "debug-addr", os.Getenv("IDENPLANE_DEBUG_ADDR"),
		"host:port, or :port for loopback, where the runtime's profiles (net/http/pprof) are served; empty: none (IDENPLANE_DEBUG_ADDR)")
	fs.StringVar(&c.accessLog, "access-log", os.Getenv("IDENPLANE_ACCESS_LOG"),
		"where to write a JSON line per request: stdout, stderr or a file (appended to); empty: no access log (IDENPLANE_ACCESS_LOG)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", os.Getenv("IDENPLANE_OTLP_ENDPOINT"),
		"base URL of an OTLP/HTTP collector (http://collector:4318) to send OpenTelemetry traces to, at /v1/traces; empty: no tracing (IDENPLANE_OTLP_ENDPOINT)")
	fs.StringVar(&c.dbReaders, "db-readers", os.Getenv("IDENPLANE_DB_READERS"),
		"connections of the database's read pool; empty: four, or twice the cores if more (IDENPLANE_DB_READERS)")
	fs.StringVar(&c.dbConnLifetime, "db-conn-lifetime", os.Getenv("IDENPLANE_DB_CONN_LIFETIME"),
		"close a database connection after this long (30m), to reach a database behind a pooler or a failover anew; empty: never (IDENPLANE_DB_CONN_LIFETIME)")
	fs.StringVar(&c.dbStatementTimeout, "db-statement-timeout", os.Getenv("IDENPLANE_DB_STATEMENT_TIMEOUT"),
		"PostgreSQL only: cancel a statement that runs longer (30s); empty: none (IDENPLANE_DB_STATEMENT_TIMEOUT)")
	fs.StringVar(&c.upgradeFlag, "upgrade", envOr("IDENPLANE_UPGRADE", string(upgrade.ModeAuto)),
		"auto: migrate a database older than this binary at start; manual: serve only /health and /admin/upgrade on it until "+
			"POST /admin/upgrade snapshots and migrates it (docs/upgrade.md) (IDENPLANE_UPGRADE)")
	tlsFlags(fs, c)
	return fs, c
}

// dbPool is how the server keeps its database connections.
type dbPool struct {
	readers          int
	connLifetime     time.Duration
	statementTimeout time.Duration
}

// validateDBPool reads the pool's settings.
func (c *config) validateDBPool() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.dbReaders != "" {
		n, err := strconv.Atoi(c.dbReaders)
		if err != nil || n < 1 || n > 1000 {
			bad("--db-readers (IDENPLANE_DB_READERS) must be a number of connections from 1 to 1000, not %q", c.dbReaders)
		}
		c.dbPool.readers = n
	}
	duration := func(value, setting string) time.Duration {
		if value == "" {
			return 0
		}
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			bad("%s must be a positive duration such as 30s or 10m, not %q", setting, value)
		}
		return d
	}
	c.dbPool.connLifetime = duration(c.dbConnLifetime, "--db-conn-lifetime (IDENPLANE_DB_CONN_LIFETIME)")
	c.dbPool.statementTimeout = duration(c.dbStatementTimeout, "--db-statement-timeout (IDENPLANE_DB_STATEMENT_TIMEOUT)")
	if c.dbStatementTimeout != "" && !store.IsPostgres(c.db) {
		bad("--db-statement-timeout (IDENPLANE_DB_STATEMENT_TIMEOUT) applies to a PostgreSQL database only")
	}
	return errs
}

// tlsFlags are the settings of the server's own TLS: certificate files,
// or certificates from an ACME CA.
func tlsFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.tlsCert, "tls-cert", os.Getenv("IDENPLANE_TLS_CERT"),
		"PEM file of the TLS certificate (its chain after it) to serve HTTPS with; read again when it changes or on SIGHUP (IDENPLANE_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", os.Getenv("IDENPLANE_TLS_KEY"), "PEM file of the TLS certificate's private key (IDENPLANE_TLS_KEY)")
	fs.StringVar(&c.acmeDomain, "acme-domain", os.Getenv("IDENPLANE_ACME_DOMAIN"),
		"comma-separated domains to get TLS certificates for from an ACME CA (Let's Encrypt), accepting its terms; the CA must reach this server on port 443 of each (IDENPLANE_ACME_DOMAIN)")
	fs.StringVar(&c.acmeEmail, "acme-email", os.Getenv("IDENPLANE_ACME_EMAIL"), "contact address of the ACME account, for expiry notices (IDENPLANE_ACME_EMAIL)")
	fs.StringVar(&c.acmeDirectory, "acme-directory", envOr("IDENPLANE_ACME_DIRECTORY", tlsserver.DefaultDirectoryURL),
		"the ACME CA's directory URL (IDENPLANE_ACME_DIRECTORY)")
}

// validateTLS checks the TLS settings: files or ACME, never both, and an
// https base URL when the server serves TLS, so that its links, issuer and
// Secure cookies say so.
func (c *config) validateTLS() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if (c.tlsCert == "") != (c.tlsKey == "") {
		bad("--tls-cert (IDENPLANE_TLS_CERT) and --tls-key (IDENPLANE_TLS_KEY) must be set together")
	}
	if c.acmeDomain != "" && c.tlsCert != "" {
		bad("--acme-domain (IDENPLANE_ACME_DOMAIN) and --tls-cert (IDENPLANE_TLS_CERT) exclude each other: certificates come from the CA or from files")
	}
	c.acmeDomains = nil
	for d := range strings.SplitSeq(c.acmeDomain, ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d == "" {
			continue
		}
		if validate.Host("acme-domain", d) != nil || !strings.Contains(d, ".") || net.ParseIP(d) != nil {
			bad("--acme-domain (IDENPLANE_ACME_DOMAIN): %q is not a domain name", d)
		}
		c.acmeDomains = append(c.acmeDomains, d)
	}
	if c.acmeDomain == "" && c.acmeEmail != "" {
		bad("--acme-email (IDENPLANE_ACME_EMAIL) needs --acme-domain (IDENPLANE_ACME_DOMAIN)")
	}
	if c.acmeEmail != "" {
		if _, err := validate.NormalizeEmail(c.acmeEmail); err != nil {
			bad("--acme-email (IDENPLANE_ACME_EMAIL) is not an email address: %q", c.acmeEmail)
		}
	}
	if u, err := url.Parse(c.acmeDirectory); err != nil || u.Scheme != "https" || u.Host == "" {
		bad("--acme-directory (IDENPLANE_ACME_DIRECTORY) must be an https URL, not %q", c.acmeDirectory)
	}
	if c.servesTLS() && !strings.HasPrefix(c.baseURL, "https://") {
		bad("--base-url (IDENPLANE_BASE_URL) must be an https URL when the server serves TLS, not %q", c.baseURL)
	}
	return errs
}

func (c *config) servesTLS() bool { return c.tlsCert != "" || c.acmeDomain != "" }

// serverTLS is the listener's TLS configuration, nil when the server
// serves plain HTTP. Certificate files are watched, and read again at each
// value of hup (SIGHUP), until ctx ends; without them SIGHUP is logged and
// changes nothing (systemctl reload must not stop the server). ACME keeps
// its account and certificates in
// "acme" beside the database. Its calls to the CA do not go through the
// outbound guard: the operator names the CA, as the database, and no
// realm administrator can point them elsewhere.
func (c *config) serverTLS(ctx context.Context, hup <-chan os.Signal, log *slog.Logger) (*tls.Config, error) {
	if c.tlsCert != "" {
		files, err := tlsserver.LoadCertFiles(c.tlsCert, c.tlsKey, log)
		if err != nil {
			return nil, err
		}
		go files.Watch(ctx, tlsserver.PollInterval, hup)
		return tlsserver.Config(files.GetCertificate), nil
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: no certificate files to read again (--tls-cert); nothing changed")
			}
		}
	}()
	if c.acmeDomain != "" {
		m := tlsserver.ACME{Domains: c.acmeDomains, Email: c.acmeEmail, DirectoryURL: c.acmeDirectory,
			CacheDir: c.acmeCacheDir()}.Manager()
		return tlsserver.TLSConfig(m), nil
	}
	return nil, nil
}

// probeHealth asks the server listening at --addr on this machine for
// /health/ready, over TLS when the server serves it. It is the health
// check of an image with no shell or curl in it, so it reads the same
// settings from the environment as serve does.
func probeHealth(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	c := &config{}
	fs.StringVar(&c.addr, "addr", envOr("IDENPLANE_ADDR", ":3000"), "the server's listen address (IDENPLANE_ADDR)")
	tlsFlags(fs, c)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return usageFailure(fs, stderr, "--addr must be host:port or :port, not %q", c.addr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if c.servesTLS() {
		// The server on this machine is asked whether it runs, not whether
		// its certificate is good: it is reached by address, not by the
		// name the certificate holds. ACME's certificates are chosen by
		// that name.
		scheme = "https"
		serverName, _, _ := strings.Cut(c.acmeDomain, ",")
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, ServerName: strings.TrimSpace(serverName)}
	}
	client := &http.Client{Timeout: *timeout, Transport: transport}
	resp, err := client.Get(scheme + "://" + net.JoinHostPort(host, port) + "/health/ready")
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: the server answered %s", resp.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// debugListenAddr puts a bare :port of --debug-addr on loopback: the
// profiles reach the network only when the operator names a host.
func debugListenAddr(addr string) string {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// serveDebug serves the runtime's profiles on c.debugAddr until ctx ends,
// with block and mutex profiling on: both sample, at a cost too small to
// see beside a request's own work, and are what shows time lost waiting
// for the database writer or a lock.
func serveDebug(ctx context.Context, ln net.Listener, log *slog.Logger) {
	runtime.SetBlockProfileRate(10_000) // one blocking event per 10 µs spent blocked, on average
	runtime.SetMutexProfileFraction(100)
	if ip, err := netip.ParseAddrPort(ln.Addr().String()); err != nil || !ip.Addr().IsLoopback() {
		log.Warn("profiles are served beyond loopback, without authentication", "addr", ln.Addr().String())
	}
	log.Info("profiles listening", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	srv := &http.Server{
		Handler:           app.DebugHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      5 * time.Minute, // a CPU profile or trace of up to that long
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Error("profiles no longer served", "err", err)
	}
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs, c := serveFlags("serve", stderr)
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if err := c.validate(true); err != nil {
		return err
	}
	log := c.logger(stderr)
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit())
	}
	if c.debugAddr == "" {
		// Nobody can ask for a heap profile, so sample no allocations
		// for one: the samples' stack table is up to 2 MB of RSS that only
		// grows.
		runtime.MemProfileRate = 0
	}
	// The OpenID Connect library logs through the default logger only.
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// Certificate files that do not load stop the start before the
	// database is touched.
	tlsConf, err := c.serverTLS(ctx, hup, log)
	if err != nil {
		return err
	}

	closeAccessLog, err := c.openAccessLog(stdout, stderr)
	if err != nil {
		return err
	}
	defer closeAccessLog()
	if c.otlpEndpoint != "" {
		tp, err := telemetry.NewProvider(ctx, c.otlpEndpoint, version)
		if err != nil {
			return err
		}
		// Deferred before the store closes, so it runs after: the spans
		// of the last requests and jobs are sent.
		defer func() {
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(flushCtx); err != nil {
				log.Warn("the last traces were not sent", "err", err)
			}
		}()
		c.tracer = tp
	}

	st, key, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg := c.appConfig(key, stdout, log)
	cfg.Shutdown = stop // a rollback stops the server, for the older binary to start
	served, err := app.Start(ctx, st, cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              c.addr,
		Handler:           served,
		TLSConfig:         tlsConf,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if c.debugAddr != "" {
		dln, err := net.Listen("tcp", c.debugAddr)
		if err != nil {
			return fmt.Errorf("--debug-addr: %w", err)
		}
		go serveDebug(ctx, dln, log)
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	log.Info("idenplane listening", "addr", ln.Addr().String(), "db", store.Redact(c.db), "baseURL", c.baseURL, "version", version,
		"tls", tlsConf != nil)
	// The jobs outlive the requests: they end once the server has
	// answered the last, and write what those left queued.
	jobsCtx, endJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer endJobs()
	jobsDone := make(chan struct{})
	go func() {
		served.RunJobs(jobsCtx)
		close(jobsDone)
	}()
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
		log.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		serveErr = srv.Shutdown(shutdownCtx)
	}
	endJobs()
	<-jobsDone
	if served.Upgrades().Stopping() {
		return serveErr // a rollback closed the store and put the snapshot in its place
	}
	// With no more writes coming, empty the WAL into the database file:
	// the file alone is then the whole database, to copy or move.
	if err := st.Checkpoint(context.Background()); err != nil {
		log.Warn("the database file is not complete without its -wal file", "db", c.db, "err", err)
	}
	return serveErr
}

// openAccessLog opens where --access-log writes, and says how to close it.
func (c *config) openAccessLog(stdout, stderr io.Writer) (func(), error) {
	switch c.accessLog {
	case "":
		return func() {}, nil
	case "stdout":
		c.accessLogWriter = stdout
		return func() {}, nil
	case "stderr":
		c.accessLogWriter = stderr
		return func() {}, nil
	}
	f, err := os.OpenFile(c.accessLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("--access-log: %w", err)
	}
	c.accessLogWriter = f
	return func() { f.Close() }, nil
}

func printRoutes(args []string, stdout, stderr io.Writer) error {
	fs, c := serveFlags("routes", stderr)
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	// The OpenID Connect library logs every route it registers through the
	// default logger: the output is the routes alone.
	slog.SetDefault(slog.New(slog.DiscardHandler))
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
func parseWithArg(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (string, error) {
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", usageFailure(fs, stderr, "FILE is missing")
	}
	arg := fs.Arg(0)
	if err := parseFlags(fs, fs.Args()[1:], stdout, stderr); err != nil {
		return "", err
	}
	if fs.NArg() != 0 {
		return "", usageFailure(fs, stderr, "unexpected argument %q", fs.Arg(0))
	}
	return arg, nil
}

// minBackupPassphrase is the shortest passphrase a backup is sealed under:
// a stolen backup can be attacked offline, at leisure.
const minBackupPassphrase = 12

// backupPassphrase reads the passphrase from file, or else from
// IDENPLANE_BACKUP_PASSPHRASE; nil when neither is given. One trailing
// line break in the file is not part of it.
func backupPassphrase(file string) ([]byte, error) {
	var p string
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--passphrase-file: %w", err)
		}
		p = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
		if p == "" {
			return nil, fmt.Errorf("--passphrase-file %s is empty", file)
		}
	} else if env, ok := os.LookupEnv("IDENPLANE_BACKUP_PASSPHRASE"); ok {
		if env == "" {
			return nil, errors.New("IDENPLANE_BACKUP_PASSPHRASE is set but empty")
		}
		p = env
	} else {
		return nil, nil
	}
	return []byte(p), nil
}

const backupKeyChoice = `say what becomes of the master key, which decrypts the secrets in the database
(token signing keys, SMTP passwords, second factors):
  --passphrase-file PATH  seal it into the backup under the passphrase in PATH (or set
                          IDENPLANE_BACKUP_PASSPHRASE); restoring asks for the same passphrase
  --without-key           leave it out; the backup then restores only with %s.key
                          (or IDENPLANE_MASTER_KEY), which you keep safe elsewhere`

func backup(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("backup", stderr)
	passphraseFile := fs.String("passphrase-file", "", "seal the master key into the backup under the passphrase in this file (or IDENPLANE_BACKUP_PASSPHRASE)")
	withoutKey := fs.Bool("without-key", false, "leave the master key out of the backup")
	target, err := parseWithArg(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if *withoutKey && *passphraseFile != "" {
		return usageFailure(fs, stderr, "--without-key and --passphrase-file exclude each other")
	}
	if err := c.validate(false); err != nil {
		return err
	}
	var passphrase []byte
	if !*withoutKey {
		if passphrase, err = backupPassphrase(*passphraseFile); err != nil {
			return err
		}
		if passphrase == nil {
			return usageFailure(fs, stderr, backupKeyChoice, c.db)
		}
		if n := utf8.RuneCount(passphrase); n < minBackupPassphrase {
			return fmt.Errorf("the backup passphrase has %d characters; it needs at least %d", n, minBackupPassphrase)
		}
	}
	if _, err := os.Lstat(target); err == nil {
		return fmt.Errorf("backup target %s already exists", target)
	}
	ctx := context.Background()
	st, key, err := c.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var sealed *store.SealedKey
	if passphrase != nil {
		if sealed, err = store.SealMasterKey(key, passphrase); err != nil {
			return err
		}
	}
	if err := st.Backup(ctx, target, sealed); err != nil {
		return err
	}
	if sealed != nil {
		fmt.Fprintf(stderr, "backed up %s to %s, with the master key sealed under the passphrase.\n"+
			"Restore with: idenplane restore --db %s --passphrase-file PATH %s\n", c.db, target, c.db, target)
		return nil
	}
	fmt.Fprintf(stderr, "backed up %s to %s WITHOUT THE MASTER KEY.\n"+
		"WARNING: the secrets in it (token signing keys, SMTP passwords, second factors) open only with the master key\n"+
		"of %s: keep %s.key (or IDENPLANE_MASTER_KEY) safe, apart from the backup. Without it they are lost.\n",
		c.db, target, c.db, c.db)
	return nil
}

func restore(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("restore", stderr)
	passphraseFile := fs.String("passphrase-file", "", "the file holding the passphrase the backup's master key is sealed under (or IDENPLANE_BACKUP_PASSPHRASE)")
	force := fs.Bool("force", false, "replace an existing database and key file (never a database in use)")
	file, err := parseWithArg(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if err := c.validate(false); err != nil {
		return err
	}
	if store.IsPostgres(c.db) {
		return errors.New("idenplane restore writes a SQLite file: restore a PostgreSQL database with pg_restore (docs/postgres.md)")
	}
	passphrase, err := backupPassphrase(*passphraseFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// Held until the restored file is in place: no server starts on the
	// database meanwhile, and none may be running now.
	release, err := store.LockExclusive(c.db)
	if errors.Is(err, store.ErrInUse) {
		return fmt.Errorf("%s is in use by a running idenplane server or command (it holds %s.lock): stop it, then restore", c.db, c.db)
	}
	if err != nil {
		return err
	}
	defer release()
	if _, err := os.Stat(c.db); err == nil && !*force {
		return fmt.Errorf("%s already exists: add --force to replace it", c.db)
	}
	keyPath := c.db + ".key"
	envKey, _ := c.masterKeyFromEnv() // validated above
	fileKey, err := readKeyFile(keyPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	given, givenFrom := envKey, "IDENPLANE_MASTER_KEY"
	if given == nil {
		given, givenFrom = fileKey, keyPath
	}

	r, err := store.PrepareRestore(context.Background(), store.RestoreConfig{
		Backup: file, Path: c.db, Schema: schema, Passphrase: passphrase, MasterKey: given})
	switch {
	case errors.Is(err, store.ErrNoPassphrase):
		return fmt.Errorf("%s carries the master key sealed under a passphrase: give --passphrase-file PATH (or set IDENPLANE_BACKUP_PASSPHRASE)", file)
	case errors.Is(err, store.ErrWrongPassphrase):
		return fmt.Errorf("the passphrase does not open the master key in %s: nothing was restored", file)
	case errors.Is(err, store.ErrNoMasterKey):
		return fmt.Errorf("%s was made without the master key: set IDENPLANE_MASTER_KEY to the key of the database it came from "+
			"(the hex in its .key file), or put that file at %s, then restore again", file, keyPath)
	case errors.Is(err, store.ErrWrongMasterKey):
		return fmt.Errorf("the master key in %s does not open the secrets in %s: nothing was restored", givenFrom, file)
	case err != nil:
		return err
	}
	defer r.Discard()

	writeKey := false
	if r.KeyInBackup {
		switch {
		case envKey != nil && !bytes.Equal(envKey, r.MasterKey):
			return fmt.Errorf("IDENPLANE_MASTER_KEY is set, but to another key than the one in %s: the server would not start "+
				"on the restored database. Unset it (restore then writes %s) or set it to the backup's key; nothing was restored", file, keyPath)
		case envKey != nil, bytes.Equal(fileKey, r.MasterKey):
		case fileKey != nil && !*force:
			return fmt.Errorf("%s holds another master key: add --force to replace it; nothing was restored", keyPath)
		default:
			writeKey = true
		}
	}
	if writeKey {
		if err := replaceKeyFile(keyPath, r.MasterKey); err != nil {
			return err
		}
	}
	if err := r.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "restored %s to %s; the master key opened all %d secrets in it.\n", file, c.db, r.Secrets)
	switch {
	case writeKey:
		fmt.Fprintf(stderr, "The master key from the backup is in %s.\n", keyPath)
	case envKey != nil:
		fmt.Fprintln(stderr, "The database uses the master key in IDENPLANE_MASTER_KEY: keep it set when you start the server.")
	default:
		fmt.Fprintf(stderr, "The database uses the master key in %s.\n", keyPath)
	}
	return nil
}

// replaceKeyFile writes a master key file, replacing any, through a
// temporary file renamed into place: the key file is whole or the old one.
func replaceKeyFile(path string, key []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write master key file: %w", err)
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	_, err = fmt.Fprintln(f, hex.EncodeToString(key))
	err = errors.Join(err, f.Chmod(0o600), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("write master key file: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// migrate runs the schema's migrations on --db and says the version it is
// at: before a rollout, so that the servers of a new version start on a
// schema already theirs. A database newer than this binary is refused, as
// serve refuses it.
func migrate(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("migrate", stderr)
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if err := c.validate(false); err != nil {
		return err
	}
	st, _, err := c.openStore(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.SchemaVersion(context.Background())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s is at schema version %d\n", store.Redact(c.db), v)
	return err
}

func exportRealm(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlagSet("export", stderr)
	realm := fs.String("realm", "", "realm to export")
	users := fs.Bool("include-users", false, "include the realm's users")
	secrets := fs.Bool("include-secrets", false, "include secrets: SMTP password, provider keys, password hashes")
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *realm == "" {
		return usageFailure(fs, stderr, "--realm is required")
	}
	if err := c.validate(false); err != nil {
		return err
	}
	st, _, err := c.openExistingStore(context.Background())
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
	asCopy := fs.Bool("as-copy", false, "give the realm and everything in it new IDs, to import it beside the realm it was exported from")
	from := fs.String("from", "", "import another product's export (docs/migration.md): keycloak (FILE is a realm export), "+
		"or auth0 (FILE is the users export, a second FILE the password hashes)")
	realmName := fs.String("realm", "", "with --from: keycloak, the realm's name in place of the export's; auth0, the realm the users go into")
	dryRun := fs.Bool("dry-run", false, "with --from: check everything and report, writing nothing")
	newIDs := fs.Bool("new-ids", false, "with --from keycloak: give every resource a new ID instead of Keycloak's")
	files, err := parseWithArgs(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch {
	case *from == "auth0" && len(files) > 2:
		return usageFailure(fs, stderr, "unexpected argument %q", files[2])
	case *from != "auth0" && len(files) > 1:
		return usageFailure(fs, stderr, "unexpected argument %q", files[1])
	case *from != "" && *from != "keycloak" && *from != "auth0":
		return usageFailure(fs, stderr, "--from must be keycloak or auth0")
	case *from == "auth0" && *realmName == "":
		return usageFailure(fs, stderr, "--realm is required with --from auth0: the realm the users go into")
	case *from != "" && (*overwrite || *asCopy):
		return usageFailure(fs, stderr, "--overwrite and --as-copy are for this server's own exports, not with --from")
	}
	if err := c.validate(false); err != nil {
		return err
	}
	var data [][]byte
	for _, file := range files {
		var b []byte
		if file == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(file)
		}
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		data = append(data, b)
	}
	st, _, err := c.openStore(context.Background())
	if err != nil {
		return err
	}
	defer st.Close()
	if *from != "" {
		return importFrom(st, *from, *realmName, *dryRun, *newIDs, data, stdout, stderr)
	}
	realm, err := app.ImportRealm(context.Background(), st, data[0], app.ImportOptions{Overwrite: *overwrite, AsCopy: *asCopy}, time.Now())
	if err != nil {
		return fmt.Errorf("import: %s", apperr.Message(err))
	}
	fmt.Fprintf(stdout, "imported realm %s\n", realm.Name)
	return nil
}

// parseWithArgs parses a command's flags, which may stand between its
// arguments, and answers the arguments: at least one.
func parseWithArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	var out []string
	for {
		if err := parseFlags(fs, args, stdout, stderr); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		out = append(out, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(out) == 0 {
		return nil, usageFailure(fs, stderr, "FILE is missing")
	}
	return out, nil
}

// importFrom is `idenplane import --from keycloak|auth0`: the admin API's
// importers (app/migration), with their report printed, the progress of a
// large import in the log on stderr.
func importFrom(st *store.Store, from, realmName string, dryRun, newIDs bool, data [][]byte, stdout, stderr io.Writer) error {
	svc := app.NewMigration(st, app.MigrationConfig{Log: slog.New(slog.NewTextHandler(stderr, nil))})
	var rep *migration.Report
	var err error
	if from == "keycloak" {
		rep, err = svc.ImportKeycloakFile(context.Background(), data[0],
			migration.KeycloakOptions{DryRun: dryRun, Realm: realmName, NewIDs: newIDs})
	} else {
		var passwords []byte
		if len(data) > 1 {
			passwords = data[1]
		}
		rep, err = svc.ImportAuth0Files(context.Background(), realmName, data[0], passwords, dryRun)
	}
	if err != nil {
		return fmt.Errorf("import: %s", apperr.Message(err))
	}
	verb := "imported"
	if rep.DryRun {
		verb = "checked (dry run, nothing written)"
	}
	var counts []string
	for _, k := range slices.Sorted(maps.Keys(rep.Counts)) {
		counts = append(counts, fmt.Sprintf("%d %s", rep.Counts[k], k))
	}
	fmt.Fprintf(stdout, "%s into realm %s: %s\n", verb, rep.Realm, strings.Join(counts, ", "))
	for _, it := range rep.Skipped {
		name := ""
		if it.Name != "" {
			name = " (" + it.Name + ")"
		}
		fmt.Fprintf(stdout, "skipped %s%s: %s\n", it.Path, name, it.Reason)
	}
	return nil
}

// copyDatabase is `idenplane copy`: the whole of --from into the empty
// --to, compared table by table at the end (store.Copy). The copy's
// secrets stay sealed with the source's master key, so the key goes with
// them: into <to>.key for a SQLite file (unless IDENPLANE_MASTER_KEY
// holds it), and into the advice printed for PostgreSQL, which never
// reads a key from beside the database.
func copyDatabase(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	from := fs.String("from", "", "the database to copy: a SQLite file or a postgres:// URL; a server may keep running on it")
	to := fs.String("to", "", "the empty database to copy into: a SQLite file, made if missing, or a postgres:// URL")
	keyFile := fs.String("master-key-file", os.Getenv("IDENPLANE_MASTER_KEY_FILE"),
		"file holding the source's master key in hex, which the copy keeps; default: the source file's name with .key; "+
			"required with a PostgreSQL source unless IDENPLANE_MASTER_KEY is set (IDENPLANE_MASTER_KEY_FILE)")
	batch := fs.Int("batch-size", 500, "rows written per transaction")
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	switch {
	case *from == "":
		return usageFailure(fs, stderr, "--from is required")
	case *to == "":
		return usageFailure(fs, stderr, "--to is required")
	case *batch < 1:
		return usageFailure(fs, stderr, "--batch-size must be at least 1")
	}
	envKey, err := (&config{masterKeyEnv: os.Getenv("IDENPLANE_MASTER_KEY")}).masterKeyFromEnv()
	if err != nil {
		return err
	}
	key, keyFrom := envKey, "IDENPLANE_MASTER_KEY"
	switch {
	case key != nil:
	case *keyFile != "":
		keyFrom = *keyFile
		if key, err = readKeyFile(keyFrom); err != nil {
			return err
		}
	case store.IsPostgres(*from):
		return usageFailure(fs, stderr, "--master-key-file (IDENPLANE_MASTER_KEY_FILE) or IDENPLANE_MASTER_KEY is required with a PostgreSQL source: its master key")
	default:
		if _, err := os.Stat(*from); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		keyFrom = *from + ".key"
		if key, err = readKeyFile(keyFrom); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the master key file %s of %s is missing: give the key with --master-key-file or IDENPLANE_MASTER_KEY", keyFrom, *from)
		} else if err != nil {
			return err
		}
	}

	// Where the copy's key goes, settled before anything is written.
	keyNote, wroteKey := "", ""
	if store.IsPostgres(*to) {
		keyNote = fmt.Sprintf("Start the server on it with --master-key-file %s (or IDENPLANE_MASTER_KEY): its secrets are sealed with the source's master key.", keyFrom)
		if envKey != nil {
			keyNote = "Start the server on it with IDENPLANE_MASTER_KEY set as now: its secrets are sealed with the source's master key."
		}
	} else {
		keyPath := *to + ".key"
		existing, err := readKeyFile(keyPath)
		switch {
		case err == nil && !bytes.Equal(existing, key):
			return fmt.Errorf("%s holds another master key than the source's: remove it, or copy to another file; nothing was copied", keyPath)
		case err == nil:
			keyNote = fmt.Sprintf("The copy opens with the master key in %s, the source's.", keyPath)
		case !errors.Is(err, os.ErrNotExist):
			return err
		case envKey != nil:
			keyNote = "The copy opens with the master key in IDENPLANE_MASTER_KEY: keep it set when you start the server on it."
		default:
			if err := replaceKeyFile(keyPath, key); err != nil {
				return err
			}
			wroteKey = keyPath
			keyNote = fmt.Sprintf("The source's master key, which opens the copy's secrets, is in %s.", keyPath)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := store.Copy(ctx, store.CopyConfig{From: *from, To: *to, Schema: schema, PostgresSchema: postgresSchema,
		MasterKey: key, BatchSize: *batch, Progress: newCopyProgress(stderr).report})
	if err != nil {
		if wroteKey != "" {
			_ = os.Remove(wroteKey)
		}
		if errors.Is(err, store.ErrWrongMasterKey) {
			return fmt.Errorf("%w (the key of %s)", err, keyFrom)
		}
		return err
	}
	var rows int64
	var empty int
	for _, t := range res.Tables {
		rows += t.Rows
		if t.Rows == 0 {
			empty++
		}
	}
	fmt.Fprintf(stdout, "copied %s to %s: schema version %d, %d rows in %d tables; the copy's row counts and checksums are the source's\n",
		store.Redact(*from), store.Redact(*to), res.SchemaVersion, rows, len(res.Tables))
	fmt.Fprintf(stdout, "  %-36s %10s  %s\n", "TABLE", "ROWS", "SHA-256")
	tables := slices.SortedFunc(slices.Values(res.Tables), func(a, b store.CopiedTable) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range tables {
		if t.Rows > 0 {
			fmt.Fprintf(stdout, "  %-36s %10d  %s\n", t.Name, t.Rows, t.Checksum[:16])
		}
	}
	fmt.Fprintf(stdout, "  and %d tables empty in both\n", empty)
	fmt.Fprintf(stdout, "the master key opened all %d secrets in the copy\n", res.Secrets)
	fmt.Fprintln(stderr, keyNote)
	return nil
}

// copyProgress shows a copy's progress on stderr as "copying TABLE:
// DONE/TOTAL": on a terminal one line per table, redrawn as each batch
// lands; elsewhere (a log) a line per tenth of a table.
type copyProgress struct {
	w       io.Writer
	tty     bool
	table   string
	lastTen int64
}

func newCopyProgress(w io.Writer) *copyProgress {
	p := &copyProgress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *copyProgress) report(table string, done, total int64) {
	if table != p.table {
		p.table, p.lastTen = table, 0
	}
	if p.tty {
		fmt.Fprintf(p.w, "\rcopying %s: %d/%d", table, done, total)
		if done == total {
			fmt.Fprintln(p.w)
		}
		return
	}
	if ten := done * 10 / total; ten > p.lastTen {
		p.lastTen = ten
		fmt.Fprintf(p.w, "copying %s: %d/%d\n", table, done, total)
	}
}

// adminCreate is `idenplane admin create NAME`: an administrator of the
// system realm, who chooses a password through the link printed and
// enrols a second factor at the first console sign-in.
func adminCreate(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		args = append([]string{"create"}, args...)
	}
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stderr, "usage: idenplane admin create [flags] NAME")
		return errUsage
	}
	fs, c := serveFlags("admin", stderr)
	perms := fs.String("permissions", "", "comma-separated permissions the administrator holds; empty: every one")
	realm := fs.String("realm", "", "the one realm the administrator acts in; empty: every realm")
	email := fs.String("email", "", "the administrator's email address")
	name, err := parseWithArg(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	if err := c.validate(true); err != nil {
		return err
	}
	ctx := context.Background()
	st, key, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// The OpenID Connect library logs through the default logger only,
	// as serve sets it: here nothing but the link is printed.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	a, err := c.newApp(ctx, st, key, stdout, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	na := adminaccounts.NewAccount{Username: name, Email: *email, Realm: *realm, CreatedBy: "cli"}
	if *perms != "" {
		na.Permissions = strings.Split(*perms, ",")
	}
	rep, err := app.CreateAdminAccount(ctx, a, na)
	if err != nil {
		return fmt.Errorf("admin create: %s", apperr.Message(err))
	}
	fmt.Fprintf(stdout, "Created administrator %s (%s).\nEnrolment link, for one use within %d hours: %s\n", rep.Username,
		strings.Join(rep.Permissions, ", "), int(adminaccounts.EnrolmentLifetime.Hours()), rep.EnrolmentLink)
	return nil
}

// configCommand is `idenplane config check --config FILE` (the settings
// the file, the environment and the flags give serve, each with where it
// came from, checked as serve checks them) and `idenplane config example`.
func configCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "check" && args[0] != "example") {
		if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
			fmt.Fprintln(stdout, "usage: idenplane config check --config FILE [flags] | idenplane config example")
			return flag.ErrHelp
		}
		fmt.Fprintln(stderr, "usage: idenplane config check --config FILE [flags] | idenplane config example")
		return errUsage
	}
	fs, c := serveFlags("config", stderr)
	if args[0] == "example" {
		const formatFlag = "format"
		format := fs.String(formatFlag, "toml", "the example's format: toml or yaml")
		if err := parseNoArgs(fs, args[1:], stdout, stderr); err != nil {
			return err
		}
		if *format != "toml" && *format != "yaml" {
			return usageFailure(fs, stderr, "--format is toml or yaml")
		}
		configfile.Example(stdout, fs, *format == "yaml", configFlag, formatFlag)
		return nil
	}
	if err := parseNoArgs(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	if fs.Lookup(configFlag).Value.String() == "" {
		return usageFailure(fs, stderr, "--config is required")
	}
	if err := c.validate(true); err != nil {
		return err
	}
	// Where each setting came from: the command line's flags alone, then
	// the environment, then the file.
	bare, _ := serveFlags("config", io.Discard)
	_ = bare.Parse(args[1:])
	given := map[string]bool{}
	bare.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fromFile := map[string]bool{}
	if path := fs.Lookup(configFlag).Value.String(); path != "" {
		data, _ := os.ReadFile(path)
		settings, _ := configfile.Parse(path, data, configKeys())
		for _, st := range settings {
			fromFile[st.Key] = true
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		from := "default"
		_, env := os.LookupEnv(flagEnv(f.Name))
		switch {
		case given[f.Name]:
			from = "flag"
		case env:
			from = "environment"
		case fromFile[f.Name]:
			from = "file"
		}
		fmt.Fprintf(stdout, "%s = %s  # %s\n", f.Name, strconv.Quote(f.Value.String()), from)
	})
	return nil
}

// peerFlags are the loadtest's -peer flags: NAME=ISSUER_URL[,pid=PID].
type peerFlags []loadtest.Peer

func (p *peerFlags) String() string { return "" }

func (p *peerFlags) Set(v string) error {
	name, rest, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return errors.New("want NAME=ISSUER_URL[,pid=PID]")
	}
	issuer, pidText, hasPID := strings.Cut(rest, ",pid=")
	peer := loadtest.Peer{Name: name, URL: issuer}
	if hasPID {
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			return fmt.Errorf("pid %q: want a process ID", pidText)
		}
		peer.PID = pid
	}
	if u, err := url.Parse(issuer); err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("issuer %q: want an http:// URL", issuer)
	}
	*p = append(*p, peer)
	return nil
}

func loadTest(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 10*time.Second, "how long each scenario is measured, after a warm-up")
	concurrency := fs.Int("concurrency", 32, "connections per scenario")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run (default all): "+strings.Join(loadtest.Scenarios(), ","))
	users := fs.Int("users", 100_000, "users seeded into the realm the page and lookup scenarios read (the targets name 1000000)")
	sessions := fs.Int("sessions", 100_000, "active SSO sessions seeded")
	storm := fs.Int("storm", 200, "connections of the password-grant storm")
	jsonOut := fs.Bool("json", false, "print the results as JSON")
	noEvents := fs.Bool("no-events", false, "leave login events off in the realms (they are on by default)")
	inProcess := fs.Bool("in-process", false, "run the server in this process instead of as a child (RSS and CPU then include the load generator)")
	profile := fs.String("profile", "", "write a CPU profile per scenario into this directory (runs the server in-process)")
	dir := fs.String("dir", "", "directory for the database (default: a temporary one, removed afterwards)")
	db := fs.String("db", "", "the URL of an empty PostgreSQL database to run the servers on (default: a SQLite file in -dir)")
	replicas := fs.Int("replicas", 1, "servers sharing the -db PostgreSQL database, the load spread over them")
	var peers peerFlags
	fs.Var(&peers, "peer", "NAME=ISSUER_URL[,pid=PID]: another provider to run cc-rs256, password and refresh against, side by side (repeatable; docs/performance.md)")
	rounds := fs.Int("rounds", 1, "with -peer: how many times the side-by-side runs go round every server; the medians are printed")
	if err := parseNoArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: want 1 or more", *rounds)
	}
	if *db != "" && !store.IsPostgres(*db) {
		return fmt.Errorf("-db %q: want a postgres:// URL (the SQLite file is made in -dir)", store.Redact(*db))
	}
	cfg := loadtest.Config{Rounds: *rounds, Schema: schema, PostgresSchema: postgresSchema, DB: *db, Replicas: *replicas, Version: version, HashPassword: identity.NewArgon2idHasher(), Duration: *duration,
		Concurrency: *concurrency, Users: *users, Sessions: *sessions, StormConcurrency: *storm, JSON: *jsonOut,
		NoEvents: *noEvents, ProfileDir: *profile, Dir: *dir, Progress: stderr, Peers: peers}
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
	return loadtest.Run(ctx, cfg, stdout)
}

// printCompletion is `idenplane completion SHELL`: the script of the
// commands of commandList, each with the flags its help lists.
func printCompletion(args []string, stdout, stderr io.Writer) error {
	const usage = "usage: idenplane completion bash|zsh|fish"
	if len(args) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		fmt.Fprintln(stdout, usage)
		return flag.ErrHelp
	}
	if len(args) != 1 || !slices.Contains(completion.Shells, args[0]) {
		fmt.Fprintln(stderr, usage)
		return errUsage
	}
	var cmds []completion.Command
	for _, c := range commandList() {
		cmd := completion.Command{Name: c.name}
		switch c.name {
		case "help":
			for _, other := range commandList() {
				cmd.Subcommands = append(cmd.Subcommands, completion.Command{Name: other.name})
			}
		case "completion":
			for _, sh := range completion.Shells {
				cmd.Subcommands = append(cmd.Subcommands, completion.Command{Name: sh})
			}
		default:
			// A command whose first argument is a word (config's
			// check|example, admin's create) has subcommands.
			first, _, _ := strings.Cut(c.args, " ")
			if first != "" && strings.Trim(first, "abcdefghijklmnopqrstuvwxyz|") == "" {
				for _, sub := range strings.Split(first, "|") {
					cmd.Subcommands = append(cmd.Subcommands, completion.Command{Name: sub, Flags: helpFlags(c.name, sub)})
				}
			} else {
				cmd.Flags = helpFlags(c.name)
			}
		}
		cmds = append(cmds, cmd)
	}
	return completion.Write(stdout, args[0], "idenplane", cmds)
}

// helpFlags are the flags a command's help lists: the command asked for
// its help does nothing else.
func helpFlags(cmd ...string) []string {
	var out bytes.Buffer
	_ = runCommand(cmd[0], append(cmd[1:], "-h"), strings.NewReader(""), &out, &out)
	return completion.FlagsOf(out.String())
}
