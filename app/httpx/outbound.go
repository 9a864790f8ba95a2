package httpx

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// ErrForbiddenAddress is an outbound call refused because the address it
// would connect to is not public. Its text names the flag that allows one,
// since an administrator sees it (a failed discovery, a test mail).
var ErrForbiddenAddress = errors.New("outbound connection to a non-public address refused (the server's --outbound-allow may allow it)")

// nonPublic are the ranges an outbound call may not reach unless allowed:
// besides what netip classifies (loopback, private, link-local, which holds
// the cloud metadata address 169.254.169.254, multicast, unspecified),
// the shared address space of carrier-grade NAT, "this network", the IETF
// protocol assignments, benchmarking and reserved ranges, and the IPv6
// translation and documentation prefixes that can route to them.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// PublicAddress says whether addr is one an outbound call may reach by
// default.
func PublicAddress(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsGlobalUnicast() || addr.IsPrivate() || addr.IsLoopback() || addr.IsLinkLocalUnicast() {
		return false
	}
	return !slices.ContainsFunc(nonPublic, func(p netip.Prefix) bool { return p.Contains(addr) })
}

// MetadataAddress says whether addr is where cloud metadata services answer
// (link-local, and AWS's IPv6 fd00:ec2::254): no mail relay or directory
// is ever there.
func MetadataAddress(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() || addr == awsMetadataIPv6
}

var awsMetadataIPv6 = netip.MustParseAddr("fd00:ec2::254")

// OutboundClient is the HTTP client of calls the server makes to addresses
// an administrator configured or a document named (an upstream identity
// provider's endpoints and keys): each call ends after timeout, and a
// connection to a non-public address (PublicAddress) is refused unless one
// of allowed holds it. The address is checked as it is dialled, after name
// resolution, so a name that resolves to an internal address, or a
// redirect to one, is refused too. No proxy is used: it would dial for us.
// Every HTTP call to an address that is not the server's own goes through
// one of these: identity providers, mail providers' APIs, back-channel
// logout, and whatever calls out next.
func OutboundClient(timeout time.Duration, allowed []netip.Prefix) *http.Client {
	dialer := OutboundDialer(timeout, allowed)
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Timeout: timeout, Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		}}
}

// OutboundDialer is OutboundClient's dialer, for the peers it does not
// reach over HTTP (a syslog receiver, over TCP, TLS or UDP): each dial
// ends after timeout, and the address dialled, after name resolution,
// must be public (PublicAddress) or held by allowed.
func OutboundDialer(timeout time.Duration, allowed []netip.Prefix) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		return checkDialAddress(address, allowed)
	}}
}

// LocalNetworkControl is the dialer Control of TCP peers that live in the
// operator's own network, a mail relay or a directory: loopback and
// private addresses are theirs to use, but a metadata address
// (MetadataAddress) is refused unless one of allowed holds it.
func LocalNetworkControl(allowed []netip.Prefix) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		return checkAddress(address, allowed, func(a netip.Addr) bool { return !MetadataAddress(a) })
	}
}

func checkDialAddress(address string, allowed []netip.Prefix) error {
	return checkAddress(address, allowed, PublicAddress)
}

// checkAddress refuses address (host:port) unless ok says it may be
// reached or allowed holds it.
func checkAddress(address string, allowed []netip.Prefix, ok func(netip.Addr) bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	addr := ap.Addr().Unmap()
	if ok(addr) || allowedAddress(addr, allowed) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrForbiddenAddress, addr)
}

func allowedAddress(addr netip.Addr, allowed []netip.Prefix) bool {
	return slices.ContainsFunc(allowed, func(p netip.Prefix) bool { return p.Contains(addr) })
}
