package app

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The settings that name a peer the server itself calls are checked when
// saved against the outbound guard's rules (app/httpx), so that an
// administrator learns at once what every call would be refused. Those
// calls go through the guard too, which stays the check that holds: a
// name may resolve elsewhere later. Identity providers are the broker's
// (broker.CheckOutbound); LDAP directories keep their own rule (ldap.md).

// checkRealmOutbound checks a realm's mail settings: an HTTP provider's
// baseUrl, which must be public, and the SMTP relay, which may be on
// loopback or in a private network (a local relay is common) but never at
// a metadata address.
func checkRealmOutbound(ctx context.Context, r *store.Realm, allowed []netip.Prefix) error {
	if base, ok := r.EmailProviderConfig["baseUrl"].(string); ok {
		if err := httpx.CheckOutboundURL(ctx, "emailProviderConfig.baseUrl", base, allowed); err != nil {
			return err
		}
	}
	return httpx.CheckLocalNetworkHost(ctx, "smtpHost", r.SMTPHost, allowed)
}

// checkClientOutbound checks a client's back-channel logout URI, which
// the server posts logout tokens to.
func checkClientOutbound(ctx context.Context, c *store.Client, allowed []netip.Prefix) error {
	return httpx.CheckOutboundURL(ctx, "backchannelLogoutUri", c.BackchannelLogoutURI, allowed)
}

// checkOutbound checks what an import would save: the realm, its
// clients and its identity providers, before the import's transaction
// (a name lookup is network I/O).
func (p *importPlan) checkOutbound(ctx context.Context, allowed []netip.Prefix) error {
	if err := checkRealmOutbound(ctx, p.realm, allowed); err != nil {
		return err
	}
	for i, c := range p.clientList {
		if err := checkClientOutbound(ctx, c, allowed); err != nil {
			return withPrefix(err, fmt.Sprintf("clients[%d]", i))
		}
	}
	for i, ip := range p.providers {
		if err := broker.CheckOutbound(ctx, ip, allowed); err != nil {
			return withPrefix(err, fmt.Sprintf("identityProviders[%d]", i))
		}
	}
	return nil
}
