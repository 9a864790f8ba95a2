package main

// The release: the Makefile's targets, the binary it builds started as a
// scratch image would start it, and the deployment files of docs/deploy
// checked by the tools that read them (systemd-analyze, caddy, nginx).

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest/tlstest"
)

// needTool finds a program; missing, it skips the test, or fails it
// under CI=true, which installs every tool the tests use.
func needTool(t *testing.T, name, pkg string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	msg := name + " is not installed (Debian package " + pkg + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + ", and CI=true needs it")
	}
	t.Skip(msg + ": skipping")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// releaseBinary is the host's binary built by the Makefile's release
// recipe (static, -trimpath, version, commit and date stamped), once for
// every test that needs it.
var releaseBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "idenplane-release-test-")
	if err != nil {
		return "", err
	}
	arch := runtime.GOARCH
	if arch == "arm" {
		arch = "armv7"
	}
	bin := filepath.Join(dir, "idenplane-"+runtime.GOOS+"-"+arch)
	cmd := exec.Command("make", "--no-print-directory", "DIST="+dir, "VERSION=v0.0.0-releasetest", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "make: " + e.err.Error() + "\n" + e.out }

func buildRelease(t *testing.T) string {
	t.Helper()
	needTool(t, "make", "make")
	bin, err := releaseBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// make release names every platform, an SBOM of each, the deployment
// files and SHA256SUMS; every file it copies exists.
func TestReleaseTargets(t *testing.T) {
	needTool(t, "make", "make")
	out, err := exec.Command("make", "--no-print-directory", "-n", "release", "DIST=out", "VERSION=v1.2.3", "COMMIT=abc", "DATE=2026-01-02T03:04:05Z").Output()
	if err != nil {
		t.Fatalf("make -n release: %v", err)
	}
	plan := string(out)
	// The sub-make's targets, as the recipe names them.
	sub, err := exec.Command("make", "--no-print-directory", "-n", "DIST=out", "VERSION=v1.2.3", "COMMIT=abc", "DATE=2026-01-02T03:04:05Z",
		"out/idenplane-linux-amd64", "out/idenplane-linux-arm64", "out/idenplane-linux-armv7", "out/idenplane-darwin-arm64",
		"out/idenplane-windows-amd64.exe", "out/idenplane-linux-armv7.cdx.json").Output()
	if err != nil {
		t.Fatalf("make -n of the release's files: %v", err)
	}
	stamp := "-ldflags '-s -w -X main.version=v1.2.3 -X main.commit=abc -X main.date=2026-01-02T03:04:05Z'"
	for _, p := range []struct{ file, env string }{
		{"idenplane-linux-amd64", "GOOS=linux GOARCH=amd64 "},
		{"idenplane-linux-arm64", "GOOS=linux GOARCH=arm64 "},
		{"idenplane-linux-armv7", "GOOS=linux GOARCH=arm GOARM=7 "},
		{"idenplane-darwin-arm64", "GOOS=darwin GOARCH=arm64 "},
		{"idenplane-windows-amd64.exe", "GOOS=windows GOARCH=amd64 "},
	} {
		if !strings.Contains(plan, "out/"+p.file+" ") && !strings.HasSuffix(strings.TrimSpace(plan), "out/"+p.file) {
			t.Errorf("make release does not build %s:\n%s", p.file, plan)
		}
		if sbom := "out/" + strings.TrimSuffix(p.file, ".exe") + ".cdx.json"; !strings.Contains(plan, sbom) {
			t.Errorf("make release makes no SBOM %s", sbom)
		}
		line := findLine(string(sub), "-o out/"+p.file+" ")
		if !strings.Contains(line, p.env) || !strings.Contains(line, "go build -trimpath "+stamp) {
			t.Errorf("%s is built by %q, want %q and go build -trimpath %s", p.file, line, p.env, stamp)
		}
	}
	if line := findLine(string(sub), "out/idenplane-linux-armv7.cdx.json"); !strings.Contains(line, "GOOS=linux GOARCH=arm GOARM=7 ") ||
		!strings.Contains(line, "cyclonedx-gomod app -json") {
		t.Errorf("the armv7 SBOM is made by %q", line)
	}
	cp := findLine(plan, "cp ")
	for _, f := range strings.Fields(strings.TrimPrefix(cp, "cp ")) {
		if strings.HasPrefix(f, "docs/deploy/") && !fileExists(f) {
			t.Errorf("make release copies %s, which does not exist", f)
		}
	}
	if !strings.Contains(cp, "docs/deploy/idenplane.service") {
		t.Errorf("make release does not copy the systemd unit: %q", cp)
	}
	if !strings.Contains(plan, "sha256sum -- * > SHA256SUMS") {
		t.Errorf("make release writes no SHA256SUMS:\n%s", plan)
	}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "export CGO_ENABLED := 0") {
		t.Error("the Makefile does not build with CGO_ENABLED=0")
	}
	if ignore, _ := os.ReadFile(".gitignore"); !slices.Contains(strings.Split(string(ignore), "\n"), "/dist/") {
		t.Error(".gitignore does not leave out /dist/")
	}
}

func findLine(text, substr string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, substr) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// The release binary starts in an empty directory with an empty
// environment, as in a scratch image: no HOME, no PATH, no TMPDIR, no
// settings but the listen address. It makes its database and key there,
// serves health, and `idenplane health` (the image's health check) says
// so, then says otherwise once it has stopped. Its version shows what
// the release stamped.
func TestReleaseBinaryStartsInEmptyEnvironment(t *testing.T) {
	bin := buildRelease(t)
	commit, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	dir := t.TempDir()
	version := runIn(t, dir, bin, "version")
	if want := "idenplane v0.0.0-releasetest (commit " + strings.TrimSpace(string(commit)) + ", built "; !strings.HasPrefix(version.out, want) ||
		!regexp.MustCompile(`built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n$`).MatchString(version.out) {
		t.Errorf("version printed %q, want %q and the commit's date", version.out, want)
	}
	if out, err := exec.Command("go", "version", "-m", bin).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") ||
		!strings.Contains(string(out), "-trimpath=true") {
		t.Errorf("the release binary is not static and trimmed (%v):\n%s", err, out)
	}

	addr := cliFreeAddr(t)
	srv := exec.Command(bin, "serve", "--addr", addr)
	srv.Dir, srv.Env = dir, []string{}
	log := newCLILog()
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = srv.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("server output:\n%s", log)
		}
	})
	ready := false
	for range 600 {
		if resp, err := http.Get("http://" + addr + "/health/ready"); err == nil {
			resp.Body.Close()
			if ready = resp.StatusCode == http.StatusOK; ready {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !ready {
		t.Fatal("/health/ready never answered 200")
	}
	for _, f := range []string{"idenplane.db", "idenplane.db.key"} {
		if !fileExists(filepath.Join(dir, f)) {
			t.Errorf("%s was not made in the working directory", f)
		}
	}
	if res := runIn(t, dir, bin, "health", "--addr", addr); res.code != 0 || res.out != "ok\n" {
		t.Errorf("health of a running server: code %d, output %q", res.code, res.out)
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(cliWaitBound):
		t.Fatal("the server did not stop on SIGTERM")
	}
	if code := srv.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if res := runIn(t, dir, bin, "health", "--addr", addr); res.code != 1 || !strings.Contains(res.out, "connection refused") {
		t.Errorf("health of a stopped server: code %d, output %q; want 1 and the refusal", res.code, res.out)
	}
}

type runResult struct {
	out  string // stdout and stderr
	code int
}

// runIn runs bin in dir with an empty environment.
func runIn(t *testing.T, dir, bin string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliWaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, []string{}
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return runResult{out: string(out), code: cmd.ProcessState.ExitCode()}
}

// deployFile reads a file of docs/deploy.
func deployFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The systemd unit passes systemd-analyze verify, keeps its sandboxing,
// and rates as well sandboxed by systemd-analyze security.
func TestDeploySystemdUnit(t *testing.T) {
	analyze := needTool(t, "systemd-analyze", "systemd")
	unit := deployFile(t, "idenplane.service")
	for _, d := range []string{"DynamicUser=yes", "StateDirectory=idenplane", "ProtectSystem=strict", "ProtectHome=yes",
		"NoNewPrivileges=yes", "PrivateTmp=yes", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
		"SystemCallFilter=@system-service", "CapabilityBoundingSet=\n", "ExecReload=/bin/kill -HUP $MAINPID"} {
		if !strings.Contains(unit, d) {
			t.Errorf("the unit lacks %q", strings.TrimSpace(d))
		}
	}
	// verify checks that ExecStart names an executable: the binary built
	// for these tests stands in for the installed one.
	path := filepath.Join(t.TempDir(), "idenplane.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/idenplane", cliBinary)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=yes", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security rates the unit's exposure above 2.0: %v\n%s", err, out)
	}
}

// The Caddyfile is one Caddy accepts.
func TestDeployCaddyfile(t *testing.T) {
	caddy := needTool(t, "caddy", "caddy")
	cmd := exec.Command(caddy, "validate", "--config", filepath.Join("docs", "deploy", "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Errorf("caddy validate: %v\n%s", err, out)
	}
}

// The nginx server blocks pass nginx -t inside a main configuration, the
// certificate paths pointing at a certificate of the test's.
func TestDeployNginx(t *testing.T) {
	nginx := needTool(t, "nginx", "nginx", "/usr/sbin")
	dir := t.TempDir()
	ca := tlstest.NewCA(t)
	certPath, keyPath := ca.WriteServerFiles(t, dir, 1)
	site := strings.NewReplacer("/etc/letsencrypt/live/id.example.com/fullchain.pem", certPath,
		"/etc/letsencrypt/live/id.example.com/privkey.pem", keyPath).Replace(deployFile(t, "nginx.conf"))
	if strings.Contains(site, "/etc/letsencrypt") {
		t.Fatal("nginx.conf names certificate paths the test does not replace")
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("idenplane.conf", site)
	write("nginx.conf", "pid "+dir+"/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n\taccess_log off;\n\tinclude "+dir+"/idenplane.conf;\n}\n")
	out, err := exec.Command(nginx, "-t", "-q", "-p", dir, "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("nginx -t: %v\n%s", err, out)
	}
}

// The Containerfile's image runs as a user other than root, keeps its
// data in one volume, checks its health with the binary itself, and is
// configured through variables the binary reads.
func TestDeployContainerfile(t *testing.T) {
	file := deployFile(t, "Containerfile")
	var final []string // the instructions of the last stage
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(file, "\\\n", " ")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			final = nil
		}
		final = append(final, line)
	}
	count := func(prefix string) (n int, last string) {
		for _, l := range final {
			if strings.HasPrefix(l, prefix) {
				n, last = n+1, l
			}
		}
		return n, last
	}
	if _, from := count("FROM "); !strings.Contains(from, "distroless/static") || !strings.HasSuffix(from, ":nonroot") {
		t.Errorf("the image is built on %q, want distroless static nonroot", from)
	}
	if n, user := count("USER "); n != 1 || strings.HasPrefix(user, "USER 0") || strings.HasPrefix(user, "USER root") {
		t.Errorf("USER: %q (%d), want one that is not root", user, n)
	}
	if n, volume := count("VOLUME "); n != 1 || volume != `VOLUME ["/data"]` {
		t.Errorf("VOLUME: %q (%d), want the one /data", volume, n)
	}
	if n, hc := count("HEALTHCHECK "); n != 1 || !strings.HasSuffix(hc, `CMD ["/usr/local/bin/idenplane", "health"]`) {
		t.Errorf("HEALTHCHECK: %q, want the binary's health command", hc)
	}
	if _, env := count("ENV "); !strings.Contains(env, "IDENPLANE_DB=/data/") {
		t.Errorf("ENV: %q, want the database in /data", env)
	}
	if !strings.Contains(file, "COPY --from=build --chown=65532:65532 /out/data /data") || !strings.Contains(file, "USER 65532:65532") {
		t.Error("the data directory is not the image user's")
	}
}

// Every IDENPLANE_ variable the deployment files and the how-tos name is
// one the binary reads.
func TestDeployNamesKnownSettings(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("docs", "deploy", "*"))
	files = append(files, filepath.Join("docs", "tls.md"), filepath.Join("docs", "release.md"))
	name := regexp.MustCompile(`IDENPLANE_[A-Z_]+[A-Z]`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range name.FindAllString(string(b), -1) {
			if !strings.Contains(string(src), `"`+n+`"`) {
				t.Errorf("%s names %s, which the binary does not read", f, n)
			}
		}
	}
}
