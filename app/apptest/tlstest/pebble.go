package tlstest

import (
	"crypto/x509"
	"encoding/pem"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// ACMEServer is Let's Encrypt's test CA, pebble, running in the test's
// process on loopback: its ACME directory over HTTPS, its validation
// authority, which checks the TLS-ALPN-01 challenge on 127.0.0.1 at the
// port given, and a DNS server that names 127.0.0.1 for every domain the
// test asks a certificate for.
type ACMEServer struct {
	DirectoryURL string
	// Client trusts the directory's own certificate (not one pebble
	// signs), for acme.Client.HTTPClient.
	Client *http.Client
	// DirectoryCAPEM is that certificate, for SSL_CERT_FILE of a child
	// process.
	DirectoryCAPEM []byte
	ca             *ca.CAImpl
}

// StartACME starts pebble, with its validations done at once rather than
// after the random pause that shakes out clients' retry logic, and its
// log kept in the test's when the test fails.
func StartACME(t *testing.T, tlsPort int) *ACMEServer {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logs := &testLog{}
	logger := log.New(logs, "pebble ", log.Lmicroseconds)
	resolver := startDNS(t)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "the default profile"}})
	validator := va.New(logger, 0, tlsPort, false, resolver, store)
	frontEnd := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	srv := httptest.NewTLSServer(frontEnd.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pebble's log:\n%s", logs)
		}
	})
	return &ACMEServer{
		DirectoryURL:   srv.URL + wfe.DirectoryPath,
		Client:         srv.Client(),
		DirectoryCAPEM: pemOf(srv.Certificate()),
		ca:             authority,
	}
}

// Roots trusts the certificates pebble signs.
func (s *ACMEServer) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.ca.GetRootCert(0).Cert)
	return pool
}

// startDNS answers A queries with 127.0.0.1 and the rest with no record,
// over TCP, which is how pebble asks.
func startDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		for _, q := range req.Question {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A: net.IPv4(127, 0, 0, 1)})
			}
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}

func pemOf(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// testLog keeps pebble's log lines, written from its goroutines.
type testLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
