// Package tlsserver is the server's own TLS, for an operator who runs it
// without a reverse proxy in front: the settings every listener gets
// (TLS 1.2 at least, HTTP/2), a certificate and key read from files and
// read again when they change, certificates from an ACME CA (Let's
// Encrypt) through autocert, and the Strict-Transport-Security header.
//
// Every certificate is chosen at the handshake (tls.Config.GetCertificate),
// so a new one serves the next connection while those already open keep
// the one they began with.
package tlsserver
