package tlsserver

import (
	"crypto/tls"
	"net/http"
)

// Config is the TLS configuration of the server's listener: TLS 1.2 at
// least and Go's default cipher suites (which leave out the CBC and RSA
// key exchange suites), HTTP/2 then HTTP/1.1 offered by ALPN, and the
// certificate getCert gives at each handshake. protos are further ALPN
// protocols the certificate source answers itself (ACME's acme-tls/1).
func Config(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), protos ...string) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: getCert,
		NextProtos:     append([]string{"h2", "http/1.1"}, protos...),
	}
}

// hstsValue asks browsers to come back over HTTPS only for a year. It
// names no subdomains: they may be other servers', not this one's.
const hstsValue = "max-age=31536000"

// HSTS adds Strict-Transport-Security to every answer given over TLS. A
// browser ignores it over plain HTTP (RFC 6797 §8.1), so it is not sent
// there: behind a proxy that ends TLS, the proxy sends it.
func HSTS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", hstsValue)
		}
		next.ServeHTTP(w, r)
	})
}
