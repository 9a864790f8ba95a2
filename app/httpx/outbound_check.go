package httpx

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
)

// The checks of settings that name an address the server itself calls,
// run when they are saved, so that an administrator learns at once what
// the dialer would refuse at every call (OutboundClient,
// LocalNetworkControl). The dialer's check stays the one that holds: a
// name may resolve elsewhere later. URLs only a browser follows (redirect
// URIs, SAML endpoints, an upstream's sign-in and sign-out pages) are not
// checked: an application on the user's own machine is a fair target.

// resolveTimeout bounds the name lookup of a setting being saved.
const resolveTimeout = 3 * time.Second

// CheckOutboundURL refuses, as an error at field, an http(s) URL the
// server will call whose host is, or resolves to, an address that is not
// public (PublicAddress) and that allowed does not hold. An empty value,
// or one whose name does not resolve (yet), passes.
func CheckOutboundURL(ctx context.Context, field, rawURL string, allowed []netip.Prefix) error {
	if rawURL == "" {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil // the setting's own rules refuse it
	}
	return checkHost(ctx, field, u.Hostname(), allowed, PublicAddress)
}

// CheckLocalNetworkHost refuses, as an error at field, the host of a TCP
// peer in the operator's network (an SMTP relay) when it is, or resolves
// to, a metadata address (MetadataAddress) that allowed does not hold.
func CheckLocalNetworkHost(ctx context.Context, field, host string, allowed []netip.Prefix) error {
	if host == "" {
		return nil
	}
	return checkHost(ctx, field, host, allowed, func(a netip.Addr) bool { return !MetadataAddress(a) })
}

func checkHost(ctx context.Context, field, host string, allowed []netip.Prefix, ok func(netip.Addr) bool) error {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil // unresolvable now: the dialer decides when it is called
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		if ok(a) || allowedAddress(a, allowed) {
			continue
		}
		what := host + " is a non-public address"
		if a.WithZone("").String() != host {
			what = host + " resolves to " + a.WithZone("").String() + ", a non-public address"
		}
		return apperr.Field(field, "%s, which the server calls only when its --outbound-allow "+
			"(IDENPLANE_OUTBOUND_ALLOW) holds it", what)
	}
	return nil
}
