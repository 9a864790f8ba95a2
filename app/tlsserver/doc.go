// Package tlsserver is the server's own TLS, for an operator who runs it
// without a reverse proxy in front: the settings every listener gets
// (TLS 1.2 at least, HTTP/2), a certificate and key read from files and
// read again when they change, certificates from an ACME CA (Let's
// Encrypt) through autocert. The Strict-Transport-Security header is the
// app's: it sends it whenever the external URL is https, as it must be
// when the server serves TLS.
//
// Every certificate is chosen at the handshake (tls.Config.GetCertificate),
// so a new one serves the next connection while those already open keep
// the one they began with.
package tlsserver
