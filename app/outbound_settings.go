package app

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/idenplane/idenplane/app/broker"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The settings that name a peer the server itself calls are checked when
// saved against the outbound guard's rules (app/httpx), so that an
// administrator learns at once what every call would be refused. Those
// calls go through the guard too, which stays the check that holds: a
// name may resolve elsewhere later. Identity providers are the broker's
// (broker.CheckOutbound), clients' back-channel logout URIs the clients
// module's (clients.CheckOutbound); LDAP directories keep their own rule
// (ldap.md).

// checkRealmOutbound checks a realm's mail settings: an HTTP provider's
// baseUrl, which must be public, and the SMTP relay, which may be on
// loopback or in a private network (a local relay is common) but never at
// a metadata address. An update checks only what it changes (before is the
// realm as stored; nil for a new one), so that a setting saved before the
// guard, refused by every call now, never blocks an unrelated change.
func checkRealmOutbound(ctx context.Context, r, before *store.Realm, allowed []netip.Prefix) error {
	base, _ := r.EmailProviderConfig["baseUrl"].(string)
	if before == nil || base != before.EmailProviderConfig["baseUrl"] {
		if err := httpx.CheckOutboundURL(ctx, "emailProviderConfig.baseUrl", base, allowed); err != nil {
			return err
		}
	}
	if before != nil && r.SMTPHost == before.SMTPHost {
		return nil
	}
	return httpx.CheckLocalNetworkHost(ctx, "smtpHost", r.SMTPHost, allowed)
}

// checkOutbound checks what an import would save: the realm, its
// clients and its identity providers, before the import's transaction
// (a name lookup is network I/O).
func (p *importPlan) checkOutbound(ctx context.Context, allowed []netip.Prefix) error {
	if err := checkRealmOutbound(ctx, p.realm, nil, allowed); err != nil {
		return err
	}
	for i, c := range p.clientList {
		if err := clients.CheckOutbound(ctx, c, "", allowed); err != nil {
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
