package app

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  []string // each named in the error
	}{
		{in: "", want: nil},
		{in: " 10.0.0.0/8 , 192.0.2.1,2001:db8::/32,", want: []string{"10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"}},
		{in: "10.1.2.3/8", want: []string{"10.0.0.0/8"}},
		{in: "::ffff:10.0.0.0/104, ::ffff:192.0.2.9", want: []string{"10.0.0.0/8", "192.0.2.9/32"}},
		{in: "10.0.0.0/8, proxy.example, 10.0.0.0/33, fe80::1%eth0", bad: []string{`"proxy.example"`, `"10.0.0.0/33"`, `"fe80::1%eth0"`}},
	} {
		got, err := ParseTrustedProxies(tc.in)
		if len(tc.bad) > 0 {
			if err == nil {
				t.Errorf("%q: no error, got %v", tc.in, got)
			}
			for _, b := range tc.bad {
				if err != nil && !strings.Contains(err.Error(), b) {
					t.Errorf("%q: error %q does not name %s", tc.in, err, b)
				}
			}
			continue
		}
		var names []string
		for _, p := range got {
			names = append(names, p.String())
		}
		if err != nil || strings.Join(names, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: %v %v, want %v", tc.in, names, err, tc.want)
		}
	}
}

// The client address behind trusted proxies, and not behind others.
func TestClientIP(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1, 2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
	withProxies := newTestServer(t, func(c *Config) { c.TrustedProxies = trusted }).app
	without := newTestServer(t).app
	const client = "203.0.113.7"
	for _, tc := range []struct {
		name      string
		app       *App
		peer      string
		xff       []string
		forwarded []string
		want      string
	}{
		{name: "no setting: headers ignored", app: without, peer: "10.0.0.1:4000", xff: []string{client}, forwarded: []string{"for=" + client}, want: "10.0.0.1"},
		{name: "untrusted peer: headers ignored", app: withProxies, peer: "198.51.100.9:4000", xff: []string{client}, want: "198.51.100.9"},
		{name: "untrusted peer: Forwarded ignored", app: withProxies, peer: "198.51.100.9:4000", forwarded: []string{"for=" + client}, want: "198.51.100.9"},
		{name: "trusted peer without headers", app: withProxies, peer: "10.0.0.1:4000", want: "10.0.0.1"},
		{name: "X-Forwarded-For", app: withProxies, peer: "10.0.0.1:4000", xff: []string{client}, want: client},
		{name: "spoofed prefix ignored", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"6.6.6.6, " + client}, want: client},
		{name: "spoofed trusted-looking prefix ignored", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"10.9.9.9, " + client}, want: client},
		{name: "two trusted hops", app: withProxies, peer: "192.0.2.1:4000", xff: []string{"6.6.6.6, " + client + ", 10.1.1.1"}, want: client},
		{name: "header lines in order", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"6.6.6.6", client + ", 10.1.1.1"}, want: client},
		{name: "hop with a port", app: withProxies, peer: "10.0.0.1:4000", xff: []string{client + ":5555"}, want: client},
		{name: "IPv6 hop", app: withProxies, peer: "[2001:db8:ffff::2]:4000", xff: []string{"2001:db8:1::7"}, want: "2001:db8:1::7"},
		{name: "IPv4-mapped peer", app: withProxies, peer: "[::ffff:10.0.0.1]:4000", xff: []string{client}, want: client},
		{name: "only trusted hops: the leftmost", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"10.3.3.3, 10.2.2.2"}, want: "10.3.3.3"},
		{name: "unreadable hop nearest: the peer", app: withProxies, peer: "10.0.0.1:4000", xff: []string{client + ", garbage"}, want: "10.0.0.1"},
		{name: "unreadable hop beyond the client", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"garbage, " + client}, want: client},
		{name: "Forwarded", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=" + client + ";proto=https;by=10.0.0.1"}, want: client},
		{name: "Forwarded in any case", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"For=" + client}, want: client},
		{name: "Forwarded spoofed prefix ignored", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=6.6.6.6, for=" + client}, want: client},
		{name: "Forwarded header lines", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=6.6.6.6", "for=" + client + ";by=10.0.0.1, for=10.1.1.1"}, want: client},
		{name: "Forwarded quoted IPv6 with port", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{`for="[2001:db8:1::7]:4711"`}, want: "2001:db8:1::7"},
		{name: "Forwarded quoted with escapes", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{`for="203.0.\113.7";host="a,b;c"`}, want: client},
		{name: "Forwarded unknown: the peer", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=unknown"}, want: "10.0.0.1"},
		{name: "Forwarded obfuscated: the peer", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=_hidden"}, want: "10.0.0.1"},
		{name: "Forwarded hop without for: the peer", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=" + client + ", proto=https"}, want: "10.0.0.1"},
		{name: "Forwarded for twice in an element: the peer", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{"for=6.6.6.6;for=" + client}, want: "10.0.0.1"},
		{name: "Forwarded unterminated quote: the peer", app: withProxies, peer: "10.0.0.1:4000", forwarded: []string{`for="` + client}, want: "10.0.0.1"},
		{name: "both headers agreeing", app: withProxies, peer: "10.0.0.1:4000", xff: []string{"6.6.6.6, " + client}, forwarded: []string{"for=" + client}, want: client},
		{name: "both headers disagreeing: the peer", app: withProxies, peer: "10.0.0.1:4000", xff: []string{client}, forwarded: []string{"for=6.6.6.6"}, want: "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			for _, v := range tc.forwarded {
				r.Header.Add("Forwarded", v)
			}
			if got := tc.app.clientIP(r); got != tc.want {
				t.Fatalf("clientIP %q, want %q", got, tc.want)
			}
		})
	}
}

// Through the router, the forwarded address is the one a sign-in's
// events and session record, from a trusted proxy only.
func TestClientIPRecorded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted string
		want    string
	}{
		{name: "trusted proxy", trusted: "192.0.2.1", want: "203.0.113.7"},
		{name: "no trusted proxy", trusted: "", want: "192.0.2.1"}, // the test requests' peer
		{name: "another trusted proxy", trusted: "10.0.0.0/8", want: "192.0.2.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trusted, err := ParseTrustedProxies(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			s := newTestServer(t, func(c *Config) { c.TrustedProxies = trusted })
			s.createRealm("acme")
			mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
			alice := s.createUser("acme", map[string]any{"username": "alice", "password": "correct horse battery"})
			r := s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
			mustStatus(t, r, http.StatusCreated)
			secret := r.object(t)["secret"].(string)
			form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"correct horse battery"},
				"client_id": {"cli"}, "client_secret": {secret}}
			mustStatus(t, s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
				"Content-Type: application/x-www-form-urlencoded", "X-Forwarded-For: 6.6.6.6, 203.0.113.7"), http.StatusOK)

			var events []struct {
				IPAddress string `json:"ipAddress"`
			}
			s.admin(http.MethodGet, "/admin/realms/acme/events?type=LOGIN", nil).decode(t, &events)
			if len(events) != 1 || events[0].IPAddress != tc.want {
				t.Errorf("LOGIN events %+v, want one from %s", events, tc.want)
			}
			var sessions []struct {
				IPAddress string `json:"ipAddress"`
			}
			s.admin(http.MethodGet, "/admin/realms/acme/users/"+alice["id"].(string)+"/sessions", nil).decode(t, &sessions)
			if len(sessions) == 0 {
				t.Error("no sessions")
			}
			for _, sess := range sessions { // the SSO session and the client's
				if sess.IPAddress != tc.want {
					t.Errorf("sessions %+v, want them from %s", sessions, tc.want)
				}
			}
		})
	}
}

func FuzzClientIP(f *testing.F) {
	for _, seed := range [][2]string{
		{"203.0.113.7", ""},
		{"6.6.6.6, 203.0.113.7, 10.1.1.1", "for=203.0.113.7"},
		{"", `for="[2001:db8::7]:4711";proto=https, for=unknown`},
		{"garbage,,", `for="\"`},
		{"", `;;,for=_x;by="a;b",`},
	} {
		f.Add(seed[0], seed[1])
	}
	a := &App{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	f.Fuzz(func(t *testing.T, xff, forwarded string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.0.0.1:4000"
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		if forwarded != "" {
			r.Header.Set("Forwarded", forwarded)
		}
		got := a.clientIP(r)
		addr, err := netip.ParseAddr(got)
		if err != nil || addr.Zone() != "" || addr.Is4In6() {
			t.Fatalf("clientIP %q is no plain address", got)
		}
	})
}
