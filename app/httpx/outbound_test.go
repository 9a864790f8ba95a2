package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestPublicAddress(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"127.0.0.1", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"fd00::1", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"224.0.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of the metadata address
	} {
		if got := PublicAddress(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("PublicAddress(%s) = %v, want %v", tc.addr, got, tc.public)
		}
	}
}

func TestOutboundClientRefusesLoopbackUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	for _, path := range []string{"/", "/hop"} {
		_, err := OutboundClient(time.Second, nil).Get(srv.URL + path)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("GET %s on loopback without allowance: %v, want ErrForbiddenAddress", path, err)
		}
		res, err := OutboundClient(time.Second, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}).Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s on allowed loopback: %v", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusTeapot {
			t.Fatalf("GET %s: status %d", path, res.StatusCode)
		}
	}
}

func TestOutboundClientTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	_, err := OutboundClient(50*time.Millisecond, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}).Get(srv.URL)
	var timeout interface{ Timeout() bool }
	if !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Fatalf("a server that never answers: %v, want a timeout", err)
	}
}
