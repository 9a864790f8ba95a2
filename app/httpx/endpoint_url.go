package httpx

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
)

// CheckEndpointURL is the rule of a URL the server posts events to (a
// webhook, an audit stream): an absolute https URL, or http to a loopback
// address allowed holds (a receiver beside the server, a test's); no
// credentials (the URL shows in answers and logs), no fragment, no host
// in a numeric form resolvers disagree on, and no host that is or
// resolves to a non-public address allowed does not hold. Errors are at
// field; maxLen bounds the URL.
func CheckEndpointURL(ctx context.Context, field, raw string, maxLen int, allowed []netip.Prefix) error {
	if raw == "" {
		return apperr.Field(field, "is required")
	}
	if len(raw) > maxLen {
		return apperr.Field(field, "is longer than %d characters", maxLen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return apperr.Field(field, "must be an absolute https URL")
	}
	switch {
	case u.User != nil:
		return apperr.Field(field, "must not hold credentials")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return apperr.Field(field, "must not have a fragment")
	case u.Scheme == "http" && !allowedLoopback(ctx, u.Hostname(), allowed):
		return apperr.Field(field, "must be https (http only to a loopback address --outbound-allow holds)")
	case u.Scheme != "https" && u.Scheme != "http":
		return apperr.Field(field, "must be an absolute https URL")
	case NumericHost(u.Hostname()):
		return apperr.Field(field, "host %q is neither a name nor an address in its usual form", u.Hostname())
	}
	return CheckOutboundURL(ctx, field, raw, allowed)
}

// CheckOutboundHost is CheckOutboundURL for the host of a peer that is
// not called over HTTP (a syslog receiver): refused when it is, or
// resolves to, a non-public address allowed does not hold, or is written
// in a numeric form resolvers disagree on.
func CheckOutboundHost(ctx context.Context, field, host string, allowed []netip.Prefix) error {
	if NumericHost(host) {
		return apperr.Field(field, "host %q is neither a name nor an address in its usual form", host)
	}
	return checkHost(ctx, field, host, allowed, PublicAddress)
}

// NumericHost says whether host looks like an address written in a form
// some resolvers read and others do not (2130706433, 0x7f.1, 017700000001):
// digits and dots (or a 0x prefix) that are not a plain IPv4 address. Such a
// host could name a private address one way and pass the check another.
func NumericHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil || host == "" {
		return false
	}
	for _, part := range strings.Split(strings.ToLower(host), ".") {
		part = strings.TrimPrefix(part, "0x")
		if part == "" || strings.Trim(part, "0123456789abcdef") != "" {
			return false
		}
	}
	return strings.Trim(strings.ToLower(host), "0123456789.") == "" || strings.Contains(strings.ToLower(host), "0x")
}

// allowedLoopback says whether host is, or resolves first to, a loopback
// address allowed holds: plain http is taken only for such a receiver,
// whose traffic never leaves the machine.
func allowedLoopback(ctx context.Context, host string, allowed []netip.Prefix) bool {
	a, err := netip.ParseAddr(host)
	if err != nil {
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		ips, lerr := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if lerr != nil || len(ips) == 0 {
			return false
		}
		a = ips[0]
	}
	a = a.Unmap()
	return a.IsLoopback() && allowedAddress(a, allowed)
}
