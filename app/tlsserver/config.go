package tlsserver

import "crypto/tls"

// Config is the TLS configuration of the server's listener: TLS 1.2 at
// least and Go's default cipher suites (forward secrecy only: no RSA key
// exchange, no 3DES; the AEAD ones first), kept as Go revises them rather
// than frozen here; HTTP/2 then HTTP/1.1 offered by ALPN; and the
// certificate getCert gives at each handshake. protos are further ALPN
// protocols the certificate source answers itself (ACME's acme-tls/1).
func Config(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), protos ...string) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: getCert,
		NextProtos:     append([]string{"h2", "http/1.1"}, protos...),
	}
}
