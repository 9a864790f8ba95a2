package main

// The server's own TLS, through the built binary: certificate files read
// again on SIGHUP and when they change while connections stay open,
// HTTP/2, HSTS over TLS only, certificates from a local ACME CA, the
// settings' checks, and the health probe over TLS.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest/tlstest"
)

// cliLaunchTLS starts `idenplane serve` on addr with the arguments and
// environment given and waits until it answers /health/live over TLS to
// a client trusting roots, asking for serverName.
func cliLaunchTLS(t *testing.T, dir, addr string, roots *x509.CertPool, serverName string, env []string, args ...string) *cliServer {
	t.Helper()
	s := &cliServer{t: t, db: filepath.Join(dir, "idenplane.db"), base: "https://" + addr, stdout: newCLILog(), stderr: newCLILog(),
		done: make(chan struct{})}
	s.cmd = exec.Command(cliBinary, append([]string{"serve", "--addr", addr, "--db", s.db}, args...)...)
	s.cmd.Dir = dir
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
			<-s.done
		}
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", s.base, s.stderr)
		}
	})
	client := tlsClient(roots, serverName)
	for range 600 {
		if s.exited() {
			t.Fatalf("server exited with code %d; stderr:\n%s", s.cmd.ProcessState.ExitCode(), s.stderr)
		}
		resp, err := client.Get(s.base + "/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/health/live never answered 200 over TLS; stderr:\n%s", s.stderr)
	return nil
}

// tlsClient is a client with a connection pool of its own, offering
// HTTP/2.
func tlsClient(roots *x509.CertPool, serverName string) *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName}}}
}

type tlsAnswer struct {
	resp   *http.Response
	serial *big.Int
	reused bool // the request went over a connection opened before
}

func tlsGet(t *testing.T, c *http.Client, url string) tlsAnswer {
	t.Helper()
	var a tlsAnswer
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { a.reused = info.Reused }}))
	if a.resp, err = c.Do(req); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	a.resp.Body.Close()
	a.serial = a.resp.TLS.PeerCertificates[0].SerialNumber
	return a
}

// waitSerial connects anew until the server shows the serial, bounded.
func waitSerial(t *testing.T, ca *tlstest.CA, url string, want int64, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		got := tlsGet(t, tlsClient(ca.Pool, ""), url).serial
		if got.Int64() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a new connection still gets serial %v after %v, want %d", got, bound, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A renewed certificate is served without a restart: at once on SIGHUP,
// and within the poll interval when the files change with no signal. A
// connection opened before goes on, over HTTP/2, with the certificate it
// began with. Every answer over TLS carries HSTS (the base URL is https).
func TestCLITLSCertificateSwap(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	certPath, keyPath := ca.WriteServerFiles(t, dir, 1)
	addr := cliFreeAddr(t)
	s := cliLaunchTLS(t, dir, addr, ca.Pool, "", []string{"IDENPLANE_TLS_CERT=" + certPath, "IDENPLANE_TLS_KEY=" + keyPath},
		"--base-url", "https://"+addr)

	open := tlsClient(ca.Pool, "")
	first := tlsGet(t, open, s.base+"/health")
	if first.resp.Proto != "HTTP/2.0" || first.serial.Int64() != 1 {
		t.Fatalf("first answer: %s, serial %v; want HTTP/2.0, serial 1", first.resp.Proto, first.serial)
	}
	if got := first.resp.Header.Get("Strict-Transport-Security"); got != "max-age=63072000; includeSubDomains" {
		t.Errorf("Strict-Transport-Security %q over TLS, want max-age=63072000; includeSubDomains", got)
	}

	ca.WriteServerFiles(t, dir, 2)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Bounded under the 5 s poll, so that the signal is what read them
	// (TestCertFilesReloadOnSignal shows the signal alone, with no poll).
	waitSerial(t, ca, s.base+"/health", 2, 3*time.Second)

	again := tlsGet(t, open, s.base+"/health")
	if !again.reused || again.resp.Proto != "HTTP/2.0" || again.serial.Int64() != 1 {
		t.Fatalf("the connection opened before: reused %v, %s, serial %v; want it reused, HTTP/2.0, serial 1",
			again.reused, again.resp.Proto, again.serial)
	}

	ca.WriteServerFiles(t, dir, 3)
	waitSerial(t, ca, s.base+"/health", 3, 30*time.Second)
	if s.exited() {
		t.Fatal("the server exited")
	}

	// The health probe reads the same settings and asks over TLS.
	env := cliEnv("IDENPLANE_TLS_CERT="+certPath, "IDENPLANE_TLS_KEY="+keyPath)
	if res := cliRun(t, dir, env, "", "health", "--addr", addr); res.code != 0 || res.stdout != "ok\n" {
		t.Errorf("health: code %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	s.stopGracefully()
}

// Plain HTTP under an http base URL carries no HSTS. SIGHUP, which the
// systemd unit's reload sends, leaves a server without certificate files
// running, as it was.
func TestCLIPlainHTTPNoHSTSAndSIGHUP(t *testing.T) {
	s := cliStartServer(t, filepath.Join(t.TempDir(), "idenplane.db"))
	resp, err := http.Get(s.base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, ok := resp.Header["Strict-Transport-Security"]; ok {
		t.Errorf("Strict-Transport-Security %q over plain HTTP, want none", got)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(cliWaitBound)
	for !strings.Contains(s.stderr.String(), "SIGHUP: no certificate files to read again") && !s.exited() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s.exited() {
		t.Fatalf("SIGHUP ended the server: %v", s.cmd.ProcessState)
	}
	if err := s.waitReady(); err != nil {
		t.Fatalf("after SIGHUP: %v", err)
	}
	s.stopGracefully()
}

// A certificate from a local ACME CA (pebble, in this process) at the
// first handshake: the TLS-ALPN-01 challenge answered on the server's
// own port, the account and certificate kept in "acme" beside the
// database. The CA's directory is trusted through SSL_CERT_FILE, as an
// operator of a private CA would.
func TestCLIACME(t *testing.T) {
	addr := cliFreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	tlsPort, _ := strconv.Atoi(port)
	acme := tlstest.StartACME(t, tlsPort)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "acme-directory-ca.pem")
	if err := os.WriteFile(caFile, acme.DirectoryCAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	const domain = "idp.idenplane.test"
	env := []string{"IDENPLANE_ACME_DOMAIN=" + domain, "IDENPLANE_ACME_EMAIL=ops@idenplane.test", "SSL_CERT_FILE=" + caFile}
	s := cliLaunchTLS(t, dir, addr, acme.Roots(), domain, env,
		"--acme-directory", acme.DirectoryURL, "--base-url", "https://"+domain)
	a := tlsGet(t, tlsClient(acme.Roots(), domain), s.base+"/health")
	if leaf := a.resp.TLS.PeerCertificates[0]; !slices.Equal(leaf.DNSNames, []string{domain}) {
		t.Errorf("certificate for %v, want [%s]", leaf.DNSNames, domain)
	}
	if a.resp.Proto != "HTTP/2.0" {
		t.Errorf("protocol %s, want HTTP/2.0", a.resp.Proto)
	}
	if _, err := os.Stat(filepath.Join(dir, "acme", domain)); err != nil {
		t.Errorf("the certificate is not in the cache beside the database: %v", err)
	}

	// The health probe reads the same settings and asks over TLS for the domain.
	if res := cliRun(t, dir, cliEnv(env...), "", "health", "--addr", addr); res.code != 0 || res.stdout != "ok\n" {
		t.Errorf("health: code %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	s.stopGracefully()
}

// The TLS settings are checked before anything starts, each failure
// naming its flag and variable.
func TestCLITLSConfigValidation(t *testing.T) {
	ca := tlstest.NewCA(t)
	certPath, keyPath := ca.WriteServerFiles(t, t.TempDir(), 1)
	https := []string{"--base-url", "https://id.example.com"}
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"cert without key", append([]string{"--tls-cert", certPath}, https...), nil, "--tls-cert (IDENPLANE_TLS_CERT) and --tls-key (IDENPLANE_TLS_KEY) must be set together"},
		{"key from env without cert", https, []string{"IDENPLANE_TLS_KEY=" + keyPath}, "must be set together"},
		{"files and ACME", append([]string{"--tls-cert", certPath, "--tls-key", keyPath, "--acme-domain", "id.example.com"}, https...), nil,
			"--acme-domain (IDENPLANE_ACME_DOMAIN) and --tls-cert (IDENPLANE_TLS_CERT) exclude each other"},
		{"ACME for a bare name", append([]string{"--acme-domain", "localhost"}, https...), nil, `--acme-domain (IDENPLANE_ACME_DOMAIN): "localhost" is not a domain name`},
		{"ACME for an address", https, []string{"IDENPLANE_ACME_DOMAIN=192.0.2.1"}, `"192.0.2.1" is not a domain name`},
		{"ACME email without domain", append([]string{"--acme-email", "ops@example.com"}, https...), nil, "--acme-email (IDENPLANE_ACME_EMAIL) needs --acme-domain"},
		{"ACME email not an address", append([]string{"--acme-domain", "id.example.com", "--acme-email", "ops"}, https...), nil, `--acme-email (IDENPLANE_ACME_EMAIL) is not an email address: "ops"`},
		{"ACME directory over http", append([]string{"--acme-domain", "id.example.com", "--acme-directory", "http://ca.example/dir"}, https...), nil,
			`--acme-directory (IDENPLANE_ACME_DIRECTORY) must be an https URL, not "http://ca.example/dir"`},
		{"TLS with an http base URL", []string{"--tls-cert", certPath, "--tls-key", keyPath, "--base-url", "http://id.example.com"}, nil,
			`--base-url (IDENPLANE_BASE_URL) must be an https URL when the server serves TLS, not "http://id.example.com"`},
		{"ACME with the default base URL", []string{"--acme-domain", "id.example.com"}, nil, "must be an https URL when the server serves TLS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			res := cliRun(t, dir, cliEnv(tc.env...), "", append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "idenplane.db")}, tc.args...)...)
			if res.code != 1 || !strings.Contains(res.stderr, tc.want) {
				t.Fatalf("code %d, want 1; stderr does not say %q:\n%s", res.code, tc.want, res.stderr)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("invalid config left files behind: %v", entries)
			}
		})
	}

	// Files that do not load stop the start, naming the file, before the
	// port is taken.
	t.Run("certificate file missing", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		missing := filepath.Join(dir, "nope.pem")
		res := cliRun(t, dir, cliEnv(), "", "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "idenplane.db"),
			"--tls-cert", missing, "--tls-key", keyPath, "--base-url", "https://id.example.com")
		if res.code != 1 || !strings.Contains(res.stderr, missing) || !strings.Contains(res.stderr, "no such file") {
			t.Fatalf("code %d, want 1 naming %s:\n%s", res.code, missing, res.stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("a certificate that does not load left files behind: %v", entries)
		}
	})
}

// An external URL written with an upper-case scheme is https all the
// same: its cookies are Secure, HSTS is sent, and the issuer is written
// with https://.
func TestCLIBaseURLSchemeCase(t *testing.T) {
	dir := t.TempDir()
	addr := cliFreeAddr(t)
	s := &cliServer{t: t, db: filepath.Join(dir, "idenplane.db"), base: "http://" + addr, stdout: newCLILog(), stderr: newCLILog(),
		done: make(chan struct{})}
	s.cmd = exec.Command(cliBinary, "serve", "--addr", addr, "--db", s.db, "--base-url", "HTTPS://"+addr)
	s.cmd.Env = cliEnv("IDENPLANE_ADMIN_API_KEY=" + cliAPIKey)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		if !s.exited() {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	if err := s.waitReady(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, s.stderr)
	}
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "acme"}, http.StatusCreated)
	var discovery struct {
		Issuer string `json:"issuer"`
	}
	if err := json.Unmarshal(s.must(http.MethodGet, "/realms/acme/.well-known/openid-configuration", "", nil, http.StatusOK), &discovery); err != nil {
		t.Fatal(err)
	}
	if discovery.Issuer != "https://"+addr+"/realms/acme" {
		t.Errorf("issuer %q, want https://%s/realms/acme", discovery.Issuer, addr)
	}
	health, err := http.Get(s.base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	health.Body.Close()
	if got := health.Header.Get("Strict-Transport-Security"); got == "" {
		t.Error("no Strict-Transport-Security under an https base URL")
	}
	req, _ := http.NewRequest(http.MethodGet, s.base+"/realms/acme/account/", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) == 0 {
		t.Fatalf("the account page set no cookie (status %d)", resp.StatusCode)
	}
	for _, c := range cookies {
		if !c.Secure {
			t.Errorf("cookie %s is not Secure under an https base URL", c.Name)
		}
	}
}
