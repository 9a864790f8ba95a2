package ldapfed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	"github.com/go-ldap/ldap/v3"
)

// Connections: every step has a deadline. The dial, with the TLS handshake
// and StartTLS, has connectionTimeout; each bind or search readTimeout
// (the library's request timeout). The caller's context bounds it all:
// each user of a connection closes it when its context ends (withConn, or
// the pool's get), under whatever waits on it.

// dial connects to the directory of s and secures the connection as s
// says, within ctx and connectionTimeout.
func dial(ctx context.Context, s *Settings) (*ldap.Conn, error) {
	u, err := url.Parse(s.ConnectionURL)
	if err != nil {
		return nil, &DirectoryError{Kind: KindUnreachable, Detail: "bad connection URL", err: err}
	}
	port := u.Port()
	if port == "" {
		port = "389"
		if u.Scheme == "ldaps" {
			port = "636"
		}
	}
	host := u.Hostname()
	dctx, cancel := context.WithTimeout(ctx, s.connectionTimeout())
	defer cancel()
	d := net.Dialer{Control: refuseLinkLocal}
	raw, err := d.DialContext(dctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, dialError(err, s)
	}
	tlsConfig, err := s.tlsConfig(host)
	if err != nil {
		raw.Close()
		return nil, err
	}
	if u.Scheme == "ldaps" {
		tc := tls.Client(raw, tlsConfig)
		if err := tc.HandshakeContext(dctx); err != nil {
			raw.Close()
			return nil, tlsError(err, dctx, s)
		}
		raw = tc
	}
	c := ldap.NewConn(raw, u.Scheme == "ldaps")
	c.Start()
	c.SetTimeout(s.readTimeout())
	if s.StartTLS {
		// The library's handshake after StartTLS has no deadline of its
		// own: closing the connection ends it.
		stop := context.AfterFunc(dctx, func() { c.Close() })
		err := c.StartTLS(tlsConfig)
		stopped := stop()
		if err != nil {
			c.Close()
			var le *ldap.Error
			switch {
			case !stopped:
				return nil, timeoutError(s, "StartTLS")
			case errors.As(err, &le) && le.ResultCode != ldap.ErrorNetwork:
				return nil, &DirectoryError{Kind: KindTLS, Detail: "the directory refused StartTLS: " +
					ldap.LDAPResultCodeMap[le.ResultCode], err: err}
			}
			return nil, tlsError(err, dctx, s)
		}
	}
	return c, nil
}

// tlsConfig trusts the system's CAs (useTruststore), the configured ones,
// or both, and always verifies the certificate and its name.
func (s *Settings) tlsConfig(host string) (*tls.Config, error) {
	var pool *x509.CertPool
	if s.UseTruststore {
		sys, err := x509.SystemCertPool()
		if err != nil {
			sys = x509.NewCertPool()
		}
		pool = sys
	} else {
		pool = x509.NewCertPool()
	}
	if s.CAPEM != "" && !pool.AppendCertsFromPEM([]byte(s.CAPEM)) {
		return nil, &DirectoryError{Kind: KindTLS, Detail: "caPem holds no certificate"}
	}
	return &tls.Config{ServerName: host, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// refuseLinkLocal refuses link-local addresses, where cloud metadata
// services answer; a directory is never there.
func refuseLinkLocal(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if a := ap.Addr().Unmap(); a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a == netip.MustParseAddr("fd00:ec2::254") {
		return fmt.Errorf("%s is a link-local address, where no directory is served", a)
	}
	return nil
}

// searchScope is the library's value of a scope setting.
func (s *Settings) searchScope() int {
	if s.SearchScope == ScopeOne {
		return ldap.ScopeSingleLevel
	}
	return ldap.ScopeWholeSubtree
}

// userFilter is the filter of the provider's users: all their object
// classes, the extra filter, and more (already escaped by the caller).
func (s *Settings) userFilter(more string) string {
	var b strings.Builder
	b.WriteString("(&")
	for _, oc := range objectClasses(s.UserObjectClass) {
		b.WriteString("(objectClass=" + ldap.EscapeFilter(oc) + ")")
	}
	b.WriteString(s.UserLDAPFilter)
	b.WriteString(more)
	b.WriteString(")")
	return b.String()
}

// bindAs binds c as dn with password; an empty password is refused here,
// before the directory could take it as an anonymous bind.
func bindAs(c *ldap.Conn, dn, password string) error {
	if password == "" {
		return &DirectoryError{Kind: KindInvalidCredentials, Detail: "empty password refused"}
	}
	return c.Bind(dn, password)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		strings.Contains(err.Error(), "connection timed out")
}

// withConn dials, closes the connection when ctx ends or fn returns, and
// runs fn with it.
func withConn(ctx context.Context, s *Settings, fn func(c *ldap.Conn) error) error {
	c, err := dial(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	return fn(c)
}
