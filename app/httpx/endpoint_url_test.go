package httpx

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
)

func TestNumericHost(t *testing.T) {
	for host, want := range map[string]bool{"2130706433": true, "0x7f.1": true, "127.1": true, "017700000001": true,
		"127.0.0.1": false, "hooks.example.com": false, "beef.dead": false, "cafe.example": false, "::1": false} {
		if got := NumericHost(host); got != want {
			t.Errorf("NumericHost(%q) = %v", host, got)
		}
	}
}

// An endpoint URL is https, or http to an allowed loopback address.
func TestCheckEndpointURL(t *testing.T) {
	ctx := context.Background()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	for _, tc := range []struct {
		url     string
		allowed []netip.Prefix
		ok      bool
	}{
		{"https://93.184.216.34/x", nil, true},
		{"http://127.0.0.1:9/x", loopback, true},
		{"http://127.0.0.1:9/x", nil, false},
		{"http://93.184.216.34/x", loopback, false},
		{"https://u:p@93.184.216.34/x", nil, false},
		{"https://93.184.216.34/x#f", nil, false},
		{"ftp://93.184.216.34/x", nil, false},
		{"https://0x7f.1/x", loopback, false},
		{"/x", nil, false},
		{"", nil, false},
	} {
		err := CheckEndpointURL(ctx, "url", tc.url, 100, tc.allowed)
		var e *apperr.Error
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v, want accepted", tc.url, err)
		case !tc.ok && (!errors.As(err, &e) || e.Field != "url"):
			t.Errorf("%s: %v, want refused at url", tc.url, err)
		}
	}
}

// The guard's dialer refuses a non-public address over UDP and TCP alike,
// unless allowed: a syslog receiver is dialled through it.
func TestOutboundDialer(t *testing.T) {
	ctx := context.Background()
	for _, network := range []string{"udp", "tcp"} {
		if _, err := OutboundDialer(time.Second, nil).DialContext(ctx, network, "127.0.0.1:9"); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s to loopback: %v, want ErrForbiddenAddress", network, err)
		}
	}
	conn, err := OutboundDialer(time.Second, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}).DialContext(ctx, "udp", "127.0.0.1:9")
	if err != nil {
		t.Fatalf("udp to allowed loopback: %v", err)
	}
	conn.Close()
}
