package ldapfed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// The kinds of directory failure that test-connection tells apart and
// every other answer names.
const (
	KindUnreachable        = "unreachable"         // no connection: refused, no route, unknown host
	KindTLS                = "tls"                 // the TLS handshake failed, with the certificate problem
	KindInvalidCredentials = "invalid_credentials" // the bind DN or its password is wrong
	KindNoSuchObject       = "no_such_object"      // a DN (usersDn) names no entry
	KindTimeout            = "timeout"             // the directory did not answer in time
	KindError              = "error"               // any other refusal of the directory
)

// DirectoryError is a directory that failed a step: its kind and what it
// said. Detail never holds a password.
type DirectoryError struct {
	Kind   string
	Detail string
	err    error
}

func (e *DirectoryError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("directory %s: %s: %v", e.Kind, e.Detail, e.err)
	}
	return fmt.Sprintf("directory %s: %s", e.Kind, e.Detail)
}

func (e *DirectoryError) Unwrap() error { return e.err }

func timeoutError(s *Settings, step string) *DirectoryError {
	return &DirectoryError{Kind: KindTimeout, Detail: fmt.Sprintf("%s: no answer within the timeout (connection %d ms, read %d ms)",
		step, s.ConnectionTimeout, s.ReadTimeout)}
}

func dialError(err error, s *Settings) error {
	if isTimeout(err) {
		return timeoutError(s, "connect to "+s.ConnectionURL)
	}
	return &DirectoryError{Kind: KindUnreachable, Detail: "cannot connect to " + s.ConnectionURL + ": " + netReason(err), err: err}
}

// netReason is the last, most specific part of a network error's text.
func netReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func tlsError(err error, ctx context.Context, s *Settings) error {
	if ctx.Err() != nil || isTimeout(err) {
		return timeoutError(s, "TLS handshake")
	}
	return &DirectoryError{Kind: KindTLS, Detail: "TLS handshake failed: " + certificateProblem(err), err: err}
}

// certificateProblem says what was wrong with the server's certificate,
// when that was the failure.
func certificateProblem(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return "the certificate is signed by an unknown authority (set caPem, or useTruststore)"
	case errors.As(err, &host):
		return "the certificate is not valid for this host: " + host.Error()
	case errors.As(err, &invalid):
		return "the certificate is invalid: " + invalid.Error()
	case errors.As(err, &header):
		return "the server does not speak TLS on this port"
	}
	return err.Error()
}

// classify names the kind of a failed bind or search of the directory of
// s; step says what was being done.
func classify(err error, s *Settings, step string) error {
	var de *DirectoryError
	if errors.As(err, &de) {
		return err
	}
	if isTimeout(err) {
		return timeoutError(s, step)
	}
	var le *ldap.Error
	if errors.As(err, &le) {
		switch le.ResultCode {
		case ldap.LDAPResultInvalidCredentials:
			return &DirectoryError{Kind: KindInvalidCredentials, Detail: step + ": invalid credentials", err: err}
		case ldap.LDAPResultNoSuchObject:
			detail := step + ": no such object"
			if le.MatchedDN != "" {
				detail += " (the directory has " + le.MatchedDN + ")"
			}
			return &DirectoryError{Kind: KindNoSuchObject, Detail: detail, err: err}
		case ldap.ErrorNetwork:
			if strings.Contains(err.Error(), "TLS handshake") {
				return &DirectoryError{Kind: KindTLS, Detail: step + ": " + err.Error(), err: err}
			}
			return &DirectoryError{Kind: KindUnreachable, Detail: step + ": the connection failed: " + netReason(err), err: err}
		}
		return &DirectoryError{Kind: KindError, Detail: step + ": " + ldap.LDAPResultCodeMap[le.ResultCode], err: err}
	}
	return &DirectoryError{Kind: KindError, Detail: step + ": " + err.Error(), err: err}
}
