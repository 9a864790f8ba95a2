package app

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads the trusted-proxy setting: addresses and CIDR
// ranges, separated by commas. A bare address stands for itself alone.
// Every entry that is neither is named in the one error.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	var bad []string
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if p, err := netip.ParsePrefix(entry); err == nil {
			prefixes = append(prefixes, unmapPrefix(p).Masked())
		} else if addr, err := netip.ParseAddr(entry); err == nil && addr.Zone() == "" {
			addr = addr.Unmap()
			prefixes = append(prefixes, netip.PrefixFrom(addr, addr.BitLen()))
		} else {
			bad = append(bad, fmt.Sprintf("%q", entry))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("not an IP address or CIDR range: %s", strings.Join(bad, ", "))
	}
	return prefixes, nil
}

// unmapPrefix turns an IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) into
// its IPv4 one, as addresses are compared unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if !p.Addr().Is4In6() || p.Bits() < 96 {
		return p
	}
	return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
}

// clientIP is the address of the client a request comes from, the one
// every throttle, brute-force record, login event and session records.
// It is the peer's address, unless the peer is a trusted proxy: then it
// is the rightmost address of the forwarding chain (X-Forwarded-For, or
// RFC 7239 Forwarded) that is not itself a trusted proxy, so that what a
// client writes at the left of the chain counts for nothing. A chain the
// server cannot read, or two headers naming different clients, are not
// believed: the peer's address is used.
func (a *App) clientIP(r *http.Request) string {
	if len(a.cfg.TrustedProxies) == 0 {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		return host
	}
	peer := peerAddr(r.RemoteAddr)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !a.trustedProxy(addr) {
		return peer
	}
	xff, forwarded := r.Header.Values("X-Forwarded-For"), r.Header.Values("Forwarded")
	if len(xff) == 0 && len(forwarded) == 0 {
		return peer
	}
	var client netip.Addr
	if len(xff) > 0 {
		if client, err = a.chainClient(forwardedForChain(xff)); err != nil {
			return peer
		}
	}
	if len(forwarded) > 0 {
		chain, err := forwardedChain(forwarded)
		if err != nil {
			return peer
		}
		c, err := a.chainClient(chain)
		if err != nil || client.IsValid() && c != client {
			return peer
		}
		client = c
	}
	return client.String()
}

// peerAddr is the host of a RemoteAddr, unmapped, without its zone.
func peerAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().WithZone("").String()
	}
	return host
}

func (a *App) trustedProxy(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range a.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

var errUnreadableChain = errors.New("unreadable forwarding chain")

// chainClient walks a forwarding chain from the right, the hop nearest
// the server, past the trusted proxies; the first address that is not one
// is the client. An entry that is no address (unknown, an obfuscated
// name, garbage) stops the walk: nothing left of it can be believed. A
// chain of trusted proxies only names its leftmost.
func (a *App) chainClient(chain []string) (netip.Addr, error) {
	if len(chain) == 0 {
		return netip.Addr{}, errUnreadableChain
	}
	var addr netip.Addr
	for i := len(chain) - 1; i >= 0; i-- {
		var ok bool
		if addr, ok = parseNodeAddr(chain[i]); !ok {
			return netip.Addr{}, errUnreadableChain
		}
		if !a.trustedProxy(addr) {
			return addr, nil
		}
	}
	return addr, nil
}

// parseNodeAddr reads one hop's address: 192.0.2.1, 192.0.2.1:8080,
// 2001:db8::1 or [2001:db8::1]:8080.
func parseNodeAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap().WithZone(""), addr.Zone() == ""
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), ap.Addr().Zone() == ""
	}
	if inner, ok := strings.CutPrefix(s, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); ok {
			if addr, err := netip.ParseAddr(inner); err == nil && addr.Is6() && addr.Zone() == "" {
				return addr.Unmap(), true
			}
		}
	}
	return netip.Addr{}, false
}

// forwardedForChain is the hops of X-Forwarded-For, every header line in
// order; empty list elements are skipped.
func forwardedForChain(lines []string) []string {
	var chain []string
	for _, line := range lines {
		for hop := range strings.SplitSeq(line, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				chain = append(chain, hop)
			}
		}
	}
	return chain
}

// forwardedChain is the for= of each element of RFC 7239 Forwarded
// headers, in order. An element without for= is a hop that did not say
// whom it forwarded for: it stays in the chain, as an entry that is no
// address, so that the walk stops there rather than skip to an element a
// client may have written. Elements are split at commas and pairs at
// semicolons outside quoted strings.
func forwardedChain(lines []string) ([]string, error) {
	var chain []string
	for _, line := range lines {
		elements, err := splitUnquoted(line, ',')
		if err != nil {
			return nil, err
		}
		for _, element := range elements {
			if strings.TrimSpace(element) == "" {
				continue // empty list elements are allowed (RFC 9110 §5.6.1)
			}
			node, named := "", false
			pairs, err := splitUnquoted(element, ';')
			if err != nil {
				return nil, err
			}
			for _, pair := range pairs {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if !ok {
					if strings.TrimSpace(pair) == "" {
						continue
					}
					return nil, errUnreadableChain
				}
				if !strings.EqualFold(name, "for") {
					continue
				}
				if named { // each parameter once per element (RFC 7239 §4)
					return nil, errUnreadableChain
				}
				named = true
				if node, err = unquoteForwardedValue(value); err != nil {
					return nil, err
				}
			}
			chain = append(chain, node)
		}
	}
	return chain, nil
}

// splitUnquoted splits s at sep outside quoted strings.
func splitUnquoted(s string, sep byte) ([]string, error) {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, errUnreadableChain
	}
	return append(parts, s[start:]), nil
}

// unquoteForwardedValue reads a token or a quoted string (RFC 9110 §5.6.4).
func unquoteForwardedValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, `"`)
	if !ok {
		return v, nil
	}
	if inner, ok = strings.CutSuffix(inner, `"`); !ok {
		return "", errUnreadableChain
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' {
			if i++; i == len(inner) {
				return "", errUnreadableChain
			}
		}
		b.WriteByte(inner[i])
	}
	return b.String(), nil
}
