package httpx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
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

// A peer of the operator's network (a mail relay, a directory) may be on
// loopback; a metadata address is refused before any packet leaves,
// unless allowed.
func TestLocalNetworkControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := net.Dialer{Timeout: time.Second, Control: LocalNetworkControl(nil)}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback: %v", err)
	}
	c.Close()
	for _, addr := range []string{"169.254.169.254:80", "[fe80::1]:25", "[fd00:ec2::254]:80"} {
		if _, err := d.Dial("tcp", addr); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("dial %s: %v, want ErrForbiddenAddress", addr, err)
		}
	}
	allowed := LocalNetworkControl([]netip.Prefix{netip.MustParsePrefix("169.254.0.0/16")})
	if err := allowed("tcp4", "169.254.169.254:80", nil); err != nil {
		t.Errorf("an allowed metadata address: %v", err)
	}
}

// A setting's URL is refused when saved for an address literal or a name
// that resolves to a non-public address, unless allowed; a name that does
// not resolve is left to the dialer.
func TestCheckOutboundURL(t *testing.T) {
	ctx := context.Background()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	for _, tc := range []struct {
		url     string
		allowed []netip.Prefix
		refused bool
	}{
		{"http://169.254.169.254/latest", nil, true},
		{"http://127.0.0.1:8080/x", nil, true},
		{"http://localhost/x", nil, true},
		{"http://[::ffff:10.0.0.1]/", nil, true},
		{"http://127.0.0.1:8080/x", loopback, false},
		{"https://93.184.216.34/", nil, false},
		{"https://name.invalid/", nil, false},
		{"", nil, false},
	} {
		err := CheckOutboundURL(ctx, "f", tc.url, tc.allowed)
		var e *apperr.Error
		switch {
		case !tc.refused && err != nil:
			t.Errorf("%s: %v, want accepted", tc.url, err)
		case tc.refused && (!errors.As(err, &e) || e.Field != "f" || !strings.Contains(e.Message, "--outbound-allow")):
			t.Errorf("%s: %v, want refused at f naming --outbound-allow", tc.url, err)
		}
	}
}
