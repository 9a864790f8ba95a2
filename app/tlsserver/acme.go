package tlsserver

import (
	"crypto/tls"
	"net/http"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// ACME is where certificates come from when the server gets its own.
type ACME struct {
	Domains  []string // the names a certificate is asked for; a handshake for any other is refused
	Email    string   // the account's contact, told of expiry and problems; may be empty
	CacheDir string   // the account key and the certificates, kept across restarts
	// DirectoryURL is the CA's ACME directory: Let's Encrypt's when empty.
	DirectoryURL string
	// HTTPClient makes the calls to the CA; a client with a timeout when nil.
	HTTPClient *http.Client
}

// DefaultDirectoryURL is Let's Encrypt's production directory.
const DefaultDirectoryURL = autocert.DefaultACMEDirectory

// acmeTimeout bounds one call to the CA. Issuance takes several calls
// and waits for the CA's validation between them.
const acmeTimeout = 30 * time.Second

// Manager gets and renews the certificates of a.Domains from the CA by
// the TLS-ALPN-01 challenge, answered on the server's own TLS listener:
// the CA must reach it on port 443 of each domain. Naming the domains is
// the operator's acceptance of the CA's terms of service.
func (a ACME) Manager() *autocert.Manager {
	client := a.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: acmeTimeout}
	}
	dir := a.DirectoryURL
	if dir == "" {
		dir = DefaultDirectoryURL
	}
	return &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(a.CacheDir),
		HostPolicy: autocert.HostWhitelist(a.Domains...),
		Email:      a.Email,
		Client:     &acme.Client{DirectoryURL: dir, HTTPClient: client, UserAgent: "idenplane"},
	}
}

// TLSConfig is Config with m's certificates, answering the CA's
// TLS-ALPN-01 challenges on the same listener.
func TLSConfig(m *autocert.Manager) *tls.Config {
	return Config(m.GetCertificate, acme.ALPNProto)
}
