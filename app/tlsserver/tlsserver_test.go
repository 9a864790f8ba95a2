package tlsserver_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest/tlstest"
	"github.com/idenplane/idenplane/app/tlsserver"
)

// serveTLS serves h over TLS with cfg on a loopback port until the test
// ends, as the server's listener does, and returns its address.
func serveTLS(t *testing.T, cfg *tls.Config, h http.Handler) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln, "https://" + ln.Addr().String()
}

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) }

// client is a client of its own, so each opens a connection of its own.
func client(ca *tlstest.CA) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, ForceAttemptHTTP2: true}}
}

// get makes a request with c and returns the answer's serial and
// whether it came over a connection opened before.
func get(t *testing.T, c *http.Client, url string) (resp *http.Response, serial *big.Int, reused bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp, resp.TLS.PeerCertificates[0].SerialNumber, reused
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// A certificate written over the files is served to the next connection
// without a restart, while a connection opened before goes on with the
// one it began with, over HTTP/2.
func TestCertFilesSwapKeepsOpenConnections(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	certPath, keyPath := ca.WriteServerFiles(t, dir, 1001)
	files, err := tlsserver.LoadCertFiles(certPath, keyPath, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go files.Watch(ctx, 10*time.Millisecond, nil)
	_, base := serveTLS(t, tlsserver.Config(files.GetCertificate), http.HandlerFunc(hello))

	open := client(ca)
	resp, serial, _ := get(t, open, base)
	if resp.Proto != "HTTP/2.0" || serial.Int64() != 1001 {
		t.Fatalf("first connection: %s with serial %v, want HTTP/2.0 with 1001", resp.Proto, serial)
	}

	ca.WriteServerFiles(t, dir, 1002)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, serial, _ := get(t, client(ca), base)
		if serial.Int64() == 1002 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a new connection still gets serial %v after the files changed", serial)
		}
		time.Sleep(10 * time.Millisecond)
	}

	resp, serial, reused := get(t, open, base)
	if !reused || resp.Proto != "HTTP/2.0" || serial.Int64() != 1001 {
		t.Fatalf("the connection opened before: reused %v, %s, serial %v; want it reused, HTTP/2.0, serial 1001",
			reused, resp.Proto, serial)
	}
}

// SIGHUP (a value on the reload channel) reads the files at once, without
// waiting for the next look at them.
func TestCertFilesReloadOnSignal(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	certPath, keyPath := ca.WriteServerFiles(t, dir, 2001)
	files, err := tlsserver.LoadCertFiles(certPath, keyPath, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reload := make(chan os.Signal)
	go files.Watch(ctx, time.Hour, reload)
	_, base := serveTLS(t, tlsserver.Config(files.GetCertificate), http.HandlerFunc(hello))

	ca.WriteServerFiles(t, dir, 2002)
	if _, serial, _ := get(t, client(ca), base); serial.Int64() != 2001 {
		t.Fatalf("serial %v before the signal, want 2001 (the files are looked at hourly)", serial)
	}
	reload <- os.Interrupt // unbuffered: received by Watch, which reloads before it waits again
	reload <- os.Interrupt
	if _, serial, _ := get(t, client(ca), base); serial.Int64() != 2002 {
		t.Fatalf("serial %v after the signal, want 2002", serial)
	}
}

// Files that do not make a pair (a renewal half written: the new
// certificate beside the old key) leave the certificate served before.
func TestCertFilesBadPairKeepsOldCertificate(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir, other := t.TempDir(), t.TempDir()
	certPath, keyPath := ca.WriteServerFiles(t, dir, 3001)
	files, err := tlsserver.LoadCertFiles(certPath, keyPath, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	newCert, _ := ca.WriteServerFiles(t, other, 3002)
	if err := os.Rename(newCert, certPath); err != nil {
		t.Fatal(err)
	}
	if err := files.Reload(); err == nil {
		t.Fatal("Reload of a certificate with another's key succeeded")
	}
	cert, _ := files.GetCertificate(nil)
	if cert.Leaf.SerialNumber.Int64() != 3001 {
		t.Fatalf("serving serial %v after a failed reload, want 3001", cert.Leaf.SerialNumber)
	}
	if _, err := tlsserver.LoadCertFiles(certPath, keyPath, quietLog()); err == nil {
		t.Fatal("LoadCertFiles of a certificate with another's key succeeded")
	}
}

// TLS 1.1 and older are refused; HTTP/2 is what a client that offers it gets.
func TestConfigRefusesOldTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	certPath, keyPath := ca.WriteServerFiles(t, t.TempDir(), 4001)
	files, err := tlsserver.LoadCertFiles(certPath, keyPath, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := serveTLS(t, tlsserver.Config(files.GetCertificate), http.HandlerFunc(hello))
	for _, c := range []struct {
		version uint16
		ok      bool
	}{{tls.VersionTLS11, false}, {tls.VersionTLS12, true}, {tls.VersionTLS13, true}} {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost",
			MinVersion: c.version, MaxVersion: c.version, NextProtos: []string{"h2", "http/1.1"}})
		if (err == nil) != c.ok {
			t.Errorf("TLS version %x: handshake error %v, want success %v", c.version, err, c.ok)
		}
		if err == nil {
			if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
				t.Errorf("TLS version %x: ALPN chose %q, want h2", c.version, p)
			}
			conn.Close()
		}
	}
}

// A certificate comes from a local ACME CA at the first handshake that
// names the domain, through the TLS-ALPN-01 challenge answered on the
// same listener, and is kept in the cache directory.
func TestACMEIssuance(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ca := tlstest.StartACME(t, ln.Addr().(*net.TCPAddr).Port)
	cache := t.TempDir()
	m := tlsserver.ACME{Domains: []string{"idp.idenplane.test"}, Email: "ops@idenplane.test", CacheDir: cache,
		DirectoryURL: ca.DirectoryURL, HTTPClient: ca.Client}.Manager()
	srv := &http.Server{Handler: http.HandlerFunc(hello), TLSConfig: tlsserver.TLSConfig(m),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: ca.Roots(), ServerName: "idp.idenplane.test"}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("GET over the ACME certificate: %v", err)
	}
	resp.Body.Close()
	leaf := resp.TLS.PeerCertificates[0]
	if leaf.Subject.CommonName != "idp.idenplane.test" && (len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "idp.idenplane.test") {
		t.Errorf("certificate for %v %q, want idp.idenplane.test", leaf.DNSNames, leaf.Subject.CommonName)
	}
	if resp.Proto != "HTTP/2.0" {
		t.Errorf("protocol %s, want HTTP/2.0", resp.Proto)
	}
	if _, err := os.Stat(cache + "/idp.idenplane.test"); err != nil {
		t.Errorf("certificate not in the cache directory: %v", err)
	}
	// A name outside the domains gets no certificate and no call to the CA.
	other := &tls.Config{RootCAs: ca.Roots(), ServerName: "other.idenplane.test"}
	if conn, err := tls.Dial("tcp", ln.Addr().String(), other); err == nil {
		conn.Close()
		t.Error("a handshake for a name not configured succeeded")
	}
}
