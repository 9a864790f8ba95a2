package app

import (
	"context"
	"net"
	"time"
)

// dnsTimeout bounds one DNS exchange of a domain verification.
const dnsTimeout = 5 * time.Second

// dnsResolver is the resolver a domain verification asks: the server at
// addr (host:port), or the system's when addr is empty.
func dnsResolver(addr string) *net.Resolver {
	if addr == "" {
		return &net.Resolver{}
	}
	d := net.Dialer{Timeout: dnsTimeout}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
}
